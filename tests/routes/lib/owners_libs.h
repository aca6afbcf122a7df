/*
 * owners_libs.h - what the cuBLAS and cuDNN stand-ins of route_owners export
 * (owners_blas.c as libcublasLt.so.13, owners_dnn.c as libcudnn.so.9).
 */
#ifndef OWNERS_LIBS_H
#define OWNERS_LIBS_H

#include <stddef.h>
#include <stdint.h>

#define OWNERS_EXPORT __attribute__((visibility("default")))

/* Allocates a workspace of bytes on the current context (*addr: its
 * address); keep: hold it (one at a time, until ..._destroy()), else free it
 * at once. Returns 0, or the CUresult (fakeblas) / cudaError_t (fakednn) of
 * the call that failed; fakeblas -1 when the driver could not be reached. */
OWNERS_EXPORT int fakeblas_workspace(size_t bytes, int keep, uint64_t *addr);
OWNERS_EXPORT int fakednn_workspace(size_t bytes, int keep, uint64_t *addr);

/* Free the kept workspace; 0 or the error of the free. */
OWNERS_EXPORT int fakeblas_destroy(void);
OWNERS_EXPORT int fakednn_destroy(void);

#endif
