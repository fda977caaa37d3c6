/*
 * exclude_re.c — exclusion patterns (docs/format.md section 5) as anchored POSIX
 * extended regexes, and the limits that keep compiling and matching them cheap.
 *
 *   form                     regex
 *   exact "a.b"              ^(a\.b)$
 *   prefix "a.b."            ^(a\.b\..*)$
 *   "{i}"                    [0-9]+
 *   "*"                      [^.]*
 *   "re:PAT"                 ^(PAT)$
 *
 * glibc's regcomp copies the operand of a bounded repetition once per count
 * ({m,n} -> n copies, {m,} -> m+1, + -> 2), so 30 bytes such as
 * ((a{1,100}){1,100}){1,100} become 10^6 NFA positions (seconds and a GB per
 * compile). Before regcomp the anchored regex is scanned with the same
 * grammar and its expanded size counted; over WT_EXCLUDE_MAX_POSITIONS it is
 * refused. Its epsilon closures are exponential when a part that can match
 * the empty string is repeated ((a?){3,9}{9,} or (((a?)*)+)* run for minutes),
 * so *, + and {m,n} on such a part are refused ('?' is harmless). Back-references
 * (\1..\9, a GNU extension that makes matching exponential) are refused; group
 * nesting is capped at WT_EXCLUDE_MAX_DEPTH. Anchors (^ $ \< \> \` \' \b \B) that
 * follow one another with nothing consumed between them make regcomp's closures
 * grow steeply, \b and \B (each an alternation of two anchors inside glibc) worst:
 * 80 \b took 16 s and 7.7 GB, 30 (\b|\B) 29 s. A pattern may hold at most
 * ANCHORS_MAX of them besides the wrapper's ^ and $, \b and \B counting two; a
 * repeated group cannot multiply them (a group that can match the empty string
 * is never repeated, and every copy of any other consumes a character).
 */
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "weights/layout.h"

#define CAP_POS     ((uint64_t)WT_EXCLUDE_MAX_POSITIONS + 1) /* saturation: "over the limit" */
#define ANCHORS_MAX 16 /* anchors per pattern besides the wrapper's ^ and $; \b, \B count 2 */

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

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	uint64_t s;
	return wt_add_u64(a, b, &s) && s < CAP_POS ? s : CAP_POS;
}

static uint64_t sat_mul(uint64_t a, uint64_t b)
{
	uint64_t s;
	return wt_mul_u64(a, b, &s) && s < CAP_POS ? s : CAP_POS;
}

/* End of the bracket expression opening at re[i] ('['): index of its ']', or 0. */
static size_t bracket_end(const char *re, size_t i)
{
	size_t j = i + 1;
	if (re[j] == '^')
		j++;
	if (re[j] == ']')
		j++;
	for (; re[j] != '\0'; j++) {
		if (re[j] == ']')
			return j;
		if (re[j] == '[' && (re[j + 1] == ':' || re[j + 1] == '=' || re[j + 1] == '.')) {
			char d = re[j + 1];
			const char *e = re + j + 2;
			while (*e != '\0' && !(e[0] == d && e[1] == ']'))
				e++;
			if (*e == '\0')
				return 0;
			j = (size_t)(e - re) + 1;
		}
	}
	return 0;
}

/* Parse "{m}", "{m,}", "{,n}" or "{m,n}" at re[i]; returns the index of '}' or 0 if
 * malformed. *copies = how many copies of the operand glibc makes; *lo0 = the
 * count may be zero. */
static size_t interval(const char *re, size_t i, uint64_t *copies, bool *lo0)
{
	size_t j = i + 1;
	uint64_t m = 0, n = 0;
	bool have_m = false, comma = false, have_n = false;
	for (; re[j] >= '0' && re[j] <= '9'; j++, have_m = true)
		m = sat_add(sat_mul(m, 10), (uint64_t)(re[j] - '0'));
	if (re[j] == ',') {
		comma = true;
		for (j++; re[j] >= '0' && re[j] <= '9'; j++, have_n = true)
			n = sat_add(sat_mul(n, 10), (uint64_t)(re[j] - '0'));
	}
	if (re[j] != '}' || (!have_m && !comma))
		return 0;
	*lo0 = m == 0;
	if (!comma)
		*copies = m;
	else if (!have_n)
		*copies = sat_add(m, 1);
	else
		*copies = n > m ? n : m;
	if (*copies == 0)
		*copies = 1;
	return j;
}

typedef struct {
	uint64_t alts;  /* finished alternatives of this group, plus one node per '|' */
	uint64_t cat;   /* the alternative being read */
	uint64_t last;  /* size of the last operand in cat (0: none to repeat) */
	bool alts_null; /* a finished alternative can match the empty string */
	bool cat_null;  /* so can the alternative being read */
	bool pre_null;  /* ... and cat without its last operand */
	bool last_null; /* ... and the last operand */
} ere_frame;

static void frame_init(ere_frame *f)
{
	memset(f, 0, sizeof(*f));
	f->cat_null = true;
	f->pre_null = true;
}

/* Append an operand of size atom (0: zero-width, not repeatable) to f. */
static void frame_push(ere_frame *f, uint64_t atom, bool null)
{
	f->pre_null = f->cat_null;
	f->cat = sat_add(f->cat, atom ? atom : 1);
	f->cat_null = f->cat_null && null;
	f->last = atom;
	f->last_null = null;
}

/* Apply a repetition (c one of * + ? {) making `copies` copies to f's last operand;
 * `lo0` says the result may match nothing (*, ?, {0,n}). */
static int frame_repeat(ere_frame *f, char c, uint64_t copies, bool lo0, const char *pat,
                        wt_errbuf *err)
{
	if (f->last_null && c != '?')
		return wt_seterr(err, WT_EINVAL,
		                 "exclude pattern '%s': '%c' repeats a part that can match the "
		                 "empty string (compiling that takes exponential time); make "
		                 "the repeated part match at least one character",
		                 pat, c);
	uint64_t rep = sat_add(sat_mul(f->last, copies), copies);
	f->cat = sat_add(f->cat - f->last, rep);
	f->last = rep;
	f->last_null = f->last_null || lo0;
	f->cat_null = f->pre_null && f->last_null;
	return WT_OK;
}

/*
 * Expanded NFA size of the anchored ERE re (glibc's grammar: REG_EXTENDED). WT_EINVAL
 * naming pat on a back-reference, a group nesting or size over the limits, or a
 * repetition of a part that can match the empty string.
 */
static int ere_size(const char *pat, const char *re, uint64_t *out, wt_errbuf *err)
{
	ere_frame st[WT_EXCLUDE_MAX_DEPTH + 1];
	size_t d = 0;
	unsigned anchors = 0; /* weighted; the wrapper's ^ and $ included */
	frame_init(&st[0]);
	for (size_t i = 0; re[i] != '\0' && st[d].cat < CAP_POS; i++) {
		ere_frame *f = &st[d];
		uint64_t atom = 1, copies = 0;
		bool null = false, lo0 = false;
		char c = re[i];
		if (c == '\\' && re[i + 1] >= '1' && re[i + 1] <= '9')
			return wt_seterr(
			    err, WT_EINVAL,
			    "exclude pattern '%s': back-reference '\\%c' is not allowed "
			    "(matching it takes exponential time); repeat the group "
			    "instead",
			    pat, re[i + 1]);
		if (c == '\\' && re[i + 1] != '\0') {
			i++;
			if (strchr("<>bB`'", re[i])) {
				atom = 0; /* anchors: a following operator does not repeat them */
				null = true;
				anchors += re[i] == 'b' || re[i] == 'B' ? 2 : 1;
			}
		} else if (c == '[') {
			size_t e = bracket_end(re, i);
			if (e > 0)
				i = e;
		} else if (c == '(') {
			if (d == WT_EXCLUDE_MAX_DEPTH)
				return wt_seterr(
				    err, WT_EINVAL,
				    "exclude pattern '%s': groups nest deeper than %d; "
				    "flatten the parentheses",
				    pat, WT_EXCLUDE_MAX_DEPTH);
			frame_init(&st[++d]);
			continue;
		} else if (c == ')' && d > 0) {
			atom = sat_add(sat_add(f->alts, f->cat), 2);
			null = f->alts_null || f->cat_null;
			f = &st[--d];
		} else if (c == '|') {
			f->alts = sat_add(sat_add(f->alts, f->cat), 1);
			f->alts_null = f->alts_null || f->cat_null;
			f->cat = 0;
			f->last = 0;
			f->cat_null = f->pre_null = true;
			f->last_null = false;
			continue;
		} else if (c == '^' || c == '$') {
			atom = 0;
			null = true;
			anchors++;
		} else if (c == '*' || c == '?' || c == '+' || c == '{') {
			size_t e = c == '{' ? interval(re, i, &copies, &lo0) : i;
			if (c != '{') {
				copies = c == '+' ? 2 : 1;
				lo0 = c != '+';
			}
			if (f->last > 0 && e > 0) { /* else: a literal, or an error for regcomp */
				int rv = frame_repeat(f, c, copies, lo0, pat, err);
				if (rv != WT_OK)
					return rv;
				i = e;
				continue;
			}
		}
		frame_push(f, atom, null);
	}
	if (anchors > ANCHORS_MAX + 2)
		return wt_seterr(err, WT_EINVAL,
		                 "exclude pattern '%s': more than %d anchors (^ $ \\< \\> \\` "
		                 "\\' count one, \\b \\B two; many take regcomp minutes and "
		                 "gigabytes); the pattern is anchored already, drop them",
		                 pat, ANCHORS_MAX);
	uint64_t total = 0;
	for (size_t k = 0; k <= d; k++)
		total = sat_add(total, sat_add(st[k].alts, st[k].cat));
	if (total > WT_EXCLUDE_MAX_POSITIONS)
		return wt_seterr(err, WT_EINVAL,
		                 "exclude pattern '%s': expands to over %d regex positions "
		                 "(repetition counts multiply); use '+' or '*' instead of large "
		                 "or nested {m,n} counts",
		                 pat, WT_EXCLUDE_MAX_POSITIONS);
	*out = total;
	return WT_OK;
}

/* A re: body must balance its parentheses: an extra ')' would close the ^( of
 * the wrapper (re:a)|(b became ^(a)|(b)$, matching anything that starts with a). */
static int balanced(const char *pat, const char *body, wt_errbuf *err)
{
	long depth = 0;
	for (size_t i = 0; body[i] != '\0'; i++) {
		if (body[i] == '\\' && body[i + 1] != '\0') {
			i++;
		} else if (body[i] == '[') {
			size_t e = bracket_end(body, i);
			if (e > 0)
				i = e;
		} else if (body[i] == '(') {
			depth++;
		} else if (body[i] == ')' && --depth < 0) {
			return wt_seterr(
			    err, WT_EINVAL,
			    "exclude pattern '%s': ')' at offset %zu has no '(' (it would "
			    "close the pattern's ^(...)$ anchoring); balance the "
			    "parentheses or escape it as \\)",
			    pat, i + 3);
		}
	}
	if (depth != 0)
		return wt_seterr(err, WT_EINVAL,
		                 "exclude pattern '%s': %ld '(' without ')' in the regex; balance "
		                 "the parentheses",
		                 pat, depth);
	return WT_OK;
}

int common_excl_regex(const char *pat, char **out, uint32_t *positions, wt_errbuf *err)
{
	size_t n = strlen(pat);
	if (n == 0)
		return wt_seterr(err, WT_EINVAL, "empty exclude pattern");
	if (n > WT_EXCLUDE_MAX_BYTES)
		return wt_seterr(err, WT_EINVAL,
		                 "exclude pattern '%.40s...': %zu bytes, over the limit of %d; "
		                 "use a prefix, {i} or * to shorten it",
		                 pat, n, WT_EXCLUDE_MAX_BYTES);
	bool re = strncmp(pat, "re:", 3) == 0;
	if (re) {
		int rv = balanced(pat, pat + 3, err);
		if (rv != WT_OK)
			return rv;
	}
	char *body = re ? strdup(pat + 3) : translate(pat);
	char *full = body ? malloc(strlen(body) + 5) : NULL;
	if (!full) {
		free(body);
		return wt_seterr(err, WT_ENOMEM,
		                 "exclude pattern '%s': out of memory for its regex", pat);
	}
	size_t bl = strlen(body);
	full[0] = '^';
	full[1] = '(';
	memcpy(full + 2, body, bl);
	memcpy(full + bl + 2, ")$", 3);
	free(body);
	uint64_t size = 0;
	int rv = ere_size(pat, full, &size, err);
	if (rv != WT_OK) {
		free(full);
		return rv;
	}
	if (positions)
		*positions = (uint32_t)size;
	if (out)
		*out = full;
	else
		free(full);
	return WT_OK;
}
