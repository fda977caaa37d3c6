/*
 * plan_rename.c — a checkpoint tensor's name as the family's rules spell it, and back: the
 * aliases' prefix swap (registry.c), then the family's rename hook (ERNIE-4.5-VL's vision
 * experts, stored past the text ones under mlp.experts.).
 */
#include <string.h>

#include "shardmap/plan_int.h"

const char *shardmap_plan_canon(const sm_ctx *x, const char *name, char *buf, size_t cap,
                                bool *mixed)
{
	char tmp[512];
	const char *n = shardmap_alias_canon(x->fam, x->alt, name, tmp, sizeof(tmp), mixed);
	if (n == NULL || *mixed)
		return n; /* too long, or name itself: plan.c refuses the mixed layout */
	if (x->fam->rename != NULL) {
		const char *r = x->fam->rename(x->cfg, true, n, buf, cap);
		if (r != n)
			return r;
	}
	if (n == name)
		return name;
	if (strlen(n) >= cap)
		return NULL;
	memcpy(buf, n, strlen(n) + 1);
	return buf;
}

const char *shardmap_plan_ckpt(const sm_ctx *x, const char *name, char *buf, size_t cap)
{
	char tmp[512];
	const char *n = name;
	if (x->fam->rename != NULL &&
	    (n = x->fam->rename(x->cfg, false, name, tmp, sizeof(tmp))) == NULL)
		return NULL;
	n = shardmap_alias_ckpt(x->fam, x->alt, n, buf, cap);
	if (n == NULL || n == buf || n == name)
		return n;
	if (strlen(n) >= cap) /* n is tmp: unchanged by the aliases */
		return NULL;
	memcpy(buf, n, strlen(n) + 1);
	return buf;
}
