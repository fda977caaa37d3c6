/* layout.c — layout defaults, checks, canonical text and CLI flag parsing. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "weights/layout.h"

static const char *const quant_names[WT_QUANT_COUNT_] = {
    [WT_QUANT_NONE] = "none",
    [WT_QUANT_FP8_TENSOR] = "fp8-tensor",
    [WT_QUANT_FP8_CHANNEL] = "fp8-channel",
    [WT_QUANT_FP8_BLOCK] = "fp8-block",
    [WT_QUANT_INT8_CHANNEL] = "int8-channel",
    [WT_QUANT_INT4_GROUP] = "int4-group",
};

const char *wt_quant_name(wt_quant q)
{
	if ((int)q < 0 || q >= WT_QUANT_COUNT_)
		return NULL;
	return quant_names[q];
}

int wt_quant_from_name(const char *name, wt_quant *out, wt_errbuf *err)
{
	for (int i = 0; i < WT_QUANT_COUNT_; i++) {
		if (name != NULL && strcmp(name, quant_names[i]) == 0) {
			*out = (wt_quant)i;
			return WT_OK;
		}
	}
	return wt_seterr(err, WT_EINVAL,
	                 "unknown quant '%s'; use none, fp8-tensor, fp8-channel, fp8-block, "
	                 "int8-channel or int4-group",
	                 name ? name : "(null)");
}

void wt_layout_init(wt_layout *l)
{
	memset(l, 0, sizeof(*l));
	l->tp_size = 1;
	l->ep_size = 1;
	l->quant = WT_QUANT_NONE;
	l->dtype = WT_DTYPE_INVALID;
	l->group_size = 128;
	l->vocab_pad = 64;
}

void wt_layout_clear(wt_layout *l)
{
	if (l == NULL)
		return;
	for (uint32_t i = 0; i < l->n_exclude; i++)
		free(l->exclude[i]);
	common_layout_clear_include(l);
	wt_layout_init(l);
}

int wt_layout_add_exclude(wt_layout *l, const char *pat, wt_errbuf *err)
{
	if (l->n_exclude >= WT_MAX_EXCLUDE)
		return wt_seterr(err, WT_ETOOBIG, "too many --exclude patterns (max %d)",
		                 WT_MAX_EXCLUDE);
	if (pat == NULL || pat[0] == '\0')
		return wt_seterr(err, WT_EINVAL, "empty --exclude pattern");
	if (strchr(pat, ';') != NULL)
		return wt_seterr(
		    err, WT_EINVAL,
		    "--exclude '%s': a pattern may not contain ';' (it separates the "
		    "patterns in the layout text); give each pattern its own --exclude",
		    pat);
	if (common_text_has_control(pat))
		return wt_seterr(err, WT_EINVAL,
		                 "--exclude: a pattern may not contain a control character (it "
		                 "goes into the layout text, manifests and logs); write a tab or "
		                 "newline as \\t or \\n in a re: pattern");
	char *s = strdup(pat);
	if (s == NULL)
		return wt_seterr(err, WT_ENOMEM, "out of memory");
	l->exclude[l->n_exclude++] = s;
	return WT_OK;
}

int wt_layout_copy(wt_layout *dst, const wt_layout *src)
{
	wt_layout_clear(dst);
	*dst = *src;
	dst->n_exclude = 0;
	dst->n_include = 0;
	dst->include = NULL;
	for (uint32_t i = 0; i < src->n_exclude; i++) {
		if (wt_layout_add_exclude(dst, src->exclude[i], NULL) != WT_OK) {
			wt_layout_clear(dst);
			return WT_ENOMEM;
		}
	}
	for (uint32_t i = 0; i < src->n_include; i++) {
		if (wt_layout_add_include(dst, src->include[i], NULL) != WT_OK) {
			wt_layout_clear(dst);
			return WT_ENOMEM;
		}
	}
	return WT_OK;
}

static uint64_t gcd_u64(uint64_t a, uint64_t b)
{
	while (b != 0) {
		uint64_t t = a % b;
		a = b;
		b = t;
	}
	return a;
}

/* tp/ep sizes and ranks, each size within its limit and the product within WT_MAX_RANKS. */
static int check_ranks(const wt_layout *l, wt_errbuf *err)
{
	if (l->tp_size < 1 || l->tp_size > WT_MAX_TP_SIZE)
		return wt_seterr(err, WT_EINVAL, "tp_size %u must be in 1..%d", l->tp_size,
		                 WT_MAX_TP_SIZE);
	if (l->ep_size < 1 || l->ep_size > WT_MAX_EP_SIZE)
		return wt_seterr(err, WT_EINVAL, "ep_size %u must be in 1..%d", l->ep_size,
		                 WT_MAX_EP_SIZE);
	if ((uint64_t)l->tp_size * l->ep_size > WT_MAX_RANKS)
		return wt_seterr(err, WT_EINVAL,
		                 "tp_size %u * ep_size %u = %llu ranks is above the limit %d",
		                 l->tp_size, l->ep_size,
		                 (unsigned long long)l->tp_size * l->ep_size, WT_MAX_RANKS);
	if (l->tp_rank >= l->tp_size)
		return wt_seterr(err, WT_EINVAL, "tp_rank %u must be < tp_size %u", l->tp_rank,
		                 l->tp_size);
	if (l->ep_rank >= l->ep_size)
		return wt_seterr(err, WT_EINVAL, "ep_rank %u must be < ep_size %u", l->ep_rank,
		                 l->ep_size);
	return WT_OK;
}

/* group_size and vocab_pad (with the padding step lcm(vocab_pad, tp_size) it implies). */
static int check_numbers(const wt_layout *l, wt_errbuf *err)
{
	if (l->group_size == 0 || l->group_size % 8 != 0 || l->group_size > WT_MAX_GROUP_SIZE)
		return wt_seterr(err, WT_EINVAL,
		                 "group_size %u must be a multiple of 8 in 8..%d; engines use "
		                 "32..256",
		                 l->group_size, WT_MAX_GROUP_SIZE);
	if (l->vocab_pad < 1)
		return wt_seterr(err, WT_EINVAL, "vocab_pad must be >= 1");
	if (l->vocab_pad > WT_MAX_VOCAB_PAD)
		return wt_seterr(err, WT_EINVAL,
		                 "vocab_pad %u is above the limit %d; engines pad to a multiple "
		                 "of 64..1024",
		                 l->vocab_pad, WT_MAX_VOCAB_PAD);
	uint64_t m = (uint64_t)l->vocab_pad / gcd_u64(l->vocab_pad, l->tp_size) * l->tp_size;
	if (m > WT_MAX_VOCAB_MULTIPLE)
		return wt_seterr(err, WT_EINVAL,
		                 "vocab_pad %u with tp_size %u pads the vocabulary to a multiple "
		                 "of %llu, above the limit %d; use a power-of-two vocab_pad "
		                 "such as 64",
		                 l->vocab_pad, l->tp_size, (unsigned long long)m,
		                 WT_MAX_VOCAB_MULTIPLE);
	if (l->w13_up_gate != 0 && l->w13_up_gate != 1)
		return wt_seterr(err, WT_EINVAL, "w13_up_gate %d must be 0 or 1", l->w13_up_gate);
	if (l->requant_allow != 0 && l->requant_allow != 1)
		return wt_seterr(err, WT_EINVAL, "requant_allow %d must be 0 or 1",
		                 l->requant_allow);
	return WT_OK;
}

/* Each pattern within the WT_EXCLUDE_* limits, and all of them within the total. */
static int check_excludes(const wt_layout *l, wt_errbuf *err)
{
	if (l->n_exclude > WT_MAX_EXCLUDE)
		return wt_seterr(err, WT_ETOOBIG, "%u exclude patterns, over the limit of %d",
		                 l->n_exclude, WT_MAX_EXCLUDE);
	uint64_t total = 0;
	for (uint32_t i = 0; i < l->n_exclude; i++) {
		uint32_t pos = 0;
		if (l->exclude[i] == NULL)
			return wt_seterr(err, WT_EINVAL, "exclude pattern %u is missing", i);
		/* ';' joins the patterns in the canonical text: ["a;b"] and ["a", "b"]
		 * would share one text, so one shard id and cache entry. */
		if (strchr(l->exclude[i], ';') != NULL)
			return wt_seterr(err, WT_EINVAL,
			                 "exclude pattern %u '%s' contains ';' (the layout text's "
			                 "separator); give each pattern on its own",
			                 i, l->exclude[i]);
		if (common_text_has_control(l->exclude[i]))
			return wt_seterr(err, WT_EINVAL,
			                 "exclude pattern %u contains a control character; write a "
			                 "tab or newline as \\t or \\n in a re: pattern",
			                 i);
		int rv = common_excl_regex(l->exclude[i], NULL, &pos, err);
		if (rv != WT_OK)
			return rv;
		total += pos;
	}
	if (total > WT_EXCLUDE_TOTAL_POSITIONS)
		return wt_seterr(err, WT_EINVAL,
		                 "the %u exclude patterns expand to %llu regex positions, over "
		                 "the limit of %d for a layout; merge them with prefixes, {i} "
		                 "or *",
		                 l->n_exclude, (unsigned long long)total,
		                 WT_EXCLUDE_TOTAL_POSITIONS);
	return WT_OK;
}

int wt_layout_check(const wt_layout *l, wt_errbuf *err)
{
	int rv = check_ranks(l, err);
	if (rv != WT_OK)
		return rv;
	if ((int)l->quant < 0 || l->quant >= WT_QUANT_COUNT_)
		return wt_seterr(err, WT_EINVAL, "unknown quant code %d", (int)l->quant);
	if (l->dtype != WT_DTYPE_INVALID && l->dtype != WT_BF16 && l->dtype != WT_F16 &&
	    l->dtype != WT_F32)
		return wt_seterr(err, WT_EINVAL,
		                 "dtype %s not allowed; use source, bf16, fp16 or fp32",
		                 wt_dtype_name(l->dtype));
	if ((rv = check_numbers(l, err)) != WT_OK)
		return rv;
	if ((rv = check_excludes(l, err)) != WT_OK)
		return rv;
	return common_layout_check_raw(l, err);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static const char *dtype_label(wt_dtype dt)
{
	switch (dt) {
	case WT_BF16:
		return "bf16";
	case WT_F16:
		return "fp16";
	case WT_F32:
		return "fp32";
	default:
		return "source";
	}
}

size_t wt_layout_format(const wt_layout *l, char *buf, size_t cap)
{
	const char *sorted[WT_MAX_EXCLUDE];
	if (cap > 0)
		buf[0] = '\0';
	if (l->n_exclude > WT_MAX_EXCLUDE) /* never a truncated (non-canonical) text */
		return SIZE_MAX;
	uint32_t n = l->n_exclude;
	for (uint32_t i = 0; i < n; i++)
		sorted[i] = l->exclude[i];
	qsort(sorted, n, sizeof(sorted[0]), cmp_str);

	if (l->raw)
		return common_layout_format_raw(l, buf, cap);
	size_t len = 0;
	if (cap > 0)
		buf[0] = '\0';
	common_appendf(
	    buf, cap, &len,
	    "tp=%u,ep=%u,quant=%s,dtype=%s,group=%u,vocab_pad=%u,w13=%s,requant=%s,exclude=[",
	    l->tp_size, l->ep_size, wt_quant_name(l->quant) ? wt_quant_name(l->quant) : "?",
	    dtype_label(l->dtype), l->group_size, l->vocab_pad,
	    l->w13_up_gate ? "up_gate" : "gate_up", l->requant_allow ? "allow" : "deny");
	for (uint32_t i = 0; i < n; i++) {
		if (i > 0 && strcmp(sorted[i], sorted[i - 1]) == 0)
			continue;
		common_appendf(buf, cap, &len, "%s%s", i > 0 ? ";" : "", sorted[i]);
	}
	common_appendf(buf, cap, &len, "]");
	return len;
}

uint32_t wt_layout_rank_index(const wt_layout *l)
{
	return l->ep_rank * l->tp_size + l->tp_rank;
}

uint32_t wt_layout_n_ranks(const wt_layout *l)
{
	return l->tp_size * l->ep_size;
}

static int parse_u32(const char *flag, const char *v, uint32_t min, uint32_t *out, wt_errbuf *err)
{
	char *end = NULL;
	errno = 0;
	unsigned long long x = strtoull(v, &end, 10);
	if (v[0] == '\0' || v[0] == '-' || *end != '\0' || errno != 0 || x > 1000000000ull ||
	    x < min)
		return wt_seterr(err, WT_EINVAL, "%s: '%s' is not an integer >= %u", flag, v, min);
	*out = (uint32_t)x;
	return WT_OK;
}

static int set_tp_size(wt_layout *l, const char *v, wt_errbuf *err)
{
	return parse_u32("--tp-size", v, 1, &l->tp_size, err);
}

static int set_tp_rank(wt_layout *l, const char *v, wt_errbuf *err)
{
	return parse_u32("--tp-rank", v, 0, &l->tp_rank, err);
}

static int set_ep_size(wt_layout *l, const char *v, wt_errbuf *err)
{
	return parse_u32("--ep-size", v, 1, &l->ep_size, err);
}

static int set_ep_rank(wt_layout *l, const char *v, wt_errbuf *err)
{
	return parse_u32("--ep-rank", v, 0, &l->ep_rank, err);
}

static int set_quant(wt_layout *l, const char *v, wt_errbuf *err)
{
	return wt_quant_from_name(v, &l->quant, err);
}

static int set_dtype(wt_layout *l, const char *v, wt_errbuf *err)
{
	static const struct {
		const char *name;
		wt_dtype dtype;
	} names[] = {
	    {"source", WT_DTYPE_INVALID}, {"bf16", WT_BF16}, {"fp16", WT_F16}, {"fp32", WT_F32}};
	for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++)
		if (strcmp(v, names[k].name) == 0) {
			l->dtype = names[k].dtype;
			return WT_OK;
		}
	return wt_seterr(err, WT_EINVAL, "--dtype '%s': use source, bf16, fp16 or fp32", v);
}

static int set_exclude(wt_layout *l, const char *v, wt_errbuf *err)
{
	return wt_layout_add_exclude(l, v, err);
}

/* A flag whose value is one of two words: *out = 0 for no, 1 for yes. */
static int set_choice(const char *flag, const char *v, const char *no, const char *yes, int *out,
                      wt_errbuf *err)
{
	if (strcmp(v, no) == 0 || strcmp(v, yes) == 0) {
		*out = strcmp(v, yes) == 0;
		return WT_OK;
	}
	return wt_seterr(err, WT_EINVAL, "%s '%s': use %s or %s", flag, v, no, yes);
}

static int set_w13_order(wt_layout *l, const char *v, wt_errbuf *err)
{
	return set_choice("--w13-order", v, "gate_up", "up_gate", &l->w13_up_gate, err);
}

static int set_vocab_pad(wt_layout *l, const char *v, wt_errbuf *err)
{
	return parse_u32("--vocab-pad", v, 1, &l->vocab_pad, err);
}

static int set_group_size(wt_layout *l, const char *v, wt_errbuf *err)
{
	return parse_u32("--group-size", v, 8, &l->group_size, err);
}

static int set_requant(wt_layout *l, const char *v, wt_errbuf *err)
{
	return set_choice("--requant", v, "deny", "allow", &l->requant_allow, err);
}

static int set_include(wt_layout *l, const char *v, wt_errbuf *err)
{
	return wt_layout_add_include(l, v, err);
}

/* The layout flags, by name: wt_layout_parse_arg and weightctl's getopt_long tables. */
static const struct {
	const char *flag;
	int (*set)(wt_layout *l, const char *v, wt_errbuf *err);
} layout_flags[] = {
    {"--tp-size", set_tp_size},     {"--tp-rank", set_tp_rank},
    {"--ep-size", set_ep_size},     {"--ep-rank", set_ep_rank},
    {"--quant", set_quant},         {"--dtype", set_dtype},
    {"--exclude", set_exclude},     {"--w13-order", set_w13_order},
    {"--vocab-pad", set_vocab_pad}, {"--group-size", set_group_size},
    {"--requant", set_requant},     {"--include", set_include},
};
#define N_LAYOUT_FLAGS (sizeof(layout_flags) / sizeof(layout_flags[0]))

const char *common_layout_flag(size_t i)
{
	return i < N_LAYOUT_FLAGS ? layout_flags[i].flag : NULL;
}

int common_layout_set(wt_layout *l, const char *flag, const char *val, wt_errbuf *err)
{
	for (size_t k = 0; k < N_LAYOUT_FLAGS; k++)
		if (strcmp(flag, layout_flags[k].flag) == 0)
			return layout_flags[k].set(l, val, err);
	return wt_seterr(err, WT_EINVAL, "%s: not a layout flag", flag);
}

int wt_layout_parse_arg(wt_layout *l, int argc, char **argv, int *i, wt_errbuf *err)
{
	const char *arg = argv[*i];
	for (size_t k = 0; k < N_LAYOUT_FLAGS; k++) {
		const char *flag = layout_flags[k].flag;
		size_t fl = strlen(flag);
		if (strncmp(arg, flag, fl) != 0 || (arg[fl] != '\0' && arg[fl] != '='))
			continue;
		const char *val = arg[fl] == '=' ? arg + fl + 1 : NULL;
		int used = 1;
		if (val == NULL) {
			if (*i + 1 >= argc) {
				wt_seterr(err, WT_EINVAL, "%s needs a value", flag);
				return -1;
			}
			val = argv[*i + 1];
			used = 2;
		}
		if (layout_flags[k].set(l, val, err) != WT_OK)
			return -1;
		*i += used;
		return 1;
	}
	return 0;
}
