/*
 * fuzz_request.c — a raw request message (the nng message body: u32 length,
 * protobuf Request, tail) sent to a real in-process weightd (the
 * tests/test_weightd_util.h daemon serving a tiny Llama checkpoint), which
 * must answer every message with a well-formed reply: an Error for what it
 * refuses, never a crash, a hang or a reply it cannot frame.
 *
 * The input is also parsed here first (wire_parse_request, the daemon's own
 * decoder); a decoded request's reply must echo its id.
 *
 * A Watch request parks until its model's revision changes or its timeout_ms
 * (capped at 60 s) passes, so its wait is bounded here: a Watch asking more
 * than FUZZ_WATCH_MS, or naming the known_revision FUZZ_CURRENT (replaced
 * by the model's current revision, which the fuzzer cannot guess, so the
 * park is reached), is framed again (wire_frame) with timeout_ms at most
 * FUZZ_WATCH_MS; every other Watch goes as its bytes are. Each Watch must
 * get an Error or a WatchReply whose revision is non-empty and whose
 * `changed` says whether it differs from known_revision, within the same
 * receive timeout as every other request.
 *
 * Under libFuzzer run it with FUZZ_FLAGS=-detect_leaks=0: a Manifest request
 * starts a production whose other ranks are still being committed on the
 * daemon's writer thread when the reply has come, and LeakSanitizer's check
 * between inputs reported those buffers (cache_record_build, wd_record_pack)
 * once in 187 000 runs; the corpus replay (make test, ASan) checks leaks at
 * exit, after the daemon has stopped, and finds none for that input.
 */
#include "tests/fuzz/fuzz.h"
#include "tests/test_weightd_util.h"

#define FUZZ_WATCH_MS 200u       /* longest park a fuzzed Watch may ask for */
#define FUZZ_CURRENT  "@current" /* known_revision: the model's current revision */

static tw_env *env;
static nng_socket sock;
static char current[80]; /* revision of models/llama */

static void cleanup(void)
{
	nng_close(sock);
	tw_env_free(env);
}

static void setup(void)
{
	env = tw_env_new("fuzz-req", 1);
	if (tw_start(env) != WT_OK)
		abort();
	sock = tw_dial(env->url);
	/* every reply is immediate or a tiny plan: a silent daemon is a hang */
	nng_socket_set_ms(sock, NNG_OPT_RECVTIMEO, 8000);
	atexit(cleanup);
	Weights__Request rq = WEIGHTS__REQUEST__INIT;
	Weights__WatchRequest w = WEIGHTS__WATCH_REQUEST__INIT;
	rq.id = 1;
	rq.body_case = WEIGHTS__REQUEST__BODY_WATCH;
	rq.watch = &w;
	w.model = "llama";
	tw_reply x = tw_call(sock, &rq);
	if (x.rv != WT_OK || x.r->body_case != WEIGHTS__REPLY__BODY_WATCH)
		abort();
	snprintf(current, sizeof(current), "%s", x.r->watch->revision);
	tw_reply_free(&x);
}

/* A Watch: its wait bounded (see the top). Returns the framed request to send
 * (malloc'd, *n bytes) or NULL to send the input as it is; *known: the
 * known_revision sent (points into rq or current). */
static uint8_t *bound_watch(Weights__Request *rq, size_t *n, const char **known)
{
	Weights__WatchRequest *w = rq->watch;
	*known = w->known_revision ? w->known_revision : "";
	bool cur = strcmp(*known, FUZZ_CURRENT) == 0;
	if (!cur && w->timeout_ms <= FUZZ_WATCH_MS)
		return NULL;
	char *unpacked = w->known_revision; /* freed with rq */
	if (cur)
		*known = w->known_revision = current;
	if (w->timeout_ms > FUZZ_WATCH_MS)
		w->timeout_ms = FUZZ_WATCH_MS;
	*n = wire_framed_size(&rq->base);
	uint8_t *buf = malloc(*n);
	if (buf == NULL || wire_frame(&rq->base, buf, *n) != *n)
		abort();
	w->known_revision = unpacked;
	return buf;
}

static void check_watch(const Weights__Reply *r, const char *known)
{
	if (r->body_case == WEIGHTS__REPLY__BODY_ERROR)
		return;
	FUZZ_CHECK(r->body_case == WEIGHTS__REPLY__BODY_WATCH);
	const char *rev = r->watch->revision ? r->watch->revision : "";
	FUZZ_CHECK(rev[0] != '\0');
	FUZZ_CHECK(r->watch->changed == (strcmp(rev, known) != 0));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (env == NULL)
		setup();
	Weights__Request *rq = NULL;
	wt_errbuf err;
	int rv = wire_parse_request(data, size, env->cfg.max_request_bytes, &rq, &err);
	fuzz_note("wire_parse_request", rv, &err);
	uint64_t id = 0;
	uint8_t *framed = NULL;
	size_t framed_len = 0;
	char known[300] = "";
	bool watch = false;
	if (rv == WT_OK) {
		id = rq->id;
		watch = rq->body_case == WEIGHTS__REQUEST__BODY_WATCH;
		if (watch) {
			const char *k;
			framed = bound_watch(rq, &framed_len, &k);
			snprintf(known, sizeof(known), "%s", k);
		}
		wire_request_free(rq);
	}
	tw_reply x = framed ? tw_raw(sock, framed, framed_len) : tw_raw(sock, data, size);
	free(framed);
	if (x.rv != WT_OK)
		fprintf(stderr, "fuzz_request: no well-formed reply: %s\n", wt_strerror(x.rv));
	FUZZ_CHECK(x.rv == WT_OK);
	if (x.r->body_case == WEIGHTS__REPLY__BODY_ERROR) {
		wt_errbuf e = {0};
		snprintf(e.msg, sizeof(e.msg), "%s",
		         x.r->error->message ? x.r->error->message : "");
		fuzz_note("daemon", (int)x.r->error->code, &e);
	} else {
		fuzz_note("daemon", WT_OK, NULL);
	}
	if (rv == WT_OK)
		FUZZ_CHECK(x.r->id == id);
	else
		FUZZ_CHECK(x.r->body_case == WEIGHTS__REPLY__BODY_ERROR && x.r->id == 0);
	if (watch)
		check_watch(x.r, known);
	tw_reply_free(&x);
	return 0;
}
