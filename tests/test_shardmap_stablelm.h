/*
 * test_shardmap_stablelm.h — the StableLM model the planner tests of StableLmForCausalLM and
 * StableLMEpochForCausalLM build (test_shardmap_stablelm.c, test_shardmap_stablelm_epoch.c).
 * Define SEED and include test_shardmap_util.h first.
 */
#ifndef WT_TEST_SHARDMAP_STABLELM_H
#define WT_TEST_SHARDMAP_STABLELM_H

/* A StableLM model (hid 128, V 1000, 2 layers, untied): LayerNorms with biases, k / v kvw rows,
 * the MLP I wide; q/k/v biases when qkv_bias. */
static __attribute__((unused)) tm_model *tm_stablelm_of(int qkv_bias, int64_t kvw, int64_t I)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	tm_add2(m, "model.embed_tokens.weight", 1000, 128);
	tm_add2(m, "model.norm.weight", 128, 0);
	tm_add2(m, "model.norm.bias", 128, 0);
	tm_add2(m, "lm_head.weight", 1000, 128);
	char b[200];
	static const char *const norms[] = {"input_layernorm.weight", "input_layernorm.bias",
	                                    "post_attention_layernorm.weight",
	                                    "post_attention_layernorm.bias"};
	for (int i = 0; i < 2; i++) {
		for (size_t k = 0; k < sizeof(norms) / sizeof(norms[0]); k++) {
			tm_fmt(b, sizeof(b), TM_L, i, norms[k]);
			tm_add2(m, b, 128, 0);
		}
		if (qkv_bias) {
			tm_fmt(b, sizeof(b), TM_L, i, "self_attn.q_proj.bias");
			tm_add2(m, b, 128, 0);
			tm_fmt(b, sizeof(b), TM_L, i, "self_attn.k_proj.bias");
			tm_add2(m, b, kvw, 0);
			tm_fmt(b, sizeof(b), TM_L, i, "self_attn.v_proj.bias");
			tm_add2(m, b, kvw, 0);
		}
		tm_lin_l(m, i, "self_attn.q_proj.weight", 128, 128, 0);
		tm_lin_l(m, i, "self_attn.k_proj.weight", kvw, 128, 0);
		tm_lin_l(m, i, "self_attn.v_proj.weight", kvw, 128, 0);
		tm_lin_l(m, i, "self_attn.o_proj.weight", 128, 128, 0);
		tm_lin_l(m, i, "mlp.gate_proj.weight", I, 128, 0);
		tm_lin_l(m, i, "mlp.up_proj.weight", I, 128, 0);
		tm_lin_l(m, i, "mlp.down_proj.weight", 128, I, 0);
	}
	return m;
}

#endif
