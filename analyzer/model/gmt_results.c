/*
 * gmt_results.c - names of CUresult codes (gmt_results.h).
 */
#include "model/gmt_results.h"

#include <stddef.h>

const char *gmt_curesult_name(unsigned code)
{
	static const struct { unsigned code; const char *name; } t[] = {
		{ 0, "CUDA_SUCCESS" },
		{ 1, "CUDA_ERROR_INVALID_VALUE" },
		{ 2, "CUDA_ERROR_OUT_OF_MEMORY" },
		{ 3, "CUDA_ERROR_NOT_INITIALIZED" },
		{ 4, "CUDA_ERROR_DEINITIALIZED" },
		{ 34, "CUDA_ERROR_STUB_LIBRARY" },
		{ 36, "CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER" },
		{ 46, "CUDA_ERROR_DEVICE_UNAVAILABLE" },
		{ 100, "CUDA_ERROR_NO_DEVICE" },
		{ 101, "CUDA_ERROR_INVALID_DEVICE" },
		{ 201, "CUDA_ERROR_INVALID_CONTEXT" },
		{ 208, "CUDA_ERROR_ALREADY_MAPPED" },
		{ 211, "CUDA_ERROR_NOT_MAPPED" },
		{ 214, "CUDA_ERROR_ECC_UNCORRECTABLE" },
		{ 304, "CUDA_ERROR_OPERATING_SYSTEM" },
		{ 400, "CUDA_ERROR_INVALID_HANDLE" },
		{ 401, "CUDA_ERROR_ILLEGAL_STATE" },
		{ 500, "CUDA_ERROR_NOT_FOUND" },
		{ 600, "CUDA_ERROR_NOT_READY" },
		{ 700, "CUDA_ERROR_ILLEGAL_ADDRESS" },
		{ 709, "CUDA_ERROR_CONTEXT_IS_DESTROYED" },
		{ 719, "CUDA_ERROR_LAUNCH_FAILED" },
		{ 800, "CUDA_ERROR_NOT_PERMITTED" },
		{ 801, "CUDA_ERROR_NOT_SUPPORTED" },
		{ 900, "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED" },
		{ 901, "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED" },
		{ 999, "CUDA_ERROR_UNKNOWN" },
	};
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (t[i].code == code)
			return t[i].name;
	return NULL;
}

