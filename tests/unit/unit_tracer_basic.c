/* unit_tracer_basic: one thread's events, metadata and the header go
 * through the writer and come back field by field; file naming. */
#include <sys/prctl.h>

#include "gmt_test.h"
#include "unit_tracer_collect.h"
#include "gmt_internal.h"

#define N_EV 7

int main(void)
{
	const char *dir = test_dir("basic");
	gmt_config_t cfg = test_config(dir);
	prctl(PR_SET_NAME, "basic-main", 0, 0, 0);
	CHECK_EQ_U64(0, gmt_tracer_active());
	CHECK_EQ_U64(0, gmt_tracer_init(&cfg));
	CHECK_EQ_U64(1, gmt_tracer_active());
	CHECK_EQ_U64(0, gmt_tracer_init(&cfg));   /* idempotent */

	char expect_path[4200];
	snprintf(expect_path, sizeof(expect_path), "%s/gpumemtrace.unit_tracer_basic.%d.gmt", dir,
		 (int)getpid());
	CHECK_EQ_STR(expect_path, gmt_tracer_path());

	gmt_device_info_t dev;
	memset(&dev, 0, sizeof(dev));
	dev.ordinal = 0;
	snprintf(dev.name, sizeof(dev.name), "Fake GPU 0");
	for (int i = 0; i < 16; i++)
		dev.uuid[i] = (uint8_t)(0xA0 + i);
	snprintf(dev.pci_bus_id, sizeof(dev.pci_bus_id), "0000:01:00.0");
	dev.total_bytes = 80ull << 30;
	dev.cc_major = 9;
	gmt_tracer_device(&dev);
	uint32_t s1 = gmt_tracer_string("phase:forward");
	uint32_t s2 = gmt_tracer_string("phase:backward");
	CHECK_EQ_U64(1, s1);
	CHECK_EQ_U64(2, s2);
	CHECK_EQ_U64(1, gmt_tracer_string("phase:forward"));
	const char *k[2] = { "rank", "job" }, *v[2] = { "3", "train" };
	gmt_tracer_meta(k, v, 2);

	gmt_event_t in[N_EV] = {
		{ .type = GMT_EV_ALLOC, .addr = 0x7f0000000000ull, .size = 1 << 20, .device = 0,
		  .aux = GMT_AUX(GMT_KIND_PLAIN, GMT_API_CUDA_MALLOC, GMT_OWNER_APP) },
		{ .type = GMT_EV_ALLOC, .addr = 0x7f0000100000ull, .size = 4096, .device = 0,
		  .stream = 0xdead0000ull, .aux = GMT_AUX(GMT_KIND_ASYNC, GMT_API_CUDA_MALLOC_ASYNC, GMT_OWNER_NCCL) | 1u << 24 },
		{ .type = GMT_EV_FREE, .addr = 0x7f0000000000ull, .device = 0,
		  .aux = GMT_AUX(GMT_KIND_PLAIN, GMT_API_CUDA_FREE, GMT_OWNER_APP) },
		{ .type = GMT_EV_ALLOC_FAIL, .size = 1ull << 40, .device = 1,
		  .aux = GMT_AUX_WITH_RESULT(GMT_AUX(GMT_KIND_PLAIN, 0, 0), 2) },
		{ .type = GMT_EV_SYNC, .addr = 12345, .stream = 0x10, .device = -1,
		  .aux = GMT_SYNC_STREAM },
		{ .type = GMT_EV_MEMINFO, .addr = 70ull << 30, .size = 80ull << 30, .device = 0 },
		{ .type = GMT_EV_VMM_MAP, .addr = 0x1000, .size = 2 << 20, .stream = 0x5,
		  .device = 2, .aux = 0xffffffffffull },
	};
	uint64_t t_before = gmt_now_ns();
	for (int i = 0; i < N_EV; i++)
		gmt_emit(&in[i], 0, 0);
	uint64_t fixed_ts = gmt_now_ns();
	gmt_event_t late = { .type = GMT_EV_CTX_CREATE, .ts = fixed_ts, .addr = 0xc7, .device = 0 };
	gmt_emit(&late, 0, 0);
	uint64_t t_after = gmt_now_ns();
	CHECK_EQ_U64(0, gmt_tracer_flush(1000));

	gmt_tracer_stats_t st;
	gmt_tracer_get_stats(&st);
	CHECK_EQ_U64(N_EV + 1, st.emitted);
	CHECK_EQ_U64(N_EV + 1, st.written);
	CHECK_EQ_U64(0, st.dropped);
	/* An urgent event is in the file when gmt_emit_urgent returns. */
	gmt_event_t oom = { .type = GMT_EV_ALLOC_FAIL, .size = 777, .device = 0 };
	gmt_emit_urgent(&oom, 0, 0);
	gmt_decode_result_t ur;
	coll_t *uc = coll_decode(expect_path, &ur);
	CHECK_EQ_U64(GMT_DECODE_OK, ur.status);
	CHECK_EQ_U64(0, ur.ended_cleanly);
	CHECK_EQ_U64(N_EV + 2, uc->n);
	if (uc->n == N_EV + 2)
		CHECK_EQ_U64(777, uc->ev[N_EV + 1].size);
	coll_free(uc);
	free(uc);

	gmt_tracer_shutdown();
	CHECK_EQ_U64(0, gmt_tracer_active());
	gmt_emit(&in[0], 0, 0);   /* ignored after shutdown */
	gmt_tracer_get_stats(&st);
	CHECK_EQ_U64(N_EV + 2, st.written);

	gmt_decode_result_t r;
	coll_t *c = coll_decode(expect_path, &r);
	CHECK_EQ_U64(GMT_DECODE_OK, r.status);
	CHECK_EQ_U64(1, r.ended_cleanly);
	CHECK_EQ_U64(r.file_size, r.bytes_ok);
	CHECK_EQ_U64(1, c->headers);
	CHECK_EQ_U64(getpid(), c->pid);
	CHECK_EQ_U64(getppid(), c->ppid);
	CHECK_EQ_U64(1, c->major);
	CHECK_EQ_U64(GMT_FORMAT_MINOR, c->minor);
	CHECK_EQ_U64(0, c->stack_depth);
	CHECK_EQ_U64(1, c->n_threads);
	CHECK_EQ_U64(0, c->thread_idx[0]);
	CHECK_EQ_U64(gettid(), c->thread_tid[0]);
	CHECK_EQ_STR("basic-main", c->thread_name[0]);
	CHECK_EQ_U64(1, c->n_devices);
	CHECK_EQ_STR("Fake GPU 0", c->device_name[0]);
	CHECK_EQ_U64(80ull << 30, c->device_total[0]);
	CHECK_EQ_U64(0xA5, c->device_uuid[0][5]);
	CHECK_EQ_U64(2, c->n_strings);
	CHECK_EQ_U64(1, c->string_id[0]);
	CHECK_EQ_STR("phase:forward", c->string_text[0]);
	CHECK_EQ_U64(2, c->string_id[1]);
	CHECK_EQ_STR("phase:backward", c->string_text[1]);
	CHECK_EQ_U64(2, c->n_meta);
	CHECK_EQ_STR("rank=3", c->meta_kv[0]);
	CHECK_EQ_STR("job=train", c->meta_kv[1]);
	CHECK_EQ_U64(N_EV + 2, c->n);
	CHECK_EQ_U64(0, c->n_late);
	for (int i = 0; i < N_EV && i < (int)c->n; i++) {
		const gmt_devent_t *e = &c->ev[i];
		CHECK_EQ_U64(in[i].type, e->type);
		CHECK_EQ_U64(in[i].addr, e->addr);
		CHECK_EQ_U64(in[i].size, e->size);
		CHECK_EQ_U64(in[i].stream, e->stream);
		CHECK_EQ_U64(in[i].aux, e->aux);
		CHECK_EQ_U64((uint64_t)(int64_t)in[i].device, (uint64_t)(int64_t)e->device);
		CHECK_EQ_U64(0, e->stack);
		CHECK_EQ_U64(0, e->thread);
		CHECK(e->ts >= t_before && e->ts <= t_after);
		if (i)
			CHECK(e->ts >= c->ev[i - 1].ts);
	}
	if (c->n == N_EV + 2) {
		CHECK_EQ_U64(fixed_ts, c->ev[N_EV].ts);
		CHECK_EQ_U64(GMT_EV_CTX_CREATE, c->ev[N_EV].type);
		CHECK_EQ_U64(0xc7, c->ev[N_EV].addr);
	}
	CHECK_EQ_U64(1, c->has_end);
	CHECK_EQ_U64(N_EV + 2, c->end.written);
	CHECK_EQ_U64(0, c->end.dropped);
	CHECK_EQ_U64(0, c->end.late);
	CHECK_EQ_U64(0, c->n_drops);
	/* the module map names this program */
	char exe[4096];
	ssize_t el = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	exe[el > 0 ? el : 0] = 0;
	CHECK_EQ_STR(exe, c->exe);
	int found = 0, vdso = 0;
	for (size_t i = 0; i < c->n_modules && i < 512; i++) {
		if (!strcmp(c->module_path[i], exe)) {
			found++;
			CHECK(c->module_size[i] > 0);
			CHECK(c->module_bid_len[i] == 20);
		}
		vdso += !strcmp(c->module_path[i], "[vdso]");
	}
	CHECK_EQ_U64(1, found);
	CHECK_EQ_U64(1, vdso);
	coll_free(c);
	free(c);

	/* configuration from the environment */
	setenv("GPUMEMTRACE_TEST_FAIL_WRITES", "5:EDQUOT:2", 1);
	setenv("GPUMEMTRACE_STACK_DEPTH", "500", 1);
	setenv("GPUMEMTRACE_FLUSH_MS", "0", 1);
	setenv("GPUMEMTRACE_BUFFER_MB", "3", 1);
	setenv("GPUMEMTRACE_FREE_STACKS", "1", 1);
	setenv("GPUMEMTRACE_BUFFER_MS", "250", 1);
	setenv("GPUMEMTRACE_STACK_METHOD", "libunwind", 1);
	setenv("GPUMEMTRACE_OVERLOAD", "drop", 1);
	gmt_config_t ec;
	gmt_config_from_env(&ec);
	CHECK_EQ_U64(GMT_OVERLOAD_DROP, ec.overload);
	CHECK_EQ_U64(5, ec.test_fail_write_after);
	CHECK_EQ_U64(EDQUOT, ec.test_fail_errno);
	CHECK_EQ_U64(2, ec.test_fail_count);
	CHECK_EQ_U64(128, ec.stack_depth);
	CHECK_EQ_U64(1, ec.flush_ms);
	CHECK_EQ_U64(3 << 20, ec.buffer_bytes);
	CHECK_EQ_U64(1, ec.free_stacks);
	CHECK_EQ_I64(-3, ec.zstd_level);   /* the default */
	CHECK_EQ_U64(250, ec.buffer_ms);
	CHECK_EQ_U64(GMT_STACK_LIBUNWIND, ec.stack_method);
	unsetenv("GPUMEMTRACE_BUFFER_MS");
	unsetenv("GPUMEMTRACE_STACK_METHOD");
	setenv("GPUMEMTRACE_OVERLOAD", "wait", 1);   /* not a choice: help */
	setenv("GPUMEMTRACE_ZSTD_LEVEL", "5", 1);
	gmt_config_from_env(&ec);
	CHECK_EQ_I64(5, ec.zstd_level);
	CHECK_EQ_U64(GMT_OVERLOAD_HELP, ec.overload);
	unsetenv("GPUMEMTRACE_OVERLOAD");
	unsetenv("GPUMEMTRACE_ZSTD_LEVEL");
	/* GPUMEMTRACE_TEST_FAIL_WRITES: after, errno, count, events only
	 * ("frames" is not a form: off) */
	static const struct {
		const char *v;
		long after;
		int err;
		long count;
		int events;
	} fw[] = { { "2:ENOSPC", 2, ENOSPC, 0, 0 }, { "3:EIO:1:events", 3, EIO, 1, 1 },
		   { "3:EIO:1:frames", 0, 0, 0, 0 } };
	for (size_t i = 0; i < sizeof(fw) / sizeof(fw[0]); i++) {
		setenv("GPUMEMTRACE_TEST_FAIL_WRITES", fw[i].v, 1);
		gmt_config_from_env(&ec);
		CHECK_EQ_U64(fw[i].after, ec.test_fail_write_after);
		CHECK_EQ_U64(fw[i].err, ec.test_fail_errno);
		CHECK_EQ_U64(fw[i].count, ec.test_fail_count);
		CHECK_EQ_U64(fw[i].events, ec.test_fail_events_only);
	}

	/* O_EXCL naming: an existing name gets .1, then .2 */
	char *p1 = NULL, *p2 = NULL, *p3 = NULL, pat[4200], want[4300];
	snprintf(pat, sizeof(pat), "%s/named.%%p.gmt", dir);
	int fd1 = gmt_file_create(pat, &p1), fd2 = gmt_file_create(pat, &p2),
	    fd3 = gmt_file_create(pat, &p3);
	CHECK(fd1 >= 0 && fd2 >= 0 && fd3 >= 0);
	snprintf(want, sizeof(want), "%s/named.%d.gmt", dir, (int)getpid());
	CHECK_EQ_STR(want, p1);
	snprintf(want, sizeof(want), "%s/named.%d.1.gmt", dir, (int)getpid());
	CHECK_EQ_STR(want, p2);
	snprintf(want, sizeof(want), "%s/named.%d.2.gmt", dir, (int)getpid());
	CHECK_EQ_STR(want, p3);
	snprintf(pat, sizeof(pat), "%s/x-%%n-%%%%", dir);
	char *p4 = NULL;
	CHECK(gmt_file_create(pat, &p4) >= 0);
	snprintf(want, sizeof(want), "%s/x-unit_tracer_basic-%%", dir);
	CHECK_EQ_STR(want, p4);
	/* RANK names the file: in a directory, and as %r of a pattern
	 * (empty without a rank, and for a RANK that is not a number). */
	char *p5 = NULL, *p6 = NULL, *p7 = NULL, *p8 = NULL, rdir[4200];
	snprintf(rdir, sizeof(rdir), "%s/ranks", dir);
	CHECK(mkdir(rdir, 0755) == 0);
	setenv("RANK", "3", 1);
	int fd5 = gmt_file_create(rdir, &p5);
	CHECK(fd5 >= 0);
	snprintf(want, sizeof(want), "%s/gpumemtrace.unit_tracer_basic.rank3.%d.gmt", rdir, (int)getpid());
	CHECK_EQ_STR(want, p5);
	snprintf(pat, sizeof(pat), "%s/r%%r-%%p.gmt", dir);
	int fd6 = gmt_file_create(pat, &p6);
	CHECK(fd6 >= 0);
	snprintf(want, sizeof(want), "%s/r3-%d.gmt", dir, (int)getpid());
	CHECK_EQ_STR(want, p6);
	setenv("RANK", "3; rm", 1);
	int fd7 = gmt_file_create(pat, &p7);
	CHECK(fd7 >= 0);
	snprintf(want, sizeof(want), "%s/r-%d.gmt", dir, (int)getpid());
	CHECK_EQ_STR(want, p7);
	unsetenv("RANK");
	int fd8 = gmt_file_create(rdir, &p8);
	CHECK(fd8 >= 0);
	snprintf(want, sizeof(want), "%s/gpumemtrace.unit_tracer_basic.%d.gmt", rdir, (int)getpid());
	CHECK_EQ_STR(want, p8);
	free(p5);
	free(p6);
	free(p7);
	free(p8);
	close(fd5);
	close(fd6);
	close(fd7);
	close(fd8);
	free(p1);
	free(p2);
	free(p3);
	free(p4);
	close(fd1);
	close(fd2);
	close(fd3);
	TEST_DONE();
}
