/* ctl_common.c — argument parsing, model opening and exit codes for plan/shard. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "client/weightctl/ctl_common.h"
#include "common/common.h"
#include "client/weightctl/weightctl.h"

static const ctl_flag layout_cmd_flags[] = {
    {"--model-dir", true, 0},
    {"--out", true, 0},
    {"--name", true, 0},
    {"--rank-only", false, 0},
    {"--config-override", true, 0},
    {"--architecture", true, 0},
};

static int layout_cmd_flag(void *ctx, const char *cmd, const char *flag, const char *val)
{
	(void)cmd;
	ctl_layout_args *a = ctx;
	if (strcmp(flag, "--model-dir") == 0)
		a->model_dir = val;
	else if (strcmp(flag, "--out") == 0)
		a->out = val;
	else if (strcmp(flag, "--name") == 0)
		a->name = val;
	else if (strcmp(flag, "--config-override") == 0 || strcmp(flag, "--architecture") == 0) {
		if (a->config_override != NULL) {
			fprintf(
			    stderr,
			    "weightctl %s: give one of --config-override and --architecture, once "
			    "(put every key into one --config-override object)\n",
			    cmd);
			return -1;
		}
		a->config_override = val;
		a->by_arch = flag[2] == 'a';
	} else /* --rank-only */
		a->rank_only = true;
	return 0;
}

/* A layout flag: into a->layout; --tp-rank / --ep-rank remembered as given. */
static int layout_value_flag(void *ctx, const char *cmd, const char *flag, const char *val)
{
	ctl_layout_args *a = ctx;
	ctl_flagset ls = ctl_layout_flagset(&a->layout);
	if (ls.fn(ls.ctx, cmd, flag, val) != 0)
		return -1;
	a->tp_rank_set |= strcmp(flag, "--tp-rank") == 0;
	a->ep_rank_set |= strcmp(flag, "--ep-rank") == 0;
	return 0;
}

int ctl_parse_layout_args(const char *cmd, int argc, char **argv, const ctl_flagset *own,
                          ctl_layout_args *a)
{
	memset(a, 0, sizeof(*a));
	wt_layout_init(&a->layout);
	wt_errbuf err = {0};
	ctl_flagset sets[3] = {CTL_FLAGSET(layout_cmd_flags, layout_cmd_flag, a),
	                       ctl_layout_flagset(a), own ? *own : (ctl_flagset){0}};
	sets[1].fn = layout_value_flag;
	int help = 0;
	int rc = ctl_getopt(cmd, argc, argv, sets, own ? 3 : 2, NULL, 0, NULL, &help);
	if (rc != CTL_OK)
		return rc;
	a->help = help != 0;
	if (a->help)
		return CTL_OK;
	if (!a->model_dir) {
		fprintf(stderr, "weightctl %s: --model-dir DIR is required\n", cmd);
		return CTL_USAGE;
	}
	if (a->name != NULL && !ctl_model_name_ok(a->name)) {
		fprintf(stderr,
		        "weightctl %s: --name '%s' is not a usable model name; use 1-200 "
		        "characters without '/' or control characters, not starting with '.'\n",
		        cmd, a->name);
		return CTL_USAGE;
	}
	if (a->by_arch) {
		if (ckpt_override_for_arch(a->config_override, &a->arch_override, &err) != WT_OK) {
			fprintf(stderr, "weightctl %s: --architecture: %s\n", cmd, err.msg);
			return CTL_USAGE;
		}
		a->config_override = a->arch_override;
	}
	if (wt_layout_check(&a->layout, &err) != WT_OK) {
		fprintf(stderr, "weightctl %s: %s (%s)\n", cmd, err.msg, wt_errname(err.code));
		return CTL_LAYOUT;
	}
	return CTL_OK;
}

void ctl_layout_args_clear(ctl_layout_args *a)
{
	if (a) {
		wt_layout_clear(&a->layout);
		free(a->arch_override);
		a->arch_override = NULL;
	}
}

int ctl_open_model(const char *cmd, const char *dir, const char *override, store **s, ckpt **c)
{
	wt_errbuf err = {0};
	*s = NULL;
	*c = NULL;
	ckpt_open_opts o = {.config_override = override};
	if (store_open(s, dir, &err) != WT_OK || ckpt_open_with(c, *s, &o, &err) != WT_OK) {
		fprintf(stderr, "weightctl %s: %s: %s (%s)\n", cmd, dir, err.msg,
		        wt_errname(err.code));
		store_close(*s);
		*s = NULL;
		return CTL_ERR;
	}
	return CTL_OK;
}

int ctl_plan(const char *cmd, const ckpt *c, const wt_layout *l, sm_plan **p)
{
	wt_errbuf err = {0};
	int rv = shardmap_plan(c, l, p, &err);
	if (rv == WT_OK)
		return CTL_OK;
	fprintf(stderr, "weightctl %s: %s (%s)\n", cmd, err.msg, wt_errname(rv));
	return ctl_plan_exit(rv, false);
}

int ctl_plan_exit(int rv, bool remote)
{
	switch (rv) {
	case WT_ELAYOUT:
	case WT_EDUP:
	case WT_ESHAPE:
	case WT_EDTYPE:
	case WT_EUNSUPPORTED:
		return CTL_LAYOUT;
	case WT_ENOTFOUND:
	case WT_EINVAL:
		return remote ? CTL_ERR : CTL_LAYOUT;
	default:
		return CTL_ERR;
	}
}

bool ctl_model_name_ok(const char *name)
{
	size_t n = strlen(name);
	if (n == 0 || n > 200 || name[0] == '.')
		return false;
	for (size_t i = 0; i < n; i++)
		if (name[i] == '/' || (unsigned char)name[i] < 0x20 || name[i] == 0x7f)
			return false;
	return true;
}

void ctl_model_name(const char *dir, char *buf, size_t cap)
{
	if (strncmp(dir, "file://", 7) == 0)
		dir += 7;
	size_t n = strlen(dir);
	while (n > 1 && dir[n - 1] == '/')
		n--;
	size_t b = n;
	while (b > 0 && dir[b - 1] != '/')
		b--;
	snprintf(buf, cap, "%.*s", (int)(n - b), dir + b);
}

void ctl_shape_text(const int64_t *shape, int ndim, char *buf, size_t cap)
{
	size_t o = (size_t)snprintf(buf, cap, "[");
	for (int k = 0; k < ndim && o < cap; k++)
		o += (size_t)snprintf(buf + o, cap - o, "%s%lld", k ? ", " : "",
		                      (long long)shape[k]);
	if (o < cap)
		snprintf(buf + o, cap - o, "]");
}

int ctl_make_out_dir(const char *cmd, const char *dir)
{
	struct stat st;
	if (mkdir(dir, 0755) == 0 ||
	    (errno == EEXIST && stat(dir, &st) == 0 && S_ISDIR(st.st_mode)))
		return CTL_OK;
	fprintf(stderr, "weightctl %s: --out-dir '%s': %s; give a folder to write the ranks into\n",
	        cmd, dir, errno == EEXIST ? "exists and is not a folder" : strerror(errno));
	return CTL_ERR;
}

char *ctl_rank_path(const char *dir, uint32_t tp_size, uint32_t r)
{
	size_t cap = strlen(dir) + 64;
	char *p = malloc(cap);
	if (p != NULL)
		snprintf(p, cap, "%s/tp%u-ep%u.safetensors", dir, r % tp_size, r / tp_size);
	return p;
}

void ctl_catch_stop_signals(void (*h)(int))
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = h;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	static const int sigs[] = {SIGINT, SIGTERM};
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		struct sigaction old;
		if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler != SIG_IGN)
			sigaction(sigs[i], &sa, NULL);
	}
}

/* Made before the handler is installed: it only calls unlink, write, _exit. */
typedef char tmp_path[4096 + 24];
static tmp_path *g_tmps;
static size_t g_n_tmps;
static char g_said[2][160]; /* [0] SIGINT, [1] SIGTERM */

static void remove_tmps_and_exit(int sig)
{
	for (size_t i = 0; i < g_n_tmps; i++)
		if (g_tmps[i][0] != '\0')
			(void)unlink(g_tmps[i]);
	const char *m = g_said[sig == SIGTERM];
	size_t n = 0;
	while (m[n] != '\0')
		n++;
	ssize_t w = write(STDERR_FILENO, m, n);
	(void)w;
	_exit(128 + sig);
}

bool ctl_remove_tmps_on_stop(const char *cmd, const char *const *outs, size_t n)
{
	tmp_path *t = calloc(n ? n : 1, sizeof(*t));
	for (size_t i = 0; t != NULL && i < n; i++)
		if (outs[i] != NULL && !common_afile_tmp_path(outs[i], t[i], sizeof(t[i]))) {
			free(t);
			t = NULL;
		}
	if (t == NULL)
		return false;
	g_tmps = t; /* kept until exit: the handler may run at any time */
	g_n_tmps = n;
	static const char *names[2] = {"SIGINT", "SIGTERM"};
	for (int i = 0; i < 2; i++)
		snprintf(g_said[i], sizeof(g_said[i]),
		         "weightctl %s: interrupted by %s; no partial file left\n", cmd, names[i]);
	ctl_catch_stop_signals(remove_tmps_and_exit);
	return true;
}
