// cxx_throw.cpp - route_cxx_throw: route 9, a C++ program that throws and
// catches exceptions after CUDA calls made the tracer capture stacks (and so
// load its unwinder). The preload must not change how exceptions unwind:
// its libunwind is private (RTLD_LOCAL) and it exports no _Unwind_*.
#include <cuda.h>

#include <cstdio>
#include <stdexcept>
#include <string>

static int depth_throw(int depth, int i)
{
	if (depth == 0) {
		if (i % 3 == 0)
			throw std::runtime_error("runtime " + std::to_string(i));
		if (i % 3 == 1)
			throw i;
		throw std::string("string");
	}
	return depth_throw(depth - 1, i) + 1;
}

int main()
{
	CUcontext ctx;
	CUdeviceptr a;
	long caught_rt = 0, caught_int = 0, caught_str = 0, sum = 0;

	if (cuInit(0) != CUDA_SUCCESS || cuCtxCreate(&ctx, nullptr, 0, 0) != CUDA_SUCCESS ||
	    cuMemAlloc(&a, 4096) != CUDA_SUCCESS)
		return 2;
	for (int i = 0; i < 3000; i++) {
		try {
			depth_throw(10, i);
		} catch (const std::runtime_error &e) {
			caught_rt++;
			sum += (long)std::string(e.what()).size();
		} catch (int v) {
			caught_int++;
			sum += v;
		} catch (...) {
			caught_str++;
		}
	}
	try {
		try {
			throw std::logic_error("inner");
		} catch (...) {
			throw; // rethrow through a second handler
		}
	} catch (const std::logic_error &e) {
		std::printf("rethrown %s\n", e.what());
	}
	std::printf("caught runtime=%ld int=%ld other=%ld sum=%ld\n", caught_rt, caught_int, caught_str, sum);
	return cuMemFree(a) == CUDA_SUCCESS ? 0 : 3;
}
