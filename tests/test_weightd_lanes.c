/*
 * test_weightd_lanes.c — productions never starve requests: with one request
 * worker and one producer, a Hello, a model list and a manifest cache hit are
 * answered while a cold layout is being produced (on the old single pool the
 * production held the only worker until it was done). Also the pool's lanes
 * on their own: a job of one lane may queue work on another while the pool
 * drains, and it runs.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/common.h"
#include "test_weightd_util.h"
#include "weightd/server_int.h"

#define SEED 4711u

/* A Llama with hidden 512, intermediate 2048, vocab 4096, 2 layers: ~50 MB of
 * F32, so a TP=8 production takes a while (copies, hashes, 8 cache commits). */
static const char big_config[] =
    "{\"architectures\": [\"LlamaForCausalLM\"], \"model_type\": \"llama\", "
    "\"hidden_size\": 512, \"num_attention_heads\": 8, \"num_key_value_heads\": 8, "
    "\"intermediate_size\": 2048, \"num_hidden_layers\": 2, \"vocab_size\": 4096, "
    "\"tie_word_embeddings\": false, \"torch_dtype\": \"float32\"}";

static void write_big(const char *dir)
{
	tw_descs t;
	memset(&t, 0, sizeof(t));
	tw_add(&t, "model.embed_tokens.weight", 2, 4096, 512);
	tw_add(&t, "lm_head.weight", 2, 4096, 512);
	tw_add(&t, "model.norm.weight", 1, 512, 0);
	for (int i = 0; i < 2; i++) {
		static const struct {
			const char *leaf;
			int ndim;
			int64_t a, b;
		} L[] = {{"input_layernorm.weight", 1, 512, 0},
		         {"post_attention_layernorm.weight", 1, 512, 0},
		         {"self_attn.q_proj.weight", 2, 512, 512},
		         {"self_attn.k_proj.weight", 2, 512, 512},
		         {"self_attn.v_proj.weight", 2, 512, 512},
		         {"self_attn.o_proj.weight", 2, 512, 512},
		         {"mlp.gate_proj.weight", 2, 2048, 512},
		         {"mlp.up_proj.weight", 2, 2048, 512},
		         {"mlp.down_proj.weight", 2, 512, 2048}};
		for (size_t k = 0; k < sizeof(L) / sizeof(L[0]); k++) {
			char name[96];
			snprintf(name, sizeof(name), "model.layers.%d.%s", i, L[k].leaf);
			tw_add(&t, name, L[k].ndim, L[k].a, L[k].b);
		}
	}
	assert_int_equal(tu_write_ckpt(dir, big_config, t.d, t.n, 1, SEED), 0);
}

typedef struct cold_arg {
	const char *url;
	tw_reply x;
} cold_arg;

static void *cold_main(void *p)
{
	cold_arg *a = p;
	nng_socket s = tw_dial(a->url);
	a->x = tw_manifest(s, "big", 8, 3);
	nng_close(s);
	return NULL;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void test_requests_during_production(void **state)
{
	(void)state;
	tw_env *e = tw_env_new("wd-lanes", SEED);
	char *big = tu_path(e->models, "big");
	write_big(big);
	wt_errbuf err;
	assert_int_equal(wd_config_set(&e->cfg, "workers", "1", "test", &err), WT_OK);
	assert_int_equal(wd_config_set(&e->cfg, "producers", "1", "test", &err), WT_OK);
	assert_int_equal(wd_config_set(&e->cfg, "chunk_bytes", "64K", "test", &err), WT_OK);
	assert_int_equal(tw_start(e), WT_OK);
	nng_socket s = tw_dial(e->url);
	/* a layout of the small model in the cache first: a hit below */
	tw_reply warm = tw_manifest(s, "llama", 1, 0);
	assert_int_equal(warm.r->body_case, WEIGHTS__REPLY__BODY_MANIFEST);
	tw_reply_free(&warm);

	cold_arg a = {.url = e->url};
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, cold_main, &a), 0);
	double t0 = now_s();
	while (wd_flights_active(e->srv->flights) == 0 && now_s() - t0 < 20)
		usleep(200);
	assert_int_equal(wd_flights_active(e->srv->flights), 1);
	double h0 = now_s();
	tw_reply h = tw_hello(s, 1, NULL);
	double h1 = now_s();
	tw_reply l = tw_list_models(s);
	tw_reply hit = tw_manifest(s, "llama", 1, 0);
	double h2 = now_s();
	/* all three answered while the production was still running */
	size_t still = wd_flights_active(e->srv->flights);
	pthread_join(t, NULL);
	double t1 = now_s();
	printf("during a %.3f s cold production: Hello %.4f s; Hello + list + cache hit %.4f s; "
	       "production still running then: %s\n",
	       t1 - t0, h1 - h0, h2 - h0, still ? "yes" : "no");
	assert_int_equal(h.r->body_case, WEIGHTS__REPLY__BODY_HELLO);
	assert_int_equal(l.r->body_case, WEIGHTS__REPLY__BODY_MODELS);
	assert_int_equal(hit.r->body_case, WEIGHTS__REPLY__BODY_MANIFEST);
	assert_int_equal(still, 1);
	assert_int_equal(a.x.r->body_case, WEIGHTS__REPLY__BODY_MANIFEST);
	tw_reply_free(&h);
	tw_reply_free(&l);
	tw_reply_free(&hit);
	tw_reply_free(&a.x);
	nng_close(s);
	free(big);
	tw_env_free(e);
}

/* ---- the pool's lanes ---- */

typedef struct hop {
	wd_job job;
	wd_pool *p;
	_Atomic int *ran;
	int hops; /* bounce between the lanes this many more times */
	unsigned lane;
} hop;

static void hop_fn(wd_job *j)
{
	hop *h = (hop *)j;
	atomic_fetch_add(h->ran, 1);
	if (h->hops-- > 0) {
		usleep(1000);
		h->lane ^= 1;
		wd_pool_submit_lane(h->p, h->lane, &h->job);
	}
}

static void test_pool_lanes_drain(void **state)
{
	(void)state;
	wd_pool *p;
	wt_errbuf err;
	unsigned lanes[2] = {1, 1};
	assert_int_equal(wd_pool_create_lanes(&p, lanes, 2, &err), WT_OK);
	_Atomic int ran = 0;
	hop h[8];
	for (int i = 0; i < 8; i++) {
		h[i] = (hop){.job.fn = hop_fn, .p = p, .ran = &ran, .hops = 5, .lane = i & 1};
		wd_pool_submit_lane(p, h[i].lane, &h[i].job);
	}
	wd_pool_destroy(p); /* every hop queued while draining still runs */
	assert_int_equal(atomic_load(&ran), 8 * 6);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_pool_lanes_drain),
	    cmocka_unit_test(test_requests_during_production),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
