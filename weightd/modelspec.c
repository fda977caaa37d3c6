/*
 * modelspec.c — a model's source spec: its URI, and, after a tab, its configuration override
 * (vLLM's hf_overrides; docs/format.md "Configuration override") in canonical form. The spec
 * is what the registry compares and keeps (a model registered again with another override is
 * another registration, and the registry file line NAME=URI<TAB>OVERRIDE reads back the
 * same), while the store opens the URI alone and the loader merges the override. A URI never
 * holds a tab (control characters are refused), so the split is unambiguous.
 */
#include <stdlib.h>
#include <string.h>

#include "weightd/weightd_int.h"

int wd_spec_make(const char *uri, const char *override, char **spec, wt_errbuf *err)
{
	*spec = NULL;
	if (strchr(uri, '\t') != NULL)
		return wt_seterr(err, WT_EINVAL,
		                 "URI '%s' has a tab; a URI has no control characters (give the "
		                 "config override on its own)",
		                 uri);
	char *canon = NULL;
	int rv = ckpt_override_canonical(override, &canon, err);
	if (rv != WT_OK)
		return rv;
	size_t nu = strlen(uri), no = canon != NULL ? strlen(canon) : 0;
	*spec = malloc(nu + (canon != NULL ? 1 + no : 0) + 1);
	if (*spec == NULL) {
		free(canon);
		return wt_seterr(err, WT_ENOMEM, "out of memory");
	}
	memcpy(*spec, uri, nu);
	if (canon != NULL) {
		(*spec)[nu] = '\t';
		memcpy(*spec + nu + 1, canon, no);
	}
	(*spec)[nu + (canon != NULL ? 1 + no : 0)] = '\0';
	free(canon);
	return WT_OK;
}

int wd_spec_split(const char *spec, char **uri, char **override)
{
	const char *tab = strchr(spec, '\t');
	size_t n = tab != NULL ? (size_t)(tab - spec) : strlen(spec);
	*uri = strndup(spec, n);
	*override = tab != NULL ? strdup(tab + 1) : NULL;
	if (*uri == NULL || (tab != NULL && *override == NULL)) {
		free(*uri);
		free(*override);
		*uri = *override = NULL;
		return WT_ENOMEM;
	}
	return WT_OK;
}

char *wd_spec_show(const char *spec)
{
	const char *tab = strchr(spec, '\t');
	if (tab == NULL)
		return strdup(spec);
	static const char mid[] = ", config override ";
	size_t nu = (size_t)(tab - spec), no = strlen(tab + 1);
	char *s = malloc(nu + sizeof(mid) - 1 + no + 1);
	if (s != NULL) {
		memcpy(s, spec, nu);
		memcpy(s + nu, mid, sizeof(mid) - 1);
		memcpy(s + nu + sizeof(mid) - 1, tab + 1, no + 1);
	}
	return s;
}
