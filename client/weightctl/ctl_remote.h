/* ctl_remote.h — flags shared by the weightctl commands that talk to weightd
 * (fetch, models, manifest, admin): endpoints, timeouts, token, model, layout. */
#ifndef WT_CTL_REMOTE_H
#define WT_CTL_REMOTE_H

#include <stdio.h>

#include "client/weightctl/ctl_opt.h"
#include "weights/client.h"
#include "weights/layout.h"

#define CTL_MAX_ENDPOINTS 16

typedef struct ctl_remote {
	const char *eps[CTL_MAX_ENDPOINTS]; /* borrowed from argv */
	size_t n_eps;
	wt_client_opts o;
	const char *model; /* borrowed; NULL if not given */
	wt_layout layout;  /* owned: wt_layout_clear() via ctl_remote_clear */
	int layout_given;  /* a layout flag was seen */
	int tp_rank_given; /* --tp-rank was */
	int ep_rank_given; /* --ep-rank was */
	int verbose;
	char token_buf[1100]; /* --token-file's token (o.token points here) */
} ctl_remote;

void ctl_remote_init(ctl_remote *r);
void ctl_remote_clear(ctl_remote *r);

/*
 * Parse argv[1..argc) with getopt_long (ctl_opt.h): the shared flags (--endpoint
 * URL (repeatable), --model NAME, --timeout-ms N (one request), --connect-timeout-ms
 * N (dial + Hello), --token T, --token-file F, --retries N, --retry-budget-ms N,
 * --window N, --connections N, --tls-ca-file F, --tls-cert-key-file F, --mode
 * auto|partitioned|raw, --verbose), the layout flags, -h/--help (usage to stdout,
 * *help = 1) and the command's own flags (own; NULL = none). Positional arguments
 * go to pos (at most max_pos; see ctl_getopt). Errors are printed. Returns CTL_OK
 * or CTL_USAGE.
 */
int ctl_remote_parse(ctl_remote *r, const char *cmd, int argc, char **argv, const ctl_flagset *own,
                     char **pos, size_t max_pos, size_t *n_pos, void (*usage)(FILE *), int *help);

/* Open a client on the endpoints (prints the error). Without --token or
 * --token-file the token is $WEIGHTCTL_TOKEN, if set. Returns CTL_OK or an exit code. */
int ctl_remote_open(ctl_remote *r, const char *cmd, wt_client **out);

/* Exit code for a failed library call: CTL_LAYOUT for WT_ELAYOUT, else CTL_ERR. */
int ctl_remote_exit(int rv);

/* Print "weightctl CMD: MESSAGE (WT_ECODE)" to stderr. */
void ctl_remote_perror(const char *cmd, int rv, const wt_errbuf *err);

/* Parse a decimal value for flag into [min, max]; prints a usage error. 0 ok, -1 bad. */
int ctl_remote_u32(const char *cmd, const char *flag, const char *val, uint32_t min, uint32_t max,
                   uint32_t *out);

#endif
