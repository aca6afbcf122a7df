"""A training-like script on the FAKE torch (tests/companion/fake_torch), run
by tests/cases/companion_e2e.sh with and without the preload and the
companion's sitecustomize. argv[1]: "main" (the sequence below), "overflow"
(12 allocations between two boundaries in a ring of 4), "stacks" (with
GPUMEMTRACE_COMPANION_STACKS=python: blocks allocated from two call sites,
whose Python frames the history records).

main, S = 0x7f0000000000, D = 0x7f1000000000:
  import torch | init | d0 segment_alloc S 2 MiB, alloc S 512 s=7 |
  nvtx push "step" (boundary) | alloc S+512 1024 s=7, free_requested S 512
  s=7 | push "inner" (depth 1: none) | free_completed S 512 s=7 | pop
  (none) | pop (boundary) | d1 segment_alloc D 20 MiB, alloc D 4096 |
  gpumemtrace phase boundary | OOM on d1: 1 TiB, 1 MiB free | d1
  free_requested D 4096 | exit (boundary).

retry (with FAKE_TORCH_CUDART, the runtime double, GMT_FAKE_MEM_BYTES =
1 GiB): the fake caching allocator on device 0, MiB = 2^20 B:
  phase "load": W 512 MiB (a segment of its own) |
  phase "train": C 256 MiB, freed (C's segment cached) | R1 384 MiB: no
  cached room, cudaMalloc fails (256 MiB free), C's segment is given back,
  the retry works (recovered) | R2 256 MiB: cudaMalloc fails (128 MiB
  free), nothing to give back, the retry fails: oom (request 256 MiB, free
  128 MiB), OutOfMemoryError out of the phase; exit status 1.
"""

import sys

import gpumemtrace
import torch

mode = sys.argv[1]
cuda = torch.cuda
print("imported: wrapped=%s path=%s" % (hasattr(cuda._lazy_init, "__wrapped__"),
                                        gpumemtrace.trace_path() is not None))
cuda.init()
print("initialised: wrapped=%s path=%s" % (hasattr(cuda._lazy_init, "__wrapped__"),
                                           gpumemtrace.trace_path() is not None))
print("history:", cuda.memory._history_kwargs)
print("companion dir on sys.path:", any(p.rstrip("/").endswith("gpumemtrace_companion")
                                          for p in sys.path))
print("user sitecustomize:", getattr(sys.modules.get("sitecustomize"), "USER_SITE_RAN", False))
S, D = 0x7F0000000000, 0x7F1000000000

if mode == "main":
    cuda._fake(0, "segment_alloc", S, 2 << 20)
    cuda._fake(0, "alloc", S, 512, 7)
    cuda.nvtx.range_push("step")
    cuda._fake(0, "alloc", S + 512, 1024, 7)
    cuda._fake(0, "free_requested", S, 512, 7)
    cuda.nvtx.range_push("inner")
    cuda._fake(0, "free_completed", S, 512, 7)
    cuda.nvtx.range_pop()
    cuda.nvtx.range_pop()
    cuda._fake(1, "segment_alloc", D, 20 << 20)
    cuda._fake(1, "alloc", D, 4096)
    gpumemtrace._framework.on_phase_boundary() if hasattr(gpumemtrace, "_framework") else None
    cuda._fake_oom(1, 1 << 40, 1 << 20)
    cuda._fake(1, "free_requested", D, 4096)
    print("nvtx calls:", cuda.nvtx.calls)
elif mode == "stacks":
    def forward(i):
        cuda._fake(0, "alloc", S + 512 * i, 512, 7)  # site: forward
    cuda._fake(0, "segment_alloc", S, 2 << 20)
    cuda.nvtx.range_push("step")
    for i in range(2):
        forward(i)  # site: loop
    cuda._fake(0, "alloc", S + 1024, 1536, 7)  # site: top
    cuda.nvtx.range_pop()
elif mode == "retry":
    MiB = 1 << 20
    with gpumemtrace.phase("load"):
        w = cuda._fake_malloc(0, 512 * MiB)
    try:
        with gpumemtrace.phase("train"):
            c = cuda._fake_malloc(0, 256 * MiB)
            cuda._fake_free(c)
            r1 = cuda._fake_malloc(0, 384 * MiB)
            print("recovered: retries=%d" % cuda.memory_stats(0)["num_alloc_retries"])
            r2 = cuda._fake_malloc(0, 256 * MiB)
    except cuda.OutOfMemoryError as e:
        print("out of memory: %s; ooms=%d" % (e, cuda.memory_stats(0)["num_ooms"]))
        sys.exit(1)
elif mode == "overflow":
    cuda._fake(0, "segment_alloc", S, 2 << 20)
    cuda.nvtx.mark("start")
    for i in range(12):
        cuda._fake(0, "alloc", S + 512 * i, 512)
    cuda.nvtx.mark("end")
print("done")
