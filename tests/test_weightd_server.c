/*
 * test_weightd_server.c — the daemon over raw nng + proto/wire: Hello (version,
 * token), ListModels (with an unavailable folder), Manifest + chunk bytes that
 * hash to the manifest and equal the planner's own output, sub-range chunk
 * reads, garbled requests answered with Error replies while the daemon keeps
 * serving, plan-time errors, and the corrupt-chunk test hook.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "common/common.h"
#include "shardmap/shardmap.h"
#include "test_weightd_util.h"
#include "weights/weights.h"

#define SEED 20261129u

static void test_hello(void **state)
{
	(void)state;
	tw_env *e = tw_env_new("wd-hello", SEED);
	char ipc[300];
	snprintf(ipc, sizeof(ipc), "ipc://%s/w.sock", e->dir);
	wt_errbuf err;
	assert_int_equal(wd_config_set(&e->cfg, "listen", ipc, "test", &err), WT_OK);
	assert_int_equal(tw_start(e), WT_OK);
	/* both listeners serve */
	assert_string_equal(wd_server_url(e->srv, 1), ipc);
	assert_null(wd_server_url(e->srv, 2));
	nng_socket si = tw_dial(ipc);
	tw_reply xi = tw_hello(si, 1, NULL);
	assert_int_equal(xi.r->body_case, WEIGHTS__REPLY__BODY_HELLO);
	tw_reply_free(&xi);
	nng_close(si);
	nng_socket s = tw_dial(e->url);
	tw_reply x = tw_hello(s, 1, NULL);
	assert_int_equal(x.rv, WT_OK);
	assert_int_equal(x.r->body_case, WEIGHTS__REPLY__BODY_HELLO);
	assert_int_equal(x.r->id, 1);
	assert_int_equal(x.r->hello->protocol_version, 1);
	assert_string_equal(x.r->hello->server_version, WT_VERSION_STRING); /* was "0.1.0" */
	assert_int_equal(x.r->hello->max_chunk_bytes, 16 * 1024);
	assert_int_equal(x.r->hello->max_message_bytes, 64 << 10);
	tw_reply_free(&x);
	x = tw_hello(s, 2, NULL);
	assert_int_equal(tw_errcode(&x), WT_EVERSION);
	printf("version 2: %s\n", x.r->error->message);
	tw_reply_free(&x);
	x = tw_hello(s, 0, NULL);
	assert_int_equal(tw_errcode(&x), WT_EVERSION);
	tw_reply_free(&x);
	nng_close(s);
	tw_env_free(e);
}

static void test_token(void **state)
{
	(void)state;
	tw_env *e = tw_env_new("wd-token", SEED);
	wt_errbuf err;
	assert_int_equal(wd_config_set(&e->cfg, "auth_token", "s3cret", "test", &err), WT_OK);
	assert_int_equal(tw_start(e), WT_OK);
	nng_socket s = tw_dial(e->url);
	Weights__ListModelsRequest lm = WEIGHTS__LIST_MODELS_REQUEST__INIT;
	Weights__Request rq = WEIGHTS__REQUEST__INIT;
	rq.id = 5;
	rq.body_case = WEIGHTS__REQUEST__BODY_LIST_MODELS;
	rq.list_models = &lm;
	/* before Hello: refused */
	tw_reply x = tw_call(s, &rq);
	assert_int_equal(tw_errcode(&x), WT_EPERM);
	tw_reply_free(&x);
	x = tw_hello(s, 1, "wrong");
	assert_int_equal(tw_errcode(&x), WT_EPERM);
	tw_reply_free(&x);
	x = tw_hello(s, 1, "");
	assert_int_equal(tw_errcode(&x), WT_EPERM);
	tw_reply_free(&x);
	x = tw_call(s, &rq);
	assert_int_equal(tw_errcode(&x), WT_EPERM);
	tw_reply_free(&x);
	x = tw_hello(s, 1, "s3cret");
	assert_int_equal(x.r->body_case, WEIGHTS__REPLY__BODY_HELLO);
	tw_reply_free(&x);
	x = tw_call(s, &rq);
	assert_int_equal(x.r->body_case, WEIGHTS__REPLY__BODY_MODELS);
	assert_int_equal(x.r->id, 5);
	tw_reply_free(&x);
	/* a new connection starts unauthenticated */
	nng_socket s2 = tw_dial(e->url);
	x = tw_call(s2, &rq);
	assert_int_equal(tw_errcode(&x), WT_EPERM);
	tw_reply_free(&x);
	nng_close(s2);
	nng_close(s);
	tw_env_free(e);
}

static void test_list_models(void **state)
{
	(void)state;
	tw_env *e = tw_env_new("wd-list", SEED);
	/* a broken folder next to the good one */
	assert_int_equal(tu_write_file(e->models, "broken/config.json", "{not json", 9), 0);
	assert_int_equal(tw_start(e), WT_OK);
	nng_socket s = tw_dial(e->url);
	Weights__ListModelsRequest lm = WEIGHTS__LIST_MODELS_REQUEST__INIT;
	Weights__Request rq = WEIGHTS__REQUEST__INIT;
	rq.body_case = WEIGHTS__REQUEST__BODY_LIST_MODELS;
	rq.list_models = &lm;
	tw_reply x = tw_call(s, &rq);
	assert_int_equal(x.r->body_case, WEIGHTS__REPLY__BODY_MODELS);
	Weights__ModelList *ml = x.r->models;
	assert_int_equal(ml->n_models, 2);
	Weights__ModelInfo *b = ml->models[0], *g = ml->models[1]; /* sorted by name */
	assert_string_equal(b->name, "broken");
	assert_false(b->available);
	printf("broken: %s\n", b->error);
	assert_non_null(strstr(b->error, "broken"));
	assert_string_equal(g->name, "llama");
	assert_true(g->available);
	assert_int_equal(strlen(g->revision), 64);
	assert_string_equal(g->architecture, "LlamaForCausalLM");
	tw_descs t;
	tw_llama8_descs(&t);
	assert_int_equal(g->checkpoint_bytes, tw_total_bytes(&t));
	assert_int_equal(g->n_tensors, t.n);
	assert_non_null(strstr(g->uri, "models/llama"));
	tw_reply_free(&x);
	/* the broken model's manifest is an error with the loader's message */
	x = tw_manifest(s, "broken", 1, 0);
	assert_true(tw_errcode(&x) > 0);
	tw_reply_free(&x);
	x = tw_manifest(s, "nosuch", 1, 0);
	assert_int_equal(tw_errcode(&x), WT_ENOTFOUND);
	assert_non_null(strstr(x.r->error->message, "llama"));
	tw_reply_free(&x);
	nng_close(s);
	tw_env_free(e);
}

/* Expected tensors of one rank, from the planner directly. */
typedef struct expect {
	const sm_plan *plan;
	uint32_t rank;
	wt_hash128 *h;
} expect;

static int expect_emit(void *ctx, uint32_t rank, size_t i, const void *b, uint64_t n,
                       wt_errbuf *err)
{
	(void)err;
	expect *x = ctx;
	if (rank == x->rank)
		x->h[i] = common_hash128(b, (size_t)n);
	return WT_OK;
}

/* Fetch every chunk of m; check chunk and tensor hashes; returns bytes fetched. */
static uint64_t fetch_all(nng_socket s, const Weights__Manifest *m)
{
	uint64_t total = 0;
	for (size_t i = 0; i < m->n_tensors; i++) {
		const Weights__TensorEntry *t = m->tensors[i];
		uint8_t *buf = malloc(t->nbytes + 1);
		uint64_t off = 0;
		for (size_t c = 0; c < t->n_chunks; c++) {
			const Weights__ChunkRef *cr = t->chunks[c];
			assert_int_equal(cr->offset, off);
			tw_reply x = tw_chunk(s, m->shard_id, cr->hash, 0, 0);
			assert_int_equal(x.rv, WT_OK);
			if (x.r->body_case == WEIGHTS__REPLY__BODY_ERROR)
				printf("chunk error: %s\n", x.r->error->message);
			assert_int_equal(x.r->body_case, WEIGHTS__REPLY__BODY_CHUNK);
			assert_int_equal(x.tail_len, cr->nbytes);
			uint8_t hb[16];
			common_hash128_to_bytes(common_hash128(x.tail, x.tail_len), hb);
			assert_memory_equal(hb, cr->hash.data, 16);
			memcpy(buf + off, x.tail, x.tail_len);
			off += x.tail_len;
			tw_reply_free(&x);
		}
		assert_int_equal(off, t->nbytes);
		uint8_t hb[16];
		common_hash128_to_bytes(common_hash128(buf, off), hb);
		assert_memory_equal(hb, t->hash.data, 16);
		free(buf);
		total += off;
	}
	return total;
}

static void test_manifest_and_chunks(void **state)
{
	(void)state;
	tw_env *e = tw_env_new("wd-manifest", SEED);
	assert_int_equal(tw_start(e), WT_OK);
	nng_socket s = tw_dial(e->url);
	tw_reply x = tw_manifest(s, "llama", 2, 1);
	assert_int_equal(x.rv, WT_OK);
	if (x.r->body_case == WEIGHTS__REPLY__BODY_ERROR)
		printf("manifest error: %s\n", x.r->error->message);
	assert_int_equal(x.r->body_case, WEIGHTS__REPLY__BODY_MANIFEST);
	assert_int_equal(x.r->id, 101);
	Weights__Manifest *m = x.r->manifest;
	assert_int_equal(m->format_version, WT_FORMAT_VERSION);
	assert_string_equal(m->model, "llama");
	assert_int_equal(strlen(m->revision), 64);
	assert_int_equal(m->tp_rank, 1);
	assert_int_equal(m->ep_rank, 0);
	assert_int_equal(m->layout->tp_size, 2);
	assert_non_null(strstr(m->layout_text, "tp=2"));
	assert_int_equal(m->shard_id.len, 17);
	assert_false(m->tied_lm_head);
	/* name order, totals */
	uint64_t sum = 0;
	for (size_t i = 0; i < m->n_tensors; i++) {
		if (i > 0)
			assert_true(strcmp(m->tensors[i - 1]->name, m->tensors[i]->name) < 0);
		sum += m->tensors[i]->nbytes;
		for (size_t c = 0; c < m->tensors[i]->n_chunks; c++)
			assert_true(m->tensors[i]->chunks[c]->nbytes <= 16 * 1024);
	}
	assert_int_equal(sum, m->total_bytes);
	tw_descs t;
	tw_llama8_descs(&t);
	assert_int_equal(m->checkpoint_bytes, tw_total_bytes(&t));
	/* every chunk hashes to its manifest hash; tensors reassemble to theirs */
	assert_int_equal(fetch_all(s, m), m->total_bytes);

	/* the tensors equal the planner's output for rank 1, computed here */
	char *dir = tu_path(e->models, "llama");
	store *st;
	ckpt *ck;
	wt_errbuf err;
	assert_int_equal(store_open(&st, dir, &err), WT_OK);
	assert_int_equal(ckpt_open(&ck, st, &err), WT_OK);
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = 2;
	sm_plan *plan;
	assert_int_equal(shardmap_plan(ck, &l, &plan, &err), WT_OK);
	assert_int_equal(shardmap_rank_n_tensors(plan, 1), m->n_tensors);
	expect ex = {plan, 1, calloc(m->n_tensors, sizeof(wt_hash128))};
	assert_int_equal(shardmap_produce(ck, plan, 1, expect_emit, &ex, &err), WT_OK);
	for (size_t i = 0; i < m->n_tensors; i++) {
		assert_string_equal(shardmap_rank_tensor(plan, 1, i)->name, m->tensors[i]->name);
		uint8_t hb[16];
		common_hash128_to_bytes(ex.h[i], hb);
		assert_memory_equal(hb, m->tensors[i]->hash.data, 16);
	}
	free(ex.h);
	shardmap_plan_free(plan);
	ckpt_close(ck);
	store_close(st);
	free(dir);

	/* sub-range (resume): bytes [100, 100+50) of the first chunk */
	const Weights__ChunkRef *c0 = m->tensors[0]->chunks[0];
	tw_reply whole = tw_chunk(s, m->shard_id, c0->hash, 0, 0);
	tw_reply part = tw_chunk(s, m->shard_id, c0->hash, 100, 50);
	assert_int_equal(part.r->body_case, WEIGHTS__REPLY__BODY_CHUNK);
	assert_int_equal(part.r->chunk->offset, 100);
	assert_int_equal(part.tail_len, 50);
	assert_memory_equal(part.tail, whole.tail + 100, 50);
	tw_reply_free(&part);
	part = tw_chunk(s, m->shard_id, c0->hash, c0->nbytes - 10, 0); /* to the end */
	assert_int_equal(part.tail_len, 10);
	assert_memory_equal(part.tail, whole.tail + c0->nbytes - 10, 10);
	tw_reply_free(&part);
	part = tw_chunk(s, m->shard_id, c0->hash, c0->nbytes - 10, 11); /* past the end */
	assert_int_equal(tw_errcode(&part), WT_EINVAL);
	tw_reply_free(&part);
	tw_reply_free(&whole);
	/* unknown chunk / unknown shard */
	uint8_t zero[17] = {1};
	ProtobufCBinaryData zh = {16, zero + 1}, zs = {17, zero};
	part = tw_chunk(s, m->shard_id, zh, 0, 0);
	assert_int_equal(tw_errcode(&part), WT_ENOTFOUND);
	tw_reply_free(&part);
	part = tw_chunk(s, zs, c0->hash, 0, 0);
	assert_int_equal(tw_errcode(&part), WT_ENOTFOUND);
	tw_reply_free(&part);
	part = tw_chunk(s, m->shard_id, (ProtobufCBinaryData){3, zero}, 0, 0);
	assert_int_equal(tw_errcode(&part), WT_EPROTO);
	tw_reply_free(&part);

	/* rank 1's chunk is not served under rank 0's shard id (its lm_head rows differ) */
	tw_reply r0 = tw_manifest(s, "llama", 2, 0);
	assert_int_equal(r0.r->body_case, WEIGHTS__REPLY__BODY_MANIFEST);
	assert_memory_not_equal(r0.r->manifest->tensors[0]->chunks[0]->hash.data, c0->hash.data,
	                        16);
	part = tw_chunk(s, r0.r->manifest->shard_id, c0->hash, 0, 0);
	assert_int_equal(tw_errcode(&part), WT_ENOTFOUND);
	tw_reply_free(&part);
	tw_reply_free(&r0);

	/* a second request is served from the cache: same shard, same hashes */
	tw_reply y = tw_manifest(s, "llama", 2, 1);
	assert_int_equal(y.r->body_case, WEIGHTS__REPLY__BODY_MANIFEST);
	assert_memory_equal(y.r->manifest->shard_id.data, m->shard_id.data, 17);
	assert_memory_equal(y.r->manifest->tensors[3]->hash.data, m->tensors[3]->hash.data, 16);
	tw_reply_free(&y);
	tw_reply_free(&x);

	/* plan-time error: 8 heads do not split 3 ways */
	x = tw_manifest(s, "llama", 3, 0);
	assert_int_equal(tw_errcode(&x), WT_ELAYOUT);
	printf("tp=3: %s\n", x.r->error->message);
	tw_reply_free(&x);
	/* rank out of range */
	x = tw_manifest(s, "llama", 2, 2);
	assert_true(tw_errcode(&x) == WT_EINVAL || tw_errcode(&x) == WT_ELAYOUT);
	tw_reply_free(&x);
	nng_close(s);
	tw_env_free(e);
}

/* Each malformed request gets an Error reply, and a valid request right after works. */
static void test_garbage(void **state)
{
	(void)state;
	tw_env *e = tw_env_new("wd-garbage", SEED);
	assert_int_equal(tw_start(e), WT_OK);
	nng_socket s = tw_dial(e->url);
	uint8_t buf[4096];
	tu_fill(buf, sizeof(buf), SEED);
	printf("garbage seed %u\n", SEED);
	buf[0] = 0;
	buf[1] = 0;
	buf[2] = 0x0f;
	buf[3] = 0xfc; /* header_len 4092 = the rest: random protobuf */
	static const struct {
		const char *what;
		size_t len;
		uint8_t prefix[4];
		int code;
	} cases[] = {
	    {"empty", 0, {0}, WT_EPROTO},
	    {"truncated prefix", 2, {0, 0}, WT_EPROTO},
	    {"header_len past end", 64, {0, 0, 1, 0}, WT_EPROTO},
	    {"header_len over limit", 64, {0x7f, 0, 0, 0}, WT_EPROTO},
	    {"random protobuf", 4096, {0, 0, 0x0f, 0xfc}, WT_EPROTO},
	    {"tail after header", 64, {0, 0, 0, 2}, WT_EPROTO},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memcpy(buf, cases[i].prefix, 4);
		if (i == 5) {
			buf[4] = 0x08; /* Request.id = 1, then 58 stray bytes */
			buf[5] = 0x01;
		}
		tw_reply x = tw_raw(s, buf, cases[i].len);
		printf("%s: rv %d code %d\n", cases[i].what, x.rv, tw_errcode(&x));
		assert_int_equal(x.rv, WT_OK);
		assert_int_equal(tw_errcode(&x), cases[i].code);
		tw_reply_free(&x);
		x = tw_hello(s, 1, NULL);
		assert_int_equal(x.r->body_case, WEIGHTS__REPLY__BODY_HELLO);
		tw_reply_free(&x);
	}
	/* unknown oneof: a field number this server does not know (20, varint) */
	/* Request{id = 5, field 20 = 7}: tag (20 << 3 | 0) = 160 = 0xa0 0x01 */
	uint8_t unk2[] = {0, 0, 0, 5, 0x08, 0x05, 0xa0, 0x01, 0x07};
	tw_reply x = tw_raw(s, unk2, sizeof(unk2));
	assert_int_equal(tw_errcode(&x), WT_EPROTO);
	assert_int_equal(x.r->id, 5);
	tw_reply_free(&x);
	/* oversized: over max_request_bytes (64 KiB) but under the socket limit */
	size_t big = (64u << 10) + 100;
	uint8_t *bb = calloc(1, big);
	x = tw_raw(s, bb, big);
	assert_int_equal(tw_errcode(&x), WT_ETOOBIG);
	tw_reply_free(&x);
	free(bb);
	x = tw_hello(s, 1, NULL);
	assert_int_equal(x.r->body_case, WEIGHTS__REPLY__BODY_HELLO);
	tw_reply_free(&x);
	/* admin op unknown, register unsupported */
	x = tw_admin(s, (Weights__AdminRequest__Op)42, NULL, 0);
	assert_int_equal(tw_errcode(&x), WT_EPROTO);
	tw_reply_free(&x);
	x = tw_admin(s, WEIGHTS__ADMIN_REQUEST__OP__OP_REGISTER, "x", 0); /* no URI */
	assert_int_equal(tw_errcode(&x), WT_EINVAL);
	tw_reply_free(&x);
	/* manifest without a layout */
	Weights__ManifestRequest mr = WEIGHTS__MANIFEST_REQUEST__INIT;
	mr.model = "llama";
	Weights__Request rq = WEIGHTS__REQUEST__INIT;
	rq.body_case = WEIGHTS__REQUEST__BODY_MANIFEST;
	rq.manifest = &mr;
	x = tw_call(s, &rq);
	assert_int_equal(tw_errcode(&x), WT_EPROTO);
	tw_reply_free(&x);
	/* an error that quotes the request's text cut short (here the revision,
	 * at 16 bytes: inside an "é") is still a reply the client can read: its
	 * message is valid UTF-8, else the client sees WT_EPROTO, not the error */
	Weights__Layout l = WEIGHTS__LAYOUT__INIT;
	l.tp_size = 1;
	l.ep_size = 1;
	l.group_size = 128;
	l.vocab_pad = 64;
	mr.layout = &l;
	mr.revision = "a\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9";
	x = tw_call(s, &rq);
	assert_int_equal(x.rv, WT_OK);
	assert_int_equal(tw_errcode(&x), WT_ENOTFOUND);
	printf("revision cut inside a character: %s\n", x.r->error->message);
	assert_non_null(strstr(x.r->error->message, "is not served"));
	tw_reply_free(&x);
	nng_close(s);
	tw_env_free(e);
}

/* --test-corrupt-chunk N: the N-th chunk reply's bytes no longer match its hash. */
static void test_corrupt_hook(void **state)
{
	(void)state;
	tw_env *e = tw_env_new("wd-hook", SEED);
	e->faults.corrupt_chunk = 3;
	assert_int_equal(tw_start(e), WT_OK);
	nng_socket s = tw_dial(e->url);
	tw_reply x = tw_manifest(s, "llama", 1, 0);
	assert_int_equal(x.r->body_case, WEIGHTS__REPLY__BODY_MANIFEST);
	const Weights__TensorEntry *t = x.r->manifest->tensors[0];
	assert_true(t->n_chunks >= 1);
	for (int i = 1; i <= 4; i++) {
		tw_reply c = tw_chunk(s, x.r->manifest->shard_id, t->chunks[0]->hash, 0, 0);
		assert_int_equal(c.r->body_case, WEIGHTS__REPLY__BODY_CHUNK);
		uint8_t hb[16];
		common_hash128_to_bytes(common_hash128(c.tail, c.tail_len), hb);
		bool ok = memcmp(hb, t->chunks[0]->hash.data, 16) == 0;
		assert_int_equal(ok, i != 3);
		tw_reply_free(&c);
	}
	tw_reply_free(&x);
	nng_close(s);
	tw_env_free(e);
}

/* Fixture models from wt-mkckpt (sharded index, tied embeddings, MoE, FP8 source):
 * every rank's manifest, every chunk fetched and hash-checked. */
static void test_fixture_models(void **state)
{
	(void)state;
	tw_env *e = tw_env_new("wd-fixtures", SEED);
	const char *b = getenv("WT_BUILD");
	static const struct {
		const char *family;
		uint32_t tp, ep, quant;
		bool tied;
	} cases[] = {
	    {"llama", 2, 1, WT_QUANT_NONE, false},
	    {"qwen2", 2, 1, WT_QUANT_NONE, true},
	    {"mixtral", 1, 2, WT_QUANT_NONE, false},
	    {"deepseek_v3", 2, 1, WT_QUANT_NONE, false},
	    {"llama", 2, 1, WT_QUANT_FP8_CHANNEL, false},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char cmd[1024];
		snprintf(cmd, sizeof(cmd),
		         "test -d %s/fx-%s || %s/wt-mkckpt --family %s --out %s/fx-%s --seed 3 "
		         ">/dev/null",
		         e->models, cases[i].family, b ? b : "build", cases[i].family, e->models,
		         cases[i].family);
		assert_int_equal(system(cmd), 0);
	}
	assert_int_equal(tw_start(e), WT_OK);
	nng_socket s = tw_dial(e->url);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		Weights__Layout l = WEIGHTS__LAYOUT__INIT;
		l.tp_size = cases[i].tp;
		l.ep_size = cases[i].ep;
		l.quant = cases[i].quant;
		l.group_size = 128;
		l.vocab_pad = 64;
		for (uint32_t ep = 0; ep < cases[i].ep; ep++) {
			for (uint32_t tp = 0; tp < cases[i].tp; tp++) {
				char name[64];
				snprintf(name, sizeof(name), "fx-%s", cases[i].family);
				tw_reply x = tw_manifest_l(s, name, &l, tp, ep);
				assert_int_equal(x.rv, WT_OK);
				if (x.r->body_case == WEIGHTS__REPLY__BODY_ERROR)
					printf("%s tp %u ep %u: %s\n", cases[i].family, tp, ep,
					       x.r->error->message);
				assert_int_equal(x.r->body_case, WEIGHTS__REPLY__BODY_MANIFEST);
				Weights__Manifest *m = x.r->manifest;
				assert_int_equal(m->tp_rank, tp);
				assert_int_equal(m->ep_rank, ep);
				assert_int_equal(m->tied_lm_head, cases[i].tied);
				uint64_t got = fetch_all(s, m);
				assert_int_equal(got, m->total_bytes);
				printf("%s %s rank (%u,%u): %zu tensors, %llu bytes, %zu skipped\n",
				       cases[i].family, m->layout_text, tp, ep, m->n_tensors,
				       (unsigned long long)got, m->n_skipped);
				tw_reply_free(&x);
			}
		}
	}
	nng_close(s);
	tw_env_free(e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_hello),          cmocka_unit_test(test_token),
	    cmocka_unit_test(test_list_models),    cmocka_unit_test(test_manifest_and_chunks),
	    cmocka_unit_test(test_garbage),        cmocka_unit_test(test_corrupt_hook),
	    cmocka_unit_test(test_fixture_models),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
