/*
 * fuzz_request.c — a raw request message (the nng message body: u32 length,
 * protobuf Request, tail) sent to a real in-process weightd (the
 * tests/test_weightd_util.h daemon serving a tiny Llama checkpoint), which
 * must answer every message with a well-formed reply: an Error for what it
 * refuses, never a crash, a hang or a reply it cannot frame.
 *
 * The input is also parsed here first (wire_parse_request, the daemon's own
 * decoder): a Watch request parks until its model changes, so it is not
 * sent (its decoding is still fuzzed); a decoded request's reply must echo
 * its id.
 */
#include "tests/fuzz/fuzz.h"
#include "tests/test_weightd_util.h"

static tw_env *env;
static nng_socket sock;

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
	if (rv == WT_OK) {
		id = rq->id;
		int watch = rq->body_case == WEIGHTS__REQUEST__BODY_WATCH;
		wire_request_free(rq);
		if (watch)
			return 0;
	}
	tw_reply x = tw_raw(sock, data, size);
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
	tw_reply_free(&x);
	return 0;
}
