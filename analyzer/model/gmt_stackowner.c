/*
 * gmt_stackowner.c - the owner named by a module's file name (the stack
 * rule of docs/analyzer.md, "Owner from the stack"; model/gmt_sites_model.h).
 */
#include <string.h>

#include "gmt_decode.h"
#include "model/gmt_sites_model.h"

const char *gmt_stack_owner_name(enum gmt_stack_owner o)
{
	if ((unsigned)o <= GMT_OWNER_MAX)
		return gmt_owner_name(o);
	return o == GMT_SOWNER_FRAMEWORK ? "framework" : "unknown";
}

static int prefix(const char *s, const char *p)
{
	return !strncmp(s, p, strlen(p));
}

enum gmt_stack_owner gmt_module_owner(const char *path)
{
	const char *b = strrchr(path, '/');
	b = b ? b + 1 : path;
	if (prefix(b, "libcuda.") || prefix(b, "libcudart.") || prefix(b, "libgpumemtrace"))
		return GMT_SOWNER_UNKNOWN;
	if (prefix(b, "libc10_cuda") || prefix(b, "libtorch"))
		return GMT_SOWNER_FRAMEWORK;
	if (prefix(b, "libnccl"))
		return GMT_SOWNER_NCCL;
	if (prefix(b, "libcublas"))
		return GMT_SOWNER_CUBLAS;
	if (prefix(b, "libcudnn"))
		return GMT_SOWNER_CUDNN;
	return GMT_SOWNER_APP;
}

