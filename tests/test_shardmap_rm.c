/*
 * test_shardmap_rm.c — Qwen2's reward models (docs/format.md section 2.7, Qwen2 reward
 * models): Qwen2ForRewardModel and Qwen2ForProcessRewardModel (remote code), cut as vLLM's
 * qwen2_rm.py loads them: Qwen2Model under model. cut as Qwen2ForCausalLM's, byte for byte
 * (hand slices of the fused q/k/v rows and biases at TP 2 and 4), no lm_head (a stray one
 * skipped), the score head nn.Sequential(ColumnParallelLinear(hid, hid), ReLU,
 * RowParallelLinear(hid, num_labels)): score.0's weight and bias by rows, score.2's weight by
 * columns, its bias whole, both weights quantized (int8 codes, fp8), coverage at TP 1, 2, 4, 8,
 * the class's 1 / 2 labels whatever config.json says, the refusals. Seed fixed.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "kernels/kernels.h"
#include "loader/loader.h"
#include "shardmap/shardmap_int.h"
#include "test_shardmap_util.h"

#define SEED 0x2e3dull
#include "test_shardmap_fx.h"

#define HID 256
#define I   512

#define CFG(arch, rest)                                                                            \
	"{\"architectures\":[\"" arch "\"],\"model_type\":\"qwen2\",\"hidden_size\":256,"          \
	"\"num_attention_heads\":8,\"num_key_value_heads\":2,\"intermediate_size\":512,"           \
	"\"vocab_size\":1024,\"num_hidden_layers\":2" rest "}"
#define RM  CFG("Qwen2ForRewardModel", "")
#define PRM CFG("Qwen2ForProcessRewardModel", "")

/* Qwen2's decoder (q/k/v biases), the score head of `labels` outputs (none when 0; no score.0
 * bias when !b0), lm_head last when lm (so the other values stay the same). */
static tm_model *rm_model(int labels, bool b0, bool lm)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	tm_top(m, 1024, HID, 0);
	for (int i = 0; i < 2; i++) {
		tm_attn(m, i, 8, 2, 32, HID, 1, 0);
		tm_mlp(m, i, "mlp.", I, HID);
	}
	if (labels > 0) {
		tm_add2(m, "score.0.weight", HID, HID);
		if (b0)
			tm_add2(m, "score.0.bias", HID, 0);
		tm_add2(m, "score.2.weight", labels, HID);
		tm_add2(m, "score.2.bias", labels, 0);
	}
	if (lm)
		tm_add2(m, "lm_head.weight", 1024, HID);
	return m;
}

#define L1 "model.layers.1."

/* Rank r of T: layer 1's q/k/v rows by hand, score.0's rows and bias rows, score.2's columns,
 * score.2.bias whole. */
static void hand_slices(const fx *f, uint32_t T, uint32_t r, int labels)
{
	int64_t hl = 8 / T, kvl = 2 >= T ? 2 / T : 1, kvs = 2 >= T ? r : r / (T / 2);
	const char *qkv = L1 "self_attn.qkv_proj.weight";
	rows_at(f, r, qkv, 0, L1 "self_attn.q_proj.weight", r * hl * 32, hl * 32);
	rows_at(f, r, qkv, (hl + kvl) * 32, L1 "self_attn.v_proj.weight", kvs * kvl * 32, kvl * 32);
	rows_at(f, r, L1 "self_attn.qkv_proj.bias", hl * 32, L1 "self_attn.k_proj.bias",
	        kvs * kvl * 32, kvl * 32);
	int64_t n = HID / T;
	shp(f, r, "score.0.weight", 2, n, HID, 0);
	rows_at(f, r, "score.0.weight", 0, "score.0.weight", r * n, n);
	rows_at(f, r, "score.0.bias", 0, "score.0.bias", r * n, n);
	cols_of(f, r, T, "score.2.weight", "score.2.weight", labels, HID);
	repl(f, r, "score.2.bias");
	repl(f, r, "model.norm.weight");
}

/* Every tensor of the causal LM b's rank r is the reward model a's, byte for byte; a has the
 * score head's four besides. */
static void decoder_is_lm(const fx *a, const fx *b, uint32_t r)
{
	size_t nb = shardmap_rank_n_tensors(b->p, r);
	for (size_t i = 0; i < nb; i++) {
		const sm_out_info *u = shardmap_rank_tensor(b->p, r, i);
		assert_int_equal(info(a, r, u->name)->nbytes, u->nbytes);
		if (memcmp(out_bytes(a, r, u->name), b->pr->b[r][i], u->nbytes) != 0)
			fail_msg("rank %u '%s' differs from Qwen2ForCausalLM's", r, u->name);
	}
	assert_int_equal(shardmap_rank_n_tensors(a->p, r), nb + 4);
}

static void test_slices(void **state)
{
	(void)state;
	static const uint32_t tps[] = {2, 4};
	for (size_t i = 0; i < 2; i++)
		for (int k = 0; k < 2; k++) {
			fx c, b;
			fx_open(&c, rm_model(k + 1, true, false), k ? PRM : RM, tps[i], 1, 0, true);
			fx_open(&b, rm_model(0, true, false), tm_qwen2_cfg, tps[i], 1, 0, true);
			for (uint32_t r = 0; r < tps[i]; r++) {
				hand_slices(&c, tps[i], r, k + 1);
				decoder_is_lm(&c, &b, r);
			}
			fx_close(&c);
			fx_close(&b);
		}
}

/* A stray lm_head.weight (vLLM's ignore_unexpected_prefixes): skipped and listed, the ranks
 * unchanged; num_labels / id2label in config.json do not change the class's outputs. */
static void test_layouts(void **state)
{
	(void)state;
	fx a, b, c;
	fx_open(&a, rm_model(1, true, false), RM, 2, 1, 0, true);
	fx_open(&b, rm_model(1, true, true), RM, 2, 1, 0, true);
	fx_open(
	    &c, rm_model(1, true, false),
	    CFG("Qwen2ForRewardModel", ",\"num_labels\":5,\"id2label\":{\"0\":\"a\",\"1\":\"b\"}"),
	    2, 1, 0, true);
	for (uint32_t r = 0; r < 2; r++) {
		fx_same_rank(&a, &b, r, NULL);
		fx_same_rank(&a, &c, r, NULL);
	}
	assert_int_equal(shardmap_n_skipped(b.p), 1);
	assert_true(fx_skipped(&b, "lm_head.weight"));
	assert_string_equal(shardmap_family_find("Qwen2ForRewardModel", NULL)->name, "qwen2_rm");
	assert_string_equal(shardmap_family_find("Qwen2ForProcessRewardModel", NULL)->name,
	                    "qwen2_prm");
	fx_close(&a);
	fx_close(&b);
	fx_close(&c);
}

/* int8-channel TP 2: score.0 and score.2 quantized (codes of score.2's rank columns checked,
 * ReLU aside the engine's RowParallelLinear), the biases, embed_tokens and norms kept BF16.
 * fp8-channel TP 4: the same split. */
static void test_quant(void **state)
{
	(void)state;
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = 2;
	l.quant = WT_QUANT_INT8_CHANNEL;
	fx f;
	fx_open_l(&f, rm_model(2, true, false), PRM, &l, true);
	static const char *const keep[] = {"model.embed_tokens.weight", "model.norm.weight",
	                                   "score.0.bias", "score.2.bias"};
	static const char *const q8[] = {"score.0.weight", "score.2.weight",
	                                 L1 "self_attn.qkv_proj.weight", L1 "mlp.down_proj.weight"};
	for (uint32_t r = 0; r < 2; r++) {
		fx_quant_split(&f, r, WT_BF16, keep, 4, q8, 4);
		const int8_t *q = (const int8_t *)out_bytes(&f, r, "score.2.weight");
		const float *sc = (const float *)out_bytes(&f, r, "score.2.weight_scale");
		size_t rb;
		const uint16_t *x = (const uint16_t *)src_rows(&f, "score.2.weight", 0, &rb);
		for (int64_t a = 0; a < 2; a++)
			int8_row_is(q + a * HID / 2, sc[a], x + a * HID + r * HID / 2, HID / 2);
	}
	fx_close(&f);
	l.tp_size = 4;
	l.quant = WT_QUANT_FP8_CHANNEL;
	fx_open_l(&f, rm_model(1, true, false), RM, &l, true);
	assert_int_equal(info(&f, 3, "score.0.weight")->dtype, WT_F8_E4M3);
	assert_int_equal(info(&f, 3, "score.2.weight")->dtype, WT_F8_E4M3);
	assert_int_equal(info(&f, 3, "score.0.bias")->dtype, WT_BF16);
	assert_int_equal(info(&f, 3, "score.2.bias")->dtype, WT_BF16);
	fx_close(&f);
}

static void test_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	coverage(rm_model(1, true, true), RM, 2, lays, 4);
	coverage(rm_model(2, true, false), PRM, 2, lays, 4);
}

/* The class's outputs (vLLM sets hf_config.num_labels): 1 and 2 whatever config.json says;
 * classifier_from_token / method are not read (vLLM's qwen2_rm.py has no online conversion). */
static void test_defaults(void **state)
{
	(void)state;
	static const struct {
		const char *js;
		int64_t labels;
	} cases[] = {
	    {RM, 1},
	    {PRM, 2},
	    {CFG("Qwen2ForRewardModel", ",\"num_labels\":7"), 1},
	    {CFG("Qwen2ForProcessRewardModel", ",\"id2label\":{\"0\":\"a\"}"), 2},
	    {CFG("Qwen2ForRewardModel", ",\"classifier_from_token\":[\"no\",\"yes\"]"), 1},
	};
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		ckpt_config c;
		wt_errbuf err = {0};
		assert_int_equal(ckpt_config_parse(cases[k].js, strlen(cases[k].js), &c, &err),
		                 WT_OK);
		assert_int_equal(c.rob_num_labels, cases[k].labels);
		assert_false(c.cls_from_token);
		ckpt_config_clear(&c);
	}
}

static void test_errors(void **state)
{
	(void)state;
	/* score.2's rows other than the class's labels; score.0's bias missing; a single-Linear
	 * score.weight (the seq-cls head) or a score.1 are not this head's */
	fx_refused(rm_model(2, true, false), RM, WT_ESHAPE, "score.2.", "implies [1");
	fx_refused(rm_model(1, true, false), PRM, WT_ESHAPE, "score.2.", "implies [2");
	fx_refused(rm_model(1, false, false), RM, WT_ENOTFOUND, "score.0.bias", "");
	fx_refused(rm_model(0, true, false), RM, WT_ENOTFOUND, "score.", "");
	tm_model *m = rm_model(1, true, false);
	tm_add2(m, "score.weight", 1, HID);
	fx_refused(m, RM, WT_EUNSUPPORTED, "score.weight", "unknown tensor");
	m = rm_model(1, true, false);
	tm_add2(m, "model.layers.0.self_attn.q_norm.weight", 32, 0);
	fx_refused(m, RM, WT_EUNSUPPORTED, "q_norm", "unknown tensor");
	/* heads: 8 do not split 16 ways */
	fx_refused_tp(rm_model(1, true, false), RM, 16, WT_ELAYOUT, "tp_size 16",
	              "num_attention_heads 8");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_slices),   cmocka_unit_test(test_layouts),
	    cmocka_unit_test(test_quant),    cmocka_unit_test(test_coverage),
	    cmocka_unit_test(test_defaults), cmocka_unit_test(test_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
