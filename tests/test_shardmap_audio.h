/*
 * test_shardmap_audio.h — what the planner tests of families with a Whisper audio encoder
 * (test_shardmap_voxtral.c, test_shardmap_ultravox.c) check alike: one encoder layer of a rank
 * by hand. Include test_shardmap_fx.h first.
 */
#ifndef WT_TEST_SHARDMAP_AUDIO_H
#define WT_TEST_SHARDMAP_AUDIO_H

/* Rank r's Whisper encoder layer l under at ("audio_tower.") at TP T, width ae, MLP ai: q/k/v rows
 * by heads fused, the bias's k rows zero, out_proj / fc2 columns, fc1 rows with its bias, the rest
 * whole. */
static __attribute__((unused)) void fx_whisper_layer_is(const fx *f, uint32_t T, uint32_t r,
                                                        const char *at, int l, int64_t ae,
                                                        int64_t ai)
{
	char n[200], a[200];
	int64_t ql = ae / T, il = ai / T;
	snprintf(n, sizeof(n), "%slayers.%d.self_attn.qkv_proj.weight", at, l);
	shp(f, r, n, 2, 3 * ql, ae, 0);
	static const char *const qkv[] = {"q", "k", "v"};
	for (int p = 0; p < 3; p++) {
		snprintf(a, sizeof(a), "%slayers.%d.self_attn.%s_proj.weight", at, l, qkv[p]);
		rows_at(f, r, n, p * ql, a, r * ql, ql);
	}
	snprintf(n, sizeof(n), "%slayers.%d.self_attn.qkv_proj.bias", at, l);
	shp(f, r, n, 1, 3 * ql, 0, 0);
	snprintf(a, sizeof(a), "%slayers.%d.self_attn.q_proj.bias", at, l);
	rows_at(f, r, n, 0, a, r * ql, ql);
	snprintf(a, sizeof(a), "%slayers.%d.self_attn.v_proj.bias", at, l);
	rows_at(f, r, n, 2 * ql, a, r * ql, ql);
	const uint8_t *z = out_bytes(f, r, n) + ql * 2;
	for (int64_t k = 0; k < ql * 2; k++)
		assert_int_equal(z[k], 0);
	snprintf(n, sizeof(n), "%slayers.%d.self_attn.out_proj.weight", at, l);
	cols_of(f, r, T, n, n, ae, ae);
	snprintf(n, sizeof(n), "%slayers.%d.fc1.weight", at, l);
	rows_at(f, r, n, 0, n, r * il, il);
	shp(f, r, n, 2, il, ae, 0);
	snprintf(n, sizeof(n), "%slayers.%d.fc1.bias", at, l);
	rows_at(f, r, n, 0, n, r * il, il);
	shp(f, r, n, 1, il, 0, 0);
	snprintf(n, sizeof(n), "%slayers.%d.fc2.weight", at, l);
	cols_of(f, r, T, n, n, ae, ai);
	static const char *const whole[] = {
	    "self_attn.out_proj.bias",   "self_attn_layer_norm.weight",
	    "self_attn_layer_norm.bias", "fc2.bias",
	    "final_layer_norm.weight",   "final_layer_norm.bias"};
	for (size_t k = 0; k < sizeof(whole) / sizeof(whole[0]); k++) {
		snprintf(n, sizeof(n), "%slayers.%d.%s", at, l, whole[k]);
		repl(f, r, n);
	}
}

#endif
