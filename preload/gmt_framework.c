/*
 * gmt_framework.c - the framework channel of gpumemtrace.h: an allocator
 * that carves blocks out of memory it got from CUDA reports what it hands
 * out (FW_* events, schemas/trace-format.md).
 *
 * Two kinds of events arrive here. Events that happen now (a C allocator
 * calling us from its malloc) join the main stream like any hook's event.
 * Events with a time in the past (PyTorch's allocator history, moved at a
 * phase boundary by the Python companion) cannot: the main stream is already
 * written past them. They go, as one batch, to the side stream
 * (gmt_emit_side), which keeps its own time order; the caller sorts them and
 * hands each over once.
 *
 * A framework is known by its name's STRING id, so the trace names it
 * without another record kind. Unknown ids are refused: a stray integer must
 * not attribute events to whatever string happens to have that id.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "gmt_framework.h"
#include "gmt_preload.h"
#include "gpumemtrace.h"

/* ---- registered frameworks ----------------------------------------------- */

#define MAX_FRAMEWORKS 64

static pthread_mutex_t fw_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic uint32_t fw_known[MAX_FRAMEWORKS];   /* 0 = free slot */

static int fw_is_known(int fw)
{
	if (fw <= 0)
		return 0;
	for (int i = 0; i < MAX_FRAMEWORKS; i++) {
		uint32_t v = atomic_load_explicit(&fw_known[i], memory_order_acquire);
		if (v == 0)
			return 0;   /* slots fill in order: the rest are free */
		if (v == (uint32_t)fw)
			return 1;
	}
	return 0;
}

uint32_t gmt_fw_id(const char *name)
{
	if (!name || !*name)
		return 0;
	uint32_t id = gmt_tracer_string(name);
	return gmt_tracer_active() ? id : 0;
}

/* ---- recording ------------------------------------------------------------ */

static int16_t fw_device(int device)
{
	return device < 0 || device >= GMT_MAX_DEVICES ? -1 : (int16_t)device;
}

void gmt_fw_emit_now(unsigned type, int device, uint64_t addr, uint64_t size,
		     uint64_t stream, uint32_t fw, uint32_t flags)
{
	const uint64_t aux = (uint64_t)fw | (uint64_t)flags << 32;

	device = fw_device(device);
	if (type != GMT_EV_FW_OOM) {
		gmt_rec(type, device, addr, size, stream, aux, 0);
		return;
	}
	/* A framework's out of memory is what a post-mortem looks for first:
	 * on disk before the program goes on (it may be about to die). */
	gmt_event_t ev = {
		.addr = addr, .size = size, .stream = stream, .aux = aux,
		.type = (uint16_t)type, .device = (int16_t)device,
	};
	if (device >= 0)
		gmt_device_describe(device);
	gmt_emit_urgent(&ev, 0, 0);
}

static const uint16_t action_type[] = {
	[GPUMEMTRACE_FW_ALLOC] = GMT_EV_FW_ALLOC,
	[GPUMEMTRACE_FW_FREE_REQUESTED] = GMT_EV_FW_FREE_REQUESTED,
	[GPUMEMTRACE_FW_FREE_COMPLETED] = GMT_EV_FW_FREE_COMPLETED,
	[GPUMEMTRACE_FW_SEGMENT_ALLOC] = GMT_EV_FW_SEGMENT_ALLOC,
	[GPUMEMTRACE_FW_SEGMENT_FREE] = GMT_EV_FW_SEGMENT_FREE,
	[GPUMEMTRACE_FW_SEGMENT_MAP] = GMT_EV_FW_SEGMENT_MAP,
	[GPUMEMTRACE_FW_SEGMENT_UNMAP] = GMT_EV_FW_SEGMENT_UNMAP,
	[GPUMEMTRACE_FW_OOM] = GMT_EV_FW_OOM,
};
#define N_ACTIONS (sizeof(action_type) / sizeof(action_type[0]))

/* The event's text stack id; anything else (a native STACK id, garbage) is
 * dropped: the caller may only name what gpumemtrace_stack() returned. */
#define ACTION(a) ((a) & 0xff)

static uint32_t event_stack(const gpumemtrace_fw_event_t *e)
{
	return e->stack <= UINT32_MAX && GMT_STACK_IS_TEXT(e->stack) ? (uint32_t)e->stack : 0;
}

/* One event now with its text stack: gmt_fw_emit_now without one. */
static void emit_now_stack(const gpumemtrace_fw_event_t *e, uint32_t fw, uint32_t stack)
{
	const unsigned type = action_type[ACTION(e->action)];
	int16_t dev = fw_device(e->device);
	if (stack == 0 || type == GMT_EV_FW_OOM) {
		gmt_fw_emit_now(type, e->device, e->addr, e->size, e->stream, fw, 0);
		return;
	}
	gmt_event_t ev = {
		.addr = e->addr, .size = e->size, .stream = e->stream, .aux = fw,
		.stack = stack, .type = (uint16_t)type, .device = dev,
	};
	if (dev >= 0)
		gmt_device_describe(dev);
	gmt_emit(&ev, 0, 0);
}

/* Past-time events go to the side stream in chunks: one allocation per
 * chunk, not per call (a history can hold a million events). */
#define SIDE_CHUNK 4096u
#define SIDE_STACK_CHUNK 64u

static void emit_past(uint32_t fw, const gpumemtrace_fw_event_t *ev, size_t n, size_t n_past)
{
	gmt_event_t stack_buf[SIDE_STACK_CHUNK];
	size_t cap = n_past < SIDE_CHUNK ? n_past : SIDE_CHUNK;
	gmt_event_t *buf = malloc(cap * sizeof(*buf));
	const uint64_t aux = (uint64_t)fw | (uint64_t)GMT_FW_FLAG_PAST_TIME << 32;
	const uint64_t now = gmt_now_ns();
	size_t k = 0;

	if (!buf) {
		buf = stack_buf;
		cap = SIDE_STACK_CHUNK;
	}
	for (size_t i = 0; i < n; i++) {
		if (ev[i].time_ns == 0)
			continue;
		int16_t dev = fw_device(ev[i].device);
		if (dev >= 0)
			gmt_device_describe(dev);
		buf[k++] = (gmt_event_t){
			/* "In the past": a converted clock a little ahead of ours
			 * is taken as now rather than as the future. */
			.ts = ev[i].time_ns < now ? ev[i].time_ns : now,
			.addr = ev[i].addr, .size = ev[i].size, .stream = ev[i].stream,
			.aux = (ev[i].action & GPUMEMTRACE_FW_FROM_HISTORY)
				       ? aux | (uint64_t)GMT_FW_FLAG_SNAPSHOT << 32 : aux,
			.stack = event_stack(&ev[i]),
			.type = action_type[ACTION(ev[i].action)], .device = dev,
		};
		if (k == cap) {
			gmt_emit_side(buf, k);
			k = 0;
		}
	}
	if (k)
		gmt_emit_side(buf, k);
	if (buf != stack_buf)
		free(buf);
}

/* ---- the public API (gpumemtrace.h) -------------------------------------- */

GMT_EXPORT int gpumemtrace_fw_register(const char *name)
{
	GMT_KEEP_ERRNO;
	gmt_preload_ensure_init();
	uint32_t id = gmt_fw_id(name);
	if (id == 0 || id > INT32_MAX)
		return 0;
	if (fw_is_known((int)id))
		return (int)id;
	pthread_mutex_lock(&fw_lock);
	int i = 0, added = 0;
	for (; i < MAX_FRAMEWORKS; i++) {
		uint32_t v = atomic_load_explicit(&fw_known[i], memory_order_relaxed);
		if (v == id)
			break;
		if (v == 0) {
			atomic_store_explicit(&fw_known[i], id, memory_order_release);
			added = 1;
			break;
		}
	}
	pthread_mutex_unlock(&fw_lock);
	if (i == MAX_FRAMEWORKS) {
		gmt_pl_log(1, "more than %d frameworks registered: \"%s\" is not traced",
			   MAX_FRAMEWORKS, name);
		return 0;
	}
	/* From here the framework reports its segments: the analyzer lets a new
	 * driver allocation wait for its segment event on every device, the
	 * very first segment included (docs/analyzer.md, "New allocations
	 * wait"). */
	if (added)
		gmt_rec(GMT_EV_FW_REGISTER, -1, 0, 0, 0, id, 0);
	return (int)id;
}

GMT_EXPORT int gpumemtrace_fw_events(int fw, const gpumemtrace_fw_event_t *ev, size_t n)
{
	size_t n_past = 0;

	GMT_KEEP_ERRNO;
	gmt_preload_ensure_init();
	if (!fw_is_known(fw) || (n && !ev))
		return -1;
	/* All or nothing: a bad action anywhere refuses the whole call. */
	for (size_t i = 0; i < n; i++) {
		if (ACTION(ev[i].action) <= 0 || (size_t)ACTION(ev[i].action) >= N_ACTIONS ||
		    (ev[i].action & ~(0xff | GPUMEMTRACE_FW_FROM_HISTORY)))
			return -1;
		n_past += ev[i].time_ns != 0;
	}
	if (n_past)
		emit_past((uint32_t)fw, ev, n, n_past);
	if (n_past == n)
		return 0;
	for (size_t i = 0; i < n; i++) {
		if (ev[i].time_ns == 0)
			emit_now_stack(&ev[i], (uint32_t)fw, event_stack(&ev[i]));
	}
	return 0;
}

GMT_EXPORT void gpumemtrace_fw_counters(int fw, int device, uint64_t allocated,
					uint64_t allocated_peak, uint64_t reserved,
					uint64_t reserved_peak)
{
	GMT_KEEP_ERRNO;
	gmt_preload_ensure_init();
	if (!fw_is_known(fw))
		return;
	gmt_fw_emit_now(GMT_EV_FW_ALLOCATED, device, allocated, allocated_peak, 0, (uint32_t)fw, 0);
	gmt_fw_emit_now(GMT_EV_FW_RESERVED, device, reserved, reserved_peak, 0, (uint32_t)fw, 0);
}

GMT_EXPORT void gpumemtrace_fw_lost(int fw, int device, uint64_t n)
{
	GMT_KEEP_ERRNO;
	gmt_preload_ensure_init();
	if (!fw_is_known(fw) || n == 0)
		return;
	gmt_fw_emit_now(GMT_EV_FW_LOST, device, 0, n, 0, (uint32_t)fw, 0);
}

GMT_EXPORT void gpumemtrace_fw_retries(int fw, int device, uint64_t retries, uint64_t ooms)
{
	GMT_KEEP_ERRNO;
	gmt_preload_ensure_init();
	if (!fw_is_known(fw))
		return;
	gmt_fw_emit_now(GMT_EV_FW_RETRIES, device, retries, ooms, 0, (uint32_t)fw, 0);
}

GMT_EXPORT uint32_t gpumemtrace_stack(const char *const *frames, size_t n)
{
	GMT_KEEP_ERRNO;
	gmt_preload_ensure_init();
	if (n && !frames)
		return 0;
	return gmt_tracer_text_stack(frames, n);
}

GMT_EXPORT void gpumemtrace_meta(const char *key, const char *value)
{
	GMT_KEEP_ERRNO;
	gmt_preload_ensure_init();
	if (!key || !*key || !value)
		return;
	gmt_tracer_meta(&key, &value, 1);
}
