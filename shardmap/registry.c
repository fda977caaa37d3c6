/* registry.c — architectures[0] (then model_type) -> family table; name mapping helpers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shardmap/families.h"

static const sm_family *const families[] = {
    &shardmap_family_llama,
    &shardmap_family_mistral,
    &shardmap_family_qwen2,
    &shardmap_family_qwen3,
    &shardmap_family_mixtral,
    &shardmap_family_qwen2_moe,
    &shardmap_family_qwen3_moe,
    &shardmap_family_deepseek_v3,
    &shardmap_family_deepseek_v32,
    &shardmap_family_bert,
    &shardmap_family_qwen2_vl,
    &shardmap_family_qwen2_5_vl,
    &shardmap_family_gemma,
    &shardmap_family_gemma2,
    &shardmap_family_gemma3_text,
    &shardmap_family_gemma3,
    &shardmap_family_phi3,
    &shardmap_family_deepseek_v2,
    &shardmap_family_mistral_large3,
    &shardmap_family_starcoder2,
    &shardmap_family_glm,
    &shardmap_family_glm4,
    &shardmap_family_olmo2,
    &shardmap_family_granite,
    &shardmap_family_granitemoe,
    &shardmap_family_granitemoeshared,
    &shardmap_family_olmoe,
    &shardmap_family_olmo,
    &shardmap_family_phimoe,
    &shardmap_family_gpt_oss,
    &shardmap_family_llama4,
    &shardmap_family_llama4_text,
    &shardmap_family_qwen3_next,
    &shardmap_family_glm4_moe,
    &shardmap_family_ernie4_5,
    &shardmap_family_ernie4_5_moe,
    &shardmap_family_ernie45_vl,
    &shardmap_family_cohere,
    &shardmap_family_cohere2,
    &shardmap_family_qwen3_vl,
    &shardmap_family_qwen3_vl_moe,
    &shardmap_family_olmo3,
    &shardmap_family_exaone4,
    &shardmap_family_dots1,
    &shardmap_family_seed_oss,
    &shardmap_family_smollm3,
    &shardmap_family_mistral3,
    &shardmap_family_glm4v,
    &shardmap_family_glm4v_moe,
    &shardmap_family_apertus,
    &shardmap_family_arcee,
    &shardmap_family_lfm2,
    &shardmap_family_granitemoehybrid,
    &shardmap_family_hunyuan_v1_dense,
    &shardmap_family_hunyuan_moe,
    &shardmap_family_hunyuan_vl,
    &shardmap_family_bamba,
    &shardmap_family_nemotron,
    &shardmap_family_jais2,
    &shardmap_family_minimax,
    &shardmap_family_minimax_vl_01,
    &shardmap_family_kimi_vl,
    &shardmap_family_kimi_linear,
    &shardmap_family_phi3v,
    &shardmap_family_molmo,
    &shardmap_family_keye,
    &shardmap_family_isaac,
    &shardmap_family_bagel,
    &shardmap_family_hcx,
    &shardmap_family_nano_vl,
    &shardmap_family_dots_ocr,
    &shardmap_family_paddleocr_vl,
    &shardmap_family_jamba,
    &shardmap_family_gpt_neox,
    &shardmap_family_phi,
    &shardmap_family_flex_olmo,
    &shardmap_family_vaultgemma,
    &shardmap_family_dbrx,
    &shardmap_family_stablelm,
    &shardmap_family_ministral,
    &shardmap_family_falcon_h1,
    &shardmap_family_mpt,
    &shardmap_family_longcat_flash,
    &shardmap_family_gpt2,
    &shardmap_family_gpt_bigcode,
    &shardmap_family_llava,
    &shardmap_family_llava_next,
    &shardmap_family_mamba,
    &shardmap_family_falcon_mamba,
    &shardmap_family_opt,
    &shardmap_family_gptj,
    &shardmap_family_bloom,
    &shardmap_family_falcon,
    &shardmap_family_persimmon,
    &shardmap_family_mamba2,
    &shardmap_family_idefics3,
    &shardmap_family_smolvlm,
    &shardmap_family_paligemma,
    &shardmap_family_aya_vision,
    &shardmap_family_llava_onevision,
    &shardmap_family_bee,
    &shardmap_family_cohere2_vision,
    &shardmap_family_llava_next_video,
    &shardmap_family_rvl,
    &shardmap_family_qwen2_audio,
    &shardmap_family_internvl,
    &shardmap_family_internvl_chat,
    &shardmap_family_nvlm_d,
    &shardmap_family_ovis,
    &shardmap_family_deepseek_vl2,
    &shardmap_family_deepseek_ocr,
    &shardmap_family_minicpmv,
    &shardmap_family_roberta,
    &shardmap_family_xlm_roberta,
    &shardmap_family_roberta_cls,
    &shardmap_family_xlm_roberta_cls,
    &shardmap_family_fuyu,
    &shardmap_family_lfm2_vl,
    &shardmap_family_chameleon,
    &shardmap_family_modernbert,
    &shardmap_family_modernbert_cls,
    &shardmap_family_granite_speech,
    &shardmap_family_blip2,
    &shardmap_family_aria,
    &shardmap_family_voxtral,
    &shardmap_family_glmasr,
    &shardmap_family_audioflamingo3,
    &shardmap_family_ultravox,
    &shardmap_family_mllama,
    &shardmap_family_zamba2,
    &shardmap_family_llama_cls,
    &shardmap_family_mistral_cls,
    &shardmap_family_qwen2_cls,
    &shardmap_family_qwen3_cls,
    &shardmap_family_llama_bidir_cls,
    &shardmap_family_bert_cls,
    &shardmap_family_bert_tok,
    &shardmap_family_qwen2_5_omni,
    &shardmap_family_gemma3n_text,
    &shardmap_family_llama_emb,
    &shardmap_family_mistral_emb,
    &shardmap_family_qwen2_emb,
    &shardmap_family_gemma2_emb,
    &shardmap_family_gemma3_text_emb,
    &shardmap_family_llama_bidir_emb,
    &shardmap_family_llama_eagle3,
    &shardmap_family_llama_eagle,
    &shardmap_family_medusa,
    &shardmap_family_mlp_speculator,
    &shardmap_family_deepseek_mtp,
    &shardmap_family_glm4_moe_mtp,
    &shardmap_family_mimo_mtp,
    &shardmap_family_qwen3_next_mtp,
    &shardmap_family_ernie_mtp,
    &shardmap_family_qwen2_rm,
    &shardmap_family_qwen2_prm,
    &shardmap_family_qwen3_omni_moe,
    &shardmap_family_whisper,
    &shardmap_family_gpt2_cls,
    &shardmap_family_clip,
    &shardmap_family_internlm2,
    &shardmap_family_internlm2_ve,
    &shardmap_family_internlm2_rm,
    &shardmap_family_minimax_m2,
    &shardmap_family_nemotron_h,
    &shardmap_family_siglip,
    &shardmap_family_jamba_cls,
    &shardmap_family_modernbert_tok,
    &shardmap_family_chatglm,
    &shardmap_family_glm4v_old,
    &shardmap_family_exaone,
    &shardmap_family_qwen,
    &shardmap_family_baichuan,
    &shardmap_family_minicpm,
    &shardmap_family_internlm3,
    &shardmap_family_minicpm3,
    &shardmap_family_lfm2_moe,
    &shardmap_family_internlm,
    &shardmap_family_orion,
    &shardmap_family_telechat2,
    &shardmap_family_jais,
    &shardmap_family_arctic,
    &shardmap_family_grok1,
    &shardmap_family_bailing_moe,
    &shardmap_family_bailing_moe_v2,
    &shardmap_family_afmoe,
    &shardmap_family_xverse,
    &shardmap_family_aquila,
    &shardmap_family_teleflm,
    &shardmap_family_solar,
    &shardmap_family_mimo,
    &shardmap_family_deepseek,
    &shardmap_family_ouro,
    &shardmap_family_plamo3,
    &shardmap_family_plamo2,
    &shardmap_family_nemotron_nas,
    &shardmap_family_step3_text,
    &shardmap_family_step3_vl,
    &shardmap_family_pangu_dense,
    &shardmap_family_pangu_ultra_moe,
    &shardmap_family_pangu_pro_moe_v2,
    &shardmap_family_mimo_v2_flash,
    &shardmap_family_nomic_bert,
    &shardmap_family_gte_new,
    &shardmap_family_gte_new_cls,
    &shardmap_family_bert_splade,
    &shardmap_family_jina_vl,
};
#define N_FAMILIES (sizeof(families) / sizeof(families[0]))

/* Family name `name` is model_type `mt`, a '_' of the name standing for a '-' of
 * model_type too (transformers' xlm-roberta is the family xlm_roberta). */
static bool is_model_type(const char *name, const char *mt)
{
	for (; *name != '\0' && *mt != '\0'; name++, mt++)
		if (*name != *mt && !(*name == '_' && *mt == '-'))
			return false;
	return *name == *mt;
}

const sm_family *shardmap_family_find(const char *arch, const char *model_type)
{
	for (size_t f = 0; f < N_FAMILIES; f++)
		for (const char *const *a = families[f]->archs; *a; a++)
			if (arch && strcmp(*a, arch) == 0)
				return families[f];
	/* Fall back to model_type when architectures is absent or unfamiliar. */
	if ((!arch || !*arch) && model_type && *model_type)
		for (size_t f = 0; f < N_FAMILIES; f++)
			if (is_model_type(families[f]->name, model_type))
				return families[f];
	return NULL;
}

const sm_family *shardmap_family_for(const ckpt *c)
{
	const ckpt_config *cfg = ckpt_get_config(c);
	const sm_family *f = shardmap_family_find(cfg->architecture, cfg->model_type);
	if (f != NULL && f->variant_for != NULL && f->variant_for(cfg) != NULL)
		f = f->variant_for(cfg);
	if (f != NULL && f->arch_variant != NULL && cfg->architecture != NULL &&
	    strcmp(cfg->architecture, f->arch_variant->archs[0]) == 0)
		return f->arch_variant;
	if (f != NULL && f->pixtral_tower != NULL && strcmp(cfg->v_model_type, "pixtral") == 0)
		return f->pixtral_tower;
	if (f != NULL && f->siglip_tower != NULL &&
	    strcmp(cfg->v_model_type, "siglip_vision_model") == 0)
		return f->siglip_tower;
	for (size_t k = 0; f != NULL && f->prefix_variant != NULL && k < ckpt_n_tensors(c); k++)
		if (strncmp(ckpt_tensor_at(c, k)->name, f->prefix_at, strlen(f->prefix_at)) == 0)
			return f->prefix_variant;
	if (f == NULL || f->per_expert == NULL)
		return f;
	for (size_t k = 0; k < ckpt_n_tensors(c); k++) {
		const char *e = strstr(ckpt_tensor_at(c, k)->name, ".experts.");
		if (e != NULL && e[9] >= '0' && e[9] <= '9')
			return f->per_expert;
	}
	return f;
}

/* Architectures vLLM serves that no family here cuts, with why and what to serve instead:
 * refused naming that rather than as unknown (nor listed as supported). */
static const struct {
	const char *arch, *why;
} not_cut[] = {
    {"Gemma3nForConditionalGeneration",
     "its MobileNetV5 vision tower and conformer audio tower are not cut here; serve the "
     "language model as Gemma3nForCausalLM (its model.language_model.* tensors under model.*, "
     "text_config as config.json)"},
};

const char *shardmap_not_cut_why(const char *arch)
{
	for (size_t k = 0; arch != NULL && k < sizeof(not_cut) / sizeof(not_cut[0]); k++)
		if (strcmp(not_cut[k].arch, arch) == 0)
			return not_cut[k].why;
	return NULL;
}

size_t shardmap_architectures_text(char *buf, size_t cap)
{
	size_t n = 0, total = 0, shown = 0;
	for (size_t f = 0; f < N_FAMILIES; f++)
		for (const char *const *a = families[f]->archs; *a; a++)
			total++;
	buf[0] = '\0';
	for (size_t f = 0; f < N_FAMILIES; f++)
		for (const char *const *a = families[f]->archs; *a; a++) {
			/* room for this name and the tail naming how many are left out */
			size_t need = strlen(*a) + (shown ? 2 : 0);
			if (n + need + 48 >= cap)
				goto out;
			n += (size_t)snprintf(buf + n, cap - n, "%s%s", shown ? ", " : "", *a);
			shown++;
		}
out:
	if (shown < total && cap > n)
		n += (size_t)snprintf(buf + n, cap - n, " and %zu more (docs/format.md 2.7)",
		                      total - shown);
	return shown;
}

bool shardmap_alias_layout(const sm_family *f, const ckpt *c)
{
	for (const char *const *a = f->aliases; a && *a; a += 2)
		for (size_t k = 0; k < ckpt_n_tensors(c); k++)
			if (strncmp(ckpt_tensor_at(c, k)->name, a[0], strlen(a[0])) == 0)
				return true;
	return false;
}

/* Replace prefix `from` of name with `to` into buf; NULL if it does not fit. */
static const char *swap_prefix(const char *name, const char *from, const char *to, char *buf,
                               size_t cap)
{
	int n = snprintf(buf, cap, "%s%s", to, name + strlen(from));
	return n < 0 || (size_t)n >= cap ? NULL : buf;
}

const char *shardmap_alias_canon(const sm_family *f, bool alt, const char *name, char *buf,
                                 size_t cap, bool *mixed)
{
	*mixed = false;
	if (!alt)
		return name;
	for (const char *const *a = f->aliases; a && *a; a += 2)
		if (strncmp(name, a[0], strlen(a[0])) == 0)
			return swap_prefix(name, a[0], a[1], buf, cap);
	for (const char *const *a = f->aliases; a && *a; a += 2)
		if (strncmp(name, a[1], strlen(a[1])) == 0)
			*mixed = true;
	return name;
}

const char *shardmap_alias_ckpt(const sm_family *f, bool alt, const char *name, char *buf,
                                size_t cap)
{
	if (!alt)
		return name;
	for (const char *const *a = f->aliases; a && *a; a += 2)
		if (strncmp(name, a[1], strlen(a[1])) == 0)
			return swap_prefix(name, a[1], a[0], buf, cap);
	return name;
}

const char *shardmap_canonical_name(const ckpt *c, const char *name, char *buf, size_t cap)
{
	const sm_family *f = shardmap_family_for(c);
	bool mixed;
	if (!f || !f->aliases)
		return name;
	return shardmap_alias_canon(f, shardmap_alias_layout(f, c), name, buf, cap, &mixed);
}

/* Parse a run of decimal digits (no sign, no leading '+'), at most 9 digits. */
static const char *parse_index(const char *s, int64_t *v)
{
	int64_t x = 0;
	int n = 0;
	while (*s >= '0' && *s <= '9' && n < 10) {
		x = x * 10 + (*s - '0');
		s++;
		n++;
	}
	if (n == 0 || n > 9)
		return NULL;
	*v = x;
	return s;
}

bool shardmap_match(const char *pat, const char *name, int64_t *i, int64_t *j)
{
	*i = -1;
	*j = -1;
	while (*pat) {
		if (pat[0] == '{' && (pat[1] == 'i' || pat[1] == 'j' || pat[1] == 'k') &&
		    pat[2] == '}') {
			int64_t v;
			const char *nx = parse_index(name, &v);
			if (!nx)
				return false;
			if (pat[1] == 'i')
				*i = v;
			else if (pat[1] == 'j')
				*j = v;
			name = nx;
			pat += 3;
			continue;
		}
		if (*pat != *name)
			return false;
		pat++;
		name++;
	}
	return *name == '\0';
}

bool shardmap_expand(const char *pat, int64_t i, int64_t j, char *buf, size_t cap)
{
	size_t n = 0;
	while (*pat) {
		if (pat[0] == '{' && (pat[1] == 'i' || pat[1] == 'j') && pat[2] == '}') {
			int w =
			    snprintf(buf + n, cap - n, "%lld", (long long)(pat[1] == 'i' ? i : j));
			if (w < 0 || (size_t)w >= cap - n)
				return false;
			n += (size_t)w;
			pat += 3;
			continue;
		}
		if (n + 1 >= cap)
			return false;
		buf[n++] = *pat++;
	}
	buf[n] = '\0';
	return true;
}

static bool ends_with(const char *s, const char *suf)
{
	size_t a = strlen(s), b = strlen(suf);
	return a >= b && strcmp(s + a - b, suf) == 0;
}

int64_t shardmap_index_after(const char *name, const char *prefix)
{
	size_t n = strlen(prefix);
	if (strncmp(name, prefix, n) != 0 || name[n] < '0' || name[n] > '9')
		return -1;
	return strtoll(name + n, NULL, 10);
}

bool shardmap_generic_drop(const char *name)
{
	return ends_with(name, "rotary_emb.inv_freq") || ends_with(name, "rotary_emb.cos_cached") ||
	       ends_with(name, "rotary_emb.sin_cached") ||
	       strcmp(name, "embeddings.position_ids") == 0;
}

bool shardmap_expand_rt(const sm_family *f, bool alt, const char *pat, int64_t i, int64_t j,
                        char *buf, size_t cap)
{
	char tmp[512];
	if (!shardmap_expand(pat, i, j, buf, cap))
		return false;
	if (f->mtp)
		return shardmap_mtp_rename(buf, cap);
	if (!f->alias_runtime)
		return true;
	const char *n = shardmap_alias_ckpt(f, alt, buf, tmp, sizeof(tmp));
	if (n == NULL || strlen(n) >= cap)
		return false;
	if (n != buf)
		memmove(buf, n, strlen(n) + 1);
	return true;
}
