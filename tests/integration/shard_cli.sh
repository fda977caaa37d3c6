#!/usr/bin/env bash
# weightctl plan / shard: exit codes (0 ok, 2 usage, 3 layout invalid, 1 other),
# safetensors metadata, every scheme on every family fixture (deepseek_v3 with none and
# fp8-block included), and byte-identical output across runs and thread counts.
set -u
B=${WT_BUILD:-build}
CTL=$B/weightctl
MK=$B/wt-mkckpt
T=$(mktemp -d "${TMPDIR:-/tmp}/wt-shardcli-XXXXXX")
trap 'rm -rf "$T"' EXIT
fail() { echo "shard_cli.sh: FAIL: $*"; exit 1; }
# plan_has FAM LINE...: each LINE (a regex of a row, leading blanks aside) is in $T/plan, the
# plan of fixture FAM the caller just wrote.
plan_has() {
	local fam=$1 l
	shift
	for l in "$@"; do
		grep -q "^ *$l" "$T/plan" || fail "$fam line $l: $(cat "$T/plan")"
	done
}
# refused_edit FAM SED WANT [flat]: fixture FAM with its config.json rewritten by SED (after
# removing its blanks and newlines when flat) is refused by weightctl plan, naming WANT.
refused_edit() {
	local fam=$1 expr=$2 want=$3 d="$T/${1}_bad"
	mkdir -p "$d" && cp "$T/$fam/"*.safetensors* "$d/" || fail "copy $fam"
	if [ "${4:-}" = flat ]; then
		tr -d '\n ' <"$T/$fam/config.json" | sed "$expr" >"$d/config.json"
	else
		sed "$expr" "$T/$fam/config.json" >"$d/config.json"
	fi
	cmp -s "$T/$fam/config.json" "$d/config.json" && [ "${4:-}" != flat ] &&
		fail "$fam: '$expr' changes nothing in config.json"
	"$CTL" plan --model-dir "$d" --tp-size 2 >/dev/null 2>"$T/err" &&
		fail "$fam with '$expr' planned"
	grep -q "$want" "$T/err" || fail "$fam: the refusal does not name '$want': $(cat "$T/err")"
	rm -rf "$d"
}
. "$(dirname "$0")/fetch_lib/fams.sh"

FAMS="llama qwen2 qwen3 mixtral qwen2_moe deepseek_v3 bert llama_fp8 llama_ct_fp8 llama_ct_fp8_tensor qwen3_ct_fp8_block gemma gemma2 gemma3_text phi3 deepseek_v2 starcoder2 glm glm4 olmo2 granite seed_oss smollm3 granitemoe granitemoeshared olmoe olmo phimoe gemma3 gemma3_hf5 gpt_oss llama4 llama4_text qwen3_next glm4_moe dots1 llama4_fbgemm ernie4_5 ernie4_5_moe cohere cohere2 qwen3_vl qwen3_vl_moe olmo3 exaone4 mistral3 mistral3_hf5 glm4v glm4v_moe apertus arcee lfm2 granitemoehybrid granitemoehybrid_dense hunyuan_v1_dense hunyuan_v1_moe bamba nemotron minimax jamba gpt_neox phi flex_olmo vaultgemma dbrx stablelm ministral falcon_h1 mpt longcat_flash gpt2 gpt_bigcode llava llava_next mamba falcon_mamba opt gptj bloom persimmon falcon mamba2 idefics3 smolvlm paligemma aya_vision llava_onevision cohere2_vision llava_next_video qwen2_audio internvl internvl_qwen3 roberta xlm_roberta xlm_roberta_cls llava_pixtral fuyu lfm2_vl internvl_qwen3_moe chameleon modernbert modernbert_cls granite_speech blip2 aria voxtral mllama zamba2 qwen3_cls bert_cls bert_tok qwen2_5_omni gemma3n_text qwen2_emb qwen2_rm qwen3_omni_moe whisper gpt2_cls clip internlm2 internlm2_ve minimax_m2 nemotron_h siglip jamba_cls modernbert_tok chatglm exaone qwen baichuan baichuan_7b minicpm internlm3 nemotron_h_moe minicpm3 lfm2_moe minicpm_moe internlm orion telechat2 jais arctic grok1 bailing_moe bailing_moe_v2 xverse aquila stablelm_epoch teleflm falcon_rw minimax_text01 minimax_vl_01 phi3v solar mimo deepseek_moe telechat afmoe ouro decilm jais2 deepseek_v32 step3_text plamo3 pangu_dense mimo_v2_flash internlm2_rm llama_bidir_emb nomic_bert gte_new llama_bidir_cls gritlm pangu_ultra_moe gte_new_cls bert_splade jina_vl pangu_pro_moe_v2 plamo2"
for f in $FAMS; do
	"$MK" --family "$f" --out "$T/$f" >/dev/null || fail "wt-mkckpt $f"
done

# exit codes
"$CTL" plan --model-dir "$T/llama" --tp-size 3 --tp-rank 0 >/dev/null 2>"$T/err"
[ $? -eq 3 ] || fail "tp 3 on llama should exit 3"
grep -q "does not divide num_attention_heads 8; use tp_size 1, 2, 4 or 8" "$T/err" ||
	fail "tp 3 message: $(cat "$T/err")"
"$CTL" plan --model-dir "$T/llama" --tp-size 1 --tp-rank 0 --ep-size 2 --ep-rank 0 \
	>/dev/null 2>&1
[ $? -eq 3 ] || fail "ep on a dense model should exit 3"
"$CTL" plan --tp-size 1 --tp-rank 0 >/dev/null 2>&1
[ $? -eq 2 ] || fail "missing --model-dir should exit 2"
"$CTL" plan --model-dir "$T/llama" --tp-size 2 --tp-rank 0 --quant fp9 >/dev/null 2>&1
[ $? -eq 2 ] || fail "bad --quant should exit 2"
# flags that parse but make no valid layout are a layout error (3), for the
# offline commands as for fetch/manifest
"$CTL" plan --model-dir "$T/llama" --tp-size 2 --tp-rank 2 >/dev/null 2>"$T/err"
[ $? -eq 3 ] || fail "tp-rank >= tp-size should exit 3"
grep -q "WT_EINVAL" "$T/err" || fail "tp-rank >= tp-size message: $(cat "$T/err")"
"$CTL" shard --model-dir "$T/llama" --tp-size 2 --tp-rank 2 --out "$T/x.st" >/dev/null 2>&1
[ $? -eq 3 ] || fail "shard tp-rank >= tp-size should exit 3"
"$CTL" plan --model-dir "$T/llama" --tp-size 1 --exclude 're:model.(layers' --quant fp8-block \
	>/dev/null 2>&1
[ $? -eq 3 ] || fail "invalid exclude regex should exit 3"
# shard writes one rank: never a guessed rank 0
"$CTL" shard --model-dir "$T/llama" --tp-size 2 --out "$T/x.st" >/dev/null 2>"$T/err"
[ $? -eq 2 ] || fail "shard --tp-size 2 without --tp-rank should exit 2"
grep -q -- "--tp-rank R (0..1) is required" "$T/err" || fail "tp-rank message: $(cat "$T/err")"
"$CTL" shard --model-dir "$T/mixtral" --ep-size 2 --out "$T/x.st" >/dev/null 2>"$T/err"
[ $? -eq 2 ] || fail "shard --ep-size 2 without --ep-rank should exit 2"
grep -q -- "--ep-rank E (0..1) is required" "$T/err" || fail "ep-rank message: $(cat "$T/err")"
for n in 0 17 two -1; do
	"$CTL" shard --model-dir "$T/llama" --threads "$n" --out "$T/x.st" >/dev/null 2>"$T/err"
	[ $? -eq 2 ] || fail "shard --threads $n should exit 2"
	grep -q -- "--threads '$n': use an integer in 1..16" "$T/err" || fail "--threads $n message: $(cat "$T/err")"
done
[ ! -e "$T/x.st" ] || fail "refused shard wrote a file"
"$CTL" shard --model-dir "$T/llama" --tp-size 1 --out "$T/x.st" >/dev/null ||
	fail "tp 1 needs no --tp-rank"
# a partly excluded fused module: both sides named, no tp sizes suggested
"$CTL" plan --model-dir "$T/llama" --tp-size 2 --tp-rank 0 --quant fp8-block \
	--exclude model.layers.0.self_attn.q_proj >/dev/null 2>"$T/err"
[ $? -eq 3 ] || fail "partial exclusion should exit 3"
grep -q "(excluded: model.layers.0.self_attn.q_proj; not excluded: model.layers.0.self_attn.k_proj, model.layers.0.self_attn.v_proj)" \
	"$T/err" || fail "partial exclusion message: $(cat "$T/err")"
grep -q "use tp_size" "$T/err" && fail "partial exclusion suggests tp sizes: $(cat "$T/err")"
"$CTL" shard --model-dir "$T/llama" --tp-size 2 --tp-rank 0 >/dev/null 2>&1
[ $? -eq 2 ] || fail "shard without --out should exit 2"
"$CTL" plan --model-dir "$T/nonexistent" --tp-size 1 --tp-rank 0 >/dev/null 2>&1
[ $? -eq 1 ] || fail "missing model folder should exit 1"
"$CTL" shard --model-dir "$T/deepseek_v3" --tp-size 4 --tp-rank 0 --quant fp8-block \
	--out "$T/x.st" >/dev/null 2>"$T/err"
[ $? -eq 3 ] || fail "deepseek fp8-block tp 4 should exit 3"
grep -q "requant allow" "$T/err" || fail "alignment message: $(cat "$T/err")"

# plan output: per rank totals, --rank-only
"$CTL" plan --model-dir "$T/llama" --tp-size 4 --tp-rank 1 >"$T/plan" || fail "plan llama"
[ "$(grep -c '^rank ' "$T/plan")" -eq 4 ] || fail "plan should list 4 ranks"
grep -q "model.layers.0.self_attn.qkv_proj.weight *BF16 *\[128, 256\] *65536 weight" "$T/plan" ||
	fail "plan qkv line"
"$CTL" plan --model-dir "$T/llama" --tp-size 4 --tp-rank 1 --rank-only >"$T/plan1" ||
	fail "plan --rank-only"
[ "$(grep -c '^rank ' "$T/plan1")" -eq 1 ] || fail "--rank-only should list 1 rank"
grep -q '^rank 1 (tp_rank=1,ep_rank=0)' "$T/plan1" || fail "--rank-only rank line"

# every scheme on every family; determinism: one scheme a family (the six in turn down the list,
# so every scheme is run twice on a sixth of the families) run again on 3 threads (the first run:
# the default, min(CPUs, 4)), byte-identical. shard_python.sh proves the bytes of every family
# against the numpy oracle; twelve runs a family here took 33 s of the normal pass.
i=0
twice=0
for f in $(san_fams "$FAMS"); do
	i=$((i + 1))
	j=0
	for q in none fp8-tensor fp8-channel fp8-block int8-channel int4-group; do
		j=$((j + 1))
		# Granite 4.0's, Bamba's and Falcon-H1's one Mamba group: quantized only at TP 1 (vLLM's
		# MambaMixer2)
		tp=2 && { [ "$f" = granitemoehybrid ] || [ "$f" = bamba ] || [ "$f" = falcon_h1 ]; } &&
			[ "$q" != none ] && tp=1
		args=(--model-dir "$T/$f" --tp-size "$tp" --tp-rank $((tp - 1)) --quant "$q" --group-size 32)
		# Zamba2's LoRA B has adapter_rank (the fixture's 8) columns: no int4 group of 32
		[ "$f" = zamba2 ] && [ "$q" = int4-group ] && args+=(--exclude "re:.*adapter_list\.[0-9]+\.1")
		# Gemma 3n's AltUp coefficients (altup_num_inputs 4 columns), per_layer_projection (16)
		# and a rank's laurel.linear_right (8): no int4 group of 32
		[ "$f" = gemma3n_text ] && [ "$q" = int4-group ] &&
			args+=(--exclude "re:.*(altup\.(correction|prediction)_coefs|per_layer_projection|laurel\.linear_right)")
		# CLIP's and SigLIP's text out_proj: a rank's 48 columns (hid 96 / 2): no int4 group of 32
		{ [ "$f" = clip ] || [ "$f" = siglip ]; } && [ "$q" = int4-group ] &&
			args+=(--exclude "re:text_model\.encoder\.layers\.[0-9]+\.self_attn\.out_proj")
		# Step 3's share_expert.down_proj: a rank's 48 columns (share_expert_dim 96 / 2): no int4
		# group of 32
		[ "$f" = step3_text ] && [ "$q" = int4-group ] &&
			args+=(--exclude "re:model\.layers\.[0-9]+\.share_expert\.down_proj")
		"$CTL" shard "${args[@]}" --out "$T/a.st" 2>"$T/err" || fail "$f $q: $(cat "$T/err")"
		[ $((i % 6)) -eq $((j % 6)) ] || continue
		"$CTL" shard "${args[@]}" --threads 3 --out "$T/b.st" 2>"$T/err" ||
			fail "$f $q (--threads 3): $(cat "$T/err")"
		cmp -s "$T/a.st" "$T/b.st" || fail "$f $q: two runs differ (default threads, then 3)"
		twice=$((twice + 1))
	done
done
[ "$twice" -ge 6 ] || fail "only $twice families were run twice"
"$CTL" shard --model-dir "$T/mixtral" --tp-size 1 --tp-rank 0 --ep-size 4 --ep-rank 3 \
	--out "$T/ep.st" || fail "mixtral ep shard"
# each family's own checks (five files: this one had grown past 800 lines)
. "$(dirname "$0")/shard_cli_families1.bash"
. "$(dirname "$0")/shard_cli_families2.bash"
. "$(dirname "$0")/shard_cli_families3.bash"
. "$(dirname "$0")/shard_cli_families3b.bash"
. "$(dirname "$0")/shard_cli_families4.bash"
# Maverick's FP8 release (quant_method fbgemm_fp8): fp8-channel keeps the codes, one F32
# scale per emitted row; modules_to_not_convert stay BF16; an FP8 tensor in a kept
# module is refused naming the entry
"$CTL" plan --model-dir "$T/llama4_fbgemm" --tp-size 2 --tp-rank 1 --ep-size 2 --ep-rank 1 \
	--quant fp8-channel --rank-only >"$T/plan" || fail "plan llama4_fbgemm"
for l in "1.feed_forward.experts.w13_weight *F8_E4M3 *\[2, 128, 256\]" \
	"1.feed_forward.experts.w13_weight_scale *F32 *\[2, 128, 1\]" \
	"1.feed_forward.experts.w2_weight_scale *F32 *\[2, 256, 1\]" \
	"0.feed_forward.down_proj.weight_scale *F32 *\[256, 1\]" \
	"1.self_attn.qkv_proj.weight *BF16 *\[192, 256\]"; do
	grep -q "language_model.model.layers.$l" "$T/plan" || fail "llama4_fbgemm line $l: $(cat "$T/plan")"
done
cp -r "$T/llama4_fbgemm" "$T/l4keep"
sed -i 's/"router",/"router", "experts",/' "$T/l4keep/config.json"
"$CTL" plan --model-dir "$T/l4keep" --tp-size 1 >/dev/null 2>"$T/err"
[ $? -eq 3 ] || fail "an FP8 stack in a kept module should exit 3"
grep -q "modules_to_not_convert entry 'experts'" "$T/err" || fail "fbgemm_fp8 keep: $(cat "$T/err")"

# metadata
"$CTL" shard --model-dir "$T/qwen2" --tp-size 2 --tp-rank 1 --quant fp8-block \
	--out "$T/m.st" || fail "qwen2 shard"
hdr=$(head -c 4096 "$T/m.st" | tr -d '\0')
for k in '"weightd.format":"1"' '"weightd.model":"qwen2"' '"weightd.rank":"tp_rank=1,ep_rank=0"' \
	'"weightd.layout":"tp=2,ep=1,quant=fp8-block' '"weightd.revision":"'; do
	case "$hdr" in *"$k"*) ;; *) fail "metadata lacks $k" ;; esac
done
# --name sets weightd.model (default: the folder's basename); bytes otherwise equal
"$CTL" shard --model-dir "$T/qwen2" --tp-size 2 --tp-rank 1 --quant fp8-block --name Qwen/Qwen2-0.5B \
	--out "$T/n.st" >/dev/null 2>&1
[ $? -eq 2 ] || fail "--name with '/' should exit 2"
"$CTL" shard --model-dir "$T/qwen2" --tp-size 2 --tp-rank 1 --quant fp8-block --name qwen2-small \
	--out "$T/n.st" || fail "shard --name"
hdr=$(head -c 4096 "$T/n.st" | tr -d '\0')
case "$hdr" in *'"weightd.model":"qwen2-small"'*) ;; *) fail "--name not in metadata" ;; esac
"$CTL" shard --model-dir "$T/qwen2" --tp-size 2 --tp-rank 1 --quant fp8-block --name qwen2 \
	--out "$T/n2.st" || fail "shard --name qwen2"
cmp -s "$T/n2.st" "$T/m.st" || fail "--name equal to the basename should change no byte"
"$CTL" plan --model-dir "$T/qwen2" --tp-size 1 --name=qwen2-small | grep -q "^model qwen2-small " ||
	fail "plan --name"

# BERT with the I64 embeddings.position_ids buffer: dropped and listed as skipped,
# the shards hold the same tensors as without it
"$MK" --family bert --position-ids --out "$T/bert_pos" >/dev/null || fail "wt-mkckpt bert --position-ids"
"$CTL" plan --model-dir "$T/bert_pos" --tp-size 2 >"$T/plan" || fail "plan bert_pos"
grep -qx "skipped embeddings.position_ids" "$T/plan" || fail "position_ids not listed as skipped"
for r in 0 1; do
	"$CTL" shard --model-dir "$T/bert_pos" --tp-size 2 --tp-rank $r --quant int8-channel \
		--name bert --out "$T/bp.st" || fail "shard bert_pos"
	"$CTL" shard --model-dir "$T/bert" --tp-size 2 --tp-rank $r --quant int8-channel \
		--out "$T/b0.st" || fail "shard bert"
	# identical but for the revision digest (64 hex digits) in the metadata
	cmp -s <(sed 's/"weightd.revision":"[0-9a-f]*"//' "$T/bp.st") \
		<(sed 's/"weightd.revision":"[0-9a-f]*"//' "$T/b0.st") ||
		fail "bert rank $r: position_ids changed the shard"
done
echo "shard_cli.sh: ok"
