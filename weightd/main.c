/*
 * main.c — the weightd daemon: configuration, signals, readiness, drain.
 *
 * Exit codes: 0 clean shutdown (SIGTERM/SIGINT), 1 start-up failure (cache,
 * listen, models), 2 bad configuration or flags.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cache/cache.h"
#include "common/common.h"
#include "weightd/weightd.h"
#include "weights/weights.h"

static void reload_cb(void *ctx, const wd_cfg_key *k, bool applied)
{
	(void)ctx;
	if (applied)
		WT_LOG(WT_LOG_NOTICE, "reload: %s changed", k->name);
	else
		WT_LOG(WT_LOG_WARNING,
		       "reload: %s changed but is not reload-safe; restart to apply", k->name);
}

/* SIGHUP: re-read the configuration (file + flags) and apply the reload-safe keys. */
static void reload(wd_config *cfg, int argc, char **argv, wd_server *srv)
{
	wd_config fresh;
	wt_errbuf err;
	if (wd_config_init(&fresh) != WT_OK)
		return;
	if (wd_config_parse_args(&fresh, argc, argv, &err) != WT_OK) {
		WT_LOG(WT_LOG_ERR, "reload: %s; keeping the running configuration", err.msg);
		wd_config_free(&fresh);
		return;
	}
	size_t n = wd_config_reload(cfg, &fresh, reload_cb, NULL);
	common_log_set(NULL, NULL, (int)cfg->log_level);
	wd_server_reconfigure(srv);
	WT_LOG(WT_LOG_NOTICE, "reload: %zu settings differ", n);
	wd_config_free(&fresh);
}

/* Reloads run on a thread of their own: a rescan opens each new folder of
 * models_dir (its content digest: minutes for a large model on a slow file
 * system), and the signal thread must stay free for SIGTERM. One at a time;
 * a SIGHUP meanwhile runs one more after it. */
typedef struct reloader {
	wd_config *cfg;
	int argc;
	char **argv;
	wd_server *srv;
	pthread_mutex_t lk;
	bool running, again, stop;
	pthread_t th;
	bool started;
} reloader;

static void *reload_main(void *arg)
{
	reloader *r = arg;
	pthread_mutex_lock(&r->lk);
	while (!r->stop && r->again) {
		r->again = false;
		pthread_mutex_unlock(&r->lk);
		reload(r->cfg, r->argc, r->argv, r->srv);
		pthread_mutex_lock(&r->lk);
	}
	r->running = false;
	pthread_mutex_unlock(&r->lk);
	return NULL;
}

static void reload_async(reloader *r)
{
	pthread_mutex_lock(&r->lk);
	r->again = true;
	if (!r->running) {
		if (r->started) /* the last one has ended: reap it */
			pthread_join(r->th, NULL);
		r->started = r->running = pthread_create(&r->th, NULL, reload_main, r) == 0;
		if (!r->running)
			WT_LOG(WT_LOG_ERR, "reload: cannot start a thread; SIGHUP ignored");
	}
	pthread_mutex_unlock(&r->lk);
}

/* SIGTERM: the reload in progress stops (its opens canceled) before the stop. */
static void reload_stop(reloader *r)
{
	pthread_mutex_lock(&r->lk);
	r->stop = true;
	bool started = r->started;
	pthread_mutex_unlock(&r->lk);
	if (started) {
		wd_server_cancel_opens(r->srv);
		pthread_join(r->th, NULL);
	}
}

/* SIGTERM/SIGINT while the server starts: a first start reads every byte of
 * each new model (17 minutes for 1 TB at 1 GB/s), and with the signals blocked
 * until it listened a stop waited for all of it (and a service manager's
 * SIGKILL came first). This thread takes them meanwhile and stops the start;
 * SIGHUP stays pending for the loop in main. */
typedef struct start_watch {
	wd_server *srv;
	pthread_mutex_t lk;
	bool done; /* guarded by lk: the start has returned */
	int sig;   /* guarded by lk: the signal taken, 0 if none */
} start_watch;

static void *start_watch_main(void *arg)
{
	start_watch *w = arg;
	sigset_t stop;
	sigemptyset(&stop);
	sigaddset(&stop, SIGTERM);
	sigaddset(&stop, SIGINT);
	for (;;) {
		pthread_mutex_lock(&w->lk);
		bool done = w->done;
		pthread_mutex_unlock(&w->lk);
		if (done)
			return NULL;
		int sig = sigtimedwait(&stop, NULL, &(struct timespec){0, 100 * 1000 * 1000});
		if (sig == SIGTERM || sig == SIGINT) {
			pthread_mutex_lock(&w->lk);
			w->sig = sig;
			pthread_mutex_unlock(&w->lk);
			WT_LOG(WT_LOG_NOTICE, "%s during start-up: stopping the model opens",
			       sig == SIGINT ? "SIGINT" : "SIGTERM");
			wd_server_stop_start(w->srv);
			return NULL;
		}
	}
}

/* wd_server_start with start_watch_main taking SIGTERM/SIGINT meanwhile;
 * *sig: the signal taken (0 if none). */
static int start_watched(wd_server *srv, int *sig, wt_errbuf *err)
{
	start_watch sw = {.srv = srv};
	pthread_mutex_init(&sw.lk, NULL);
	pthread_t th;
	bool watched = pthread_create(&th, NULL, start_watch_main, &sw) == 0;
	int rv = wd_server_start(srv, err);
	pthread_mutex_lock(&sw.lk);
	sw.done = true;
	pthread_mutex_unlock(&sw.lk);
	if (watched)
		pthread_join(th, NULL);
	pthread_mutex_destroy(&sw.lk);
	*sig = sw.sig;
	return rv;
}

/* Say where the daemon serves: stderr, and ready_file (if set) with the listen URLs. */
static void announce(wd_server *srv, const char *ready_file)
{
	char ready[4096] = "";
	size_t len = 0;
	for (size_t i = 0; wd_server_url(srv, i) != NULL; i++) {
		fprintf(stderr, "weightd: listening on %s\n", wd_server_url(srv, i));
		int n = snprintf(ready + len, sizeof(ready) - len, "%s\n", wd_server_url(srv, i));
		if (n > 0 && (size_t)n < sizeof(ready) - len)
			len += (size_t)n;
	}
	if (wd_server_metrics_port(srv) != 0)
		fprintf(stderr, "weightd: metrics on port %u (/metrics, /healthz, /readyz)\n",
		        wd_server_metrics_port(srv));
	fflush(stderr);
	wt_errbuf err;
	if (ready_file[0] != '\0' &&
	    common_write_file_atomic(ready_file, ready, len, false, &err) != WT_OK)
		WT_LOG(WT_LOG_ERR, "ready_file: %s", err.msg);
}

/* What a stop leaves behind once the cache is closed (wd_stop): the log line,
 * the pid file, the ready file. Before the socket close, which can hang. */
typedef struct stop_ctx {
	const wd_config *cfg;
	int pid_fd;
} stop_ctx;

static void stopped(void *arg, size_t left)
{
	stop_ctx *sc = arg;
	WT_LOG(WT_LOG_NOTICE, "stopped%s", left ? " (abandoned requests at the deadline)" : "");
	wd_pidfile_release(sc->cfg->pid_file, sc->pid_fd);
	if (sc->cfg->ready_file[0] != '\0')
		unlink(sc->cfg->ready_file);
}

int main(int argc, char **argv)
{
	switch (wd_config_cli_action(argc, argv)) {
	case WD_CLI_HELP:
		wd_config_usage(stdout);
		return 0;
	case WD_CLI_VERSION:
		printf("weightd %s (protocol 1)\n", WT_VERSION_STRING);
		return 0;
	default:
		break;
	}
	wd_config cfg;
	if (wd_config_init(&cfg) != WT_OK) {
		fprintf(stderr, "weightd: out of memory\n");
		return 1;
	}
	wt_errbuf err;
	int rv;
	if (wd_config_parse_args(&cfg, argc, argv, &err) != WT_OK) {
		fprintf(stderr, "weightd: %s\n", err.msg);
		wd_config_free(&cfg);
		return 2;
	}
	common_log_set(NULL, NULL, (int)cfg.log_level);

	/* Signals are taken synchronously by this thread (sigwait); every thread
	 * started from here on inherits the blocked mask. */
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);

	/* held (flock) until exit: a second daemon on it is refused here, before
	 * it touches the pid of the running one */
	int pid_fd = -1;
	if (cfg.pid_file[0] != '\0' &&
	    (rv = wd_pidfile_take(cfg.pid_file, (long)getpid(), &pid_fd, &err)) != WT_OK) {
		fprintf(stderr, "weightd: %s (%s)\n", err.msg, wt_errname(rv));
		wd_config_free(&cfg);
		return rv == WT_ECONFIG ? 2 : 1;
	}
	wd_server *srv = NULL;
	/* process-wide malloc settings are the program's call, not the cache's */
	cache_tune_malloc((uint32_t)cfg.chunk_bytes);
	rv = wd_server_create(&srv, &cfg, &err);
	int sig = 0;
	if (rv == WT_OK)
		rv = start_watched(srv, &sig, &err);
	if (rv != WT_OK && sig != 0) { /* asked to stop: not a failure */
		wd_server_close(srv);
		WT_LOG(WT_LOG_NOTICE, "stopped during start-up");
		wd_pidfile_release(cfg.pid_file, pid_fd);
		wd_config_free(&cfg);
		return 0;
	}
	if (rv != WT_OK) {
		fprintf(stderr, "weightd: %s (%s)\n", err.msg, wt_errname(rv));
		wd_server_close(srv); /* NULL-safe: a start that failed half-way */
		wd_pidfile_release(cfg.pid_file, pid_fd); /* no pid of a dead process left */
		wd_config_free(&cfg);
		return rv == WT_ECONFIG ? 2 : 1;
	}
	announce(srv, cfg.ready_file);

	reloader rl = {.cfg = &cfg, .argc = argc, .argv = argv, .srv = srv};
	pthread_mutex_init(&rl.lk, NULL);
	while (sig == 0) { /* a stop taken as the start ended: drain at once */
		sigwait(&set, &sig);
		if (sig == SIGHUP) {
			sig = 0;
			reload_async(&rl);
		}
	}
	reload_stop(&rl);
	pthread_mutex_destroy(&rl.lk);
	WT_LOG(WT_LOG_NOTICE, "%s: draining (up to %llu ms)", sig == SIGINT ? "SIGINT" : "SIGTERM",
	       (unsigned long long)cfg.drain_timeout_ms);
	/* the drain, the clean-up, then the socket close, each bounded (the
	 * socket's close can hang: stopbound.c) */
	stop_ctx sc = {.cfg = &cfg, .pid_fd = pid_fd};
	wd_stop(srv, cfg.drain_timeout_ms, stopped, &sc);
	wd_config_free(&cfg);
	return 0;
}
