/*
 * test_weightd_integrity.c — weightd serves exactly the checkpoint's bytes:
 *   - two model folders with the same names, sizes, mtimes and config but other
 *     tensor bytes never share a revision or a shard (cross-model poisoning);
 *   - a source written in place while a layout is produced commits no rank,
 *     and the next request produces the new revision; a file renamed over the
 *     name mid-production does not mix into the old revision;
 *   - content digests are remembered in the cache: a restart reads headers,
 *     not the checkpoint.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "cache/cache.h"
#include "common/common.h"
#include "test_weightd_util.h"
#include "weightd/server_int.h"

#define SEED 9090u

/* XXH3-128 (16 bytes) of tensor `name` of the checkpoint folder dir, read offline. */
static void file_tensor_hash(const char *dir, const char *name, uint8_t out[16])
{
	store *st;
	ckpt *ck;
	wt_errbuf err;
	assert_int_equal(store_open(&st, dir, &err), WT_OK);
	assert_int_equal(ckpt_open(&ck, st, &err), WT_OK);
	const ckpt_tensor *t = ckpt_find(ck, name);
	assert_non_null(t);
	uint8_t *b = malloc(t->nbytes);
	assert_int_equal(ckpt_read(ck, t, 0, b, t->nbytes, &err), WT_OK);
	common_hash128_to_bytes(common_hash128(b, t->nbytes), out);
	free(b);
	ckpt_close(ck);
	store_close(st);
}

static const uint8_t *manifest_hash(const Weights__Manifest *m, const char *name)
{
	for (size_t i = 0; i < m->n_tensors; i++)
		if (strcmp(m->tensors[i]->name, name) == 0)
			return m->tensors[i]->hash.data;
	fail_msg("tensor %s not in the manifest", name);
	return NULL;
}

/* Give dst/key the mtime (and atime) of src/key. */
static void copy_times(const char *src, const char *dst, const char *key)
{
	char *a = tu_path(src, key), *b = tu_path(dst, key);
	struct stat st;
	assert_int_equal(stat(a, &st), 0);
	struct timespec ts[2] = {st.st_atim, st.st_mtim};
	assert_int_equal(utimensat(AT_FDCWD, b, ts, 0), 0);
	free(a);
	free(b);
}

static void test_cross_model(void **state)
{
	(void)state;
	tw_env *e = tw_env_new("wd-xmodel", SEED);
	char *llama = tu_path(e->models, "llama");
	char *twin = tu_path(e->models, "twin");
	assert_int_equal(tw_write_llama8(twin, SEED + 1), 0); /* same names and sizes */
	copy_times(llama, twin, "config.json");
	copy_times(llama, twin, "model.safetensors");
	assert_int_equal(tw_start(e), WT_OK);
	nng_socket s = tw_dial(e->url);
	/* the twin first, so its shards are in the cache when llama asks */
	tw_reply t = tw_manifest(s, "twin", 1, 0);
	assert_int_equal(t.r->body_case, WEIGHTS__REPLY__BODY_MANIFEST);
	tw_reply l = tw_manifest(s, "llama", 1, 0);
	assert_int_equal(l.r->body_case, WEIGHTS__REPLY__BODY_MANIFEST);
	printf("revisions: llama %.12s, twin %.12s\n", l.r->manifest->revision,
	       t.r->manifest->revision);
	assert_string_not_equal(l.r->manifest->revision, t.r->manifest->revision);
	assert_memory_not_equal(l.r->manifest->shard_id.data, t.r->manifest->shard_id.data, 17);
	uint8_t want[16];
	file_tensor_hash(llama, "lm_head.weight", want);
	assert_memory_equal(manifest_hash(l.r->manifest, "lm_head.weight"), want, 16);
	file_tensor_hash(twin, "lm_head.weight", want);
	assert_memory_equal(manifest_hash(t.r->manifest, "lm_head.weight"), want, 16);
	assert_string_equal(l.r->manifest->model, "llama");
	tw_reply_free(&t);
	tw_reply_free(&l);
	nng_close(s);
	free(llama);
	free(twin);
	tw_env_free(e);
}

/* Flip one byte at the end of dir/model.safetensors in place; same size, mtime put back. */
static void write_in_place(const char *dir)
{
	char *p = tu_path(dir, "model.safetensors");
	assert_int_equal(tu_flip_last_byte(p, 0), 0);
	free(p);
}

static void layout_tp(wt_layout *l, uint32_t tp, char *text, size_t cap)
{
	wt_layout_init(l);
	l->tp_size = tp;
	assert_true(wt_layout_format(l, text, cap) < cap);
}

static bool any_rank_cached(wd_server *srv, const char *rev, const char *text, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		uint8_t id[WD_SHARD_ID_BYTES];
		wd_shard_id("llama", rev, text, i, id);
		if (cache_has_shard(srv->cache, id, sizeof(id)))
			return true;
	}
	return false;
}

static void test_source_change_in_production(void **state)
{
	(void)state;
	tw_env *e = tw_env_new("wd-chg", SEED);
	wt_errbuf err;
	assert_int_equal(wd_config_set(&e->cfg, "revalidate_ms", "3600000", "test", &err), WT_OK);
	assert_int_equal(tw_start(e), WT_OK);
	char *dir = tu_path(e->models, "llama");
	/* The snapshot production starts from; the file is written in place
	 * after it was opened, before the production reads it. */
	wd_snap *snap;
	assert_int_equal(wd_models_get(e->srv->models, "llama", false, &snap, &err), WT_OK);
	char old_rev[80];
	snprintf(old_rev, sizeof(old_rev), "%s", snap->revision);
	write_in_place(dir);
	wt_layout l;
	char text[WD_LAYOUT_TEXT_MAX];
	layout_tp(&l, 2, text, sizeof(text));
	int rv = wd_produce(e->srv, "llama", snap, &l, text, &err);
	printf("production over a changed source: %s: %s\n", wt_errname(rv), err.msg);
	assert_int_equal(rv, WT_ECHANGED);
	assert_non_null(strstr(err.msg, "model.safetensors"));
	assert_false(any_rank_cached(e->srv, old_rev, text, 2)); /* no rank committed */
	wd_snap_release(snap);
	/* a client asking now gets the new revision and the new bytes */
	nng_socket s = tw_dial(e->url);
	tw_reply a = tw_manifest(s, "llama", 1, 0);
	assert_int_equal(a.r->body_case, WEIGHTS__REPLY__BODY_MANIFEST);
	assert_string_not_equal(a.r->manifest->revision, old_rev);
	uint8_t want[16];
	file_tensor_hash(dir, "model.layers.1.mlp.down_proj.weight", want);
	assert_memory_equal(manifest_hash(a.r->manifest, "model.layers.1.mlp.down_proj.weight"),
	                    want, 16);
	tw_reply_free(&a);

	/* A new file renamed over the name mid-production: the pinned snapshot
	 * keeps reading the file it opened, so the layout is all old bytes. */
	assert_int_equal(wd_models_get(e->srv->models, "llama", false, &snap, &err), WT_OK);
	file_tensor_hash(dir, "lm_head.weight", want);
	char *tmp = tu_path(e->dir, "fresh");
	assert_int_equal(tw_write_llama8(tmp, SEED + 5), 0);
	char *from = tu_path(tmp, "model.safetensors"), *to = tu_path(dir, "model.safetensors");
	assert_int_equal(rename(from, to), 0);
	wt_layout_clear(&l);
	layout_tp(&l, 1, text, sizeof(text));
	assert_int_equal(wd_produce(e->srv, "llama", snap, &l, text, &err), WT_OK);
	uint8_t id[WD_SHARD_ID_BYTES];
	wd_shard_id("llama", snap->revision, text, 0, id);
	cache_shard *sh;
	assert_int_equal(cache_shard_open(e->srv->cache, id, sizeof(id), &sh, &err), WT_OK);
	size_t mlen;
	const void *mb = cache_shard_manifest(sh, &mlen);
	Weights__Manifest *mf = weights__manifest__unpack(NULL, mlen, mb);
	assert_non_null(mf);
	assert_string_equal(mf->revision, snap->revision);
	assert_memory_equal(manifest_hash(mf, "lm_head.weight"), want, 16);
	weights__manifest__free_unpacked(mf, NULL);
	cache_shard_close(sh);
	wd_snap_release(snap);
	wt_layout_clear(&l);
	nng_close(s);
	free(from);
	free(to);
	tu_rmrf(tmp);
	free(tmp);
	free(dir);
	tw_env_free(e);
}

static uint64_t source_bytes(nng_socket s)
{
	tw_reply k = tw_admin(s, WEIGHTS__ADMIN_REQUEST__OP__OP_STATS, NULL, 0);
	assert_int_equal(k.r->body_case, WEIGHTS__REPLY__BODY_ADMIN);
	uint64_t n = k.r->admin->source_bytes_read;
	tw_reply_free(&k);
	return n;
}

static void test_digest_memo(void **state)
{
	(void)state;
	tw_env *e = tw_env_new("wd-memo", SEED);
	assert_int_equal(tw_start(e), WT_OK);
	nng_socket s = tw_dial(e->url);
	tw_reply a = tw_manifest(s, "llama", 2, 0);
	assert_int_equal(a.r->body_case, WEIGHTS__REPLY__BODY_MANIFEST);
	uint64_t first = source_bytes(s);
	nng_close(s);
	tw_stop(e);
	assert_int_equal(tw_start(e), WT_OK);
	s = tw_dial(e->url);
	tw_reply b = tw_manifest(s, "llama", 2, 0);
	assert_int_equal(b.r->body_case, WEIGHTS__REPLY__BODY_MANIFEST);
	assert_string_equal(a.r->manifest->revision, b.r->manifest->revision);
	uint64_t again = source_bytes(s);
	tw_descs d;
	tw_llama8_descs(&d);
	uint64_t ckpt_bytes = tw_total_bytes(&d);
	printf("source bytes: first start %llu (digest + production), restart %llu; "
	       "checkpoint %llu\n",
	       (unsigned long long)first, (unsigned long long)again,
	       (unsigned long long)ckpt_bytes);
	assert_true(first >= 2 * ckpt_bytes); /* the digest read, then production */
	assert_true(again < ckpt_bytes / 20); /* config and headers only */
	tw_reply_free(&a);
	tw_reply_free(&b);
	nng_close(s);
	tw_env_free(e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_cross_model),
	    cmocka_unit_test(test_source_change_in_production),
	    cmocka_unit_test(test_digest_memo),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
