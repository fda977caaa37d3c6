/*
 * weightd.h — module interface of weightd/: the daemon's configuration and
 * server. weightd/main.c is a thin front end over this; tests link it too.
 *
 * Thread rules: a wd_config is built by one thread and read-only afterwards.
 * A wd_server may be shut down from any thread (typically the one that waits
 * for signals) while its own threads serve requests.
 */
#ifndef WT_WEIGHTD_H
#define WT_WEIGHTD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "weights/error.h"

/* ===================== configuration (config.c) ===================== */

typedef struct wd_strlist {
	char **v; /* owned strings */
	size_t n;
} wd_strlist;

/* dst = a copy of src (WT_OK, or WT_ENOMEM with dst empty); free with
 * wd_strlist_free, which leaves l empty. */
int wd_strlist_copy(wd_strlist *dst, const wd_strlist *src);
void wd_strlist_free(wd_strlist *l);

/* Every setting of the daemon. Filled from the table in config.c. */
typedef struct wd_config {
	wd_strlist listen;                 /* nng URLs (tcp://, ipc://) */
	char *models_dir;                  /* each subfolder is a model */
	wd_strlist model;                  /* NAME=URI */
	wd_strlist model_override;         /* NAME=JSON: a model key's configuration override */
	wd_strlist peer;                   /* URLs of the other nodes of the cache tier */
	char *cache_dir;                   /* RocksDB directory */
	uint64_t cache_max_bytes;          /* distinct chunk bytes budget */
	uint64_t cache_memory_bytes;       /* RAM blob cache of hot chunks; 0 = none */
	uint64_t cache_rehash_memory_hits; /* 1: hash every RAM hit, not only the first */
	uint64_t cache_reclaim_ratio; /* x100: reclaim disk when files > ratio x live; 0 = never */
	uint64_t chunk_bytes;         /* largest chunk; chunks never cross tensors */
	uint64_t workers;             /* threads serving requests (lane 0) */
	uint64_t producers;           /* threads producing layouts (lane 1) */
	uint64_t production_threads;  /* threads of one production (shardmap_produce_ex) */
	/* write-behind RAM faulted in at start (writeback_prefault_bytes) */
	uint64_t writeback_prefault_bytes;
	/* an expert stack's experts read and transformed at once (sm_produce_opts) */
	uint64_t stack_batch_bytes;
	char *metrics_listen;         /* http://HOST:PORT, "" = no metrics endpoint */
	char *stream_listen;          /* bulk data plane: tcp:// or ipc:// URL, "" = off */
	char *tls_cert_key_file;      /* tls+tcp:// listeners: certificate + key (PEM) */
	char *tls_ca_file;            /* "" = no client certificates required */
	uint64_t contexts;            /* nng contexts = requests served at once */
	uint64_t max_request_bytes;   /* NNG_OPT_RECVMAXSZ and our own length check */
	char *auth_token;             /* data role token; "" = data needs no token */
	uint64_t revalidate_ms;       /* re-check a model's revision at most this often */
	uint64_t drain_timeout_ms;    /* SIGTERM: wait this long for in-flight requests */
	uint64_t log_level;           /* WT_LOG_* */
	char *ready_file;             /* written once listening; "" = none */
	char *pid_file;               /* "" = none */
	char *server_id;              /* "" = host:pid */
	char *admin_token;            /* "" = none: admin ops only without any token */
	char *auth_token_file;        /* "" = none; else auth_token is read from it */
	char *admin_token_file;       /* "" = none; else admin_token is read from it */
	wd_strlist register_roots;    /* file:// REGISTER roots; empty = models_dir */
	wd_strlist register_hosts;    /* http(s):// REGISTER hosts (host[:port]) */
	wd_strlist register_buckets;  /* s3:// REGISTER buckets */
	uint64_t register_timeout_ms; /* bound on a REGISTER's source check */
	uint64_t max_connections;     /* pipes at once; more are closed at connect */
	uint64_t hello_timeout_ms;    /* unauthenticated pipes closed after this; 0 = never */
	uint64_t send_timeout_ms;     /* a stuck reply ends its stream or connection; 0 = never */
	uint64_t max_watchers;        /* Watch requests parked at once (< contexts) */
	uint64_t writeback_bytes;     /* RAM of produced chunks not yet in the cache */
	/* Which keys were set explicitly (by file or flag); index = table index. */
	uint8_t set[48];
} wd_config;

typedef enum {
	WD_CFG_STRING = 0, /* free text */
	WD_CFG_LIST,       /* repeatable string */
	WD_CFG_UINT,       /* decimal integer in [min, max] */
	WD_CFG_BYTES,      /* integer with optional K/M/G/T/P suffix (x1024) */
	WD_CFG_MS,         /* milliseconds */
	WD_CFG_LEVEL,      /* err|warning|notice|info|debug */
	WD_CFG_RATIO,      /* decimal with up to 2 decimals ("1.5"), stored x100; min/max x100 */
} wd_cfg_type;

/* One row of the declarative table (STYLE.md 16). */
typedef struct wd_cfg_key {
	const char *name; /* config-file key; the flag is --name with '_' -> '-' */
	wd_cfg_type type;
	uint64_t min, max; /* numeric types */
	const char *def;   /* default, as text (parsed like any other value) */
	const char *unit;  /* "bytes", "ms", "threads", "" */
	bool reload_safe;  /* may change without a restart */
	size_t off;        /* offset of the field in wd_config */
	const char *help;
} wd_cfg_key;

/* The table. Borrowed, static. */
const wd_cfg_key *wd_config_table(size_t *n);

/* Defaults from the table. Returns WT_OK or WT_ENOMEM. Free with wd_config_free. */
int wd_config_init(wd_config *c);
void wd_config_free(wd_config *c); /* NULL-safe; leaves c zeroed */

/*
 * Set one key from text. `where` names the source for messages ("weightd.conf:12",
 * "--workers"). Unknown key, bad or out-of-range value -> WT_ECONFIG with a
 * message starting with `where`. A list key appends; the first value from a new
 * source (file, then flags) replaces the earlier source's values.
 */
int wd_config_set(wd_config *c, const char *key, const char *value, const char *where,
                  wt_errbuf *err);
/* Whether `key` was set explicitly (file or flag), not left at its default;
 * false for an unknown key. */
bool wd_config_is_set(const wd_config *c, const char *key);

/* Load an INI file (keys at top level or under [weightd]). Errors are
 * WT_ECONFIG "path:line: ..."; a missing file is WT_ECONFIG "path: ...". */
int wd_config_load_file(wd_config *c, const char *path, wt_errbuf *err);

/*
 * Parse the command line with getopt_long (config_args.c): --config FILE is
 * applied first, then every other flag (--key-name VALUE or --key-name=VALUE,
 * written in full) over it. Returns WT_ECONFIG naming the flag on any error: an
 * unknown or abbreviated flag, a missing value, a word that is not a flag.
 * --help / --version are not applied here (wd_config_cli_action).
 */
int wd_config_parse_args(wd_config *c, int argc, char **argv, wt_errbuf *err);

/* What the command line asks besides a configuration: -h/--help, --version (the
 * first of them), else WD_CLI_RUN. Read with the same table, so the value of a
 * flag ("--ready-file --help") is never taken for one. */
typedef enum { WD_CLI_RUN = 0, WD_CLI_HELP, WD_CLI_VERSION } wd_cli_action;
wd_cli_action wd_config_cli_action(int argc, char **argv);

/* Longest token (auth_token, admin_token) in bytes. */
#define WD_TOKEN_MAX 1024

/*
 * Fill auth_token / admin_token from auth_token_file / admin_token_file or
 * WEIGHTD_AUTH_TOKEN / WEIGHTD_ADMIN_TOKEN (config_token.c) and check them:
 * UTF-8 without control characters, at most WD_TOKEN_MAX bytes, admin_token !=
 * auth_token, a key and its _file not both set. WT_ECONFIG naming the key.
 * wd_config_parse_args calls it last.
 */
int wd_config_resolve_tokens(wd_config *c, wt_errbuf *err);

/*
 * Take path as the daemon's pid file (pidfile.c): open it (O_NOFOLLOW, a
 * regular file), flock it and write pid. *fd_out holds the lock until
 * wd_pidfile_release. WT_EBUSY when another running weightd holds it (the
 * message names its pid), WT_ECONFIG for a symlink or a non-file, WT_EIO else.
 */
int wd_pidfile_take(const char *path, long pid, int *fd_out, wt_errbuf *err);
/* Unlink path and close fd (the lock goes with it); fd < 0 is a no-op. */
void wd_pidfile_release(const char *path, int fd);

/*
 * Check the whole configuration (config_check.c): settings that combine into
 * something invalid (max_watchers >= contexts, a tls+tcp:// URL without
 * tls_cert_key_file, no listen URL) and the TLS files (regular files; a key
 * readable by others is warned about). WT_ECONFIG saying what to change.
 * wd_config_parse_args calls it last; wd_server_open calls it first.
 */
int wd_config_check(const wd_config *c, wt_errbuf *err);

/* server_id: at most WD_SERVER_ID_MAX bytes of printable ASCII (0x20..0x7e;
 * no control character, no byte above 0x7e). It goes out in every HelloReply,
 * in clients' logs and in the client_id this weightd gives its peers; a longer
 * one was cut short silently. WT_ECONFIG naming where (file:line, the flag or
 * "server_id"). */
#define WD_SERVER_ID_MAX 127
int wd_config_check_server_id(const char *id, const char *where, wt_errbuf *err);
/* A model_override value NAME=JSON where it is written (file:line or flag): a NAME, one
 * non-empty JSON object (ckpt_override_canonical), NAME not given twice in l (the list so
 * far); WT_ECONFIG naming where and the fix. wd_config_check then asks that a model key names
 * NAME. */
int wd_config_check_override(const wd_strlist *l, const char *value, const char *where,
                             wt_errbuf *err);
/* metrics_listen: http://HOST:PORT that resolves (metrics.c); "" is off.
 * WT_ECONFIG naming the URL. */
int wd_metrics_check_url(const char *url, wt_errbuf *err);

/*
 * Open a file start-up reads (config, token, TLS): never waits on a FIFO
 * (O_NONBLOCK), must be a regular file; `secret`: warn when group or others
 * may read it. *fd_out is the caller's to close. WT_ECONFIG "what path: ...".
 */
int wd_config_open_file(const char *what, const char *path, bool secret, int *fd_out,
                        wt_errbuf *err);

/* A reload-safe setting of a running server's config (revalidate_ms,
 * drain_timeout_ms, log_level, register_timeout_ms, hello_timeout_ms): read
 * atomically, as wd_config_reload may store it from the reload thread. */
static inline uint64_t wd_cfg_live(const uint64_t *setting)
{
	return __atomic_load_n(setting, __ATOMIC_RELAXED);
}

/* Parse "4M", "1G", "512" (x1024 suffixes K M G T P, optional "iB"/"B"). */
int wd_config_parse_bytes(const char *text, uint64_t *out);

/*
 * Reload: copy the reload-safe keys of `fresh` into `cur` and report every
 * key whose value differs. For each difference, cb(ctx, key, applied) is
 * called: applied = true for reload-safe keys (now in cur), false for keys that
 * need a restart (cur keeps its value). Returns the number of differences.
 * The reload-safe keys are stored atomically: a running server's threads read
 * them with wd_cfg_live() while a SIGHUP reload stores them.
 */
size_t wd_config_reload(wd_config *cur, const wd_config *fresh,
                        void (*cb)(void *ctx, const wd_cfg_key *k, bool applied), void *ctx);

/* Print the flag reference (from the table) to f. */
void wd_config_usage(FILE *f);

/* ===================== server (server.c) ===================== */

typedef struct wd_server wd_server;

/*
 * Open everything the daemon needs: the cache, the models, the worker pool,
 * the nng socket with its contexts, and listen on every URL. On success the
 * server is serving (from its own threads) and *out is owned by the caller:
 * stop it with wd_server_close(). Errors name the failing URL, directory or key.
 */
int wd_server_open(wd_server **out, const wd_config *cfg, wt_errbuf *err);

/*
 * wd_server_open in two steps, for a start that a signal may stop (main.c):
 * create checks the configuration and allocates (no file, socket or thread);
 * start opens the rest. wd_server_stop_start, from another thread while start
 * runs, ends the model opens at their next block (a first start reads every
 * byte of each new model: minutes) and start then returns WT_ECANCELED.
 * Whatever start returns, the caller closes s with wd_server_close.
 */
int wd_server_create(wd_server **out, const wd_config *cfg, wt_errbuf *err);
int wd_server_start(wd_server *s, wt_errbuf *err);
void wd_server_stop_start(wd_server *s);

/* Apply the reload-safe settings of the server's config (after wd_config_reload
 * changed it): revalidate_ms; and add the models_dir subfolders that are new.
 * (log_level is the caller's sink; drain_timeout_ms is read at close.) */
void wd_server_reconfigure(wd_server *s);

/* URL actually bound for listen index i (tcp port 0 resolved). Borrowed. */
const char *wd_server_url(const wd_server *s, size_t i);
/* Port of the metrics endpoint (metrics_listen port 0 resolved); 0 when off. */
unsigned wd_server_metrics_port(const wd_server *s);

/*
 * The first half of a stop, everything but the socket: stop accepting requests,
 * let the in-flight ones finish (bounded by cfg->drain_timeout_ms), run out the
 * pools, and close the models and the cache. Replies still being sent go on;
 * requests arriving meanwhile get WT_ECANCELED. Returns the number of requests
 * abandoned at the deadline; a second call returns the first's count. NULL is
 * a no-op.
 */
size_t wd_server_drain(wd_server *s);
/*
 * Drain (wd_server_drain, unless done already) and close: the socket, its
 * contexts and connections, then free s. Returns the drain's count. NULL is a
 * no-op.
 */
size_t wd_server_close(wd_server *s);
/*
 * A bound on a stop (stopbound.c), for a daemon's main around wd_server_drain
 * and wd_server_close: unless wd_stop_bound_disarm() is called within ms, a
 * thread logs that `what` did not finish and ends the process with _exit(code)
 * (nng 1.5.2's socket close has been seen to wait forever; the cache is
 * crash-safe, and closed once the drain returned). One armed at a time: a
 * second arm is WT_EINVAL. Disarming an unarmed bound is a no-op. `what` is
 * borrowed until the disarm.
 */
int wd_stop_bound_arm(uint64_t ms, int code, const char *what);
/* What a main allows the drain beyond drain_timeout_ms (pools, RocksDB): it
 * takes well under a second when nothing hangs. */
#define WD_STOP_SLACK_MS 30000
/* What a main allows the socket close after the drain (status 0 past it: the
 * stop is done by then, nothing served, every shard closed on disk). */
#define WD_SOCKET_CLOSE_MS 3000
void wd_stop_bound_disarm(void);
/*
 * A daemon's stop, each part under its bound: wd_server_drain (status 1 past
 * drain_ms + WD_STOP_SLACK_MS), then stopped(ctx, left) (the caller's clean-up:
 * its pid file, its ready file, a log line; NULL for none), then
 * wd_server_close (status 0 past WD_SOCKET_CLOSE_MS). Returns the drain's
 * count. Uses the one stop bound: none may be armed.
 */
size_t wd_stop(wd_server *s, uint64_t drain_ms, void (*stopped)(void *ctx, size_t left), void *ctx);
/* The first step of a stop, callable from any thread before wd_server_close:
 * every model open in progress (a rescan's, a registration's) ends at its
 * next block, and no model opens again. */
void wd_server_cancel_opens(wd_server *s);

#endif
