/* ctl_remote.c — shared flags of the weightctl commands that talk to weightd. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/weightctl/ctl_remote.h"
#include "client/weightctl/weightctl.h"
#include "weights/weights.h"

static void stderr_log(void *ctx, int level, const char *msg)
{
	(void)ctx;
	fprintf(stderr, "weightctl: %s: %s\n", level <= WT_CLIENT_LOG_ERR ? "error" : "note", msg);
}

void ctl_remote_init(ctl_remote *r)
{
	memset(r, 0, sizeof(*r));
	wt_client_opts_init(&r->o);
	wt_layout_init(&r->layout);
}

void ctl_remote_clear(ctl_remote *r)
{
	wt_layout_clear(&r->layout);
}

int ctl_remote_u32(const char *cmd, const char *flag, const char *val, uint32_t min, uint32_t max,
                   uint32_t *out)
{
	char *end;
	errno = 0;
	unsigned long v = strtoul(val, &end, 10);
	if (errno != 0 || end == val || *end != '\0' || val[0] == '-' || v < min || v > max) {
		fprintf(stderr, "weightctl %s: %s '%s': use an integer in %u..%u\n", cmd, flag, val,
		        min, max);
		return -1;
	}
	*out = (uint32_t)v;
	return 0;
}

/* --token-file: the token on the file's first line (a trailing newline dropped),
 * so that it does not show in ps. 0 ok, -1 after a message. */
static int read_token_file(ctl_remote *r, const char *cmd, const char *path)
{
	FILE *f = fopen(path, "re");
	if (f == NULL) {
		fprintf(stderr, "weightctl %s: --token-file %s: %s\n", cmd, path, strerror(errno));
		return -1;
	}
	size_t n = fread(r->token_buf, 1, sizeof(r->token_buf) - 1, f);
	bool more = fgetc(f) != EOF;
	fclose(f);
	if (n > 0 && r->token_buf[n - 1] == '\n')
		n--;
	if (n > 0 && r->token_buf[n - 1] == '\r')
		n--;
	r->token_buf[n] = '\0';
	if (more || n == 0 || strlen(r->token_buf) != n) {
		fprintf(
		    stderr,
		    "weightctl %s: --token-file %s: want one line of 1..1024 bytes without NUL\n",
		    cmd, path);
		return -1;
	}
	r->o.token = r->token_buf;
	return 0;
}

static int endpoint_flag(ctl_remote *r, const char *cmd, const char *v)
{
	if (r->n_eps == CTL_MAX_ENDPOINTS) {
		fprintf(stderr, "weightctl %s: at most %d --endpoint\n", cmd, CTL_MAX_ENDPOINTS);
		return -1;
	}
	r->eps[r->n_eps++] = v;
	return 0;
}

static int mode_flag(ctl_remote *r, const char *cmd, const char *v)
{
	wt_errbuf err;
	if (wt_fetch_mode_from_name(v, &r->o.mode, &err) == WT_OK)
		return 0;
	fprintf(stderr, "weightctl %s: --mode: %s\n", cmd, err.msg);
	return -1;
}

/* The shared flags, by name. --timeout-ms is one request only; the dial + Hello
 * has its own --connect-timeout-ms. */
static const ctl_flag remote_flags[] = {
    {"--endpoint", true, 0},     {"--model", true, 0},
    {"--timeout-ms", true, 0},   {"--connect-timeout-ms", true, 0},
    {"--token", true, 0},        {"--token-file", true, 0},
    {"--retries", true, 0},      {"--retry-budget-ms", true, 0},
    {"--window", true, 0},       {"--connections", true, 0},
    {"--tls-ca-file", true, 0},  {"--tls-cert-key-file", true, 0},
    {"--mode", true, 0},         {"--verbose", false, 0},
    {"--cut-through", false, 0}, {"--stream", false, 0},
};

static int remote_flag(void *ctx, const char *cmd, const char *f, const char *v)
{
	ctl_remote *r = ctx;
	wt_client_opts *o = &r->o;
	if (strcmp(f, "--endpoint") == 0)
		return endpoint_flag(r, cmd, v);
	if (strcmp(f, "--model") == 0) {
		if (v[0] == '\0') { /* "" reads as no model: admin evict would drop all */
			fprintf(stderr,
			        "weightctl %s: --model '': name a model (weightctl models lists "
			        "them)\n",
			        cmd);
			return -1;
		}
		r->model = v;
	} else if (strcmp(f, "--timeout-ms") == 0)
		return ctl_remote_u32(cmd, f, v, 1, 86400000u, &o->request_timeout_ms);
	else if (strcmp(f, "--connect-timeout-ms") == 0)
		return ctl_remote_u32(cmd, f, v, 1, 86400000u, &o->connect_timeout_ms);
	else if (strcmp(f, "--token") == 0)
		o->token = v;
	else if (strcmp(f, "--token-file") == 0)
		return read_token_file(r, cmd, v);
	else if (strcmp(f, "--retries") == 0)
		return ctl_remote_u32(cmd, f, v, 0, 1000, &o->max_retries);
	else if (strcmp(f, "--retry-budget-ms") == 0)
		return ctl_remote_u32(cmd, f, v, 1, 86400000u, &o->retry_budget_ms);
	else if (strcmp(f, "--window") == 0)
		return ctl_remote_u32(cmd, f, v, 1, 256, &o->window);
	else if (strcmp(f, "--connections") == 0)
		return ctl_remote_u32(cmd, f, v, 1, 16, &o->connections);
	else if (strcmp(f, "--tls-ca-file") == 0)
		o->tls_ca_file = v;
	else if (strcmp(f, "--tls-cert-key-file") == 0)
		o->tls_cert_key_file = v;
	else if (strcmp(f, "--mode") == 0)
		return mode_flag(r, cmd, v);
	else if (strcmp(f, "--verbose") == 0)
		r->verbose = 1;
	else if (strcmp(f, "--cut-through") == 0)
		o->cut_through = 1;
	else if (strcmp(f, "--stream") == 0)
		o->stream = 1;
	return 0;
}

/* Layout flags: into r->layout, and remembered as given. */
static int remote_layout_flag(void *ctx, const char *cmd, const char *f, const char *v)
{
	ctl_remote *r = ctx;
	ctl_flagset ls = ctl_layout_flagset(&r->layout);
	if (ls.fn(ls.ctx, cmd, f, v) != 0)
		return -1;
	r->layout_given = 1;
	r->tp_rank_given |= strcmp(f, "--tp-rank") == 0;
	r->ep_rank_given |= strcmp(f, "--ep-rank") == 0;
	return 0;
}

int ctl_remote_open(ctl_remote *r, const char *cmd, wt_client **out)
{
	if (r->n_eps == 0) {
		fprintf(stderr,
		        "weightctl %s: --endpoint URL is required (tcp://HOST:PORT or "
		        "ipc:///PATH; repeat it for fail-over)\n",
		        cmd);
		return CTL_USAGE;
	}
	r->o.endpoints = r->eps;
	r->o.n_endpoints = r->n_eps;
	r->o.client_id = "weightctl/" WT_VERSION_STRING;
	if (r->o.token == NULL)
		r->o.token = getenv("WEIGHTCTL_TOKEN"); /* NULL or "" = none */
	if (r->verbose) {
		r->o.log = stderr_log;
		r->o.log_level = WT_CLIENT_LOG_INFO;
	}
	wt_errbuf err;
	int rv = wt_client_open(out, &r->o, &err);
	if (rv != WT_OK) {
		ctl_remote_perror(cmd, rv, &err);
		return rv == WT_EINVAL ? CTL_USAGE : CTL_ERR;
	}
	return CTL_OK;
}

int ctl_remote_exit(int rv)
{
	return rv == WT_ELAYOUT ? CTL_LAYOUT : CTL_ERR;
}

void ctl_remote_perror(const char *cmd, int rv, const wt_errbuf *err)
{
	fprintf(stderr, "weightctl %s: %s (%s)\n", cmd, err->msg[0] ? err->msg : wt_strerror(rv),
	        wt_errname(rv));
}

/* --mode raw: the raw layout (the --include names; every rank reads the same tensors,
 * so the other layout flags are dropped). --include is for --mode raw only. */
static int raw_mode_layout(ctl_remote *r, const char *cmd)
{
	if (r->o.mode != WT_MODE_RAW) {
		if (r->layout.n_include == 0)
			return CTL_OK;
		fprintf(stderr, "weightctl %s: --include names tensors of --mode raw only\n", cmd);
		return CTL_USAGE;
	}
	wt_layout raw;
	wt_layout_init(&raw);
	raw.raw = 1;
	raw.n_include = r->layout.n_include;
	raw.include = r->layout.include;
	r->layout.n_include = 0;
	r->layout.include = NULL;
	wt_layout_clear(&r->layout);
	r->layout = raw;
	return CTL_OK;
}

int ctl_remote_parse(ctl_remote *r, const char *cmd, int argc, char **argv, const ctl_flagset *own,
                     char **pos, size_t max_pos, size_t *n_pos, void (*usage)(FILE *), int *help)
{
	ctl_flagset sets[3] = {CTL_FLAGSET(remote_flags, remote_flag, r), ctl_layout_flagset(r),
	                       own ? *own : (ctl_flagset){0}};
	sets[1].fn = remote_layout_flag;
	int code = ctl_getopt(cmd, argc, argv, sets, own ? 3 : 2, pos, max_pos, n_pos, help);
	if (code != CTL_OK)
		return code;
	if (*help) {
		usage(stdout);
		return CTL_OK;
	}
	return raw_mode_layout(r, cmd);
}
