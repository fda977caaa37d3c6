/*
 * layout_raw.c — raw layouts (README "Raw serving"): the checkpoint's own
 * tensors, unmodified, in one rank, optionally a subset named by `include`.
 * The canonical text is "raw" or "raw,include=[a;b]", never a partitioned
 * layout's text, so raw shards have their own shard ids.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "weights/layout.h"

int wt_layout_add_include(wt_layout *l, const char *name, wt_errbuf *err)
{
	if (l->n_include >= WT_MAX_INCLUDE)
		return wt_seterr(err, WT_ETOOBIG,
		                 "too many --include names (max %d); fetch the whole checkpoint "
		                 "(no --include) instead",
		                 WT_MAX_INCLUDE);
	if (name == NULL || name[0] == '\0')
		return wt_seterr(err, WT_EINVAL, "empty --include name");
	if (strlen(name) > WT_INCLUDE_MAX_BYTES)
		return wt_seterr(err, WT_EINVAL, "--include name of %zu bytes is over the limit %d",
		                 strlen(name), WT_INCLUDE_MAX_BYTES);
	if (strpbrk(name, ";]") != NULL)
		return wt_seterr(err, WT_EINVAL,
		                 "--include '%s': a name may not contain ';' or ']'; fetch the "
		                 "whole checkpoint instead",
		                 name);
	if (common_text_has_control(name)) /* a checkpoint's names hold none */
		return wt_seterr(err, WT_EINVAL,
		                 "--include: a name may not contain a control "
		                 "character (no tensor name has one)");
	if (l->n_include % 16 == 0) {
		char **n = realloc(l->include, (l->n_include + 16) * sizeof(char *));
		if (n == NULL)
			return wt_seterr(err, WT_ENOMEM, "out of memory");
		l->include = n;
	}
	char *s = strdup(name);
	if (s == NULL)
		return wt_seterr(err, WT_ENOMEM, "out of memory");
	l->include[l->n_include++] = s;
	return WT_OK;
}

void common_layout_clear_include(wt_layout *l)
{
	for (uint32_t i = 0; i < l->n_include; i++)
		free(l->include[i]);
	free(l->include);
	l->include = NULL;
	l->n_include = 0;
}

int common_layout_check_raw(const wt_layout *l, wt_errbuf *err)
{
	if (l->raw != 0 && l->raw != 1)
		return wt_seterr(err, WT_EINVAL, "raw %d must be 0 or 1", l->raw);
	if (l->n_include > WT_MAX_INCLUDE)
		return wt_seterr(err, WT_ETOOBIG, "%u include names, over the limit of %d",
		                 l->n_include, WT_MAX_INCLUDE);
	if (!l->raw) {
		if (l->n_include > 0)
			return wt_seterr(err, WT_EINVAL,
			                 "include names select tensors of a raw layout only; use "
			                 "mode raw, or exclude patterns for a partitioned layout");
		return WT_OK;
	}
	for (uint32_t i = 0; i < l->n_include; i++)
		if (l->include == NULL || l->include[i] == NULL || l->include[i][0] == '\0' ||
		    strpbrk(l->include[i], ";]") != NULL ||
		    common_text_has_control(l->include[i]) ||
		    strlen(l->include[i]) > WT_INCLUDE_MAX_BYTES)
			return wt_seterr(
			    err, WT_EINVAL,
			    "include name %u is missing, empty, over %d bytes or holds "
			    "';', ']' or a control character",
			    i, WT_INCLUDE_MAX_BYTES);
	const char *what = NULL;
	if (l->tp_size != 1 || l->ep_size != 1)
		what = "tp_size and ep_size 1 (every rank reads the same raw tensors)";
	else if (l->quant != WT_QUANT_NONE)
		what = "quant none";
	else if (l->dtype != WT_DTYPE_INVALID)
		what = "dtype source";
	else if (l->n_exclude > 0)
		what = "no exclude patterns (name the tensors to serve with include)";
	else if (l->group_size != 128 || l->vocab_pad != 64 || l->w13_up_gate || l->requant_allow)
		what = "group_size, vocab_pad, w13 order and requant at their defaults";
	if (what != NULL)
		return wt_seterr(
		    err, WT_EINVAL,
		    "a raw layout serves the checkpoint's tensors unmodified: it needs "
		    "%s",
		    what);
	return WT_OK;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

size_t common_layout_format_raw(const wt_layout *l, char *buf, size_t cap)
{
	if (cap > 0)
		buf[0] = '\0';
	/* Past the limit no text is canonical: never a truncated one, which could
	 * name another layout's shards (callers refuse a length >= cap). */
	if (l->n_include > WT_MAX_INCLUDE)
		return SIZE_MAX;
	uint32_t n = l->n_include;
	const char *sorted[WT_MAX_INCLUDE];
	for (uint32_t i = 0; i < n; i++)
		sorted[i] = l->include[i];
	if (n > 0)
		qsort(sorted, n, sizeof(sorted[0]), cmp_str);
	size_t len = 0;
	if (cap > 0)
		buf[0] = '\0';
	common_appendf(buf, cap, &len, "raw");
	if (n > 0) {
		common_appendf(buf, cap, &len, ",include=[");
		for (uint32_t i = 0; i < n; i++) {
			if (i > 0 && strcmp(sorted[i], sorted[i - 1]) == 0)
				continue;
			common_appendf(buf, cap, &len, "%s%s", i > 0 ? ";" : "", sorted[i]);
		}
		common_appendf(buf, cap, &len, "]");
	}
	return len;
}
