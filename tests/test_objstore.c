/*
 * test_objstore.c — the http:// store backend against a local Range-capable
 * server with fault injection (tests/integration/objstore_server.py): ranges,
 * checkpoints, errors, versions (ETag, Last-Modified, Date), and a bad S3
 * listing (the parser on hand-written replies: test_s3_xml.c).
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
#include "loader/curl_xfer.h"
#include "loader/s3_int.h"
#include "shardmap/shardmap.h"
#include "tests/test_objstore_util.h"
#include "tests/test_weightd_util.h"
#include "tests/util/testutil.h"

#define SEED      777u
#define BIG_BYTES (3u * 1024u * 1024u + 123u)

typedef struct fx {
	char *dir;
	uint8_t *big;
	os_helper srv;
	char base[128]; /* http://127.0.0.1:PORT */
} fx;

static const st_desc descs[] = {
    {"model.embed_tokens.weight", WT_BF16, 2, {128, 64}},
    {"model.layers.0.self_attn.q_proj.weight", WT_BF16, 2, {64, 64}},
    {"model.layers.0.mlp.up_proj.weight", WT_BF16, 2, {128, 64}},
    {"model.norm.weight", WT_F32, 1, {64}},
};

/* Put the mtimes of the model's files and of the folder's own (big.bin) 10 s
 * back: an http object is pinned only once the second of its last write has
 * passed (asked again WEIGHTD_HTTP_SETTLE_MS later). 0 on success. */
static int age_files(const fx *f)
{
	char *model = tu_path(f->dir, "model");
	int rc = model == NULL || tu_touch_dir(model, -10000000000ll) != 0 ||
	         tu_touch_dir(f->dir, -10000000000ll) != 0;
	free(model);
	return rc;
}

static int setup(void **state)
{
	fx *f = calloc(1, sizeof(*f));
	if (f == NULL || (f->big = malloc(BIG_BYTES)) == NULL)
		return -1;
	*state = f;
	printf("seed %u\n", SEED);
	f->dir = tu_mkdtemp("objstore");
	if (f->dir == NULL)
		return -1;
	tu_fill(f->big, BIG_BYTES, SEED);
	char *model = tu_path(f->dir, "model");
	int rc = tu_write_file(f->dir, "big.bin", f->big, BIG_BYTES);
	rc |= tu_write_file(f->dir, "odd name+%.bin", "x y", 3);
	rc |= tu_write_ckpt(model, tu_llama_config, descs, 4, 2, SEED);
	free(model);
	rc |= age_files(f);
	if (rc != 0)
		return -1;
	/* small retries and splits so the paths run fast */
	setenv("WEIGHTD_HTTP_BACKOFF_MS", "10", 1);
	setenv("WEIGHTD_HTTP_RETRIES", "3", 1);
	setenv("WEIGHTD_HTTP_SPLIT_BYTES", "1048576", 1);
	setenv("WEIGHTD_HTTP_PARALLEL", "4", 1);
	char *script = os_script("objstore_server.py");
	char *argv[] = {script, "--root", f->dir, "--stdin", NULL};
	rc = os_start(&f->srv, argv, 20000);
	free(script);
	int port = 0;
	if (rc != 0 || sscanf(f->srv.line, "PORT %d", &port) != 1) {
		fprintf(stderr, "objstore_server.py did not start (python3 on PATH?): '%s'\n",
		        f->srv.line);
		return -1;
	}
	snprintf(f->base, sizeof(f->base), "http://127.0.0.1:%d", port);
	return 0;
}

static int teardown(void **state)
{
	fx *f = *state;
	if (f == NULL)
		return 0;
	os_stop(&f->srv);
	if (f->dir != NULL)
		tu_rmrf(f->dir);
	free(f->dir);
	free(f->big);
	free(f);
	return 0;
}

static store *open_mode(const fx *f, const char *mode)
{
	char uri[256];
	snprintf(uri, sizeof(uri), "%s/%s", f->base, mode);
	store *s = NULL;
	wt_errbuf err = {0};
	int rv = store_open(&s, uri, &err);
	if (rv != WT_OK)
		fprintf(stderr, "store_open(%s): %s\n", uri, err.msg);
	assert_int_equal(rv, WT_OK);
	return s;
}

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

static size_t body_cb(char *p, size_t sz, size_t n, void *ctx)
{
	char *b = ctx;
	size_t have = strlen(b), add = sz * n;
	if (have + add < 63) {
		memcpy(b + have, p, add);
		b[have + add] = '\0';
	}
	return add;
}

/* GET (what = "gets") or HEAD ("heads") requests the server counted under
 * /counted/ so far (plain libcurl). */
static long server_count(const fx *f, const char *what)
{
	char uri[200], body[64] = "";
	snprintf(uri, sizeof(uri), "%s/_%s", f->base, what);
	CURL *h = curl_easy_init();
	assert_non_null(h);
	curl_easy_setopt(h, CURLOPT_URL, uri);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, body_cb);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, body);
	assert_int_equal(curl_easy_perform(h), CURLE_OK);
	curl_easy_cleanup(h);
	return strtol(body, NULL, 10);
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

/*
 * A server that sends neither ETag nor Last-Modified gives weightd no way to
 * tell one version of an object from the next: a ranged read cannot be
 * checked against the version whose bytes the revision digest hashed. Before,
 * such a checkpoint opened with version "" everywhere: a same-size rewrite
 * after the open was read by production under the old revision and
 * ckpt_check passed (a shard of revision R holding bytes that are not R's).
 * Now every object without a validator is refused, naming it.
 */
static void test_no_validator(void **state)
{
	fx *f = *state;
	char *model = tu_path(f->dir, "model");
	char shard[64];
	tu_shard_name(shard, sizeof(shard), 1, 2);
	store *s = open_mode(f, "novalid/model");
	wt_errbuf err = {0};
	ckpt *c = NULL;
	int rv = ckpt_open(&c, s, &err);
	if (rv == WT_OK) { /* the old behaviour: show what it leads to */
		const ckpt_tensor *t = NULL;
		for (size_t i = 0; i < ckpt_n_tensors(c) && t == NULL; i++)
			if (strcmp(ckpt_tensor_at(c, i)->object, shard) == 0)
				t = ckpt_tensor_at(c, i);
		assert_non_null(t);
		size_t slen = 0;
		char *sp = tu_path(model, shard);
		char *sb = tu_read_file(sp, &slen);
		free(sp);
		assert_non_null(sb);
		uint8_t *before = malloc(t->nbytes), *after = malloc(t->nbytes);
		assert_int_equal(ckpt_read(c, t, 0, before, t->nbytes, &err), WT_OK);
		sb[t->off] ^= 0x5a; /* same size: the upload of another version */
		assert_int_equal(tu_write_file(model, shard, sb, slen), 0);
		int rr = ckpt_read(c, t, 0, after, t->nbytes, &err);
		int rc = ckpt_check(c, &err);
		fprintf(stderr, "revision %s: read %d, check %d, bytes %s\n", ckpt_revision(c), rr,
		        rc, memcmp(before, after, t->nbytes) == 0 ? "unchanged" : "CHANGED");
		sb[t->off] ^= 0x5a;
		assert_int_equal(tu_write_file(model, shard, sb, slen), 0);
		/* bytes of another version under the revision, and nothing noticed */
		assert_true(rr != WT_OK || rc != WT_OK || memcmp(before, after, t->nbytes) == 0);
		free(before);
		free(after);
		free(sb);
		ckpt_close(c);
	}
	assert_int_equal(rv, WT_EUNSUPPORTED);
	assert_non_null(strstr(err.msg, "config.json"));
	assert_non_null(strstr(err.msg, "ETag"));
	store_close(s);
	/* the store level says the same for any object */
	store_obj o;
	s = open_mode(f, "novalid");
	assert_int_equal(store_stat(s, "big.bin", &o, &err), WT_EUNSUPPORTED);
	assert_non_null(strstr(err.msg, "big.bin"));
	store_close(s);
	free(model);
}

/*
 * Last-Modified (no ETag) counts whole seconds: a same-size rewrite in the
 * second of the last write keeps it. A HEAD answered in that second (Date =
 * Last-Modified, the /lmnow/ server) pinned a version that the next write of
 * the same second would keep: production then read the new bytes under the
 * old revision and ckpt_check passed. Now such an object is not pinned
 * (WT_ECHANGED: opened at the next check, a second later); a Last-Modified
 * older than the reply's Date cannot be kept by a later write.
 */
/* What a checkpoint c opened under a version that a same-size write in the
 * same second keeps leads to: such a write (its mtime put back) is read under
 * c's revision, and ckpt_check passes. Fails the test when it happens. */
static void same_second_write(const fx *f, ckpt *c)
{
	char *model = tu_path(f->dir, "model");
	char shard[64];
	tu_shard_name(shard, sizeof(shard), 1, 2);
	wt_errbuf err = {0};
	{
		const ckpt_tensor *t = NULL;
		for (size_t i = 0; i < ckpt_n_tensors(c) && t == NULL; i++)
			if (strcmp(ckpt_tensor_at(c, i)->object, shard) == 0)
				t = ckpt_tensor_at(c, i);
		assert_non_null(t);
		char *sp = tu_path(model, shard);
		struct stat st0;
		assert_int_equal(stat(sp, &st0), 0);
		size_t slen = 0;
		char *sb = tu_read_file(sp, &slen);
		assert_non_null(sb);
		uint8_t *before = malloc(t->nbytes), *after = malloc(t->nbytes);
		assert_int_equal(ckpt_read(c, t, 0, before, t->nbytes, &err), WT_OK);
		/* another write in the same second: same size, same Last-Modified */
		sb[t->off] ^= 0x5a;
		assert_int_equal(tu_write_file(model, shard, sb, slen), 0);
		struct timespec ts[2] = {st0.st_atim, st0.st_mtim};
		assert_int_equal(utimensat(AT_FDCWD, sp, ts, 0), 0);
		int rr = ckpt_read(c, t, 0, after, t->nbytes, &err);
		int rc = ckpt_check(c, &err);
		fprintf(stderr, "revision %s: read %d, check %d, bytes %s\n", ckpt_revision(c), rr,
		        rc, memcmp(before, after, t->nbytes) == 0 ? "unchanged" : "CHANGED");
		sb[t->off] ^= 0x5a;
		assert_int_equal(tu_write_file(model, shard, sb, slen), 0);
		assert_int_equal(utimensat(AT_FDCWD, sp, ts, 0), 0);
		assert_true(rr != WT_OK || rc != WT_OK || memcmp(before, after, t->nbytes) == 0);
		free(before);
		free(after);
		free(sb);
		free(sp);
	}
	free(model);
}

/* A checkpoint served by the /now_mode/ server (every reply answered in the
 * second of the object's last write) does not open: WT_ECHANGED naming
 * config.json and `word`; on the code before, what opening it leads to is
 * shown (same_second_write). Aged, the same objects open through
 * /settled_mode/. */
static void expect_unsettled(fx *f, const char *now_mode, const char *word,
                             const char *settled_mode)
{
	char uri[64];
	snprintf(uri, sizeof(uri), "%s/model", now_mode);
	setenv("WEIGHTD_HTTP_SETTLE_MS", "10", 1); /* it never settles: ask again soon */
	store *s = open_mode(f, uri);
	unsetenv("WEIGHTD_HTTP_SETTLE_MS");
	wt_errbuf err = {0};
	ckpt *c = NULL;
	int rv = ckpt_open(&c, s, &err);
	if (rv == WT_OK) { /* the old behaviour: show what it leads to */
		same_second_write(f, c);
		ckpt_close(c);
	}
	assert_int_equal(rv, WT_ECHANGED);
	assert_non_null(strstr(err.msg, "config.json"));
	assert_non_null(strstr(err.msg, word));
	assert_non_null(strstr(err.msg, "Last-Modified"));
	store_close(s);
	/* the same objects, answered a second or more after their last write */
	assert_int_equal(age_files(f), 0);
	snprintf(uri, sizeof(uri), "%s/model", settled_mode);
	s = open_mode(f, uri);
	assert_int_equal(ckpt_open(&c, s, &err), WT_OK);
	ckpt_close(c);
	store_close(s);
}

static void test_lastmod_second(void **state)
{
	expect_unsettled(*state, "lmnow", "Last-Modified", "noetag");
}

/*
 * An ETag may count whole seconds too: nginx's is the mtime's second and the
 * size, so a same-size rewrite in the second of the last write keeps it.
 * Before, any ETag was trusted: a HEAD answered in that second (the /etagnow/
 * server, Date = Last-Modified) pinned a version that the next write of the
 * second kept, and production read its bytes under the old revision with
 * ckpt_check passing. Now an http(s) reply is judged by its Last-Modified and
 * Date whatever its ETag (asked again once, WEIGHTD_HTTP_SETTLE_MS later,
 * then WT_ECHANGED); only S3's ETags, MD5s of the bytes, are exempt.
 */
/*
 * An object answered in the second of its last write (an upload that has just
 * ended) is asked about again once, WEIGHTD_HTTP_SETTLE_MS (1100) later,
 * rather than failing the open: written at the start of a second, the first
 * HEAD comes in that second and the second HEAD a second later.
 */
static void test_settle(void **state)
{
	fx *f = *state;
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	usleep((useconds_t)((1000000000 - ts.tv_nsec) / 1000 + 20000)); /* just past a second */
	char *big = tu_path(f->dir, "big.bin");
	struct timespec now[2] = {{.tv_nsec = UTIME_OMIT}, {.tv_nsec = UTIME_NOW}};
	assert_int_equal(utimensat(AT_FDCWD, big, now, 0), 0);
	store *s = open_mode(f, "counted");
	long h0 = server_count(f, "heads");
	store_obj o;
	wt_errbuf err = {0};
	int rv = store_stat(s, "big.bin", &o, &err);
	long heads = server_count(f, "heads") - h0;
	printf("stat in the second of the last write: %s after %ld HEADs\n", wt_errname(rv), heads);
	assert_int_equal(rv, WT_OK);
	assert_int_equal(o.nbytes, BIG_BYTES);
	assert_int_equal(heads, 2);
	store_obj_clear(&o);
	store_close(s);
	assert_int_equal(tu_touch(big, -10000000000ll), 0);
	free(big);
}

/* The same judgement on a bare HEAD reply: an S3 ETag (an MD5 of the bytes,
 * etag_is_content) is taken even in the second of the last write. */
static void test_stat_reply_etag(void **state)
{
	(void)state;
	xfer x = {.kind = X_HEAD, .status = 200, .clen = 10};
	snprintf(x.etag, sizeof(x.etag), "%s", "65f1a2b3-a");
	snprintf(x.lastmod, sizeof(x.lastmod), "%s", "Tue, 01 Dec 2026 10:00:00 GMT");
	snprintf(x.date, sizeof(x.date), "%s", "Tue, 01 Dec 2026 10:00:00 GMT");
	store_obj o = {0};
	wt_errbuf err = {0};
	assert_int_equal(curlu_stat_reply(&x, "http://h/k", "k", false, &o, &err), WT_ECHANGED);
	assert_non_null(strstr(err.msg, "65f1a2b3-a"));
	store_obj_clear(&o);
	assert_int_equal(curlu_stat_reply(&x, "http://h/k", "k", true, &o, &err), WT_OK);
	assert_string_equal(o.version, "65f1a2b3-a");
	store_obj_clear(&o);
	/* a second later, or with no Last-Modified to judge by: taken */
	snprintf(x.date, sizeof(x.date), "%s", "Tue, 01 Dec 2026 10:00:01 GMT");
	assert_int_equal(curlu_stat_reply(&x, "http://h/k", "k", false, &o, &err), WT_OK);
	store_obj_clear(&o);
	x.lastmod[0] = '\0';
	assert_int_equal(curlu_stat_reply(&x, "http://h/k", "k", false, &o, &err), WT_OK);
	store_obj_clear(&o);
}

static void test_etag_second(void **state)
{
	expect_unsettled(*state, "etagnow", "ETag", "ok");
}

/*
 * A reply whose body is encoded (Content-Encoding: gzip) does not hold the
 * object's bytes, even when its sizes and ranges are consistent (ranges of
 * the gzip'ed representation). Before, they were returned as the object's.
 */
static void test_content_encoding(void **state)
{
	fx *f = *state;
	store *s = open_mode(f, "gzip");
	wt_errbuf err = {0};
	store_obj o;
	int rv = store_stat(s, "big.bin", &o, &err);
	if (rv == WT_OK) {
		uint8_t *buf = malloc(o.nbytes);
		assert_non_null(buf);
		rv = store_read(s, "big.bin", 0, buf, (size_t)o.nbytes, &err);
		/* never bytes that are not the object's */
		assert_true(rv != WT_OK ||
		            (o.nbytes == BIG_BYTES && memcmp(buf, f->big, BIG_BYTES) == 0));
		free(buf);
		store_obj_clear(&o);
	}
	assert_int_equal(rv, WT_EIO);
	assert_non_null(strstr(err.msg, "big.bin"));
	assert_non_null(strstr(err.msg, "Content-Encoding: gzip"));
	store_close(s);
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
	    cmocka_unit_test(test_no_validator),    cmocka_unit_test(test_content_encoding),
	    cmocka_unit_test(test_lastmod_second),  cmocka_unit_test(test_etag_second),
	    cmocka_unit_test(test_stat_reply_etag), cmocka_unit_test(test_settle),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
