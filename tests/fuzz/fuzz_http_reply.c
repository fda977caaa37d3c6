/*
 * fuzz_http_reply.c — what the loader's HTTP/S3 client makes of a server's
 * reply (loader/curl_xfer.c, curl_util.c): header lines through the header
 * callback (status line, ETag, Last-Modified, Date, Content-Range,
 * Content-Length, Content-Encoding), the body through the write callback
 * (ranged GET, whole GET, or an error body such as S3's XML), then the checks
 * a finished transfer goes through: curlu_check_status (with the S3 error
 * <Code>, curlu_error_code), and curlu_check_range + curlu_check_version
 * (ranged GET) or curlu_stat_reply (HEAD).
 *
 * Input: byte 0: the request (bits 0-1 mod 3: HEAD, a ranged GET of
 * bytes 100-115, pinned to version "v1" when bit 2 is set, a whole GET of at
 * most 256 bytes); byte 1: the curl result (mod the table below: what
 * libcurl reports besides the bytes), bit 7 the store's https_only; then
 * header lines, each ending with '\n' (given to the callback as they are, so
 * with their "\r"), up to an empty line not followed by "HTTP/" (a redirect's
 * next response); the rest is the body, written in
 * two calls (split in the middle). A write callback that stops the transfer
 * turns the curl result into CURLE_WRITE_ERROR, as libcurl does.
 *
 * Contract: the parsed fields stay NUL-terminated inside their arrays; an
 * accepted transfer is a 2xx (or a 416 to a ranged GET) that libcurl
 * finished; an accepted range is exactly the bytes received, starting at the
 * offset asked; an accepted HEAD has the Content-Length as size and the ETag
 * or Last-Modified as version; a refusal names the key.
 */
#include <stdlib.h>
#include <string.h>

#include "loader/curl_dl.h"
#include "loader/curl_int.h"
#include "loader/curl_xfer.h"
#include "tests/fuzz/fuzz.h"

#define KEY      "model-00001.safetensors"
#define RANGE_AT 100u
#define RANGE_N  16u
#define BODY_MAX 256u

static const CURLcode results[] = {
    CURLE_OK,
    CURLE_OK,
    CURLE_OK,
    CURLE_WRITE_ERROR,
    CURLE_ABORTED_BY_CALLBACK,
    CURLE_COULDNT_CONNECT,
    CURLE_OPERATION_TIMEDOUT,
    CURLE_UNSUPPORTED_PROTOCOL,
    CURLE_PEER_FAILED_VERIFICATION,
    CURLE_PARTIAL_FILE,
};

static bool terminated(const char *s, size_t cap)
{
	return memchr(s, '\0', cap) != NULL;
}

/* Headers, then the body, through the callbacks. */
static void feed(xfer *x, const uint8_t *p, size_t n)
{
	while (n > 0) {
		const uint8_t *nl = memchr(p, '\n', n);
		size_t k = nl ? (size_t)(nl - p) + 1 : n;
		FUZZ_CHECK(curlx_on_header((char *)p, 1, k, x) == k);
		bool blank = k == 1 || (k == 2 && p[0] == '\r');
		p += k;
		n -= k;
		/* a redirect's next response goes on with the headers (curl passes them all) */
		if (blank && !(n >= 5 && memcmp(p, "HTTP/", 5) == 0))
			break;
	}
	size_t half = n / 2;
	const size_t part[2] = {half, n - half};
	for (int i = 0; i < 2 && x->cc == CURLE_OK; i++) {
		if (part[i] == 0)
			continue;
		if (curlx_on_write((char *)p, 1, part[i], x) != part[i])
			x->cc = CURLE_WRITE_ERROR;
		p += part[i];
	}
	FUZZ_CHECK(terminated(x->etag, sizeof(x->etag)) &&
	           terminated(x->lastmod, sizeof(x->lastmod)) &&
	           terminated(x->cenc, sizeof(x->cenc)) && terminated(x->date, sizeof(x->date)) &&
	           x->ebody_len < sizeof(x->ebody) && x->ebody[x->ebody_len] == '\0');
	FUZZ_CHECK(x->clen >= -1 && x->got <= (x->kind == X_HEAD ? 0 : x->len));
}

static void check_code(const xfer *x)
{
	char code[96];
	curlu_error_code(x, code, sizeof(code));
	size_t n = strlen(code);
	if (n == 0)
		return;
	FUZZ_CHECK(n >= 3 && code[0] == ' ' && code[1] == '(' &&
	           (code[n - 1] == ')' || n == sizeof(code) - 1));
	for (size_t i = 0; i < n; i++)
		FUZZ_CHECK(code[i] >= 0x20 && code[i] <= 0x7e);
}

/* etag_is_content: read as an S3 reply (its ETag never kept by a write). */
static int check_stat(const xfer *x, bool etag_is_content)
{
	store_obj o = {0};
	wt_errbuf err = {0};
	int rv = curlu_stat_reply(x, "http://h/m/" KEY, KEY, etag_is_content, &o, &err);
	if (fuzz_note("curlu_stat_reply", rv, &err) == WT_OK) {
		FUZZ_CHECK(x->clen >= 0 && o.nbytes == (uint64_t)x->clen);
		FUZZ_CHECK(o.version != NULL && o.version[0] != '\0' &&
		           strcmp(o.version, x->etag[0] ? x->etag : x->lastmod) == 0);
		FUZZ_CHECK(o.key != NULL && strcmp(o.key, KEY) == 0);
	} else {
		FUZZ_CHECK(strstr(err.msg, KEY) != NULL);
	}
	store_obj_clear(&o);
	return rv;
}

static void check_range(const xfer *x, const char *version)
{
	wt_errbuf err = {0};
	int rv = curlu_check_range(x, &err);
	if (fuzz_note("curlu_check_range", rv, &err) != WT_OK) {
		FUZZ_CHECK(strstr(err.msg, KEY) != NULL);
		return;
	}
	if (x->status != 416) {
		FUZZ_CHECK(x->have_cr && x->cr_first == RANGE_AT && x->got >= 1 &&
		           x->got <= RANGE_N && x->cr_last - x->cr_first + 1 == x->got);
		if (x->got < RANGE_N)
			FUZZ_CHECK(x->cr_total_known && x->cr_total == x->cr_last + 1);
	}
	rv = curlu_check_version(x, version, &err);
	if (fuzz_note("curlu_check_version", rv, &err) != WT_OK)
		FUZZ_CHECK(rv == WT_ECHANGED && strstr(err.msg, KEY) != NULL);
	else if (version != NULL && x->status != 416)
		FUZZ_CHECK(strcmp(x->etag[0] ? x->etag : x->lastmod, version) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* the callbacks and checks call libcurl (curl_getdate, curl_url, ...): loaded on first
	 * use as curlu_open does (loader/curl_dl.h) */
	wt_errbuf lerr = {0};
	FUZZ_CHECK(curl_dl_load(&lerr) == WT_OK);
	if (size < 2)
		return 0;
	static const int kinds[3] = {X_HEAD, X_RANGE, X_BODY};
	char rbuf[RANGE_N];
	xfer x = {.kind = kinds[(data[0] & 3u) % 3], .url = "http://h/m/" KEY, .key = KEY};
	if (x.kind == X_RANGE) {
		x.off = RANGE_AT;
		x.len = RANGE_N;
		x.buf = rbuf;
		x.cap = sizeof(rbuf);
	} else if (x.kind == X_BODY) {
		x.len = BODY_MAX;
	}
	const char *version = x.kind == X_RANGE && (data[0] & 4) ? "v1" : NULL;
	curlu_opts o = {.perm_hint = "check the bucket policy",
	                .https_only = (data[1] & 0x80) != 0};
	curlx_reset(&x);
	x.cc = results[(data[1] & 0x7f) % (sizeof(results) / sizeof(results[0]))];
	feed(&x, data + 2, size - 2);
	check_code(&x);
	wt_errbuf err = {0};
	int rv = curlu_check_status(&o, &x, 1, &err);
	if (fuzz_note("curlu_check_status", rv, &err) == WT_OK) {
		FUZZ_CHECK((x.cc == CURLE_OK && x.status >= 200 && x.status <= 299) ||
		           (x.kind == X_RANGE && x.status == 416));
		if (x.kind == X_HEAD) /* an http:// reading is never laxer than S3's */
			FUZZ_CHECK(check_stat(&x, false) != WT_OK || check_stat(&x, true) == WT_OK);
		else if (x.kind == X_RANGE)
			check_range(&x, version);
	} else {
		FUZZ_CHECK(strstr(err.msg, KEY) != NULL);
	}
	if (x.kind == X_BODY)
		free(x.buf);
	return 0;
}
