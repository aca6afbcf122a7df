/*
 * gmt-chrome-fixture: a Chrome trace written with export/gmt_chrome.c from a
 * stream known by construction, for tests/cases/chrome_writer.sh:
 *   gmt-chrome-fixture BUDGET OUT.json
 * 200,000 instants 1000 ns apart on one device (pid 1000): "allocated" a
 * sawtooth of 4096-byte steps from 0 to 999 * 4096, with one instant of
 * 7 GiB at instant 123457; "held" = allocated + 1 GiB. Process and thread
 * names, a phase slice "step" (cold) and a failed allocation instant.
 */
#include <stdio.h>
#include <stdlib.h>

#include "gmt_chrome.h"

#define GiB (1ull << 30)

int main(int argc, char **argv)
{
	if (argc != 3)
		return 2;
	FILE *f = fopen(argv[2], "w");
	gmt_chrome_t *c = f ? gmt_chrome_open(f) : NULL;
	if (!c)
		return 1;
	gmt_chrome_process_name(c, 1000, "GPU 0 (GPU-fixture)");
	gmt_chrome_process_name(c, 4242, "workload (pid 4242)");
	gmt_chrome_thread_name(c, 4242, 4243, "main");
	const char *kv[] = { "occurrence", "1 (cold)" };
	gmt_chrome_slice(c, 4242, 4243, "step", 1000000, 50000000, kv, 1);
	gmt_chrome_instant(c, 1000, 4243, "failed allocation", 150000000, 9 * GiB, NULL, 0);
	/* the second name needs escaping: a quote, a backslash, UTF-8 */
	const char *names[] = { "held (bytes)", "allocated \"x\\y\" \xc3\xa9 (bytes)" };
	gmt_chrome_counters_t *cc = gmt_chrome_counters_begin(c, 1000, names, 2, 0, 199999000, 200000,
							      (size_t)atol(argv[1]));
	if (!cc)
		return 1;
	for (uint64_t i = 0; i < 200000; i++) {
		uint64_t a = i == 123457 ? 7 * GiB : (i % 1000) * 4096;
		uint64_t v[2] = { a + GiB, a };
		uint8_t k[2] = { 1, 1 };
		if (gmt_chrome_counters_add(cc, i * 1000, v, k))
			return 1;
	}
	printf("%zu\n", gmt_chrome_counters_end(cc));
	int rc = gmt_chrome_close(c);
	return fclose(f) || rc ? 1 : 0;
}
