/*
 * curl_util.c — libcurl plumbing for the object-store backends (see curl_int.h).
 *
 * A transfer ("xfer") is one HEAD, ranged GET or whole GET. Transfers run on a
 * "lane": a curl multi handle with up to CURLU_MAX_PARALLEL easy handles. The
 * multi handle owns the connection cache, so a lane reused from the pool keeps
 * its keep-alive connections; lanes are never shared by two threads.
 *
 * Bytes of a ranged GET go straight from curl's 512 KiB receive buffer into
 * the caller's buffer. The write callback aborts at once when the server
 * ignores Range (200) or sends more than asked, so a misbehaving server never
 * makes us download a whole object.
 */
#include "loader/curl_dl.h"
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "common/common.h"
#include "loader/curl_int.h"
#include "loader/curl_xfer.h"

#define CURLU_BUFFER_BYTES (512L * 1024L)
#define CURLU_MAX_IDLE     32    /* lanes kept in the pool */
#define CURLU_BACKOFF_CAP  5000L /* ms */

typedef struct lane {
	CURLM *m;
	CURL *h[CURLU_MAX_PARALLEL]; /* created on first use */
} lane;

struct curlu {
	curlu_opts o; /* strings below owned */
	char *userpwd, *sigv4, *ca_bundle;
	struct curl_slist *hdrs; /* read-only after open */
	pthread_mutex_t lk;
	lane *idle[CURLU_MAX_IDLE];         /* guarded by lk */
	size_t n_idle;                      /* guarded by lk */
	const _Atomic bool *_Atomic cancel; /* curlu_set_cancel */
	curlu_redirect_fn redirect_ok;      /* curlu_set_redirect_check; set before use */
	void *redirect_ctx;
};

void curlu_set_cancel(curlu *c, const _Atomic bool *cancel)
{
	atomic_store(&c->cancel, cancel);
}

void curlu_set_redirect_check(curlu *c, curlu_redirect_fn fn, void *ctx)
{
	c->redirect_ok = fn;
	c->redirect_ctx = ctx;
}

static pthread_once_t global_once = PTHREAD_ONCE_INIT;
static CURLcode global_rc;

static void global_init(void)
{
	global_rc = wt_curl.global_init(CURL_GLOBAL_DEFAULT);
}

/* ---------------- client and lanes ---------------- */

static void lane_free(lane *l)
{
	if (l == NULL)
		return;
	for (int i = 0; i < CURLU_MAX_PARALLEL; i++)
		if (l->h[i] != NULL)
			wt_curl.easy_cleanup(l->h[i]);
	if (l->m != NULL)
		wt_curl.multi_cleanup(l->m);
	free(l);
}

void curlu_close(curlu *c)
{
	if (c == NULL)
		return;
	for (size_t i = 0; i < c->n_idle; i++)
		lane_free(c->idle[i]);
	wt_curl.slist_free_all(c->hdrs);
	if (c->userpwd != NULL) {
		/* the secret should not linger in freed memory */
		volatile char *p = c->userpwd;
		while (*p != '\0')
			*p++ = '\0';
	}
	free(c->userpwd);
	free(c->sigv4);
	free(c->ca_bundle);
	pthread_mutex_destroy(&c->lk);
	free(c);
}

static int add_header(curlu *c, const char *name, const char *value, wt_errbuf *err)
{
	size_t n = strlen(name) + strlen(value) + 3;
	char *h = malloc(n);
	if (h == NULL)
		return wt_seterr(err, WT_ENOMEM, "out of memory for an HTTP header");
	snprintf(h, n, "%s: %s", name, value);
	struct curl_slist *l = wt_curl.slist_append(c->hdrs, h);
	free(h);
	if (l == NULL)
		return wt_seterr(err, WT_ENOMEM, "out of memory for an HTTP header");
	c->hdrs = l;
	return WT_OK;
}

int curlu_open(curlu **out, const curlu_opts *o, wt_errbuf *err)
{
	*out = NULL;
	int rv = curl_dl_load(err);
	if (rv != WT_OK)
		return rv;
	pthread_once(&global_once, global_init);
	if (global_rc != CURLE_OK)
		return wt_seterr(err, WT_EIO, "libcurl global init failed: %s",
		                 wt_curl.easy_strerror(global_rc));
	curlu *c = calloc(1, sizeof(*c));
	if (c == NULL)
		return wt_seterr(err, WT_ENOMEM, "out of memory for an HTTP client");
	if (pthread_mutex_init(&c->lk, NULL) != 0) {
		free(c);
		return wt_seterr(err, WT_ENOMEM, "pthread_mutex_init failed");
	}
	c->o = *o;
	rv = WT_OK;
	if ((o->userpwd != NULL && (c->userpwd = strdup(o->userpwd)) == NULL) ||
	    (o->sigv4 != NULL && (c->sigv4 = strdup(o->sigv4)) == NULL) ||
	    (o->ca_bundle != NULL && (c->ca_bundle = strdup(o->ca_bundle)) == NULL))
		rv = wt_seterr(err, WT_ENOMEM, "out of memory for an HTTP client");
	c->o.userpwd = c->userpwd;
	c->o.sigv4 = c->sigv4;
	c->o.ca_bundle = c->ca_bundle;
	c->o.session_token = NULL;
	if (c->o.parallel < 1 || c->o.parallel > CURLU_MAX_PARALLEL)
		c->o.parallel = 1;
	if (c->o.split_bytes < CURLU_MIN_PART)
		c->o.split_bytes = CURLU_MIN_PART;
	/* S3 wants the payload hash; a GET or HEAD has an empty payload. */
	if (rv == WT_OK && o->sigv4 != NULL)
		rv = add_header(c, "x-amz-content-sha256",
		                "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
		                err);
	if (rv == WT_OK && o->session_token != NULL)
		rv = add_header(c, "x-amz-security-token", o->session_token, err);
	if (rv != WT_OK) {
		curlu_close(c);
		return rv;
	}
	*out = c;
	return WT_OK;
}

/* Take an idle lane or make one. NULL on ENOMEM. */
static lane *lane_get(curlu *c)
{
	lane *l = NULL;
	pthread_mutex_lock(&c->lk);
	if (c->n_idle > 0)
		l = c->idle[--c->n_idle];
	pthread_mutex_unlock(&c->lk);
	if (l != NULL)
		return l;
	if ((l = calloc(1, sizeof(*l))) == NULL)
		return NULL;
	if ((l->m = wt_curl.multi_init()) == NULL) {
		free(l);
		return NULL;
	}
	return l;
}

static void lane_put(curlu *c, lane *l)
{
	pthread_mutex_lock(&c->lk);
	if (c->n_idle < CURLU_MAX_IDLE) {
		c->idle[c->n_idle++] = l;
		l = NULL;
	}
	pthread_mutex_unlock(&c->lk);
	lane_free(l); /* pool full */
}

/* ---------------- running transfers ---------------- */

static int setup_handle(curlu *c, CURL *h, xfer *x)
{
	char range[64];
	CURLcode e = CURLE_OK;
	wt_curl.easy_reset(h);
#define SET(opt, val)                                                                              \
	do {                                                                                       \
		_Static_assert(CURL_DL_LONG_OK(opt, val), #opt ": a long option takes a long, "    \
		                                               "the others a pointer");            \
		if (e == CURLE_OK)                                                                 \
			e = wt_curl.easy_setopt(h, opt, val);                                      \
	} while (0)
	SET(CURLOPT_URL, x->url);
	SET(CURLOPT_NOSIGNAL, 1L);
	SET(CURLOPT_BUFFERSIZE, CURLU_BUFFER_BYTES);
	SET(CURLOPT_CONNECTTIMEOUT_MS, c->o.connect_timeout_ms);
	SET(CURLOPT_LOW_SPEED_LIMIT, 1024L);
	SET(CURLOPT_LOW_SPEED_TIME, c->o.low_speed_time_s);
	SET(CURLOPT_PROTOCOLS_STR, c->o.https_only ? "https" : "http,https");
	SET(CURLOPT_TCP_KEEPALIVE, 1L);
	SET(CURLOPT_HEADERFUNCTION, curlx_on_header);
	SET(CURLOPT_HEADERDATA, x);
	SET(CURLOPT_WRITEFUNCTION, curlx_on_write);
	SET(CURLOPT_WRITEDATA, x);
	SET(CURLOPT_ERRORBUFFER, x->curlerr);
	SET(CURLOPT_PRIVATE, x);
	x->easy = h;
	x->redirect_ok = c->redirect_ok;
	x->redirect_ctx = c->redirect_ctx;
	x->cancel = atomic_load(&c->cancel);
	if (x->cancel != NULL) {
		SET(CURLOPT_XFERINFOFUNCTION, curlx_on_progress);
		SET(CURLOPT_XFERINFODATA, x);
		SET(CURLOPT_NOPROGRESS, 0L);
	}
	if (c->o.follow_redirects) {
		SET(CURLOPT_FOLLOWLOCATION, 1L);
		SET(CURLOPT_MAXREDIRS, 5L);
		SET(CURLOPT_REDIR_PROTOCOLS_STR, c->o.https_only ? "https" : "http,https");
	}
	if (c->o.ca_bundle != NULL)
		SET(CURLOPT_CAINFO, c->o.ca_bundle);
	if (c->o.netrc)
		SET(CURLOPT_NETRC, (long)CURL_NETRC_OPTIONAL);
	if (c->hdrs != NULL)
		SET(CURLOPT_HTTPHEADER, c->hdrs);
	if (c->o.userpwd != NULL)
		SET(CURLOPT_USERPWD, c->o.userpwd);
	if (c->o.sigv4 != NULL)
		SET(CURLOPT_AWS_SIGV4, c->o.sigv4);
	if (x->kind == X_HEAD)
		SET(CURLOPT_NOBODY, 1L);
	if (x->kind == X_RANGE) {
		snprintf(range, sizeof(range), "%" PRIu64 "-%" PRIu64, x->off,
		         x->off + (uint64_t)x->len - 1);
		SET(CURLOPT_RANGE, range); /* copied by curl */
	}
#undef SET
	return e == CURLE_OK ? WT_OK : WT_EIO;
}

/* Run xs[0..n) at once on lane l; each ends with x->cc set. */
static int lane_run(curlu *c, lane *l, xfer **xs, size_t n, wt_errbuf *err)
{
	size_t added = 0;
	int rv = WT_OK;
	for (size_t i = 0; i < n; i++) {
		curlx_reset(xs[i]);
		if (l->h[i] == NULL && (l->h[i] = wt_curl.easy_init()) == NULL) {
			rv =
			    wt_seterr(err, WT_ENOMEM, "curl_easy_init failed for '%s'", xs[i]->url);
			break;
		}
		if (setup_handle(c, l->h[i], xs[i]) != WT_OK) {
			rv = wt_seterr(err, WT_EIO, "setting curl options for '%s' failed",
			               xs[i]->url);
			break;
		}
		if (wt_curl.multi_add_handle(l->m, l->h[i]) != CURLM_OK) {
			rv = wt_seterr(err, WT_EIO, "curl_multi_add_handle failed for '%s'",
			               xs[i]->url);
			break;
		}
		added++;
	}
	int running = rv == WT_OK ? 1 : 0;
	while (running > 0) {
		CURLMcode mc = wt_curl.multi_perform(l->m, &running);
		if (mc == CURLM_OK && running > 0)
			mc = wt_curl.multi_poll(l->m, NULL, 0, 1000, NULL);
		if (mc != CURLM_OK) {
			rv = wt_seterr(err, WT_EIO, "curl multi loop failed: %s",
			               wt_curl.multi_strerror(mc));
			break;
		}
	}
	CURLMsg *msg;
	int left;
	while ((msg = wt_curl.multi_info_read(l->m, &left)) != NULL) {
		if (msg->msg != CURLMSG_DONE)
			continue;
		xfer *x = NULL;
		wt_curl.easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&x);
		if (x != NULL)
			x->cc = msg->data.result;
	}
	for (size_t i = 0; i < added; i++)
		wt_curl.multi_remove_handle(l->m, l->h[i]);
	return rv;
}

static bool retryable(const xfer *x)
{
	switch (x->cc) {
	case CURLE_OK:
		return x->status == 429 || x->status == 500 || x->status == 502 ||
		       x->status == 503 || x->status == 504;
	case CURLE_COULDNT_RESOLVE_HOST:
	case CURLE_COULDNT_CONNECT:
	case CURLE_OPERATION_TIMEDOUT:
	case CURLE_SEND_ERROR:
	case CURLE_RECV_ERROR:
	case CURLE_GOT_NOTHING:
	case CURLE_PARTIAL_FILE:
	case CURLE_SSL_CONNECT_ERROR:
	case CURLE_HTTP2:
	case CURLE_HTTP2_STREAM:
		return true;
	case CURLE_WRITE_ERROR: /* we stopped it; an error body that grew too long */
		return x->stop == STOP_NONE && x->status >= 500;
	default:
		return false;
	}
}

static const char *method_of(const xfer *x)
{
	return x->kind == X_HEAD ? "HEAD" : "GET";
}

void curlu_error_code(const xfer *x, char *out, size_t cap)
{
	out[0] = '\0';
	const char *a = strstr(x->ebody, "<Code>");
	const char *b = a ? strstr(a, "</Code>") : NULL;
	if (a == NULL || b == NULL)
		return;
	a += 6;
	int k = (int)(b - a);
	for (int i = 0; i < k; i++)
		if (a[i] < 0x20 || a[i] > 0x7e)
			return;
	snprintf(out, cap, " (%.*s)", k, a);
}

int curlu_check_status(const curlu_opts *o, const xfer *x, int attempts, wt_errbuf *err)
{
	if (x->stop == STOP_ENOMEM)
		return wt_seterr(err, WT_ENOMEM, "key '%s': out of memory reading %s", x->key,
		                 x->url);
	if (x->stop == STOP_IGNORED_RANGE)
		return wt_seterr(err, WT_EIO,
		                 "key '%s': GET %s with Range: bytes=%" PRIu64 "-%" PRIu64
		                 " returned HTTP %ld instead of 206 Partial Content: the server "
		                 "ignores range requests; serve the model from one that supports "
		                 "them (nginx, S3, ...)",
		                 x->key, x->url, x->off, x->off + (uint64_t)x->len - 1, x->status);
	if (x->stop == STOP_TOO_LONG)
		return wt_seterr(err, WT_EIO,
		                 "key '%s': GET %s returned more than the %zu bytes asked at "
		                 "offset %" PRIu64 "; the server's range reply is wrong",
		                 x->key, x->url, x->len, x->off);
	if (x->stop == STOP_TOO_BIG)
		return wt_seterr(err, WT_ETOOBIG, "%s: GET %s: reply over the limit of %zu bytes",
		                 x->key, x->url, x->len);
	if (x->stop == STOP_ENCODED ||
	    (x->cc == CURLE_OK && x->status >= 200 && x->status <= 299 && curlx_encoded(x)))
		return wt_seterr(err, WT_EIO,
		                 "key '%s': %s %s: the reply is encoded (Content-Encoding: %s), so "
		                 "its bytes and sizes are not the object's; turn compression off "
		                 "for these files on the server or proxy (weightd never asks for "
		                 "an encoding)",
		                 x->key, method_of(x), x->url, x->cenc);
	if (x->stop == STOP_REDIRECT)
		return wt_seterr(err, x->refused.code, "key '%.200s': %s %.300s: %s", x->key,
		                 method_of(x), x->url, x->refused.msg);
	if (x->cc == CURLE_ABORTED_BY_CALLBACK) /* curlu_set_cancel */
		return wt_seterr(err, WT_ECANCELED, "key '%s': %s %s canceled", x->key,
		                 method_of(x), x->url);
	if (x->cc != CURLE_OK && !(x->cc == CURLE_WRITE_ERROR && x->status >= 300)) {
		int code = WT_EIO;
		if (x->cc == CURLE_COULDNT_CONNECT || x->cc == CURLE_COULDNT_RESOLVE_HOST)
			code = WT_EUNAVAIL;
		else if (x->cc == CURLE_OPERATION_TIMEDOUT)
			code = WT_ETIMEDOUT;
		bool tls =
		    x->cc == CURLE_PEER_FAILED_VERIFICATION || x->cc == CURLE_SSL_CACERT_BADFILE;
		bool down = x->cc == CURLE_UNSUPPORTED_PROTOCOL && o->https_only;
		return wt_seterr(
		    err, code, "key '%s': %s %s failed after %d attempt%s: %s%s%s%s", x->key,
		    method_of(x), x->url, attempts, attempts == 1 ? "" : "s",
		    wt_curl.easy_strerror(x->cc), x->curlerr[0] ? ": " : "", x->curlerr,
		    tls    ? "; for a private CA set WEIGHTD_HTTP_CA_BUNDLE=FILE.pem"
		    : down ? "; an https:// store follows redirects to https only (the "
		             "bytes would travel without TLS): fix the server's "
		             "redirect or register the http:// URL it names"
		           : "");
	}
	if (x->status >= 200 && x->status <= 299)
		return WT_OK;
	if (x->kind == X_RANGE && x->status == 416)
		return WT_OK; /* offset at or past the end: got = 0 */
	char code[96];
	curlu_error_code(x, code, sizeof(code));
	if (x->status == 401 || x->status == 403)
		return wt_seterr(err, WT_EPERM, "key '%s': %s %s: HTTP %ld%s access denied; %s",
		                 x->key, method_of(x), x->url, x->status, code,
		                 o->perm_hint ? o->perm_hint : "check the server's permissions");
	if (x->status == 404)
		return wt_seterr(err, WT_ENOTFOUND, "key '%s': %s %s: HTTP 404%s not found", x->key,
		                 method_of(x), x->url, code);
	return wt_seterr(err, WT_EIO, "key '%s': %s %s: HTTP %ld%s after %d attempt%s", x->key,
	                 method_of(x), x->url, x->status, code, attempts, attempts == 1 ? "" : "s");
}

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/*
 * Run the transfers, retrying the retryable ones with exponential backoff.
 * Returns the first error (in xs order) once retries are spent.
 */
static int run(curlu *c, xfer **xs, size_t n, wt_errbuf *err)
{
	lane *l = lane_get(c);
	if (l == NULL)
		return wt_seterr(err, WT_ENOMEM, "out of memory for a curl handle");
	xfer *todo[CURLU_MAX_PARALLEL];
	size_t nt = n;
	memcpy(todo, xs, n * sizeof(*xs));
	int rv = WT_OK;
	long delay = c->o.backoff_ms;
	for (int attempt = 1;; attempt++) {
		if ((rv = lane_run(c, l, todo, nt, err)) != WT_OK)
			break;
		size_t again = 0;
		for (size_t i = 0; i < nt; i++)
			if (retryable(todo[i]))
				todo[again++] = todo[i];
		if (again == 0 || attempt > c->o.max_retries) {
			for (size_t i = 0; i < n && rv == WT_OK; i++)
				rv = curlu_check_status(&c->o, xs[i], attempt, err);
			break;
		}
		if (todo[0]->cc == CURLE_OK)
			WT_LOG(WT_LOG_WARNING, "%s %s: HTTP %ld; retry %d of %d in %ld ms",
			       method_of(todo[0]), todo[0]->url, todo[0]->status, attempt,
			       c->o.max_retries, delay);
		else
			WT_LOG(WT_LOG_WARNING, "%s %s: %s; retry %d of %d in %ld ms",
			       method_of(todo[0]), todo[0]->url, wt_curl.easy_strerror(todo[0]->cc),
			       attempt, c->o.max_retries, delay);
		sleep_ms(delay);
		delay = delay * 2 > CURLU_BACKOFF_CAP ? CURLU_BACKOFF_CAP : delay * 2;
		nt = again;
	}
	lane_put(c, l);
	return rv;
}

/* ---------------- the three requests ---------------- */

int curlu_stat(curlu *c, const char *url, const char *key, store_obj *out, wt_errbuf *err)
{
	for (int attempt = 0;; attempt++) {
		xfer x = {.kind = X_HEAD, .url = url, .key = key};
		xfer *xs[1] = {&x};
		int rv = run(c, xs, 1, err);
		if (rv != WT_OK)
			return rv;
		rv = curlu_stat_reply(&x, url, key, c->o.etag_is_content, out, err);
		/* WT_ECHANGED: answered in the second of the last write (only
		 * curlu_stat_reply's check says it). An upload that has just ended
		 * is settled a second later: wait once rather than fail the open. */
		const _Atomic bool *cancel = atomic_load(&c->cancel);
		if (rv != WT_ECHANGED || attempt > 0 || c->o.settle_ms == 0 ||
		    (cancel != NULL && atomic_load(cancel)))
			return rv;
		WT_LOG(WT_LOG_INFO,
		       "HEAD %s: answered in the second of its last write; asked "
		       "again in %ld ms",
		       url, c->o.settle_ms);
		sleep_ms(c->o.settle_ms);
	}
}

int curlu_stat_reply(const xfer *x, const char *url, const char *key, bool etag_is_content,
                     store_obj *out, wt_errbuf *err)
{
	if (x->clen < 0)
		return wt_seterr(err, WT_EIO,
		                 "key '%s': HEAD %s: HTTP %ld without a Content-Length; the "
		                 "server must report object sizes",
		                 key, url, x->status);
	const char *ver = x->etag[0] ? x->etag : x->lastmod;
	if (ver[0] == '\0')
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "key '%s': HEAD %s: HTTP %ld with neither an ETag nor a "
		                 "Last-Modified header: weightd cannot tell one version of the "
		                 "object from the next, so a change during a read would go unseen; "
		                 "serve the model from S3 or a server whose ETags derive from the "
		                 "content",
		                 key, url, x->status);
	/* Last-Modified counts whole seconds, and so may an ETag (nginx's is the
	 * mtime's second and the size): pinned in the second of the last write,
	 * a same-size write later in that second would keep the version. Only
	 * S3's ETags (MD5s of the bytes) are known not to. */
	if (x->etag[0] == '\0' || !etag_is_content) {
		time_t lm = x->lastmod[0] ? wt_curl.getdate(x->lastmod, NULL) : -1;
		time_t now = x->date[0] ? wt_curl.getdate(x->date, NULL) : -1;
		if (x->etag[0] == '\0' && (lm == -1 || now == -1))
			return wt_seterr(err, WT_EUNSUPPORTED,
			                 "key '%s': HEAD %s: its version is Last-Modified '%s' (no "
			                 "ETag), and without a readable Date '%s' nobody can tell "
			                 "whether a write in the same second would keep it; serve "
			                 "the model from S3 or a server whose ETags derive from "
			                 "the content",
			                 key, url, x->lastmod, x->date[0] ? x->date : "(none)");
		/* an ETag without a readable Last-Modified and Date is taken as it is */
		if (lm != -1 && now != -1 && now <= lm)
			return wt_seterr(
			    err, WT_ECHANGED,
			    "key '%s': HEAD %s: its version is %s '%s', and its Last-Modified '%s' "
			    "is not before the reply's Date '%s': another write in that second "
			    "could keep that version, so the object is not read yet (it is "
			    "opened once that second has passed)",
			    key, url, x->etag[0] ? "ETag" : "Last-Modified",
			    x->etag[0] ? x->etag : x->lastmod, x->lastmod,
			    x->date[0] ? x->date : "(none)");
	}
	out->nbytes = (uint64_t)x->clen;
	out->key = strdup(key);
	out->version = strdup(ver);
	if (out->key == NULL || out->version == NULL)
		return wt_seterr(err, WT_ENOMEM, "key '%s': out of memory", key);
	return WT_OK;
}

int curlu_check_range(const xfer *x, wt_errbuf *err)
{
	if (x->status == 416)
		return WT_OK;
	uint64_t last = x->off + (uint64_t)x->len - 1;
	if (x->status != 206)
		return wt_seterr(err, WT_EIO,
		                 "key '%s': GET %s with Range: bytes=%" PRIu64 "-%" PRIu64
		                 " returned HTTP %ld instead of 206 Partial Content; the server "
		                 "must support range requests",
		                 x->key, x->url, x->off, last, x->status);
	if (!x->have_cr)
		return wt_seterr(err, WT_EIO,
		                 "key '%s': GET %s: 206 reply without a valid Content-Range for "
		                 "bytes=%" PRIu64 "-%" PRIu64,
		                 x->key, x->url, x->off, last);
	if (x->cr_first != x->off || x->cr_last < x->cr_first || x->cr_last > last)
		return wt_seterr(err, WT_EIO,
		                 "key '%s': GET %s: asked bytes %" PRIu64 "-%" PRIu64
		                 ", server sent Content-Range bytes %" PRIu64 "-%" PRIu64,
		                 x->key, x->url, x->off, last, x->cr_first, x->cr_last);
	uint64_t n = x->cr_last - x->cr_first + 1;
	if ((uint64_t)x->got != n)
		return wt_seterr(err, WT_EIO,
		                 "key '%s': GET %s: short body: %zu bytes for Content-Range "
		                 "bytes %" PRIu64 "-%" PRIu64 " (%" PRIu64 " bytes)",
		                 x->key, x->url, x->got, x->cr_first, x->cr_last, n);
	if (n < x->len && !(x->cr_total_known && x->cr_last + 1 == x->cr_total))
		return wt_seterr(err, WT_EIO,
		                 "key '%s': GET %s: server sent bytes %" PRIu64 "-%" PRIu64
		                 " of %" PRIu64 "-%" PRIu64 " before the end of the object",
		                 x->key, x->url, x->cr_first, x->cr_last, x->off, last);
	return WT_OK;
}

int curlu_check_version(const xfer *x, const char *version, wt_errbuf *err)
{
	if (version == NULL || version[0] == '\0' || x->status == 416)
		return WT_OK;
	const char *got = x->etag[0] ? x->etag : x->lastmod;
	if (strcmp(got, version) == 0)
		return WT_OK;
	return wt_seterr(err, WT_ECHANGED,
	                 "key '%s': GET %s answered from version '%s', not '%s' read at open: "
	                 "the object changed while it was read; it is read again at its new "
	                 "version",
	                 x->key, x->url, got[0] ? got : "(none)", version);
}

int curlu_read(curlu *c, const char *url, const char *key, const char *version, uint64_t off,
               void *buf, size_t len, size_t *got, wt_errbuf *err)
{
	*got = 0;
	if (len == 0)
		return WT_OK;
	size_t parts = 1;
	if ((uint64_t)len >= c->o.split_bytes && c->o.parallel > 1) {
		parts = (size_t)c->o.parallel;
		while (parts > 1 && len / parts < CURLU_MIN_PART)
			parts--;
	}
	xfer xv[CURLU_MAX_PARALLEL];
	xfer *xs[CURLU_MAX_PARALLEL];
	size_t step = len / parts, done = 0;
	for (size_t i = 0; i < parts; i++) {
		size_t plen = i + 1 == parts ? len - done : step;
		xv[i] = (xfer){.kind = X_RANGE,
		               .url = url,
		               .key = key,
		               .off = off + done,
		               .len = plen,
		               .buf = (char *)buf + done};
		xs[i] = &xv[i];
		done += plen;
	}
	int rv = run(c, xs, parts, err);
	for (size_t i = 0; rv == WT_OK && i < parts; i++)
		rv = curlu_check_range(&xv[i], err);
	for (size_t i = 0; rv == WT_OK && i < parts; i++)
		rv = curlu_check_version(&xv[i], version, err);
	if (rv != WT_OK)
		return rv;
	/* only the object's end may cut a read short, and nothing follows it */
	size_t total = 0;
	bool ended = false;
	for (size_t i = 0; i < parts; i++) {
		if (ended && xv[i].got != 0)
			return wt_seterr(err, WT_EIO,
			                 "key '%s': GET %s: the object ended before offset %" PRIu64
			                 " but a later range returned data (object changed while "
			                 "reading?)",
			                 key, url, xv[i].off);
		total += xv[i].got;
		if (xv[i].got < xv[i].len)
			ended = true;
	}
	*got = total;
	return WT_OK;
}

int curlu_get(curlu *c, const char *url, const char *what, size_t max_bytes, char **out,
              size_t *len, wt_errbuf *err)
{
	*out = NULL;
	*len = 0;
	xfer x = {.kind = X_BODY, .url = url, .key = what, .len = max_bytes};
	xfer *xs[1] = {&x};
	int rv = run(c, xs, 1, err);
	if (rv == WT_OK && x.status != 200)
		rv = wt_seterr(err, WT_EIO, "%s: GET %s: HTTP %ld, want 200", what, url, x.status);
	if (rv == WT_OK && x.buf == NULL && (x.buf = calloc(1, 1)) == NULL)
		rv = wt_seterr(err, WT_ENOMEM, "%s: out of memory", what);
	if (rv != WT_OK) {
		free(x.buf);
		return rv;
	}
	*out = x.buf;
	*len = x.got;
	return WT_OK;
}
