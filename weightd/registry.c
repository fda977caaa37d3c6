/*
 * registry.c — models registered at run time (admin REGISTER / UNREGISTER),
 * kept across restarts in <cache_dir>/registered-models.
 *
 * File format (text, rewritten whole on every change):
 *
 *     # comment                      ignored, like blank lines
 *     NAME=URI                       one registered model; split at the first '='
 *
 * NAME: what wd_models_add_from accepts, without '=', whitespace or control
 * characters. URI: 1..WD_REGISTRY_URI_MAX bytes without control characters.
 * Spaces around NAME and URI are ignored when reading (hand edits).
 *
 * Writes are atomic and durable (common_write_file_atomic: "<file>.tmp.<pid>"
 * is written, fsync'ed and renamed over the file, then the folder is
 * fsync'ed). At start the file is read after the folder and config models
 * (they win on a name clash); nothing in it can stop the daemon from
 * starting: a bad line is a warning naming file:line.
 *
 * One process-wide mutex serializes register/unregister (change + rewrite),
 * so the file always matches the registered models in memory. They are rare.
 *
 * A REGISTER adds the model pending (models.c: not served, not saved) and
 * opens it on a thread of its own (a regjob): a new revision's digest reads
 * every byte, minutes for a large remote checkpoint, which must hold neither
 * the lock nor the admin thread. When it opens, the file is written and the
 * model served; when it fails (or is unregistered, or weightd stops), the
 * model is removed and nothing was written. The request waits for the job
 * up to its wait_ms (0: to the end) and says how far it got; a follow
 * request (same model and URI) waits again. Ended jobs are kept, a few, so
 * a follower learns the outcome.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "weightd/server_int.h"

#define WD_REGISTRY_URI_MAX  4096
#define WD_REGISTRY_LINE_MAX (WD_REGISTRY_URI_MAX + 256)
#define WD_REGJOBS_KEPT      32 /* ended registrations kept for followers */

static pthread_mutex_t reg_lk = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t reg_cv = PTHREAD_COND_INITIALIZER; /* a regjob ended */

/* One registration's open (guarded by reg_lk). */
typedef struct wd_regjob wd_regjob;
struct wd_regjob {
	struct wd_regjob *next;
	wd_models *m;
	char *name, *uri;
	pthread_t th;
	bool started;      /* th to join */
	bool done;         /* the outcome below is set */
	bool unregistered; /* unregistered while it opened */
	unsigned waiters;  /* requests waiting on it: not freed meanwhile */
	int rv;
	wt_errbuf err;
	char revision[80]; /* wd_snap.revision */
	size_t n_tensors;
	uint64_t bytes;
};

static bool has_ctl(const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if (*p < 0x20 || *p == 0x7f)
			return true;
	return false;
}

/* Can name=uri be written as one line and read back the same? */
static int check_entry(const char *name, const char *uri, wt_errbuf *err)
{
	if (name[0] == '\0' || name[0] == '#' || strchr(name, '=') != NULL ||
	    strpbrk(name, " \t") != NULL || has_ctl(name))
		return wt_seterr(
		    err, WT_EINVAL,
		    "model name '%s' cannot be registered: it is empty, starts with "
		    "'#' or has '=', whitespace or a control character; use another name",
		    name);
	size_t n = strlen(uri);
	if (n == 0 || n > WD_REGISTRY_URI_MAX || has_ctl(uri) || uri[0] == ' ' || uri[n - 1] == ' ')
		return wt_seterr(
		    err, WT_EINVAL,
		    "model '%s': URI of %zu bytes is empty, longer than %d bytes, has "
		    "control characters or surrounding spaces; use file:///dir, s3:// or "
		    "http(s)://",
		    name, n, WD_REGISTRY_URI_MAX);
	return WT_OK;
}

/* "models folder", "configuration": where a model that was not registered comes from. */
static const char *where(wd_model_source src)
{
	return src == WD_SRC_FOLDER ? "models folder" : "configuration";
}

/* ---- writing ---- */

typedef struct dbuf {
	char *p;
	size_t n, cap;
	bool oom;
	const char *skip; /* a name left out (unregister) */
} dbuf;

static void dbuf_add(dbuf *b, const char *s)
{
	size_t len = strlen(s);
	if (b->oom)
		return;
	if (b->n + len + 1 > b->cap) {
		size_t nc = b->cap ? b->cap : 256;
		while (nc < b->n + len + 1)
			nc *= 2;
		char *v = realloc(b->p, nc);
		if (v == NULL) {
			b->oom = true;
			return;
		}
		b->p = v;
		b->cap = nc;
	}
	memcpy(b->p + b->n, s, len + 1);
	b->n += len;
}

static void add_line(void *ctx, const char *name, const char *uri)
{
	dbuf *b = ctx;
	if (b->skip != NULL && strcmp(name, b->skip) == 0)
		return;
	dbuf_add(b, name);
	dbuf_add(b, "=");
	dbuf_add(b, uri);
	dbuf_add(b, "\n");
}

/* Rewrite the file from the registered models in memory (pending ones are
 * not), without skip, with add_name=add_uri (may be NULL: none). */
static int save(wd_models *m, const char *skip, const char *add_name, const char *add_uri,
                wt_errbuf *err)
{
	dbuf b = {.skip = skip};
	dbuf_add(&b, "# weightd registered models: NAME=URI, one a line (weightctl admin "
	             "register/unregister).\n# Rewritten by weightd on every change; edit only "
	             "while weightd is stopped.\n");
	wd_models_each(m, WD_SRC_REGISTERED, add_line, &b);
	if (add_name != NULL)
		add_line(&b, add_name, add_uri);
	int rv = b.oom ? wt_seterr(err, WT_ENOMEM, "registry: out of memory")
	               : common_write_file_atomic(wd_models_registry_path(m), b.p, b.n, true, err);
	if (rv != WT_OK && !b.oom)
		wt_errprefix(err, "registry");
	free(b.p);
	return rv;
}

/* ---- reading ---- */

static char *trim(char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	size_t n = strlen(s);
	while (n > 0 &&
	       (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r' || s[n - 1] == '\n'))
		s[--n] = '\0';
	return s;
}

/* One line: 1 = a model added, 0 = nothing to add, -1 = skipped (warned). */
static int load_line(wd_models *m, const wd_config *cfg, const char *path, unsigned no, char *line)
{
	char *t = trim(line);
	if (t[0] == '\0' || t[0] == '#')
		return 0;
	char *eq = strchr(t, '=');
	if (eq == NULL) {
		WT_LOG(WT_LOG_WARNING, "registry %s:%u: no '=' (want NAME=URI); line skipped", path,
		       no);
		return -1;
	}
	*eq = '\0';
	const char *name = trim(t), *uri = trim(eq + 1);
	wt_errbuf err;
	int rv = check_entry(name, uri, &err);
	if (rv == WT_OK)
		rv = wd_register_allowed(cfg, uri, &err);
	if (rv != WT_OK && rv != WT_ENOTFOUND) { /* a missing folder: listed unavailable */
		WT_LOG(WT_LOG_WARNING, "registry %s:%u: %s; line skipped", path, no, err.msg);
		return -1;
	}
	wd_model_source src;
	const char *old;
	if (wd_models_find(m, name, &src, &old)) {
		if (src == WD_SRC_REGISTERED)
			WT_LOG(WT_LOG_WARNING,
			       "registry %s:%u: model '%s' is registered twice; keeping %s, "
			       "skipping %s",
			       path, no, name, old, uri);
		else
			WT_LOG(
			    WT_LOG_WARNING,
			    "registry %s:%u: registered model '%s' (%s) is also in the %s (%s); "
			    "the %s wins and the registration is dropped at the next register or "
			    "unregister",
			    path, no, name, uri, where(src), old, where(src));
		return -1;
	}
	/* opened with the others (models.c warns when it does not open) */
	rv = wd_models_add_from(m, name, uri, WD_SRC_REGISTERED, WD_OPEN_LATER, &err);
	if (rv != WT_OK) {
		WT_LOG(WT_LOG_WARNING, "registry %s:%u: %s; line skipped", path, no, err.msg);
		return -1;
	}
	return 1;
}

void wd_registry_load(wd_models *m, const wd_config *cfg)
{
	const char *path = wd_models_registry_path(m);
	FILE *f = fopen(path, "re");
	if (f == NULL) {
		if (errno != ENOENT)
			WT_LOG(WT_LOG_WARNING, "registry %s: %s; no registered models loaded", path,
			       strerror(errno));
		return;
	}
	char *line = NULL;
	size_t cap = 0, added = 0, skipped = 0;
	unsigned no = 0;
	ssize_t len;
	while ((len = getline(&line, &cap, f)) >= 0) {
		no++;
		if ((size_t)len > WD_REGISTRY_LINE_MAX || memchr(line, '\0', (size_t)len) != NULL) {
			WT_LOG(WT_LOG_WARNING,
			       "registry %s:%u: line of %zd bytes is longer than %d or holds a NUL "
			       "byte; line skipped",
			       path, no, len, WD_REGISTRY_LINE_MAX);
			skipped++;
			continue;
		}
		int r = load_line(m, cfg, path, no, line);
		added += r > 0;
		skipped += r < 0;
	}
	if (ferror(f))
		WT_LOG(WT_LOG_WARNING, "registry %s: read error after line %u; the rest is ignored",
		       path, no);
	free(line);
	fclose(f);
	WT_LOG(skipped ? WT_LOG_WARNING : WT_LOG_INFO,
	       "registry %s: %zu registered models loaded, %zu lines skipped", path, added,
	       skipped);
}

/* ---- register: a job per registration ---- */

static void job_free(wd_regjob *j)
{
	if (j->started)
		pthread_join(j->th, NULL); /* done: it has returned or is about to */
	free(j->name);
	free(j->uri);
	free(j);
}

/* The job of name (running or ended), or NULL. Call with reg_lk held. */
static wd_regjob *job_find(wd_server *s, const char *name)
{
	for (wd_regjob *j = s->regjobs; j != NULL; j = j->next)
		if (strcmp(j->name, name) == 0)
			return j;
	return NULL;
}

/* Drop ended jobs nobody waits on: name's (a new registration replaces it)
 * and all but the newest WD_REGJOBS_KEPT. Call with reg_lk held. */
static void jobs_prune(wd_server *s, const char *name)
{
	unsigned kept = 0;
	for (wd_regjob **pp = &s->regjobs; *pp != NULL;) {
		wd_regjob *j = *pp;
		bool drop = j->done && j->waiters == 0 &&
		            (strcmp(j->name, name) == 0 || ++kept > WD_REGJOBS_KEPT);
		if (drop) {
			*pp = j->next;
			job_free(j);
		} else {
			pp = &j->next;
		}
	}
}

/* The job's thread: open the pending model, then keep (write the file,
 * serve it) or drop it. */
static void *job_main(void *arg)
{
	wd_regjob *j = arg;
	wd_snap *snap = NULL;
	wt_errbuf err;
	uint64_t t0 = common_now_ns();
	int rv = wd_models_open_pending(j->m, j->name, &snap, &err);
	pthread_mutex_lock(&reg_lk);
	if (rv == WT_OK && j->unregistered)
		rv = wt_seterr(&err, WT_ECANCELED, "model '%s' was unregistered while it opened",
		               j->name);
	if (rv == WT_OK && (rv = save(j->m, NULL, j->name, j->uri, &err)) != WT_OK)
		wt_errprefix(&err, "model '%s' not registered", j->name);
	if (rv == WT_OK) {
		wd_models_settle(j->m, j->name);
		snprintf(j->revision, sizeof(j->revision), "%s", snap->revision);
		j->n_tensors = ckpt_n_tensors(snap->ck);
		j->bytes = ckpt_total_bytes(snap->ck);
		WT_LOG(WT_LOG_NOTICE,
		       "admin: registered model '%s' (%s) revision %.12s, %zu tensors, opened in "
		       "%.1f s; saved in %s",
		       j->name, j->uri, j->revision, j->n_tensors,
		       (double)(common_now_ns() - t0) / 1e9, wd_models_registry_path(j->m));
	} else {
		wt_errbuf ignore; /* gone already when unregistered */
		if (!j->unregistered)
			wd_models_remove(j->m, j->name, &ignore);
		WT_LOG(WT_LOG_WARNING, "admin: register '%s' (%s) failed: %s", j->name, j->uri,
		       err.msg);
	}
	j->rv = rv;
	j->err = err;
	j->done = true;
	pthread_cond_broadcast(&reg_cv);
	pthread_mutex_unlock(&reg_lk);
	wd_snap_release(snap);
	return NULL;
}

/* Start registering name -> uri, or find the registration already there.
 * *job: the job to wait on (a reference: job_put it), or NULL when the same
 * name and URI is already registered (nothing to do). */
static int job_start(wd_server *s, const char *name, const char *uri, wd_regjob **job,
                     wt_errbuf *err)
{
	*job = NULL;
	wd_models *m = s->models;
	pthread_mutex_lock(&reg_lk);
	wd_model_source src;
	const char *old;
	wd_regjob *j = job_find(s, name);
	int rv = WT_OK;
	if (wd_models_find(m, name, &src, &old)) {
		if (src != WD_SRC_REGISTERED)
			rv = wt_seterr(
			    err, WT_EEXIST,
			    "model '%s' already comes from the %s (%s); pick another name", name,
			    where(src), old);
		else if (strcmp(old, uri) != 0)
			rv = wt_seterr(
			    err, WT_EEXIST,
			    "model '%s' is already registered with %s; unregister it first "
			    "(weightctl admin unregister --model %s) or pick another name",
			    name, old, name);
		else if (j != NULL && !j->done && strcmp(j->uri, uri) == 0) {
			j->waiters++; /* being registered: wait on that one */
			*job = j;
		}
		pthread_mutex_unlock(&reg_lk);
		return rv;
	}
	if (j != NULL && !j->done) { /* unregistered while it opened: not ended yet */
		pthread_mutex_unlock(&reg_lk);
		return wt_seterr(err, WT_EBUSY,
		                 "model '%s': its previous registration is still stopping; retry "
		                 "in a moment",
		                 name);
	}
	jobs_prune(s, name);
	j = calloc(1, sizeof(*j));
	if (j != NULL) {
		j->m = m;
		j->name = strdup(name);
		j->uri = strdup(uri);
	}
	if (j == NULL || j->name == NULL || j->uri == NULL)
		rv = wt_seterr(err, WT_ENOMEM, "registry: out of memory");
	if (rv == WT_OK)
		rv = wd_models_add_from(m, name, uri, WD_SRC_REGISTERED, WD_OPEN_PENDING, err);
	if (rv == WT_OK && pthread_create(&j->th, NULL, job_main, j) != 0) {
		wt_errbuf ignore;
		wd_models_remove(m, name, &ignore);
		rv = wt_seterr(err, WT_EIO, "model '%s': cannot start a thread to open it", name);
	}
	if (rv != WT_OK) {
		if (j != NULL)
			job_free(j);
		pthread_mutex_unlock(&reg_lk);
		return rv;
	}
	j->started = true;
	j->waiters = 1;
	j->next = s->regjobs;
	s->regjobs = j;
	*job = j;
	pthread_mutex_unlock(&reg_lk);
	return WT_OK;
}

void wd_registry_stop(wd_server *s)
{
	pthread_mutex_lock(&reg_lk);
	wd_regjob *list = s->regjobs;
	s->regjobs = NULL;
	pthread_mutex_unlock(&reg_lk);
	while (list != NULL) { /* wd_models_cancel_opens came first: they end soon */
		wd_regjob *next = list->next;
		job_free(list);
		list = next;
	}
}

int wd_registry_unregister(wd_server *s, const char *name, char **uri_out, wt_errbuf *err)
{
	wd_models *m = s->models;
	*uri_out = NULL;
	pthread_mutex_lock(&reg_lk);
	wd_model_source src;
	const char *uri;
	int rv = WT_OK;
	if (!wd_models_find(m, name, &src, &uri))
		rv = wt_seterr(err, WT_ENOTFOUND,
		               "model '%s' is not served here; weightctl models lists the models",
		               name);
	else if (src == WD_SRC_FOLDER)
		rv = wt_seterr(
		    err, WT_EPERM,
		    "model '%s' comes from the models folder (%s), not from a "
		    "registration; move the folder out of models_dir and restart to remove it",
		    name, uri);
	else if (src == WD_SRC_CONFIG)
		rv =
		    wt_seterr(err, WT_EPERM,
		              "model '%s' comes from the configuration (model = %s=%s), not from a "
		              "registration; remove that model line or --model flag and restart",
		              name, name, uri);
	else if ((*uri_out = strdup(uri)) == NULL)
		rv = wt_seterr(err, WT_ENOMEM, "registry: out of memory");
	if (rv == WT_OK && (rv = save(m, name, NULL, NULL, err)) != WT_OK)
		wt_errprefix(err, "model '%s' still registered", name);
	wd_regjob *j = rv == WT_OK ? job_find(s, name) : NULL;
	if (j != NULL && !j->done)
		j->unregistered = true; /* being registered: its open is canceled */
	if (rv == WT_OK)
		rv = wd_models_remove(m, name, err); /* registered, under reg_lk: cannot fail */
	pthread_mutex_unlock(&reg_lk);
	if (rv != WT_OK) {
		free(*uri_out);
		*uri_out = NULL;
	}
	return rv;
}

static nng_msg *admin_text(uint64_t rid, const char *text, uint64_t bytes)
{
	Weights__AdminReply ar = WEIGHTS__ADMIN_REPLY__INIT;
	ar.text = (char *)text;
	ar.bytes = bytes;
	Weights__Reply rp = WEIGHTS__REPLY__INIT;
	rp.id = rid;
	rp.body_case = WEIGHTS__REPLY__BODY_ADMIN;
	rp.admin = &ar;
	return wd_reply_msg(&rp);
}

/* Wait for job j (a reference: dropped here) up to wait_ms (0: to its end),
 * then say how it ended or how far it got. */
static nng_msg *job_reply(wd_server *s, uint64_t rid, wd_regjob *j, uint32_t wait_ms)
{
	struct timespec dl;
	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_sec += wait_ms / 1000;
	dl.tv_nsec += (long)(wait_ms % 1000) * 1000000L;
	if (dl.tv_nsec >= 1000000000L) {
		dl.tv_sec++;
		dl.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&reg_lk);
	while (!j->done) {
		if (wait_ms == 0)
			pthread_cond_wait(&reg_cv, &reg_lk);
		else if (pthread_cond_timedwait(&reg_cv, &reg_lk, &dl) == ETIMEDOUT)
			break;
	}
	bool done = j->done;
	int rv = j->rv;
	wt_errbuf err = j->err;
	char text[2 * WT_ERRMSG_MAX];
	uint64_t bytes = j->bytes;
	if (done && rv == WT_OK)
		snprintf(text, sizeof(text),
		         "registered model '%s' (%s) revision %.12s, %zu tensors; saved in %s",
		         j->name, j->uri, j->revision, j->n_tensors,
		         wd_models_registry_path(s->models));
	uint64_t read = 0, total = 0;
	if (!done)
		wd_models_pending(s->models, j->name, &read, &total);
	char p[80];
	if (!done)
		snprintf(text, sizeof(text),
		         "registering model '%s' (%s): read for its revision, %s; it is served "
		         "once it has opened",
		         j->name, j->uri, common_fmt_progress(p, sizeof(p), read, total));
	j->waiters--;
	pthread_mutex_unlock(&reg_lk);
	if (done && rv != WT_OK)
		return wd_reply_error(rid, rv, err.msg);
	Weights__AdminReply ar = WEIGHTS__ADMIN_REPLY__INIT;
	ar.text = text;
	ar.bytes = bytes;
	ar.opening = !done;
	ar.open_read = read;
	ar.open_total = total;
	Weights__Reply rp = WEIGHTS__REPLY__INIT;
	rp.id = rid;
	rp.body_case = WEIGHTS__REPLY__BODY_ADMIN;
	rp.admin = &ar;
	return wd_reply_msg(&rp);
}

nng_msg *wd_register_reply(wd_server *s, uint64_t rid, const Weights__AdminRequest *a)
{
	const char *name = a->model ? a->model : "";
	const char *path = wd_models_registry_path(s->models);
	char text[2 * WT_ERRMSG_MAX];
	wt_errbuf err;
	int rv;
	if (a->op == WEIGHTS__ADMIN_REQUEST__OP__OP_UNREGISTER) {
		char *uri = NULL;
		if ((rv = wd_registry_unregister(s, name, &uri, &err)) != WT_OK)
			return wd_reply_error(rid, rv, err.msg);
		snprintf(text, sizeof(text),
		         "unregistered model '%s' (%s), removed from %s; its cached shards stay "
		         "until the cache budget drops them or weightctl admin evict --model %s",
		         name, uri, path, name);
		free(uri);
		WT_LOG(WT_LOG_NOTICE, "admin: %s", text);
		return admin_text(rid, text, 0);
	}
	const char *uri = a->uri ? a->uri : "";
	if (uri[0] == '\0')
		return wd_reply_error(rid, WT_EINVAL,
		                      "register: no URI given; send model and uri (file:///dir, "
		                      "s3://bucket/prefix or http(s)://)");
	wd_regjob *j = NULL;
	if (a->follow) {
		pthread_mutex_lock(&reg_lk);
		if ((j = job_find(s, name)) != NULL && strcmp(j->uri, uri) == 0)
			j->waiters++;
		else
			j = NULL;
		pthread_mutex_unlock(&reg_lk);
		if (j == NULL) {
			snprintf(text, sizeof(text),
			         "no registration of model '%s' with %s is running or recently "
			         "ended here (did weightd restart?); register it again",
			         name, uri);
			return wd_reply_error(rid, WT_ENOTFOUND, text);
		}
		return job_reply(s, rid, j, a->wait_ms);
	}
	wd_model_source src;
	const char *old;
	bool same = wd_models_find(s->models, name, &src, &old) && src == WD_SRC_REGISTERED &&
	            strcmp(old, uri) == 0;
	if ((rv = check_entry(name, uri, &err)) != WT_OK ||
	    (rv = wd_register_allowed(s->cfg, uri, &err)) != WT_OK ||
	    (!same && (rv = wd_register_probe(uri, s->cfg->register_timeout_ms, &err)) != WT_OK) ||
	    (rv = job_start(s, name, uri, &j, &err)) != WT_OK) {
		WT_LOG(WT_LOG_WARNING, "admin: register '%s' refused: %s", name, err.msg);
		return wd_reply_error(rid, rv, err.msg);
	}
	if (j != NULL)
		return job_reply(s, rid, j, a->wait_ms);
	wd_snap *snap = NULL; /* registered already with this URI */
	if ((rv = wd_models_get(s->models, name, false, &snap, &err)) != WT_OK) {
		wt_errprefix(&err, "model '%s' is registered (%s) but does not open now", name,
		             uri);
		return wd_reply_error(rid, rv, err.msg);
	}
	snprintf(text, sizeof(text),
	         "model '%s' is already registered with %s (revision %.12s); nothing changed", name,
	         uri, snap->revision);
	uint64_t bytes = ckpt_total_bytes(snap->ck);
	wd_snap_release(snap);
	WT_LOG(WT_LOG_NOTICE, "admin: %s", text);
	return admin_text(rid, text, bytes);
}
