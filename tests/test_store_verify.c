/*
 * test_store_verify.c — reads of a pinned object checked against its block
 * digests (loader/store_verify.c, store_pin_set_blocks), and what a
 * checkpoint does with them: bytes that are not the revision's are never
 * returned, even when the store keeps the object's version over a rewrite.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "loader/loader.h"
#include "tests/test_objstore_util.h"
#include "tests/util/splitmix.h"
#include "tests/util/testutil.h"

#define SEED      4242u
#define OBJ_BYTES (3u * 1024u * 1024u + 512u * 1024u + 77u) /* 4 blocks, the last short */

typedef struct fx {
	char *dir;
	uint8_t *obj;
	store *s;
	os_helper srv; /* test_rewrite_same_version's http server */
	int port;
} fx;

static int setup(void **state)
{
	fx *f = calloc(1, sizeof(*f));
	if (f == NULL || (f->obj = malloc(OBJ_BYTES)) == NULL)
		return -1;
	*state = f;
	printf("seed %u\n", SEED);
	f->dir = tu_mkdtemp("stverify");
	tu_fill(f->obj, OBJ_BYTES, SEED);
	wt_errbuf err;
	if (f->dir == NULL || tu_write_file(f->dir, "obj.bin", f->obj, OBJ_BYTES) != 0 ||
	    store_open(&f->s, f->dir, &err) != WT_OK)
		return -1;
	return 0;
}

static int teardown(void **state)
{
	fx *f = *state;
	store_close(f->s);
	tu_rmrf(f->dir);
	free(f->dir);
	free(f->obj);
	free(f);
	return 0;
}

/* The block digests of bytes (as revision.c computes them); caller frees. */
static wt_hash128 *digests_of(const uint8_t *bytes, uint64_t n, uint32_t *bb, size_t *nb)
{
	*bb = store_block_bytes(n);
	*nb = store_block_count(n, 0, *bb);
	wt_hash128 *d = calloc(*nb ? *nb : 1, sizeof(*d));
	assert_non_null(d);
	for (size_t i = 0; i < *nb; i++) {
		uint64_t s = (uint64_t)i * *bb, e = s + *bb < n ? s + *bb : n;
		d[i] = common_hash128(bytes + s, (size_t)(e - s));
	}
	return d;
}

/* A pin of obj.bin given the block digests of `as` (its bytes, or others). */
static store_pin *pin_as(fx *f, const uint8_t *as)
{
	store_pin *p = NULL;
	wt_errbuf err;
	assert_int_equal(store_pin_open(f->s, "obj.bin", &p, &err), WT_OK);
	uint32_t bb;
	size_t nb;
	wt_hash128 *d = digests_of(as, OBJ_BYTES, &bb, &nb);
	assert_int_equal(store_pin_set_blocks(p, 0, bb, d, nb, &err), WT_OK);
	store_pin_set_digest(p, common_hash128(as, OBJ_BYTES));
	free(d);
	return p;
}

/* One random read: mostly within or across a block boundary, sometimes long. */
static void random_range(uint64_t *rng, uint64_t *off, size_t *len)
{
	uint64_t r = tu_splitmix64(rng);
	if (r % 4 == 0) { /* around a block boundary */
		uint64_t b = (r >> 8) % 4 * (1u << 20);
		uint64_t back = (r >> 16) % 4096;
		*off = b > back ? b - back : 0;
	} else {
		*off = (r >> 8) % OBJ_BYTES;
	}
	uint64_t room = OBJ_BYTES - *off,
	         want = (r >> 40) % 3 == 0 ? (r >> 20) % (3u << 20) : (r >> 20) % 9000;
	*len = (size_t)(want < room ? want : room);
}

static void test_block_sizes(void **state)
{
	(void)state;
	assert_int_equal(store_block_bytes(0), 1u << 20);
	assert_int_equal(store_block_count(0, 0, 1u << 20), 0);
	assert_int_equal(store_block_count(1, 0, 1u << 20), 1);
	assert_int_equal(store_block_count(1u << 20, 0, 1u << 20), 1);
	assert_int_equal(store_block_count((1u << 20) + 1, 0, 1u << 20), 2);
	/* at most STORE_MAX_BLOCKS blocks: 64 GiB has 65536 of 1 MiB, one more byte 2 MiB */
	assert_int_equal(store_block_bytes(64ull << 30), 1u << 20);
	assert_int_equal(store_block_bytes((64ull << 30) + 1), 2u << 20);
	assert_true(store_block_count(5ull << 40, 0, store_block_bytes(5ull << 40)) <=
	            STORE_MAX_BLOCKS);
}

/* Random reads through a pin with the right digests return the object's
 * bytes; beyond the end is WT_EIO; block digests are given once. */
static void test_block_reads(void **state)
{
	fx *f = *state;
	store_pin *p = pin_as(f, f->obj);
	uint8_t *buf = malloc(OBJ_BYTES);
	wt_errbuf err;
	uint64_t rng = SEED;
	for (int i = 0; i < 600; i++) {
		uint64_t off;
		size_t len;
		random_range(&rng, &off, &len);
		int rv = store_pin_read(p, off, buf, len, &err);
		if (rv != WT_OK)
			fprintf(stderr, "read %zu at %llu: %s\n", len, (unsigned long long)off,
			        err.msg);
		assert_int_equal(rv, WT_OK);
		assert_memory_equal(buf, f->obj + off, len);
	}
	assert_int_equal(store_pin_read(p, 0, buf, OBJ_BYTES, &err), WT_OK);
	assert_memory_equal(buf, f->obj, OBJ_BYTES);
	assert_int_equal(store_pin_read(p, OBJ_BYTES - 10, buf, 11, &err), WT_EIO);
	assert_false(store_pin_content_changed(p));
	uint32_t bb;
	size_t nb;
	wt_hash128 *d = digests_of(f->obj, OBJ_BYTES, &bb, &nb);
	assert_int_equal(store_pin_set_blocks(p, 0, bb, d, nb, &err), WT_EINVAL);
	assert_non_null(strstr(err.msg, "given already"));
	store_pin_close(p);
	/* digests that do not describe the object */
	assert_int_equal(store_pin_open(f->s, "obj.bin", &p, &err), WT_OK);
	assert_int_equal(store_pin_set_blocks(p, 0, bb, d, nb - 1, &err), WT_EINVAL);
	store_pin_close(p);
	free(d);
	free(buf);
}

/*
 * The pin's digests are of other bytes in block 2 (as when the object was
 * rewritten after its digest was taken, under the same version): a read that
 * touches block 2, whole or in part, is WT_ECHANGED naming the key and the
 * block; reads of other blocks pass.
 */
static void test_block_mismatch(void **state)
{
	fx *f = *state;
	uint8_t *other = malloc(OBJ_BYTES), *buf = malloc(OBJ_BYTES);
	memcpy(other, f->obj, OBJ_BYTES);
	other[(2u << 20) + 1000] ^= 0x20;
	store_pin *p = pin_as(f, other);
	wt_errbuf err;
	assert_int_equal(store_pin_read(p, 100, buf, (2u << 20) - 100, &err), WT_OK);
	assert_memory_equal(buf, f->obj + 100, (2u << 20) - 100);
	assert_false(store_pin_content_changed(p));
	static const struct {
		uint64_t off;
		size_t len;
	} bad[] = {
	    {(2u << 20) + 1000, 1},     /* in part */
	    {2u << 20, 1u << 20},       /* whole */
	    {(1u << 20) + 5, 2u << 20}, /* across 1, 2 and 3 */
	    {0, OBJ_BYTES},             /* everything */
	    {(3u << 20) - 1, 2},        /* the last byte of 2 */
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int rv = store_pin_read(p, bad[i].off, buf, bad[i].len, &err);
		printf("read %zu at %llu: %s\n", bad[i].len, (unsigned long long)bad[i].off,
		       err.msg);
		assert_int_equal(rv, WT_ECHANGED);
		assert_non_null(strstr(err.msg, "obj.bin"));
		assert_non_null(strstr(err.msg, "block 2 of 4"));
	}
	assert_true(store_pin_content_changed(p));
	assert_int_equal(store_pin_read(p, 3u << 20, buf, OBJ_BYTES - (3u << 20), &err), WT_OK);
	assert_memory_equal(buf, f->obj + (3u << 20), OBJ_BYTES - (3u << 20));
	store_pin_close(p);
	free(other);
	free(buf);
}

typedef struct reader {
	fx *f;
	store_pin *p;
	uint64_t seed;
	int bad;
} reader;

static void *reader_main(void *arg)
{
	reader *r = arg;
	uint8_t *buf = malloc(OBJ_BYTES);
	wt_errbuf err;
	for (int i = 0; i < 200 && buf != NULL; i++) {
		uint64_t off;
		size_t len;
		random_range(&r->seed, &off, &len);
		if (store_pin_read(r->p, off, buf, len, &err) != WT_OK ||
		    memcmp(buf, r->f->obj + off, len) != 0)
			r->bad++;
	}
	free(buf);
	return NULL;
}

/* Four threads reading one pin at once (the verified-block cache is shared). */
static void test_block_threads(void **state)
{
	fx *f = *state;
	store_pin *p = pin_as(f, f->obj);
	reader r[4];
	pthread_t th[4];
	for (int i = 0; i < 4; i++) {
		r[i] = (reader){.f = f, .p = p, .seed = SEED + 10u * (unsigned)i};
		assert_int_equal(pthread_create(&th[i], NULL, reader_main, &r[i]), 0);
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		assert_int_equal(r[i].bad, 0);
	}
	store_pin_close(p);
}

/*
 * A new upload renamed over a pinned file's name (`mv`): the pinned file is
 * unlinked, its size and mtime as they were and its ctime moved, which a
 * same-size write before the unlink also leaves. Without block digests the
 * next check reads the whole object again to tell (once per version); with
 * them every byte a read returns was checked, so the check reads nothing, and
 * reads still return the pinned bytes.
 */
static void test_renamed_over(void **state)
{
	fx *f = *state;
	store_pin *p = pin_as(f, f->obj);
	uint8_t *other = malloc(OBJ_BYTES), *buf = malloc(1u << 20);
	tu_fill(other, OBJ_BYTES, SEED + 1);
	assert_int_equal(tu_write_file(f->dir, "obj.new", other, OBJ_BYTES), 0);
	char *from = tu_path(f->dir, "obj.new"), *to = tu_path(f->dir, "obj.bin");
	assert_int_equal(rename(from, to), 0);
	wt_errbuf err;
	uint64_t r0 = store_bytes_read(f->s);
	assert_int_equal(store_pin_check(p, &err), WT_OK);
	assert_int_equal(store_pin_read(p, 5, buf, 1u << 20, &err), WT_OK);
	assert_memory_equal(buf, f->obj + 5, 1u << 20);
	uint64_t read = store_bytes_read(f->s) - r0;
	printf("check and a 1 MiB read after a rename over the pinned name: %llu bytes read "
	       "(object %u)\n",
	       (unsigned long long)read, OBJ_BYTES);
	assert_true(read < OBJ_BYTES);
	store_pin_close(p);
	assert_int_equal(tu_write_file(f->dir, "obj.bin", f->obj, OBJ_BYTES), 0);
	free(from);
	free(to);
	free(other);
	free(buf);
}

/* ---- a checkpoint over http whose server keeps the version over a rewrite ---- */

/* A memo that remembers one object (or nothing: forgetful), and counts what
 * it is told to forget. */
typedef struct mem_memo {
	pthread_mutex_t lk;
	bool have;
	char version[128];
	wt_hash128 digest, blocks[8];
	uint64_t head;
	uint32_t bb;
	size_t nb;
	bool forgetful; /* get never knows, put keeps nothing */
	int forgets;
	char key[64];        /* of the last forget */
	const char *rewrite; /* set: get() swaps the header's names in this file first */
} mem_memo;

static void swap_names(uint8_t *b, size_t hlen);

/* Swap q_proj and k_proj in the header of the safetensors file at path. */
static void rewrite_header(const char *path)
{
	size_t len = 0;
	uint8_t *bytes = (uint8_t *)tu_read_file(path, &len);
	assert_non_null(bytes);
	uint64_t hlen = 0;
	for (int i = 7; i >= 0; i--)
		hlen = hlen << 8 | bytes[i];
	swap_names(bytes + 8, (size_t)hlen);
	FILE *f = fopen(path, "r+b");
	assert_non_null(f);
	assert_int_equal(fwrite(bytes, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
	free(bytes);
}

static bool mm_get(void *ctx, const char *uri, const store_obj *o, wt_hash128 *out, uint64_t head,
                   uint32_t bb, wt_hash128 *blocks, size_t nb)
{
	(void)uri;
	mem_memo *m = ctx;
	pthread_mutex_lock(&m->lk);
	if (m->rewrite != NULL) { /* between the header's parse and the digest's read */
		rewrite_header(m->rewrite);
		m->rewrite = NULL;
		pthread_mutex_unlock(&m->lk);
		return false;
	}
	bool hit = !m->forgetful && m->have && strcmp(m->version, o->version) == 0 &&
	           m->head == head && m->bb == bb && m->nb == nb;
	if (hit) {
		*out = m->digest;
		memcpy(blocks, m->blocks, nb * sizeof(*blocks));
	}
	pthread_mutex_unlock(&m->lk);
	return hit;
}

static void mm_put(void *ctx, const char *uri, const store_obj *o, wt_hash128 d, uint64_t head,
                   uint32_t bb, const wt_hash128 *blocks, size_t nb)
{
	(void)uri;
	mem_memo *m = ctx;
	pthread_mutex_lock(&m->lk);
	assert_true(nb <= 8);
	m->have = !m->forgetful;
	snprintf(m->version, sizeof(m->version), "%s", o->version);
	m->digest = d;
	memcpy(m->blocks, blocks, nb * sizeof(*blocks));
	m->head = head;
	m->bb = bb;
	m->nb = nb;
	pthread_mutex_unlock(&m->lk);
}

static void mm_forget(void *ctx, const char *uri, const store_obj *o)
{
	(void)uri;
	mem_memo *m = ctx;
	pthread_mutex_lock(&m->lk);
	m->have = false;
	m->forgets++;
	snprintf(m->key, sizeof(m->key), "%s", o->key);
	pthread_mutex_unlock(&m->lk);
}

static const st_desc descs[] = {
    {"model.embed_tokens.weight", WT_BF16, 2, {256, 64}},
    {"model.layers.0.self_attn.q_proj.weight", WT_BF16, 2, {64, 64}},
    {"model.layers.0.mlp.up_proj.weight", WT_BF16, 2, {128, 64}},
    {"model.norm.weight", WT_F32, 1, {64}},
};

/*
 * The /sizetag/ server keeps an object's ETag and Last-Modified over a
 * same-size rewrite. Before block digests, a checkpoint opened through it
 * read the rewritten bytes under its old revision (the read passed, and so
 * did ckpt_check): shards that are not the revision's, every hash passing.
 * Now the read is WT_ECHANGED naming the object, and the memo is told to
 * forget its digest, so the next open hashes the object again.
 */
/* The http server of the test below: stopped by its teardown, also when the
 * test fails (a server left running holds the test's stdout open). */
static int srv_setup(void **state)
{
	fx *f = *state;
	char *script = os_script("objstore_server.py");
	char *argv[] = {script, "--root", f->dir, NULL};
	int rc = script == NULL ? -1 : os_start(&f->srv, argv, 20000);
	free(script);
	if (rc != 0 || sscanf(f->srv.line, "PORT %d", &f->port) != 1) {
		fprintf(stderr, "objstore_server.py did not start: '%s'\n", f->srv.line);
		return -1;
	}
	return 0;
}

static int srv_teardown(void **state)
{
	fx *f = *state;
	os_stop(&f->srv);
	return 0;
}

/* A checkpoint of the 4 tensors d in `files` files, written to f->dir/name
 * (*model, caller frees), opened through the /sizetag/ server. */
static store *sizetag_ckpt(fx *f, const char *name, const st_desc *d, size_t files, char **model)
{
	*model = tu_path(f->dir, name);
	assert_int_equal(tu_write_ckpt(*model, tu_llama_config, d, 4, files, SEED), 0);
	char uri[128];
	snprintf(uri, sizeof(uri), "http://127.0.0.1:%d/sizetag/%s", f->port, name);
	store *s = NULL;
	wt_errbuf err;
	assert_int_equal(store_open(&s, uri, &err), WT_OK);
	return s;
}

static void test_rewrite_same_version(void **state)
{
	fx *f = *state;
	char *model = NULL;
	store *s = sizetag_ckpt(f, "model", descs, 2, &model);
	wt_errbuf err;
	mem_memo m = {.lk = PTHREAD_MUTEX_INITIALIZER, .forgetful = true};
	ckpt_memo memo = {.get = mm_get, .put = mm_put, .forget = mm_forget, .ctx = &m};
	ckpt *c = NULL;
	int rv = ckpt_open_memo(&c, s, &memo, &err);
	if (rv != WT_OK)
		fprintf(stderr, "%s\n", err.msg);
	assert_int_equal(rv, WT_OK);
	const ckpt_tensor *t = ckpt_find(c, "model.layers.0.mlp.up_proj.weight");
	assert_non_null(t);
	/* the same size, one byte of the tensor flipped, the mtime kept */
	char *path = tu_path(model, t->object);
	size_t len = 0;
	uint8_t *bytes = (uint8_t *)tu_read_file(path, &len);
	assert_non_null(bytes);
	uint8_t *want = malloc(t->nbytes), *got = malloc(t->nbytes);
	memcpy(want, bytes + t->off, t->nbytes);
	bytes[t->off + 7] ^= 0x01;
	assert_int_equal(tu_write_file(model, t->object, bytes, len), 0);
	rv = ckpt_read(c, t, 0, got, t->nbytes, &err);
	printf("read after a same-size rewrite under the same ETag: %s (%s), bytes %s\n",
	       wt_errname(rv), rv == WT_OK ? "" : err.msg,
	       rv != WT_OK                         ? "not returned"
	       : memcmp(got, want, t->nbytes) == 0 ? "the revision's"
	                                           : "NOT the revision's");
	assert_int_equal(rv, WT_ECHANGED);
	assert_non_null(strstr(err.msg, t->object));
	assert_non_null(strstr(err.msg, "no longer match"));
	assert_int_equal(m.forgets, 1);
	assert_string_equal(m.key, t->object);
	/* the next open takes the digest of the bytes there now: another revision */
	char rev0[65];
	snprintf(rev0, sizeof(rev0), "%s", ckpt_revision(c));
	ckpt_close(c);
	assert_int_equal(ckpt_open_memo(&c, s, &memo, &err), WT_OK);
	assert_string_not_equal(ckpt_revision(c), rev0);
	t = ckpt_find(c, "model.layers.0.mlp.up_proj.weight");
	assert_int_equal(ckpt_read(c, t, 0, got, t->nbytes, &err), WT_OK);
	assert_memory_equal(got, bytes + t->off, t->nbytes);
	ckpt_close(c);
	store_close(s);
	free(want);
	free(got);
	free(bytes);
	free(path);
	free(model);
}

static const st_desc same_shape[] = {
    {"model.embed_tokens.weight", WT_BF16, 2, {256, 64}},
    {"model.layers.0.self_attn.k_proj.weight", WT_BF16, 2, {64, 64}},
    {"model.layers.0.self_attn.q_proj.weight", WT_BF16, 2, {64, 64}},
    {"model.norm.weight", WT_F32, 1, {64}},
};

/* Swap "q_proj" and "k_proj" in the first hlen bytes (the header). */
static void swap_names(uint8_t *b, size_t hlen)
{
	for (size_t i = 0; i + 6 <= hlen; i++) {
		if (memcmp(b + i, "q_proj", 6) == 0)
			b[i] = 'k';
		else if (memcmp(b + i, "k_proj", 6) == 0)
			b[i] = 'q';
	}
}

/*
 * Only the header is rewritten (two tensors of one shape swap names, the file
 * keeps its size), on the /sizetag/ server that keeps the version. Reopened
 * (a revalidation, a restart), the memo knows the version: before, its digest
 * and blocks were taken as they were, so the checkpoint kept the old revision
 * while reading q_proj returned the old k_proj bytes (every data block still
 * matched). Now the head block must match the header that was parsed: the
 * memo is told to forget, the object is hashed again, and the revision moves.
 */
static void test_header_rewrite(void **state)
{
	fx *f = *state;
	char *model = NULL;
	store *s = sizetag_ckpt(f, "model2", same_shape, 1, &model);
	wt_errbuf err;
	mem_memo m = {.lk = PTHREAD_MUTEX_INITIALIZER};
	ckpt_memo memo = {.get = mm_get, .put = mm_put, .forget = mm_forget, .ctx = &m};
	ckpt *c = NULL;
	assert_int_equal(ckpt_open_memo(&c, s, &memo, &err), WT_OK);
	char rev0[65];
	snprintf(rev0, sizeof(rev0), "%s", ckpt_revision(c));
	ckpt_close(c);
	assert_true(m.have);

	char *path = tu_path(model, "model.safetensors");
	rewrite_header(path);
	size_t len = 0;
	uint8_t *bytes = (uint8_t *)tu_read_file(path, &len);
	assert_non_null(bytes);

	int rv = ckpt_open_memo(&c, s, &memo, &err);
	if (rv != WT_OK)
		fprintf(stderr, "%s\n", err.msg);
	assert_int_equal(rv, WT_OK);
	const ckpt_tensor *q = ckpt_find(c, "model.layers.0.self_attn.q_proj.weight");
	uint8_t *got = malloc(q->nbytes);
	assert_int_equal(ckpt_read(c, q, 0, got, q->nbytes, &err), WT_OK);
	assert_memory_equal(got, bytes + q->off, q->nbytes);
	printf("header rewritten under the same version: revision %s (%s), memo told to forget "
	       "%d time(s)\n",
	       strcmp(ckpt_revision(c), rev0) == 0 ? "KEPT" : "moved", ckpt_revision(c), m.forgets);
	assert_string_not_equal(ckpt_revision(c), rev0);
	assert_int_equal(m.forgets, 1);
	ckpt_close(c);
	/* rewritten again after its header was parsed, before the digest read it:
	 * the parsed header is not the one hashed */
	m.have = false;
	m.rewrite = path;
	rv = ckpt_open_memo(&c, s, &memo, &err);
	printf("header rewritten during the open: %s\n", rv == WT_OK ? "opened" : err.msg);
	assert_int_equal(rv, WT_ECHANGED);
	assert_non_null(strstr(err.msg, "header changed while the model was opened"));
	store_close(s);
	free(got);
	free(bytes);
	free(path);
	free(model);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_block_sizes),
	    cmocka_unit_test(test_block_reads),
	    cmocka_unit_test(test_block_mismatch),
	    cmocka_unit_test(test_block_threads),
	    cmocka_unit_test(test_renamed_over),
	    cmocka_unit_test_setup_teardown(test_rewrite_same_version, srv_setup, srv_teardown),
	    cmocka_unit_test_setup_teardown(test_header_rewrite, srv_setup, srv_teardown),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
