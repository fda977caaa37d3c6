/*
 * test_objstore.c — the http:// store backend against a local Range-capable
 * server with fault injection (tests/integration/objstore_server.py): ranges,
 * checkpoints, errors, and a bad S3 listing (the parser on hand-written
 * replies: test_s3_xml.c). Versions (ETag, Last-Modified, Date) and encoded
 * bodies: test_objstore_version.c; the server fixture: test_objstore_fx.h.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>

#include <cmocka.h>
#include <curl/curl.h>

#include "loader/loader.h"
#include "loader/s3_int.h"
#include "shardmap/shardmap.h"
#include "tests/test_objstore_util.h"
#include "tests/test_objstore_fx.h"
#include "tests/test_weightd_util.h"
#include "tests/util/testutil.h"

static void test_stat_and_ranges(void **state)
{
	fx *f = *state;
	store *s = open_mode(f, "ok/");
	wt_errbuf err = {0};
	store_obj o;
	assert_int_equal(store_stat(s, "big.bin", &o, &err), WT_OK);
	assert_int_equal(o.nbytes, BIG_BYTES);
	assert_true(strlen(o.version) > 0);
	store_obj_clear(&o);
	assert_int_equal(store_stat(s, "odd name+%.bin", &o, &err), WT_OK);
	assert_int_equal(o.nbytes, 3);
	store_obj_clear(&o);

	uint8_t *buf = malloc(BIG_BYTES);
	assert_non_null(buf);
	/* whole object: split into 4 parallel ranges */
	assert_int_equal(store_read(s, "big.bin", 0, buf, BIG_BYTES, &err), WT_OK);
	assert_memory_equal(buf, f->big, BIG_BYTES);
	uint64_t rnd = SEED;
	for (int i = 0; i < 40; i++) {
		rnd = rnd * 6364136223846793005ull + 1442695040888963407ull;
		uint64_t off = (rnd >> 20) % BIG_BYTES;
		size_t len = (size_t)((rnd >> 7) % (BIG_BYTES - off)) + 1;
		if (i % 2)
			len = len % 5000 + 1 < BIG_BYTES - off ? len % 5000 + 1 : len;
		memset(buf, 0, len);
		assert_int_equal(store_read(s, "big.bin", off, buf, len, &err), WT_OK);
		assert_memory_equal(buf, f->big + off, len);
	}
	/* past the end: short read is WT_EIO naming the key; at the end: 416 */
	assert_int_equal(store_read(s, "big.bin", BIG_BYTES - 10, buf, 20, &err), WT_EIO);
	assert_non_null(strstr(err.msg, "big.bin"));
	assert_int_equal(store_read(s, "big.bin", BIG_BYTES, buf, 1, &err), WT_EIO);
	/* past the end with a split read: the last range comes back short */
	assert_int_equal(store_read(s, "big.bin", 1000, buf, BIG_BYTES, &err), WT_EIO);
	char *all;
	size_t len;
	assert_int_equal(store_read_all(s, "odd name+%.bin", 100, &all, &len, &err), WT_OK);
	assert_int_equal(len, 3);
	assert_string_equal(all, "x y");
	free(all);
	assert_true(store_bytes_read(s) >= BIG_BYTES);
	free(buf);
	store_close(s);
}

typedef struct th_arg {
	fx *f;
	store *s;
	int idx;
	int fails;
} th_arg;

static void *reader(void *p)
{
	th_arg *a = p;
	size_t len = 300000;
	uint8_t *buf = malloc(len);
	wt_errbuf err = {0};
	for (int i = 0; buf != NULL && i < 8; i++) {
		uint64_t off =
		    ((uint64_t)a->idx * 7919u + (uint64_t)i * 104729u) % (BIG_BYTES - len);
		if (store_read(a->s, "big.bin", off, buf, len, &err) != WT_OK ||
		    memcmp(buf, a->f->big + off, len) != 0)
			a->fails++;
	}
	if (buf == NULL)
		a->fails++;
	free(buf);
	return NULL;
}

static void test_threads(void **state)
{
	fx *f = *state;
	store *s = open_mode(f, "ok");
	pthread_t th[6];
	th_arg args[6];
	for (int i = 0; i < 6; i++) {
		args[i] = (th_arg){f, s, i, 0};
		assert_int_equal(pthread_create(&th[i], NULL, reader, &args[i]), 0);
	}
	for (int i = 0; i < 6; i++) {
		pthread_join(th[i], NULL);
		assert_int_equal(args[i].fails, 0);
	}
	store_close(s);
}

static void test_checkpoint(void **state)
{
	fx *f = *state;
	char *model = tu_path(f->dir, "model");
	store *fs = NULL, *hs = open_mode(f, "ok/model");
	wt_errbuf err = {0};
	assert_int_equal(store_open(&fs, model, &err), WT_OK);
	ckpt *fc = NULL, *hc = NULL, *hc2 = NULL;
	assert_int_equal(ckpt_open(&fc, fs, &err), WT_OK);
	int rv = ckpt_open(&hc, hs, &err);
	if (rv != WT_OK)
		fprintf(stderr, "%s\n", err.msg);
	assert_int_equal(rv, WT_OK);
	assert_int_equal(ckpt_n_tensors(hc), ckpt_n_tensors(fc));
	assert_int_equal(ckpt_total_bytes(hc), ckpt_total_bytes(fc));
	for (size_t i = 0; i < ckpt_n_tensors(fc); i++) {
		const ckpt_tensor *a = ckpt_tensor_at(fc, i), *b = ckpt_tensor_at(hc, i);
		assert_string_equal(a->name, b->name);
		assert_string_equal(a->object, b->object);
		uint8_t *x = malloc(a->nbytes), *y = malloc(b->nbytes);
		assert_int_equal(ckpt_read(fc, a, 0, x, a->nbytes, &err), WT_OK);
		assert_int_equal(ckpt_read(hc, b, 0, y, b->nbytes, &err), WT_OK);
		assert_memory_equal(x, y, a->nbytes);
		free(x);
		free(y);
	}
	/* revision: the same over http as over file://, stable across opens and
	 * a touch, and changed by other bytes */
	char rev[65];
	snprintf(rev, sizeof(rev), "%s", ckpt_revision(hc));
	assert_string_equal(ckpt_revision(fc), rev);
	assert_int_equal(ckpt_open(&hc2, hs, &err), WT_OK);
	assert_string_equal(ckpt_revision(hc2), rev);
	ckpt_close(hc2);
	char shard[64];
	tu_shard_name(shard, sizeof(shard), 1, 2);
	char *sp = tu_path(model, shard);
	assert_int_equal(tu_touch(sp, 5000000000ll), 0);
	assert_int_equal(ckpt_open(&hc2, hs, &err), WT_OK);
	assert_string_equal(ckpt_revision(hc2), rev);
	ckpt_close(hc2);
	size_t slen = 0;
	char *sb = tu_read_file(sp, &slen);
	assert_non_null(sb);
	sb[slen - 1] ^= 0x21;
	assert_int_equal(tu_write_file(model, shard, sb, slen), 0);
	assert_int_equal(tu_touch(sp, -10000000000ll), 0); /* written a while ago */
	free(sb);
	assert_int_equal(ckpt_open(&hc2, hs, &err), WT_OK);
	assert_string_not_equal(ckpt_revision(hc2), rev);
	ckpt_close(hc2);

	/* the derived listing: config, index and both shards */
	store_list l;
	assert_int_equal(store_list_objects(hs, "", &l, &err), WT_OK);
	assert_int_equal(l.n, 4);
	assert_string_equal(l.objs[0].key, "config.json");
	assert_string_equal(l.objs[1].key, shard);
	assert_string_equal(l.objs[3].key, "model.safetensors.index.json");
	store_list_free(&l);
	assert_int_equal(store_list_objects(hs, "model-", &l, &err), WT_OK);
	assert_int_equal(l.n, 2);
	store_list_free(&l);
	/* a root without a model cannot be listed */
	store *root = open_mode(f, "ok");
	assert_int_equal(store_list_objects(root, "", &l, &err), WT_ENOTFOUND);
	assert_non_null(strstr(err.msg, "cannot list"));
	store_close(root);

	free(sp);
	ckpt_close(fc);
	ckpt_close(hc);
	store_close(fs);
	store_close(hs);
	free(model);
}

typedef struct digest_sink {
	common_hasher *h;
	size_t n;
} digest_sink;

static int digest_emit(void *ctx, uint32_t rank, size_t ti, const void *bytes, uint64_t n,
                       wt_errbuf *err)
{
	(void)err;
	digest_sink *d = ctx;
	uint64_t k[2] = {rank, ti};
	common_hasher_update(d->h, k, sizeof(k));
	common_hasher_update(d->h, bytes, (size_t)n);
	d->n++;
	return WT_OK;
}

/* Produce every rank of TP=4 from store s; the digest of what was emitted. */
static wt_hash128 produce_all(store *s, size_t *n_tensors, size_t *n_emitted)
{
	wt_errbuf err = {0};
	ckpt *c = NULL;
	assert_int_equal(ckpt_open(&c, s, &err), WT_OK);
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = 4;
	sm_plan *p = NULL;
	int rv = shardmap_plan(c, &l, &p, &err);
	if (rv != WT_OK)
		fprintf(stderr, "plan: %s\n", err.msg);
	assert_int_equal(rv, WT_OK);
	digest_sink d = {.h = common_hasher_new()};
	assert_int_equal(shardmap_produce(c, p, -1, digest_emit, &d, &err), WT_OK);
	wt_hash128 h = common_hasher_digest(d.h);
	common_hasher_free(d.h);
	*n_tensors = ckpt_n_tensors(c);
	*n_emitted = d.n;
	shardmap_plan_free(p);
	ckpt_close(c);
	return h;
}

/*
 * A production over http reads each source tensor in one request at most
 * (store_read_hint: no per-rank pieces on a remote store, whole groups), and
 * emits the same bytes as over file://.
 */
static void test_produce_reads(void **state)
{
	fx *f = *state;
	char *dir = tu_path(f->dir, "llama8");
	assert_int_equal(tw_write_llama8(dir, SEED), 0);
	assert_int_equal(tu_touch_dir(dir, -10000000000ll), 0); /* written a while ago */
	store *fs = NULL;
	wt_errbuf err = {0};
	assert_int_equal(store_open(&fs, dir, &err), WT_OK);
	assert_int_equal(store_read_hint(fs), 0);
	store *hs = open_mode(f, "counted/llama8");
	assert_true(store_read_hint(hs) >= (1u << 20));
	size_t nt = 0, ne = 0, nt2 = 0, ne2 = 0;
	wt_hash128 a = produce_all(fs, &nt, &ne);
	long g0 = server_count(f, "gets");
	wt_hash128 b = produce_all(hs, &nt2, &ne2);
	long gets = server_count(f, "gets") - g0;
	printf("production over http: %ld GETs (checkpoint open included) for %zu source "
	       "tensors, %zu emitted\n",
	       gets, nt2, ne2);
	assert_true(common_hash128_eq(a, b));
	assert_int_equal(ne, ne2);
	/* the open reads config, index and each shard's header: a few GETs more */
	assert_true(gets <= (long)nt2 + 8);
	store_close(fs);
	store_close(hs);
	free(dir);
}

/* One failing read on mode/key: the code, and a piece of the message. */
static void expect(fx *f, const char *mode, const char *key, int want, const char *msg)
{
	store *s = open_mode(f, mode);
	uint8_t buf[64];
	wt_errbuf err = {0};
	int rv = store_read(s, key, 5, buf, sizeof(buf), &err);
	if (rv != want || (msg && strstr(err.msg, msg) == NULL))
		fprintf(stderr, "%s/%s: %s: %s\n", mode, key, wt_errname(rv), err.msg);
	assert_int_equal(rv, want);
	if (msg != NULL)
		assert_non_null(strstr(err.msg, msg));
	assert_non_null(strstr(err.msg, key));
	store_close(s);
}

static void test_errors(void **state)
{
	fx *f = *state;
	expect(f, "ok", "missing.bin", WT_ENOTFOUND, "404");
	expect(f, "deny", "big.bin", WT_EPERM, "AccessDenied");
	expect(f, "norange", "big.bin", WT_EIO, "instead of 206");
	expect(f, "short", "big.bin", WT_EIO, "short body");
	expect(f, "badcr", "big.bin", WT_EIO, "Content-Range");
	expect(f, "long", "big.bin", WT_EIO, "more than");
	expect(f, "down", "big.bin", WT_EIO, "HTTP 500 after 4 attempts");
	/* transient 503s are retried */
	store *s = open_mode(f, "flaky");
	uint8_t buf[64];
	wt_errbuf err = {0};
	store_obj o;
	assert_int_equal(store_stat(s, "big.bin", &o, &err), WT_OK);
	assert_int_equal(o.nbytes, BIG_BYTES);
	store_obj_clear(&o);
	assert_int_equal(store_read(s, "big.bin", 5, buf, sizeof(buf), &err), WT_OK);
	assert_memory_equal(buf, f->big + 5, sizeof(buf));
	/* a split read: each of its 4 ranges fails twice and is retried alone */
	uint8_t *big = malloc(BIG_BYTES);
	assert_non_null(big);
	assert_int_equal(store_read(s, "big.bin", 0, big, BIG_BYTES, &err), WT_OK);
	assert_memory_equal(big, f->big, BIG_BYTES);
	free(big);
	/* traversal is still refused by the generic layer */
	assert_int_equal(store_read(s, "../big.bin", 0, buf, 1, &err), WT_EPERM);
	store_close(s);
	/* ETag-less server: Last-Modified is the version */
	s = open_mode(f, "noetag");
	assert_int_equal(store_stat(s, "big.bin", &o, &err), WT_OK);
	assert_non_null(strstr(o.version, "GMT"));
	store_obj_clear(&o);
	store_close(s);
	/* nobody listening */
	setenv("WEIGHTD_HTTP_RETRIES", "1", 1);
	assert_int_equal(store_open(&s, "http://127.0.0.1:1/x", &err), WT_OK);
	assert_int_equal(store_stat(s, "k", &o, &err), WT_EUNAVAIL);
	assert_non_null(strstr(err.msg, "127.0.0.1:1/x/k"));
	store_close(s);
	setenv("WEIGHTD_HTTP_RETRIES", "3", 1);
	/* bad URIs and settings */
	assert_int_equal(store_open(&s, "http://", &err), WT_EINVAL);
	assert_int_equal(store_open(&s, "http://user:pw@host/x", &err), WT_EINVAL);
	assert_null(strstr(err.msg, "pw"));
	assert_int_equal(store_open(&s, "https://host/x?y=1", &err), WT_EINVAL);
	setenv("WEIGHTD_HTTP_PARALLEL", "99", 1);
	assert_int_equal(store_open(&s, "http://host/x", &err), WT_EINVAL);
	assert_non_null(strstr(err.msg, "WEIGHTD_HTTP_PARALLEL"));
	setenv("WEIGHTD_HTTP_PARALLEL", "4", 1);
	assert_null(s);
}

/* ---- s3:// listing against misbehaving servers ---- */

static void test_s3_bad_listing(void **state)
{
	fx *f = *state;
	setenv("WEIGHTD_S3_ENDPOINT", f->base, 1);
	unsetenv("AWS_ACCESS_KEY_ID");
	unsetenv("AWS_SECRET_ACCESS_KEY");
	static const struct {
		const char *uri, *msg;
	} cases[] = {
	    {"s3://s3loop/k", "repeats its continuation token"},
	    {"s3://s3cycle/k", "repeats its continuation token (one it gave before)"},
	    {"s3://s3endless/k", "100 truncated pages in a row listed nothing"},
	    {"s3://s3outside/k", "outside the prefix"},
	    {"s3://s3garbage/k", "not a <ListBucketResult>"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		store *s = NULL;
		wt_errbuf err = {0};
		assert_int_equal(store_open(&s, cases[i].uri, &err), WT_OK);
		store_list l;
		int rv = store_list_objects(s, "", &l, &err);
		if (rv != WT_ECORRUPT || strstr(err.msg, cases[i].msg) == NULL)
			fprintf(stderr, "%s: %s: %s\n", cases[i].uri, wt_errname(rv), err.msg);
		assert_int_equal(rv, WT_ECORRUPT);
		assert_non_null(strstr(err.msg, cases[i].msg));
		assert_int_equal(l.n, 0);
		store_close(s);
	}
	unsetenv("WEIGHTD_S3_ENDPOINT");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_stat_and_ranges), cmocka_unit_test(test_threads),
	    cmocka_unit_test(test_checkpoint),      cmocka_unit_test(test_errors),
	    cmocka_unit_test(test_produce_reads),   cmocka_unit_test(test_s3_bad_listing),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
