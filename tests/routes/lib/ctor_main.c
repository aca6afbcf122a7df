/*
 * ctor_main.c - route_ctor: route 7, the program around libroute_ctor.so,
 * whose constructor used CUDA before the preload initialised itself. It
 * frees what the constructor allocated, through the same routes.
 */
#include <cuda.h>
#include <cuda_runtime_api.h>

#include "route_util.h"

extern CUdeviceptr route_ctor_plain, route_ctor_managed;
extern void *route_ctor_runtime;
extern int route_ctor_status;

int main(void)
{
	ROUTE_CHECK("constructor", route_ctor_status, 0);
	route_name("plain", route_ctor_plain);
	route_name("managed", route_ctor_managed);
	route_name("runtime", (uintptr_t)route_ctor_runtime);
	ROUTE_CHECK("cudaFree", cudaFree(route_ctor_runtime), cudaSuccess);
	ROUTE_CHECK("cuMemFree plain", cuMemFree(route_ctor_plain), CUDA_SUCCESS);
	ROUTE_CHECK("cuMemFree managed", cuMemFree(route_ctor_managed), CUDA_SUCCESS);
	return 0;
}
