/*
 * exclude.c — exclusion patterns (docs/format.md section 5): the merged,
 * sorted list of a plan, each compiled from the anchored ERE of
 * common_excl_regex (which also enforces the WT_EXCLUDE_* limits before
 * anything reaches regcomp).
 */
#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "shardmap/shardmap_int.h"

struct sm_excl {
	char **pats; /* sorted, unique; owned */
	regex_t *res;
	size_t n;
};

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int shardmap_excl_compile(const char *const *pats, size_t n, sm_excl **out, wt_errbuf *err)
{
	if (n > SM_EXCL_MAX_PATTERNS)
		return wt_seterr(err, WT_ETOOBIG,
		                 "exclusions: %zu patterns (layout plus config.json "
		                 "quantization_config ignore lists), over the limit of %d; "
		                 "use prefixes, {i} or * to cover several modules with one",
		                 n, SM_EXCL_MAX_PATTERNS);
	sm_excl *x = calloc(1, sizeof(*x));
	if (!x)
		return wt_seterr(err, WT_ENOMEM, "exclusions: out of memory for the exclusion set");
	if (n) {
		x->pats = calloc(n, sizeof(char *));
		x->res = calloc(n, sizeof(regex_t));
		if (!x->pats || !x->res) {
			shardmap_excl_free(x);
			return wt_seterr(err, WT_ENOMEM,
			                 "exclusions: out of memory for %zu compiled patterns", n);
		}
	}
	char **tmp = n ? calloc(n, sizeof(char *)) : NULL;
	if (n && !tmp) {
		shardmap_excl_free(x);
		return wt_seterr(err, WT_ENOMEM, "exclusions: out of memory sorting %zu patterns",
		                 n);
	}
	for (size_t k = 0; k < n; k++)
		tmp[k] = (char *)pats[k];
	if (n > 1)
		qsort(tmp, n, sizeof(char *), cmp_str);
	int rv = WT_OK;
	for (size_t k = 0; k < n; k++) {
		if (k > 0 && strcmp(tmp[k], tmp[k - 1]) == 0)
			continue;
		const char *p = tmp[k];
		char *full = NULL, *copy = NULL;
		if ((rv = common_excl_regex(p, &full, NULL, err)) != WT_OK)
			break;
		if ((copy = strdup(p)) == NULL) {
			free(full);
			rv = wt_seterr(err, WT_ENOMEM,
			               "exclusions: out of memory copying pattern '%s'", p);
			break;
		}
		int rc = regcomp(&x->res[x->n], full, REG_EXTENDED | REG_NOSUB);
		free(full);
		if (rc != 0) {
			char why[128];
			regerror(rc, &x->res[x->n], why, sizeof(why));
			free(copy);
			rv = wt_seterr(
			    err, WT_EINVAL,
			    "exclude pattern '%s': not a valid POSIX extended regex (%s); "
			    "escape the special characters or drop the 're:' prefix",
			    p, why);
			break;
		}
		x->pats[x->n++] = copy;
	}
	free(tmp);
	if (rv != WT_OK) {
		shardmap_excl_free(x);
		return rv;
	}
	*out = x;
	return WT_OK;
}

bool shardmap_excl_match(const sm_excl *x, const char *module)
{
	if (!x)
		return false;
	for (size_t k = 0; k < x->n; k++)
		if (regexec(&x->res[k], module, 0, NULL, 0) == 0)
			return true;
	return false;
}

size_t shardmap_excl_count(const sm_excl *x)
{
	return x ? x->n : 0;
}

const char *shardmap_excl_pattern(const sm_excl *x, size_t i)
{
	return x && i < x->n ? x->pats[i] : NULL;
}

void shardmap_excl_free(sm_excl *x)
{
	if (!x)
		return;
	for (size_t k = 0; k < x->n; k++) {
		regfree(&x->res[k]);
		free(x->pats[k]);
	}
	free(x->pats);
	free(x->res);
	free(x);
}
