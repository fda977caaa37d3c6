/*
 * watch.c — Watch requests: a model's current revision, or wait for the next.
 *
 * A Watch whose known_revision differs from the model's current revision is
 * answered at once. Otherwise the request parks (state WD_WAIT: it keeps its
 * nng context, no worker thread) in the watch list, at most cfg->max_watchers
 * at once (one more is WT_EBUSY), until the revision changes or its timeout
 * (capped at WD_WATCH_MAX_MS) passes. One watch thread answers them: it wakes
 * when models.c reports a revision change (wd_models_set_notify: some request
 * revalidated the model), when a watch is added, at the earliest deadline, and
 * every tick (revalidate_ms, at least WD_WATCH_TICK_MIN_MS) to revalidate the
 * watched models itself — the store must be re-checked to learn of a change.
 * Revalidation stays rate-limited by revalidate_ms (models.c), so many watches
 * of one model cost one source listing per tick.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "weightd/server_int.h"

#define WD_WATCH_MAX_MS      60000u /* longest wait a Watch may ask for */
#define WD_WATCH_TICK_MIN_MS 100u   /* shortest revalidation tick while watches wait */

typedef struct wd_watches wd_watches;

struct wd_watches {
	wd_server *srv;
	pthread_t thread;
	bool started;
	pthread_mutex_t lk;
	pthread_cond_t cv; /* CLOCK_MONOTONIC */
	/* fields below guarded by lk */
	wd_req *head; /* parked watches */
	size_t n;     /* parked, including those being swept */
	bool kick;    /* a revision changed or a watch was added */
	bool stop;
};

static nng_msg *watch_reply(uint64_t id, const char *revision, bool changed)
{
	Weights__WatchReply wr = WEIGHTS__WATCH_REPLY__INIT;
	wr.revision = (char *)revision;
	wr.changed = changed;
	Weights__Reply rp = WEIGHTS__REPLY__INIT;
	rp.id = id;
	rp.body_case = WEIGHTS__REPLY__BODY_WATCH;
	rp.watch = &wr;
	return wd_reply_msg(&rp);
}

/* Send r's reply and forget its watch state (r leaves the list first). */
static void finish(wd_req *r, nng_msg *reply)
{
	free(r->w.model);
	memset(&r->w, 0, sizeof(r->w));
	wd_req_reply(r, reply);
}

static void notify(void *ctx)
{
	wd_watches *w = ctx;
	pthread_mutex_lock(&w->lk);
	w->kick = true;
	pthread_cond_signal(&w->cv);
	pthread_mutex_unlock(&w->lk);
}

/*
 * Answer the watches of list that are due (revision changed, model gone,
 * deadline passed, or stopping) and return the others, still parked.
 * Runs on the watch thread without w->lk.
 */
static wd_req *sweep(wd_watches *w, wd_req *list, bool stop)
{
	wd_server *s = w->srv;
	wd_req *keep = NULL;
	size_t done = 0;
	uint64_t now = common_now_ns();
	while (list != NULL) {
		wd_req *r = list;
		list = r->w.next;
		r->w.next = NULL;
		wd_snap *snap = NULL;
		wt_errbuf err;
		int rv = wd_models_get(s->models, r->w.model, false, &snap, &err);
		nng_msg *reply = NULL;
		if (rv != WT_OK) {
			reply = wd_reply_error(r->id, rv, err.msg);
		} else {
			bool changed = strcmp(snap->revision, r->w.known) != 0;
			if (changed || stop || now >= r->w.deadline_ns)
				reply = watch_reply(r->id, snap->revision, changed);
			wd_snap_release(snap);
			if (reply == NULL && !changed && !stop && now < r->w.deadline_ns) {
				r->w.next = keep;
				keep = r;
				continue;
			}
		}
		done++;
		finish(r, reply); /* NULL (no memory): the client times out */
	}
	pthread_mutex_lock(&w->lk);
	w->n -= done;
	pthread_mutex_unlock(&w->lk);
	return keep;
}

/* Wait (w->lk held) until kicked, stopped, the earliest deadline or the tick. */
static void wait_due(wd_watches *w)
{
	if (w->kick || w->stop)
		return;
	if (w->head == NULL) {
		pthread_cond_wait(&w->cv, &w->lk);
		return;
	}
	uint64_t tick_ms = wd_cfg_live(&w->srv->cfg->revalidate_ms);
	if (tick_ms < WD_WATCH_TICK_MIN_MS)
		tick_ms = WD_WATCH_TICK_MIN_MS;
	uint64_t wake = common_now_ns() + tick_ms * 1000000ull;
	for (wd_req *r = w->head; r != NULL; r = r->w.next)
		if (r->w.deadline_ns < wake)
			wake = r->w.deadline_ns;
	struct timespec ts = {.tv_sec = (time_t)(wake / 1000000000ull),
	                      .tv_nsec = (long)(wake % 1000000000ull)};
	pthread_cond_timedwait(&w->cv, &w->lk, &ts);
}

static void *watch_main(void *arg)
{
	wd_watches *w = arg;
	pthread_mutex_lock(&w->lk);
	for (;;) {
		if (w->stop && w->head == NULL)
			break;
		wait_due(w);
		w->kick = false;
		wd_req *list = w->head;
		bool stop = w->stop;
		w->head = NULL;
		pthread_mutex_unlock(&w->lk);
		wd_req *keep = list ? sweep(w, list, stop) : NULL;
		pthread_mutex_lock(&w->lk);
		while (keep != NULL) {
			wd_req *r = keep;
			keep = r->w.next;
			r->w.next = w->head;
			w->head = r;
		}
	}
	pthread_mutex_unlock(&w->lk);
	return NULL;
}

int wd_watch_start(wd_server *s, wt_errbuf *err)
{
	/* max_watchers < contexts: wd_config_check, before the server opened */
	wd_watches *w = calloc(1, sizeof(*w));
	if (w == NULL)
		return wt_seterr(err, WT_ENOMEM, "watch: out of memory");
	w->srv = s;
	pthread_mutex_init(&w->lk, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&w->cv, &ca);
	pthread_condattr_destroy(&ca);
	s->watches = w;
	int rv = pthread_create(&w->thread, NULL, watch_main, w);
	if (rv != 0)
		return wt_seterr(err, WT_ENOMEM, "watch thread: %s", strerror(rv));
	w->started = true;
	wd_models_set_notify(s->models, notify, w);
	return WT_OK;
}

void wd_watch_stop(wd_server *s)
{
	wd_watches *w = s->watches;
	if (w == NULL)
		return;
	pthread_mutex_lock(&w->lk);
	bool join = w->started && !w->stop;
	w->stop = true;
	pthread_cond_signal(&w->cv);
	pthread_mutex_unlock(&w->lk);
	if (join)
		pthread_join(w->thread, NULL);
}

void wd_watch_free(wd_server *s)
{
	wd_watches *w = s->watches;
	if (w == NULL)
		return;
	wd_watch_stop(s);
	if (s->models != NULL)
		wd_models_set_notify(s->models, NULL, NULL);
	pthread_cond_destroy(&w->cv);
	pthread_mutex_destroy(&w->lk);
	free(w);
	s->watches = NULL;
}

size_t wd_watch_parked(wd_server *s)
{
	wd_watches *w = s->watches;
	pthread_mutex_lock(&w->lk);
	size_t n = w->n;
	pthread_mutex_unlock(&w->lk);
	return n;
}

/* Park r; false (nothing parked) when stopping or full: *busy tells which,
 * and *full how many requests park when the contexts were the limit (else 0). */
static bool park(wd_watches *w, wd_req *r, bool *busy, size_t *full)
{
	*full = 0;
	wd_server *s = w->srv;
	pthread_mutex_lock(&w->lk);
	*busy = !w->stop && w->n >= s->cfg->max_watchers;
	if (w->stop || *busy) {
		pthread_mutex_unlock(&w->lk);
		return false;
	}
	size_t waiting;
	if (!wd_req_park(s, r, &waiting)) { /* others hold the contexts it may take */
		*busy = true;
		*full = waiting;
		pthread_mutex_unlock(&w->lk);
		return false;
	}
	r->w.next = w->head;
	w->head = r;
	w->n++;
	w->kick = true; /* recompute the wake-up time */
	pthread_cond_signal(&w->cv);
	pthread_mutex_unlock(&w->lk);
	return true;
}

void wd_watch_request(wd_req *r, const Weights__WatchRequest *wr)
{
	wd_server *s = r->srv;
	const char *known = wr->known_revision ? wr->known_revision : "";
	if (wr->model == NULL || wr->model[0] == '\0') {
		finish(r, wd_reply_error(r->id, WT_EINVAL, "watch names no model; see ListModels"));
		return;
	}
	if (strlen(known) >= sizeof(r->w.known)) {
		finish(r,
		       wd_reply_error(r->id, WT_EINVAL,
		                      "watch known_revision is longer than a revision (64 hex "
		                      "digits); pass the revision a manifest or ListModels gave"));
		return;
	}
	wd_snap *snap;
	wt_errbuf err;
	if (wd_models_get(s->models, wr->model, false, &snap, &err) != WT_OK) {
		finish(r, wd_reply_error(r->id, err.code, err.msg));
		return;
	}
	bool changed = strcmp(snap->revision, known) != 0;
	if (changed || known[0] == '\0' || wr->timeout_ms == 0) {
		nng_msg *reply = watch_reply(r->id, snap->revision, changed);
		wd_snap_release(snap);
		finish(r, reply);
		return;
	}
	wd_snap_release(snap);
	uint32_t ms = wr->timeout_ms < WD_WATCH_MAX_MS ? wr->timeout_ms : WD_WATCH_MAX_MS;
	snprintf(r->w.known, sizeof(r->w.known), "%s", known);
	r->w.deadline_ns = common_now_ns() + (uint64_t)ms * 1000000ull;
	r->w.model = strdup(wr->model);
	bool busy = false;
	size_t full = 0;
	if (r->w.model != NULL && park(s->watches, r, &busy, &full))
		return; /* the watch thread answers */
	if (r->w.model == NULL) {
		finish(r, wd_reply_error(r->id, WT_ENOMEM, "watch: out of memory"));
	} else if (busy) {
		char msg[300];
		if (full > 0)
			wd_park_full_msg(s, full, msg, sizeof(msg));
		else
			snprintf(msg, sizeof(msg),
			         "%llu watches are already waiting (max_watchers); retry later or "
			         "raise max_watchers",
			         (unsigned long long)s->cfg->max_watchers);
		finish(r, wd_reply_error(r->id, WT_EBUSY, msg));
	} else { /* stopping: the current revision, unchanged */
		char rev[80];
		snprintf(rev, sizeof(rev), "%s", r->w.known);
		finish(r, watch_reply(r->id, rev, false));
	}
}
