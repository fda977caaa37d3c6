/*
 * test_shardmap_falcon.h — the Falcon checkpoints test_shardmap_falcon.c (FalconForCausalLM) and
 * test_shardmap_falcon_rw.c (RWForCausalLM, the original releases' remote code) cut: hid 128,
 * H 8, head size 16, the MLP 4 * 128, V 1000, 2 layers, in the three query_key_value layouts
 * (falcon-40b's num_kv_heads groups, falcon-7b's multi_query, falcon-rw-1b's per head), and the
 * per-group q/k/v check. Include after test_shardmap_util.h and test_shardmap_fx.h.
 */
#ifndef WT_TEST_SHARDMAP_FALCON_H
#define WT_TEST_SHARDMAP_FALCON_H

#define HID   128
#define HD    16
#define I4    512
#define L1    "transformer.h.1."
#define QKV   L1 "self_attention.query_key_value.weight"
#define QKVB  L1 "self_attention.query_key_value.bias"
#define DENSE L1 "self_attention.dense.weight"

enum { K_NDA, K_MQ, K_RW };

/* The model of layout kind (its kv heads, norms and biases); lm_head.weight when head. */
static tm_model *tm_falcon(int kind, int head)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	int64_t kv = kind == K_NDA ? 2 : kind == K_MQ ? 1 : 8;
	char n[200];
	tm_add2(m, "transformer.word_embeddings.weight", 1000, HID);
	tm_add2(m, "transformer.ln_f.weight", HID, 0);
	tm_add2(m, "transformer.ln_f.bias", HID, 0);
	if (head)
		tm_add2(m, "lm_head.weight", 1000, HID);
	static const char *const nda_ln[] = {"ln_attn", "ln_mlp"};
	static const char *const mq_ln[] = {"input_layernorm"};
	static const char *const rw_ln[] = {"input_layernorm", "post_attention_layernorm"};
	const char *const *ln = kind == K_NDA ? nda_ln : kind == K_MQ ? mq_ln : rw_ln;
	int n_ln = kind == K_MQ ? 1 : 2;
	for (int i = 0; i < 2; i++) {
		for (int k = 0; k < n_ln; k++) {
			snprintf(n, sizeof(n), "transformer.h.%d.%s.weight", i, ln[k]);
			tm_add2(m, n, HID, 0);
			snprintf(n, sizeof(n), "transformer.h.%d.%s.bias", i, ln[k]);
			tm_add2(m, n, HID, 0);
		}
		static const struct {
			const char *leaf;
			int64_t a, b;
		} L[] = {{"self_attention.query_key_value", 0, HID},
		         {"self_attention.dense", HID, HID},
		         {"mlp.dense_h_to_4h", I4, HID},
		         {"mlp.dense_4h_to_h", HID, I4}};
		for (size_t k = 0; k < 4; k++) {
			int64_t rows = L[k].a ? L[k].a : (8 + 2 * kv) * HD;
			snprintf(n, sizeof(n), "transformer.h.%d.%s.weight", i, L[k].leaf);
			tm_add2(m, n, rows, L[k].b);
			if (kind == K_RW) {
				snprintf(n, sizeof(n), "transformer.h.%d.%s.bias", i, L[k].leaf);
				tm_add2(m, n, rows, 0);
			}
		}
	}
	return m;
}

/* Rank r of T's [q_r; k_r; v_r] of the grouped rows (fx_qkv_grouped_is: 8 heads of 16). */
static void qkv_is(const fx *f, uint32_t r, uint32_t T, int64_t KV, const char *name)
{
	fx_qkv_grouped_is(f, r, T, 8, KV, HD, name);
}

#endif
