/* unit_decode_corpus: replays tests/fuzz/corpus/ through the fuzz target
 * (so every normal run, and make asan, covers it) and checks the status
 * each file's name promises: ok_*, damaged_*, refused_*; raw_* files are
 * raw records that the target wraps into a frame. */
#include <dirent.h>

#include "gmt_test.h"
#include "unit_tracer_collect.h"
#include "../fuzz/fuzz_decode.c"

int main(void)
{
	char dir[4200];
	const char *root = getenv("ROOT");
	snprintf(dir, sizeof(dir), "%s/tests/fuzz/corpus", root && *root ? root : ".");
	DIR *d = opendir(dir);
	CHECK(d != NULL);
	if (!d)
		TEST_DONE();
	int files = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		char path[4500];
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		unsigned char *data = NULL;
		size_t len = 0;
		if (file_bytes(path, &data, &len)) {
			CHECK(!"unreadable corpus file");
			continue;
		}
		files++;
		LLVMFuzzerTestOneInput(data, len);
		gmt_decode_result_t r;
		gmt_decode_buffer(data, len, de->d_name, &gmt_fuzz_visitor, &r);
		int want = -1;
		if (!strncmp(de->d_name, "ok_", 3))
			want = GMT_DECODE_OK;
		else if (!strncmp(de->d_name, "damaged_", 8))
			want = GMT_DECODE_DAMAGED;
		else if (!strncmp(de->d_name, "refused_", 8))
			want = GMT_DECODE_REFUSED;
		if (want >= 0 && (int)r.status != want) {
			fprintf(stderr, "%s: status %d, expected %d: %s\n", de->d_name, r.status, want,
				r.message);
			gmt_test_failures++;
		}
		/* the same through the file reader */
		gmt_decode_result_t rf;
		gmt_decode_file(path, &gmt_fuzz_visitor, &rf);
		CHECK_EQ_U64(r.status, rf.status);
		CHECK_EQ_U64(r.bytes_ok, rf.bytes_ok);
		CHECK_EQ_U64(r.events, rf.events);
		free(data);
	}
	closedir(d);
	CHECK(files >= 10);
	TEST_DONE();
}
