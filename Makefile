# gpumemtrace build.
#
# Targets:  all (default) test demo bench asan tsan clean
# Options:  V=1          show commands
#           WERROR=1     warnings are errors (CI sets it)
#           BUILD=dir    output directory (default build)
#           CUDA_HOME=d  CUDA toolkit headers (default /usr/local/cuda)
#           CC=cc        compiler; SAN=address,undefined builds a sanitized tree
#           OPT=-O2      optimisation flags
#
# Layout rules (who may include what): preload/ uses tracer/gmt_tracer.h and
# the CUDA headers; tracer/ (the writer) knows no CUDA header; reader/ (the
# trace reader) uses only tracer/gmt_format.h (.def); analyzer/ uses only
# reader/gmt_decode.h, tracer/gmt_format.h (.def), writers/, export/, web/,
# answers/ and schemas/; answers/ uses nothing; writers/ (output formats: the
# JSON and pickle writers) uses nothing; nothing depends on analyzer/. web/
# (the report page's assets and shell writer) uses nothing; export/ (the
# page's data and the exports: their engines and formats) uses only writers/. tests/fakecuda/ are the CUDA/NCCL test doubles.

BUILD    ?= build
CUDA_HOME ?= /usr/local/cuda
CC       ?= cc
OPT      ?= -O2
V        ?= 0
ifeq ($(V),0)
Q := @
msg = @printf '  %-8s %s\n' $(1) $(2);
else
Q :=
msg =
endif

WARN := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
        -Wformat=2 -Wundef -Wpointer-arith -Wcast-align -Wwrite-strings \
        -Wno-unused-parameter
ifeq ($(WERROR),1)
WARN += -Werror
endif
ifeq ($(CI),true)
WARN += -Werror
endif

SANFLAGS :=
ifneq ($(SAN),)
SANFLAGS := -fsanitize=$(SAN) -fno-omit-frame-pointer -fno-sanitize-recover=all
endif

CFLAGS_BASE := -std=gnu11 -g $(OPT) $(WARN) -D_GNU_SOURCE -pthread $(SANFLAGS)
CUDA_INC := -I$(CUDA_HOME)/include
LIBDIR := /usr/lib/x86_64-linux-gnu
VERSION := $(shell cat VERSION 2>/dev/null || echo 0.0.0)

DECODE_SRC := $(wildcard reader/*.c)
TRACER_SRC := $(wildcard tracer/*.c)
PRELOAD_SRC := $(wildcard preload/*.c)
ANALYZER_SRC := $(wildcard analyzer/*.c analyzer/*/*.c)
# answers/ (the pure engines of oom, diff, card and groups) before the
# analyzer's rules, which use ANSWERS_OBJ; its rules are not the default goal.
.DEFAULT_GOAL := all
include answers/answers.mk
UNIT_SRC := $(wildcard tests/unit/*.c)
ROUTE_SRC := $(wildcard tests/routes/*.c)
TOOL_SRC := $(wildcard tests/tools/*.c)

TRACER_OBJ := $(TRACER_SRC:%.c=$(BUILD)/obj/%.o)
DECODE_OBJ := $(DECODE_SRC:%.c=$(BUILD)/obj/%.o)
WRITERS_SRC := $(wildcard writers/*.c)
WRITERS_OBJ := $(WRITERS_SRC:%.c=$(BUILD)/obj/%.o)
WRITERS_LIB := $(BUILD)/libgmt_writers.a
PRELOAD_OBJ := $(PRELOAD_SRC:%.c=$(BUILD)/obj/%.o)
ANALYZER_OBJ := $(ANALYZER_SRC:%.c=$(BUILD)/obj/%.o)

PRELOAD := $(BUILD)/libgpumemtrace.so
ANALYZE := $(BUILD)/gpumemtrace-analyze
LAUNCHER := $(BUILD)/gpumemtrace
LAUNCHER_RUN := $(BUILD)/gpumemtrace-run
CORE_LIB := $(BUILD)/libgmt_core.a
FAKE := $(BUILD)/fakecuda/libcuda.so.1 $(BUILD)/fakecuda/libcudart.so.13 $(BUILD)/fakecuda/libnccl.so.2
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)
ROUTE_BIN := $(ROUTE_SRC:tests/routes/%.c=$(BUILD)/tests/%)
TOOL_BIN := $(TOOL_SRC:tests/tools/%.c=$(BUILD)/tests/tools/%)
DEPS_OK := $(BUILD)/.deps-ok

# Everything that runs inside the traced process is position independent
# and hidden; the preload exports only what $(BUILD)/gen/exports.map names
# (generated from preload/exports.map.in and the DRV hooks of hooks.def). It
# keeps frame pointers: a stack capture walks through the tracer's own
# frames before it reaches the program's (tracer/gmt_stack.c).
PIC := -fPIC -fvisibility=hidden -fno-omit-frame-pointer

.PHONY: all test demo bench asan tsan clean deps check-exports fuzz-analyze
all: $(PRELOAD) $(ANALYZE) $(LAUNCHER) $(LAUNCHER_RUN) $(BUILD)/python.stamp $(FAKE) $(UNIT_BIN) $(ROUTE_BIN) $(TOOL_BIN) $(BUILD)/extra.stamp

$(DEPS_OK): scripts/deps.sh
	$(Q)mkdir -p $(BUILD)
	$(Q)sh scripts/deps.sh
	$(Q)touch $@

$(BUILD)/obj/tracer/%.o: tracer/%.c $(wildcard tracer/*.h) tracer/gmt_format.def | $(DEPS_OK)
	$(call msg,CC,$<)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS_BASE) $(PIC) -DGMT_VERSION='"$(VERSION)"' -c $< -o $@

$(BUILD)/obj/reader/%.o: reader/%.c $(wildcard reader/*.h) tracer/gmt_format.h tracer/gmt_format.def | $(DEPS_OK)
	$(call msg,CC,$<)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS_BASE) $(PIC) -Ireader -Itracer -c $< -o $@

$(BUILD)/obj/writers/%.o: writers/%.c $(wildcard writers/*.h) | $(DEPS_OK)
	$(call msg,CC,$<)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS_BASE) -Iwriters -c $< -o $@

$(WRITERS_LIB): $(WRITERS_OBJ)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

$(BUILD)/obj/preload/%.o: preload/%.c $(wildcard preload/*.h preload/*.def tracer/*.h) tracer/gmt_format.def | $(DEPS_OK)
	$(call msg,CC,$<)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS_BASE) $(PIC) $(CUDA_INC) -Itracer -DGMT_VERSION='"$(VERSION)"' -c $< -o $@

ANALYZER_INC := -Ianalyzer -Ireader -Itracer -Iwriters -Iexport -Iweb -Ianswers
$(BUILD)/obj/analyzer/%.o: analyzer/%.c $(wildcard analyzer/*.h analyzer/*/*.h reader/gmt_decode.h tracer/gmt_format.h writers/*.h export/*.h web/*.h answers/*.h) tracer/gmt_format.def | $(DEPS_OK)
	$(call msg,CC,$<)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS_BASE) $(ANALYZER_INC) -DGMT_VERSION='"$(VERSION)"' -c $< -o $@

# The preload carries zstd and msgpack-c statically (the GPU machine has no
# package manager); libunwind is dlopen()ed RTLD_LOCAL at run time (its
# _Unwind_* must not leak) and copied beside the preload for $ORIGIN.
EXPORTS_MAP := $(BUILD)/gen/exports.map
$(EXPORTS_MAP): preload/exports.map.in preload/hooks.def
	$(call msg,GEN,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)printf '#define GMT_HOOK(lib, name, ...) GMT_EXPORT lib name\n#include "hooks.def"\n' | \
	    $(CC) -E -P -Ipreload - | grep -o 'GMT_EXPORT DRV [A-Za-z0-9_]*' | \
	    sed 's/^GMT_EXPORT DRV \(.*\)/    \1;/' > $@.hooks
	$(Q)test -s $@.hooks
	$(Q)sed -e '/^@DRIVER_HOOKS@$$/{r $@.hooks' -e 'd;}' preload/exports.map.in > $@.tmp
	$(Q)rm -f $@.hooks && mv $@.tmp $@

$(PRELOAD): $(PRELOAD_OBJ) $(TRACER_OBJ) $(EXPORTS_MAP)
	$(call msg,LD,$@)
	$(Q)$(CC) $(CFLAGS_BASE) -shared -o $@ $(PRELOAD_OBJ) $(TRACER_OBJ) \
	    -Wl,--version-script=$(EXPORTS_MAP) -Wl,--exclude-libs,ALL \
	    -Wl,-z,nodelete -Wl,-z,now \
	    $(LIBDIR)/libzstd.a $(LIBDIR)/libmsgpackc.a -ldl -lpthread
	$(Q)cp -L $(LIBDIR)/libunwind.so.8 $(LIBDIR)/libunwind-x86_64.so.8 $(BUILD)/ 2>/dev/null || true
	$(Q)cp -L $(LIBDIR)/liblzma.so.5 $(BUILD)/ 2>/dev/null || true

$(CORE_LIB): $(TRACER_OBJ) $(DECODE_OBJ)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

# Symbolisation (analyzer/engines/gmt_symbols.c): elfutils' libdw and libelf with
# their decompressors, and libstdc++'s demangler, all static (the GPU
# machine has no packages); only libc, libm, libdl, libpthread stay dynamic.
ANALYZE_LIBS := $(LIBDIR)/libdw.a $(LIBDIR)/libelf.a $(LIBDIR)/libzstd.a $(LIBDIR)/libmsgpackc.a \
                $(LIBDIR)/liblzma.a $(LIBDIR)/libbz2.a $(LIBDIR)/libz.a \
                -Wl,-Bstatic -lstdc++ -Wl,-Bdynamic -ldl -lpthread -lm
$(ANALYZE): $(ANALYZER_OBJ) $(DECODE_OBJ) $(ANSWERS_OBJ) $(WRITERS_LIB)
	$(call msg,LD,$@)
	$(Q)$(CC) $(CFLAGS_BASE) -o $@ $(filter-out %.a,$^) $(filter %.a,$^) $(ANALYZE_LIBS)

# The Python side (the gpumemtrace module and the PyTorch companion) sits
# beside the launcher so that build/ can be copied as a whole.
# python/ is also a pip-installable package (python/pyproject.toml; its
# VERSION is a link to ../VERSION, copied as a file: build/python installs
# too). What pip leaves in a source tree (build/, *.egg-info) is not copied.
PY_SRC := $(shell find python -name '*.py' -not -path 'python/build/*' 2>/dev/null) python/pyproject.toml VERSION
$(BUILD)/python.stamp: $(PY_SRC)
	$(call msg,GEN,$(BUILD)/python)
	$(Q)rm -rf $(BUILD)/python && mkdir -p $(BUILD)
	$(Q)if [ -d python ]; then cp -rL python $(BUILD)/python && \
	    rm -rf $(BUILD)/python/build $(BUILD)/python/*.egg-info && \
	    find $(BUILD)/python -name __pycache__ -prune -exec rm -rf {} +; fi
	$(Q)touch $@

$(LAUNCHER): scripts/gpumemtrace.in VERSION
	$(call msg,GEN,$@)
	$(Q)sed -e 's/@VERSION@/$(VERSION)/' $< > $@ && chmod +x $@

# The launcher's last step: runs the job, passes signals on, names its traces.
$(LAUNCHER_RUN): scripts/gmt_run.c | $(DEPS_OK)
	$(call msg,LD,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS_BASE) -o $@ $<

# Test doubles of the CUDA driver, runtime and NCCL.
$(BUILD)/fakecuda/libcuda.so.1: tests/fakecuda/fake_driver.c $(wildcard tests/fakecuda/*.h) | $(DEPS_OK)
	$(call msg,LD,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS_BASE) -fPIC $(CUDA_INC) -shared -Wl,-soname,libcuda.so.1 -o $@ $< -ldl -lpthread
	$(Q)ln -sf libcuda.so.1 $(BUILD)/fakecuda/libcuda.so
$(BUILD)/fakecuda/libcudart.so.13: tests/fakecuda/fake_runtime.c tests/fakecuda/cudart13.map $(wildcard tests/fakecuda/*.h) | $(DEPS_OK)
	$(call msg,LD,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS_BASE) -fPIC $(CUDA_INC) -shared -Wl,-soname,libcudart.so.13 \
	    -Wl,--version-script=tests/fakecuda/cudart13.map -o $@ $< -ldl -lpthread
	$(Q)ln -sf libcudart.so.13 $(BUILD)/fakecuda/libcudart.so
$(BUILD)/fakecuda/libnccl.so.2: tests/fakecuda/fake_nccl.c $(wildcard tests/fakecuda/*.h) | $(DEPS_OK)
	$(call msg,LD,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS_BASE) -fPIC $(CUDA_INC) -shared -Wl,-soname,libnccl.so.2 -o $@ $< -ldl -lpthread
	$(Q)ln -sf libnccl.so.2 $(BUILD)/fakecuda/libnccl.so

# Unit tests link the tracer core, the decoder and the writers directly
# (fake pointers).
$(BUILD)/tests/%: tests/unit/%.c $(CORE_LIB) $(WRITERS_LIB) $(wildcard tests/unit/*.h)
	$(call msg,LD,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS_BASE) -Ireader -Itracer -Iwriters -Itests/unit -o $@ $< $(CORE_LIB) $(WRITERS_LIB) \
	    $(LIBDIR)/libzstd.a $(LIBDIR)/libmsgpackc.a -ldl -lpthread -lm

# Test tools (trace dumper, workload generators) link the core and decoder.
$(BUILD)/tests/tools/%: tests/tools/%.c $(CORE_LIB) $(WRITERS_LIB)
	$(call msg,LD,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS_BASE) -Ireader -Itracer -Iwriters -o $@ $< $(CORE_LIB) $(WRITERS_LIB) \
	    $(LIBDIR)/libzstd.a $(LIBDIR)/libmsgpackc.a -ldl -lpthread -lm

# Route programs: plain CUDA programs linked against the doubles, run with
# and without the preload by tests/cases/.
ROUTE_LIBS = -L$(BUILD)/fakecuda -Wl,-rpath-link,$(BUILD)/fakecuda -lcuda -lcudart -lnccl -ldl -lpthread
$(BUILD)/tests/%: tests/routes/%.c $(FAKE) $(wildcard tests/routes/*.h)
	$(call msg,LD,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS_BASE) $(CUDA_INC) -Itests/routes -Ipreload -o $@ $< $(ROUTE_LIBS)

# Extra artefacts some tests need (shared libraries for constructor tests,
# a C++ program); see tests/extra.mk.
-include tests/extra.mk
include web/web.mk
include export/export.mk

# The analyzer's report page and exports (web/, export/).
ANALYZER_EXTRA_OBJ := $(EXPORT_OBJ) $(WEB_OBJ)
$(ANALYZE): $(ANALYZER_EXTRA_OBJ)

$(BUILD)/extra.stamp: $(EXTRA_TARGETS)
	$(Q)touch $@

check-exports: $(PRELOAD)
	$(Q)sh tests/cases/exports.sh

test: all
	$(Q)sh tests/run.sh $(BUILD)

demo: all
	$(Q)sh scripts/demo.sh $(BUILD)

bench: all
	$(Q)sh scripts/bench.sh $(BUILD)

# Sanitizer builds of everything that is not injected: the tracer core, the
# decoder, the analyzer and their unit tests and analyzer tests.
asan:
	$(Q)$(MAKE) --no-print-directory BUILD=build-asan SAN=address,undefined OPT=-O1 \
	    build-asan/gpumemtrace-analyze $(UNIT_SRC:tests/unit/%.c=build-asan/tests/%) \
	    $(TOOL_SRC:tests/tools/%.c=build-asan/tests/tools/%)
	$(Q)sh tests/run.sh build-asan --unit-only --analyzer-only

tsan:
	$(Q)$(MAKE) --no-print-directory BUILD=build-tsan SAN=thread OPT=-O1 \
	    $(UNIT_SRC:tests/unit/%.c=build-tsan/tests/%)
	$(Q)sh tests/run.sh build-tsan --unit-only

clean:
	rm -rf build build-asan build-tsan build-fuzz

# Analyzer unit tests (tests/unit/unit_replay*.c, unit_report*.c) drive the
# replay engine and the renderers directly: they link the analyzer's objects
# but main.c (as $(BUILD)/libgmt_analyze.a) and the decoder. A static pattern
# rule is explicit, so the generic unit-test rule above does not apply.
ANALYZE_LIB := $(BUILD)/libgmt_analyze.a
ANALYZE_UNIT_BIN := $(filter $(BUILD)/tests/unit_replay% $(BUILD)/tests/unit_report% \
                    $(BUILD)/tests/unit_phases% $(BUILD)/tests/unit_curves% $(BUILD)/tests/unit_liveset% \
                    $(BUILD)/tests/unit_sites% $(BUILD)/tests/unit_map%,$(UNIT_BIN))
$(ANALYZE_LIB): $(filter-out $(BUILD)/obj/analyzer/main.o,$(ANALYZER_OBJ))
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^
$(ANALYZE_UNIT_BIN): $(BUILD)/tests/%: tests/unit/%.c $(ANALYZE_LIB) $(DECODE_OBJ) $(ANSWERS_OBJ) $(WRITERS_LIB) $(wildcard tests/unit/*.h analyzer/*.h analyzer/*/*.h)
	$(call msg,LD,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS_BASE) $(ANALYZER_INC) -Itests/unit -DGMT_VERSION='"$(VERSION)"' -o $@ $< \
	    $(ANALYZE_LIB) $(ANALYZER_EXTRA_OBJ) $(DECODE_OBJ) $(ANSWERS_OBJ) $(WRITERS_LIB) $(ANALYZE_LIBS)
$(ANALYZE_UNIT_BIN): $(ANALYZER_EXTRA_OBJ)

# libFuzzer target for the trace reader (clang): make fuzz [FUZZ_SECS=60].
# Runs over a copy of tests/fuzz/corpus/; new inputs stay in build-fuzz/corpus.
FUZZ_SECS ?= 60
.PHONY: fuzz
fuzz:
	$(Q)mkdir -p build-fuzz/corpus
	$(Q)clang -std=gnu11 -g -O1 -D_GNU_SOURCE -fsanitize=fuzzer,address,undefined \
	    -Ireader -Itracer -o build-fuzz/fuzz_decode tests/fuzz/fuzz_decode.c $(DECODE_SRC) \
	    $(LIBDIR)/libzstd.a $(LIBDIR)/libmsgpackc.a
	$(Q)cp -n tests/fuzz/corpus/* build-fuzz/corpus/ 2>/dev/null || true
	$(Q)ASAN_OPTIONS=allocator_may_return_null=0 build-fuzz/fuzz_decode \
	    -max_total_time=$(FUZZ_SECS) -rss_limit_mb=2048 -max_len=65536 build-fuzz/corpus

# libFuzzer target for every analyzer command (clang): make fuzz-analyze
# [FUZZ_SECS=60]. The analyzer is built in build-fuzz with clang and the
# fuzzer's instrumentation (ASan, UBSan); runs over a copy of
# tests/fuzz/corpus/ (new inputs stay in build-fuzz/corpus-analyze).
.PHONY: fuzz-analyze
fuzz-analyze:
	$(Q)$(MAKE) --no-print-directory BUILD=build-fuzz CC=clang SAN=fuzzer-no-link,address,undefined \
	    OPT=-O1 build-fuzz/fuzz_analyze
	$(Q)mkdir -p build-fuzz/corpus-analyze
	$(Q)cp -n tests/fuzz/corpus/* build-fuzz/corpus-analyze/ 2>/dev/null || true
	$(Q)ASAN_OPTIONS=allocator_may_return_null=0 build-fuzz/fuzz_analyze -max_total_time=$(FUZZ_SECS) \
	    -rss_limit_mb=2048 -max_len=65536 -timeout=30 -artifact_prefix=build-fuzz/ build-fuzz/corpus-analyze

$(BUILD)/fuzz_analyze: tests/fuzz/fuzz_analyze.c $(filter-out $(BUILD)/obj/analyzer/main.o,$(ANALYZER_OBJ)) \
                       $(ANALYZER_EXTRA_OBJ) $(DECODE_OBJ) $(ANSWERS_OBJ) $(WRITERS_LIB)
	$(call msg,LD,$@)
	$(Q)$(CC) $(CFLAGS_BASE) -fsanitize=fuzzer $(ANALYZER_INC) -o $@ $(filter-out %.a,$^) \
	    $(filter %.a,$^) $(ANALYZE_LIBS)

# Programs for the real-GPU checks (scripts/gpu-check.sh, docs/gpu-validation.md):
# the demo workload and a memory ballast linked against the REAL CUDA runtime
# and NCCL of $(CUDA_HOME) (libcuda: the link stub; the driver at run time).
# libcudart.so.13 is copied into $(BUILD)/gpu/lib (RUNPATH $ORIGIN/lib);
# libnccl.so.2 (over 200 MiB) is not: the GPU machine's torch wheel has one.
GPU_DIR := $(BUILD)/gpu
# GPU_EXTRA: more flags, e.g. -I and -L of a pip wheel's NCCL when building there.
GPU_EXTRA ?=
GPU_LIBS := -L$(CUDA_HOME)/lib64 -L$(CUDA_HOME)/lib64/stubs -Wl,-rpath,'$$ORIGIN/lib'
.PHONY: gpu-progs
gpu-progs: $(GPU_DIR)/demo_workload $(GPU_DIR)/ballast $(GPU_DIR)/gpu_reset $(GPU_DIR)/gpu_graph \
	$(GPU_DIR)/route_ctx_cache $(GPU_DIR)/lib/libcudart.so.13
$(GPU_DIR)/demo_workload: tests/routes/demo_workload.c
	$(call msg,LD,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS_BASE) $(CUDA_INC) $(GPU_EXTRA) -o $@ $< $(GPU_LIBS) -lcudart -l:libnccl.so.2 -lcuda -ldl -lpthread
$(GPU_DIR)/gpu_reset: tests/routes/gpu_reset.c
	$(call msg,LD,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS_BASE) $(CUDA_INC) $(GPU_EXTRA) -o $@ $< $(GPU_LIBS) -lcudart -lcuda
$(GPU_DIR)/route_ctx_cache: tests/routes/route_ctx_cache.c tests/routes/route_util.h
	$(call msg,LD,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS_BASE) $(CUDA_INC) -Itests/routes $(GPU_EXTRA) -o $@ $< $(GPU_LIBS) -lcudart -lcuda -ldl -lpthread
$(GPU_DIR)/gpu_graph: tests/routes/gpu_graph.c
	$(call msg,LD,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS_BASE) $(CUDA_INC) $(GPU_EXTRA) -o $@ $< $(GPU_LIBS) -lcuda -ldl
$(GPU_DIR)/ballast: tests/gpu/ballast.c
	$(call msg,LD,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS_BASE) $(CUDA_INC) $(GPU_EXTRA) -o $@ $< $(GPU_LIBS) -lcudart
$(GPU_DIR)/lib/libcudart.so.13: $(CUDA_HOME)/lib64/libcudart.so.13
	$(call msg,CP,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)cp -L $< $@
