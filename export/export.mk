# Writers and engines of the report page and the exports (included by the
# Makefile; the JSON and pickle writers themselves are in writers/):
#   export/gmt_buckets.c   time buckets that keep every extreme (the page's
#                          zoom levels, the chrome export's counter budget)
#   export/gmt_pagedata.c  the report page's data (docs/report-page.md)
#   export/gmt_chrome.c    Chrome trace event JSON (docs/exports.md)
#   export/gmt_memviz.c    PyTorch's memory viewer snapshot, JSON or pickle
# EXPORT_OBJ (with $(WRITERS_LIB)) is what a program that writes them links.
# Tests: tests/unit/unit_buckets.c; tests/tools/gmt-*-fixture write known
# documents for tests/cases/web_page.sh, chrome_writer.sh, memviz_writer.sh;
# tests/tools/gmt-pickle drives the pickle writer for pickle_writer.sh.
EXPORT_SRC := $(wildcard export/*.c)
EXPORT_OBJ := $(EXPORT_SRC:%.c=$(BUILD)/obj/%.o)
EXPORT_INC := -Iexport -Iwriters

$(BUILD)/obj/export/%.o: export/%.c $(wildcard export/*.h writers/*.h) | $(DEPS_OK)
	$(call msg,CC,$<)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS_BASE) $(EXPORT_INC) -c $< -o $@

EXPORT_TOOLS := $(BUILD)/tests/tools/gmt-pickle $(BUILD)/tests/tools/gmt-page-fixture \
                $(BUILD)/tests/tools/gmt-chrome-fixture $(BUILD)/tests/tools/gmt-memviz-fixture
$(EXPORT_TOOLS): $(BUILD)/tests/tools/%: tests/tools/%.c $(EXPORT_OBJ) $(WRITERS_LIB) $(wildcard export/*.h writers/*.h)
	$(call msg,LD,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS_BASE) $(EXPORT_INC) -o $@ $< $(EXPORT_OBJ) $(WRITERS_LIB)

$(BUILD)/tests/unit_buckets: tests/unit/unit_buckets.c $(EXPORT_OBJ) $(WRITERS_LIB) $(wildcard export/*.h) tests/unit/gmt_test.h
	$(call msg,LD,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS_BASE) $(EXPORT_INC) -Itests/unit -o $@ $< $(EXPORT_OBJ) $(WRITERS_LIB)
