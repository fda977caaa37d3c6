/*
 * test_shardmap_models.h — the fixture models the shardmap tests build with the tm_model
 * builder (split from test_shardmap_util.h, which includes it): Llama (plain and per-tensor
 * FP8), Phi-3, Qwen2, Qwen3, Mixtral, Qwen2-MoE, DeepSeek and BERT, each with its config.json.
 */
#ifndef WT_TEST_SHARDMAP_MODELS_H
#define WT_TEST_SHARDMAP_MODELS_H

#include "test_shardmap_builder.h"

/* The llama fixture dims: hidden 256, H 8, KV 2, head_dim 32, I 512, V 1000, 2 layers. */
static const char tm_llama_cfg[] =
    "{\"architectures\":[\"LlamaForCausalLM\"],\"model_type\":\"llama\",\"hidden_size\":256,"
    "\"num_attention_heads\":8,\"num_key_value_heads\":2,\"head_dim\":32,"
    "\"intermediate_size\":512,\"vocab_size\":1000,\"num_hidden_layers\":2,"
    "\"tie_word_embeddings\":false}";

static __attribute__((unused)) tm_model *tm_llama(uint64_t seed, wt_dtype dt)
{
	tm_model *m = tm_new(seed, dt);
	tm_top(m, 1000, 256, 1);
	for (int i = 0; i < 2; i++) {
		tm_attn(m, i, 8, 2, 32, 256, 0, 0);
		tm_mlp(m, i, "mlp.", 512, 256);
	}
	tm_add(m, "model.layers.0.self_attn.rotary_emb.inv_freq", WT_F32, 1, 16, 0, 0);
	return m;
}

/* llama_fp8: llama dims, per-tensor FP8 linear weights with weight_scale/input_scale. */
static const char tm_llama_fp8_cfg[] =
    "{\"architectures\":[\"LlamaForCausalLM\"],\"model_type\":\"llama\",\"hidden_size\":256,"
    "\"num_attention_heads\":8,\"num_key_value_heads\":2,\"head_dim\":32,"
    "\"intermediate_size\":512,\"vocab_size\":1000,\"num_hidden_layers\":2,"
    "\"tie_word_embeddings\":false,\"quantization_config\":{\"quant_method\":\"fp8\"}}";

static __attribute__((unused)) tm_model *tm_llama_fp8(uint64_t seed)
{
	tm_model *m = tm_new(seed, WT_BF16);
	tm_top(m, 1000, 256, 1);
	for (int i = 0; i < 2; i++) {
		char b[200];
		tm_fmt(b, sizeof(b), TM_L, i, "input_layernorm.weight");
		tm_add2(m, b, 256, 0);
		tm_fmt(b, sizeof(b), TM_L, i, "post_attention_layernorm.weight");
		tm_add2(m, b, 256, 0);
		tm_lin_l(m, i, "self_attn.q_proj.weight", 256, 256, 2);
		tm_lin_l(m, i, "self_attn.k_proj.weight", 64, 256, 2);
		tm_lin_l(m, i, "self_attn.v_proj.weight", 64, 256, 2);
		tm_lin_l(m, i, "self_attn.o_proj.weight", 256, 256, 2);
		tm_lin_l(m, i, "mlp.gate_proj.weight", 512, 256, 2);
		tm_lin_l(m, i, "mlp.up_proj.weight", 512, 256, 2);
		tm_lin_l(m, i, "mlp.down_proj.weight", 256, 512, 2);
	}
	return m;
}

/* Phi-3: H 8, KV 2, d 32, I 512, V 1000; q/k/v and gate/up fused in the checkpoint
 * (qkv_proj [384, 256], gate_up_proj [1024, 256]); fp8 as tm_lin's. */
static const char tm_phi3_cfg[] =
    "{\"architectures\":[\"Phi3ForCausalLM\"],\"model_type\":\"phi3\",\"hidden_size\":256,"
    "\"num_attention_heads\":8,\"num_key_value_heads\":2,\"intermediate_size\":512,"
    "\"vocab_size\":1000,\"num_hidden_layers\":2,\"tie_word_embeddings\":false}";

static __attribute__((unused)) tm_model *tm_phi3(uint64_t seed, int fp8)
{
	tm_model *m = tm_new(seed, WT_BF16);
	tm_top(m, 1000, 256, 1);
	for (int i = 0; i < 2; i++) {
		tm_lin_l(m, i, "input_layernorm.weight", 256, 0, 0);
		tm_lin_l(m, i, "post_attention_layernorm.weight", 256, 0, 0);
		tm_lin_l(m, i, "self_attn.qkv_proj.weight", 384, 256, fp8);
		tm_lin_l(m, i, "self_attn.o_proj.weight", 256, 256, fp8);
		tm_lin_l(m, i, "mlp.gate_up_proj.weight", 1024, 256, fp8);
		tm_lin_l(m, i, "mlp.down_proj.weight", 256, 512, fp8);
	}
	return m;
}

static const char tm_qwen2_cfg[] =
    "{\"architectures\":[\"Qwen2ForCausalLM\"],\"model_type\":\"qwen2\",\"hidden_size\":256,"
    "\"num_attention_heads\":8,\"num_key_value_heads\":2,\"intermediate_size\":512,"
    "\"vocab_size\":1024,\"num_hidden_layers\":2,\"tie_word_embeddings\":true}";

static __attribute__((unused)) tm_model *tm_qwen2(uint64_t seed)
{
	tm_model *m = tm_new(seed, WT_BF16);
	tm_top(m, 1024, 256, 0);
	for (int i = 0; i < 2; i++) {
		tm_attn(m, i, 8, 2, 32, 256, 1, 0);
		tm_mlp(m, i, "mlp.", 512, 256);
	}
	return m;
}

static const char tm_qwen3_cfg[] =
    "{\"architectures\":[\"Qwen3ForCausalLM\"],\"model_type\":\"qwen3\",\"hidden_size\":256,"
    "\"num_attention_heads\":8,\"num_key_value_heads\":4,\"head_dim\":64,"
    "\"intermediate_size\":512,\"vocab_size\":1024,\"num_hidden_layers\":2,"
    "\"tie_word_embeddings\":false}";

static __attribute__((unused)) tm_model *tm_qwen3(uint64_t seed)
{
	tm_model *m = tm_new(seed, WT_BF16);
	tm_top(m, 1024, 256, 1);
	for (int i = 0; i < 2; i++) {
		tm_attn(m, i, 8, 4, 64, 256, 0, 1);
		tm_mlp(m, i, "mlp.", 512, 256);
	}
	return m;
}

static const char tm_mixtral_cfg[] =
    "{\"architectures\":[\"MixtralForCausalLM\"],\"model_type\":\"mixtral\",\"hidden_size\":256,"
    "\"num_attention_heads\":8,\"num_key_value_heads\":2,\"intermediate_size\":256,"
    "\"num_local_experts\":6,\"vocab_size\":1000,\"num_hidden_layers\":2}";

static __attribute__((unused)) tm_model *tm_mixtral(uint64_t seed)
{
	tm_model *m = tm_new(seed, WT_BF16);
	tm_top(m, 1000, 256, 1);
	for (int i = 0; i < 2; i++) {
		char b[200];
		tm_attn(m, i, 8, 2, 32, 256, 0, 0);
		tm_fmt(b, sizeof(b), TM_L, i, "block_sparse_moe.gate.weight");
		tm_add2(m, b, 6, 256);
		tm_experts(m, i, "block_sparse_moe.experts.", 6, 256, 256, "w1", "w3", "w2");
	}
	return m;
}

static const char tm_qwen2_moe_cfg[] =
    "{\"architectures\":[\"Qwen2MoeForCausalLM\"],\"model_type\":\"qwen2_moe\","
    "\"hidden_size\":256,\"num_attention_heads\":8,\"num_key_value_heads\":8,"
    "\"intermediate_size\":512,\"moe_intermediate_size\":128,"
    "\"shared_expert_intermediate_size\":256,\"num_experts\":4,\"mlp_only_layers\":[0],"
    "\"decoder_sparse_step\":1,\"vocab_size\":1024,\"num_hidden_layers\":2}";

static __attribute__((unused)) tm_model *tm_qwen2_moe(uint64_t seed)
{
	tm_model *m = tm_new(seed, WT_BF16);
	tm_top(m, 1024, 256, 1);
	char b[200];
	for (int i = 0; i < 2; i++)
		tm_attn(m, i, 8, 8, 32, 256, 1, 0);
	tm_mlp(m, 0, "mlp.", 512, 256);
	tm_fmt(b, sizeof(b), TM_L, 1, "mlp.gate.weight");
	tm_add2(m, b, 4, 256);
	tm_experts(m, 1, "mlp.experts.", 4, 128, 256, "gate_proj", "up_proj", "down_proj");
	tm_mlp(m, 1, "mlp.shared_expert.", 256, 256);
	tm_fmt(b, sizeof(b), TM_L, 1, "mlp.shared_expert_gate.weight");
	tm_add2(m, b, 1, 256);
	return m;
}

static const char tm_deepseek_cfg[] =
    "{\"architectures\":[\"DeepseekV3ForCausalLM\"],\"model_type\":\"deepseek_v3\","
    "\"hidden_size\":256,\"num_attention_heads\":8,\"num_key_value_heads\":8,"
    "\"q_lora_rank\":128,\"kv_lora_rank\":64,\"qk_nope_head_dim\":32,\"qk_rope_head_dim\":32,"
    "\"v_head_dim\":32,\"intermediate_size\":512,\"moe_intermediate_size\":256,"
    "\"n_routed_experts\":4,\"n_shared_experts\":1,\"first_k_dense_replace\":1,"
    "\"moe_layer_freq\":1,\"vocab_size\":1000,\"num_hidden_layers\":2%s}";

/* fp8: 0 plain BF16, 1 FP8 block (weight_scale_inv). Layer 2 is the MTP layer. */
static __attribute__((unused)) tm_model *tm_deepseek(uint64_t seed, int fp8, char *cfg, size_t cap)
{
	snprintf(cfg, cap, tm_deepseek_cfg,
	         fp8 ? ",\"quantization_config\":{\"quant_method\":\"fp8\","
	               "\"weight_block_size\":[128,128]}"
	             : "");
	tm_model *m = tm_new(seed, WT_BF16);
	tm_top(m, 1000, 256, 1);
	char b[200];
	for (int i = 0; i < 3; i++) {
		tm_fmt(b, sizeof(b), TM_L, i, "input_layernorm.weight");
		tm_add2(m, b, 256, 0);
		tm_fmt(b, sizeof(b), TM_L, i, "post_attention_layernorm.weight");
		tm_add2(m, b, 256, 0);
		tm_lin_l(m, i, "self_attn.q_a_proj.weight", 128, 256, fp8);
		tm_fmt(b, sizeof(b), TM_L, i, "self_attn.q_a_layernorm.weight");
		tm_add2(m, b, 128, 0);
		tm_lin_l(m, i, "self_attn.q_b_proj.weight", 512, 128, fp8);
		tm_lin_l(m, i, "self_attn.kv_a_proj_with_mqa.weight", 96, 256, fp8);
		tm_fmt(b, sizeof(b), TM_L, i, "self_attn.kv_a_layernorm.weight");
		tm_add2(m, b, 64, 0);
		tm_lin_l(m, i, "self_attn.kv_b_proj.weight", 512, 64, fp8);
		tm_lin_l(m, i, "self_attn.o_proj.weight", 256, 256, fp8);
		tm_fmt(b, sizeof(b), TM_L, i, "self_attn.rotary_emb.inv_freq");
		tm_add(m, b, WT_F32, 1, 16, 0, 0);
		if (i == 0) {
			tm_lin_l(m, i, "mlp.gate_proj.weight", 512, 256, fp8);
			tm_lin_l(m, i, "mlp.up_proj.weight", 512, 256, fp8);
			tm_lin_l(m, i, "mlp.down_proj.weight", 256, 512, fp8);
			continue;
		}
		tm_fmt(b, sizeof(b), TM_L, i, "mlp.gate.weight");
		tm_add2(m, b, 4, 256);
		tm_fmt(b, sizeof(b), TM_L, i, "mlp.gate.e_score_correction_bias");
		tm_add(m, b, WT_F32, 1, 4, 0, 0);
		for (int j = 0; j < 4; j++) {
			char leaf[96];
			snprintf(leaf, sizeof(leaf), "mlp.experts.%d.gate_proj.weight", j);
			tm_lin_l(m, i, leaf, 256, 256, fp8);
			snprintf(leaf, sizeof(leaf), "mlp.experts.%d.up_proj.weight", j);
			tm_lin_l(m, i, leaf, 256, 256, fp8);
			snprintf(leaf, sizeof(leaf), "mlp.experts.%d.down_proj.weight", j);
			tm_lin_l(m, i, leaf, 256, 256, fp8);
		}
		tm_lin_l(m, i, "mlp.shared_experts.gate_proj.weight", 256, 256, fp8);
		tm_lin_l(m, i, "mlp.shared_experts.up_proj.weight", 256, 256, fp8);
		tm_lin_l(m, i, "mlp.shared_experts.down_proj.weight", 256, 256, fp8);
		if (i == 2) {
			tm_lin_l(m, i, "eh_proj.weight", 256, 512, fp8);
			tm_fmt(b, sizeof(b), TM_L, i, "enorm.weight");
			tm_add2(m, b, 256, 0);
		}
	}
	return m;
}

static const char tm_bert_cfg[] =
    "{\"architectures\":[\"BertModel\"],\"model_type\":\"bert\",\"hidden_size\":128,"
    "\"num_attention_heads\":4,\"intermediate_size\":512,\"vocab_size\":1000,"
    "\"num_hidden_layers\":2,\"max_position_embeddings\":64,\"type_vocab_size\":2}";

static __attribute__((unused)) tm_model *tm_bert(uint64_t seed)
{
	tm_model *m = tm_new(seed, WT_F32);
	tm_add2(m, "embeddings.word_embeddings.weight", 1000, 128);
	tm_add2(m, "embeddings.position_embeddings.weight", 64, 128);
	tm_add2(m, "embeddings.token_type_embeddings.weight", 2, 128);
	tm_add2(m, "embeddings.LayerNorm.weight", 128, 0);
	tm_add2(m, "embeddings.LayerNorm.bias", 128, 0);
	tm_add(m, "embeddings.position_ids", WT_I64, 2, 1, 64, 0);
	for (int i = 0; i < 2; i++) {
		static const char *const l2[][2] = {
		    {"attention.self.query", "q"}, {"attention.self.key", "q"},
		    {"attention.self.value", "q"}, {"attention.output.dense", "o"},
		    {"intermediate.dense", "i"},   {"output.dense", "d"},
		};
		for (size_t k = 0; k < 6; k++) {
			char b[200];
			int64_t N = l2[k][1][0] == 'i' ? 512 : 128,
			        K = l2[k][1][0] == 'd' ? 512 : 128;
			snprintf(b, sizeof(b), "encoder.layer.%d.%s.weight", i, l2[k][0]);
			tm_add2(m, b, N, K);
			snprintf(b, sizeof(b), "encoder.layer.%d.%s.bias", i, l2[k][0]);
			tm_add2(m, b, N, 0);
		}
		static const char *const ln[] = {"attention.output.LayerNorm", "output.LayerNorm"};
		for (size_t k = 0; k < 2; k++) {
			char b[200];
			snprintf(b, sizeof(b), "encoder.layer.%d.%s.weight", i, ln[k]);
			tm_add2(m, b, 128, 0);
			snprintf(b, sizeof(b), "encoder.layer.%d.%s.bias", i, ln[k]);
			tm_add2(m, b, 128, 0);
		}
	}
	tm_add2(m, "pooler.dense.weight", 128, 128);
	tm_add2(m, "pooler.dense.bias", 128, 0);
	return m;
}

#endif
