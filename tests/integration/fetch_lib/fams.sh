# fams.sh — the families an integration script loops over (sourced, not run).
# The normal pass runs every family; a sanitizer build (WT_BUILD names an asan
# build) loops over a subset that still covers every partition kind — dense,
# fused in the checkpoint (Phi-3), MoE per expert (Mixtral) and stacked
# (GraniteMoE), MLA with FP8 blocks (DeepSeek-V3), encoder (BERT), vision towers
# (Qwen2-VL, Gemma 3), full-width q/k norms (OLMoE), a 1-D vocab-parallel tensor
# (PhiMoE's lm_head.bias), MXFP4 experts with interleaved gate/up and expert biases
# (GPT-OSS), gated q and the linear attention's conv1d segments (Qwen3-Next), per-head
# q/k norms split by heads with the kv heads replicated (Cohere), deepstack mergers and
# bmm expert stacks under mlp. (Qwen3-VL-MoE) —
# since the normal pass proves every family byte for byte and the planner's unit
# tests run every family under the sanitizers. Keeps the ASan pass of `make test` within the
# CI time it had before the families grew.
SAN_FAMS="llama mixtral deepseek_v3 bert qwen2_vl phi3 granitemoe olmoe phimoe gemma3 gpt_oss qwen3_next cohere qwen3_vl_moe"

# san_fams "FAM ...": the families given, or under a sanitizer build those of them
# in SAN_FAMS (named on stderr).
san_fams() {
	case "${WT_BUILD:-build}" in
	*asan*) ;;
	*)
		echo "$1"
		return
		;;
	esac
	local out="" f
	for f in $1; do
		case " $SAN_FAMS " in *" $f "*) out="$out $f" ;; esac
	done
	echo "${0##*/}: sanitizer build: families$out (the normal pass runs all)" >&2
	echo "$out"
}

# san_wanted FAM: true unless this is a sanitizer build and FAM is not in SAN_FAMS (for the
# scripts whose per-family checks are written out one by one).
san_wanted() {
	case "${WT_BUILD:-build}" in
	*asan*) case " $SAN_FAMS " in *" $1 "*) return 0 ;; *) return 1 ;; esac ;;
	*) return 0 ;;
	esac
}
