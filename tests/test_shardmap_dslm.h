/*
 * test_shardmap_dslm.h — the DeepSeek language model the DeepSeek-VL2 and DeepSeek-OCR planner
 * tests (test_shardmap_deepseek_vl2.c, test_shardmap_deepseek_ocr.c) serve beside their towers,
 * and its three text twins: the deepseek (plain attention), deepseek_v2 (MLA) and deepseek_v3
 * (q LoRA, noaux_tc) families' configs (text_cfg, text_fam) and weights (lm_model: layer 0
 * dense, 1-2 MoE), under the checkpoint's names model.* / lm_head; a rank's LM by hand
 * (dslm_lm_is, dslm_lm_tensors); add_4d, a 4-D tensor. The includer defines SEED, HID, HD, I,
 * IE, NE, V, VP, DSLM_PRE (the rank's LM names' prefix: "" or "language.") and LM_KEYS /
 * V2_KEYS / V3_KEYS (the language_config keys of each kind) and includes
 * test_shardmap_util.h, test_shardmap_fx.h and test_shardmap_experts.h first.
 */
#ifndef WT_TEST_SHARDMAP_DSLM_H
#define WT_TEST_SHARDMAP_DSLM_H

enum { K_MHA = 0, K_V2 = 1, K_V3 = 2 };

static const char *const text_cfg[] = {
    "{\"architectures\":[\"DeepseekForCausalLM\"],\"model_type\":\"deepseek\"," LM_KEYS "}",
    "{\"architectures\":[\"DeepseekV2ForCausalLM\"],\"model_type\":\"deepseek_v2\"," V2_KEYS "}",
    "{\"architectures\":[\"DeepseekV3ForCausalLM\"],\"model_type\":\"deepseek_v3\"," V3_KEYS "}"};
static const char *const text_fam[] = {"deepseek", "deepseek_v2", "deepseek_v3"};

/* Layer i's MLA attention (q_a / q_b with a q LoRA, else q_proj) and its norms. */
static void add_mla(tm_model *m, int i, bool qlora)
{
	char b[200];
	tm_fmt(b, sizeof(b), TM_L, i, "input_layernorm.weight");
	tm_add2(m, b, HID, 0);
	tm_fmt(b, sizeof(b), TM_L, i, "post_attention_layernorm.weight");
	tm_add2(m, b, HID, 0);
	if (qlora) {
		tm_lin_l(m, i, "self_attn.q_a_proj.weight", 64, HID, 0);
		tm_fmt(b, sizeof(b), TM_L, i, "self_attn.q_a_layernorm.weight");
		tm_add2(m, b, 64, 0);
		tm_lin_l(m, i, "self_attn.q_b_proj.weight", 8 * 24, 64, 0);
	} else
		tm_lin_l(m, i, "self_attn.q_proj.weight", 8 * 24, HID, 0);
	tm_lin_l(m, i, "self_attn.kv_a_proj_with_mqa.weight", 32 + 8, HID, 0);
	tm_fmt(b, sizeof(b), TM_L, i, "self_attn.kv_a_layernorm.weight");
	tm_add2(m, b, 32, 0);
	tm_lin_l(m, i, "self_attn.kv_b_proj.weight", 8 * 32, 32, 0);
	tm_lin_l(m, i, "self_attn.o_proj.weight", HID, 8 * 16, 0);
}

/* The language model of kind k (model.*, lm_head): layer 0 dense, 1-2 MoE (V3: with the
 * router's e_score_correction_bias). */
static tm_model *lm_model(int k)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	tm_top(m, V, HID, 1);
	char b[200];
	for (int i = 0; i < 3; i++) {
		if (k == K_MHA)
			tm_attn(m, i, 8, 8, HD, HID, 0, 0);
		else
			add_mla(m, i, k == K_V3);
		if (i == 0) {
			tm_mlp(m, i, "mlp.", I, HID);
			continue;
		}
		tm_fmt(b, sizeof(b), TM_L, i, "mlp.gate.weight");
		tm_add2(m, b, NE, HID);
		if (k == K_V3) {
			tm_fmt(b, sizeof(b), TM_L, i, "mlp.gate.e_score_correction_bias");
			tm_add(m, b, WT_F32, 1, NE, 0, 0);
		}
		tm_experts(m, i, "mlp.experts.", NE, IE, HID, "gate_proj", "up_proj", "down_proj");
		tm_mlp(m, i, "mlp.shared_experts.", 2 * IE, HID);
	}
	return m;
}

#define DSLM_L0 DSLM_PRE "model.layers.0."
#define DSLM_L1 DSLM_PRE "model.layers.1."
#define DSLM_A1 DSLM_L1 "self_attn."

static const fx_experts dslm_xp = {DSLM_L1 "mlp.experts.w13_weight",
                                   DSLM_L1 "mlp.experts.w2_weight",
                                   DSLM_L1 "mlp.experts.%lld.%s.weight",
                                   "gate_proj",
                                   "up_proj",
                                   "down_proj",
                                   HID,
                                   IE};

/* Rank r of T's MLA layer 1 by hand: q_proj (V2) rows by heads (24 a head), kv_b_proj by
 * heads (32 a head), o_proj by columns (16 a head), kv_a and its norm whole. */
static void dslm_mla_is(const fx *f, uint32_t r, uint32_t T)
{
	int64_t hl = 8 / T;
	shp(f, r, DSLM_A1 "q_proj.weight", 2, hl * 24, HID, 0);
	rows_at(f, r, DSLM_A1 "q_proj.weight", 0, DSLM_A1 "q_proj.weight", r * hl * 24, hl * 24);
	rows_at(f, r, DSLM_A1 "kv_b_proj.weight", 0, DSLM_A1 "kv_b_proj.weight", r * hl * 32,
	        hl * 32);
	cols_of(f, r, T, DSLM_A1 "o_proj.weight", DSLM_A1 "o_proj.weight", HID, 8 * 16);
	repl(f, r, DSLM_A1 "kv_a_proj_with_mqa.weight");
	repl(f, r, DSLM_A1 "kv_a_layernorm.weight");
}

/* Rank r of T's language model of kind k (K_MHA or K_V2, no EP) by hand: layer 1's attention
 * (MHA by heads, V2's MLA), layer 0's dense MLP, layer 1's shared experts, every expert's
 * rows / columns r of T, the router and the final norm whole, the LM head's and embedding's
 * vocabulary rows. */
static void dslm_lm_is(const fx *f, uint32_t r, uint32_t T, int k)
{
	if (k == K_MHA)
		fx_attn_is(f, r, T, DSLM_A1, "o_proj.weight", 8, 8, HD, HID);
	else
		dslm_mla_is(f, r, T);
	fx_mlp_is(f, r, T, DSLM_L0 "mlp.", I, HID);
	fx_mlp_is(f, r, T, DSLM_L1 "mlp.shared_experts.", 2 * IE, HID);
	fx_experts_are(f, &dslm_xp, r, 0, NE, r * IE / T, IE / T, false);
	repl(f, r, DSLM_L1 "mlp.gate.weight");
	repl(f, r, DSLM_PRE "model.norm.weight");
	fx_vocab_is(f, r, T, DSLM_PRE "lm_head.weight", V, VP, HID);
	fx_vocab_is(f, r, T, DSLM_PRE "model.embed_tokens.weight", V, VP, HID);
}

/* The tensors of a rank's language model of kind k (K_MHA or K_V2): 3 + layer 0 (2 norms,
 * attention, 2) + 2 x (2 norms, attention, router, 2 stacks, 2 shared); MHA attention 2
 * tensors, V2's 5. */
static size_t dslm_lm_tensors(int k)
{
	size_t att = k == K_MHA ? 2 : 5;
	return 3 + (4 + att) + 2 * (7 + att);
}

static void add_4d(tm_model *m, const char *name, int64_t a, int64_t b, int64_t c, int64_t d)
{
	tm_add(m, name, WT_DTYPE_INVALID, 1, a * b * c * d, 0, 0);
	st_desc *s = &m->d[m->n - 1];
	s->ndim = 4;
	s->shape[0] = a;
	s->shape[1] = b;
	s->shape[2] = c;
	s->shape[3] = d;
}

#endif
