/*
 * test_shardmap_gte_fx.h — GTE v1.5's planner test checkpoint (GteNewModel's tensors as the
 * releases name them, with or without the new. prefix, the pooler and a classifier), shared by
 * test_shardmap_gte_new.c and test_shardmap_gte_new_cls.c. Include after test_shardmap_util.h
 * (tm_new / tm_add2 and SEED).
 */
#ifndef TEST_SHARDMAP_GTE_FX_H
#define TEST_SHARDMAP_GTE_FX_H

#include <stdio.h>

/* hid 64, H 8 (d 8), I 96, V 100, 2 layers */
#define HID 64
#define I   96
#define GT_ARCH(arch, extra)                                                                       \
	"{\"architectures\":[\"" arch "\"],\"model_type\":\"new\",\"hidden_size\":64,"             \
	"\"num_attention_heads\":8,\"num_hidden_layers\":2,\"vocab_size\":100" extra "}"
#define GT_RAW(extra) GT_ARCH("GteNewModel", extra)
#define GT_CFG(extra) GT_RAW(",\"intermediate_size\":96" extra)
#define TV0           ",\"type_vocab_size\":0"
#define L1C           "encoder.layer.1."
#define L1            "encoder.layers.1."
#define QKV           L1 "attn.qkv_proj.weight"
#define QKVB          L1 "attn.qkv_proj.bias"
#define OP            L1 "attn.out_proj.weight"
#define OB            L1 "attn.out_proj.bias"
#define GU            L1 "mlp.gate_up_proj.weight"
#define DP            L1 "mlp.down_proj.weight"
#define DPB           L1 "mlp.down_proj.bias"
#define UG            L1C "mlp.up_gate_proj.weight"
#define EMB           "embeddings.word_embeddings.weight"
#define TT            "embeddings.token_type_embeddings.weight"

enum { GT_POOLER = 1, GT_CLS = 2 };

/* GteNewModel's tensors as the releases name them under pfx ("" or "new."): `layers` layers,
 * types token-type rows (0: none), the pooler / classifier when asked. */
static tm_model *tm_gt(const char *pfx, int layers, int64_t types, int extra)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	char n[200];
#define GT_ADD(name, a, k) (snprintf(n, sizeof(n), "%s%s", pfx, name), tm_add2(m, n, a, k))
	GT_ADD(EMB, 100, HID);
	if (types > 0)
		GT_ADD(TT, types, HID);
	GT_ADD("embeddings.LayerNorm.weight", HID, 0);
	GT_ADD("embeddings.LayerNorm.bias", HID, 0);
	static const struct {
		const char *leaf;
		int64_t a, b;
	} lv[] = {
	    {"attention.qkv_proj.weight", 3 * HID, HID},
	    {"attention.qkv_proj.bias", 3 * HID, 0},
	    {"attention.o_proj.weight", HID, HID},
	    {"attention.o_proj.bias", HID, 0},
	    {"attn_ln.weight", HID, 0},
	    {"attn_ln.bias", HID, 0},
	    {"mlp.up_gate_proj.weight", 2 * I, HID},
	    {"mlp.down_proj.weight", HID, I},
	    {"mlp.down_proj.bias", HID, 0},
	    {"mlp_ln.weight", HID, 0},
	    {"mlp_ln.bias", HID, 0},
	};
	char leaf[160];
	for (int l = 0; l < layers; l++)
		for (size_t k = 0; k < sizeof(lv) / sizeof(lv[0]); k++) {
			snprintf(leaf, sizeof(leaf), "encoder.layer.%d.%s", l, lv[k].leaf);
			GT_ADD(leaf, lv[k].a, lv[k].b);
		}
	if (extra & GT_POOLER) {
		GT_ADD("pooler.dense.weight", HID, HID);
		GT_ADD("pooler.dense.bias", HID, 0);
	}
	if (extra & GT_CLS) {
		tm_add2(m, "classifier.weight", 2, HID);
		tm_add2(m, "classifier.bias", 2, 0);
	}
#undef GT_ADD
	return m;
}

#endif
