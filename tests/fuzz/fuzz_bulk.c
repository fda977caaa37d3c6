/*
 * fuzz_bulk.c — hostile bytes on weightd's bulk stream (weightd/bulk.c, the
 * headers in proto/bulk.h): a real in-process weightd (the
 * tests/test_weightd_util.h daemon serving a tiny Llama, stream_listen on)
 * gets each input on a fresh stream, and must answer every whole request it
 * accepts, in order, with a well-formed reply of the right outcome, close the
 * stream at the first header it refuses (or at a wrong opening message)
 * without answering it (the requests before it may go unanswered too), and
 * let go of every stream the peer closed.
 *
 * Input: byte 0 = flags: bit 0 the opening message is the next 24 input
 * bytes as they are (else "WTBULK01" + the Hello's ticket, which a fuzzer
 * cannot guess). The rest is what follows the opening on the stream:
 * requests, each a 48-byte header and its shard id. Two substitutions let
 * the fuzzer reach chunks it cannot name: a shard id "@" is the manifest's
 * (shard_id_len rewritten), and in a request without flags a hash whose
 * byte 0 is 0xfe names chunk hash[1] % n of the manifest (its hash
 * written in). At most FUZZ_MAX_REQS requests are sent.
 *
 * Expected outcome of a request the decoder (bulk_req_decode) accepts, with
 * the shard's chunks known here (fetched over messages at start):
 * - not live, the manifest's shard id and one of its chunk hashes: the range
 *   [offset, offset + (nbytes or the rest)) within the chunk is WT_OK with
 *   exactly those bytes, the chunk hash and the offset echoed; past the
 *   chunk it is WT_EINVAL;
 * - not live, another shard id or a hash not in the shard: WT_ENOTFOUND;
 * - live: an error, or (the production of the manifest, finished, is still
 *   known) the whole chunk of that index with the manifest's hash;
 * - any error reply: nbytes 0 and at most BULK_MAX_MSG bytes of text.
 */
#include <nng/nng.h>
#include <string.h>
#include <unistd.h>

#include "client/client.h"
#include "proto/bulk.h"
#include "tests/fuzz/fuzz.h"
#include "tests/test_weightd_util.h"

#define FUZZ_MAX_REQS   64u
#define FUZZ_REPLY_MS   8000u /* a reply, or the close, must come within this */
#define FUZZ_MAX_CHUNKS 256u
#define FUZZ_LIVE       (-1)
#define FUZZ_ANY_ERR    (-2)

static tw_env *env;
static nng_socket sock;
static tw_reply hello;
static uint8_t sid[BULK_MAX_SHARD_ID];
static size_t sid_len;
static struct {
	uint8_t hash[16];
	uint8_t *bytes;
	uint64_t n;
} chunk[FUZZ_MAX_CHUNKS];
static size_t n_chunks;

static void cleanup(void)
{
	for (size_t i = 0; i < n_chunks; i++)
		free(chunk[i].bytes);
	tw_reply_free(&hello);
	nng_close(sock);
	tw_env_free(env);
}

/* The daemon, its Hello (the stream offer) and the chunks of llama TP=2 rank 0. */
static void setup(void)
{
	env = tw_env_new("fuzz-bulk", 7);
	wt_errbuf err;
	if (wd_config_set(&env->cfg, "stream_listen", "tcp://127.0.0.1:0", "fuzz", &err) != WT_OK ||
	    tw_start(env) != WT_OK)
		abort();
	sock = tw_dial(env->url);
	atexit(cleanup);
	hello = tw_hello(sock, WEIGHTS__PROTOCOL_VERSION__PROTOCOL_VERSION, NULL);
	FUZZ_CHECK(hello.rv == WT_OK && hello.r->body_case == WEIGHTS__REPLY__BODY_HELLO);
	FUZZ_CHECK(hello.r->hello->stream_ticket.len == BULK_TICKET_BYTES);
	tw_reply m = tw_manifest(sock, "llama", 2, 0);
	FUZZ_CHECK(m.rv == WT_OK && m.r->body_case == WEIGHTS__REPLY__BODY_MANIFEST);
	const Weights__Manifest *mf = m.r->manifest;
	FUZZ_CHECK(mf->shard_id.len > 0 && mf->shard_id.len <= sizeof(sid));
	memcpy(sid, mf->shard_id.data, mf->shard_id.len);
	sid_len = mf->shard_id.len;
	for (size_t t = 0; t < mf->n_tensors; t++)
		for (size_t c = 0; c < mf->tensors[t]->n_chunks; c++) {
			const Weights__ChunkRef *ck = mf->tensors[t]->chunks[c];
			FUZZ_CHECK(n_chunks < FUZZ_MAX_CHUNKS);
			tw_reply x = tw_chunk(sock, mf->shard_id, ck->hash, 0, 0);
			FUZZ_CHECK(x.rv == WT_OK && x.r->body_case == WEIGHTS__REPLY__BODY_CHUNK);
			FUZZ_CHECK(ck->hash.len == 16 && x.tail_len == ck->nbytes);
			memcpy(chunk[n_chunks].hash, ck->hash.data, 16);
			chunk[n_chunks].n = ck->nbytes;
			chunk[n_chunks].bytes = x.tail;
			x.tail = NULL;
			n_chunks++;
			tw_reply_free(&x);
		}
	FUZZ_CHECK(n_chunks > 1);
	tw_reply_free(&m);
}

static nng_stream *st_dial_or_null(const char *url)
{
	nng_stream_dialer *d;
	nng_aio *aio;
	nng_stream *st = NULL;
	if (nng_stream_dialer_alloc(&d, url) != 0)
		return NULL;
	if (nng_aio_alloc(&aio, NULL, NULL) == 0) {
		nng_stream_dialer_dial(d, aio);
		nng_aio_wait(aio);
		if (nng_aio_result(aio) == 0)
			st = nng_aio_get_output(aio, 0);
		nng_aio_free(aio);
	}
	nng_stream_dialer_free(d);
	return st;
}

static int io(nng_stream *st, int send, void *buf, size_t n)
{
	return client_stream_io(st, send, buf, n,
	                        common_now_ns() + (uint64_t)FUZZ_REPLY_MS * 1000000ull, NULL, NULL);
}

/* What a request must get: code, and for WT_OK the bytes; live: see top. */
typedef struct expect {
	uint64_t id, offset;
	int code;   /* FUZZ_LIVE: an error or chunk[ci] whole; FUZZ_ANY_ERR: an error */
	size_t ci;  /* the chunk (WT_OK, live) */
	uint64_t n; /* WT_OK: bytes from offset */
	uint8_t hash[16];
} expect;

static expect judge(const bulk_req *q, const uint8_t *id, size_t id_len)
{
	expect e = {.id = q->id, .offset = q->offset, .code = WT_ENOTFOUND};
	memcpy(e.hash, q->hash, 16);
	bool ours = id_len == sid_len && memcmp(id, sid, sid_len) == 0;
	if (q->flags & BULK_F_LIVE) {
		uint64_t ix = bulk_req_live_index(q);
		e.code = ours && ix < n_chunks ? FUZZ_LIVE : FUZZ_ANY_ERR;
		e.ci = ours && ix < n_chunks ? (size_t)ix : 0;
		return e;
	}
	if (!ours)
		return e;
	for (size_t i = 0; i < n_chunks; i++)
		if (memcmp(chunk[i].hash, q->hash, 16) == 0) {
			uint64_t n = q->nbytes, end;
			if (n == 0 && q->offset <= chunk[i].n)
				n = chunk[i].n - q->offset;
			bool in = q->offset <= chunk[i].n &&
			          !__builtin_add_overflow(q->offset, n, &end) && end <= chunk[i].n;
			e.code = in ? WT_OK : WT_EINVAL;
			e.ci = i;
			e.n = n;
			return e;
		}
	return e;
}

/* Read one reply and check it against e. When the stream is being closed
 * (a later header refused), it may end instead: false. */
static bool check_reply(nng_stream *st, const expect *e, bool closing)
{
	uint8_t h[BULK_REPLY_BYTES];
	bulk_reply r;
	wt_errbuf err;
	int rv = io(st, 0, h, sizeof(h));
	if (rv != 0 && closing && rv != NNG_ETIMEDOUT)
		return false;
	if (rv != 0)
		fprintf(stderr, "fuzz_bulk: no reply to request %llu: %s\n",
		        (unsigned long long)e->id, nng_strerror(rv));
	FUZZ_CHECK(rv == 0);
	FUZZ_CHECK(bulk_reply_decode(h, 1u << 30, &r, &err) == WT_OK);
	FUZZ_CHECK(r.id == e->id);
	if (r.code != WT_OK) {
		uint8_t msg[BULK_MAX_MSG + 1];
		FUZZ_CHECK(r.nbytes == 0 && r.msg_len <= BULK_MAX_MSG);
		FUZZ_CHECK(io(st, 0, msg, r.msg_len) == 0);
		msg[r.msg_len] = 0;
		FUZZ_CHECK(common_utf8_valid(msg, r.msg_len, false)); /* proto/bulk.h */
		wt_errbuf m = {0};
		snprintf(m.msg, sizeof(m.msg), "%.*s", (int)sizeof(m.msg) - 1, (char *)msg);
		fuzz_note("daemon", (int)r.code, &m);
		FUZZ_CHECK(e->code < 0 || (int)r.code == e->code);
		return true;
	}
	fuzz_note("daemon", WT_OK, NULL);
	FUZZ_CHECK(e->code == WT_OK || e->code == FUZZ_LIVE);
	uint64_t off = e->code == WT_OK ? e->offset : 0;
	uint64_t n = e->code == WT_OK ? e->n : chunk[e->ci].n;
	FUZZ_CHECK(r.msg_len == 0 && r.nbytes == n && r.offset == off);
	FUZZ_CHECK(memcmp(r.chunk_hash, chunk[e->ci].hash, 16) == 0);
	uint8_t *b = malloc(n ? n : 1);
	FUZZ_CHECK(b != NULL && io(st, 0, b, n) == 0);
	FUZZ_CHECK(memcmp(b, chunk[e->ci].bytes + off, n) == 0);
	free(b);
	return true;
}

/* After a refused opening or header: the server closes the stream, unanswered. */
static void check_closed(nng_stream *st)
{
	uint8_t b;
	int rv = io(st, 0, &b, 1);
	if (rv == 0 || rv == NNG_ETIMEDOUT)
		fprintf(stderr, "fuzz_bulk: stream not closed: %s\n",
		        rv ? nng_strerror(rv) : "a byte");
	FUZZ_CHECK(rv != 0 && rv != NNG_ETIMEDOUT);
}

/* The server lets go of every stream its peer closed (no stream leaks). It
 * accepts a stream on its own time, maybe after the peer closed it: wait
 * until it has taken the stream dialed when it had taken `before` streams. */
static void wait_released(uint64_t before)
{
	uint64_t until = common_now_ns() + 5000000000ull;
	while ((atomic_load(&env->srv->bulk_streams) == before || wd_bulk_held(env->srv) > 0) &&
	       common_now_ns() < until)
		usleep(1000);
	FUZZ_CHECK(atomic_load(&env->srv->bulk_streams) > before);
	FUZZ_CHECK(wd_bulk_held(env->srv) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (env == NULL)
		setup();
	if (size < 1)
		return 0;
	uint8_t flags = data[0];
	data++, size--;
	uint64_t before = atomic_load(&env->srv->bulk_streams);
	nng_stream *st = st_dial_or_null(hello.r->hello->stream_url);
	FUZZ_CHECK(st != NULL);
	uint8_t open[BULK_OPEN_BYTES];
	bool opened = true;
	if (flags & 1) {
		if (size < BULK_OPEN_BYTES) {
			nng_stream_free(st);
			wait_released(before);
			return 0;
		}
		memcpy(open, data, sizeof(open));
		data += sizeof(open), size -= sizeof(open);
		wt_errbuf err;
		opened = bulk_open_check(open, hello.r->hello->stream_ticket.data, &err) == WT_OK;
		fuzz_note("bulk_open_check", opened ? WT_OK : err.code, &err);
	} else {
		bulk_open_encode(hello.r->hello->stream_ticket.data, open);
	}
	(void)io(st, 1, open, sizeof(open)); /* may fail: a refused opening closes it */
	static expect want[FUZZ_MAX_REQS];
	size_t n_want = 0;
	bool refused = !opened;
	while (opened && size >= BULK_REQ_BYTES && n_want < FUZZ_MAX_REQS) {
		bulk_req q;
		wt_errbuf err;
		if (fuzz_note("bulk_req_decode", bulk_req_decode(data, &q, &err), &err) != WT_OK) {
			(void)io(st, 1, (void *)data, BULK_REQ_BYTES);
			refused = true;
			break;
		}
		if (size - BULK_REQ_BYTES < q.shard_id_len) {
			(void)io(st, 1, (void *)data, size); /* a request cut short: unanswered */
			break;
		}
		const uint8_t *id = data + BULK_REQ_BYTES;
		size_t id_len = q.shard_id_len;
		data += BULK_REQ_BYTES + id_len, size -= BULK_REQ_BYTES + id_len;
		if (id_len == 1 && id[0] == '@')
			id = sid, id_len = sid_len;
		if (q.flags == 0 && q.hash[0] == 0xfe)
			memcpy(q.hash, chunk[q.hash[1] % n_chunks].hash, 16);
		q.shard_id_len = (uint32_t)id_len;
		uint8_t hb[BULK_REQ_BYTES];
		bulk_req_encode(&q, hb);
		FUZZ_CHECK(io(st, 1, hb, sizeof(hb)) == 0 && io(st, 1, (void *)id, id_len) == 0);
		want[n_want++] = judge(&q, id, id_len);
	}
	/* in order; past a refused header the server may close before answering */
	bool open_still = true;
	for (size_t i = 0; i < n_want && open_still; i++)
		open_still = check_reply(st, &want[i], refused);
	if (refused && open_still)
		check_closed(st);
	nng_stream_free(st);
	wait_released(before);
	return 0;
}
