# shard_cli_families4.bash — shard_cli.sh's family checks, continued (sourced by it; $CTL, $T,
# fail, plan_has, refused_edit and the fixtures are its): the families added after Aquila
# (shard_cli_families3.bash had grown near 800 lines). Each family's block: its plan lines at
# one rank and scheme, and the config.json edits it refuses, naming the key.

# RWForCausalLM (falcon-40b's config.json, model_type RefinedWeb): falcon.py's cut under RWConfig's
# keys (TP 4: 2 q heads and the rank's kv group, replicated; the MLP 4 * 128), tied; without
# new_decoder_architecture at this width (RWConfig sets it only at 8192), with parallel_attn
# absent (RWConfig's false) and with apply_residual_connection_post_layernorm true refused
"$CTL" plan --model-dir "$T/falcon_rw" --tp-size 4 --tp-rank 1 --quant int8-channel \
	--rank-only >"$T/plan" || fail "plan falcon_rw"
plan_has falcon_rw "transformer.h.1.self_attention.query_key_value.weight *I8 *\[64, 128\]" \
	"transformer.h.1.self_attention.dense.weight *I8 *\[128, 32\]" \
	"transformer.h.1.mlp.dense_h_to_4h.weight *I8 *\[128, 128\]" \
	"transformer.h.1.mlp.dense_4h_to_h.weight *I8 *\[128, 128\]" \
	"transformer.h.1.ln_attn.weight *BF16 *\[128\]" \
	"transformer.word_embeddings.weight *BF16 *\[256, 128\]"
grep -q "^ *lm_head\.weight \|\.bias .*I8" "$T/plan" &&
	fail "falcon_rw: an lm_head or a quantized bias: $(cat "$T/plan")"
refused_edit falcon_rw '/"new_decoder_architecture"/d' "without new_decoder_architecture"
refused_edit falcon_rw '/"parallel_attn"/d' "parallel_attn false"
refused_edit falcon_rw 's/"apply_residual_connection_post_layernorm": false/"apply_residual_connection_post_layernorm": true/' \
	"apply_residual_connection_post_layernorm true"
