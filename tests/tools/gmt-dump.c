/*
 * gmt-dump - prints a trace one line per record (tests grep this format):
 *   HEADER pid= ppid= major= minor= stack_depth=
 *   THREAD idx= tid= name=
 *   DEVICE ordinal= name= total=
 *   MODULE id= base=0x size= path= [soname= file= (1.4)]
 *   MODULE_UNLOAD id= ts=
 *   STACK id= depth=                      STRING id= text=
 *   TEXTSTACK id= depth=
 *   META k=v ...
 *   EV <type> ts= thread= device= addr=0x size= stream=0x stack= kind= api=
 *      owner= flags= result= aux=  [" late" for events of a LATE record,
 *      " side" for events of a SIDE record]
 *   DROPS count= first_ts= last_ts= reason= errno=
 *   END written= dropped= late=
 *   EXIT how= value= (1.4: how the process ended, right after END)
 * and a last line "STATUS ok clean|ok cut|damaged MSG|refused MSG".
 * Exit status: 0 ok, 1 damaged, 2 refused or I/O error.
 * Usage: gmt-dump TRACE
 */
#include <inttypes.h>
#include <stdio.h>

#include "gmt_decode.h"

static int on_header(void *ctx, const gmt_header_t *h)
{
	printf("HEADER pid=%" PRIu64 " ppid=%" PRIu64 " major=%u minor=%u stack_depth=%u\n",
	       h->pid, h->ppid, h->format_major, h->format_minor, h->stack_depth);
	return 0;
}

static int on_thread(void *ctx, uint32_t idx, uint64_t tid, const char *name)
{
	printf("THREAD idx=%u tid=%" PRIu64 " name=%s\n", idx, tid, name);
	return 0;
}

static int on_device(void *ctx, const gmt_device_rec_t *d)
{
	printf("DEVICE ordinal=%d name=%s total=%" PRIu64 "\n", d->ordinal, d->name, d->total_bytes);
	return 0;
}

static int on_module(void *ctx, const gmt_module_t *m)
{
	printf("MODULE id=%u base=0x%" PRIx64 " size=%" PRIu64 " path=%s", m->id, m->base,
	       m->size, m->path);
	if (m->soname)
		printf(" soname=%s file=%s", m->soname, m->file ? m->file : "");
	printf("\n");
	return 0;
}

static int on_unload(void *ctx, uint32_t id, uint64_t ts)
{
	printf("MODULE_UNLOAD id=%u ts=%" PRIu64 "\n", id, ts);
	return 0;
}

static int on_stack(void *ctx, uint32_t id, const uint64_t *f, size_t n)
{
	printf("STACK id=%u depth=%zu\n", id, n);
	return 0;
}

static int on_text_stack(void *ctx, uint32_t id, const char *const *f, size_t n)
{
	printf("TEXTSTACK id=%u depth=%zu\n", id, n);
	return 0;
}

static int on_string(void *ctx, uint32_t id, const char *text, size_t len)
{
	printf("STRING id=%u text=%s\n", id, text);
	return 0;
}

static int on_meta(void *ctx, uint64_t ts, const gmt_kv_t *kv, size_t n)
{
	printf("META");
	for (size_t i = 0; i < n; i++)
		printf(" %s=%s", kv[i].key, kv[i].value);
	printf("\n");
	return 0;
}

static int on_events(void *ctx, const gmt_devent_t *ev, size_t n, unsigned flags)
{
	for (size_t i = 0; i < n; i++) {
		const gmt_devent_t *e = &ev[i];
		printf("EV %s ts=%" PRIu64 " thread=%u device=%d addr=0x%" PRIx64 " size=%" PRIu64
		       " stream=0x%" PRIx64 " stack=%u kind=%s api=%s owner=%s flags=%u result=%u aux=%"
		       PRIu64 "%s%s\n",
		       gmt_ev_type_name(e->type), e->ts, e->thread, e->device, e->addr, e->size,
		       e->stream, e->stack, gmt_kind_name(GMT_AUX_KIND(e->aux)),
		       gmt_api_name(GMT_AUX_API(e->aux)), gmt_owner_name(GMT_AUX_OWNER(e->aux)),
		       GMT_AUX_FLAGS(e->aux), GMT_AUX_RESULT(e->aux), e->aux,
		       (flags & GMT_EVENTS_LATE) ? " late" : "",
		       (flags & GMT_EVENTS_SIDE) ? " side" : "");
	}
	return 0;
}

static int on_drops(void *ctx, const gmt_drops_t *d)
{
	printf("DROPS count=%" PRIu64 " first_ts=%" PRIu64 " last_ts=%" PRIu64 " reason=%s errno=%d\n",
	       d->count, d->first_ts, d->last_ts, d->reason, d->err);
	return 0;
}

static int on_end(void *ctx, const gmt_end_t *e)
{
	printf("END written=%" PRIu64 " dropped=%" PRIu64 " late=%" PRIu64 "\n", e->written,
	       e->dropped, e->late);
	if (*e->how)
		printf("EXIT how=%s value=%d\n", e->how, e->value);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: gmt-dump TRACE\n");
		return 2;
	}
	gmt_visitor_t v = {
		.header = on_header, .thread = on_thread, .module = on_module,
		.module_unload = on_unload, .stack = on_stack, .device = on_device,
		.events = on_events, .drops = on_drops, .string = on_string, .text_stack = on_text_stack, .end = on_end,
		.meta = on_meta,
	};
	gmt_decode_result_t r;
	int st = gmt_decode_file(argv[1], &v, &r);
	switch (st) {
	case GMT_DECODE_OK:
		printf("STATUS ok %s\n", r.ended_cleanly ? "clean" : "cut");
		return 0;
	case GMT_DECODE_DAMAGED:
		printf("STATUS damaged %s\n", r.message);
		return 1;
	default:
		printf("STATUS refused %s\n", r.message);
		return 2;
	}
}
