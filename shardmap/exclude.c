/*
 * exclude.c — exclusion patterns (docs/format.md section 5), compiled to POSIX
 * extended regexes anchored as ^(...)$:
 *
 *   form                     regex
 *   exact "a.b"              ^(a\.b)$
 *   prefix "a.b."            ^(a\.b\..*)$
 *   "{i}"                    [0-9]+
 *   "*"                      [^.]*
 *   "re:PAT"                 ^(PAT)$
 */
#include <regex.h>
#include <stdlib.h>
#include <string.h>

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

/* Translate a non-re: pattern into an ERE body. Caller frees. */
static char *translate(const char *p)
{
	size_t n = strlen(p);
	char *out = malloc(n * 8 + 8);
	if (!out)
		return NULL;
	size_t o = 0;
	for (size_t k = 0; k < n; k++) {
		if (strncmp(p + k, "{i}", 3) == 0) {
			memcpy(out + o, "[0-9]+", 6);
			o += 6;
			k += 2;
		} else if (p[k] == '*') {
			memcpy(out + o, "[^.]*", 5);
			o += 5;
		} else if (strchr(".[]()\\^$|?+{}", p[k])) {
			out[o++] = '\\';
			out[o++] = p[k];
		} else {
			out[o++] = p[k];
		}
	}
	if (n > 0 && p[n - 1] == '.') {
		memcpy(out + o, ".*", 2);
		o += 2;
	}
	out[o] = '\0';
	return out;
}

int shardmap_excl_compile(const char *const *pats, size_t n, sm_excl **out, wt_errbuf *err)
{
	sm_excl *x = calloc(1, sizeof(*x));
	if (!x)
		return wt_seterr(err, WT_ENOMEM, "exclusions: out of memory");
	if (n) {
		x->pats = calloc(n, sizeof(char *));
		x->res = calloc(n, sizeof(regex_t));
		if (!x->pats || !x->res) {
			shardmap_excl_free(x);
			return wt_seterr(err, WT_ENOMEM, "exclusions: out of memory");
		}
	}
	char **tmp = n ? calloc(n, sizeof(char *)) : NULL;
	if (n && !tmp) {
		shardmap_excl_free(x);
		return wt_seterr(err, WT_ENOMEM, "exclusions: out of memory");
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
		char *body = strncmp(p, "re:", 3) == 0 ? strdup(p + 3) : translate(p);
		char *full = body ? malloc(strlen(body) + 5) : NULL;
		char *copy = strdup(p);
		if (!body || !full || !copy) {
			free(body);
			free(full);
			free(copy);
			rv = wt_seterr(err, WT_ENOMEM, "exclusions: out of memory");
			break;
		}
		size_t bl = strlen(body);
		full[0] = '^';
		full[1] = '(';
		memcpy(full + 2, body, bl);
		full[bl + 2] = ')';
		full[bl + 3] = '$';
		full[bl + 4] = '\0';
		free(body);
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
