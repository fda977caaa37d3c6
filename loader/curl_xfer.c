/*
 * curl_xfer.c — the libcurl callbacks of one transfer (curl_xfer.h): status
 * line, Content-Length, Content-Range, ETag and Last-Modified from the
 * headers; the body straight into the caller's buffer (ranged GET: aborted at
 * once when the server ignores Range or sends more than asked) or into a
 * growing one (whole GET, with a ceiling); error bodies kept short for
 * messages; the cancel flag polled by the progress callback.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/common.h"
#include "loader/curl_xfer.h"

#define CURLX_HEADER_MAX 1024 /* a header line kept; longer ones are cut */

/* CURLOPT_XFERINFOFUNCTION: non-zero aborts (CURLE_ABORTED_BY_CALLBACK). */
int curlx_on_progress(void *ud, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
                      curl_off_t ulnow)
{
	(void)dltotal;
	(void)dlnow;
	(void)ultotal;
	(void)ulnow;
	const xfer *x = ud;
	return x->cancel != NULL && atomic_load(x->cancel) ? 1 : 0;
}

void curlx_reset(xfer *x)
{
	x->got = 0;
	x->status = 0;
	x->clen = -1;
	x->have_cr = false;
	x->cr_first = x->cr_last = x->cr_total = 0;
	x->cr_total_known = false;
	x->etag[0] = x->lastmod[0] = x->cenc[0] = x->date[0] = '\0';
	x->ebody_len = x->junk = 0;
	x->ebody[0] = '\0';
	x->stop = STOP_NONE;
	x->cc = CURLE_OK;
	x->curlerr[0] = '\0';
}

static bool parse_u64(const char **p, uint64_t *out)
{
	const char *s = *p;
	uint64_t v = 0;
	if (*s < '0' || *s > '9')
		return false;
	for (; *s >= '0' && *s <= '9'; s++)
		if (!wt_mul_u64(v, 10, &v) || !wt_add_u64(v, (uint64_t)(*s - '0'), &v))
			return false;
	*out = v;
	*p = s;
	return true;
}

/* "bytes FIRST-LAST/TOTAL", TOTAL may be "*"; "bytes STAR/TOTAL" (416) is ignored. */
static void parse_content_range(xfer *x, const char *v)
{
	if (strncasecmp(v, "bytes ", 6) != 0)
		return;
	const char *p = v + 6;
	uint64_t a, b, t = 0;
	if (!parse_u64(&p, &a) || *p++ != '-' || !parse_u64(&p, &b) || *p++ != '/')
		return;
	bool known = *p != '*';
	if (known && (!parse_u64(&p, &t) || *p != '\0'))
		return;
	x->have_cr = true;
	x->cr_first = a;
	x->cr_last = b;
	x->cr_total = t;
	x->cr_total_known = known;
}

static void copy_value(char *dst, size_t cap, const char *v)
{
	snprintf(dst, cap, "%s", v);
}

/* A 3xx's Location v (whole when !cut): may the transfer follow it? The
 * target is resolved as curl resolves it (its URL API, against the URL that
 * answered) and put to the client's check; no answer is a refusal. */
static bool redirect_allowed(xfer *x, const char *v, bool cut)
{
	if (cut) {
		wt_seterr(&x->refused, WT_EPERM,
		          "a redirect whose Location is over %d bytes is not followed here",
		          CURLX_HEADER_MAX - 1);
		return false;
	}
	char *cur = NULL, *abs = NULL;
	CURLU *u = wt_curl.url();
	bool ok = false;
	if (u != NULL && x->easy != NULL &&
	    wt_curl.easy_getinfo(x->easy, CURLINFO_EFFECTIVE_URL, &cur) == CURLE_OK &&
	    cur != NULL && wt_curl.url_set(u, CURLUPART_URL, cur, 0) == CURLUE_OK &&
	    wt_curl.url_set(u, CURLUPART_URL, v, 0) == CURLUE_OK &&
	    wt_curl.url_get(u, CURLUPART_URL, &abs, 0) == CURLUE_OK)
		ok = x->redirect_ok(x->redirect_ctx, abs, &x->refused) == WT_OK;
	else
		wt_seterr(&x->refused, WT_EPERM, "a redirect to '%.200s', which is not a URL here",
		          v);
	wt_curl.free(abs);
	wt_curl.url_cleanup(u);
	return ok;
}

size_t curlx_on_header(char *data, size_t size, size_t n, void *ud)
{
	xfer *x = ud;
	size_t len = size * n;
	char line[CURLX_HEADER_MAX];
	bool cut = len > sizeof(line) - 1;
	size_t k = cut ? sizeof(line) - 1 : len;
	memcpy(line, data, k);
	line[k] = '\0';
	while (k > 0 && (line[k - 1] == '\r' || line[k - 1] == '\n' || line[k - 1] == ' '))
		line[--k] = '\0';
	if (strncmp(line, "HTTP/", 5) == 0) {
		/* a new response (redirect, 100-continue): forget the previous one */
		CURLcode keep_cc = x->cc;
		size_t keep_got = x->got;
		curlx_reset(x);
		x->cc = keep_cc;
		x->got = keep_got;
		const char *sp = strchr(line, ' ');
		if (sp != NULL)
			x->status = strtol(sp + 1, NULL, 10);
		return len;
	}
	char *colon = strchr(line, ':');
	if (colon == NULL)
		return len;
	*colon = '\0';
	const char *v = colon + 1;
	while (*v == ' ' || *v == '\t')
		v++;
	if (x->redirect_ok != NULL && x->status >= 300 && x->status <= 399 &&
	    strcasecmp(line, "Location") == 0) {
		if (!redirect_allowed(x, v, cut)) {
			x->stop = STOP_REDIRECT;
			return 0; /* CURLE_WRITE_ERROR: not followed */
		}
	} else if (strcasecmp(line, "Content-Length") == 0) {
		const char *p = v;
		uint64_t cl;
		if (parse_u64(&p, &cl) && *p == '\0' && cl <= (uint64_t)INT64_MAX)
			x->clen = (int64_t)cl;
	} else if (strcasecmp(line, "Content-Range") == 0) {
		parse_content_range(x, v);
	} else if (strcasecmp(line, "ETag") == 0) {
		if (strncmp(v, "W/", 2) == 0)
			v += 2;
		copy_value(x->etag, sizeof(x->etag), *v == '"' ? v + 1 : v);
		size_t el = strlen(x->etag);
		if (el > 0 && x->etag[el - 1] == '"')
			x->etag[el - 1] = '\0';
	} else if (strcasecmp(line, "Last-Modified") == 0) {
		copy_value(x->lastmod, sizeof(x->lastmod), v);
	} else if (strcasecmp(line, "Date") == 0) {
		copy_value(x->date, sizeof(x->date), v);
	} else if (strcasecmp(line, "Content-Encoding") == 0) {
		copy_value(x->cenc, sizeof(x->cenc), v[0] ? v : "(empty)");
	}
	return len;
}

bool curlx_encoded(const xfer *x)
{
	return x->cenc[0] != '\0' && strcasecmp(x->cenc, "identity") != 0;
}

size_t curlx_on_write(char *data, size_t size, size_t n, void *ud)
{
	xfer *x = ud;
	size_t len = size * n;
	if (x->status >= 200 && x->status <= 299 && curlx_encoded(x)) {
		x->stop = STOP_ENCODED; /* not the object's bytes: read none of them */
		return 0;
	}
	if (x->status < 200 || x->status > 299) {
		/* error body: keep the start for the message, stop if it is long */
		size_t room = sizeof(x->ebody) - 1 - x->ebody_len;
		size_t k = len < room ? len : room;
		memcpy(x->ebody + x->ebody_len, data, k);
		x->ebody_len += k;
		x->ebody[x->ebody_len] = '\0';
		x->junk += len;
		return x->junk > CURLU_JUNK_BYTES ? 0 : len;
	}
	if (x->kind == X_RANGE) {
		if (x->status != 206) {
			x->stop = STOP_IGNORED_RANGE;
			return 0;
		}
		if (len > x->len - x->got) {
			x->stop = STOP_TOO_LONG;
			return 0;
		}
		memcpy(x->buf + x->got, data, len);
		x->got += len;
		return len;
	}
	if (x->kind == X_BODY) {
		if (len > x->len - x->got) {
			x->stop = STOP_TOO_BIG;
			return 0;
		}
		if (x->got + len + 1 > x->cap) {
			size_t ncap = x->cap ? x->cap : 64 * 1024;
			while (ncap < x->got + len + 1)
				ncap *= 2;
			char *nb = realloc(x->buf, ncap);
			if (nb == NULL) {
				x->stop = STOP_ENOMEM;
				return 0;
			}
			x->buf = nb;
			x->cap = ncap;
		}
		memcpy(x->buf + x->got, data, len);
		x->got += len;
		x->buf[x->got] = '\0';
		return len;
	}
	return len; /* HEAD has no body */
}
