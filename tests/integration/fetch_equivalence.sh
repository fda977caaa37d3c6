#!/usr/bin/env bash
# fetch_equivalence.sh — for every fixture family and several layouts (TP 2 and fp8-channel
# on all; TP 1/4 and int8-channel on those that cover every partition kind; EP for MoE),
# `weightctl fetch` from a real weightd writes, for
# every rank, a file byte-identical to `weightctl shard` of the same layout; a
# layout the model cannot take is exit 3 for both, and fetch leaves no file.
# And Mistral's native format (params.json + consolidated*.safetensors: wt-mkckpt --format
# mistral of llama): every rank fetched from weightd holds the tensors, byte for byte, of the
# same weights' transformers-format shards written offline; likewise Mistral-Large-3's native
# folder (wt-mkckpt --family mistral_large3 --format mistral) against its DeepSeek-V3-named twin.
. "$(dirname "$0")/fetch_lib/common.sh"
. "$(dirname "$0")/fetch_lib/fams.sh"
need_bins
FAMS=$(san_fams "llama qwen2 qwen3 mixtral qwen2_moe deepseek_v3 bert llama_fp8 llama_ct_fp8 llama_ct_fp8_tensor qwen3_ct_fp8_block gemma3_text phi3 deepseek_v2 starcoder2 glm4 olmo2 granite seed_oss smollm3 granitemoe granitemoeshared olmoe olmo phimoe gemma3 gemma3_hf5 gpt_oss llama4 llama4_text qwen3_next glm4_moe dots1 llama4_fbgemm ernie4_5 ernie4_5_moe cohere cohere2 qwen3_vl qwen3_vl_moe olmo3 exaone4 mistral3 mistral3_hf5 glm4v glm4v_moe apertus arcee lfm2 granitemoehybrid granitemoehybrid_dense hunyuan_v1_dense hunyuan_v1_moe bamba nemotron minimax jamba gpt_neox phi flex_olmo vaultgemma dbrx stablelm ministral falcon_h1 mpt longcat_flash gpt2 gpt_bigcode llava llava_next mamba falcon_mamba opt gptj bloom persimmon falcon mamba2 idefics3 smolvlm paligemma aya_vision llava_onevision cohere2_vision llava_next_video qwen2_audio internvl internvl_qwen3 roberta xlm_roberta xlm_roberta_cls llava_pixtral fuyu lfm2_vl internvl_qwen3_moe chameleon modernbert modernbert_cls granite_speech blip2 aria voxtral mllama zamba2 qwen3_cls bert_cls bert_tok qwen2_5_omni gemma3n_text qwen2_emb qwen2_rm qwen3_omni_moe whisper gpt2_cls clip internlm2 internlm2_ve minimax_m2 nemotron_h siglip jamba_cls modernbert_tok chatglm exaone qwen baichuan baichuan_7b minicpm internlm3 nemotron_h_moe minicpm3 lfm2_moe minicpm_moe internlm orion telechat2 jais arctic grok1 bailing_moe bailing_moe_v2 xverse aquila stablelm_epoch teleflm falcon_rw minimax_text01 minimax_vl_01 phi3v solar mimo deepseek_moe telechat afmoe ouro decilm jais2 deepseek_v32 step3_text plamo3 pangu_dense mimo_v2_flash internlm2_rm llama_bidir_emb nomic_bert gte_new llama_bidir_cls gritlm pangu_ultra_moe gte_new_cls bert_splade jina_vl pangu_pro_moe_v2 plamo2")
mkdir -p "$T/models" "$T/out"
step "wt-mkckpt of every family"
for f in $FAMS; do
	"$B/wt-mkckpt" --family "$f" --out "$T/models/$f" >/dev/null || die "wt-mkckpt $f"
done
"$B/wt-mkckpt" --family llama --format mistral --out "$T/models/llama_mistral" >/dev/null ||
	die "wt-mkckpt llama --format mistral"
"$B/wt-mkckpt" --family mistral_large3 --out "$T/models/ml3" >/dev/null ||
	die "wt-mkckpt mistral_large3"
"$B/wt-mkckpt" --family mistral_large3 --format mistral --out "$T/models/ml3_mistral" \
	>/dev/null || die "wt-mkckpt mistral_large3 --format mistral"
mkdir -p "$T/models/broken" && echo '{' >"$T/models/broken/config.json"
start_weightd wd "$T/models" "$T/cache"
URL=$WD_URL
step "weightctl models"
"$B/weightctl" models --endpoint "$URL" >"$T/models.txt" || die "weightctl models"
for f in $FAMS; do
	grep -q "^$f	" "$T/models.txt" || die "models does not list $f"
done
grep -q "^broken	unavailable	" "$T/models.txt" || die "models: broken folder not listed as unavailable"
"$B/weightctl" fetch --endpoint "$URL" --model broken --out "$T/out/x.st" --quiet 2>/dev/null
[ $? = 1 ] && [ ! -e "$T/out/x.st" ] || die "fetch of an unavailable model: want exit 1, no file"

n_ok=0
n_refused=0
# check FAMILY "LAYOUT FLAGS" TP EP: every rank of the layout written offline in one pass
# (`weightctl shard --out-dir`, each file what `--out` writes for its rank: shard_all.sh) and
# fetched in one `weightctl fetch --out-dir` (each file what `--out` fetches for its rank:
# fetch_out_dir.sh), compared file by file
check() {
	local fam=$1 flags=$2 tp=$3 ep=$4 d="$T/out/all" f="$T/out/fetched" e r
	rm -rf "$d" "$f"
	local lay="$flags --tp-size $tp --ep-size $ep"
	step "$fam [$lay]: weightctl shard"
	"$B/weightctl" shard --model-dir "$T/models/$fam" $lay --out-dir "$d" 2>"$T/out/shard.err"
	local rs=$?
	step "$fam [$lay]: weightctl fetch"
	"$B/weightctl" fetch --endpoint "$URL" --model "$fam" $lay --out-dir "$f" --quiet \
		2>"$T/out/fetch.err"
	local rf=$?
	if [ "$rs" = 3 ]; then
		[ "$rf" = 3 ] || die "$fam [$lay]: shard exit 3, fetch exit $rf: $(cat "$T/out/fetch.err")"
		[ ! -e "$f" ] || die "$fam [$lay]: refused fetch left a folder"
		n_refused=$((n_refused + 1))
		return 0
	fi
	[ "$rs" = 0 ] || die "$fam [$lay]: shard exit $rs: $(cat "$T/out/shard.err")"
	[ "$rf" = 0 ] || die "$fam [$lay]: fetch exit $rf: $(cat "$T/out/fetch.err")"
	for ((e = 0; e < ep; e++)); do
		for ((r = 0; r < tp; r++)); do
			cmp -s "$d/tp$r-ep$e.safetensors" "$f/tp$r-ep$e.safetensors" ||
				die "$fam [$lay] rank tp$r-ep$e: fetched file differs from weightctl shard"
			n_ok=$((n_ok + 1))
		done
	done
}
# Every family at TP 2, TP 3 (usually refused) and fp8-channel TP 2; TP 1, TP 4 and
# int8-channel with a bf16 cast only on the families that cover every partition kind (fams.sh's
# SAN_FAMS) and those whose checkpoint is quantized: the daemon and `weightctl shard` run the
# same planner and producer, and every family's layouts at TP 1/2/4/8 are proven offline
# (shard_python.sh's numpy oracle, shard_cli.sh, the reference tests); what this script proves
# is the serving path (registry, production, cache, chunks), per family. (All six layouts on
# every family took 92 s of the plain pass's foreground on 163 families.)
ALL_LAYOUTS="$SAN_FAMS llama_fp8 llama_ct_fp8 llama_ct_fp8_tensor qwen3_ct_fp8_block llama4_fbgemm"
for f in $FAMS; do
	check "$f" "" 2 1
	check "$f" "" 3 1 # usually refused (heads not divisible): exit 3 for both
	check "$f" "--quant fp8-channel" 2 1
	case " $ALL_LAYOUTS " in
	*" $f "*)
		check "$f" "" 1 1
		check "$f" "" 4 1
		check "$f" "--quant int8-channel --dtype bf16" 1 1
		;;
	esac
	case $f in
	mixtral | qwen2_moe | deepseek_v3 | deepseek_v2 | granitemoe | granitemoeshared | olmoe | phimoe | \
		gpt_oss | llama4 | llama4_text | qwen3_next | glm4_moe | dots1 | ernie4_5_moe | qwen3_vl_moe | flex_olmo | \
		internvl_qwen3_moe | aria)
		check "$f" "" 1 2
		check "$f" "--quant fp8-block" 2 2
		;;
	llama_fp8)
		check "$f" "--quant fp8-block" 1 1
		;;
	llama4_fbgemm) # fbgemm_fp8: dequantized, and passed through to fp8-channel
		check "$f" "" 1 2
		check "$f" "--quant fp8-channel" 2 2
		check "$f" "--quant fp8-block" 2 2
		;;
	esac
done
# same_tensors A B: the two safetensors files hold the same tensors (names, dtypes, shapes,
# bytes); their __metadata__ (model, revision) may differ
same_tensors() {
	python3 - "$1" "$2" <<'PY'
import json, struct, sys
def load(p):
    b = open(p, "rb").read()
    n = struct.unpack("<Q", b[:8])[0]
    h = json.loads(b[8:8 + n])
    h.pop("__metadata__", None)
    return h, b[8 + n:]
(ha, da), (hb, db) = load(sys.argv[1]), load(sys.argv[2])
sys.exit(0 if ha == hb and da == db and len(ha) > 0 else 1)
PY
}
n_native=0
for lay in "1" "2 --quant int8-channel" "4 --quant fp8-block"; do
	set -- $lay
	tp=$1
	shift
	rm -rf "$T/out/hf"
	"$B/weightctl" shard --model-dir "$T/models/llama" "$@" --tp-size "$tp" --out-dir "$T/out/hf" \
		2>"$T/out/shard.err" || die "llama [$lay]: shard: $(cat "$T/out/shard.err")"
	for r in $(seq 0 $((tp - 1))); do
		b="$T/out/native.st"
		rm -f "$b"
		step "llama_mistral [$lay] rank $r: weightctl fetch"
		"$B/weightctl" fetch --endpoint "$URL" --model llama_mistral "$@" --tp-size "$tp" \
			--tp-rank "$r" --out "$b" --quiet 2>"$T/out/fetch.err" ||
			die "llama_mistral [$lay] rank $r: fetch: $(cat "$T/out/fetch.err")"
		same_tensors "$T/out/hf/tp$r-ep0.safetensors" "$b" ||
			die "llama_mistral [$lay] rank $r: fetched tensors differ from llama's shard"
		n_native=$((n_native + 1))
	done
done
[ "$n_native" = 7 ] || die "Mistral native: $n_native rank files compared, want 7"
n_ml3=0
for lay in "2 1" "2 2" "2 1 --quant int8-channel" "4 1 --quant fp8-block"; do
	set -- $lay
	tp=$1 ep=$2
	shift 2
	rm -rf "$T/out/hf"
	"$B/weightctl" shard --model-dir "$T/models/ml3" "$@" --tp-size "$tp" --ep-size "$ep" \
		--out-dir "$T/out/hf" 2>"$T/out/shard.err" ||
		die "mistral_large3 [$lay]: shard: $(cat "$T/out/shard.err")"
	for r in $(seq 0 $((tp - 1))); do
		for e in $(seq 0 $((ep - 1))); do
			b="$T/out/native.st"
			rm -f "$b"
			step "ml3_mistral [$lay] rank $r/$e: weightctl fetch"
			"$B/weightctl" fetch --endpoint "$URL" --model ml3_mistral "$@" --tp-size "$tp" \
				--ep-size "$ep" --tp-rank "$r" --ep-rank "$e" --out "$b" --quiet \
				2>"$T/out/fetch.err" ||
				die "ml3_mistral [$lay] rank $r/$e: fetch: $(cat "$T/out/fetch.err")"
			same_tensors "$T/out/hf/tp$r-ep$e.safetensors" "$b" ||
				die "ml3_mistral [$lay] rank $r/$e: fetched tensors differ from the twin's shard"
			n_ml3=$((n_ml3 + 1))
		done
	done
done
[ "$n_ml3" = 12 ] || die "Mistral-Large-3 native: $n_ml3 rank files compared, want 12"
[ "$n_ok" -ge 60 ] || die "only $n_ok rank files compared"
[ "$n_refused" -ge 1 ] || die "no refused layout exercised exit 3"
echo "fetch_equivalence.sh: ok ($n_ok rank files byte-identical, $n_refused layouts refused alike," \
	"$n_native + $n_ml3 Mistral-native rank files with transformers' tensors)"
