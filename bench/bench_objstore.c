/*
 * bench_objstore.c — reading a 256 MiB object through the http:// store from
 * the local test server (tests/integration/objstore_server.py, sendfile), with
 * 1 range vs 4 parallel ranges per read, against reading the same file through
 * the file:// store (page cache warm) in the same run. Reads go into one
 * reused buffer; whole-object reads and 16 MiB reads; best of 3.
 * Prints GB/s and the ratio to the file:// baseline.
 *
 *   build/bench/bench_objstore        (WT_BENCH_MB: the object's MiB, a
 *                                      multiple of 16 in 16..4096, default 256)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "loader/loader.h"
#include "tests/test_objstore_util.h"

#define REPS 3

static size_t g_obj_bytes = (size_t)256 << 20; /* WT_BENCH_MB */

/* Best seconds to read the object with reads of `step` bytes. -1 on error. */
static double best_read(store *s, uint8_t *buf, size_t step)
{
	double best = 1e30;
	for (int r = 0; r < REPS; r++) {
		wt_errbuf err = {0};
		uint64_t t0 = common_now_ns();
		for (size_t off = 0; off < g_obj_bytes; off += step)
			if (store_read(s, "obj.bin", off, buf + off, step, &err) != WT_OK) {
				fprintf(stderr, "read: %s\n", err.msg);
				return -1;
			}
		double sec = (double)(common_now_ns() - t0) / 1e9;
		best = sec < best ? sec : best;
	}
	return best;
}

static store *open_uri(const char *uri)
{
	store *s = NULL;
	wt_errbuf err = {0};
	if (store_open(&s, uri, &err) != WT_OK)
		fprintf(stderr, "store_open(%s): %s\n", uri, err.msg);
	return s;
}

int main(void)
{
	const char *mb = getenv("WT_BENCH_MB");
	if (mb != NULL) {
		char *end = NULL;
		unsigned long long v = strtoull(mb, &end, 10);
		if (end == mb || *end != '\0' || v < 16 || v > 4096 || v % 16 != 0) {
			fprintf(stderr,
			        "bench_objstore: WT_BENCH_MB '%s': use a multiple of 16 "
			        "in 16..4096\n",
			        mb);
			return 2;
		}
		g_obj_bytes = (size_t)v << 20;
	}
	char dir[] = "/tmp/wt-bench-objstore-XXXXXX";
	if (mkdtemp(dir) == NULL)
		return 1;
	char path[256];
	snprintf(path, sizeof(path), "%s/obj.bin", dir);
	uint8_t *buf = malloc(g_obj_bytes);
	FILE *fp = fopen(path, "wb");
	if (buf == NULL || fp == NULL)
		return 1;
	for (size_t i = 0; i < g_obj_bytes; i++)
		buf[i] = (uint8_t)(i * 2654435761u >> 13);
	if (fwrite(buf, 1, g_obj_bytes, fp) != g_obj_bytes || fclose(fp) != 0)
		return 1;
	char *script = os_script("objstore_server.py");
	char *argv[] = {script, "--root", dir, "--stdin", NULL};
	os_helper h;
	int port = 0;
	if (os_start(&h, argv, 20000) != 0 || sscanf(h.line, "PORT %d", &port) != 1) {
		fprintf(stderr, "objstore_server.py did not start\n");
		return 1;
	}
	char url[128];
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/ok", port);

	const size_t steps[] = {g_obj_bytes, (size_t)16 << 20};
	int rc = 0;
	printf("object %zu MiB; GB/s (ratio to file://), best of %d\n", g_obj_bytes >> 20, REPS);
	for (size_t k = 0; k < 2 && rc == 0; k++) {
		size_t step = steps[k];
		store *fs = open_uri(dir);
		double base = fs ? best_read(fs, buf, step) : -1;
		store_close(fs);
		setenv("WEIGHTD_HTTP_PARALLEL", "1", 1);
		store *h1 = open_uri(url);
		double t1 = h1 ? best_read(h1, buf, step) : -1;
		store_close(h1);
		setenv("WEIGHTD_HTTP_PARALLEL", "4", 1);
		store *h4 = open_uri(url);
		double t4 = h4 ? best_read(h4, buf, step) : -1;
		store_close(h4);
		if (base <= 0 || t1 <= 0 || t4 <= 0) {
			rc = 1;
			break;
		}
		double gb = (double)g_obj_bytes / 1e9;
		printf(
		    "reads of %3zu MiB: file:// %.2f | http 1 range %.2f (%.2fx) | http 4 ranges "
		    "%.2f (%.2fx, %.2fx of 1 range)\n",
		    step >> 20, gb / base, gb / t1, base / t1, gb / t4, base / t4, t1 / t4);
	}
	os_stop(&h);
	remove(path);
	remove(dir);
	free(script);
	free(buf);
	return rc;
}
