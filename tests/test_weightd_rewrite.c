/*
 * test_weightd_rewrite.c — weightd end to end over a source rewritten under
 * the same version. tests/integration/objstore_server.py in /sizetag/ mode
 * keeps an object's ETag and Last-Modified over a same-size rewrite, so the
 * listing, the version and the remembered content digest all still name the
 * old bytes. Production reads are checked against the revision's block
 * digests (loader/store_verify.c): the read that meets the rewritten block
 * fails, the memo forgets that digest (weightd/srcmemo.c), the model is
 * opened again and the layout produced at the new revision. A layout is
 * never served with new bytes under the old revision, nor old bytes under
 * the new one, also when weightd restarts after the rewrite and opens the
 * model from its memo. weightd_source_rewrites_total counts the objects
 * found rewritten.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <fcntl.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "common/common.h"
#include "shardmap/shardmap.h"
#include "test_objstore_util.h"
#include "test_weightd_util.h"
#include "weightd/server_int.h"

#define SEED     6363u
#define OP_STATS WEIGHTS__ADMIN_REQUEST__OP__OP_STATS

typedef struct fixture {
	tw_env *e;
	os_helper srv;
	char *src; /* e->dir/src: served as http://HOST/sizetag/src, model "src" */
	nng_socket s;
} fixture;

static void fx_start(fixture *f)
{
	f->e = tw_env_new("wd-rewrite", SEED);
	f->src = tu_path(f->e->dir, "src");
	assert_int_equal(tw_write_llama8(f->src, SEED), 0);
	char *script = os_script("objstore_server.py");
	char *argv[] = {script, "--root", f->e->dir, NULL};
	int rc = os_start(&f->srv, argv, 20000);
	free(script);
	assert_int_equal(rc, 0);
	int port = 0;
	assert_int_equal(sscanf(f->srv.line, "PORT %d", &port), 1);
	char spec[128];
	snprintf(spec, sizeof(spec), "src=http://127.0.0.1:%d/sizetag/src", port);
	wt_errbuf err;
	assert_int_equal(wd_config_set(&f->e->cfg, "model", spec, "test", &err), WT_OK);
	assert_int_equal(tw_start(f->e), WT_OK);
	f->s = tw_dial(f->e->url);
}

static void fx_stop(fixture *f)
{
	nng_close(f->s);
	tw_env_free(f->e);
	os_stop(&f->srv);
	free(f->src);
}

/* Flip one byte of dir/model.safetensors at off from the end (a tensor's
 * byte): the same size, the mtime put back. */
static void rewrite(const char *dir, size_t off_from_end)
{
	char *p = tu_path(dir, "model.safetensors");
	struct stat st;
	assert_int_equal(stat(p, &st), 0);
	size_t len = 0;
	uint8_t *b = (uint8_t *)tu_read_file(p, &len);
	assert_non_null(b);
	assert_true(off_from_end < len);
	b[len - 1 - off_from_end] ^= 0x10;
	assert_int_equal(tu_write_file(dir, "model.safetensors", b, len), 0);
	struct timespec ts[2] = {st.st_atim, st.st_mtim};
	assert_int_equal(utimensat(AT_FDCWD, p, ts, 0), 0);
	free(b);
	free(p);
}

/* The revision and the tensors of (tp, rank) of the checkpoint folder dir,
 * produced offline through file://. */
typedef struct offline {
	char revision[80];
	size_t n;
	char **names;
	uint8_t **bytes;
	uint64_t *nbytes;
} offline;

static int keep_emit(void *ctx, uint32_t rank, size_t i, const void *b, uint64_t n, wt_errbuf *err)
{
	(void)rank;
	(void)err;
	offline *o = ctx;
	o->bytes[i] = malloc(n + 1);
	memcpy(o->bytes[i], b, n);
	o->nbytes[i] = n;
	return WT_OK;
}

static void offline_produce(const char *dir, uint32_t tp, uint32_t rank, offline *o)
{
	store *st;
	ckpt *ck;
	sm_plan *plan;
	wt_errbuf err;
	assert_int_equal(store_open(&st, dir, &err), WT_OK);
	assert_int_equal(ckpt_open(&ck, st, &err), WT_OK);
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = tp;
	assert_int_equal(shardmap_plan(ck, &l, &plan, &err), WT_OK);
	memset(o, 0, sizeof(*o));
	snprintf(o->revision, sizeof(o->revision), "%s", ckpt_revision(ck));
	o->n = shardmap_rank_n_tensors(plan, rank);
	o->names = calloc(o->n, sizeof(*o->names));
	o->bytes = calloc(o->n, sizeof(*o->bytes));
	o->nbytes = calloc(o->n, sizeof(*o->nbytes));
	for (size_t i = 0; i < o->n; i++)
		o->names[i] = strdup(shardmap_rank_tensor(plan, rank, i)->name);
	assert_int_equal(shardmap_produce(ck, plan, rank, keep_emit, o, &err), WT_OK);
	shardmap_plan_free(plan);
	ckpt_close(ck);
	store_close(st);
}

static void offline_free(offline *o)
{
	for (size_t i = 0; i < o->n; i++) {
		free(o->names[i]);
		free(o->bytes[i]);
	}
	free(o->names);
	free(o->bytes);
	free(o->nbytes);
}

/*
 * Fetch (tp, rank) of model src cold from weightd: its revision must be the
 * offline revision of dir now and every tensor's bytes (chunk by chunk) those
 * of the offline production; returns the revision served.
 */
static void expect_layout(fixture *f, uint32_t tp, uint32_t rank, char *rev, size_t cap)
{
	offline o;
	offline_produce(f->src, tp, rank, &o);
	tw_reply x = tw_manifest(f->s, "src", tp, rank);
	assert_int_equal(x.rv, WT_OK);
	if (x.r->body_case == WEIGHTS__REPLY__BODY_ERROR)
		printf("manifest tp=%u rank %u: %s: %s\n", tp, rank, wt_errname(tw_errcode(&x)),
		       x.r->error->message);
	assert_int_equal(x.r->body_case, WEIGHTS__REPLY__BODY_MANIFEST);
	const Weights__Manifest *m = x.r->manifest;
	printf("tp=%u rank %u: revision %.12s served, %.12s offline\n", tp, rank, m->revision,
	       o.revision);
	assert_string_equal(m->revision, o.revision);
	assert_int_equal(m->n_tensors, o.n);
	for (size_t i = 0; i < m->n_tensors; i++) {
		const Weights__TensorEntry *t = m->tensors[i];
		assert_string_equal(t->name, o.names[i]);
		assert_int_equal(t->nbytes, o.nbytes[i]);
		for (size_t c = 0; c < t->n_chunks; c++) {
			const Weights__ChunkRef *cr = t->chunks[c];
			tw_reply k = tw_chunk(f->s, m->shard_id, cr->hash, 0, 0);
			assert_int_equal(k.rv, WT_OK);
			assert_int_equal(k.r->body_case, WEIGHTS__REPLY__BODY_CHUNK);
			assert_int_equal(k.tail_len, cr->nbytes);
			assert_true(cr->offset + cr->nbytes <= t->nbytes);
			assert_memory_equal(k.tail, o.bytes[i] + cr->offset, cr->nbytes);
			tw_reply_free(&k);
		}
	}
	snprintf(rev, cap, "%s", m->revision);
	tw_reply_free(&x);
	offline_free(&o);
}

/* The revision model src is served at now (its current snapshot). */
static void served_revision(fixture *f, char *rev, size_t cap)
{
	wd_snap *snap;
	wt_errbuf err;
	assert_int_equal(wd_models_get(f->e->srv->models, "src", false, &snap, &err), WT_OK);
	snprintf(rev, cap, "%s", snap->revision);
	wd_snap_release(snap);
}

/* STATS source_rewrites (also weightd_source_rewrites_total in /metrics). */
static uint64_t rewrites_found(fixture *f)
{
	tw_reply k = tw_admin(f->s, OP_STATS, NULL, 0);
	assert_int_equal(k.rv, WT_OK);
	assert_int_equal(k.r->body_case, WEIGHTS__REPLY__BODY_ADMIN);
	uint64_t n = k.r->admin->source_rewrites;
	printf("stats: %s\n", k.r->admin->text);
	assert_non_null(strstr(k.r->admin->text, "source objects found rewritten"));
	tw_reply_free(&k);
	return n;
}

/* A restart: weightd stops (its snapshots close, and with them the verified
 * blocks store_verify.c keeps) and starts again on the same cache. */
static void restart(fixture *f)
{
	nng_close(f->s);
	tw_stop(f->e);
	assert_int_equal(tw_start(f->e), WT_OK);
	f->s = tw_dial(f->e->url);
}

static int setup(void **state)
{
	fixture *f = calloc(1, sizeof(*f));
	*state = f;
	return f == NULL ? -1 : 0;
}

/* Also when the test fails: a server left running holds the test's stdout. */
static int teardown(void **state)
{
	fixture *f = *state;
	if (f->e != NULL)
		fx_stop(f);
	free(f);
	return 0;
}

/*
 * One layout fetched; weightd restarted: it opens the model from its memo at
 * the same revision. The source rewritten under the same ETag while weightd
 * serves it; another layout fetched cold: produced at a new revision, of the
 * rewritten bytes. Then the source is rewritten again while weightd is
 * stopped; it starts, opens the model from its memo (the digest of the first
 * rewrite: the version did not change), and the first cold layout still ends
 * at the revision of the bytes there now.
 *
 * A layout produced while the model stays open keeps the verified blocks it
 * read (store_verify.c, 16 MiB); a model this small would be read from them
 * and served at its old revision (its own bytes). Each rewrite is therefore
 * read by the first production after a start.
 */
static void test_rewrite_end_to_end(void **state)
{
	fixture *f = *state;
	fx_start(f);
	char rev0[80], rev1[80], rev2[80], r[80];
	expect_layout(f, 1, 0, rev0, sizeof(rev0));
	assert_int_equal(rewrites_found(f), 0);

	restart(f);
	served_revision(f, r, sizeof(r));
	assert_string_equal(r, rev0);
	rewrite(f->src, 0); /* a byte of the last tensor */
	expect_layout(f, 2, 1, rev1, sizeof(rev1));
	assert_string_not_equal(rev1, rev0);
	expect_layout(f, 2, 0, r, sizeof(r));
	assert_string_equal(r, rev1);
	assert_true(rewrites_found(f) >= 1);

	nng_close(f->s);
	tw_stop(f->e);
	rewrite(f->src, 4096); /* another byte of the last tensor */
	assert_int_equal(tw_start(f->e), WT_OK);
	f->s = tw_dial(f->e->url);
	served_revision(f, r, sizeof(r));
	printf("after the restart: served at %.12s (the memo's)\n", r);
	assert_string_equal(r, rev1); /* opened from the memo: not read again */
	expect_layout(f, 4, 3, rev2, sizeof(rev2));
	assert_string_not_equal(rev2, rev1);
	assert_string_not_equal(rev2, rev0);
	assert_true(rewrites_found(f) >= 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_rewrite_end_to_end, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
