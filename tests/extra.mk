# Extra artefacts of the preload's tests (included by the Makefile; every
# target goes into EXTRA_TARGETS, built by `make all`). Sources are in
# tests/routes/lib/ (not tests/routes/*.c, which the Makefile builds as one
# program each).
#   route_ctor + libroute_ctor.so   route 7: CUDA from a library constructor
#   route_next + libroute_next_{a,b}.so  route 8: RTLD_NEXT stays caller-relative
#   route_cxx_throw                 route 9: C++ exceptions under the preload
#   route_nocuda                    a program without libcuda calling our exports
#   unit_stack_walk_{fp,nofp} + libstack_nofp.so  the frame-pointer walk against libunwind
#   bench_cuda_fp, bench_malloc_fp  make bench's workloads built with frame pointers

RT_EXTRA := $(BUILD)/tests/route_ctor $(BUILD)/tests/libroute_ctor.so \
            $(BUILD)/tests/route_next $(BUILD)/tests/libroute_next_a.so \
            $(BUILD)/tests/libroute_next_b.so $(BUILD)/tests/route_nocuda
ifneq ($(shell command -v $(CXX) 2>/dev/null),)
RT_EXTRA += $(BUILD)/tests/route_cxx_throw
endif
EXTRA_TARGETS += $(RT_EXTRA)

RT_CFLAGS = $(CFLAGS_BASE) $(CUDA_INC) -Itests/routes
RT_RPATH = -Wl,-rpath,'$$ORIGIN'

$(BUILD)/tests/libroute_ctor.so: tests/routes/lib/ctor_lib.c $(FAKE)
	$(call msg,LD,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(RT_CFLAGS) -fPIC -shared -o $@ $< $(ROUTE_LIBS)

$(BUILD)/tests/route_ctor: tests/routes/lib/ctor_main.c $(BUILD)/tests/libroute_ctor.so tests/routes/route_util.h
	$(call msg,LD,$@)
	$(Q)$(CC) $(RT_CFLAGS) -o $@ $< -L$(BUILD)/tests -lroute_ctor $(RT_RPATH) $(ROUTE_LIBS)

$(BUILD)/tests/libroute_next_a.so: tests/routes/lib/next_lib.c
	$(call msg,LD,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(RT_CFLAGS) -fPIC -shared -DROUTE_NEXT_NAME="'A'" -o $@ $< -ldl

$(BUILD)/tests/libroute_next_b.so: tests/routes/lib/next_lib.c
	$(call msg,LD,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(RT_CFLAGS) -fPIC -shared -DROUTE_NEXT_NAME="'B'" -o $@ $< -ldl

$(BUILD)/tests/route_next: tests/routes/lib/next_main.c $(BUILD)/tests/libroute_next_a.so \
                           $(BUILD)/tests/libroute_next_b.so tests/routes/route_util.h $(FAKE)
	$(call msg,LD,$@)
	$(Q)$(CC) $(RT_CFLAGS) -o $@ $< -L$(BUILD)/tests -Wl,--no-as-needed -lroute_next_a -lroute_next_b -Wl,--as-needed $(RT_RPATH) $(ROUTE_LIBS)

$(BUILD)/tests/route_cxx_throw: tests/routes/lib/cxx_throw.cpp $(FAKE)
	$(call msg,CXX,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CXX) -std=c++17 -g $(OPT) -Wall -Wextra $(CUDA_INC) -o $@ $< \
	    -L$(BUILD)/fakecuda -Wl,-rpath-link,$(BUILD)/fakecuda -lcuda

$(BUILD)/tests/route_nocuda: tests/routes/lib/nocuda.c
	$(call msg,LD,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(RT_CFLAGS) -o $@ $< -ldl

# Stack capture (tests/unit/lib/stack_walk.c): the frame-pointer walk checked
# frame by frame against libunwind, in a program built with frame pointers
# and in one built without, both calling through a library that has none.
SW_LIBS := -L$(BUILD)/tests -lstack_nofp -Wl,-rpath,'$$ORIGIN' $(CORE_LIB) \
           $(LIBDIR)/libzstd.a $(LIBDIR)/libmsgpackc.a -ldl -lpthread -lm
EXTRA_TARGETS += $(BUILD)/tests/libstack_nofp.so $(BUILD)/tests/unit_stack_walk_fp \
                 $(BUILD)/tests/unit_stack_walk_nofp

$(BUILD)/tests/libstack_nofp.so: tests/unit/lib/stack_nofp_lib.c | $(DEPS_OK)
	$(call msg,LD,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS_BASE) -fomit-frame-pointer -fPIC -shared -o $@ $<

$(BUILD)/tests/unit_stack_walk_fp: tests/unit/lib/stack_walk.c $(CORE_LIB) $(BUILD)/tests/libstack_nofp.so
	$(call msg,LD,$@)
	$(Q)$(CC) $(CFLAGS_BASE) -fno-omit-frame-pointer -DSTACK_WALK_FP -Itracer -Itests/unit -o $@ $< $(SW_LIBS)

$(BUILD)/tests/unit_stack_walk_nofp: tests/unit/lib/stack_walk.c $(CORE_LIB) $(BUILD)/tests/libstack_nofp.so
	$(call msg,LD,$@)
	$(Q)$(CC) $(CFLAGS_BASE) -fomit-frame-pointer -Itracer -Itests/unit -o $@ $< $(SW_LIBS)

# make bench: the hot-path workloads built with frame pointers too (the
# stack walk's case; scripts/bench.sh runs both builds).
EXTRA_TARGETS += $(BUILD)/tests/bench_cuda_fp $(BUILD)/tests/bench_malloc_fp
$(BUILD)/tests/bench_cuda_fp: tests/routes/bench_cuda.c tests/routes/bench_workload.h $(FAKE)
	$(call msg,LD,$@)
	$(Q)$(CC) $(CFLAGS_BASE) -fno-omit-frame-pointer $(CUDA_INC) -Itests/routes -o $@ $< $(ROUTE_LIBS)
$(BUILD)/tests/bench_malloc_fp: tests/routes/bench_malloc.c tests/routes/bench_workload.h
	$(call msg,LD,$@)
	$(Q)$(CC) $(CFLAGS_BASE) -fno-omit-frame-pointer -o $@ $<

# Phases (tests/cases/nvtx_*.sh): a second NVTX instance, a library built
# with the NVTX3 headers that tests/routes/phase_nvtx.c dlopen()s.
PHASE_EXTRA := $(BUILD)/tests/libphase_nvtx.so
EXTRA_TARGETS += $(PHASE_EXTRA)

$(BUILD)/tests/libphase_nvtx.so: tests/routes/lib/phase_nvtx_lib.c
	$(call msg,LD,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(RT_CFLAGS) -fPIC -shared -o $@ $< -ldl

# Owners (tests/cases/route_owners.sh): stand-ins for cuBLAS and cuDNN named
# like the real libraries (the preload knows an owning library by its file
# name) in their own directory, and route_owners, which allocates through
# them, the runtime and NCCL (RUNPATH $ORIGIN/fakelibs).
#   fakelibs/libcublasLt.so.13  static-runtime style: dlopen + cuGetProcAddress_v2
#   fakelibs/libcudnn.so.9      dynamic-runtime style: cudaMalloc
OWNER_LIBS := $(BUILD)/tests/fakelibs/libcublasLt.so.13 $(BUILD)/tests/fakelibs/libcudnn.so.9
EXTRA_TARGETS += $(OWNER_LIBS) $(BUILD)/tests/route_owners

$(BUILD)/tests/fakelibs/libcublasLt.so.13: tests/routes/lib/owners_blas.c tests/routes/lib/owners_libs.h
	$(call msg,LD,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(RT_CFLAGS) -fPIC -fvisibility=hidden -shared -Wl,-soname,libcublasLt.so.13 -o $@ $< -ldl -lpthread

$(BUILD)/tests/fakelibs/libcudnn.so.9: tests/routes/lib/owners_dnn.c tests/routes/lib/owners_libs.h $(FAKE)
	$(call msg,LD,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(RT_CFLAGS) -fPIC -fvisibility=hidden -shared -Wl,-soname,libcudnn.so.9 -o $@ $< \
	    -L$(BUILD)/fakecuda -lcudart

$(BUILD)/tests/route_owners: tests/routes/lib/owners_main.c tests/routes/lib/owners_libs.h $(OWNER_LIBS) \
                          tests/routes/route_util.h $(FAKE)
	$(call msg,LD,$@)
	$(Q)$(CC) $(RT_CFLAGS) -o $@ $< -L$(BUILD)/tests/fakelibs -l:libcublasLt.so.13 -l:libcudnn.so.9 \
	    -Wl,-rpath,'$$ORIGIN/fakelibs' $(ROUTE_LIBS)

# Call sites (tests/cases/sites_*.sh, flamegraph_*.sh): sites_workload, built
# with debug information at -O1 without sibling calls (every frame a real
# call), and libsites_lib.so, which it dlopen()s after start.
SITES_EXTRA := $(BUILD)/tests/sites_workload $(BUILD)/tests/libsites_lib.so
EXTRA_TARGETS += $(SITES_EXTRA)
SITES_CFLAGS = -std=gnu11 -g -O1 -fno-optimize-sibling-calls -fno-omit-frame-pointer $(WARN) \
               -D_GNU_SOURCE $(CUDA_INC)

$(BUILD)/tests/libsites_lib.so: tests/routes/lib/sites_lib.c $(FAKE)
	$(call msg,LD,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(SITES_CFLAGS) -fPIC -shared -o $@ $< -L$(BUILD)/fakecuda -lcudart

$(BUILD)/tests/sites_workload: tests/routes/lib/sites_main.c $(FAKE)
	$(call msg,LD,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(SITES_CFLAGS) -o $@ $< -L$(BUILD)/fakecuda -Wl,-rpath-link,$(BUILD)/fakecuda -lcudart -ldl

# The same library rebuilt with other code and an explicit, different build
# id (tests/cases/sites_buildid.sh swaps it in between trace and analysis).
EXTRA_TARGETS += $(BUILD)/tests/sites_rebuilt/libsites_lib.so
$(BUILD)/tests/sites_rebuilt/libsites_lib.so: tests/routes/lib/sites_lib.c $(FAKE)
	$(call msg,LD,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(SITES_CFLAGS) -DSITES_LIB_TAG=1 -fPIC -shared \
	    -Wl,--build-id=0x12345678deadbeef12345678deadbeef12345678 -o $@ $< -L$(BUILD)/fakecuda -lcudart

# Call sites per phase (tests/cases/sites_phase.sh): sites_phase_workload,
# built like sites_workload.
EXTRA_TARGETS += $(BUILD)/tests/sites_phase_workload
$(BUILD)/tests/sites_phase_workload: tests/routes/lib/sites_phase.c $(FAKE)
	$(call msg,LD,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(SITES_CFLAGS) -o $@ $< -L$(BUILD)/fakecuda -Wl,-rpath-link,$(BUILD)/fakecuda -lcudart -ldl

# Out-of-memory failures known by construction (tests/cases/oom_*.sh):
# oom_workload, built like sites_workload.
EXTRA_TARGETS += $(BUILD)/tests/oom_workload
$(BUILD)/tests/oom_workload: tests/routes/lib/oom_main.c preload/gpumemtrace.h $(FAKE)
	$(call msg,LD,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(SITES_CFLAGS) -Ipreload -o $@ $< -L$(BUILD)/fakecuda -Wl,-rpath-link,$(BUILD)/fakecuda -lcudart -ldl

# Two runs to compare (tests/cases/diff_*.sh): diff_workload, built like
# sites_workload, and libdiffws.so built twice, the second with other code
# and an explicit build id: the library rebuilt between the runs.
EXTRA_TARGETS += $(BUILD)/tests/diff_workload $(BUILD)/tests/diff_v1/libdiffws.so \
                 $(BUILD)/tests/diff_v2/libdiffws.so
$(BUILD)/tests/diff_workload: tests/routes/lib/diff_main.c $(FAKE)
	$(call msg,LD,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(SITES_CFLAGS) -o $@ $< -L$(BUILD)/fakecuda -Wl,-rpath-link,$(BUILD)/fakecuda \
	    -lcudart -lnccl -ldl
$(BUILD)/tests/diff_v1/libdiffws.so: tests/routes/lib/diffws_lib.c $(FAKE)
	$(call msg,LD,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(SITES_CFLAGS) -fPIC -shared -o $@ $< -L$(BUILD)/fakecuda -lcudart
$(BUILD)/tests/diff_v2/libdiffws.so: tests/routes/lib/diffws_lib.c $(FAKE)
	$(call msg,LD,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(SITES_CFLAGS) -DDIFFWS_TAG=1 -fPIC -shared \
	    -Wl,--build-id=0x0123456789abcdef0123456789abcdef01234567 -o $@ $< -L$(BUILD)/fakecuda -lcudart

# Runtime and NCCL hooks answer each caller with its own library
# (tests/cases/route_rtlocal.sh, route_majors.sh; preload/gmt_bind.c).
#   rtlocal/libcudart-<hash>.so.13   renamed copies of the runtime double (two)
#   rtlocal/libnccl-<hash>.so.2      a renamed copy of the NCCL double
#   rtlocal/libext_{a,b,nccl}.so     extensions linked against them (RUNPATH $ORIGIN)
#   rtlocal/real/libcudart-<hash>.so.13 + libext_real.so: the toolkit's REAL runtime, renamed
#   rtlocal/vendor/libext_nccl_real.so  linked as libnccl.so.2; the test copies the
#                                    REAL libnccl.so.2 (over 200 MiB) beside it, renamed
#   route_rtlocal                    loads them RTLD_LOCAL, then probes for the names
#   rt12/libcudart.so.12 + libmajors12.so + route_majors: two runtime majors
#                                    (route_majors dlopens libmajors12.so RTLD_GLOBAL)
#   real/route_real_rt               linked directly against the REAL runtime (RPATH)
RTL := $(BUILD)/tests/rtlocal
RTL_EXT_CFLAGS = $(RT_CFLAGS) -fPIC -shared -Wl,-rpath,'$$ORIGIN'
RTLOCAL_EXTRA := $(BUILD)/tests/procaddr_check $(BUILD)/tests/route_rtlocal $(RTL)/libext_a.so $(RTL)/libext_b.so $(RTL)/libext_nccl.so \
                 $(RTL)/real/libext_real.so $(RTL)/vendor/libext_nccl_real.so \
                 $(BUILD)/tests/route_majors $(BUILD)/tests/real/route_real_rt
EXTRA_TARGETS += $(RTLOCAL_EXTRA)

$(BUILD)/tests/route_rtlocal: tests/routes/lib/rtlocal_main.c preload/hooks.def
	$(call msg,LD,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(RT_CFLAGS) -Ipreload -o $@ $< -ldl

# A renamed copy, as auditwheel makes one: file and soname libX-<hash>.
$(RTL)/libcudart-5e1f7c2a.so.13 $(RTL)/libcudart-0b9d4e61.so.13: $(BUILD)/fakecuda/libcudart.so.13
	$(call msg,PATCHELF,$@)
	$(Q)mkdir -p $(dir $@) && cp $< $@ && patchelf --set-soname $(notdir $@) $@
$(RTL)/libnccl-9c8b7a6d.so.2: $(BUILD)/fakecuda/libnccl.so.2
	$(call msg,PATCHELF,$@)
	$(Q)mkdir -p $(dir $@) && cp $< $@ && patchelf --set-soname $(notdir $@) $@
$(RTL)/real/libcudart-3c7a2f90.so.13: $(CUDA_HOME)/lib64/libcudart.so.13
	$(call msg,PATCHELF,$@)
	$(Q)mkdir -p $(dir $@) && cp -L $< $@ && patchelf --set-soname $(notdir $@) $@

$(RTL)/libext_a.so: tests/routes/lib/rtlocal_ext.c $(RTL)/libcudart-5e1f7c2a.so.13
	$(call msg,LD,$@)
	$(Q)$(CC) $(RTL_EXT_CFLAGS) -DEXT_BYTES=3145728 -DEXT_LIB='"libcudart-5e1f7c2a.so.13"' -o $@ $< \
	    -L$(RTL) -l:libcudart-5e1f7c2a.so.13 -ldl
$(RTL)/libext_b.so: tests/routes/lib/rtlocal_ext.c $(RTL)/libcudart-0b9d4e61.so.13
	$(call msg,LD,$@)
	$(Q)$(CC) $(RTL_EXT_CFLAGS) -DEXT_BYTES=5242880 -DEXT_LIB='"libcudart-0b9d4e61.so.13"' -o $@ $< \
	    -L$(RTL) -l:libcudart-0b9d4e61.so.13 -ldl
$(RTL)/libext_nccl.so: tests/routes/lib/rtlocal_ext.c $(RTL)/libnccl-9c8b7a6d.so.2
	$(call msg,LD,$@)
	$(Q)$(CC) $(RTL_EXT_CFLAGS) -DEXT_NCCL -DEXT_BYTES=3145728 -DEXT_LIB='"libnccl-9c8b7a6d.so.2"' -o $@ $< \
	    -L$(RTL) -l:libnccl-9c8b7a6d.so.2 -ldl
$(RTL)/real/libext_real.so: tests/routes/lib/rtlocal_ext.c $(RTL)/real/libcudart-3c7a2f90.so.13
	$(call msg,LD,$@)
	$(Q)$(CC) $(RTL_EXT_CFLAGS) -DEXT_BYTES=3145728 -DEXT_LIB='"libcudart-3c7a2f90.so.13"' -o $@ $< \
	    -L$(RTL)/real -l:libcudart-3c7a2f90.so.13 -ldl
$(RTL)/vendor/libext_nccl_real.so: tests/routes/lib/rtlocal_ext.c $(BUILD)/fakecuda/libnccl.so.2
	$(call msg,LD,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(RTL_EXT_CFLAGS) -DEXT_NCCL -DEXT_BYTES=3145728 -DEXT_LIB='"libnccl-1a2b3c4d.so.2"' -o $@ $< \
	    -L$(BUILD)/fakecuda -l:libnccl.so.2 -ldl

$(BUILD)/tests/rt12/libcudart.so.12: tests/fakecuda/fake_runtime.c tests/fakecuda/cudart12.map $(wildcard tests/fakecuda/*.h)
	$(call msg,LD,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS_BASE) -fPIC $(CUDA_INC) -shared -DFK_RUNTIME_VERSION=12080 -Wl,-soname,libcudart.so.12 \
	    -Wl,--version-script=tests/fakecuda/cudart12.map -o $@ $< -ldl -lpthread
$(BUILD)/tests/libmajors12.so: tests/routes/lib/majors_lib.c $(BUILD)/tests/rt12/libcudart.so.12
	$(call msg,LD,$@)
	$(Q)$(CC) $(RT_CFLAGS) -fPIC -shared -o $@ $< -L$(BUILD)/tests/rt12 -l:libcudart.so.12 \
	    -Wl,-rpath,'$$ORIGIN/rt12'
$(BUILD)/tests/route_majors: tests/routes/lib/majors_main.c $(BUILD)/tests/libmajors12.so $(FAKE)
	$(call msg,LD,$@)
	$(Q)$(CC) $(RT_CFLAGS) -o $@ $< $(ROUTE_LIBS)

$(BUILD)/tests/real/lib/libcudart.so.13: $(CUDA_HOME)/lib64/libcudart.so.13
	$(call msg,CP,$@)
	$(Q)mkdir -p $(dir $@) && cp -L $< $@
$(BUILD)/tests/real/route_real_rt: tests/routes/lib/real_rt.c $(BUILD)/tests/real/lib/libcudart.so.13
	$(call msg,LD,$@)
	$(Q)$(CC) $(RT_CFLAGS) -o $@ $< -L$(BUILD)/tests/real/lib -l:libcudart.so.13 \
	    -Wl,--disable-new-dtags -Wl,-rpath,'$$ORIGIN/lib'

# GPU check row 18 (scripts/gpu-check.sh): the driver's cuGetProcAddress
# against its exported symbols, for every driver hook (links no CUDA).
$(BUILD)/tests/procaddr_check: tests/gpu/procaddr_check.c preload/hooks.def
	$(call msg,LD,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS_BASE) $(CUDA_INC) -Ipreload -o $@ $< -ldl
