#!/usr/bin/env bash
# shard_python.sh — weightctl shard checked by an outside reader: for every family
# fixture and several layouts (TP, EP with remainders, up_gate, GraniteMoE's stacked
# experts, OLMoE's full-width q/k norms, DeepSeek FP8-block pass-through, Llama 4's
# fbgemm_fp8 release dequantized and passed through to fp8-channel, Command R+'s per-head
# q/k norms split by heads, Qwen3-VL's tower with its deepstack mergers and Qwen3-VL-MoE's
# bmm expert stacks, Aria's fc1 / fc2 stacks, MiniMax-M2's q/k norms by the rank's heads,
# Step 3's replicated qkv_proj and checkpoint-stacked experts under TP / EP / up_gate)
# tests/integration/shard_oracle.py rebuilds each rank's tensors from the source
# files with numpy and compares names and bytes.
set -u
B=${WT_BUILD:-build}
PY=$(command -v python3 || echo /usr/bin/python3)
HERE=$(cd "$(dirname "$0")" && pwd)
T=$(mktemp -d "${TMPDIR:-/tmp}/wt-shardpy-XXXXXX")
trap 'rm -rf "$T"' EXIT
if ! "$PY" -c 'import numpy' 2>/dev/null; then
	"$PY" -m pip install -q numpy >/dev/null 2>&1 ||
		"$PY" -m pip install -q --break-system-packages numpy >/dev/null 2>&1
fi
"$PY" -c 'import numpy' || { echo "shard_python.sh: FAIL: numpy unavailable"; exit 1; }
. "$HERE/fetch_lib/fams.sh"
RUN=" $(san_fams "llama qwen2 qwen3 mixtral qwen2_moe deepseek_v3 bert qwen2_vl qwen2_vl_hf5 qwen2_5_vl qwen2_5_vl_hf5 gemma gemma2 gemma3_text phi3 deepseek_v2 starcoder2 glm glm4 olmo2 granite seed_oss smollm3 granitemoe granitemoeshared olmoe olmo phimoe gemma3 gemma3_hf5 gpt_oss llama4 llama4_text qwen3_next glm4_moe dots1 llama4_fbgemm ernie4_5 ernie4_5_moe cohere cohere2 qwen3_vl qwen3_vl_moe olmo3 exaone4 mistral3 mistral3_hf5 glm4v glm4v_moe apertus arcee lfm2 granitemoehybrid granitemoehybrid_dense hunyuan_v1_dense hunyuan_v1_moe bamba nemotron minimax jamba gpt_neox phi flex_olmo vaultgemma dbrx stablelm ministral falcon_h1 mpt longcat_flash gpt2 gpt_bigcode llava llava_next mamba falcon_mamba opt gptj bloom persimmon falcon mamba2 idefics3 smolvlm paligemma aya_vision llava_onevision cohere2_vision llava_next_video qwen2_audio internvl internvl_qwen3 roberta xlm_roberta xlm_roberta_cls llava_pixtral fuyu lfm2_vl internvl_qwen3_moe chameleon modernbert modernbert_cls granite_speech blip2 aria voxtral mllama zamba2 qwen3_cls bert_cls bert_tok qwen2_5_omni gemma3n_text qwen2_emb qwen2_rm qwen3_omni_moe whisper gpt2_cls clip internlm2 internlm2_ve internlm2_rm minimax_m2 nemotron_h siglip jamba_cls modernbert_tok chatglm exaone qwen baichuan baichuan_7b minicpm internlm3 nemotron_h_moe minicpm3 lfm2_moe minicpm_moe internlm orion telechat2 jais arctic grok1 bailing_moe bailing_moe_v2 xverse aquila stablelm_epoch teleflm falcon_rw minimax_text01 minimax_vl_01 phi3v solar mimo deepseek_moe telechat afmoe ouro decilm jais2 deepseek_v32 step3_text plamo3 pangu_dense mimo_v2_flash llama_bidir_emb nomic_bert gte_new llama_bidir_cls gritlm pangu_ultra_moe gte_new_cls bert_splade jina_vl pangu_pro_moe_v2 plamo2") "
fail=0
for f in llama qwen2 qwen3 mixtral qwen2_moe deepseek_v3 bert qwen2_vl qwen2_vl_hf5 qwen2_5_vl qwen2_5_vl_hf5 \
	gemma gemma2 gemma3_text phi3 deepseek_v2 starcoder2 glm glm4 olmo2 granite seed_oss smollm3 granitemoe \
	granitemoeshared olmoe olmo phimoe gemma3 gemma3_hf5 gpt_oss llama4 llama4_text qwen3_next glm4_moe dots1 llama4_fbgemm \
	ernie4_5 ernie4_5_moe cohere cohere2 qwen3_vl qwen3_vl_moe olmo3 exaone4 mistral3 mistral3_hf5 glm4v glm4v_moe apertus arcee lfm2 granitemoehybrid granitemoehybrid_dense hunyuan_v1_dense hunyuan_v1_moe bamba nemotron minimax jamba gpt_neox phi flex_olmo vaultgemma dbrx stablelm ministral falcon_h1 mpt longcat_flash gpt2 gpt_bigcode llava llava_next mamba falcon_mamba opt gptj bloom persimmon falcon mamba2 idefics3 smolvlm paligemma aya_vision llava_onevision cohere2_vision llava_next_video qwen2_audio internvl internvl_qwen3 roberta xlm_roberta xlm_roberta_cls llava_pixtral fuyu lfm2_vl internvl_qwen3_moe chameleon modernbert modernbert_cls granite_speech blip2 aria voxtral mllama zamba2 qwen3_cls bert_cls bert_tok qwen2_5_omni gemma3n_text qwen2_emb qwen2_rm qwen3_omni_moe whisper gpt2_cls clip internlm2 internlm2_ve internlm2_rm minimax_m2 nemotron_h siglip jamba_cls modernbert_tok chatglm exaone qwen baichuan baichuan_7b minicpm internlm3 nemotron_h_moe minicpm3 lfm2_moe minicpm_moe internlm orion telechat2 jais arctic grok1 bailing_moe bailing_moe_v2 xverse aquila stablelm_epoch teleflm falcon_rw minimax_text01 minimax_vl_01 phi3v solar mimo deepseek_moe telechat afmoe ouro decilm jais2 deepseek_v32 step3_text plamo3 pangu_dense mimo_v2_flash llama_bidir_emb nomic_bert gte_new llama_bidir_cls gritlm pangu_ultra_moe gte_new_cls bert_splade jina_vl pangu_pro_moe_v2 plamo2; do
	"$B/wt-mkckpt" --family "$f" --out "$T/$f" >/dev/null || { echo "FAIL: wt-mkckpt $f"; exit 1; }
done
# the cases of the families this run checks, one a line for shard_oracle_batch.py (one
# Python process for all: starting one a case was most of this script's time)
while read -r fam tp ep quant order; do
	case "$RUN" in *" $fam "*) ;; *) continue ;; esac
	echo "$B/weightctl $T/$fam $tp $ep $quant $order"
done >"$T/cases" <<'CASES'
llama 4 1 none
llama 8 1 none
qwen2 2 1 none
qwen3 8 1 none
mixtral 1 4 none
mixtral 2 1 none up_gate
mixtral 2 3 none
qwen2_moe 2 1 none
qwen2_moe 1 4 none
bert 4 1 none
deepseek_v3 4 1 none
deepseek_v3 2 1 fp8-block
deepseek_v3 2 2 fp8-block up_gate
qwen2_vl 1 1 none
qwen2_vl 2 1 none
qwen2_vl 4 1 none
qwen2_vl_hf5 4 1 none
qwen2_5_vl 1 1 none
qwen2_5_vl 2 1 none
qwen2_5_vl 4 1 none
qwen2_5_vl_hf5 2 1 none
gemma 1 1 none
gemma 2 1 none
gemma 4 1 none
gemma2 2 1 none
gemma2 8 1 none
gemma3_text 2 1 none
gemma3_text 4 1 none
gemma3 1 1 none
gemma3 2 1 none
gemma3 4 1 none
gemma3_hf5 2 1 none
gemma3_hf5 4 1 none
phi3 1 1 none
phi3 2 1 none
phi3 4 1 none
phi3 8 1 none
deepseek_v2 2 1 none
deepseek_v2 4 2 none
starcoder2 2 1 none
starcoder2 4 1 none
glm 2 1 none
glm 8 1 none
glm4 4 1 none
olmo2 2 1 none
olmo2 8 1 none
granite 4 1 none
granite 8 1 none
seed_oss 1 1 none
seed_oss 2 1 none
seed_oss 4 1 none
seed_oss 8 1 none
smollm3 1 1 none
smollm3 2 1 none
smollm3 4 1 none
smollm3 8 1 none
granitemoe 1 1 none
granitemoe 2 2 none
granitemoe 2 1 none up_gate
granitemoe 1 4 none
granitemoe 8 1 none
granitemoeshared 2 1 none
granitemoeshared 4 2 none up_gate
olmoe 1 1 none
olmoe 2 1 none
olmoe 4 1 none
olmoe 2 2 none
olmoe 1 4 none up_gate
phimoe 1 1 none
phimoe 2 1 none
phimoe 8 1 none
phimoe 2 2 none
phimoe 1 4 none up_gate
olmo 1 1 none
olmo 2 1 none
olmo 8 1 none
gpt_oss 1 1 none
gpt_oss 2 1 none
gpt_oss 8 1 none
gpt_oss 2 2 none
gpt_oss 1 4 none up_gate
llama4 1 1 none
llama4 2 1 none
llama4 4 1 none
llama4 1 2 none
llama4 2 2 none up_gate
llama4 1 4 none
llama4_text 2 1 none
llama4_text 4 2 none
qwen3_next 1 1 none
qwen3_next 2 1 none
qwen3_next 4 1 none
qwen3_next 1 2 none
qwen3_next 2 2 none up_gate
qwen3_next 4 4 none
glm4_moe 1 1 none
glm4_moe 2 1 none
glm4_moe 4 1 none
glm4_moe 1 2 none
glm4_moe 1 4 none
glm4_moe 2 2 none up_gate
glm4_moe 2 3 none
dots1 1 1 none
dots1 2 1 none
dots1 8 1 none
dots1 1 2 none
dots1 2 2 none up_gate
dots1 2 3 none
llama4_fbgemm 2 1 none
llama4_fbgemm 1 2 none
llama4_fbgemm 2 2 none up_gate
llama4_fbgemm 1 1 fp8-channel
llama4_fbgemm 2 1 fp8-channel
llama4_fbgemm 4 1 fp8-channel
llama4_fbgemm 1 2 fp8-channel
llama4_fbgemm 2 2 fp8-channel up_gate
ernie4_5 1 1 none
ernie4_5 2 1 none
ernie4_5 4 1 none
ernie4_5 8 1 none
ernie4_5_moe 1 1 none
ernie4_5_moe 2 1 none
ernie4_5_moe 4 1 none
ernie4_5_moe 1 2 none
ernie4_5_moe 1 4 none
ernie4_5_moe 2 2 none up_gate
ernie4_5_moe 2 3 none
cohere 1 1 none
cohere 2 1 none
cohere 4 1 none
cohere 8 1 none
cohere2 1 1 none
cohere2 2 1 none
cohere2 4 1 none
qwen3_vl 1 1 none
qwen3_vl 2 1 none
qwen3_vl 4 1 none
qwen3_vl_moe 1 1 none
qwen3_vl_moe 2 1 none
qwen3_vl_moe 4 1 none
qwen3_vl_moe 1 4 none
qwen3_vl_moe 2 2 none up_gate
qwen3_vl_moe 1 3 none
olmo3 2 1 none
olmo3 4 1 none
olmo3 8 1 none
exaone4 1 1 none
exaone4 2 1 none
exaone4 4 1 none
exaone4 8 1 none
mistral3 1 1 none
mistral3 2 1 none
mistral3 4 1 none
mistral3_hf5 2 1 none
mistral3_hf5 4 1 none
glm4v 1 1 none
glm4v 2 1 none
glm4v 4 1 none
glm4v_moe 1 1 none
glm4v_moe 2 1 none
glm4v_moe 4 1 none
glm4v_moe 1 2 none
glm4v_moe 2 2 none up_gate
glm4v_moe 1 3 none
apertus 2 1 none
apertus 4 1 none
apertus 8 1 none
arcee 2 1 none
arcee 4 1 none
arcee 8 1 none
lfm2 1 1 none
lfm2 2 1 none
lfm2 4 1 none
lfm2 8 1 none
granitemoehybrid 1 1 none
granitemoehybrid 2 1 none
granitemoehybrid 4 1 none
granitemoehybrid 2 2 none
granitemoehybrid 1 4 none up_gate
granitemoehybrid_dense 1 1 none
granitemoehybrid_dense 2 1 none
hunyuan_v1_dense 1 1 none
hunyuan_v1_dense 2 1 none
hunyuan_v1_dense 4 1 none
hunyuan_v1_dense 8 1 none
hunyuan_v1_moe 1 1 none
hunyuan_v1_moe 2 1 none
hunyuan_v1_moe 4 1 none
hunyuan_v1_moe 1 2 none
hunyuan_v1_moe 1 4 none
hunyuan_v1_moe 2 2 none up_gate
bamba 1 1 none
bamba 2 1 none
bamba 4 1 none
bamba 8 1 none
falcon_h1 1 1 none
falcon_h1 2 1 none
falcon_h1 4 1 none
falcon_h1 8 1 none
nemotron 2 1 none
nemotron 4 1 none
nemotron 8 1 none
minimax 1 1 none
minimax 2 1 none
minimax 4 1 none
minimax 8 1 none
minimax 1 2 none
minimax 2 2 none up_gate
jamba 1 1 none
jamba 2 1 none
jamba 4 1 none
jamba 2 2 none up_gate
gpt_neox 1 1 none
gpt_neox 2 1 none
gpt_neox 4 1 none
gpt_neox 8 1 none
phi 2 1 none
phi 4 1 none
phi 8 1 none
flex_olmo 2 1 none
flex_olmo 4 1 none
flex_olmo 2 2 none
vaultgemma 2 1 none
vaultgemma 4 1 none
dbrx 1 1 none
dbrx 2 1 none
dbrx 4 1 none
dbrx 1 2 none
dbrx 2 2 none up_gate
stablelm 2 1 none
stablelm 4 1 none
stablelm 8 1 none
ministral 2 1 none
ministral 4 1 none
mpt 1 1 none
mpt 2 1 none
mpt 4 1 none
longcat_flash 1 1 none
longcat_flash 2 1 none
longcat_flash 8 1 none
longcat_flash 1 2 none
longcat_flash 2 2 none up_gate
gpt2 1 1 none
gpt2 2 1 none
gpt2 4 1 none
gpt2 8 1 none
gpt_bigcode 2 1 none
gpt_bigcode 4 1 none
gpt_bigcode 8 1 none
llava 1 1 none
llava 2 1 none
llava 4 1 none
llava_next 2 1 none
llava_next 4 1 none
mamba 1 1 none
mamba 2 1 none
mamba 4 1 none
mamba 8 1 none
falcon_mamba 2 1 none
falcon_mamba 8 1 none
opt 2 1 none
opt 4 1 none
opt 8 1 none
gptj 2 1 none
gptj 4 1 none
gptj 8 1 none
bloom 1 1 none
bloom 2 1 none
bloom 4 1 none
bloom 8 1 none
persimmon 2 1 none
persimmon 4 1 none
persimmon 8 1 none
falcon 2 1 none
falcon 4 1 none
falcon 8 1 none
mamba2 1 1 none
mamba2 2 1 none
idefics3 1 1 none
idefics3 2 1 none
idefics3 4 1 none
smolvlm 2 1 none
smolvlm 4 1 none
paligemma 1 1 none
paligemma 2 1 none
paligemma 4 1 none
aya_vision 2 1 none
aya_vision 4 1 none
llava_onevision 2 1 none
llava_onevision 4 1 none
cohere2_vision 2 1 none
cohere2_vision 4 1 none
llava_next_video 2 1 none
llava_next_video 4 1 none
qwen2_audio 2 1 none
qwen2_audio 4 1 none
internvl 2 1 none
internvl 4 1 none
internvl_qwen3 2 1 none
internvl_qwen3 4 1 none
roberta 2 1 none
roberta 4 1 none
xlm_roberta 2 1 none
xlm_roberta 8 1 none
xlm_roberta_cls 2 1 none
xlm_roberta_cls 4 1 none
llava_pixtral 1 1 none
llava_pixtral 2 1 none
llava_pixtral 4 1 none
fuyu 2 1 none
fuyu 4 1 none
fuyu 8 1 none
lfm2_vl 1 1 none
lfm2_vl 2 1 none
lfm2_vl 4 1 none
internvl_qwen3_moe 2 1 none
internvl_qwen3_moe 4 1 none
internvl_qwen3_moe 1 2 none
internvl_qwen3_moe 2 2 none
chameleon 2 1 none
chameleon 4 1 none
chameleon 8 1 none
modernbert 2 1 none
modernbert 4 1 none
modernbert 8 1 none
modernbert_cls 2 1 none
modernbert_cls 4 1 none
granite_speech 2 1 none
granite_speech 4 1 none
blip2 1 1 none
blip2 2 1 none
blip2 4 1 none
blip2 8 1 none
aria 2 1 none
aria 4 1 none
aria 1 2 none up_gate
aria 2 2 none
voxtral 1 1 none
voxtral 2 1 none
voxtral 4 1 none
mllama 2 1 none
mllama 4 1 none
mllama 8 1 none
zamba2 1 1 none
zamba2 2 1 none
zamba2 4 1 none
qwen3_cls 2 1 none
qwen3_cls 4 1 none
bert_cls 2 1 none
bert_cls 4 1 none
bert_tok 2 1 none
bert_tok 4 1 none
qwen2_5_omni 2 1 none
qwen2_5_omni 4 1 none
gemma3n_text 1 1 none
gemma3n_text 2 1 none
gemma3n_text 4 1 none
qwen2_emb 2 1 none
qwen2_emb 4 1 none
qwen2_rm 2 1 none
qwen2_rm 4 1 none
qwen3_omni_moe 2 1 none
qwen3_omni_moe 4 1 none
qwen3_omni_moe 2 2 none
whisper 1 1 none
whisper 2 1 none
whisper 4 1 none
gpt2_cls 2 1 none
gpt2_cls 4 1 none
clip 2 1 none
clip 4 1 none
internlm2 2 1 none
internlm2 4 1 none
internlm2 8 1 none
internlm2_ve 2 1 none
internlm2_ve 8 1 none
internlm2_rm 2 1 none
internlm2_rm 4 1 none
minimax_m2 1 1 none
minimax_m2 2 1 none
minimax_m2 4 1 none
minimax_m2 8 1 none
minimax_m2 1 2 none
minimax_m2 2 2 none up_gate
nemotron_h 2 1 none
nemotron_h 4 1 none
siglip 2 1 none
siglip 4 1 none
jamba_cls 2 1 none
jamba_cls 4 1 none
jamba_cls 2 2 none
modernbert_tok 2 1 none
modernbert_tok 4 1 none
chatglm 2 1 none
chatglm 4 1 none
chatglm 8 1 none
exaone 2 1 none
exaone 4 1 none
exaone 8 1 none
qwen 2 1 none
qwen 4 1 none
qwen 8 1 none
baichuan 2 1 none
baichuan 4 1 none
baichuan 8 1 none
baichuan_7b 2 1 none
baichuan_7b 4 1 none
minicpm 2 1 none
minicpm 4 1 none
minicpm 8 1 none
internlm3 2 1 none
internlm3 4 1 none
internlm3 8 1 none
nemotron_h_moe 2 1 none
nemotron_h_moe 4 1 none
nemotron_h_moe 2 2 none
nemotron_h_moe 1 2 none up_gate
minicpm3 2 1 none
minicpm3 4 1 none
minicpm3 8 1 none
lfm2_moe 2 1 none
lfm2_moe 4 1 none
lfm2_moe 2 2 none
lfm2_moe 1 2 none up_gate
minicpm_moe 1 1 none
minicpm_moe 2 1 none
minicpm_moe 4 1 none
minicpm_moe 2 1 none up_gate
internlm 2 1 none
internlm 4 1 none
internlm 8 1 none
orion 2 1 none
orion 4 1 none
orion 4 1 none up_gate
telechat2 2 1 none
telechat2 4 1 none
telechat2 8 1 none
jais 2 1 none
jais 4 1 none
jais 8 1 none
arctic 1 1 none
arctic 2 1 none
arctic 4 1 none
arctic 2 1 none up_gate
grok1 2 1 none
grok1 4 1 none
grok1 1 2 none
grok1 2 2 none up_gate
bailing_moe 2 1 none
bailing_moe 4 1 none
bailing_moe_v2 2 1 none
bailing_moe_v2 4 1 none
bailing_moe_v2 8 1 none
xverse 2 1 none
xverse 4 1 none
xverse 8 1 none
aquila 2 1 none
aquila 4 1 none
aquila 8 1 none
pangu_dense 2 1 none
pangu_dense 4 1 none
pangu_dense 8 1 none
pangu_ultra_moe 2 1 none
pangu_ultra_moe 4 1 none
pangu_ultra_moe 8 1 none
pangu_ultra_moe 2 2 none up_gate
pangu_pro_moe_v2 2 1 none
pangu_pro_moe_v2 4 1 none
pangu_pro_moe_v2 2 2 none up_gate
pangu_pro_moe_v2 1 2 none
llama_bidir_emb 2 1 none
llama_bidir_emb 4 1 none
llama_bidir_cls 2 1 none
llama_bidir_cls 4 1 none
gritlm 2 1 none
gritlm 4 1 none
nomic_bert 2 1 none
nomic_bert 4 1 none
nomic_bert 8 1 none
gte_new 2 1 none
gte_new 4 1 none
gte_new 8 1 none
gte_new_cls 2 1 none
gte_new_cls 4 1 none
bert_splade 2 1 none
bert_splade 4 1 none
jina_vl 2 1 none
jina_vl 4 1 none
stablelm_epoch 2 1 none
stablelm_epoch 4 1 none
stablelm_epoch 8 1 none
teleflm 2 1 none
teleflm 4 1 none
teleflm 8 1 none
falcon_rw 2 1 none
falcon_rw 4 1 none
falcon_rw 8 1 none
minimax_text01 2 1 none
minimax_text01 4 1 none
minimax_text01 8 1 none
minimax_text01 2 2 none up_gate
minimax_vl_01 2 1 none
minimax_vl_01 4 1 none
minimax_vl_01 2 2 none up_gate
phi3v 2 1 none
phi3v 4 1 none
phi3v 8 1 none
solar 2 1 none
solar 4 1 none
solar 8 1 none
mimo 2 1 none
mimo 4 1 none
mimo 8 1 none
deepseek_moe 1 1 none
deepseek_moe 2 1 none
deepseek_moe 4 1 none
deepseek_moe 8 1 none
deepseek_moe 1 2 none
deepseek_moe 2 2 none up_gate
deepseek_moe 2 3 none
telechat 2 1 none
telechat 4 1 none
telechat 8 1 none
afmoe 2 1 none
afmoe 4 1 none
afmoe 8 1 none
ouro 2 1 none
ouro 4 1 none
ouro 8 1 none
ouro 4 1 none up_gate
decilm 2 1 none
decilm 4 1 none
decilm 8 1 none
jais2 2 1 none
jais2 4 1 none
jais2 8 1 none
deepseek_v32 2 1 none
deepseek_v32 4 1 none
deepseek_v32 8 1 none
deepseek_v32 2 2 none up_gate
step3_text 1 1 none
step3_text 2 1 none
step3_text 4 1 none
step3_text 1 2 none
step3_text 2 2 none up_gate
step3_text 2 3 none
step3_text 1 4 none
plamo3 2 1 none
plamo3 4 1 none
plamo3 8 1 none
plamo3 4 1 none up_gate
plamo2 2 1 none
plamo2 4 1 none
plamo2 8 1 none
plamo2 4 1 none up_gate
mimo_v2_flash 2 1 none
mimo_v2_flash 4 1 none
mimo_v2_flash 8 1 none
mimo_v2_flash 2 2 none up_gate
mimo_v2_flash 1 2 none
CASES
case "$B$T" in *[[:space:]]*) echo "shard_python.sh: FAIL: a space in '$B' or '$T'"; exit 1 ;; esac
"$PY" "$HERE/shard_oracle_batch.py" <"$T/cases" || fail=1
[ "$fail" = 0 ] || { echo "shard_python.sh: FAIL: layouts differ (above)"; exit 1; }
echo "shard_python.sh: ok"
