/*
 * curl_xfer.h — private to loader/curl_*.c: one transfer (a HEAD, a ranged GET
 * or a whole GET) and the libcurl callbacks that fill it (curl_xfer.c), used
 * by the transfer engine in curl_util.c.
 */
#ifndef WT_LOADER_CURL_XFER_H
#define WT_LOADER_CURL_XFER_H

#include "loader/curl_dl.h"
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "loader/curl_int.h"

#define CURLU_EBODY_BYTES 512         /* error body kept for messages */
#define CURLU_JUNK_BYTES  (64 * 1024) /* error body read before giving up */

enum { X_HEAD, X_RANGE, X_BODY };
enum {
	STOP_NONE,
	STOP_IGNORED_RANGE,
	STOP_TOO_LONG,
	STOP_TOO_BIG,
	STOP_ENOMEM,
	STOP_ENCODED,
	STOP_REDIRECT /* the redirect check refused a Location: x->refused says why */
};

typedef struct xfer {
	/* request (set by the caller) */
	int kind;
	const char *url; /* borrowed */
	const char *key; /* borrowed; names the object in messages */
	uint64_t off;    /* X_RANGE */
	size_t len;      /* X_RANGE: bytes asked; X_BODY: ceiling */
	char *buf;       /* X_RANGE: caller's; X_BODY: malloc'd, grows */
	size_t cap;
	/* response (reset before each attempt) */
	size_t got;
	long status;
	int64_t clen; /* Content-Length, -1 if absent */
	bool have_cr;
	uint64_t cr_first, cr_last, cr_total; /* Content-Range */
	bool cr_total_known;
	char etag[256];
	char lastmod[128];
	char cenc[64];  /* Content-Encoding, "" if absent */
	char date[128]; /* Date, "" if absent */
	char ebody[CURLU_EBODY_BYTES];
	size_t ebody_len, junk;
	int stop;
	CURLcode cc;
	char curlerr[CURL_ERROR_SIZE];
	const _Atomic bool *cancel;    /* the client's, when the transfer started */
	curlu_redirect_fn redirect_ok; /* the client's (curlu_set_redirect_check); NULL = none */
	void *redirect_ctx;
	void *easy;        /* the CURL handle running it (its effective URL); NULL in fuzzing */
	wt_errbuf refused; /* STOP_REDIRECT */
} xfer;

/* Is the reply's body encoded (a Content-Encoding other than identity)? Its
 * bytes are then not the object's: weightd never asks for an encoding. */
bool curlx_encoded(const xfer *x);
/* Clear the response fields before an attempt. */
void curlx_reset(xfer *x);
/* CURLOPT_HEADERFUNCTION / WRITEFUNCTION / XFERINFOFUNCTION; ud is the xfer. */
size_t curlx_on_header(char *data, size_t size, size_t n, void *ud);
size_t curlx_on_write(char *data, size_t size, size_t n, void *ud);
int curlx_on_progress(void *ud, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
                      curl_off_t ulnow);

/*
 * The checks of a finished transfer (curl_util.c; fuzzed by
 * tests/fuzz/fuzz_http_reply.c with the header and write callbacks above).
 *
 * curlu_error_code: " (CODE)", the <Code> of an S3-style XML error body in
 * x->ebody when it is printable ASCII, else "" (out of cap bytes).
 * curlu_check_status: the transfer's outcome (stop reason, curl code, HTTP
 * status) as a wt_err naming the key and the URL, after `attempts` tries;
 * range checks come later. o: the client's options (perm_hint, https_only).
 * curlu_check_range: an X_RANGE reply must be 416, or 206 with a Content-Range
 * of exactly the bytes asked (or ending at the object's end) and that many
 * bytes received. curlu_check_version: its ETag (else Last-Modified) must be
 * version (NULL or "" = any), else WT_ECHANGED. curlu_stat_reply: a HEAD
 * reply into out (Content-Length, ETag or Last-Modified; a Last-Modified not
 * before the Date is WT_ECHANGED unless the ETag is known to derive from the
 * content, etag_is_content: S3);
 * the caller clears out with store_obj_clear() whatever the result.
 */
void curlu_error_code(const xfer *x, char *out, size_t cap);
int curlu_check_status(const curlu_opts *o, const xfer *x, int attempts, wt_errbuf *err);
int curlu_check_range(const xfer *x, wt_errbuf *err);
int curlu_check_version(const xfer *x, const char *version, wt_errbuf *err);
int curlu_stat_reply(const xfer *x, const char *url, const char *key, bool etag_is_content,
                     store_obj *out, wt_errbuf *err);

#endif
