/*
 * regreq.c — the admin REGISTER / UNREGISTER requests (on the admin thread).
 *
 * A REGISTER checks the name, the URI (regpolicy.c) and the source (the
 * probe, bounded by register_timeout_ms), then starts or joins the model's
 * registration (registry.c: a regjob opens it on a thread of its own). Its
 * reply waits for that open without holding a thread: the request parks
 * (state WD_WAIT, keeping its nng context) in the server's reg_parked list
 * until the job ends or its wait_ms passes (wait_ms 0, what clients before
 * libweights 1.4 send: to the end), and the reg thread answers it: the
 * outcome, or AdminReply.opening with how far the read got. A follow
 * request (same model and URI) parks the same way; it never starts one.
 * At shutdown parked requests are answered at once: WT_ECANCELED, the
 * registration is not saved (registry.c saves no job that ends after).
 * At most WD_REG_PARKED_MAX park, and only while a quarter of the nng
 * contexts stays free of parked requests (wd_req_park); one more is WT_EBUSY.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "weightd/registry_int.h"

/* Parked REGISTER requests at most (each holds an nng context): one more is
 * WT_EBUSY, which clients retry with backoff. */
#define WD_REG_PARKED_MAX 64

static nng_msg *admin_reply(uint64_t rid, const char *text, uint64_t bytes, bool opening,
                            uint64_t read, uint64_t total)
{
	/* the text quotes the model's URI, cut to the buffer it was built in:
	 * keep it UTF-8, as the client requires (wd_reply_error) */
	char *t = strdup(text);
	if (t != NULL)
		common_utf8_scrub(t);
	Weights__AdminReply ar = WEIGHTS__ADMIN_REPLY__INIT;
	ar.text = t != NULL ? t : "";
	ar.bytes = bytes;
	ar.opening = opening;
	ar.open_read = read;
	ar.open_total = total;
	Weights__Reply rp = WEIGHTS__REPLY__INIT;
	rp.id = rid;
	rp.body_case = WEIGHTS__REPLY__BODY_ADMIN;
	rp.admin = &ar;
	nng_msg *m = wd_reply_msg(&rp);
	free(t);
	return m;
}

/* The reply to a request on job j now: its outcome, or how far it got, or
 * when weightd stops (an unfinished job is then never saved: registry.c)
 * WT_ECANCELED. Drops the request's hold on j. Call with wd_reg_lk held. */
static nng_msg *job_reply(wd_server *s, uint64_t rid, wd_regjob *j)
{
	char text[2 * WT_ERRMSG_MAX], p[80];
	j->waiters--;
	if (j->done && j->rv != WT_OK)
		return wd_reply_error(rid, j->rv, j->err.msg);
	if (j->done) {
		snprintf(text, sizeof(text),
		         "registered model '%s' (%s) revision %.12s, %zu tensors; saved in %s",
		         j->name, j->show, j->revision, j->n_tensors,
		         wd_models_registry_path(s->models));
		return admin_reply(rid, text, j->bytes, false, 0, 0);
	}
	uint64_t read = 0, total = 0;
	wd_models_pending(s->models, j->name, &read, &total);
	common_fmt_progress(p, sizeof(p), read, total);
	if (s->reg_stop) {
		snprintf(text, sizeof(text),
		         "weightd is stopping: the registration of model '%s' (%s) did not "
		         "finish (read for its revision: %s) and is not saved; register it "
		         "again once weightd is back",
		         j->name, j->show, p);
		return wd_reply_error(rid, WT_ECANCELED, text);
	}
	snprintf(text, sizeof(text),
	         "registering model '%s' (%s): read for its revision, %s; it is served once it "
	         "has opened",
	         j->name, j->show, p);
	return admin_reply(rid, text, 0, true, read, total);
}

/* Answer r on job j (r holds one of j's waiters) now if j has ended or
 * weightd stops, else park it up to wait_ms (0: to the end). */
static void park_or_reply(wd_req *r, wd_regjob *j, uint32_t wait_ms)
{
	wd_server *s = r->srv;
	pthread_mutex_lock(&wd_reg_lk);
	size_t parked = 0;
	for (wd_req *p = s->reg_parked; p != NULL; p = p->rg.next)
		parked++;
	if (!j->done && s->reg_started && !s->reg_stop && parked >= WD_REG_PARKED_MAX) {
		j->waiters--;
		pthread_mutex_unlock(&wd_reg_lk);
		char msg[200];
		snprintf(msg, sizeof(msg),
		         "%d REGISTER requests already wait on registrations here; retry later",
		         WD_REG_PARKED_MAX);
		wd_req_reply(r, wd_reply_error(r->id, WT_EBUSY, msg));
		return;
	}
	if (!j->done && s->reg_started && !s->reg_stop) {
		size_t waiting;
		if (!wd_req_park(s, r, &waiting)) { /* it would take a context others need */
			j->waiters--;
			pthread_mutex_unlock(&wd_reg_lk);
			char msg[400];
			wd_park_full_msg(s, waiting, msg, sizeof(msg));
			wd_req_reply(r, wd_reply_error(r->id, WT_EBUSY, msg));
			return;
		}
		r->rg.job = j;
		r->rg.deadline_ns =
		    wait_ms ? common_now_ns() + (uint64_t)wait_ms * 1000000ull : UINT64_MAX;
		r->rg.reply = NULL;
		r->rg.next = s->reg_parked;
		s->reg_parked = r;
		pthread_cond_signal(&s->reg_wake); /* recompute the wake-up time */
		pthread_mutex_unlock(&wd_reg_lk);
		return; /* the reg thread answers */
	}
	/* ended, or weightd stops (reg_started is set before any request comes) */
	nng_msg *reply = job_reply(s, r->id, j);
	pthread_mutex_unlock(&wd_reg_lk);
	wd_req_reply(r, reply);
}

static void *reg_main(void *arg)
{
	wd_server *s = arg;
	pthread_mutex_lock(&wd_reg_lk);
	for (;;) {
		uint64_t now = common_now_ns(), wake = UINT64_MAX;
		wd_req *due = NULL;
		for (wd_req **pp = &s->reg_parked; *pp != NULL;) {
			wd_req *r = *pp;
			wd_regjob *j = r->rg.job;
			if (j->done || s->reg_stop || now >= r->rg.deadline_ns) {
				*pp = r->rg.next;
				r->rg.reply = job_reply(s, r->id, j);
				r->rg.job = NULL;
				r->rg.next = due;
				due = r;
				continue;
			}
			if (r->rg.deadline_ns < wake)
				wake = r->rg.deadline_ns;
			pp = &r->rg.next;
		}
		if (due != NULL) { /* sent without the lock */
			pthread_mutex_unlock(&wd_reg_lk);
			while (due != NULL) {
				wd_req *r = due;
				due = r->rg.next;
				r->rg.next = NULL;
				wd_req_reply(r, r->rg.reply); /* NULL (no memory): it times out */
			}
			pthread_mutex_lock(&wd_reg_lk);
			continue;
		}
		if (s->reg_stop)
			break;
		if (wake == UINT64_MAX) {
			pthread_cond_wait(&s->reg_wake, &wd_reg_lk);
		} else {
			struct timespec ts = {.tv_sec = (time_t)(wake / 1000000000ull),
			                      .tv_nsec = (long)(wake % 1000000000ull)};
			pthread_cond_timedwait(&s->reg_wake, &wd_reg_lk, &ts);
		}
	}
	pthread_mutex_unlock(&wd_reg_lk);
	return NULL;
}

int wd_registry_start(wd_server *s, wt_errbuf *err)
{
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC); /* common_now_ns's clock */
	pthread_cond_init(&s->reg_wake, &ca);
	pthread_condattr_destroy(&ca);
	int rv = pthread_create(&s->reg_thread, NULL, reg_main, s);
	if (rv != 0) {
		pthread_cond_destroy(&s->reg_wake);
		return wt_seterr(err, WT_ENOMEM, "registration reply thread: %s", strerror(rv));
	}
	pthread_mutex_lock(&wd_reg_lk);
	s->reg_started = true;
	pthread_mutex_unlock(&wd_reg_lk);
	return WT_OK;
}

void wd_registry_stop_waits(wd_server *s)
{
	pthread_mutex_lock(&wd_reg_lk);
	bool join = s->reg_started && !s->reg_stop;
	s->reg_stop = true;
	if (s->reg_started)
		pthread_cond_signal(&s->reg_wake);
	pthread_mutex_unlock(&wd_reg_lk);
	if (join)
		pthread_join(s->reg_thread, NULL); /* it answered every parked request */
}

static void unregister(wd_req *r, const char *name)
{
	wd_server *s = r->srv;
	char text[2 * WT_ERRMSG_MAX];
	char *uri = NULL;
	wt_errbuf err;
	int rv = wd_registry_unregister(s, name, &uri, &err);
	if (rv != WT_OK) {
		wd_req_reply(r, wd_reply_error(r->id, rv, err.msg));
		return;
	}
	char *show = uri != NULL ? wd_spec_show(uri) : NULL;
	snprintf(text, sizeof(text),
	         "unregistered model '%s' (%s), removed from %s; its cached shards stay until "
	         "the cache budget drops them or weightctl admin evict --model %s",
	         name, show != NULL ? show : "?", wd_models_registry_path(s->models), name);
	free(show);
	free(uri);
	WT_LOG(WT_LOG_NOTICE, "admin: %s", text);
	wd_req_reply(r, admin_reply(r->id, text, 0, false, 0, 0));
}

/* Tests: wd_faults.register_step between REGISTER's steps; false. */
static bool fault_step(wd_server *s, const char *uri, int step)
{
	const wd_faults *f = atomic_load(&s->faults);
	if (f != NULL && f->register_step != NULL)
		f->register_step(f->ctx, uri, step);
	return false;
}

/* REGISTER of name from spec (modelspec.c: the URI and the configuration override). */
static void register_spec(wd_req *r, const Weights__AdminRequest *a, const char *name,
                          const char *uri, const char *show)
{
	wd_server *s = r->srv;
	char text[2 * WT_ERRMSG_MAX];
	wt_errbuf err;
	int rv;
	wd_regjob *j = NULL;
	if (a->follow) {
		pthread_mutex_lock(&wd_reg_lk);
		if ((j = wd_regjob_find(s, name)) != NULL && strcmp(j->uri, uri) == 0)
			j->waiters++;
		else
			j = NULL;
		pthread_mutex_unlock(&wd_reg_lk);
		if (j != NULL) {
			park_or_reply(r, j, a->wait_ms);
			return;
		}
		snprintf(text, sizeof(text),
		         "no registration of model '%s' with %s is running or recently ended here "
		         "(did weightd restart?); register it again",
		         name, show);
		wd_req_reply(r, wd_reply_error(r->id, WT_ENOTFOUND, text));
		return;
	}
	wd_model_source src;
	char *old = NULL;
	bool same = wd_models_find(s->models, name, &src, &old) && src == WD_SRC_REGISTERED &&
	            old != NULL && strcmp(old, uri) == 0;
	free(old);
	if ((rv = wd_registry_check_entry(name, uri, &err)) != WT_OK ||
	    (rv = wd_register_allowed(s->cfg, uri, &err)) != WT_OK || fault_step(s, uri, 1) ||
	    (!same &&
	     (rv = wd_register_probe(uri, s->cfg, wd_cfg_live(&s->cfg->register_timeout_ms),
	                             &err)) != WT_OK) ||
	    fault_step(s, uri, 2) || (rv = wd_regjob_start(s, name, uri, &j, &err)) != WT_OK) {
		WT_LOG(WT_LOG_WARNING, "admin: register '%s' refused: %s", name, err.msg);
		wd_req_reply(r, wd_reply_error(r->id, rv, err.msg));
		return;
	}
	if (j != NULL) {
		park_or_reply(r, j, a->wait_ms);
		return;
	}
	wd_snap *snap = NULL; /* registered already with this URI */
	if ((rv = wd_models_get(s->models, name, false, &snap, &err)) != WT_OK) {
		wt_errprefix(&err, "model '%s' is registered (%s) but does not open now", name,
		             show);
		wd_req_reply(r, wd_reply_error(r->id, rv, err.msg));
		return;
	}
	snprintf(text, sizeof(text),
	         "model '%s' is already registered with %s (revision %.12s); nothing changed", name,
	         show, snap->revision);
	uint64_t bytes = ckpt_total_bytes(snap->ck);
	wd_snap_release(snap);
	WT_LOG(WT_LOG_NOTICE, "admin: %s", text);
	wd_req_reply(r, admin_reply(r->id, text, bytes, false, 0, 0));
}

void wd_register_request(wd_req *r, const Weights__AdminRequest *a)
{
	const char *name = a->model ? a->model : "";
	wt_errbuf err;
	int rv;
	if (a->op == WEIGHTS__ADMIN_REQUEST__OP__OP_UNREGISTER) {
		unregister(r, name);
		return;
	}
	const char *uri = a->uri ? a->uri : "";
	if (uri[0] == '\0') {
		wd_req_reply(
		    r, wd_reply_error(r->id, WT_EINVAL,
		                      "register: no URI given; send model and uri (file:///dir, "
		                      "s3://bucket/prefix or http(s)://)"));
		return;
	}
	/* uri may carry the configuration override after a tab (since 1.9: modelspec.c; an
	 * older weightd refuses the tab): its canonical form is the registration's spec */
	char *bare = NULL, *override = NULL, *spec = NULL;
	if (wd_spec_split(uri, &bare, &override) != WT_OK)
		rv = wt_seterr(&err, WT_ENOMEM, "register: out of memory");
	else
		rv = wd_spec_make(bare, override, &spec, &err);
	free(bare);
	free(override);
	if (rv != WT_OK) {
		wt_errprefix(&err, "register '%s'", name);
		WT_LOG(WT_LOG_WARNING, "admin: %s", err.msg);
		wd_req_reply(r, wd_reply_error(r->id, rv, err.msg));
		return;
	}
	char *show = wd_spec_show(spec);
	if (show == NULL)
		wd_req_reply(r, wd_reply_error(r->id, WT_ENOMEM, "register: out of memory"));
	else
		register_spec(r, a, name, spec, show);
	free(show);
	free(spec);
}
