/*
 * curl_xfer.h — private to loader/curl_*.c: one transfer (a HEAD, a ranged GET
 * or a whole GET) and the libcurl callbacks that fill it (curl_xfer.c), used
 * by the transfer engine in curl_util.c.
 */
#ifndef WT_LOADER_CURL_XFER_H
#define WT_LOADER_CURL_XFER_H

#include <curl/curl.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CURLU_EBODY_BYTES 512         /* error body kept for messages */
#define CURLU_JUNK_BYTES  (64 * 1024) /* error body read before giving up */

enum { X_HEAD, X_RANGE, X_BODY };
enum { STOP_NONE, STOP_IGNORED_RANGE, STOP_TOO_LONG, STOP_TOO_BIG, STOP_ENOMEM, STOP_ENCODED };

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
	const _Atomic bool *cancel; /* the client's, when the transfer started */
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

#endif
