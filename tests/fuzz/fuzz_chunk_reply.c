/*
 * fuzz_chunk_reply.c — what a fetch does with the replies of a server it does
 * not trust, the way client/fetch.c does it: a chunk reply checked against the
 * chunk asked for (fetch_check_reply: framing, id echo, hash, offset, length,
 * the hashes the manifest or earlier live replies gave, the bytes' XXH3-128),
 * and a manifest asked again mid-fetch checked against the one being fetched
 * (client_parse_reply, client_manifest_from_pb, fetch_refresh_adopt).
 *
 * The fetch is of a fixed manifest built here: tensors "a" (U8[12], chunks of
 * 8 and 4 bytes) and "b" (U8[5], one chunk), shard id "sid", revision "r1";
 * chunk i's byte k is chunk_byte(i, k). Its live twin (cut-through) has no
 * hashes.
 *
 * Input: byte 0 = flags: bits 0-1 the chunk asked (mod 3), bit 2 the live
 * manifest, bit 3 no verification (wt_client verify off), bit 4 (live) every
 * hash already learned, bit 5 the reply is a manifest asked again instead of
 * a chunk. The rest is the nng message body (u32 length, protobuf Reply,
 * tail) answering request id 1. Contract: an accepted chunk reply hands over
 * exactly the chunk's bytes when their hash is known and verified, and
 * learns (live) only hashes of the bytes it hands over; a refused one learns
 * nothing and says why (a reply of the right size refused for its hashes
 * does not say "another chunk or range"); an accepted manifest keeps every
 * learned hash; a refused one changes nothing.
 */
#include <nng/nng.h>
#include <string.h>

#include "client/client.h"
#include "client/client_int.h"
#include "client/fetch_int.h"
#include "common/common.h"
#include "proto/wire.h"
#include "weights/weights.h"
#include "tests/fuzz/fuzz.h"
#include "tests/util/pb_manifest.h"

#define MAX_CHUNK    (1u << 20)
#define N_CHUNKS     3
#define N_TENSORS    2
#define CHUNK_NBYTES 8 /* "a" in chunks of 8 and 4 bytes, "b" in one of 5 */

enum {
	F_LIVE = 1u << 2,
	F_NOVERIFY = 1u << 3,
	F_LEARNED = 1u << 4,
	F_MANIFEST = 1u << 5,
};

static const uint64_t chunk_nbytes[N_CHUNKS] = {8, 4, 5};
static const size_t chunk_tensor[N_CHUNKS] = {0, 0, 1};
static wt_client *cli;
static wt_manifest *base[2]; /* [0] hashes known, [1] live */
static uint8_t chash[N_CHUNKS][16], thash[N_TENSORS][16];

static uint8_t chunk_byte(size_t ci, size_t k)
{
	return (uint8_t)(ci * 31 + k * 7 + 1);
}

static void cleanup(void)
{
	wt_manifest_free(base[0]);
	wt_manifest_free(base[1]);
	wt_client_close(cli);
}

/* The manifest of the fetch, built as the server would send it; its chunks'
 * and tensors' hashes (listed or, live, not) go to chash and thash. */
static wt_manifest *make_base(int live)
{
	uint8_t data[N_TENSORS][12];
	pbm_tensor t[N_TENSORS] = {{"a", WT_U8, data[0], 0}, {"b", WT_U8, data[1], 0}};
	for (size_t ci = 0; ci < N_CHUNKS; ci++) {
		pbm_tensor *x = &t[chunk_tensor[ci]];
		for (size_t k = 0; k < chunk_nbytes[ci]; k++)
			data[chunk_tensor[ci]][x->nbytes + k] = chunk_byte(ci, k);
		x->nbytes += chunk_nbytes[ci];
	}
	pbm b;
	pbm_build(&b, t, N_TENSORS, CHUNK_NBYTES, live);
	wt_manifest *m = NULL;
	wt_errbuf err;
	if (pbm_to_manifest(&b, MAX_CHUNK, &m, &err) != WT_OK) {
		fprintf(stderr, "fuzz_chunk_reply: base manifest: %s\n", err.msg);
		abort();
	}
	FUZZ_CHECK(b.n_chunks == N_CHUNKS && m->n_chunks == N_CHUNKS);
	for (size_t ci = 0; ci < N_CHUNKS; ci++) /* the chunks are those of chunk_nbytes */
		FUZZ_CHECK(m->chunks[ci].nbytes == chunk_nbytes[ci]);
	memcpy(chash, b.ch, sizeof(chash));
	memcpy(thash, b.th, sizeof(thash));
	pbm_free(&b);
	return m;
}

static void setup(void)
{
	cli = fuzz_client_open();
	base[0] = make_base(0);
	base[1] = make_base(1);
	atexit(cleanup);
}

/* A fetch of base[live] at its start, as fetch_init leaves it (no sockets). */
typedef struct fz_fetch {
	fetch f;
	uint8_t ch[N_CHUNKS][16], ck[N_CHUNKS];
	uint8_t th[N_TENSORS][16], tk[N_TENSORS];
} fz_fetch;

static void fetch_start(fz_fetch *z, unsigned flags)
{
	memset(z, 0, sizeof(*z));
	fetch *f = &z->f;
	f->c = cli;
	f->m = base[(flags & F_LIVE) != 0];
	f->verify = !(flags & F_NOVERIFY);
	f->live = f->m->live;
	f->chash = z->ch;
	f->cknown = z->ck;
	f->thash = z->th;
	f->tknown = z->tk;
	int learned = !f->live || (flags & F_LEARNED);
	if (learned) {
		memcpy(z->ch, chash, sizeof(chash));
		memset(z->ck, 1, sizeof(z->ck));
		memcpy(z->th, thash, sizeof(thash));
		memset(z->tk, 1, sizeof(z->tk));
	}
	f->shard_id = malloc(3);
	if (f->shard_id == NULL)
		abort();
	memcpy(f->shard_id, "sid", 3);
	f->shard_id_len = 3;
}

/* Is msg a chunk reply of chunk ci's size at offset 0 with a 16-byte hash? */
static bool reply_fits(nng_msg *msg, size_t ci)
{
	Weights__Reply *r = NULL;
	const uint8_t *tail;
	size_t tail_len;
	wt_errbuf err;
	if (wire_parse_reply(nng_msg_body(msg), nng_msg_len(msg), WIRE_MAX_HEADER_BYTES, &r, &tail,
	                     &tail_len, &err) != WT_OK)
		return false;
	bool fits = r->body_case == WEIGHTS__REPLY__BODY_CHUNK && r->chunk->hash.len == 16 &&
	            r->chunk->offset == 0 && tail_len == chunk_nbytes[ci];
	wire_reply_free(r);
	return fits;
}

static void chunk_reply(fz_fetch *z, size_t ci, nng_msg *msg)
{
	fetch *f = &z->f;
	fetch_slot s = {.f = f, .chunk = ci, .id = 1};
	uint8_t ck0[N_CHUNKS], tk0[N_TENSORS];
	memcpy(ck0, z->ck, sizeof(ck0));
	memcpy(tk0, z->tk, sizeof(tk0));
	wt_errbuf err = {0};
	int rv = fetch_check_reply(f, &s, msg, &err);
	if (fuzz_note("fetch_check_reply", rv, &err) != WT_OK) {
		FUZZ_CHECK(err.msg[0] != '\0' && s.data == NULL);
		/* a reply of the chunk's size refused for its hashes says so */
		FUZZ_CHECK(!(rv == WT_EPROTO && strstr(err.msg, "another chunk or range") != NULL &&
		             strstr(err.msg, "bytes, expected") != NULL && reply_fits(msg, ci)));
		FUZZ_CHECK(memcmp(ck0, z->ck, sizeof(ck0)) == 0 &&
		           memcmp(tk0, z->tk, sizeof(tk0)) == 0);
		return;
	}
	const uint8_t *body = nng_msg_body(msg);
	size_t n = chunk_nbytes[ci];
	FUZZ_CHECK(s.data >= body && s.data + n == body + nng_msg_len(msg));
	FUZZ_CHECK(z->ck[ci]);
	if (f->verify) {
		uint8_t got[16];
		common_hash128_to_bytes(common_hash128(s.data, n), got);
		FUZZ_CHECK(memcmp(got, z->ch[ci], 16) == 0);
		if (ck0[ci]) { /* a known hash: these are the chunk's bytes */
			for (size_t k = 0; k < n; k++)
				FUZZ_CHECK(s.data[k] == chunk_byte(ci, k));
		}
	}
	/* a live tensor's last chunk must bring the tensor's hash */
	size_t t = chunk_tensor[ci];
	if (ci + 1 == N_CHUNKS || chunk_tensor[ci + 1] != t)
		FUZZ_CHECK(z->tk[t]);
	if (tk0[t])
		FUZZ_CHECK(memcmp(z->th[t], thash[t], 16) == 0);
}

static void manifest_reply(fz_fetch *z, nng_msg *msg)
{
	fetch *f = &z->f;
	Weights__Reply *r = NULL;
	const uint8_t *tail;
	size_t tail_len;
	wt_errbuf err = {0};
	int rv = client_parse_reply(cli, 0, msg, 1, WEIGHTS__REPLY__BODY_MANIFEST, &r, &tail,
	                            &tail_len, NULL, &err);
	if (fuzz_note("client_parse_reply", rv, &err) != WT_OK)
		return;
	wt_layout l;
	wt_layout_init(&l);
	wt_manifest *n = NULL;
	rv = client_manifest_from_pb(r->manifest, MAX_CHUNK, "m", &l, &n, &err);
	wire_reply_free(r);
	if (fuzz_note("client_manifest_from_pb", rv, &err) != WT_OK)
		return;
	uint8_t ck0[N_CHUNKS], ch0[N_CHUNKS][16];
	memcpy(ck0, z->ck, sizeof(ck0));
	memcpy(ch0, z->ch, sizeof(ch0));
	uint8_t *sid0 = f->shard_id;
	rv = fetch_refresh_adopt(f, n, &err);
	if (fuzz_note("fetch_refresh_adopt", rv, &err) != WT_OK) {
		FUZZ_CHECK(rv == WT_ECHANGED && err.msg[0] != '\0' && f->shard_id == sid0);
		FUZZ_CHECK(memcmp(ck0, z->ck, sizeof(ck0)) == 0);
		return;
	}
	FUZZ_CHECK(f->shard_id != NULL && f->shard_id_len >= 1 &&
	           f->shard_id_len <= CLIENT_MAX_SHARD_ID);
	for (size_t i = 0; i < N_CHUNKS; i++) /* what was learned stays */
		FUZZ_CHECK(!ck0[i] || (z->ck[i] && memcmp(z->ch[i], ch0[i], 16) == 0));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (cli == NULL)
		setup();
	if (size < 1)
		return 0;
	unsigned flags = data[0];
	nng_msg *msg;
	if (nng_msg_alloc(&msg, 0) != 0 || nng_msg_append(msg, data + 1, size - 1) != 0)
		abort();
	fz_fetch z;
	fetch_start(&z, flags);
	if (flags & F_MANIFEST)
		manifest_reply(&z, msg);
	else
		chunk_reply(&z, (flags & 3u) % N_CHUNKS, msg);
	free(z.f.shard_id);
	nng_msg_free(msg);
	return 0;
}
