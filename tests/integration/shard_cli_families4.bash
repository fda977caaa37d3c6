# shard_cli_families4.bash — shard_cli.sh's family checks, continued (sourced by it; $CTL, $T,
# fail, plan_has, refused_edit and the fixtures are its): the families added after Aquila
# (shard_cli_families3.bash had grown near 800 lines). Each family's block: its plan lines at
# one rank and scheme, and the config.json edits it refuses, naming the key.

# MiniMax-Text-01 under its remote name (MiniMaxText01ForCausalLM): the minimax cut (TP 4: the
# lightning attention's 2 whole heads of qkv_proj / output_gate rows, norm channels, out_proj
# columns; the softmax layer's 2 q heads and its kv head; experts' Ie rows), the layer kinds from
# attn_type_list, the lightning norm and routers unquantized; attn_type_list missing,
# shared_intermediate_size above 0 and tie_word_embeddings true refused
"$CTL" plan --model-dir "$T/minimax_text01" --tp-size 4 --tp-rank 1 --quant int8-channel \
	--rank-only >"$T/plan" || fail "plan minimax_text01"
plan_has minimax_text01 "model.layers.0.self_attn.qkv_proj.weight *I8 *\[192, 256\]" \
	"model.layers.0.self_attn.output_gate.weight *I8 *\[64, 256\]" \
	"model.layers.0.self_attn.norm.weight *BF16 *\[64\]" \
	"model.layers.0.self_attn.out_proj.weight *I8 *\[256, 64\]" \
	"model.layers.2.self_attn.qkv_proj.weight *I8 *\[128, 256\]" \
	"model.layers.2.self_attn.o_proj.weight *I8 *\[256, 64\]" \
	"model.layers.1.block_sparse_moe.experts.w13_weight *I8 *\[4, 64, 256\]" \
	"model.layers.1.block_sparse_moe.gate.weight *BF16 *\[4, 256\]"
grep -q "self_attn\.norm\.weight_scale\|block_sparse_moe\.gate\.weight_scale" "$T/plan" &&
	fail "minimax_text01: a quantized norm or router: $(cat "$T/plan")"
refused_edit minimax_text01 's/"attn_type_list"/"attn_type_lst"/' "attn_type_list is missing"
refused_edit minimax_text01 's/"shared_intermediate_size": 0/"shared_intermediate_size": 64/' \
	"shared_intermediate_size"
refused_edit minimax_text01 's/"tie_word_embeddings": false/"tie_word_embeddings": true/' \
	"tie_word_embeddings"
