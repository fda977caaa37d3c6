/*
 * test_reference_experts.c — MoE configs with more than 64 routed experts, up to
 * REF_MAX_EXPERTS (512): the routers (softmax top-k, GPT-OSS's, Llama 4's sigmoid,
 * DeepSeek's group-limited top-k with more than 64 groups) over up to 512 logits
 * against a rank count with ties to the lower index; the refusals beyond the limit;
 * and a Mixtral checkpoint of 130 experts top-4 written here (float32, hid 32, Ie 16,
 * 2 layers, seed fixed) whose routes pick experts above 64, full vs sharded at TP 2,
 * EP 2, EP 4 and TP 2 x EP 2, exchanged EP expert stacks caught.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "reference/reference_int.h"
#include "tests/test_reference_util.h"

#define XE    130 /* experts of the checkpoint: 65 + 65 under EP 2 */
#define XK    4   /* its top-k */
#define XL    2
#define XHID  32
#define XIE   16
#define XV    1000 /* g_tokens go up to 999 */
#define XSEED 0x5eedull

/* Uniform in [-1, 1) from *s. */
static float unif(uint64_t *s)
{
	return (float)((double)(tu_splitmix64(s) >> 11) * 0x1p-53 * 2.0 - 1.0);
}

/* Top k of v[0..E) by value, ties to the lower index, by counting each one's rank. */
static void rank_topk(const float *v, int64_t E, int64_t k, int64_t *out)
{
	for (int64_t e = 0; e < E; e++) {
		int64_t r = 0;
		for (int64_t o = 0; o < E; o++)
			r += v[o] > v[e] || (v[o] == v[e] && o < e);
		if (r < k)
			out[r] = e;
	}
}

/* E logits in quarters of [-4, 4] (ties), the largest planted above index 64. */
static void plant_logits(float *l, int64_t E, uint64_t seed)
{
	for (int64_t e = 0; e < E; e++)
		l[e] = roundf(unif(&seed) * 16.0f) / 4.0f;
	l[E - 1] = 9.0f;
	l[70] = 8.0f;
	l[65] = 8.0f; /* ties 70: taken first */
	l[E - 5] = 7.5f;
	l[1] = 7.0f;
}

static void test_routers(void **state)
{
	(void)state;
	static const int64_t Es[] = {80, 130, 256, REF_MAX_EXPERTS};
	for (size_t i = 0; i < sizeof(Es) / sizeof(Es[0]); i++) {
		const int64_t E = Es[i], k = 8;
		float l[REF_MAX_EXPERTS], w[REF_MAX_EXPERTS];
		int64_t want[REF_MAX_EXPERTS], idx[REF_MAX_EXPERTS];
		plant_logits(l, E, XSEED + (uint64_t)i);
		rank_topk(l, E, k, want);
		assert_true(want[0] == E - 1 && want[1] == 65 && want[2] == 70 &&
		            want[3] == E - 5 && want[4] == 1);
		double mx = 9.0, sum = 0.0, ksum = 0.0;
		for (int64_t e = 0; e < E; e++)
			sum += exp((double)l[e] - mx);
		for (int64_t j = 0; j < k; j++)
			ksum += exp((double)l[want[j]] - mx);
		ref_route(l, E, k, false, NULL, idx, w);
		for (int64_t j = 0; j < k; j++) {
			assert_int_equal(idx[j], want[j]);
			assert_float_equal(w[j], exp((double)l[want[j]] - mx) / sum, 1e-6);
		}
		ref_route(l, E, k, true, NULL, idx, w);
		for (int64_t j = 0; j < k; j++)
			assert_float_equal(w[j], exp((double)l[want[j]] - mx) / ksum, 1e-6);
		ref_route_topk_softmax(l, E, k, NULL, idx, w);
		for (int64_t j = 0; j < k; j++) {
			assert_int_equal(idx[j], want[j]);
			assert_float_equal(w[j], exp((double)l[want[j]] - mx) / ksum, 1e-6);
		}
		ref_route_topk_sigmoid(l, E, k, NULL, idx, w);
		for (int64_t j = 0; j < k; j++) {
			assert_int_equal(idx[j], want[j]);
			assert_float_equal(w[j], 1.0 / (1.0 + exp(-(double)l[want[j]])), 1e-6);
		}
		/* forced choices above 64 keep their order and their own weights */
		const int64_t forced[3] = {E - 2, 66, 64};
		ref_route(l, E, 3, false, forced, idx, w);
		for (int64_t j = 0; j < 3; j++) {
			assert_int_equal(idx[j], forced[j]);
			assert_float_equal(w[j], exp((double)l[forced[j]] - mx) / sum, 1e-6);
		}
	}
}

/* DeepSeek-V3's routing written out: sigmoid scores, + bias for the choice, group
 * score the sum of its two best choices (the best alone for one-expert groups),
 * the topk_group best groups kept, the others' choices 0, the top k of those. */
static void ds_naive(const ref_cfg *c, const float *l, const float *bias, int64_t *idx, float *w)
{
	int64_t E = c->E, G = c->n_group, gs = E / G;
	float sc[REF_MAX_EXPERTS], ch[REF_MAX_EXPERTS], gscore[REF_MAX_EXPERTS];
	int64_t groups[REF_MAX_EXPERTS];
	bool kept[REF_MAX_EXPERTS] = {false};
	for (int64_t e = 0; e < E; e++) {
		sc[e] = 1.0f / (1.0f + expf(-l[e]));
		ch[e] = sc[e] + bias[e];
	}
	for (int64_t g = 0; g < G; g++) {
		int64_t best[2];
		rank_topk(ch + g * gs, gs, gs > 1 ? 2 : 1, best);
		gscore[g] = ch[g * gs + best[0]] + (gs > 1 ? ch[g * gs + best[1]] : 0.0f);
	}
	rank_topk(gscore, G, c->topk_group, groups);
	for (int64_t k = 0; k < c->topk_group; k++)
		kept[groups[k]] = true;
	for (int64_t e = 0; e < E; e++)
		ch[e] = kept[e / gs] ? ch[e] : 0.0f;
	rank_topk(ch, E, c->topk, idx);
	double sum = 0.0;
	for (int64_t j = 0; j < c->topk; j++)
		sum += sc[idx[j]];
	for (int64_t j = 0; j < c->topk; j++)
		w[j] = (float)(sc[idx[j]] / sum * c->routed_scale);
}

static void test_deepseek_groups(void **state)
{
	(void)state;
	/* V3's 256 experts in 8 groups top-4 of them top-8; 128 groups of 2 with 70 kept
	 * (the group set past 64); 512 one-expert groups with 100 kept */
	static const int64_t shapes[][4] = {{256, 8, 4, 8}, {256, 128, 70, 8}, {512, 512, 100, 16}};
	for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
		ref_cfg c = {0};
		c.kind = REF_DEEPSEEK;
		c.E = shapes[i][0];
		c.n_group = shapes[i][1];
		c.topk_group = shapes[i][2];
		c.topk = shapes[i][3];
		c.norm_topk = true;
		c.routed_scale = 2.5;
		float l[REF_MAX_EXPERTS], bias[REF_MAX_EXPERTS], w[64], ww[64];
		int64_t idx[64], want[64];
		uint64_t s = XSEED + 100 + i;
		for (int64_t e = 0; e < c.E; e++) {
			l[e] = 3.0f * unif(&s);
			bias[e] = 0.05f * (unif(&s) + 1.0f);
		}
		ds_naive(&c, l, bias, want, ww);
		ref_route_ds(&c, l, bias, NULL, idx, w);
		int64_t above = 0;
		for (int64_t j = 0; j < c.topk; j++) {
			assert_int_equal(idx[j], want[j]);
			assert_float_equal(w[j], ww[j], 1e-6);
			above += want[j] >= 64;
		}
		print_message(
		    "deepseek E %lld G %lld topk_group %lld: %lld of %lld chosen above 64\n",
		    (long long)c.E, (long long)c.n_group, (long long)c.topk_group, (long long)above,
		    (long long)c.topk);
		assert_true(above >= 2);
	}
}

#define MIX_JSON(experts, topk)                                                                    \
	"{\"architectures\": [\"MixtralForCausalLM\"], \"model_type\": \"mixtral\", "              \
	"\"hidden_size\": 32, \"intermediate_size\": 16, \"num_attention_heads\": 4, "             \
	"\"num_key_value_heads\": 2, \"num_hidden_layers\": 2, \"vocab_size\": 1000, "             \
	"\"max_position_embeddings\": 256, \"tie_word_embeddings\": false, \"hidden_act\": "       \
	"\"silu\", \"rms_norm_eps\": 1e-05, \"rope_theta\": 1000000.0, "                           \
	"\"num_local_experts\": " experts ", \"num_experts_per_tok\": " topk                       \
	", \"torch_dtype\": \"float32\"}"

#define L4_JSON(experts)                                                                           \
	"{\"architectures\": [\"Llama4ForCausalLM\"], \"hidden_size\": 64, "                       \
	"\"num_attention_heads\": 4, \"num_key_value_heads\": 2, \"head_dim\": 16, "               \
	"\"num_hidden_layers\": 8, \"vocab_size\": 100, \"intermediate_size\": 32, "               \
	"\"intermediate_size_mlp\": 48, \"num_local_experts\": " experts "}"

static void test_limits(void **state)
{
	(void)state;
	expect_cfg(MIX_JSON("512", "8"), WT_OK, "");
	expect_cfg(MIX_JSON("130", "130"), WT_OK, ""); /* top-k up to the experts */
	expect_cfg(MIX_JSON("513", "8"), WT_EUNSUPPORTED, "experts 513");
	expect_cfg(MIX_JSON("513", "8"), WT_EUNSUPPORTED, "<= 512");
	expect_cfg(MIX_JSON("130", "131"), WT_EUNSUPPORTED, "top-k 131");
	expect_cfg(L4_JSON("128"), WT_OK, ""); /* Llama 4 Maverick */
	expect_cfg(L4_JSON("513"), WT_EUNSUPPORTED, "num_local_experts 513");
	expect_cfg(L4_JSON("513"), WT_EUNSUPPORTED, "<= 512");
}

/* Tensor i of the checkpoint: its name into buf, its shape into d; its value scale. */
static float describe(int64_t i, char *buf, size_t cap, st_desc *d)
{
	static const struct {
		const char *leaf;
		int64_t r, c;
		float scale;
	} attn[] = {
	    {"input_layernorm", XHID, 0, 0},           {"self_attn.q_proj", XHID, XHID, 0.3f},
	    {"self_attn.k_proj", 16, XHID, 0.3f},      {"self_attn.v_proj", 16, XHID, 0.4f},
	    {"self_attn.o_proj", XHID, XHID, 0.3f},    {"post_attention_layernorm", XHID, 0, 0},
	    {"block_sparse_moe.gate", XE, XHID, 1.0f},
	};
	static const char *const ex[] = {"w1", "w2", "w3"};
	const int64_t per = 7 + 3 * XE;
	int64_t r, c;
	float scale;
	if (i < 3) {
		static const char *const g[] = {"model.embed_tokens.weight", "model.norm.weight",
		                                "lm_head.weight"};
		snprintf(buf, cap, "%s", g[i]);
		r = i == 1 ? XHID : XV, c = i == 1 ? 0 : XHID, scale = i == 1 ? 0 : 0.5f;
	} else if ((i - 3) % per < 7) {
		int64_t l = (i - 3) / per, j = (i - 3) % per;
		snprintf(buf, cap, "model.layers.%lld.%s.weight", (long long)l, attn[j].leaf);
		r = attn[j].r, c = attn[j].c, scale = attn[j].scale;
	} else {
		int64_t l = (i - 3) / per, j = (i - 3) % per - 7;
		snprintf(buf, cap, "model.layers.%lld.block_sparse_moe.experts.%lld.%s.weight",
		         (long long)l, (long long)(j / 3), ex[j % 3]);
		r = j % 3 == 1 ? XHID : XIE, c = j % 3 == 1 ? XIE : XHID, scale = 0.35f;
	}
	*d = (st_desc){.name = buf, .dtype = WT_F32, .ndim = c ? 2 : 1, .shape = {r, c}};
	return scale;
}

/* The checkpoint into g_root/dir: norms 1 +- 0.1, the others uniform times their scale
 (the router's too: its
 * top-4 of 130 lands above 64 about half the time). */
static void write_ckpt(const char *dir, const char *json)
{
	enum { N = 3 + XL * (7 + 3 * XE) };
	st_desc *d = calloc(N, sizeof(*d));
	char(*names)[96] = calloc(N, sizeof(*names));
	float **data = calloc(N, sizeof(*data));
	assert_true(d && names && data);
	uint64_t s = XSEED;
	for (int64_t i = 0; i < N; i++) {
		float scale = describe(i, names[i], sizeof(names[i]), &d[i]);
		int64_t rows = d[i].shape[0], cols = d[i].ndim == 2 ? d[i].shape[1] : 1;
		data[i] = malloc((size_t)(rows * cols) * sizeof(float));
		assert_non_null(data[i]);
		for (int64_t k = 0; k < rows * cols; k++) {
			float u = unif(&s);
			data[i][k] = scale == 0 ? 1.0f + 0.1f * u : scale * u;
		}
	}
	char *path = tu_path(g_root, dir);
	assert_int_equal(tu_write_file(path, "config.json", json, strlen(json)), 0);
	char *st = tu_path(path, "model.safetensors");
	wt_errbuf err = {0};
	int rv = st_write_path(st, d, (const void *const *)data, N, NULL, 0, &err);
	if (rv != WT_OK)
		print_error("%s: %s\n", st, err.msg);
	assert_int_equal(rv, WT_OK);
	for (int64_t i = 0; i < N; i++)
		free(data[i]);
	free(st);
	free(path);
	free(data);
	free(names);
	free(d);
}

static int setup(void **state)
{
	(void)state;
	g_root = tu_mkdtemp("refx");
	if (g_root == NULL)
		return -1;
	print_message("checkpoints: %d experts top-%d, seed %#llx, in %s\n", XE, XK,
	              (unsigned long long)XSEED, g_root);
	write_ckpt("mixtral130", MIX_JSON("130", "4"));
	return 0;
}

/* The full path's routes choose experts above 64, several in one token. */
static void test_routes_above_64(void **state)
{
	(void)state;
	model m = {0};
	ref_cfg cfg;
	ref_set ck = {0};
	wt_errbuf err = {0};
	static float logits[N_TOK * XV];
	int64_t routes[XL * N_TOK * XK];
	open_model(&m, "mixtral130");
	assert_int_equal(ref_load_ckpt(m.c, &cfg, &ck, &err), WT_OK);
	assert_true(cfg.E == XE && cfg.topk == XK);
	assert_int_equal(ref_forward_full(&cfg, &ck, g_tokens, N_TOK, logits, routes, &err), WT_OK);
	int64_t above = 0, below = 0, most = 0;
	for (size_t t = 0; t < XL * N_TOK; t++) {
		int64_t n = 0;
		for (int64_t j = 0; j < XK; j++) {
			int64_t e = routes[t * XK + j];
			assert_true(e >= 0 && e < XE);
			for (int64_t o = 0; o < j; o++)
				assert_true(routes[t * XK + o] != e); /* distinct */
			n += e >= 64;
		}
		above += n;
		below += XK - n;
		most = n > most ? n : most;
	}
	print_message("routes: %lld above 64, %lld below, up to %lld of %d in one token\n",
	              (long long)above, (long long)below, (long long)most, XK);
	assert_true(above >= 8 && below >= 1 && most >= 3);
	ref_set_clear(&ck);
	close_model(&m);
}

static void test_sharded(void **state)
{
	(void)state;
	expect_pass("mixtral130", 2, 1, WT_QUANT_NONE, 0);
	expect_pass("mixtral130", 1, 2, WT_QUANT_NONE, 0); /* 65 + 65 */
	expect_pass("mixtral130", 1, 4, WT_QUANT_NONE, 1);
	expect_pass("mixtral130", 2, 2, WT_QUANT_NONE, 0);
}

static void test_caught(void **state)
{
	(void)state;
	expect_swapped("mixtral130", 1, 2, "model.layers.1.block_sparse_moe.experts.w2_weight",
	               "EP 2 expert stacks exchanged");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_routers), cmocka_unit_test(test_deepseek_groups),
	    cmocka_unit_test(test_limits),  cmocka_unit_test(test_routes_above_64),
	    cmocka_unit_test(test_sharded), cmocka_unit_test(test_caught),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
