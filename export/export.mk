# Writers and engines of the report page and the exports (included by the
# Makefile): export/gmt_pickle.c (pickles for PyTorch's memory viewer),
# export/gmt_buckets.c (time buckets that keep every extreme: the page's zoom
# levels, the Chrome export's counter budget). EXPORT_OBJ is what a program
# that writes them links; tests/tools/gmt-pickle drives the pickle writer for
# tests/cases/pickle_writer.sh; tests/unit/unit_buckets.c tests the buckets.
EXPORT_OBJ := $(BUILD)/obj/export/gmt_pickle.o $(BUILD)/obj/export/gmt_buckets.o

$(BUILD)/obj/export/%.o: export/%.c $(wildcard export/*.h) | $(DEPS_OK)
	$(call msg,CC,$<)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS_BASE) -Iexport -c $< -o $@

$(BUILD)/tests/tools/gmt-pickle: tests/tools/gmt-pickle.c $(EXPORT_OBJ) $(wildcard export/*.h)
	$(call msg,LD,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS_BASE) -Iexport -o $@ $< $(EXPORT_OBJ)

$(BUILD)/tests/unit_buckets: tests/unit/unit_buckets.c $(EXPORT_OBJ) $(wildcard export/*.h) tests/unit/gmt_test.h
	$(call msg,LD,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS_BASE) -Iexport -Itests/unit -o $@ $< $(EXPORT_OBJ)
