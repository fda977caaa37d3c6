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

/* Value of --flag VALUE or --flag=VALUE; NULL (and a message) if missing. */
static const char *value_of(const char *cmd, const char *flag, int argc, char **argv, int *i)
{
	const char *a = argv[*i];
	size_t n = strlen(flag);
	if (a[n] == '=')
		return a + n + 1;
	if (*i + 1 >= argc) {
		fprintf(stderr, "weightctl %s: %s needs a value\n", cmd, flag);
		return NULL;
	}
	return argv[++*i];
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

static int is_flag(const char *a, const char *flag)
{
	size_t n = strlen(flag);
	return strncmp(a, flag, n) == 0 && (a[n] == '\0' || a[n] == '=');
}

int ctl_remote_arg(ctl_remote *r, const char *cmd, int argc, char **argv, int *i)
{
	const char *a = argv[*i];
	const char *v;
	wt_errbuf err;
	if (is_flag(a, "--verbose")) {
		r->verbose = 1;
		(*i)++;
		return 1;
	}
	static const char *const valued[] = {
	    "--endpoint", "--model",       "--timeout-ms",  "--connect-timeout-ms",
	    "--token",    "--token-file",  "--retries",     "--retry-budget-ms",
	    "--window",   "--connections", "--tls-ca-file", "--tls-cert-key-file",
	    "--mode"};
	const char *f = NULL;
	for (size_t k = 0; k < sizeof(valued) / sizeof(valued[0]); k++)
		if (is_flag(a, valued[k]))
			f = valued[k];
	if (f == NULL) {
		int rv = wt_layout_parse_arg(&r->layout, argc, argv, i, &err);
		if (rv < 0)
			fprintf(stderr, "weightctl %s: %s\n", cmd, err.msg);
		if (rv > 0)
			r->layout_given = 1;
		return rv;
	}
	if ((v = value_of(cmd, f, argc, argv, i)) == NULL)
		return -1;
	(*i)++;
	if (strcmp(f, "--endpoint") == 0) {
		if (r->n_eps == CTL_MAX_ENDPOINTS) {
			fprintf(stderr, "weightctl %s: at most %d --endpoint\n", cmd,
			        CTL_MAX_ENDPOINTS);
			return -1;
		}
		r->eps[r->n_eps++] = v;
	} else if (strcmp(f, "--model") == 0) {
		r->model = v;
	} else if (strcmp(f, "--timeout-ms") == 0) { /* one request; not the connect phase */
		return ctl_remote_u32(cmd, f, v, 1, 86400000u, &r->o.request_timeout_ms) ? -1 : 1;
	} else if (strcmp(f, "--connect-timeout-ms") == 0) {
		return ctl_remote_u32(cmd, f, v, 1, 86400000u, &r->o.connect_timeout_ms) ? -1 : 1;
	} else if (strcmp(f, "--token") == 0) {
		r->o.token = v;
	} else if (strcmp(f, "--token-file") == 0) {
		return read_token_file(r, cmd, v) ? -1 : 1;
	} else if (strcmp(f, "--retries") == 0) {
		return ctl_remote_u32(cmd, f, v, 0, 1000, &r->o.max_retries) ? -1 : 1;
	} else if (strcmp(f, "--retry-budget-ms") == 0) {
		return ctl_remote_u32(cmd, f, v, 1, 86400000u, &r->o.retry_budget_ms) ? -1 : 1;
	} else if (strcmp(f, "--window") == 0) {
		return ctl_remote_u32(cmd, f, v, 1, 256, &r->o.window) ? -1 : 1;
	} else if (strcmp(f, "--connections") == 0) {
		return ctl_remote_u32(cmd, f, v, 1, 16, &r->o.connections) ? -1 : 1;
	} else if (strcmp(f, "--tls-ca-file") == 0) {
		r->o.tls_ca_file = v;
	} else if (strcmp(f, "--mode") == 0) {
		if (wt_fetch_mode_from_name(v, &r->o.mode, &err) != WT_OK) {
			fprintf(stderr, "weightctl %s: --mode: %s\n", cmd, err.msg);
			return -1;
		}
	} else { /* --tls-cert-key-file */
		r->o.tls_cert_key_file = v;
	}
	return 1;
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

int ctl_remote_parse(ctl_remote *r, const char *cmd, int argc, char **argv, ctl_own_arg_fn own,
                     void *ctx, void (*usage)(FILE *), int *help)
{
	*help = 0;
	for (int i = 1; i < argc;) {
		int rv = ctl_remote_arg(r, cmd, argc, argv, &i);
		if (rv == 0 && own != NULL)
			rv = own(ctx, argc, argv, &i);
		if (rv < 0)
			return CTL_USAGE;
		if (rv > 0)
			continue;
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			usage(stdout);
			*help = 1;
			return CTL_OK;
		}
		fprintf(stderr, "weightctl %s: unknown argument '%s'\n", cmd, argv[i]);
		usage(stderr);
		return CTL_USAGE;
	}
	return raw_mode_layout(r, cmd);
}
