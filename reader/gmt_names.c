/* gmt_names.c - printable names of the format's numbers (reader side). */
#include "gmt_decode.h"

static const char *const ev_names[GMT_EV_TYPE_MAX + 1] = {
	[GMT_EV_NONE] = "none",
	[GMT_EV_ALLOC] = "alloc",
	[GMT_EV_FREE] = "free",
	[GMT_EV_ALLOC_FAIL] = "alloc_fail",
	[GMT_EV_FREE_FAIL] = "free_fail",
	[GMT_EV_VMM_CREATE] = "vmm_create",
	[GMT_EV_VMM_RELEASE] = "vmm_release",
	[GMT_EV_VMM_RESERVE] = "vmm_reserve",
	[GMT_EV_VMM_ADDR_FREE] = "vmm_addr_free",
	[GMT_EV_VMM_MAP] = "vmm_map",
	[GMT_EV_VMM_UNMAP] = "vmm_unmap",
	[GMT_EV_POOL_CREATE] = "pool_create",
	[GMT_EV_POOL_DESTROY] = "pool_destroy",
	[GMT_EV_POOL_TRIM] = "pool_trim",
	[GMT_EV_SYNC] = "sync",
	[GMT_EV_CTX_CREATE] = "ctx_create",
	[GMT_EV_CTX_DESTROY] = "ctx_destroy",
	[GMT_EV_PRIMARY_RETAIN] = "primary_retain",
	[GMT_EV_PRIMARY_RELEASE] = "primary_release",
	[GMT_EV_MEMINFO] = "meminfo",
	[GMT_EV_POOL_RESERVED] = "pool_reserved",
	[GMT_EV_POOL_USED] = "pool_used",
	[GMT_EV_NCCL_BEGIN] = "nccl_begin",
	[GMT_EV_NCCL_END] = "nccl_end",
	[GMT_EV_VMM_MAP_FAIL] = "vmm_map_fail",
	[GMT_EV_VMM_RETAIN] = "vmm_retain",
	[GMT_EV_RANGE_BEGIN] = "range_begin",
	[GMT_EV_RANGE_END] = "range_end",
	[GMT_EV_MARK] = "mark",
	[GMT_EV_FW_ALLOC] = "fw_alloc",
	[GMT_EV_FW_FREE_REQUESTED] = "fw_free_requested",
	[GMT_EV_FW_FREE_COMPLETED] = "fw_free_completed",
	[GMT_EV_FW_SEGMENT_ALLOC] = "fw_segment_alloc",
	[GMT_EV_FW_SEGMENT_FREE] = "fw_segment_free",
	[GMT_EV_FW_SEGMENT_MAP] = "fw_segment_map",
	[GMT_EV_FW_SEGMENT_UNMAP] = "fw_segment_unmap",
	[GMT_EV_FW_OOM] = "fw_oom",
	[GMT_EV_FW_ALLOCATED] = "fw_allocated",
	[GMT_EV_FW_RESERVED] = "fw_reserved",
	[GMT_EV_FW_LOST] = "fw_lost",
	[GMT_EV_FW_REGISTER] = "fw_register",
	[GMT_EV_CTX_CURRENT] = "ctx_current",
	[GMT_EV_GRAPH_MEM] = "graph_mem",
};

static const char *const kind_names[GMT_KIND_MAX + 1] = {
	"unknown", "plain", "stream_ordered", "vmm_physical", "managed", "host_pinned",
};

static const char *const api_names[GMT_API_MAX + 1] = {
	"driver", "cudaMalloc", "cudaFree", "cudaMallocAsync", "cudaFreeAsync",
	"cudaMallocManaged", "cudaMallocHost", "cudaFreeHost", "cudaHostAlloc",
	"cudaMallocPitch", "cudaMallocFromPoolAsync", "ncclMemAlloc", "ncclMemFree",
};

static const char *const owner_names[GMT_OWNER_MAX + 1] = {
	"application", "nccl", "cublas", "cudnn",
};

static const char *const sync_names[] = { "?", "stream", "context", "event" };

const char *gmt_ev_type_name(unsigned type)
{
	return type <= GMT_EV_TYPE_MAX && ev_names[type] ? ev_names[type] : "?";
}

const char *gmt_kind_name(unsigned kind)
{
	return kind <= GMT_KIND_MAX ? kind_names[kind] : "?";
}

const char *gmt_api_name(unsigned api)
{
	return api <= GMT_API_MAX ? api_names[api] : "?";
}

const char *gmt_owner_name(unsigned owner)
{
	return owner <= GMT_OWNER_MAX ? owner_names[owner] : "?";
}

const char *gmt_sync_name(unsigned kind)
{
	return kind <= GMT_SYNC_EVENT ? sync_names[kind] : "?";
}
