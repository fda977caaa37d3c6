/*
 * test_weightd_peer.c — the peer tier with in-process daemons: the `peer`
 * key and flag; ManifestRequest.cache_only on a cold node (WT_ENOTFOUND, no
 * production); a node filled from a warm peer reads no source byte and holds
 * exactly the manifest its own production would have written (also with a
 * different chunk_bytes); a peer at another revision is skipped; a peer that
 * corrupts a chunk leaves no partial shard and the node produces; two cold
 * nodes that peer each other both complete; libweights' wt_manifest_opts
 * (revision, cache_only), what the peer fill asks with.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>

#include <cmocka.h>

#include "cache/cache.h"
#include "client/client.h"
#include "common/common.h"
#include "test_weightd_util.h"
#include "weightd/server_int.h"

#define SEED_A 4242u
#define SEED_C 4343u

static Weights__AdminReply *stats(nng_socket s, tw_reply *keep)
{
	*keep = tw_admin(s, WEIGHTS__ADMIN_REQUEST__OP__OP_STATS, NULL, 0);
	assert_int_equal(keep->rv, WT_OK);
	assert_int_equal(keep->r->body_case, WEIGHTS__REPLY__BODY_ADMIN);
	return keep->r->admin;
}

static void set(tw_env *e, const char *key, const char *value)
{
	wt_errbuf err;
	int rv = wd_config_set(&e->cfg, key, value, "test", &err);
	if (rv != WT_OK)
		printf("%s\n", err.msg);
	assert_int_equal(rv, WT_OK);
}

/* Manifest of a TP=2 rank; asserts it is a Manifest. */
static tw_reply manifest2(nng_socket s, uint32_t rank)
{
	tw_reply x = tw_manifest(s, "llama", 2, rank);
	assert_int_equal(x.rv, WT_OK);
	if (x.r->body_case == WEIGHTS__REPLY__BODY_ERROR)
		printf("rank %u: %s\n", rank, x.r->error->message);
	assert_int_equal(x.r->body_case, WEIGHTS__REPLY__BODY_MANIFEST);
	return x;
}

/* A cache_only request (with an explicit revision, as peers send it). */
static tw_reply cache_only(nng_socket s, const char *revision, uint32_t rank)
{
	Weights__Layout l = WEIGHTS__LAYOUT__INIT;
	l.tp_size = 2;
	l.ep_size = 1;
	l.group_size = 128;
	l.vocab_pad = 64;
	Weights__ManifestRequest mr = WEIGHTS__MANIFEST_REQUEST__INIT;
	mr.model = "llama";
	mr.revision = (char *)revision;
	mr.layout = &l;
	mr.tp_rank = rank;
	mr.cache_only = true;
	Weights__Request rq = WEIGHTS__REQUEST__INIT;
	rq.id = 55;
	rq.body_case = WEIGHTS__REQUEST__BODY_MANIFEST;
	rq.manifest = &mr;
	return tw_call(s, &rq);
}

/* Packed bytes of two manifests are equal. */
static void assert_same_manifest(const Weights__Manifest *a, const Weights__Manifest *b)
{
	size_t na = weights__manifest__get_packed_size(a);
	size_t nb = weights__manifest__get_packed_size(b);
	assert_int_equal(na, nb);
	uint8_t *pa = malloc(na), *pb = malloc(nb);
	weights__manifest__pack(a, pa);
	weights__manifest__pack(b, pb);
	assert_memory_equal(pa, pb, na);
	free(pa);
	free(pb);
}

/* Every chunk of m, read from s, hashes to its manifest hash. */
static void assert_chunks_served(nng_socket s, const Weights__Manifest *m)
{
	size_t n = 0;
	for (size_t i = 0; i < m->n_tensors; i++) {
		for (size_t c = 0; c < m->tensors[i]->n_chunks; c++, n++) {
			const Weights__ChunkRef *cr = m->tensors[i]->chunks[c];
			tw_reply x = tw_chunk(s, m->shard_id, cr->hash, 0, 0);
			assert_int_equal(x.rv, WT_OK);
			assert_int_equal(x.r->body_case, WEIGHTS__REPLY__BODY_CHUNK);
			assert_int_equal(x.tail_len, cr->nbytes);
			uint8_t h[16];
			common_hash128_to_bytes(common_hash128(x.tail, x.tail_len), h);
			assert_memory_equal(h, cr->hash.data, 16);
			tw_reply_free(&x);
		}
	}
	assert_true(n > 0);
}

static void test_config(void **state)
{
	(void)state;
	wd_config c;
	assert_int_equal(wd_config_init(&c), WT_OK);
	assert_int_equal(c.peer.n, 0); /* default: no peer */
	char *argv[] = {"weightd", "--peer", "tcp://10.0.0.2:7450", "--peer=ipc:///run/wd.ipc"};
	wt_errbuf err;
	assert_int_equal(wd_config_parse_args(&c, 4, argv, &err), WT_OK);
	assert_int_equal(c.peer.n, 2);
	assert_string_equal(c.peer.v[0], "tcp://10.0.0.2:7450");
	assert_string_equal(c.peer.v[1], "ipc:///run/wd.ipc");
	char *bad[] = {"weightd", "--peer", "http://10.0.0.2:7450"};
	assert_int_equal(wd_config_parse_args(&c, 3, bad, &err), WT_ECONFIG);
	printf("%s\n", err.msg);
	assert_non_null(strstr(err.msg, "--peer"));
	assert_non_null(strstr(err.msg, "is not an nng URL"));
	wd_config_free(&c);
	/* the file key */
	char *dir = tu_mkdtemp("wd-peer-conf");
	char *path = tu_path(dir, "w.conf");
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs("[weightd]\npeer = tcp://a:1\npeer = tcp://b:2\n", f);
	fclose(f);
	assert_int_equal(wd_config_init(&c), WT_OK);
	assert_int_equal(wd_config_load_file(&c, path, &err), WT_OK);
	assert_int_equal(c.peer.n, 2);
	assert_string_equal(c.peer.v[1], "tcp://b:2");
	wd_config_free(&c);
	tu_rmrf(dir);
	free(path);
	free(dir);
}

/* cache_only on a cold node: WT_ENOTFOUND, no production; once warm: served. */
static void test_cache_only(void **state)
{
	(void)state;
	tw_env *a = tw_env_new("wd-peer-co", SEED_A);
	assert_int_equal(tw_start(a), WT_OK);
	nng_socket s = tw_dial(a->url);
	tw_reply x = cache_only(s, "", 1);
	assert_int_equal(tw_errcode(&x), WT_ENOTFOUND);
	printf("%s\n", x.r->error->message);
	assert_non_null(strstr(x.r->error->message, "not cached on this node"));
	tw_reply_free(&x);
	tw_reply k;
	Weights__AdminReply *st = stats(s, &k);
	assert_int_equal(st->productions, 0);
	assert_int_equal(st->shards, 0);
	tw_reply_free(&k);
	tw_reply m = manifest2(s, 1);
	x = cache_only(s, m.r->manifest->revision, 1);
	assert_int_equal(x.r->body_case, WEIGHTS__REPLY__BODY_MANIFEST);
	assert_same_manifest(x.r->manifest, m.r->manifest);
	tw_reply_free(&x);
	/* another revision: not served */
	x = cache_only(s, "00112233445566778899", 1);
	assert_int_equal(tw_errcode(&x), WT_ENOTFOUND);
	tw_reply_free(&x);
	st = stats(s, &k);
	assert_int_equal(st->productions, 1);
	tw_reply_free(&k);
	tw_reply_free(&m);
	nng_close(s);
	tw_env_free(a);
}

/* libweights' manifest options (what peer.c asks with): cache_only on a cold node
 * is WT_ENOTFOUND without a production; pinned to the served revision it is the
 * cached shard, pinned to another WT_ENOTFOUND; a struct_size that ends before
 * cache_only (a 1.1 caller's older layout) leaves it at its default (produce);
 * struct_size 0 is WT_EVERSION; client_get_manifest_pb hands back the record. */
static void test_client_manifest_opts(void **state)
{
	(void)state;
	tw_env *a = tw_env_new("wd-peer-mo", SEED_A);
	assert_int_equal(tw_start(a), WT_OK);
	const char *eps[] = {a->url};
	wt_client_opts o;
	wt_client_opts_init(&o);
	o.endpoints = eps;
	o.n_endpoints = 1;
	wt_client *c = NULL;
	wt_errbuf err;
	assert_int_equal(wt_client_open(&c, &o, &err), WT_OK);
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = 2;
	l.tp_rank = 1;
	wt_manifest_opts mo;
	wt_manifest_opts_init(&mo);
	mo.cache_only = 1;
	wt_manifest *m = NULL;
	assert_int_equal(wt_client_get_manifest_opts(c, "llama", &l, &mo, &m, &err), WT_ENOTFOUND);
	assert_null(m);
	assert_non_null(strstr(err.msg, "not cached on this node"));
	nng_socket s = tw_dial(a->url);
	tw_reply k;
	assert_int_equal(stats(s, &k)->productions, 0);
	tw_reply_free(&k);
	/* an older struct_size: cache_only is past it, so the default (produce) */
	mo.struct_size = offsetof(wt_manifest_opts, cache_only);
	assert_int_equal(wt_client_get_manifest_opts(c, "llama", &l, &mo, &m, &err), WT_OK);
	assert_int_equal(stats(s, &k)->productions, 1);
	tw_reply_free(&k);
	char rev[80];
	snprintf(rev, sizeof(rev), "%s", wt_manifest_revision(m));
	wt_manifest_free(m);
	/* pinned to the served revision, cache only: the cached shard and its record */
	wt_manifest_opts_init(&mo);
	mo.cache_only = 1;
	mo.revision = rev;
	Weights__Reply *r = NULL;
	assert_int_equal(client_get_manifest_pb(c, "llama", &l, &mo, &m, &r, &err), WT_OK);
	assert_string_equal(wt_manifest_revision(m), rev);
	assert_int_equal(wt_manifest_tp_rank(m), 1);
	assert_int_equal(r->manifest->n_tensors, wt_manifest_n_tensors(m));
	assert_string_equal(r->manifest->revision, rev);
	wire_reply_free(r);
	wt_manifest_free(m);
	/* another revision: not served, whatever cache_only says */
	mo.revision = "00112233445566778899aabbccddeeff";
	mo.cache_only = 0;
	assert_int_equal(wt_client_get_manifest_opts(c, "llama", &l, &mo, &m, &err), WT_ENOTFOUND);
	assert_non_null(strstr(err.msg, "is not served"));
	mo.struct_size = 0;
	assert_int_equal(wt_client_get_manifest_opts(c, "llama", &l, &mo, &m, &err), WT_EVERSION);
	/* NULL options = wt_client_get_manifest */
	assert_int_equal(wt_client_get_manifest_opts(c, "llama", &l, NULL, &m, &err), WT_OK);
	wt_manifest_free(m);
	assert_int_equal(stats(s, &k)->productions, 1);
	tw_reply_free(&k);
	nng_close(s);
	wt_layout_clear(&l);
	wt_client_close(c);
	tw_env_free(a);
}

/*
 * B (A's models folder, chunk_bytes cs, A's 16K chunks re-cut) peers warm A:
 * B's manifests come from A without a source read and equal byte for byte
 * what D (same folder, cs, no peer) produces itself; every chunk is served.
 */
static void fill_case(tw_env *a, const Weights__Manifest *wa0, const Weights__Manifest *wa1,
                      const char *cs)
{
	printf("-- chunk_bytes %s (A: 16K)\n", cs);
	tw_env *b = tw_env_new("wd-peer-b", SEED_A);
	set(b, "models_dir", a->models);
	set(b, "chunk_bytes", cs);
	set(b, "peer", "tcp://127.0.0.1:1"); /* down: skipped */
	set(b, "peer", a->url);
	assert_int_equal(tw_start(b), WT_OK);
	nng_socket sb = tw_dial(b->url);
	tw_reply k0;
	uint64_t read0 = stats(sb, &k0)->source_bytes_read;
	tw_reply mb1 = manifest2(sb, 1);
	tw_reply mb0 = manifest2(sb, 0);
	tw_reply k1;
	Weights__AdminReply *st = stats(sb, &k1);
	printf("B: %s\n", st->text);
	assert_int_equal(st->productions, 0);
	assert_int_equal(st->peer_fills, 1);
	assert_int_equal(st->shards, 2);
	assert_true(st->peer_bytes >= wa0->total_bytes + wa1->total_bytes);
	assert_int_equal(st->source_bytes_read, read0);
	assert_string_equal(mb0.r->manifest->revision, wa0->revision);
	assert_memory_equal(mb0.r->manifest->shard_id.data, wa0->shard_id.data, 17);
	assert_chunks_served(sb, mb0.r->manifest);
	assert_chunks_served(sb, mb1.r->manifest);

	tw_env *d = tw_env_new("wd-peer-d", SEED_A);
	set(d, "models_dir", a->models);
	set(d, "chunk_bytes", cs);
	assert_int_equal(tw_start(d), WT_OK);
	nng_socket sd = tw_dial(d->url);
	tw_reply md0 = manifest2(sd, 0), md1 = manifest2(sd, 1);
	assert_same_manifest(mb0.r->manifest, md0.r->manifest);
	assert_same_manifest(mb1.r->manifest, md1.r->manifest);
	/* re-cut: B lists other chunks than A */
	assert_int_not_equal(wa0->tensors[0]->n_chunks, mb0.r->manifest->tensors[0]->n_chunks);

	tw_reply *all[] = {&k0, &mb1, &mb0, &k1, &md0, &md1};
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		tw_reply_free(all[i]);
	nng_close(sb);
	nng_close(sd);
	tw_env_free(d);
	tw_env_free(b);
}

/* Fills with smaller (whole peer chunks cut) and larger, unaligned (peer chunks
 * assembled) local chunks; C (another checkpoint, so another revision)
 * peering A produces. */
static void test_fill(void **state)
{
	(void)state;
	tw_env *a = tw_env_new("wd-peer-a", SEED_A);
	assert_int_equal(tw_start(a), WT_OK);
	nng_socket sa = tw_dial(a->url);
	tw_reply wa0 = manifest2(sa, 0), wa1 = manifest2(sa, 1);
	fill_case(a, wa0.r->manifest, wa1.r->manifest, "8K");
	fill_case(a, wa0.r->manifest, wa1.r->manifest, "40K");

	tw_env *c = tw_env_new("wd-peer-c", SEED_C);
	set(c, "peer", a->url);
	assert_int_equal(tw_start(c), WT_OK);
	nng_socket sc = tw_dial(c->url);
	tw_reply mc = manifest2(sc, 0);
	assert_string_not_equal(mc.r->manifest->revision, wa0.r->manifest->revision);
	tw_reply k2;
	Weights__AdminReply *st = stats(sc, &k2);
	assert_int_equal(st->productions, 1);
	assert_int_equal(st->peer_fills, 0);

	tw_reply *all[] = {&wa0, &wa1, &mc, &k2};
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		tw_reply_free(all[i]);
	nng_close(sa);
	nng_close(sc);
	tw_env_free(c);
	tw_env_free(a);
}

/* A corrupts a chunk reply: B's fill fails its hash, leaves no writer or
 * partial shard, and B produces; its manifest equals A's. */
static void test_fill_bad_peer(void **state)
{
	(void)state;
	tw_env *a = tw_env_new("wd-peer-bad", SEED_A);
	a->faults.corrupt_chunk = 3;
	assert_int_equal(tw_start(a), WT_OK);
	nng_socket sa = tw_dial(a->url);
	tw_reply wa = manifest2(sa, 1);
	tw_env *b = tw_env_new("wd-peer-b2", SEED_A);
	set(b, "models_dir", a->models);
	set(b, "peer", a->url);
	assert_int_equal(tw_start(b), WT_OK);
	nng_socket sb = tw_dial(b->url);
	tw_reply mb = manifest2(sb, 1);
	assert_same_manifest(mb.r->manifest, wa.r->manifest);
	tw_reply k;
	Weights__AdminReply *st = stats(sb, &k);
	printf("B: %s\n", st->text);
	assert_int_equal(st->productions, 1);
	assert_int_equal(st->peer_fills, 0);
	assert_int_equal(st->shards, 2);
	cache_stats cs;
	cache_stats_get(b->srv->cache, &cs);
	assert_int_equal(cs.writers, 0);
	tw_reply_free(&k);
	tw_reply_free(&mb);
	tw_reply_free(&wa);
	nng_close(sa);
	nng_close(sb);
	tw_env_free(b);
	tw_env_free(a);
}

/* Two warm peers: B fills from the first in rendezvous order of (model,
 * layout without rank) — the other serves no chunk. */
static void test_rendezvous(void **state)
{
	(void)state;
	tw_env *p[2] = {NULL, NULL};
	const char *urls[2];
	for (int i = 0; i < 2; i++) {
		p[i] = tw_env_new(i ? "wd-peer-r1" : "wd-peer-r0", SEED_A);
		if (i)
			set(p[i], "models_dir", p[0]->models);
		assert_int_equal(tw_start(p[i]), WT_OK);
		urls[i] = p[i]->url;
		nng_socket s = tw_dial(urls[i]);
		tw_reply m = manifest2(s, 0);
		tw_reply_free(&m);
		nng_close(s);
	}
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = 2;
	uint8_t key[16];
	client_route_key("llama", &l, key);
	size_t order[2];
	client_rendezvous_order(key, urls, 2, order);
	printf("rendezvous order: %s, %s\n", urls[order[0]], urls[order[1]]);
	tw_env *b = tw_env_new("wd-peer-rb", SEED_A);
	set(b, "models_dir", p[0]->models);
	set(b, "peer", urls[order[1]]); /* list order would pick the wrong one */
	set(b, "peer", urls[order[0]]);
	assert_int_equal(tw_start(b), WT_OK);
	nng_socket sb = tw_dial(b->url);
	tw_reply m = manifest2(sb, 1);
	tw_reply_free(&m);
	uint64_t replies[2];
	for (int i = 0; i < 2; i++) {
		nng_socket s = tw_dial(urls[i]);
		tw_reply k;
		replies[i] = stats(s, &k)->chunk_replies;
		tw_reply_free(&k);
		nng_close(s);
	}
	printf("chunk replies: %s %llu, %s %llu\n", urls[0], (unsigned long long)replies[0],
	       urls[1], (unsigned long long)replies[1]);
	assert_true(replies[order[0]] > 0);
	assert_int_equal(replies[order[1]], 0);
	tw_reply k;
	assert_int_equal(stats(sb, &k)->peer_fills, 1);
	tw_reply_free(&k);
	nng_close(sb);
	tw_env_free(b);
	tw_env_free(p[1]);
	tw_env_free(p[0]);
}

/* workers = 1: no spare worker to answer peers, so peers are not asked. */
static void test_one_worker(void **state)
{
	(void)state;
	tw_env *a = tw_env_new("wd-peer-1a", SEED_A);
	assert_int_equal(tw_start(a), WT_OK);
	nng_socket sa = tw_dial(a->url);
	tw_reply m = manifest2(sa, 0);
	tw_reply_free(&m);
	tw_env *b = tw_env_new("wd-peer-1b", SEED_A);
	set(b, "models_dir", a->models);
	set(b, "peer", a->url);
	set(b, "workers", "1");
	assert_int_equal(tw_start(b), WT_OK);
	nng_socket sb = tw_dial(b->url);
	m = manifest2(sb, 0);
	tw_reply_free(&m);
	tw_reply k;
	Weights__AdminReply *st = stats(sb, &k);
	assert_int_equal(st->productions, 1);
	assert_int_equal(st->peer_fills, 0);
	tw_reply_free(&k);
	nng_close(sa);
	nng_close(sb);
	tw_env_free(b);
	tw_env_free(a);
}

typedef struct ask_arg {
	const char *url;
	pthread_barrier_t *bar;
	tw_reply x;
} ask_arg;

static void *ask_main(void *p)
{
	ask_arg *g = p;
	nng_socket s = tw_dial(g->url);
	pthread_barrier_wait(g->bar);
	g->x = tw_manifest(s, "llama", 2, 1);
	nng_close(s);
	return NULL;
}

/* Two cold nodes that peer each other, same layout asked on both at once:
 * both answer (no deadlock, no loop) with the same manifest. */
static void test_mutual(void **state)
{
	(void)state;
	tw_env *a = tw_env_new("wd-peer-m1", SEED_A);
	tw_env *b = tw_env_new("wd-peer-m2", SEED_A);
	char *ua = tu_path(a->dir, "a.ipc"), *ub = tu_path(b->dir, "b.ipc");
	char url_a[600], url_b[600];
	snprintf(url_a, sizeof(url_a), "ipc://%s", ua);
	snprintf(url_b, sizeof(url_b), "ipc://%s", ub);
	set(a, "listen", url_a);
	set(a, "peer", url_b);
	set(a, "peer", url_a); /* its own URL: skipped */
	set(b, "models_dir", a->models);
	set(b, "listen", url_b);
	set(b, "peer", url_a);
	set(a, "workers", "2");
	set(b, "workers", "2");
	assert_int_equal(tw_start(a), WT_OK);
	assert_int_equal(tw_start(b), WT_OK);
	pthread_barrier_t bar;
	pthread_barrier_init(&bar, NULL, 2);
	ask_arg g[2] = {{.url = url_a, .bar = &bar}, {.url = url_b, .bar = &bar}};
	pthread_t th[2];
	for (int i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&th[i], NULL, ask_main, &g[i]), 0);
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	pthread_barrier_destroy(&bar);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(g[i].x.rv, WT_OK);
		assert_int_equal(g[i].x.r->body_case, WEIGHTS__REPLY__BODY_MANIFEST);
	}
	assert_same_manifest(g[0].x.r->manifest, g[1].x.r->manifest);
	uint64_t prod = 0, fills = 0;
	const char *urls[2] = {url_a, url_b};
	for (int i = 0; i < 2; i++) {
		nng_socket s = tw_dial(urls[i]);
		tw_reply k;
		Weights__AdminReply *st = stats(s, &k);
		printf("node %d: %s\n", i, st->text);
		prod += st->productions;
		fills += st->peer_fills;
		tw_reply_free(&k);
		nng_close(s);
	}
	/* each node got the layout once: produced, or filled from the other */
	assert_int_equal(prod + fills, 2);
	assert_true(prod >= 1);
	for (int i = 0; i < 2; i++)
		tw_reply_free(&g[i].x);
	free(ua);
	free(ub);
	tw_env_free(b);
	tw_env_free(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_config),
	    cmocka_unit_test(test_cache_only),
	    cmocka_unit_test(test_client_manifest_opts),
	    cmocka_unit_test(test_fill),
	    cmocka_unit_test(test_fill_bad_peer),
	    cmocka_unit_test(test_mutual),
	    cmocka_unit_test(test_rendezvous),
	    cmocka_unit_test(test_one_worker),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
