/*
 * ballast.c - holds device memory for the real-GPU checks (scripts/gpu-check.sh).
 *
 *   ballast --info              prints the CUDA runtime and driver versions and
 *                               device 0's name, total and free bytes; exits
 *   ballast LEAVE_MIB [SECONDS] takes all of device 0's free memory but
 *                               LEAVE_MIB (one cudaMalloc), prints
 *                               "ready taken=B free=B" and holds it until it
 *                               is killed or SECONDS (default 300) have passed
 *
 * Exit status: 0 done, 1 a CUDA call failed (its name and error on stderr),
 * 2 usage.
 *
 * Why it exists: the demo workload's step 4 asks for 64 GiB and expects an
 * out-of-memory error, as it gets on the test doubles (16 GiB devices). An
 * H200 has 141 GB, so another process must hold all but a few GiB for that
 * request to fail there too. Plain cudaMalloc, never managed memory (managed
 * oversubscription can hang the GPU). The time limit makes sure a ballast
 * left behind by a killed check script frees the GPU on its own.
 */
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MiB (1024ull * 1024ull)

static int cuda_fail(const char *what, cudaError_t e)
{
	fprintf(stderr, "ballast: %s failed: %d %s\n", what, (int)e, cudaGetErrorName(e));
	return 1;
}

static int info(void)
{
	int rt = 0, drv = 0;
	size_t free_b = 0, total_b = 0;
	struct cudaDeviceProp p;
	cudaError_t e;

	if ((e = cudaRuntimeGetVersion(&rt)) != cudaSuccess)
		return cuda_fail("cudaRuntimeGetVersion", e);
	if ((e = cudaDriverGetVersion(&drv)) != cudaSuccess)
		return cuda_fail("cudaDriverGetVersion", e);
	printf("cuda_runtime_version=%d cuda_driver_version=%d\n", rt, drv);
	if ((e = cudaGetDeviceProperties(&p, 0)) != cudaSuccess)
		return cuda_fail("cudaGetDeviceProperties", e);
	if ((e = cudaMemGetInfo(&free_b, &total_b)) != cudaSuccess)
		return cuda_fail("cudaMemGetInfo", e);
	printf("device0=\"%s\" cc=%d.%d total=%zu free=%zu\n", p.name, p.major, p.minor,
	       total_b, free_b);
	return 0;
}

int main(int argc, char **argv)
{
	size_t free_b = 0, total_b = 0, take, leave;
	unsigned long secs = 300;
	void *p = NULL;
	cudaError_t e;
	char *end;

	if (argc == 2 && strcmp(argv[1], "--info") == 0)
		return info();
	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: ballast --info | ballast LEAVE_MIB [SECONDS]\n");
		return 2;
	}
	leave = (size_t)strtoull(argv[1], &end, 10) * MiB;
	if (*end != '\0') {
		fprintf(stderr, "ballast: LEAVE_MIB is not a number: %s\n", argv[1]);
		return 2;
	}
	if (argc == 3)
		secs = strtoul(argv[2], NULL, 10);

	if ((e = cudaSetDevice(0)) != cudaSuccess)
		return cuda_fail("cudaSetDevice", e);
	if ((e = cudaMemGetInfo(&free_b, &total_b)) != cudaSuccess)
		return cuda_fail("cudaMemGetInfo", e);
	/* 2 MiB multiples: what the driver maps anyway */
	take = free_b > leave ? (free_b - leave) / (2 * MiB) * (2 * MiB) : 0;
	if (take > 0 && (e = cudaMalloc(&p, take)) != cudaSuccess)
		return cuda_fail("cudaMalloc", e);
	if ((e = cudaMemGetInfo(&free_b, &total_b)) != cudaSuccess)
		return cuda_fail("cudaMemGetInfo", e);
	printf("ready taken=%zu free=%zu total=%zu\n", take, free_b, total_b);
	fflush(stdout);
	for (unsigned long i = 0; i < secs; i++)
		sleep(1);
	return 0;
}
