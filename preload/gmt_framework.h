/*
 * gmt_framework.h - PRIVATE to preload/: the framework channel's recording
 * helpers, shared by the public API (gmt_framework.c) and the NVTX memory
 * extension (gmt_nvtx_mem.c).
 */
#ifndef GMT_FRAMEWORK_H
#define GMT_FRAMEWORK_H

#include <stdint.h>

/* One FW_* event now, in the main stream, without a stack: device -1 = none;
 * aux = fw | flags << 32 (GMT_FW_FLAG_*). The device record is written
 * first if this is the first event naming the device. */
void gmt_fw_emit_now(unsigned type, int device, uint64_t addr, uint64_t size,
		     uint64_t stream, uint32_t fw, uint32_t flags);

/* The framework id (STRING id, > 0) of name, interned once per name; 0 when
 * tracing is off. */
uint32_t gmt_fw_id(const char *name);

#endif /* GMT_FRAMEWORK_H */
