/*
 * test_sink_hostile.c — the host and file sinks driven directly with what a
 * hostile or buggy server can put in a manifest that passes validation
 * (client/manifest.c checks sizes and order, not the bytes of names or
 * metadata), and with callback sequences that break the order the fetcher
 * promises (engine.h): each must end in an error naming the problem, with no
 * partial or corrupt output left behind.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "client/client.h"
#include "client/client_int.h"
#include "common/common.h"
#include "loader/loader.h"
#include "tests/util/testutil.h"
#include "weights/client.h"
#include "weights/engine.h"
#include "weights/weights.h"

#include "tests/util/manifest_fixture.h"

/* x's manifest, validated as the client validates what a server sent. */
static wt_manifest *build(mf *x)
{
	wt_layout l;
	wt_layout_init(&l);
	wt_manifest *m = NULL;
	wt_errbuf err;
	int rv = client_manifest_from_pb(&x->m, 1 << 20, "m", &l, &m, &err);
	if (rv != WT_OK)
		fail_msg("manifest refused: %s", err.msg);
	return m;
}

typedef struct fs_env {
	char *dir, *path, tmp[4096];
	wt_file_sink *fs;
	wt_sink *s;
} fs_env;

static void fs_open(fs_env *e)
{
	wt_errbuf err;
	e->dir = tu_mkdtemp("sinkh");
	e->path = tu_path(e->dir, "x.safetensors");
	snprintf(e->tmp, sizeof(e->tmp), "%s.tmp.%ld", e->path, (long)getpid());
	assert_int_equal(wt_file_sink_create(&e->fs, e->path, 0, &err), WT_OK);
	e->s = wt_file_sink_sink(e->fs);
}

/* Neither the file nor its temp file exists. */
static void assert_no_output(const fs_env *e)
{
	assert_int_not_equal(access(e->path, F_OK), 0);
	assert_int_not_equal(access(e->tmp, F_OK), 0);
}

static void fs_close(fs_env *e)
{
	wt_file_sink_destroy(e->fs);
	tu_rmrf(e->dir);
	free(e->path);
	free(e->dir);
}

/* A tensor name (or metadata) that is not UTF-8 cannot go into a safetensors
 * header (UTF-8 JSON): begin() refuses it naming the problem, not as "out of
 * memory", and leaves no file behind. */
static void test_file_sink_non_utf8(void **state)
{
	(void)state;
	mf x;
	mf_init(&x);
	x.te[1].name = "b.\xff\xfe";
	wt_manifest *m = build(&x);
	fs_env e;
	fs_open(&e);
	wt_errbuf err;
	int rv = e.s->ops->begin(e.s, m, &err);
	assert_int_equal(rv, WT_ECORRUPT);
	assert_non_null(strstr(err.msg, "UTF-8"));
	assert_non_null(strstr(err.msg, "tensor 1 'b.\\xff\\xfe'"));
	assert_null(strstr(err.msg, "out of memory"));
	assert_no_output(&e);
	wt_manifest_free(m);

	mf_init(&x);
	x.m.revision = "r\xc3"; /* truncated 2-byte sequence */
	m = build(&x);
	rv = e.s->ops->begin(e.s, m, &err);
	assert_int_equal(rv, WT_ECORRUPT);
	assert_non_null(strstr(err.msg, "weightd.revision"));
	assert_non_null(strstr(err.msg, "UTF-8"));
	assert_no_output(&e);
	wt_manifest_free(m);

	/* a valid multi-byte name is fine and reads back */
	mf_init(&x);
	x.te[1].name = "b.\xc3\xa9";
	m = build(&x);
	uint8_t data[64];
	tu_fill(data, sizeof(data), 3);
	assert_int_equal(e.s->ops->begin(e.s, m, &err), WT_OK);
	for (size_t i = 0; i < 2; i++) {
		assert_int_equal(e.s->ops->tensor_begin(e.s, i, &err), WT_OK);
		assert_int_equal(e.s->ops->write(e.s, i, 0, data, 64, &err), WT_OK);
		assert_int_equal(e.s->ops->tensor_end(e.s, i, &err), WT_OK);
	}
	assert_int_equal(e.s->ops->end(e.s, &err), WT_OK);
	size_t len = 0;
	char *file = tu_read_file(e.path, &len);
	assert_non_null(file);
	uint64_t hl = 0;
	assert_int_equal(st_check_prefix(file, len, &hl, &err), WT_OK);
	st_file sf;
	assert_int_equal(st_parse_header(file + 8, hl, len, &sf, &err), WT_OK);
	assert_non_null(st_find(&sf, "b.\xc3\xa9"));
	st_file_free(&sf);
	free(file);
	wt_manifest_free(m);
	fs_close(&e);
}

/* Writes that do not tile each tensor (past its end into the next one, a
 * tensor ended short, a write for another tensor than the one begun) would
 * shift bytes between tensors of a file whose header still parses: refused
 * like the host sink refuses them, and abort leaves nothing. */
static void test_file_sink_tensor_bounds(void **state)
{
	(void)state;
	mf x;
	mf_init(&x);
	wt_manifest *m = build(&x);
	uint8_t data[128];
	tu_fill(data, sizeof(data), 5);
	fs_env e;
	fs_open(&e);
	wt_errbuf err;

	/* tensor 0 is 64 bytes: 80 bytes spill into tensor 1 */
	assert_int_equal(e.s->ops->begin(e.s, m, &err), WT_OK);
	assert_int_equal(e.s->ops->tensor_begin(e.s, 0, &err), WT_OK);
	assert_int_equal(e.s->ops->write(e.s, 0, 0, data, 80, &err), WT_EINVAL);
	assert_non_null(strstr(err.msg, "a.weight"));
	e.s->ops->abort(e.s);
	assert_no_output(&e);

	/* tensor 0 ended after 40 of 64 bytes, the rest sent as tensor 1 */
	assert_int_equal(e.s->ops->begin(e.s, m, &err), WT_OK);
	assert_int_equal(e.s->ops->tensor_begin(e.s, 0, &err), WT_OK);
	assert_int_equal(e.s->ops->write(e.s, 0, 0, data, 40, &err), WT_OK);
	assert_int_equal(e.s->ops->tensor_end(e.s, 0, &err), WT_EINVAL);
	assert_non_null(strstr(err.msg, "a.weight"));
	e.s->ops->abort(e.s);
	assert_no_output(&e);

	/* out of order: an offset that does not continue the tensor */
	assert_int_equal(e.s->ops->begin(e.s, m, &err), WT_OK);
	assert_int_equal(e.s->ops->tensor_begin(e.s, 0, &err), WT_OK);
	assert_int_equal(e.s->ops->write(e.s, 0, 40, data, 24, &err), WT_EINVAL);
	e.s->ops->abort(e.s);
	assert_no_output(&e);

	/* bytes for tensor 1 while tensor 0 is open */
	assert_int_equal(e.s->ops->begin(e.s, m, &err), WT_OK);
	assert_int_equal(e.s->ops->tensor_begin(e.s, 0, &err), WT_OK);
	assert_int_equal(e.s->ops->write(e.s, 1, 0, data, 64, &err), WT_EINVAL);
	assert_int_equal(e.s->ops->tensor_begin(e.s, 2, &err), WT_EINVAL);
	e.s->ops->abort(e.s);
	assert_no_output(&e);

	/* the honest order, chunk by chunk, still works */
	assert_int_equal(e.s->ops->begin(e.s, m, &err), WT_OK);
	assert_int_equal(e.s->ops->tensor_begin(e.s, 0, &err), WT_OK);
	assert_int_equal(e.s->ops->write(e.s, 0, 0, data, 40, &err), WT_OK);
	assert_int_equal(e.s->ops->write(e.s, 0, 40, data + 40, 24, &err), WT_OK);
	assert_int_equal(e.s->ops->tensor_end(e.s, 0, &err), WT_OK);
	assert_int_equal(e.s->ops->tensor_begin(e.s, 1, &err), WT_OK);
	assert_int_equal(e.s->ops->write(e.s, 1, 0, data + 64, 64, &err), WT_OK);
	assert_int_equal(e.s->ops->tensor_end(e.s, 1, &err), WT_OK);
	assert_int_equal(e.s->ops->end(e.s, &err), WT_OK);
	size_t len = 0;
	uint8_t *file = (uint8_t *)tu_read_file(e.path, &len);
	assert_non_null(file);
	assert_true(len >= 128);
	assert_memory_equal(file + len - 128, data, 128);
	free(file);
	wt_manifest_free(m);
	fs_close(&e);
}

/* An output path that is a folder failed only at the rename in end(), after
 * the whole shard was fetched and written, with a hint about permissions and
 * space. Now begin() refuses it before any byte, naming the folder. */
static void test_file_sink_path_is_folder(void **state)
{
	(void)state;
	mf x;
	mf_init(&x);
	wt_manifest *m = build(&x);
	char *dir = tu_mkdtemp("sinkd");
	char path2[4096];
	snprintf(path2, sizeof(path2), "%s/", dir);
	const char *paths[] = {dir, path2};
	for (int k = 0; k < 2; k++) {
		wt_file_sink *fs;
		wt_errbuf err;
		assert_int_equal(wt_file_sink_create(&fs, paths[k], 0, &err), WT_OK);
		wt_sink *s = wt_file_sink_sink(fs);
		assert_int_equal(s->ops->begin(s, m, &err), WT_EINVAL);
		assert_non_null(strstr(err.msg, "is a folder"));
		assert_non_null(strstr(err.msg, "rank0.safetensors"));
		wt_file_sink_destroy(fs);
	}
	char tmp[4200];
	snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", dir, (long)getpid());
	assert_int_not_equal(access(tmp, F_OK), 0);
	snprintf(tmp, sizeof(tmp), "%s/.tmp.%ld", dir, (long)getpid());
	assert_int_not_equal(access(tmp, F_OK), 0);
	tu_rmrf(dir);
	free(dir);
	wt_manifest_free(m);
}

/* Drive sink s through a whole honest fetch of m (every tensor 64 bytes). */
static void honest(wt_sink *s, const wt_manifest *m, const uint8_t *data)
{
	wt_errbuf err;
	assert_int_equal(s->ops->begin(s, m, &err), WT_OK);
	for (size_t i = 0; i < wt_manifest_n_tensors(m); i++) {
		assert_int_equal(s->ops->tensor_begin(s, i, &err), WT_OK);
		assert_int_equal(s->ops->write(s, i, 0, data + 64 * i, 64, &err), WT_OK);
		assert_int_equal(s->ops->tensor_end(s, i, &err), WT_OK);
	}
	assert_int_equal(s->ops->end(s, &err), WT_OK);
}

/* end() before every tensor was written: the host sink published buffers that
 * were never written (malloc garbage) as the fetch's results. Now WT_EINVAL
 * naming the tensor, and the previous results stay. */
static void test_host_sink_end_incomplete(void **state)
{
	(void)state;
	mf x;
	mf_init(&x);
	wt_manifest *m = build(&x);
	uint8_t data[128], other[128];
	tu_fill(data, sizeof(data), 11);
	tu_fill(other, sizeof(other), 12);
	wt_host_sink *h;
	wt_errbuf err;
	assert_int_equal(wt_host_sink_create(&h, &err), WT_OK);
	wt_sink *s = wt_host_sink_sink(h);
	honest(s, m, data);

	/* a second fetch ends after tensor 0 only */
	assert_int_equal(s->ops->begin(s, m, &err), WT_OK);
	assert_int_equal(s->ops->tensor_begin(s, 0, &err), WT_OK);
	assert_int_equal(s->ops->write(s, 0, 0, other, 64, &err), WT_OK);
	assert_int_equal(s->ops->tensor_end(s, 0, &err), WT_OK);
	assert_int_equal(s->ops->end(s, &err), WT_EINVAL);
	assert_non_null(strstr(err.msg, "b.weight"));
	const void *d;
	uint64_t n;
	assert_int_equal(wt_host_sink_find(h, "b.weight", &d, &n), WT_OK);
	assert_int_equal(n, 64);
	assert_memory_equal(d, data + 64, 64); /* the first fetch's bytes */
	assert_int_equal(wt_host_sink_find(h, "a.weight", &d, &n), WT_OK);
	assert_memory_equal(d, data, 64);

	/* end() right after begin(): nothing published either */
	wt_host_sink_destroy(h);
	assert_int_equal(wt_host_sink_create(&h, &err), WT_OK);
	s = wt_host_sink_sink(h);
	assert_int_equal(s->ops->begin(s, m, &err), WT_OK);
	assert_int_equal(s->ops->end(s, &err), WT_EINVAL);
	assert_int_equal(wt_host_sink_n_tensors(h), 0);
	assert_int_equal(wt_host_sink_find(h, "a.weight", &d, &n), WT_ENOTFOUND);
	wt_host_sink_destroy(h);
	wt_manifest_free(m);
}

/* The update sink kept one byte counter for all tensors and did not check
 * which tensor was open: the bytes of tensor 0's tail could be written as the
 * tail of tensor 1 and tensor 1 "ended complete" with its head never written;
 * end() did not check that every tensor was done. Now each is WT_EINVAL. */
static void test_host_update_order(void **state)
{
	(void)state;
	mf x;
	mf_init(&x);
	wt_manifest *m = build(&x);
	uint8_t data[128], upd[128];
	tu_fill(data, sizeof(data), 21);
	tu_fill(upd, sizeof(upd), 22);
	wt_host_sink *h;
	wt_errbuf err;
	assert_int_equal(wt_host_sink_create(&h, &err), WT_OK);
	honest(wt_host_sink_sink(h), m, data);
	wt_sink *u = wt_host_sink_update_sink(h);

	/* 40 bytes of tensor 0, then tensor 1's bytes [40, 64) while 0 is open */
	assert_int_equal(u->ops->begin(u, m, &err), WT_OK);
	assert_int_equal(u->ops->tensor_begin(u, 0, &err), WT_OK);
	assert_int_equal(u->ops->write(u, 0, 0, upd, 40, &err), WT_OK);
	assert_int_equal(u->ops->write(u, 1, 40, upd + 104, 24, &err), WT_EINVAL);
	assert_int_equal(u->ops->tensor_end(u, 1, &err), WT_EINVAL);
	u->ops->abort(u);
	const void *d;
	uint64_t n;
	assert_int_equal(wt_host_sink_find(h, "b.weight", &d, &n), WT_OK);
	assert_memory_equal(d, data + 64, 64); /* tensor 1 untouched */

	/* tensors begun out of order */
	assert_int_equal(u->ops->begin(u, m, &err), WT_OK);
	assert_int_equal(u->ops->tensor_begin(u, 1, &err), WT_EINVAL);
	u->ops->abort(u);

	/* end() after tensor 0 of 2 */
	assert_int_equal(u->ops->begin(u, m, &err), WT_OK);
	assert_int_equal(u->ops->tensor_begin(u, 0, &err), WT_OK);
	assert_int_equal(u->ops->write(u, 0, 0, upd, 64, &err), WT_OK);
	assert_int_equal(u->ops->tensor_end(u, 0, &err), WT_OK);
	assert_int_equal(u->ops->end(u, &err), WT_EINVAL);
	assert_non_null(strstr(err.msg, "1 of 2"));

	/* an honest update still works, in place */
	assert_int_equal(wt_host_sink_find(h, "a.weight", &d, &n), WT_OK);
	honest(u, m, upd);
	const void *d2;
	assert_int_equal(wt_host_sink_find(h, "a.weight", &d2, &n), WT_OK);
	assert_ptr_equal(d, d2);
	assert_memory_equal(d2, upd, 64);
	assert_int_equal(wt_host_sink_find(h, "b.weight", &d2, &n), WT_OK);
	assert_memory_equal(d2, upd + 64, 64);
	wt_host_sink_destroy(h);
	wt_manifest_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_file_sink_non_utf8),
	    cmocka_unit_test(test_file_sink_tensor_bounds),
	    cmocka_unit_test(test_file_sink_path_is_folder),
	    cmocka_unit_test(test_host_sink_end_incomplete),
	    cmocka_unit_test(test_host_update_order),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
