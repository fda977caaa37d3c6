/*
 * registry.c — models registered at run time (admin REGISTER / UNREGISTER),
 * kept across restarts in <cache_dir>/registered-models.
 *
 * File format (text, rewritten whole on every change):
 *
 *     # comment                      ignored, like blank lines
 *     NAME=URI                       one registered model; split at the first '='
 *     NAME=URI<TAB>OVERRIDE          one registered under a configuration override (the
 *                                    canonical JSON object; modelspec.c)
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
 * model is removed and nothing was written. The requests (regreq.c) park on
 * the job up to their wait_ms and say how far it got; ended jobs are kept, a
 * few, so a follower learns the outcome.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "weightd/registry_int.h"

#define WD_REGISTRY_URI_MAX  4096
#define WD_REGISTRY_LINE_MAX (WD_REGISTRY_URI_MAX + 64 * 1024 + 512) /* + an override */
#define WD_REGJOBS_KEPT      32 /* ended registrations kept for followers */

pthread_mutex_t wd_reg_lk = PTHREAD_MUTEX_INITIALIZER;

static bool has_ctl(const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if (*p < 0x20 || *p == 0x7f)
			return true;
	return false;
}

/* name=uri (and override, NULL: none) as check_entry below sees them. */
static int check_entry(const char *name, const char *uri, const char *override, wt_errbuf *err)
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
	char *canon = NULL;
	int rv = override != NULL ? ckpt_override_canonical(override, &canon, err) : WT_OK;
	if (rv == WT_OK && canon != NULL && strcmp(canon, override) != 0)
		rv = wt_seterr(err, WT_EINVAL,
		               "the config override is not in canonical form (%s); register the "
		               "model again with weightctl admin register --config-override",
		               canon);
	free(canon);
	return rv != WT_OK ? wt_errprefix(err, "model '%s'", name) : WT_OK;
}

/* Can name=spec be written as one line and read back the same? */
int wd_registry_check_entry(const char *name, const char *spec, wt_errbuf *err)
{
	char *uri = NULL, *override = NULL;
	if (wd_spec_split(spec, &uri, &override) != WT_OK)
		return wt_seterr(err, WT_ENOMEM, "registry: out of memory");
	int rv = check_entry(name, uri, override, err);
	free(uri);
	free(override);
	return rv;
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
	const char *const *kept;
	size_t nk = wd_models_kept(m, &kept);
	bool header = false;
	for (size_t i = 0; i < nk; i++) {
		size_t nl = strcspn(kept[i], "=");
		bool gone =
		    (skip != NULL && strlen(skip) == nl && strncmp(kept[i], skip, nl) == 0) ||
		    (add_name != NULL && strlen(add_name) == nl &&
		     strncmp(kept[i], add_name, nl) == 0);
		if (gone)
			continue;
		if (!header)
			dbuf_add(
			    &b,
			    "# kept, not served: refused by the register_* settings at start\n");
		header = true;
		dbuf_add(&b, kept[i]);
		dbuf_add(&b, "\n");
	}
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
	/* a name served already wins before any check: a kept line never shares a
	 * name with a served model, so an unregister cannot drop the wrong one */
	wd_model_source src;
	char *old = NULL;
	if (wd_models_find(m, name, &src, &old)) {
		if (src == WD_SRC_REGISTERED)
			WT_LOG(WT_LOG_WARNING,
			       "registry %s:%u: model '%s' is registered twice; keeping %s, "
			       "skipping %s",
			       path, no, name, old ? old : "the first", uri);
		else
			WT_LOG(
			    WT_LOG_WARNING,
			    "registry %s:%u: registered model '%s' (%s) is also in the %s (%s); "
			    "the %s wins and the registration is dropped at the next register or "
			    "unregister",
			    path, no, name, uri, where(src), old ? old : "?", where(src));
		free(old);
		return -1;
	}
	wt_errbuf err;
	int rv = wd_registry_check_entry(name, uri, &err);
	if (rv == WT_OK)
		rv = wd_register_allowed(cfg, uri, &err);
	if (rv != WT_OK && rv != WT_ENOTFOUND) { /* a missing folder: listed unavailable */
		bool keep = rv == WT_EPERM && wd_models_keep_line(m, name, uri) == WT_OK;
		WT_LOG(WT_LOG_WARNING, "registry %s:%u: %s; %s", path, no, err.msg,
		       keep ? "kept in the file, not served (allow it and restart, or unregister "
		              "it)"
		            : "line skipped");
		return -1;
	}
	/* opened with the others (models.c warns when it does not open) */
	rv = wd_models_add_from(m, name, uri, WD_SRC_REGISTERED, WD_OPEN_LATER, &err);
	if (rv != WT_OK) {
		WT_LOG(WT_LOG_WARNING, "registry %s:%u: %s; line skipped", path, no, err.msg);
		return -1;
	}
	if (wd_models_drop_kept(m, name)) /* a refused line above: the served one stays */
		WT_LOG(WT_LOG_WARNING,
		       "registry %s:%u: model '%s' is registered twice; keeping %s, dropping "
		       "the refused line above",
		       path, no, name, uri);
	return 1;
}

void wd_registry_load(wd_models *m, const wd_config *cfg)
{
	const char *path = wd_models_registry_path(m);
	/* O_NONBLOCK: a FIFO put there would hold the start until a writer came */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		if (errno != ENOENT)
			WT_LOG(WT_LOG_WARNING, "registry %s: %s; no registered models loaded", path,
			       strerror(errno));
		return;
	}
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		WT_LOG(WT_LOG_WARNING,
		       "registry %s is not a regular file; no registered models loaded (remove it: "
		       "registrations write a new file there)",
		       path);
		close(fd);
		return;
	}
	int fl = fcntl(fd, F_GETFL);
	if (fl >= 0)
		fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	FILE *f = fdopen(fd, "r");
	if (f == NULL) {
		WT_LOG(WT_LOG_ERR, "registry %s: out of memory; no registered models loaded", path);
		close(fd);
		return;
	}
	/* lines read into a bounded buffer: a file edited by hand into one line of
	 * gigabytes is skipped, not read into memory */
	enum { CAP = WD_REGISTRY_LINE_MAX + 2 };
	char *line = malloc(CAP);
	if (line == NULL) {
		WT_LOG(WT_LOG_ERR, "registry %s: out of memory; no registered models loaded", path);
		fclose(f);
		return;
	}
	size_t added = 0, skipped = 0;
	unsigned no = 0;
	while (fgets(line, CAP, f) != NULL) {
		no++;
		size_t len = strlen(line); /* a NUL byte cuts it short: caught below */
		bool whole = len > 0 && line[len - 1] == '\n';
		if (!whole && !feof(f)) { /* longer than the buffer, or a NUL: skip to its end */
			int ch;
			while ((ch = fgetc(f)) != EOF && ch != '\n') {
			}
			WT_LOG(WT_LOG_WARNING,
			       "registry %s:%u: line longer than %d bytes or holding a NUL byte; "
			       "line skipped",
			       path, no, WD_REGISTRY_LINE_MAX);
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
	free(j->show);
	free(j);
}

/* The job of name (running or ended), or NULL. Call with wd_reg_lk held. */
wd_regjob *wd_regjob_find(wd_server *s, const char *name)
{
	for (wd_regjob *j = s->regjobs; j != NULL; j = j->next)
		if (strcmp(j->name, name) == 0)
			return j;
	return NULL;
}

/* Drop ended jobs nobody waits on: name's (a new registration replaces it)
 * and all but the newest WD_REGJOBS_KEPT. Call with wd_reg_lk held. */
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
	pthread_mutex_lock(&wd_reg_lk);
	if (j->unregistered) /* whatever the open said: it may not even have found it */
		rv = wt_seterr(&err, WT_ECANCELED, "model '%s' was unregistered while it opened",
		               j->name);
	/* stopping (its requests are told it is not saved), or the stop's cancel
	 * (wd_models_cancel_opens) ended the open first: one message */
	if ((rv == WT_OK && j->s->reg_stop) || (rv == WT_ECANCELED && !j->unregistered))
		rv = wt_seterr(&err, WT_ECANCELED,
		               "weightd is stopping: the registration of model '%s' (%s) did not "
		               "finish and is not saved; register it again once weightd is back",
		               j->name, j->show);
	if (rv == WT_OK && (rv = save(j->m, NULL, j->name, j->uri, &err)) != WT_OK)
		wt_errprefix(&err, "model '%s' not registered", j->name);
	if (rv == WT_OK) {
		wd_models_drop_kept(j->m, j->name); /* registered anew: its kept line went */
		wd_models_settle(j->m, j->name);
		snprintf(j->revision, sizeof(j->revision), "%s", snap->revision);
		j->n_tensors = ckpt_n_tensors(snap->ck);
		j->bytes = ckpt_total_bytes(snap->ck);
		WT_LOG(WT_LOG_NOTICE,
		       "admin: registered model '%s' (%s) revision %.12s, %zu tensors, opened in "
		       "%.1f s; saved in %s",
		       j->name, j->show, j->revision, j->n_tensors,
		       (double)(common_now_ns() - t0) / 1e9, wd_models_registry_path(j->m));
	} else {
		wt_errbuf ignore; /* gone already when unregistered */
		if (!j->unregistered)
			wd_models_remove(j->m, j->name, &ignore);
		WT_LOG(WT_LOG_WARNING, "admin: register '%s' (%s) failed: %s", j->name, j->show,
		       err.msg);
	}
	j->rv = rv;
	j->err = err;
	j->done = true;
	if (j->s->reg_started)
		pthread_cond_signal(&j->s->reg_wake); /* its parked requests (regreq.c) */
	pthread_mutex_unlock(&wd_reg_lk);
	wd_snap_release(snap);
	return NULL;
}

/* registry_int.h */
int wd_regjob_start(wd_server *s, const char *name, const char *uri, wd_regjob **job,
                    wt_errbuf *err)
{
	*job = NULL;
	wd_models *m = s->models;
	pthread_mutex_lock(&wd_reg_lk);
	wd_model_source src;
	char *old = NULL;
	wd_regjob *j = wd_regjob_find(s, name);
	int rv = WT_OK;
	if (wd_models_find(m, name, &src, &old)) {
		if (old == NULL)
			rv = wt_seterr(err, WT_ENOMEM, "registry: out of memory");
		else if (src != WD_SRC_REGISTERED)
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
		pthread_mutex_unlock(&wd_reg_lk);
		free(old);
		return rv;
	}
	if (j != NULL && !j->done) { /* unregistered while it opened: not ended yet */
		pthread_mutex_unlock(&wd_reg_lk);
		return wt_seterr(err, WT_EEXIST, /* not retried by clients, as EBUSY would be */
		                 "model '%s': its previous registration is still stopping; retry "
		                 "in a moment",
		                 name);
	}
	jobs_prune(s, name);
	j = calloc(1, sizeof(*j));
	if (j != NULL) {
		j->m = m;
		j->s = s;
		j->name = strdup(name);
		j->uri = strdup(uri);
		j->show = wd_spec_show(uri);
	}
	if (j == NULL || j->name == NULL || j->uri == NULL || j->show == NULL)
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
		pthread_mutex_unlock(&wd_reg_lk);
		return rv;
	}
	j->started = true;
	j->waiters = 1;
	j->next = s->regjobs;
	s->regjobs = j;
	*job = j;
	pthread_mutex_unlock(&wd_reg_lk);
	return WT_OK;
}

void wd_registry_stop(wd_server *s)
{
	wd_registry_stop_waits(s); /* done already unless the socket never opened */
	pthread_mutex_lock(&wd_reg_lk);
	wd_regjob *list = s->regjobs;
	s->regjobs = NULL;
	pthread_mutex_unlock(&wd_reg_lk);
	while (list != NULL) { /* wd_models_cancel_opens came first: they end soon */
		wd_regjob *next = list->next;
		job_free(list);
		list = next;
	}
	if (s->reg_started) /* every job that could signal it has been joined */
		pthread_cond_destroy(&s->reg_wake);
}

int wd_registry_unregister(wd_server *s, const char *name, char **uri_out, wt_errbuf *err)
{
	wd_models *m = s->models;
	*uri_out = NULL;
	pthread_mutex_lock(&wd_reg_lk);
	wd_model_source src;
	char *uri = NULL;
	int rv = WT_OK;
	const char *const *kept;
	size_t nk = wd_models_kept(m, &kept), nl = strlen(name);
	for (size_t i = 0; i < nk && *uri_out == NULL; i++)
		if (strncmp(kept[i], name, nl) == 0 && kept[i][nl] == '=' &&
		    (*uri_out = strdup(kept[i] + nl + 1)) != NULL) {
			/* a kept, unserved registration: unregistering drops its line */
			rv = save(m, name, NULL, NULL, err);
			if (rv == WT_OK)
				wd_models_drop_kept(m, name);
			pthread_mutex_unlock(&wd_reg_lk);
			if (rv != WT_OK) {
				free(*uri_out);
				*uri_out = NULL;
			}
			return rv;
		}
	if (!wd_models_find(m, name, &src, &uri))
		rv = wt_seterr(err, WT_ENOTFOUND,
		               "model '%s' is not served here; weightctl models lists the models",
		               name);
	else if (uri == NULL)
		rv = wt_seterr(err, WT_ENOMEM, "registry: out of memory");
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
	else {
		*uri_out = uri; /* the caller's now */
		uri = NULL;
	}
	free(uri);
	uint64_t read, total;
	bool pending = rv == WT_OK && wd_models_pending(m, name, &read, &total);
	if (rv == WT_OK && !pending && (rv = save(m, name, NULL, NULL, err)) != WT_OK)
		wt_errprefix(err, "model '%s' still registered", name); /* not in the file yet */
	wd_regjob *j = rv == WT_OK ? wd_regjob_find(s, name) : NULL;
	if (j != NULL && !j->done)
		j->unregistered = true; /* being registered: its open is canceled */
	if (rv == WT_OK)
		rv = wd_models_remove(m, name, err); /* registered, under wd_reg_lk: cannot fail */
	pthread_mutex_unlock(&wd_reg_lk);
	if (rv != WT_OK) {
		free(*uri_out);
		*uri_out = NULL;
	}
	return rv;
}
