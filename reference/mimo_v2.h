/*
 * mimo_v2.h — MiMo-V2-Flash (MiMoV2FlashForCausalLM, vLLM's mimo_v2_flash.py; c->mimo_v2) in the
 * reference: its per-layer attention kinds (ref_mv_layers), its config (ref_cfg_mimo_v2) and its
 * attention, for the checkpoint and for a tp rank (mimo_v2.c).
 */
#ifndef WT_REFERENCE_MIMO_V2_H
#define WT_REFERENCE_MIMO_V2_H

#include "reference/reference_int.h"

struct ckpt_config; /* loader/loader.h */

/* The layers of config.json text (len bytes) whose loader view is cc: each layer's attention
 * kind as the loader's ckpt_config_mimo_v2 reads hybrid_layer_pattern (its refusals apply)
 * into c->mv_swa, the two kinds' heads / kv heads / head_dim / v_head_dim, and the MoE layers
 * (the loader's moe_layers, from moe_layer_freq) into c->l4_moe; more than 256 layers
 * WT_EUNSUPPORTED. */
int ref_mv_layers(const struct ckpt_config *cc, const char *json, size_t len, ref_cfg *c,
                  wt_errbuf *err);

/* The MiMo-V2-Flash fields of c from config.json as the loader's key reader leaves it
 * (layernorm_epsilon read as rms_norm_eps): rope_theta (1000000 when absent) and swa_rope_theta
 * (rope_theta when absent), partial_rotary_factor (1), attention_value_scale (none),
 * sliding_window_size; an odd or zero rotary width, a theta not above 1, an
 * attention_value_scale beyond +-1e6 or a window below 1 on a sliding layer WT_EUNSUPPORTED
 * naming the key. */
int ref_cfg_mimo_v2(ref_cfg *c, const char *json, size_t len, wt_errbuf *err);

/* MiMoV2Attention of layer l over T normed rows h into out [T, hid] (o_proj's output; a rank's
 * partial sum): tp 0 the checkpoint's q_proj / k_proj / v_proj / o_proj and attention_sink_bias
 * [H]; else rank r of tp, its fused qkv_proj [q; k; v] (v heads v_head_dim rows), o_proj's
 * columns and the sinks of its heads. A layer's heads not divisible by tp WT_ELAYOUT. */
int ref_mv_attn(const ref_cfg *c, ref_set *s, int64_t l, int64_t r, int64_t tp, const float *h,
                int64_t T, float *out, wt_errbuf *err);

#endif
