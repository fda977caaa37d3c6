"""shard_oracle_more.py — the families shard_oracle.py hands over whole by architecture
(ORACLES: architecture -> its cut, called as cut(name, src, cfg, T, r, pad, add) for every
checkpoint tensor; CFGS: architecture -> the config.json rewritten onto the key names
expected() reads), beside it since it reached 800 lines.

InternLM2ForCausalLM (vLLM's internlm2.py, wqkv per kv group), InternLM2VEForCausalLM
(internlm2_ve.py, the visual expert cut as feed_forward) and InternLM2ForRewardModel (internlm2.py,
v_head by columns): shard_oracle_internlm2.py.
ChatGLMModel (vLLM's chatglm.py, query_key_value [q; k; v]): shard_oracle_chatglm.py.
ExaoneForCausalLM (vLLM's exaone.py, q/k/v by the fused pass): shard_oracle_exaone.py.
QWenLMHeadModel (vLLM's qwen.py, Qwen's first generation): shard_oracle_qwen.py.
MiniCPMForCausalLM (vLLM's minicpm.py): Llama's cut, tied unless the config says otherwise
(MiniCPMConfig's default); MiniCPM-MoE's mlp.ws / w2s (every expert on every rank, cut by tp):
shard_oracle_minicpm.py.
MiniCPM3ForCausalLM (vLLM's minicpm3.py): DeepSeek-V2's MLA cut by expected() (q_a_proj /
kv_a_proj_with_mqa and the latent norms whole, q_b_proj / kv_b_proj rows, o_proj columns) and
Llama's MLP, tied unless the config says otherwise (MiniCPM3Config's default).
Lfm2MoeForCausalLM (vLLM's lfm2_moe.py): LFM2's cut (shard_oracle_mix.py lfm2, expert_bias as
gate.e_score_correction_bias) and expected()'s stacked experts w1 / w3 / w2, tied by
tie_embedding first (Lfm2MoeConfig), true by default.
TeleChat2ForCausalLM (vLLM's telechat2.py, key_value interleaved per kv head, Llama's runtime
names): shard_oracle_telechat2.py; TeleChatForCausalLM (the first generation) the same.
JAISLMHeadModel (vLLM's jais.py, GPT-2's cut on the transposed Conv1D weights with mlp.c_fc2):
shard_oracle_jais.py.
ArcticForCausalLM (vLLM's arctic.py, the ArcticMLPs' w13 / w2 and ArcticMoE's ws / w2s):
shard_oracle_arctic.py.
Grok1ModelForCausalLM (vLLM's grok1.py): no oracle of its own; grok1_src renames its tensors
for expected()'s common cut (q/k/v fused by heads, o_proj columns, the router whole, the
experts stacked): experts.{j}.linear / linear_v / linear_1 as w1 / w3 / w2 (vLLM's
expert_params_mapping: gate, up, down), the norms' .scale as .weight (load_weights' rename).
BailingMoeForCausalLM (the first vLLM bailing_moe.py, query_key_value [q; k; v], every layer
MoE, TP only) and BailingMoeV2ForCausalLM (Ling 2.0: kv heads replicated, dense first layers,
MTP layers dropped): shard_oracle_bailing.py.
AfmoeForCausalLM (vLLM's afmoe.py: the output gate self_attn.gate_proj, the router renamed, TP
only; its own q/k/v and gate/up, OWN_FUSED): shard_oracle_afmoe.py.
DeciLMForCausalLM (Llama-Nemotron: Llama's cut, each layer with its own kv heads and MLP width,
its no-op halves absent): shard_oracle_decilm.py.
RWForCausalLM (Falcon's original releases, vLLM's falcon.py under its RWConfig): falcon's cut on
RWConfig's reading of the keys, shard_oracle_falcon_rw.py.
MiniMaxText01ForCausalLM / MiniMaxM1ForCausalLM (the remote names vLLM's registry maps onto
minimax_text_01.py, as MiniMaxForCausalLM): MINIMAX_ARCHS, the lightning attention's cut in
expected() (the layer kinds come from the tensors' names, attn_type_list is not read).
MiMoForCausalLM (vLLM's mimo.py over qwen2.py): no oracle of its own; mimo_src drops the
multi-token-prediction layers (model.mtp_layers.*, as vLLM's WeightsMapper maps the prefix to
None) and expected() cuts the rest as Qwen2's (q/k/v and their biases fused by heads).

OuroForCausalLM (vLLM's ouro.py): Qwen2's cut without biases, the early-exit gate's weight by
columns: shard_oracle_ouro.py.
Plamo3ForCausalLM (vLLM's plamo3.py): q/k/v and gate/up fused in the checkpoint under
model.layers.layers.{i}.mixer / .mlp, the rank's heads and rows: shard_oracle_plamo3.py.
Plamo2ForCausalLM (vLLM's plamo2.py): the Mamba mixer's per-head [gate; x] in_proj
de-interleaved, the attention's fused q/k/v, gate/up fused, under model.layers.layers.{i}.:
shard_oracle_plamo2.py.

NomicBertModel (vLLM's bert_with_rope.py): its checkpoint names onto vLLM's, Wqkv by heads of
each third, fc12 / fc11 merged into gate_up_proj gate first: shard_oracle_nomic.py.
GteNewModel (vLLM's bert_with_rope.py): NewModel's names onto vLLM's, qkv_proj by heads of each
third, up_gate_proj [up; gate] re-merged gate first: shard_oracle_gte.py.
Phi3VForCausalLM (vLLM's phi3v.py): Phi-3's language model to expected()'s common rules, the CLIP
tower up to img_processor.layer_idx as CLIPModel's (its q/k/v fused there: OWN_FUSED), the
separators and the projector whole: shard_oracle_phi3v.py.

Step3TextForCausalLM (vLLM's step3_text.py): q/k/v joined whole into the replicated qkv_proj, wq
by rows (heads), o_proj by columns, its own gate_up merges (OWN_FUSED); the stacked experts read
one at a time (step3_src) and left to expected()'s common expert rules (COMMON), EP and the w13
order included: shard_oracle_step3.py.

MiMoV2FlashForCausalLM (vLLM's mimo_v2_flash.py): each layer's q/k/v fused by its own heads with
v heads of v_head_dim rows, the sinks by heads, the router whole, the experts to COMMON, the MTP
tensors dropped (mimo_v2_src): shard_oracle_mimo_v2.py.
PanguProMoEV2ForCausalLM (vLLM's openpangu.py, the sink attention): q/k/v fused by heads with v
heads of v_channels rows, the static sinks by kv heads, the router bias renamed, the MTP layers
dropped (pangu_v2_src): shard_oracle_pangu_v2.py.

SRCS: model_type -> the checkpoint's tensors rewritten before expected() reads them.
"""
import re

from shard_oracle_afmoe import afmoe, afmoe_cfg
from shard_oracle_arctic import arctic, arctic_cfg
from shard_oracle_bailing import bailing, bailing_cfg
from shard_oracle_decilm import decilm, decilm_cfg
from shard_oracle_chatglm import ARCHS as CHATGLM_ARCHS, chatglm, chatglm_cfg
from shard_oracle_exaone import exaone, exaone_cfg
from shard_oracle_falcon_rw import falcon_rw, falcon_rw_cfg
from shard_oracle_gte import gte_new, gte_new_cls
from shard_oracle_internlm2 import internlm2
from shard_oracle_jais import jais, jais_cfg
from shard_oracle_mimo_v2 import mimo_v2, mimo_v2_cfg, mimo_v2_src
from shard_oracle_minicpm import minicpm, minicpm_cfg
from shard_oracle_nomic import nomic, nomic_cfg
from shard_oracle_ouro import ouro
from shard_oracle_pangu_v2 import pangu_v2, pangu_v2_src
from shard_oracle_phi3v import phi3v
from shard_oracle_plamo2 import plamo2
from shard_oracle_plamo3 import plamo3
from shard_oracle_qwen import qwen
from shard_oracle_step3 import step3, step3_cfg, step3_src
from shard_oracle_telechat2 import telechat2, telechat2_cfg

ORACLES = {"InternLM2ForCausalLM": internlm2, "ExaoneForCausalLM": exaone, "QWenLMHeadModel": qwen}
ORACLES.update({a: chatglm for a in CHATGLM_ARCHS})
ORACLES["MiniCPMForCausalLM"] = minicpm
ORACLES["InternLM2VEForCausalLM"] = internlm2  # InternLM2's cut with feed_forward_ve as feed_forward
ORACLES["InternLM2ForRewardModel"] = internlm2  # InternLM2's cut, no output, v_head by columns
ORACLES["TeleChat2ForCausalLM"] = telechat2
# TeleChat's first generation: vLLM's registry maps TeleChatForCausalLM onto telechat2.py
ORACLES["TeleChatForCausalLM"] = telechat2
# the oracles that lay out their fused q/k/v and gate/up themselves: expected()'s fused pass (by
# .query / .gate_proj names) skips them
OWN_FUSED = {"TeleChat2ForCausalLM", "TeleChatForCausalLM", "AfmoeForCausalLM",
             "DeciLMForCausalLM", "Step3TextForCausalLM", "Plamo3ForCausalLM",
             "MiMoV2FlashForCausalLM", "PanguProMoEV2ForCausalLM", "Plamo2ForCausalLM",
             "Phi3VForCausalLM"}
ORACLES["AfmoeForCausalLM"] = afmoe
ORACLES["JAISLMHeadModel"] = jais
ORACLES["ArcticForCausalLM"] = arctic
ORACLES["BailingMoeForCausalLM"] = ORACLES["BailingMoeV2ForCausalLM"] = bailing
ORACLES["OuroForCausalLM"] = ouro  # the early-exit gate by columns
ORACLES["DeciLMForCausalLM"] = decilm  # per-layer kv heads and widths
ORACLES["Step3TextForCausalLM"] = step3  # qkv_proj whole on every rank; experts: COMMON
ORACLES["Plamo3ForCausalLM"] = plamo3  # its fused q/k/v and gate/up laid out itself
ORACLES["Plamo2ForCausalLM"] = plamo2  # in_proj de-interleaved, q/k/v and gate/up itself
ORACLES["MiMoV2FlashForCausalLM"] = mimo_v2  # per-layer sizes, v_head_dim; experts: COMMON
ORACLES["PanguProMoEV2ForCausalLM"] = pangu_v2  # v_channels, the sinks by kv heads
ORACLES["NomicBertModel"] = nomic  # onto vLLM's names, fc12 / fc11 merged gate first
ORACLES["GteNewModel"] = gte_new  # onto vLLM's names, up_gate_proj re-merged gate first
ORACLES["GteNewForSequenceClassification"] = gte_new_cls  # the same under new., the head whole
ORACLES["Phi3VForCausalLM"] = phi3v  # the LM: COMMON (Phi-3's); the tower's q/k/v fused itself

MINIMAX_ARCHS = ("MiniMaxForCausalLM", "MiniMaxText01ForCausalLM", "MiniMaxM1ForCausalLM",
                 "MiniMaxVL01ForConditionalGeneration")  # its LM under language_model.

CFGS = {"ExaoneForCausalLM": exaone_cfg, "MiniCPMForCausalLM": minicpm_cfg}
CFGS.update({a: chatglm_cfg for a in CHATGLM_ARCHS})
CFGS["MiniCPM3ForCausalLM"] = CFGS["MiniCPMForCausalLM"]
CFGS["TeleChat2ForCausalLM"] = CFGS["TeleChatForCausalLM"] = telechat2_cfg
CFGS["Lfm2MoeForCausalLM"] = lambda c: dict(c, tie_word_embeddings=c.get("tie_embedding", c.get(
    "tie_word_embeddings", True)))
CFGS["JAISLMHeadModel"] = jais_cfg
CFGS["ArcticForCausalLM"] = arctic_cfg
CFGS["AfmoeForCausalLM"] = afmoe_cfg
CFGS["DeciLMForCausalLM"] = decilm_cfg
CFGS["Step3TextForCausalLM"] = step3_cfg
CFGS["MiMoV2FlashForCausalLM"] = mimo_v2_cfg
CFGS["NomicBertModel"] = nomic_cfg


def grok1_src(src):
    """Grok-1's checkpoint tensors under the names expected() cuts and vLLM serves."""
    def canon(k):
        k = re.sub(r"\.experts\.(\d+)\.linear_1\.", r".experts.\1.w2.", k)
        k = re.sub(r"\.experts\.(\d+)\.linear_v\.", r".experts.\1.w3.", k)
        k = re.sub(r"\.experts\.(\d+)\.linear\.", r".experts.\1.w1.", k)
        return re.sub(r"norm\.scale$", "norm.weight", k)
    return {canon(k): v for k, v in src.items()}


CFGS["Grok1ModelForCausalLM"] = lambda c: dict(c, tie_word_embeddings=c.get(
    "tie_word_embeddings", True))  # Grok1Config's default
CFGS["BailingMoeForCausalLM"] = CFGS["BailingMoeV2ForCausalLM"] = bailing_cfg
ORACLES["RWForCausalLM"] = falcon_rw
CFGS["RWForCausalLM"] = falcon_rw_cfg


def mimo_src(src):
    """MiMo's checkpoint tensors less its MTP layers (vLLM's MiMoForCausalLM drops the prefix)."""
    return {k: v for k, v in src.items() if not k.startswith("model.mtp_layers.")}


def bailing_v2_src(src):
    """Ling 2.0's checkpoint tensors less its MTP layers: the model.layers.{i} that hold an
    eh_proj (the MTP module's own projection; vLLM's load_weights skips every tensor of them)."""
    mtp = {k.split(".")[2] for k in src if re.match(r"model\.layers\.\d+\.eh_proj\.", k)}
    return {k: v for k, v in src.items()
            if not (k.startswith("model.layers.") and k.split(".")[2] in mtp)}


SRCS = {"grok-1": grok1_src, "mimo": mimo_src, "bailing_moe_v2": bailing_v2_src,
        "step3_text": step3_src, "mimo_v2_flash": mimo_v2_src}
# openPangu-Ultra-MoE: DeepSeek-V3's cut; its MTP layers (each with an eh_proj) dropped as Ling 2.0's
SRCS["pangu_ultra_moe"] = bailing_v2_src
SRCS["PanguProMoEV2"] = pangu_v2_src  # its MTP layers dropped, the sinks as [S*KV, x] rows
