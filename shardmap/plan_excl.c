/*
 * plan_excl.c — which mapped entries the layout's exclusions match
 * (docs/format.md section 4.3), under the checkpoint name or, in an alias name
 * layout (section 5), the canonical name (fbgemm_fp8's modules_to_not_convert
 * included, section 4.7; a family's keep_float tensors too); and the error for a fused
 * module only part of which is excluded.
 */
#include <stdio.h>
#include <string.h>

#include "shardmap/quant_f8.h"

/* Whether module `nm` (a weight name, ".weight" dropped; an MXFP4 "X_blocks" is module X)
 * matches an exclusion. */
static bool name_excluded(const sm_ctx *x, const char *nm)
{
	size_t n = strlen(nm);
	char buf[512];
	if (n >= sizeof(buf))
		return false;
	memcpy(buf, nm, n + 1);
	if (n >= 7 && strcmp(buf + n - 7, ".weight") == 0)
		buf[n - 7] = '\0';
	else if (n >= 7 && strcmp(buf + n - 7, "_blocks") == 0)
		buf[n - 7] = '\0';
	return shardmap_excl_match(x->excl, buf);
}

/* Also kept by fbgemm_fp8's modules_to_not_convert (matched as transformers does,
 * quant_f8.c; docs/format.md 4.7), and the family's keep_float tensors (SigLIP) and
 * float_at_tp ones (InternViT's attention when its heads do not divide tp_size). */
bool shardmap_entry_excluded(const sm_ctx *x, size_t k)
{
	const char *nm = ckpt_tensor_at(x->c, x->ents[k].t)->name, *cn = x->ents[k].canon;
	return name_excluded(x, nm) || (cn && name_excluded(x, cn)) ||
	       shardmap_fb_kept(x->cfg, nm) || (cn && shardmap_fb_kept(x->cfg, cn)) ||
	       (x->fam->keep_float && x->fam->keep_float(x->cfg, cn ? cn : nm)) ||
	       (x->fam->float_at_tp && x->fam->float_at_tp(x->cfg, x->tp_size, cn ? cn : nm));
}

/* Up to 2 checkpoint module names of entries [a, a+n) that are (or are not) excluded. */
static void list_parts(const sm_ctx *x, size_t a, size_t n, bool excluded, char *buf, size_t cap)
{
	size_t o = 0, shown = 0, total = 0;
	buf[0] = '\0';
	for (size_t k = 0; k < n; k++) {
		if (shardmap_entry_excluded(x, a + k) != excluded)
			continue;
		if (total++ >= 2)
			continue;
		const char *nm = ckpt_tensor_at(x->c, x->ents[a + k].t)->name;
		size_t len = strlen(nm);
		if (len > 7 && strcmp(nm + len - 7, ".weight") == 0)
			len -= 7;
		o += (size_t)snprintf(buf + o, o < cap ? cap - o : 0, "%s%.*s", shown++ ? ", " : "",
		                      (int)len, nm);
	}
	if (total > shown && o < cap)
		snprintf(buf + o, cap - o, ", ... (%zu in all)", total);
}

int shardmap_partly_excluded(const sm_ctx *x, size_t a, size_t n, size_t nex, wt_errbuf *err)
{
	char ex[200], kept[200];
	list_parts(x, a, n, true, ex, sizeof(ex));
	list_parts(x, a, n, false, kept, sizeof(kept));
	return wt_seterr(err, WT_ELAYOUT,
	                 "tensor '%s': %zu of its %zu fused modules are excluded (excluded: %s; "
	                 "not excluded: %s); exclude all of them or none (config.json ignore "
	                 "lists count too)",
	                 x->ents[a].rt, nex, n, ex, kept);
}
