/*
 * test_shardmap_audio.h — what the planner tests of families with a Whisper audio encoder
 * (test_shardmap_voxtral.c, test_shardmap_ultravox.c) build and check alike: the encoder's
 * tensors, what stays whole of it, one encoder layer of a rank by hand. Include
 * test_shardmap_fx.h first.
 */
#ifndef WT_TEST_SHARDMAP_AUDIO_H
#define WT_TEST_SHARDMAP_AUDIO_H

/* The encoder's tensors outside its layers that stay whole on every rank (below at) but the
 * conv weights. */
static const char *const fx_whisper_top[] = {"conv1.bias", "conv2.bias", "embed_positions.weight",
                                             "layer_norm.weight", "layer_norm.bias"};

/* A Whisper encoder under at ("audio_tower."), width ae, MLP ai, mel input channels, pos
 * positions: conv1 [ae, mel, 3] / conv2 [ae, ae, 3] and their biases, embed_positions
 * [pos, ae], layer_norm, then `layers` layers. */
static __attribute__((unused)) void tm_add_whisper_tower(tm_model *m, const char *at, int layers,
                                                         int64_t ae, int64_t ai, int64_t mel,
                                                         int64_t pos)
{
	char b[200];
	snprintf(b, sizeof(b), "%sconv1.weight", at);
	tm_add(m, b, WT_DTYPE_INVALID, 3, ae, mel, 3);
	snprintf(b, sizeof(b), "%sconv2.weight", at);
	tm_add(m, b, WT_DTYPE_INVALID, 3, ae, ae, 3);
	const int64_t top_n[][2] = {{ae, 0}, {ae, 0}, {pos, ae}, {ae, 0}, {ae, 0}};
	for (size_t k = 0; k < sizeof(fx_whisper_top) / sizeof(fx_whisper_top[0]); k++) {
		snprintf(b, sizeof(b), "%s%s", at, fx_whisper_top[k]);
		tm_add2(m, b, top_n[k][0], top_n[k][1]);
	}
	const fx_leaf layer[] = {FX_WHISPER_LAYER_LEAVES(ae, ai)};
	for (int l = 0; l < layers; l++)
		for (size_t k = 0; k < sizeof(layer) / sizeof(layer[0]); k++) {
			snprintf(b, sizeof(b), "%slayers.%d.%s", at, l, layer[k].leaf);
			tm_add2(m, b, layer[k].n, layer[k].k);
		}
}

/* Rank r holds the encoder's whole tensors (fx_whisper_top and the conv weights) whole, conv1
 * [ae, mel, 3]. */
static __attribute__((unused)) void fx_whisper_whole_is(const fx *f, uint32_t r, const char *at,
                                                        int64_t ae, int64_t mel)
{
	char b[200];
	for (size_t k = 0; k < sizeof(fx_whisper_top) / sizeof(fx_whisper_top[0]); k++) {
		snprintf(b, sizeof(b), "%s%s", at, fx_whisper_top[k]);
		repl(f, r, b);
	}
	snprintf(b, sizeof(b), "%sconv2.weight", at);
	repl(f, r, b);
	snprintf(b, sizeof(b), "%sconv1.weight", at);
	repl(f, r, b);
	shp(f, r, b, 3, ae, mel, 3);
}

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
