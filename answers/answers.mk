# Engines of the answers to a job's questions (included by the Makefile):
# pure functions, no dependency on analyzer/ or on the trace reader.
#   answers/gmt_group.c   several processes per host and physical device:
#                         the coinciding peak of their bytes, each one's share
#   answers/gmt_card.c    the sizing card's computed part: exact bytes, GB/GiB
#   answers/gmt_leads.c   phase names to the measurement protocol's leads
#   answers/gmt_diff.c    two runs: rows matched by key, growth, --fail-above
#   answers/gmt_dec.c     exact decimals as typed (private)
# ANSWERS_OBJ is what a program that uses them links. Tests:
# tests/unit/unit_answers.c.
ANSWERS_SRC := $(wildcard answers/*.c)
ANSWERS_OBJ := $(ANSWERS_SRC:%.c=$(BUILD)/obj/%.o)
ANSWERS_INC := -Ianswers

$(BUILD)/obj/answers/%.o: answers/%.c $(wildcard answers/*.h) | $(DEPS_OK)
	$(call msg,CC,$<)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS_BASE) $(ANSWERS_INC) -c $< -o $@

$(BUILD)/tests/unit_answers: tests/unit/unit_answers.c $(ANSWERS_OBJ) $(wildcard answers/*.h) tests/unit/gmt_test.h
	$(call msg,LD,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS_BASE) $(ANSWERS_INC) -Itests/unit -o $@ $< $(ANSWERS_OBJ)
