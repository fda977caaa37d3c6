/*
 * bcast_join.c — the root's join (bcast_int.h, engine_bcast_join): accept
 * connections and read their hellos, several at once, so that a connection
 * that says nothing (a port scanner, a stuck process) holds up no other.
 *
 * One accept and up to JOIN_SLOTS hello reads are in flight, each an nng aio
 * with its own timeout: a hello must arrive within hello_ms of its accept
 * (and before the join deadline). The aios' callbacks only mark their slot
 * done and wake the joining thread, which does everything else: it parses
 * what arrived, starts the next read, admits or refuses, and re-arms the
 * accept. When every slot holds a silent connection, a new one evicts the one
 * accepted first (a real replica's hello follows its connect at once).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "engine/bcast_int.h"

#define JOIN_SLOTS 32

typedef struct join_s join_s;

typedef struct jslot {
	join_s *j;
	nng_aio *aio;
	nng_stream *st; /* NULL: free */
	uint64_t since_ns;
	uint8_t hdr[ENGINE_BCAST_HELLO];
	char *text;    /* the three strings, after the header; owned */
	size_t len[3]; /* their lengths, once the header arrived */
	size_t need, got;
	int busy; /* a receive in flight */
	int done; /* its aio finished, not looked at yet; guarded by j->lk */
} jslot;

struct join_s {
	pthread_mutex_t lk;
	pthread_cond_t cv;
	int accept_done; /* guarded by lk */
	jslot slot[JOIN_SLOTS];
	nng_aio *acc;
	int acc_busy;
	engine_bcast_hello h;
};

static void j_slot_cb(void *arg)
{
	jslot *s = arg;
	pthread_mutex_lock(&s->j->lk);
	s->done = 1;
	pthread_cond_signal(&s->j->cv);
	pthread_mutex_unlock(&s->j->lk);
}

static void j_accept_cb(void *arg)
{
	join_s *j = arg;
	pthread_mutex_lock(&j->lk);
	j->accept_done = 1;
	pthread_cond_signal(&j->cv);
	pthread_mutex_unlock(&j->lk);
}

/* Close slot s's connection (after a refusal or a timeout); free the slot. */
static void j_free_slot(jslot *s)
{
	if (s->busy) { /* not nng_aio_stop: a stopped aio never runs again (nng 1.5) */
		nng_aio_cancel(s->aio);
		nng_aio_wait(s->aio);
		s->busy = 0;
	}
	engine_bcast_close(s->st);
	s->st = NULL;
	free(s->text);
	s->text = NULL;
	pthread_mutex_lock(&s->j->lk); /* its callback ran in nng_aio_wait */
	s->done = 0;
	pthread_mutex_unlock(&s->j->lk);
}

/* Receive the rest of what slot s needs, within hello_ms of its accept. */
static void j_recv(jslot *s, uint64_t hello_ms, uint64_t deadline_ns)
{
	uint64_t end = s->since_ns + hello_ms * 1000000u, now = common_now_ns();
	end = end < deadline_ns ? end : deadline_ns;
	uint8_t *p = s->got < ENGINE_BCAST_HELLO
	                 ? s->hdr + s->got
	                 : (uint8_t *)s->text + (s->got - ENGINE_BCAST_HELLO);
	size_t n = s->got < ENGINE_BCAST_HELLO ? ENGINE_BCAST_HELLO - s->got : s->need - s->got;
	nng_iov v = {.iov_buf = p, .iov_len = n};
	nng_aio_set_iov(s->aio, 1, &v);
	nng_aio_set_timeout(s->aio, now < end ? (nng_duration)((end - now + 999999) / 1000000) : 1);
	s->busy = 1;
	nng_stream_recv(s->st, s->aio);
}

/* Refuse slot s's connection with code and err's message, and free the slot. */
static void j_refuse(jslot *s, int code, const wt_errbuf *e)
{
	engine_bcast_reply_send(s->st, NULL, code, e->msg, 1000, NULL);
	j_free_slot(s);
}

/* Slot s's receive finished: go on reading, or admit or refuse its hello.
 * Returns 1 when it was admitted (its stream moved to *out). */
static int j_step(join_s *j, jslot *s, const engine_bcast_join_opts *o, nng_stream **out)
{
	s->busy = 0;
	int nrv = nng_aio_result(s->aio);
	if (nrv != 0) { /* silent past hello_ms, or gone: it never counted */
		j_free_slot(s);
		return 0;
	}
	s->got += nng_aio_count(s->aio);
	wt_errbuf e;
	if (s->got == ENGINE_BCAST_HELLO && s->text == NULL) {
		int rv = engine_bcast_hello_parse(s->hdr, &j->h, s->len, &e);
		if (rv != WT_OK) {
			j_refuse(s, rv, &e);
			return 0;
		}
		s->need = ENGINE_BCAST_HELLO + s->len[0] + s->len[1] + s->len[2];
		if ((s->text = malloc(s->need - ENGINE_BCAST_HELLO + 1)) == NULL) {
			j_free_slot(s);
			return 0;
		}
	}
	if (s->got < s->need || s->got < ENGINE_BCAST_HELLO) {
		j_recv(s, o->hello_ms, o->deadline_ns);
		return 0;
	}
	engine_bcast_hello_parse(s->hdr, &j->h, s->len, NULL);
	char *dst[3] = {j->h.group, j->h.revision, j->h.layout};
	const char *src = s->text;
	for (int i = 0; i < 3; i++) {
		memcpy(dst[i], src, s->len[i]);
		dst[i][s->len[i]] = '\0';
		src += s->len[i];
	}
	int rv = o->admit(o->ctx, &j->h, &e);
	if (rv != WT_OK) {
		j_refuse(s, rv, &e);
		return 0;
	}
	*out = s->st;
	s->st = NULL;
	j_free_slot(s);
	return 1;
}

/* A new connection st: into a free slot, else evict the oldest. */
static void j_place(join_s *j, nng_stream *st, const engine_bcast_join_opts *o)
{
	jslot *s = NULL;
	for (int i = 0; i < JOIN_SLOTS && s == NULL; i++)
		if (j->slot[i].st == NULL)
			s = &j->slot[i];
	if (s == NULL) { /* every slot pending: the one accepted first goes */
		s = &j->slot[0];
		for (int i = 1; i < JOIN_SLOTS; i++)
			if (j->slot[i].since_ns < s->since_ns)
				s = &j->slot[i];
	}
	if (s->st != NULL)
		j_free_slot(s);
	s->st = st;
	s->since_ns = common_now_ns();
	s->got = 0;
	s->need = ENGINE_BCAST_HELLO;
	j_recv(s, o->hello_ms, o->deadline_ns);
}

static void j_accept(join_s *j, nng_stream_listener *l, uint64_t deadline_ns)
{
	uint64_t now = common_now_ns();
	if (now >= deadline_ns)
		return;
	nng_aio_set_timeout(j->acc, (nng_duration)((deadline_ns - now + 999999) / 1000000));
	j->acc_busy = 1;
	nng_stream_listener_accept(l, j->acc);
}

/* Wait for a finished aio; handle every one. */
static void j_wait(join_s *j, nng_stream_listener *l, const engine_bcast_join_opts *o,
                   nng_stream **out, uint32_t *n_out)
{
	int acc = 0, done[JOIN_SLOTS];
	pthread_mutex_lock(&j->lk);
	for (;;) {
		acc = j->accept_done;
		int any = acc;
		for (int i = 0; i < JOIN_SLOTS; i++)
			any |= done[i] = j->slot[i].done;
		if (any)
			break;
		pthread_cond_wait(&j->cv, &j->lk);
	}
	j->accept_done = 0;
	for (int i = 0; i < JOIN_SLOTS; i++)
		j->slot[i].done = 0;
	pthread_mutex_unlock(&j->lk);
	for (int i = 0; i < JOIN_SLOTS && *n_out < o->n_want; i++)
		if (done[i] && j_step(j, &j->slot[i], o, &out[*n_out]))
			(*n_out)++;
	if (acc) {
		j->acc_busy = 0;
		int nrv = nng_aio_result(j->acc);
		if (nrv == 0)
			j_place(j, nng_aio_get_output(j->acc, 0), o);
		if (nrv != NNG_ETIMEDOUT && nrv != NNG_ECLOSED) /* a connection reset at once */
			j_accept(j, l, o->deadline_ns);
	}
}

static void j_free(join_s *j)
{
	if (j->acc != NULL)
		nng_aio_stop(j->acc);
	if (j->acc != NULL && j->acc_busy && nng_aio_result(j->acc) == 0)
		engine_bcast_close(nng_aio_get_output(j->acc, 0)); /* accepted as we stopped */
	nng_aio_free(j->acc);
	for (int i = 0; i < JOIN_SLOTS; i++) {
		j_free_slot(&j->slot[i]);
		nng_aio_free(j->slot[i].aio);
	}
	pthread_cond_destroy(&j->cv);
	pthread_mutex_destroy(&j->lk);
	free(j);
}

int engine_bcast_join(nng_stream_listener *l, const engine_bcast_join_opts *o, nng_stream **out,
                      uint32_t *n_out, wt_errbuf *err)
{
	*n_out = 0;
	if (o->n_want == 0)
		return WT_OK;
	join_s *j = calloc(1, sizeof(*j));
	if (j == NULL)
		return wt_seterr(err, WT_ENOMEM, "broadcast root: out of memory");
	pthread_mutex_init(&j->lk, NULL);
	pthread_cond_init(&j->cv, NULL);
	int nrv = nng_aio_alloc(&j->acc, j_accept_cb, j);
	for (int i = 0; nrv == 0 && i < JOIN_SLOTS; i++) {
		j->slot[i].j = j;
		nrv = nng_aio_alloc(&j->slot[i].aio, j_slot_cb, &j->slot[i]);
	}
	if (nrv != 0) {
		j_free(j);
		return wt_seterr(err, WT_ENOMEM, "broadcast root: out of memory");
	}
	j_accept(j, l, o->deadline_ns);
	for (;;) {
		int busy = j->acc_busy;
		for (int i = 0; i < JOIN_SLOTS; i++)
			busy |= j->slot[i].busy;
		if (*n_out >= o->n_want || !busy) /* all joined, or every aio timed out */
			break;
		j_wait(j, l, o, out, n_out);
	}
	j_free(j);
	return *n_out >= o->n_want ? WT_OK : WT_ETIMEDOUT;
}
