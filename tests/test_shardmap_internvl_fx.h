/*
 * test_shardmap_internvl_fx.h — what InternVL's planner tests share (test_shardmap_internvl.c,
 * test_shardmap_internvl_moe.c): the sizes, the InternViT tower and projector written into a
 * tm_model in a name layout (the vision_config switches of opt), and a rank's tower checked by
 * hand (fc1 by rows, fc2 by columns, the rest whole). Include test_shardmap_fx.h first.
 */
#ifndef WT_TEST_SHARDMAP_INTERNVL_FX_H
#define WT_TEST_SHARDMAP_INTERNVL_FX_H

/* LM: hid 64, H 8, KV 2, d 8, I 128, V 128, L 1. Vision: width 32, 4 heads, MLP 64, 2 layers,
 * image 8 / patch 2: 4 x 4 patches, 17 positions. Projector: 2 x 2 merged, 128 wide. */
#define HID 64
#define VE  32
#define VI  64
#define VNP 17
#define VM  128

/* vision_config's sizes: width, MLP, heads, image, patch */
#define VSIZES(w, i, h, img, p)                                                                    \
	"\"hidden_size\":" w ",\"intermediate_size\":" i ",\"num_attention_heads\":" h             \
	",\"num_hidden_layers\":2,\"image_size\":" img ",\"patch_size\":" p
#define VKEYS VSIZES("32", "64", "4", "[8,8]", "[2,2]")
#define VT    "vision_tower."
#define VB    VT "encoder.layer.%d."
#define PJ    "multi_modal_projector."
#define LM    "language_model.model."

/* The tower's variants (the vision_config switches off InternVL3's) */
enum {
	O_NOBIAS = 1,  /* attention_bias false: q/k/v without biases */
	O_QKN = 2,     /* use_qk_norm: q_norm / k_norm [VE] */
	O_RMS = 4,     /* norm_type rms_norm: layernorm_before / _after without biases */
	O_MASK = 8,    /* use_mask_token: embeddings.mask_token */
	O_NOPOS = 16,  /* use_absolute_position_embeddings false: no position table */
	O_POOLLN = 32, /* use_mean_pooling false: the final layernorm */
	O_QWEN3 = 64,  /* InternVL3.5's Qwen3 LM: head_dim 16, q_norm / k_norm, no q/k/v biases */
};

/* The block's tensors; the q/k/v biases, q/k norms and the LayerNorm biases by the switches */
static const fx_leaf block[] = {
    {"attention.q_proj.weight", VE, VE},
    {"attention.k_proj.weight", VE, VE},
    {"attention.v_proj.weight", VE, VE},
    {"attention.projection_layer.weight", VE, VE},
    {"attention.projection_layer.bias", VE, 0},
    {"layernorm_before.weight", VE, 0},
    {"layernorm_after.weight", VE, 0},
    {"lambda_1", VE, 0},
    {"lambda_2", VE, 0},
    {"mlp.fc1.weight", VI, VE},
    {"mlp.fc1.bias", VI, 0},
    {"mlp.fc2.weight", VE, VI},
    {"mlp.fc2.bias", VE, 0},
};
static const char *const qkv_bias[] = {"attention.q_proj.bias", "attention.k_proj.bias",
                                       "attention.v_proj.bias"};
static const char *const ln_bias[] = {"layernorm_before.bias", "layernorm_after.bias"};
static const char *const qk_norm[] = {"attention.q_norm.weight", "attention.k_norm.weight"};

static const fx_leaf proj[] = {
    {PJ "layer_norm.weight", VM, 0},  {PJ "layer_norm.bias", VM, 0},
    {PJ "linear_1.weight", HID, VM},  {PJ "linear_1.bias", HID, 0},
    {PJ "linear_2.weight", HID, HID}, {PJ "linear_2.bias", HID, 0},
};

/* A [1, a, VE] parameter of the embeddings in layout y. */
static __attribute__((unused)) void add_token(tm_model *m, lay y, const char *c, int64_t a)
{
	char b[200];
	mm_ck_name(b, sizeof(b), c, y);
	tm_add(m, b, WT_DTYPE_INVALID, 3, 1, a, VE);
}

/* The tower with the switches of opt and the projector, in layout y. */
static __attribute__((unused)) void ivl_add_tower(tm_model *m, lay y, unsigned opt)
{
	char b[200];
	add_token(m, y, VT "embeddings.cls_token", 1);
	if (opt & O_MASK)
		add_token(m, y, VT "embeddings.mask_token", 1);
	if (!(opt & O_NOPOS))
		add_token(m, y, VT "embeddings.position_embeddings", VNP);
	mm_ck_name(b, sizeof(b), VT "embeddings.patch_embeddings.projection.weight", y);
	tm_add(m, b, WT_DTYPE_INVALID, 1, VE * 3 * 2 * 2, 0, 0);
	st_desc *d = &m->d[m->n - 1];
	d->ndim = 4;
	d->shape[0] = VE;
	d->shape[1] = 3;
	d->shape[2] = d->shape[3] = 2;
	mm_add(m, y, VT "embeddings.patch_embeddings.projection.bias", VE, 0);
	for (int blk = 0; blk < 2; blk++) {
		char c[200];
		for (size_t k = 0; k < sizeof(block) / sizeof(block[0]); k++) {
			snprintf(c, sizeof(c), VB "%s", blk, block[k].leaf);
			mm_add(m, y, c, block[k].n, block[k].k);
		}
		for (size_t k = 0; !(opt & O_NOBIAS) && k < 3; k++) {
			snprintf(c, sizeof(c), VB "%s", blk, qkv_bias[k]);
			mm_add(m, y, c, VE, 0);
		}
		for (size_t k = 0; !(opt & O_RMS) && k < 2; k++) {
			snprintf(c, sizeof(c), VB "%s", blk, ln_bias[k]);
			mm_add(m, y, c, VE, 0);
		}
		for (size_t k = 0; (opt & O_QKN) && k < 2; k++) {
			snprintf(c, sizeof(c), VB "%s", blk, qk_norm[k]);
			mm_add(m, y, c, VE, 0);
		}
	}
	if (opt & O_POOLLN) {
		mm_add(m, y, VT "layernorm.weight", VE, 0);
		mm_add(m, y, VT "layernorm.bias", VE, 0);
	}
	for (size_t k = 0; k < sizeof(proj) / sizeof(proj[0]); k++)
		mm_add(m, y, proj[k].leaf, proj[k].n, proj[k].k);
}

/* Rank r of TP T: the tower whole but fc1 (rows, weight and bias) and fc2 (columns); the
 * projector whole (InternVL3's switches: q/k/v biases, LayerNorm biases). */
static __attribute__((unused)) void ivl_check_tower(const fx *f, uint32_t T, uint32_t r)
{
	char n[200];
	int64_t il = VI / T;
	for (int blk = 0; blk < 2; blk++) {
		for (size_t k = 0; k < sizeof(block) / sizeof(block[0]); k++) {
			snprintf(n, sizeof(n), VB "%s", blk, block[k].leaf);
			if (strstr(n, "mlp.fc1.") != NULL) {
				shp(f, r, n, block[k].k ? 2 : 1, il, block[k].k, 0);
				rows_at(f, r, n, 0, n, r * il, il);
			} else if (strstr(n, "mlp.fc2.weight") != NULL)
				cols_of(f, r, T, n, n, VE, VI);
			else
				repl(f, r, n);
		}
		for (size_t k = 0; k < 3; k++) {
			snprintf(n, sizeof(n), VB "%s", blk, qkv_bias[k]);
			repl(f, r, n);
		}
		for (size_t k = 0; k < 2; k++) {
			snprintf(n, sizeof(n), VB "%s", blk, ln_bias[k]);
			repl(f, r, n);
		}
	}
	for (size_t k = 0; k < sizeof(proj) / sizeof(proj[0]); k++)
		repl(f, r, proj[k].leaf);
	repl(f, r, VT "embeddings.cls_token");
	repl(f, r, VT "embeddings.position_embeddings");
	repl(f, r, VT "embeddings.patch_embeddings.projection.weight");
	repl(f, r, VT "embeddings.patch_embeddings.projection.bias");
	shp(f, r, VT "embeddings.position_embeddings", 3, 1, VNP, VE);
}

#endif
