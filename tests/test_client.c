/*
 * test_client.c — libweights pieces that need no server: validation of hostile
 * manifests, rendezvous hashing, option checks, versioned structs (struct_size
 * of wt_client_opts, wt_fetch_opts, wt_sink_ops) and the sinks driven directly.
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
#include "common/common.h"
#include "tests/util/testutil.h"
#include "client/client_int.h"
#include "weights/client.h"
#include "weights/engine.h"
#include "weights/weights.h"

#include "tests/util/manifest_fixture.h"

static int build(mf *x, wt_errbuf *err)
{
	wt_layout l;
	wt_layout_init(&l);
	wt_manifest *m = NULL;
	int rv = client_manifest_from_pb(&x->m, 1 << 20, "m", &l, &m, err);
	if (rv == WT_OK)
		assert_non_null(m);
	else
		assert_null(m);
	wt_manifest_free(m);
	return rv;
}

static void test_manifest_valid(void **state)
{
	(void)state;
	mf x;
	mf_init(&x);
	wt_layout l;
	wt_layout_init(&l);
	wt_manifest *m = NULL;
	wt_errbuf err;
	assert_int_equal(client_manifest_from_pb(&x.m, 1 << 20, "m", &l, &m, &err), WT_OK);
	assert_int_equal(wt_manifest_n_tensors(m), 2);
	assert_int_equal(wt_manifest_n_chunks(m), 3);
	assert_int_equal(wt_manifest_total_bytes(m), 128);
	size_t idx;
	assert_int_equal(wt_manifest_find(m, "b.weight", &idx), WT_OK);
	assert_int_equal(idx, 1);
	assert_int_equal(wt_manifest_find(m, "c", &idx), WT_ENOTFOUND);
	wt_tensor_info t;
	assert_int_equal(wt_manifest_tensor(m, 0, &t), WT_OK);
	assert_string_equal(t.name, "a.weight");
	assert_int_equal(t.n_chunks, 2);
	assert_int_equal(t.shape[1], 8);
	assert_int_equal(wt_manifest_tensor(m, 2, &t), WT_EINVAL);
	wt_manifest_free(m);
}

static void test_manifest_hostile(void **state)
{
	(void)state;
	mf x;
	wt_errbuf err;
	struct {
		const char *what;
		int code;
		const char *in_msg;
	} cases[] = {
	    {"overlap", WT_ECORRUPT, "overlaps"},
	    {"hole", WT_ECORRUPT, "hole"},
	    {"past end", WT_ECORRUPT, "past"},
	    {"short", WT_ECORRUPT, "cover"},
	    {"overflow", WT_ECORRUPT, "overflow"},
	    {"shape", WT_ECORRUPT, "make"},
	    {"shape ovf", WT_ECORRUPT, "overflow"},
	    {"order", WT_ECORRUPT, "name order"},
	    {"dup", WT_ECORRUPT, "unique"},
	    {"hash", WT_ECORRUPT, "hash of 3"},
	    {"dtype", WT_ECORRUPT, "dtype"},
	    {"total", WT_ECORRUPT, "add up"},
	    {"version", WT_EVERSION, "version"},
	    {"empty chunk", WT_ECORRUPT, "empty"},
	    {"big chunk", WT_ETOOBIG, "limit"},
	    {"no id", WT_ECORRUPT, "shard id"},
	    {"neg dim", WT_ECORRUPT, "dim"},
	    {"control", WT_ECORRUPT, "'a.w\\x1b[2Jeight' holds a control character"},
	    {"control rev", WT_ECORRUPT, "revision or layout text holds a control"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		mf_init(&x);
		switch (i) {
		case 0:
			x.cr[1].offset = 30; /* [0,40) then [30,54) */
			break;
		case 1:
			x.cr[1].offset = 41;
			x.cr[1].nbytes = 23;
			break;
		case 2:
			x.cr[1].nbytes = 40;
			break;
		case 3:
			x.cr[1].nbytes = 20;
			break;
		case 4:
			x.cr[1].nbytes = UINT64_MAX - 10;
			break;
		case 5:
			x.shape[0][1] = 9;
			break;
		case 6:
			x.shape[0][0] = INT64_MAX / 2;
			x.shape[0][1] = INT64_MAX / 2;
			break;
		case 7:
			x.te[0].name = "z.weight";
			break;
		case 8:
			x.te[1].name = "a.weight";
			break;
		case 9:
			x.cr[2].hash.len = 3;
			break;
		case 10:
			x.te[1].dtype = 99;
			break;
		case 11:
			x.m.total_bytes = 127;
			break;
		case 12:
			x.m.format_version = WT_FORMAT_VERSION + 1;
			break;
		case 13:
			x.cr[0].nbytes = 0;
			break;
		case 14:
			x.cr[2].nbytes = 64;
			x.te[1].nbytes = 64;
			x.shape[1][0] = 4;
			{ /* a chunk over the client's limit (1 MiB here) */
				static int64_t big[2] = {1024, 1024};
				x.te[1].shape = big;
				x.te[1].nbytes = 2u << 20;
				x.cr[2].nbytes = 2u << 20;
				x.m.total_bytes = 64 + (2u << 20);
			}
			break;
		case 15:
			x.m.shard_id.len = 0;
			break;
		case 16:
			x.shape[1][0] = -4;
			break;
		case 17:
			x.te[0].name = "a.w\x1b[2Jeight"; /* still before b.weight */
			break;
		case 18:
			x.m.revision = "r1\x1b]0;title\x07";
			break;
		}
		int rv = build(&x, &err);
		if (rv != cases[i].code || strstr(err.msg, cases[i].in_msg) == NULL)
			fail_msg("case '%s': got %s '%s', want %s containing '%s'", cases[i].what,
			         wt_errname(rv), rv ? err.msg : "", wt_errname(cases[i].code),
			         cases[i].in_msg);
	}
}

static void test_rendezvous(void **state)
{
	(void)state;
	const char *eps[4] = {"tcp://a:1", "tcp://b:1", "tcp://c:1", "tcp://d:1"};
	size_t count[4] = {0};
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = 1024;
	for (uint32_t r = 0; r < 1024; r++) {
		l.tp_rank = r;
		uint8_t key[16];
		client_route_key("model", &l, key);
		size_t o1[4], o2[4], o3[3];
		client_rendezvous_order(key, eps, 4, o1);
		client_rendezvous_order(key, eps, 4, o2);
		assert_memory_equal(o1, o2, sizeof(o1)); /* deterministic */
		int seen = 0;
		for (int k = 0; k < 4; k++)
			seen |= 1 << o1[k];
		assert_int_equal(seen, 15); /* a permutation */
		count[o1[0]]++;
		/* removing a node that is not the owner keeps the owner */
		size_t drop = o1[3];
		const char *rest[3];
		size_t map[3], n = 0;
		for (size_t k = 0; k < 4; k++)
			if (k != drop) {
				map[n] = k;
				rest[n++] = eps[k];
			}
		client_rendezvous_order(key, rest, 3, o3);
		assert_int_equal(map[o3[0]], o1[0]);
	}
	for (int k = 0; k < 4; k++)
		assert_true(count[k] > 180 && count[k] < 340); /* ~256 each */
}

static void test_open_options(void **state)
{
	(void)state;
	wt_client_opts o;
	wt_client *c = NULL;
	wt_errbuf err;
	wt_client_opts_init(&o);
	assert_int_equal(o.window, 8);
	assert_int_equal(wt_client_open(&c, &o, &err), WT_EINVAL);
	const char *bad[] = {"http://x:1"};
	o.endpoints = bad;
	o.n_endpoints = 1;
	assert_int_equal(wt_client_open(&c, &o, &err), WT_EINVAL);
	assert_non_null(strstr(err.msg, "http://x:1"));
	const char *good[] = {"tcp://127.0.0.1:1", "ipc:///tmp/x"};
	o.endpoints = good;
	o.n_endpoints = 2;
	o.window = 0;
	assert_int_equal(wt_client_open(&c, &o, &err), WT_EINVAL);
	o.window = 8;
	assert_int_equal(wt_client_open(&c, &o, &err), WT_OK);
	wt_client_close(c);
	wt_client_close(NULL);
	wt_manifest_free(NULL);
}

/* Where member m of T ends: the struct_size an older header declared. */
#define END(T, m) (offsetof(T, m) + sizeof(((T *)0)->m))

/* An "old" caller: only the members up to its declared struct_size exist; the
 * bytes after it are garbage the library must not read (an out-of-range window,
 * wild pointers for token and log). */
static void test_opts_struct_size(void **state)
{
	(void)state;
	const char *eps[] = {"tcp://127.0.0.1:1"};
	wt_client_opts o;
	wt_client *c = NULL;
	wt_errbuf err;
	memset(&o, 0xa5, sizeof(o));
	o.struct_size = END(wt_client_opts, n_endpoints);
	o.endpoints = eps;
	o.n_endpoints = 1;
	if (wt_client_open(&c, &o, &err) != WT_OK)
		fail_msg("old layout refused: %s", err.msg);
	assert_int_equal(c->o.struct_size, sizeof(wt_client_opts));
	assert_int_equal(c->o.window, 8);
	assert_int_equal(c->o.connections, 2);
	assert_int_equal(c->o.hash_refetch, 0);
	assert_int_equal(c->o.max_message_bytes, 256ull << 20);
	assert_null(c->o.log);
	assert_string_equal(c->o.token, "");
	assert_string_equal(c->o.client_id, "libweights/" WT_VERSION_STRING);
	wt_client_close(c);
	c = NULL;
	/* a layout that ends after window: window read, the rest defaults */
	o.struct_size = END(wt_client_opts, window);
	o.window = 4;
	assert_int_equal(wt_client_open(&c, &o, &err), WT_OK);
	assert_int_equal(c->o.window, 4);
	assert_int_equal(c->o.connections, 2);
	wt_client_close(c);
	c = NULL;
	/* refused before anything else: 0, mid-member, too small, newer than us */
	const size_t bad[] = {0, END(wt_client_opts, window) + 1, sizeof(size_t),
	                      sizeof(wt_client_opts) + 8, (size_t)0xa5a5a5a5a5a5a5a5ull};
	const char *want[] = {"wt_client_opts_init()", "not the size", "not the size", "larger",
	                      "larger"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		o.struct_size = bad[i];
		assert_int_equal(wt_client_open(&c, &o, &err), WT_EVERSION);
		assert_null(c);
		if (strstr(err.msg, want[i]) == NULL)
			fail_msg("struct_size %zu: '%s' lacks '%s'", bad[i], err.msg, want[i]);
		printf("struct_size %zu: %s\n", bad[i], err.msg);
	}
	int ma = -1, mi = -1, pa = -1;
	char v[32];
	snprintf(v, sizeof(v), "%d.%d.%d", WT_VERSION_MAJOR, WT_VERSION_MINOR, WT_VERSION_PATCH);
	assert_string_equal(wt_version(&ma, &mi, &pa), v);
	assert_string_equal(wt_version(NULL, NULL, NULL), WT_VERSION_STRING);
	assert_int_equal(ma * 10000 + mi * 100 + pa,
	                 WT_VERSION_MAJOR * 10000 + WT_VERSION_MINOR * 100 + WT_VERSION_PATCH);
}

/* A sink that counts calls and fails: the fetch must refuse before any call. */
typedef struct rec_sink {
	wt_sink base;
	int calls;
} rec_sink;
static int rs_begin(wt_sink *s, const wt_manifest *m, wt_errbuf *err)
{
	(void)m;
	((rec_sink *)s)->calls++;
	return wt_seterr(err, WT_EIO, "rec_sink: begin");
}
static int rs_tensor(wt_sink *s, size_t t, wt_errbuf *err)
{
	(void)t;
	((rec_sink *)s)->calls++;
	return wt_seterr(err, WT_EIO, "rec_sink: tensor");
}
static int rs_write(wt_sink *s, size_t t, uint64_t off, const void *d, size_t n, wt_errbuf *err)
{
	(void)t, (void)off, (void)d, (void)n;
	((rec_sink *)s)->calls++;
	return wt_seterr(err, WT_EIO, "rec_sink: write");
}
static int rs_end(wt_sink *s, wt_errbuf *err)
{
	((rec_sink *)s)->calls++;
	return wt_seterr(err, WT_EIO, "rec_sink: end");
}
static void rs_abort(wt_sink *s)
{
	((rec_sink *)s)->calls++;
}

/* wt_fetch_opts and wt_sink_ops: a bad struct_size or a NULL callback is refused
 * before the sink is called or the network is touched. */
static void test_fetch_struct_size(void **state)
{
	(void)state;
	mf x;
	mf_init(&x);
	wt_layout l;
	wt_layout_init(&l);
	wt_manifest *m = NULL;
	wt_errbuf err;
	assert_int_equal(client_manifest_from_pb(&x.m, 1 << 20, "m", &l, &m, &err), WT_OK);
	wt_client_opts o;
	wt_client_opts_init(&o);
	const char *eps[] = {"tcp://127.0.0.1:1"};
	o.endpoints = eps;
	o.n_endpoints = 1;
	wt_client *c = NULL;
	assert_int_equal(wt_client_open(&c, &o, &err), WT_OK);
	wt_sink_ops ops;
	wt_sink_ops_init(&ops);
	assert_int_equal(ops.struct_size, sizeof(wt_sink_ops));
	assert_null(ops.begin);
	ops.begin = rs_begin;
	ops.tensor_begin = rs_tensor;
	ops.write = rs_write;
	ops.tensor_end = rs_tensor;
	ops.end = rs_end;
	ops.abort = rs_abort;
	rec_sink rs = {.base = {.ops = &ops}};
	wt_fetch_opts fo;
	wt_fetch_opts_init(&fo);
	assert_int_equal(fo.struct_size, sizeof(wt_fetch_opts));
	fo.struct_size = 0;
	assert_int_equal(wt_client_fetch(c, m, &rs.base, &fo, &err), WT_EVERSION);
	assert_non_null(strstr(err.msg, "wt_fetch_opts_init()"));
	fo.struct_size = sizeof(fo) + sizeof(void *);
	assert_int_equal(wt_client_fetch(c, m, &rs.base, &fo, &err), WT_EVERSION);
	fo.struct_size = END(wt_fetch_opts, progress) - 1;
	assert_int_equal(wt_client_fetch(c, m, &rs.base, &fo, &err), WT_EVERSION);
	wt_fetch_opts_init(&fo);
	ops.struct_size = 0;
	assert_int_equal(wt_client_fetch(c, m, &rs.base, &fo, &err), WT_EVERSION);
	assert_non_null(strstr(err.msg, "wt_sink_ops_init()"));
	/* every callback of the first versioned table is required */
	ops.struct_size = END(wt_sink_ops, end);
	assert_int_equal(wt_client_fetch(c, m, &rs.base, NULL, &err), WT_EVERSION);
	ops.struct_size = sizeof(ops);
	ops.write = NULL;
	assert_int_equal(wt_client_fetch(c, m, &rs.base, NULL, &err), WT_EINVAL);
	assert_non_null(strstr(err.msg, "wt_sink_ops.write is NULL"));
	assert_int_equal(rs.calls, 0);
	/* a good table reaches the sink (whose begin fails: nothing else is called) */
	ops.write = rs_write;
	assert_int_equal(wt_client_fetch(c, m, &rs.base, &fo, &err), WT_EIO);
	assert_int_equal(rs.calls, 1);
	wt_client_close(c);
	wt_manifest_free(m);
}

/* Drive a sink by hand with a one-tensor manifest. */
static void test_sinks_direct(void **state)
{
	(void)state;
	mf x;
	mf_init(&x);
	wt_layout l;
	wt_layout_init(&l);
	wt_manifest *m = NULL;
	wt_errbuf err;
	assert_int_equal(client_manifest_from_pb(&x.m, 1 << 20, "m", &l, &m, &err), WT_OK);
	uint8_t data[64];
	tu_fill(data, sizeof(data), 7);
	wt_host_sink *h;
	assert_int_equal(wt_host_sink_create(&h, &err), WT_OK);
	wt_sink *s = wt_host_sink_sink(h);
	assert_int_equal(s->ops->begin(s, m, &err), WT_OK);
	assert_int_equal(s->ops->tensor_begin(s, 0, &err), WT_OK);
	/* out of order: refused */
	assert_int_equal(s->ops->write(s, 0, 40, data + 40, 24, &err), WT_EINVAL);
	assert_int_equal(s->ops->write(s, 0, 0, data, 40, &err), WT_OK);
	/* incomplete tensor cannot end */
	assert_int_equal(s->ops->tensor_end(s, 0, &err), WT_EINVAL);
	s->ops->abort(s);
	const void *d;
	uint64_t n;
	assert_int_equal(wt_host_sink_find(h, "a.weight", &d, &n), WT_ENOTFOUND);
	wt_host_sink_destroy(h);

	/* file sink: abort leaves neither the file nor the temp file */
	char *dir = tu_mkdtemp("sink");
	char *path = tu_path(dir, "x.safetensors");
	wt_file_sink *fs;
	assert_int_equal(wt_file_sink_create(&fs, path, 0, &err), WT_OK);
	s = wt_file_sink_sink(fs);
	assert_int_equal(s->ops->begin(s, m, &err), WT_OK);
	assert_int_equal(s->ops->tensor_begin(s, 0, &err), WT_OK);
	assert_int_equal(s->ops->write(s, 0, 0, data, 40, &err), WT_OK);
	s->ops->abort(s);
	assert_int_not_equal(access(path, F_OK), 0);
	char tmp[4096];
	snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long)getpid());
	assert_int_not_equal(access(tmp, F_OK), 0);
	/* end() before every byte arrived: error, nothing renamed */
	assert_int_equal(s->ops->begin(s, m, &err), WT_OK);
	assert_int_equal(s->ops->tensor_begin(s, 0, &err), WT_OK);
	assert_int_equal(s->ops->write(s, 0, 0, data, 64, &err), WT_OK);
	assert_int_equal(s->ops->tensor_end(s, 0, &err), WT_OK);
	assert_int_not_equal(s->ops->end(s, &err), WT_OK);
	assert_int_not_equal(access(path, F_OK), 0);
	wt_file_sink_destroy(fs);
	assert_int_equal(wt_file_sink_create(&fs, "", 0, &err), WT_EINVAL);
	tu_rmrf(dir);
	free(path);
	free(dir);
	wt_manifest_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_manifest_valid),    cmocka_unit_test(test_manifest_hostile),
	    cmocka_unit_test(test_rendezvous),        cmocka_unit_test(test_open_options),
	    cmocka_unit_test(test_sinks_direct),      cmocka_unit_test(test_opts_struct_size),
	    cmocka_unit_test(test_fetch_struct_size),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
