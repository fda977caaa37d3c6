/*
 * evilpeer.c — wt-evilpeer: a broken peer for tests/integration/peer_hostile.sh.
 * Relays every request to an upstream weightd, and
 *   drop:      in each Manifest reply with more than one tensor, leaves the first
 *              tensor out (total_bytes adjusted, the rest as the upstream sent it),
 *              as a buggy or hostile peer would;
 *   stall:MS   answers each chunk request MS milliseconds late (a slow peer);
 *   switch:URL from the second Manifest request on relays everything to the weightd at
 *              URL instead (a model whose revision changed between two requests: URL
 *              serves other bytes under the same name);
 *   flip:URL   relays each Manifest request, and what follows it, to the other upstream
 *              than the one before (a model that keeps changing).
 *
 *   wt-evilpeer LISTEN_URL UPSTREAM_URL [drop|stall:MS|switch:URL|flip:URL]
 *   (default drop; until killed)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <nng/nng.h>
#include <nng/protocol/reqrep0/rep.h>
#include <nng/protocol/reqrep0/req.h>

#include "common/common.h"
#include "proto/wire.h"

static nng_msg *frame(Weights__Reply *r)
{
	size_t n = wire_framed_size(&r->base);
	nng_msg *m;
	if (nng_msg_alloc(&m, n) != 0)
		exit(1);
	wire_frame(&r->base, nng_msg_body(m), n);
	return m;
}

int main(int argc, char **argv)
{
	if (argc != 3 && argc != 4) {
		fprintf(stderr, "usage: wt-evilpeer LISTEN_URL UPSTREAM_URL "
		                "[drop|stall:MS|switch:URL|flip:URL]\n");
		return 2;
	}
	unsigned stall_ms = 0;
	const char *mode = argc == 4 ? argv[3] : "drop", *second = NULL;
	if (strncmp(mode, "stall:", 6) == 0)
		stall_ms = (unsigned)strtoul(mode + 6, NULL, 10);
	else if (strncmp(mode, "switch:", 7) == 0 || strncmp(mode, "flip:", 5) == 0)
		second = strchr(mode, ':') + 1;
	bool drop = strcmp(mode, "drop") == 0, flip = mode[0] == 'f';
	nng_socket rep, ups[2];
	int rv;
	if ((rv = nng_rep0_open(&rep)) != 0 || (rv = nng_listen(rep, argv[1], NULL, 0)) != 0 ||
	    (rv = nng_req0_open(&ups[0])) != 0 || (rv = nng_dial(ups[0], argv[2], NULL, 0)) != 0 ||
	    (second != NULL && ((rv = nng_req0_open(&ups[1])) != 0 ||
	                        (rv = nng_dial(ups[1], second, NULL, 0)) != 0))) {
		fprintf(stderr, "wt-evilpeer: %s\n", nng_strerror(rv));
		return 1;
	}
	nng_socket_set_size(rep, NNG_OPT_RECVMAXSZ, 0);
	nng_socket_set_size(ups[0], NNG_OPT_RECVMAXSZ, 0);
	if (second != NULL)
		nng_socket_set_size(ups[1], NNG_OPT_RECVMAXSZ, 0);
	unsigned n_mf = 0, cur = 0; /* Manifest requests seen; the upstream relayed to */
	fprintf(stderr, "wt-evilpeer: %s -> %s\n", argv[1], argv[2]);
	for (;;) {
		nng_msg *m, *r;
		if (nng_recvmsg(rep, &m, 0) != 0)
			continue;
		Weights__Request *q = NULL;
		bool ok = wire_parse_request(nng_msg_body(m), nng_msg_len(m), 1u << 20, &q, NULL) ==
		          WT_OK;
		bool is_mf = ok && q->body_case == WEIGHTS__REQUEST__BODY_MANIFEST;
		if (ok && q->body_case == WEIGHTS__REQUEST__BODY_CHUNK && stall_ms > 0)
			usleep(stall_ms * 1000u);
		wire_request_free(q);
		if (is_mf && second != NULL && n_mf++ > 0 && (flip || cur == 0)) {
			cur ^= 1;
			fprintf(stderr, "wt-evilpeer: manifest request %u to %s\n", n_mf,
			        cur ? second : argv[2]);
		}
		nng_socket up = ups[cur];
		if (nng_sendmsg(up, m, 0) != 0) {
			nng_msg_free(m);
			continue;
		}
		if (nng_recvmsg(up, &r, 0) != 0)
			continue;
		Weights__Reply *rp = NULL;
		const uint8_t *tail;
		size_t tl;
		if (is_mf && drop &&
		    wire_parse_reply(nng_msg_body(r), nng_msg_len(r), WIRE_MAX_HEADER_BYTES, &rp,
		                     &tail, &tl, NULL) == WT_OK &&
		    rp->body_case == WEIGHTS__REPLY__BODY_MANIFEST && rp->manifest->n_tensors > 1) {
			Weights__Manifest *mf = rp->manifest;
			fprintf(stderr, "wt-evilpeer: leaving '%s' out of rank tp%u\n",
			        mf->tensors[0]->name, mf->tp_rank);
			mf->total_bytes -= mf->tensors[0]->nbytes;
			mf->tensors++;
			mf->n_tensors--;
			nng_msg_free(r);
			r = frame(rp);
			mf->tensors--;
			mf->n_tensors++;
		}
		wire_reply_free(rp);
		if (nng_sendmsg(rep, r, 0) != 0)
			nng_msg_free(r);
	}
}
