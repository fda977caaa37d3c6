/*
 * cmd_caps.c — `weightctl capabilities --model-dir DIR | --endpoint URL --model NAME
 * [layout] [--json]`: per capability (partitioned TP/EP shards, each quant scheme,
 * pre-quantized pass-through, raw serving, in-place update, CUDA sink) whether this
 * model can have it and why not. Offline the planner runs here; remotely each layout
 * is planned by the daemon (ManifestRequest.plan_only), nothing is produced.
 */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "client/weightctl/ctl_common.h"
#include "client/weightctl/ctl_remote.h"
#include "client/weightctl/weightctl.h"
#include "weights/client.h"
#include "weights/engine.h"

#define MAX_CAPS 16

typedef struct cap {
	char name[48];
	bool ok;
	char why[WT_ERRMSG_MAX + 64];
} cap;

/* Plans layout l: offline (ck) or on the daemon (cl, model). */
typedef struct prober {
	const ckpt *ck;
	wt_client *cl;
	const char *model;
} prober;

static int probe(const prober *pr, const wt_layout *l, wt_errbuf *err)
{
	if (pr->ck != NULL) {
		sm_plan *p = NULL;
		int rv = shardmap_plan(pr->ck, l, &p, err);
		shardmap_plan_free(p);
		return rv;
	}
	return wt_client_check_layout(pr->cl, pr->model, l, err);
}

static cap *add(cap *caps, size_t *n, const char *name, int rv, const wt_errbuf *err)
{
	cap *c = &caps[(*n)++];
	snprintf(c->name, sizeof(c->name), "%s", name);
	c->ok = rv == WT_OK;
	if (rv == WT_OK)
		c->why[0] = '\0';
	else
		snprintf(c->why, sizeof(c->why), "%s: %s", wt_errname(rv), err->msg);
	return c;
}

static int probe_quant(const prober *pr, const wt_layout *base, wt_quant q, wt_errbuf *err)
{
	wt_layout l;
	wt_layout_init(&l);
	if (wt_layout_copy(&l, base) != WT_OK)
		return wt_seterr(err, WT_ENOMEM, "out of memory");
	l.quant = q;
	int rv = probe(pr, &l, err);
	wt_layout_clear(&l);
	return rv;
}

/* Pre-quantized pass-through: an FP8 or compressed-tensors checkpoint (quant_cfg: 0 unknown
 * (remote), 1 none, 2 fp8-tensor, 3 fp8-block, 4 int8-channel, 5 int4-group, 6 fbgemm_fp8:
 * fp8-channel) whose scheme the layout keeps. */
static void pass_through(const prober *pr, const wt_layout *base, int quant_cfg, cap *caps,
                         size_t *n)
{
	wt_errbuf err;
	wt_errclear(&err);
	if (quant_cfg == 0) {
		wt_seterr(&err, WT_EUNSUPPORTED,
		          "needs the checkpoint's quantization_config; run with --model-dir");
		add(caps, n, "prequant-passthrough", WT_EUNSUPPORTED, &err);
		return;
	}
	if (quant_cfg == 1) {
		wt_seterr(&err, WT_EUNSUPPORTED,
		          "the checkpoint is not pre-quantized in a layout's format (no fp8 or "
		          "compressed-tensors quantization_config; MXFP4 is always dequantized)");
		add(caps, n, "prequant-passthrough", WT_EUNSUPPORTED, &err);
		return;
	}
	static const wt_quant qs[] = {WT_QUANT_FP8_TENSOR, WT_QUANT_FP8_BLOCK,
	                              WT_QUANT_INT8_CHANNEL, WT_QUANT_INT4_GROUP,
	                              WT_QUANT_FP8_CHANNEL};
	wt_quant q = qs[quant_cfg - 2];
	int rv = probe_quant(pr, base, q, &err);
	cap *c = add(caps, n, "prequant-passthrough", rv, &err);
	if (rv == WT_OK)
		snprintf(c->why, sizeof(c->why), "with --quant %s", wt_quant_name(q));
}

static void cuda_sink(cap *caps, size_t *n)
{
	wt_cuda_sink *h = NULL;
	wt_errbuf err;
	wt_errclear(&err);
	int rv = wt_cuda_sink_create(&h, 0, &err);
	wt_cuda_sink_destroy(h);
	add(caps, n, "cuda-sink", rv, &err);
}

static size_t run_probes(const prober *pr, const wt_layout *base, int quant_cfg, cap *caps)
{
	size_t n = 0;
	wt_errbuf err;
	char name[48];
	wt_errclear(&err);
	snprintf(name, sizeof(name), "partitioned(tp=%u,ep=%u)", base->tp_size, base->ep_size);
	int part = probe(pr, base, &err);
	add(caps, &n, name, part, &err);
	for (int q = 0; q < WT_QUANT_COUNT_; q++) {
		wt_errclear(&err);
		snprintf(name, sizeof(name), "quant:%s", wt_quant_name((wt_quant)q));
		add(caps, &n, name, probe_quant(pr, base, (wt_quant)q, &err), &err);
	}
	pass_through(pr, base, quant_cfg, caps, &n);
	wt_layout raw;
	wt_layout_init(&raw);
	raw.raw = 1;
	wt_errclear(&err);
	int rawrv = probe(pr, &raw, &err);
	add(caps, &n, "raw", rawrv, &err);
	wt_errclear(&err);
	if (part != WT_OK && rawrv != WT_OK)
		wt_seterr(&err, WT_EUNSUPPORTED,
		          "neither the partitioned nor the raw layout plans");
	cap *u = add(caps, &n, "in-place-update",
	             part == WT_OK || rawrv == WT_OK ? WT_OK : err.code, &err);
	if (u->ok)
		snprintf(u->why, sizeof(u->why), "revision deltas of the %s layout",
		         part == WT_OK ? "partitioned" : "raw");
	cuda_sink(caps, &n);
	return n;
}

static void print_caps(const char *model, const char *layout, const cap *caps, size_t n, bool json)
{
	if (!json) {
		printf("model %s\nlayout %s\n", model, layout);
		for (size_t i = 0; i < n; i++)
			printf("%-26s %-3s %s\n", caps[i].name, caps[i].ok ? "yes" : "no",
			       caps[i].why);
		return;
	}
	json_t *arr = json_array();
	for (size_t i = 0; i < n; i++)
		json_array_append_new(arr,
		                      json_pack("{s:s,s:b,s:s}", "name", caps[i].name, "available",
		                                caps[i].ok, "reason", caps[i].why));
	json_t *o =
	    json_pack("{s:s,s:s,s:o}", "model", model, "layout", layout, "capabilities", arr);
	char *s = json_dumps(o, JSON_INDENT(2));
	if (s != NULL)
		printf("%s\n", s);
	free(s);
	json_decref(o);
}

static void usage(FILE *f)
{
	fprintf(f,
	        "usage: weightctl capabilities --model-dir DIR [layout flags] [--json]\n"
	        "       weightctl capabilities --endpoint URL --model NAME [layout flags] "
	        "[--json]\n"
	        "One line per capability: NAME yes|no REASON (the planner's message).\n"
	        "Exit 0 (even when some capability is not available), 2 usage, 1 other errors.\n");
}

static const ctl_flag caps_flags[] = {{"--json", false, 0}};

static int caps_flag(void *ctx, const char *cmd, const char *flag, const char *val)
{
	(void)cmd;
	(void)flag; /* --json */
	(void)val;
	*(bool *)ctx = true;
	return 0;
}

static int offline(int argc, char **argv)
{
	ctl_layout_args a;
	bool json = false;
	ctl_flagset own = CTL_FLAGSET(caps_flags, caps_flag, &json);
	int rc = ctl_parse_layout_args("capabilities", argc, argv, &own, &a);
	if (rc != CTL_OK || a.help) {
		usage(a.help && rc == CTL_OK ? stdout : stderr);
		ctl_layout_args_clear(&a);
		return rc;
	}
	store *s = NULL;
	ckpt *c = NULL;
	if ((rc = ctl_open_model("capabilities", a.model_dir, a.config_override, &s, &c)) ==
	    CTL_OK) {
		const ckpt_config *cfg = ckpt_get_config(c);
		int qc = cfg->quant == CKPT_QUANT_FP8_BLOCK    ? 3
		         : cfg->quant == CKPT_QUANT_FP8_TENSOR ? 2
		         : cfg->quant == CKPT_QUANT_CT_INT8    ? 4
		         : cfg->quant == CKPT_QUANT_CT_INT4    ? 5
		         : cfg->quant == CKPT_QUANT_FBGEMM_FP8 ? 6
		         : cfg->quant == CKPT_QUANT_CT_FP8     ? 6 /* per channel too */
		                                               : 1;
		prober pr = {.ck = c};
		cap caps[MAX_CAPS];
		size_t n = run_probes(&pr, &a.layout, qc, caps);
		char name[256], lay[1024];
		ctl_model_name(a.model_dir, name, sizeof(name));
		wt_layout_format(&a.layout, lay, sizeof(lay));
		print_caps(name, lay, caps, n, json);
	}
	ckpt_close(c);
	store_close(s);
	ctl_layout_args_clear(&a);
	return rc;
}

static int remote(int argc, char **argv)
{
	ctl_remote r;
	bool json = false;
	ctl_flagset own = CTL_FLAGSET(caps_flags, caps_flag, &json);
	wt_client *cl = NULL;
	ctl_remote_init(&r);
	int help = 0;
	int code =
	    ctl_remote_parse(&r, "capabilities", argc, argv, &own, NULL, 0, NULL, usage, &help);
	if (code != CTL_OK || help)
		goto done;
	if (r.model == NULL) {
		fprintf(stderr, "weightctl capabilities: --model NAME (with --endpoint) or "
		                "--model-dir DIR is required\n");
		code = CTL_USAGE;
		goto done;
	}
	if ((code = ctl_remote_open(&r, "capabilities", &cl)) != CTL_OK)
		goto done;
	prober pr = {.cl = cl, .model = r.model};
	cap caps[MAX_CAPS];
	size_t n = run_probes(&pr, &r.layout, 0, caps);
	char lay[1024];
	wt_layout_format(&r.layout, lay, sizeof(lay));
	print_caps(r.model, lay, caps, n, json);
done:
	wt_client_close(cl);
	ctl_remote_clear(&r);
	return code;
}

/* Offline (--model-dir: the planner here) or remote (--endpoint: the daemon's
 * planner); each parses its own flags, so a flag of the other is an error. */
int ctl_capabilities(int argc, char **argv)
{
	for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
		if (strcmp(argv[i], "--model-dir") == 0 ||
		    strncmp(argv[i], "--model-dir=", 12) == 0)
			return offline(argc, argv);
	return remote(argc, argv);
}
