/* cmd_admin.c — `weightctl admin stats|warm|evict|verify|reclaim`: cache operations;
 * `register|unregister`: models added at run time (kept across restarts). */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "client/weightctl/ctl_remote.h"
#include "client/weightctl/weightctl.h"
#include "common/common.h"
#include "loader/loader.h"
#include "weights/client.h"
#include "weights/weights.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: weightctl admin --endpoint URL stats|verify|reclaim\n"
	           "       weightctl admin --endpoint URL warm --model NAME [layout flags]\n"
	           "       weightctl admin --endpoint URL evict [--model NAME]\n"
	           "       weightctl admin --endpoint URL register --model NAME --uri URI\n"
	           "             [--config-override JSON | --architecture CLASS]\n"
	           "       weightctl admin --endpoint URL unregister --model NAME\n"
	           "warm produces a layout into the cache (no layout flags: the default one),\n"
	           "evict drops cached shards (of every layout; no --model: all), verify\n"
	           "re-hashes cached chunks (exit 1 if any is bad), stats prints counters,\n"
	           "reclaim gives back disk space held by dead chunks (prints disk bytes\n"
	           "before and after).\n"
	           "register adds a model (file:///dir, s3://bucket/prefix, http(s)://) after\n"
	           "the server opened it (a new checkpoint is read whole: how far it got goes\n"
	           "to stderr every 10 s) and keeps it across restarts; unregister removes a\n"
	           "registered model (one being registered too); its cached shards stay until\n"
	           "evict --model NAME. --config-override merges a JSON object over the model's\n"
	           "config.json (vLLM's hf_overrides; --architecture CLASS is\n"
	           "{\"architectures\": [CLASS]}, e.g. DeepSeekMTPModel for a DeepSeek-V3\n"
	           "checkpoint's MTP draft): part of the registration and of the revision.\n"
	           "register/unregister print one line; exit 0 ok, 2 usage, 1 other errors.\n"
	           "evict exits 4 when it left shards cached because they were being read\n"
	           "(busy; bad= is their count, the others are dropped): run it again later.\n"
	           "Every op but stats needs the server's admin token: --token-file F (or\n"
	           "WEIGHTCTL_TOKEN; --token T shows in ps).\n");
}

static const struct {
	const char *name;
	wt_admin_op op;
} ops[] = {
    {"stats", WT_ADMIN_STATS},       {"warm", WT_ADMIN_WARM},
    {"evict", WT_ADMIN_EVICT},       {"verify", WT_ADMIN_VERIFY},
    {"register", WT_ADMIN_REGISTER}, {"unregister", WT_ADMIN_UNREGISTER},
    {"reclaim", WT_ADMIN_RECLAIM},
};

typedef struct admin_args {
	int have_op;
	wt_admin_op op;
	const char *uri;      /* --uri, borrowed from argv */
	const char *override; /* --config-override, borrowed; or --architecture's NAME */
	bool by_arch;         /* override is --architecture's NAME */
	char *arch_json;      /* owned: the JSON --architecture NAME makes */
} admin_args;

static int admin_flag(void *ctx, const char *cmd, const char *flag, const char *val)
{
	admin_args *aa = ctx;
	if (strcmp(flag, "--uri") == 0) {
		aa->uri = val;
		return 0;
	}
	if (aa->override != NULL) { /* --config-override or --architecture, twice */
		fprintf(stderr,
		        "weightctl %s: give one of --config-override and --architecture, once (put "
		        "every key into one --config-override object)\n",
		        cmd);
		return -1;
	}
	aa->override = val;
	aa->by_arch = strcmp(flag, "--architecture") == 0;
	return 0;
}

static const ctl_flag admin_flags[] = {
    {"--uri", true, 0}, {"--config-override", true, 0}, {"--architecture", true, 0}};

/* The operation: the one positional argument. CTL_OK or CTL_USAGE (printed). */
static int admin_op(admin_args *aa, char **pos, size_t n_pos)
{
	if (n_pos == 0) {
		fprintf(stderr, "weightctl admin: name an operation: stats, warm, evict, verify, "
		                "reclaim, register or unregister\n");
		return CTL_USAGE;
	}
	for (size_t k = 0; k < sizeof(ops) / sizeof(ops[0]); k++)
		if (strcmp(pos[0], ops[k].name) == 0) {
			aa->op = ops[k].op;
			aa->have_op = 1;
			return CTL_OK;
		}
	fprintf(stderr,
	        "weightctl admin: unknown operation '%s'; use stats, warm, evict, verify, "
	        "reclaim, register or unregister\n",
	        pos[0]);
	return CTL_USAGE;
}

/* A registration's progress on stderr: the first report, then one every
 * 10 s (a new revision of a large checkpoint reads for minutes). */
typedef struct reg_watch {
	const char *model;
	uint64_t t0_ms, last_ms; /* t0: the request */
	unsigned reports;
} reg_watch;

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static int reg_progress(void *ctx, uint64_t read, uint64_t total)
{
	reg_watch *w = ctx;
	uint64_t now = now_ms();
	if (w->reports++ > 0 && now - w->last_ms < 10000)
		return 0;
	w->last_ms = now;
	char p[80];
	fprintf(stderr, "weightctl admin: registering %s: read for its revision, %s, %.0f s\n",
	        w->model, common_fmt_progress(p, sizeof(p), read, total),
	        (double)(now - w->t0_ms) / 1000.0);
	return 0;
}

/* register needs --model and --uri, unregister --model; neither takes a layout,
 * and --uri belongs to register only. CTL_OK or CTL_USAGE (printed). */
static int check_register_args(const admin_args *aa, const ctl_remote *r)
{
	bool reg = aa->op == WT_ADMIN_REGISTER, unreg = aa->op == WT_ADMIN_UNREGISTER;
	const char *msg = NULL;
	if (aa->uri != NULL && !reg)
		msg = "--uri is for register only";
	else if (aa->override != NULL && !reg)
		msg = "--config-override and --architecture are for register only";
	else if ((reg || unreg) && (r->model == NULL || r->model[0] == '\0'))
		msg = reg ? "register needs --model NAME and --uri URI"
		          : "unregister needs --model NAME";
	else if (reg && (aa->uri == NULL || aa->uri[0] == '\0'))
		msg = "register needs --uri URI (file:///dir, s3://bucket/prefix or http(s)://)";
	else if ((reg || unreg) && r->layout_given)
		msg = "register/unregister take no layout flags";
	if (msg == NULL)
		return CTL_OK;
	fprintf(stderr, "weightctl admin: %s\n", msg);
	return CTL_USAGE;
}

/* The cache ops: warm needs --model and alone takes layout flags (none: the
 * default layout); evict takes --model (none: every model), but no layout:
 * it drops the model's shards of every layout, so a layout flag would read
 * as "this layout only"; stats, verify and reclaim work on the whole cache.
 * CTL_OK or CTL_USAGE (printed). */
static int check_cache_args(const admin_args *aa, const ctl_remote *r)
{
	const char *msg = NULL;
	if (aa->op == WT_ADMIN_REGISTER || aa->op == WT_ADMIN_UNREGISTER)
		return CTL_OK;
	if (aa->op == WT_ADMIN_WARM && r->model == NULL)
		msg = "warm needs --model NAME (and the layout flags of the layout to produce)";
	else if (aa->op == WT_ADMIN_EVICT && r->layout_given)
		msg = "evict drops the model's cached shards of every layout; drop the layout "
		      "flags (only warm takes them)";
	else if (aa->op != WT_ADMIN_WARM && aa->op != WT_ADMIN_EVICT &&
	         (r->model != NULL || r->layout_given))
		msg = aa->op == WT_ADMIN_RECLAIM
		          ? "reclaim works on the whole cache; drop --model and the layout flags"
		      : aa->op == WT_ADMIN_VERIFY
		          ? "verify re-hashes the whole cache; drop --model and the layout flags"
		          : "stats are of the whole cache; drop --model and the layout flags";
	if (msg == NULL)
		return CTL_OK;
	fprintf(stderr, "weightctl admin: %s\n", msg);
	return CTL_USAGE;
}

int ctl_admin(int argc, char **argv)
{
	admin_args aa = {.have_op = 0, .op = WT_ADMIN_STATS, .uri = NULL};
	ctl_remote r;
	int code = CTL_OK;
	wt_client *c = NULL;
	wt_admin_result res = {0};
	wt_errbuf err;
	ctl_remote_init(&r);
	int help = 0;
	ctl_flagset own = CTL_FLAGSET(admin_flags, admin_flag, &aa);
	char *pos[1];
	size_t n_pos = 0;
	code = ctl_remote_parse(&r, "admin", argc, argv, &own, pos, 1, &n_pos, usage, &help);
	if (code != CTL_OK || help)
		goto done;
	if ((code = admin_op(&aa, pos, n_pos)) != CTL_OK)
		goto done;
	if ((code = check_register_args(&aa, &r)) != CTL_OK)
		goto done;
	if (aa.by_arch && ckpt_override_for_arch(aa.override, &aa.arch_json, &err) != WT_OK) {
		fprintf(stderr, "weightctl admin: --architecture: %s\n", err.msg);
		code = CTL_USAGE;
		goto done;
	}
	if ((code = check_cache_args(&aa, &r)) != CTL_OK)
		goto done;
	int rv;
	if (r.layout_given && (rv = wt_layout_check(&r.layout, &err)) != WT_OK) {
		ctl_remote_perror("admin", rv, &err);
		code = CTL_LAYOUT;
		goto done;
	}
	if ((code = ctl_remote_open(&r, "admin", &c)) != CTL_OK)
		goto done;
	reg_watch rw = {.model = r.model, .t0_ms = now_ms()};
	if (aa.op == WT_ADMIN_REGISTER)
		rv = wt_client_register_override(c, r.model, aa.uri,
		                                 aa.by_arch ? aa.arch_json : aa.override,
		                                 reg_progress, &rw, &res, &err);
	else
		rv = wt_client_admin(c, aa.op, r.model, aa.op == WT_ADMIN_WARM ? &r.layout : NULL,
		                     &res, &err);
	if (rv != WT_OK) {
		ctl_remote_perror("admin", rv, &err);
		code = ctl_remote_exit(rv);
		goto done;
	}
	if (aa.op == WT_ADMIN_REGISTER || aa.op == WT_ADMIN_UNREGISTER) {
		printf("%s\n", res.text); /* one line */
		goto done;
	}
	if (res.text[0] != '\0')
		printf("%s%s", res.text, res.text[strlen(res.text) - 1] == '\n' ? "" : "\n");
	if (aa.op == WT_ADMIN_RECLAIM)
		printf("disk_before=%" PRIu64 " disk_after=%" PRIu64 " live=%" PRIu64
		       " rewritten=%" PRIu64 "\n",
		       res.disk_before, res.disk_bytes, res.bytes, res.rewritten);
	else
		printf("bytes=%" PRIu64 " shards=%" PRIu64 " chunks=%" PRIu64 " bad=%" PRIu64
		       " disk=%" PRIu64 "\n",
		       res.bytes, res.shards, res.chunks, res.bad, res.disk_bytes);
	if (aa.op == WT_ADMIN_VERIFY && res.bad > 0) {
		fprintf(stderr, "weightctl admin: verify found %" PRIu64 " bad chunks\n", res.bad);
		code = CTL_ERR;
	}
	if (aa.op == WT_ADMIN_EVICT && res.bad > 0) {
		fprintf(stderr,
		        "weightctl admin: evict left %" PRIu64 " shard(s) cached: readers had "
		        "them open (busy); run it again when those reads end\n",
		        res.bad);
		code = CTL_BUSY;
	}
done:
	free(aa.arch_json);
	wt_admin_result_clear(&res);
	wt_client_close(c);
	ctl_remote_clear(&r);
	return code;
}
