/* cmd_verify.c — `weightctl verify-forward --model-dir DIR <layout flags> [--tokens a,b,..]`:
 * produce every rank of the layout offline, run the reference forward pass over
 * the checkpoint and over the rank tensors (reference/), print the
 * largest logit difference and PASS/FAIL; a layout above a looser budget is
 * re-checked unquantized to tell quantization error from a slicing error. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/weightctl/ctl_common.h"
#include "client/weightctl/weightctl.h"
#include "reference/ckpt.h"

#define VERIFY_MAX_TOKENS 64

static void verify_usage(FILE *f)
{
	fprintf(
	    f,
	    "usage: weightctl verify-forward --model-dir DIR <layout flags as for plan, rank "
	    "flags ignored>\n"
	    "                                [--tokens ID,ID,...] [--budget R] [--logits FILE]\n\n"
	    "Produce every rank of the layout, run the reference float32 forward pass over\n"
	    "the checkpoint (full) and over the rank tensors as a TP/EP engine would\n"
	    "(sharded, every EP group), and compare the logits. Layouts whose tensors hold\n"
	    "the checkpoint's values must agree within %.0e x max|logit| (float32\n"
	    "summation order only); quantized ones within the scheme's budget (fp8 %.2f,\n"
	    "int8 %.2f, int4 %.2f x max|logit|; an MXFP4 source or a model with\n"
	    "gated-delta-net layers has its own, docs/reference.md); unquantized outputs\n"
	    "narrower than the source (FP8 checkpoint as BF16) within %.2f. --budget R\n"
	    "replaces those looser budgets (never the exact tolerance). A layout above\n"
	    "its looser budget is checked again unquantized (--quant none --dtype fp32):\n"
	    "if that agrees, the verdict is \"quantization error above budget\" (slicing\n"
	    "proven right).\n"
	    "Default tokens: 1, V-1, 17, V/2, 3, V/4, 2V/3. --logits FILE also writes the\n"
	    "full path's outputs as a NumPy .npy float32 array [tokens, V] (BERT: [tokens\n"
	    "+ 1, hidden], the last row the pooler's; RoBERTa: [tokens, hidden]; its sequence\n"
	    "classifiers: [tokens + 1, hidden], the last row the logits; the decoder\n"
	    "embedding models saved as base models: [tokens, hidden], the final hidden\n"
	    "states), e.g. to compare with another engine.\n"
	    "Exit 0 PASS, 1 FAIL or error, 2 usage, 3 layout invalid for this model.\n",
	    REF_TOL_F32, REF_BUDGET_FP8, REF_BUDGET_INT8, REF_BUDGET_INT4, REF_BUDGET_ROUND);
}

typedef struct verify_opts {
	int64_t toks[VERIFY_MAX_TOKENS];
	int n_tok;
	double budget;      /* --budget; 0 = the layout's own */
	const char *logits; /* --logits FILE; NULL = none */
} verify_opts;

/* Parse "a,b,c" into o->toks; a bad entry is named on stderr (-1). */
static int parse_tokens(const char *s, verify_opts *o)
{
	for (int n = 1;; n++) {
		const char *comma = strchr(s, ',');
		int len = comma ? (int)(comma - s) : (int)strlen(s);
		char *end;
		errno = 0;
		long long v = len > 0 && s[0] >= '0' && s[0] <= '9' ? strtoll(s, &end, 10) : -1;
		if (v < 0 || errno != 0 || end != s + len) {
			fprintf(stderr,
			        "weightctl verify-forward: --tokens entry %d '%.*s' is not a token "
			        "id (a non-negative integer); e.g. --tokens 1,17,300\n",
			        n, len, s);
			return -1;
		}
		if (n > VERIFY_MAX_TOKENS) {
			fprintf(stderr,
			        "weightctl verify-forward: --tokens entry %d (%lld): at most %d "
			        "tokens\n",
			        n, v, VERIFY_MAX_TOKENS);
			return -1;
		}
		o->toks[n - 1] = v;
		o->n_tok = n;
		if (comma == NULL)
			return 0;
		s = comma + 1;
	}
}

static int parse_budget(const char *s, verify_opts *o)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (*s == '\0' || *end != '\0' || errno != 0 || !(v > 0.0 && v <= 10.0)) {
		fprintf(stderr,
		        "weightctl verify-forward: --budget '%s': want a ratio to max|logit| "
		        "in (0, 10], e.g. --budget 0.15\n",
		        s);
		return -1;
	}
	o->budget = v;
	return 0;
}

static const ctl_flag verify_flags[] = {
    {"--tokens", true, 0}, {"--budget", true, 0}, {"--logits", true, 0}};

static int verify_flag(void *ctx, const char *cmd, const char *flag, const char *val)
{
	(void)cmd;
	if (strcmp(flag, "--logits") == 0) {
		((verify_opts *)ctx)->logits = val;
		return 0;
	}
	return strcmp(flag, "--tokens") == 0 ? parse_tokens(val, ctx) : parse_budget(val, ctx);
}

/* a rows x width float32 array as NumPy's .npy format 1.0 (little-endian '<f4') */
static int write_npy(const char *path, const float *x, size_t rows, int64_t width)
{
	char hdr[128];
	int n = snprintf(hdr, sizeof(hdr),
	                 "{'descr': '<f4', 'fortran_order': False, 'shape': (%zu, %lld), }", rows,
	                 (long long)width);
	size_t len = 10 + (size_t)n + 1, pad = (64 - len % 64) % 64; /* the header ends in \n */
	FILE *f = fopen(path, "wb");
	if (f == NULL)
		return -1;
	unsigned char magic[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0};
	uint16_t hl = (uint16_t)((size_t)n + pad + 1);
	magic[8] = (unsigned char)(hl & 0xff);
	magic[9] = (unsigned char)(hl >> 8);
	int ok = fwrite(magic, 1, 10, f) == 10 && fwrite(hdr, 1, (size_t)n, f) == (size_t)n &&
	         fprintf(f, "%*s\n", (int)pad, "") == (int)pad + 1 &&
	         fwrite(x, sizeof(float), rows * (size_t)width, f) == rows * (size_t)width;
	if (fclose(f) != 0)
		ok = 0;
	return ok ? 0 : -1;
}

/* --logits: the full path's outputs into o->logits */
static int save_logits(const ckpt *c, const verify_opts *o)
{
	float *x;
	size_t rows;
	int64_t width;
	wt_errbuf err = {0};
	int rv = ref_full_outputs(c, o->toks, (size_t)o->n_tok, &x, &rows, &width, &err);
	if (rv != WT_OK) {
		fprintf(stderr, "weightctl verify-forward: --logits: %s (%s)\n", err.msg,
		        wt_errname(rv));
		return CTL_ERR;
	}
	int bad = write_npy(o->logits, x, rows, width);
	if (bad)
		fprintf(stderr, "weightctl verify-forward: --logits %s: %s; pick a writable path\n",
		        o->logits, strerror(errno));
	else
		printf("logits [%zu, %lld] written to %s\n", rows, (long long)width, o->logits);
	free(x);
	return bad ? CTL_ERR : CTL_OK;
}

/* Tokens below V (the defaults when none were given); CTL_USAGE naming a bad one. */
static int check_tokens(verify_opts *o, int64_t V)
{
	if (o->n_tok == 0) {
		int64_t d[7] = {1, V - 1, 17, V / 2, 3, V / 4, 2 * V / 3};
		for (int i = 0; i < 7; i++)
			o->toks[i] = d[i] < V ? d[i] : V - 1;
		o->n_tok = 7;
		return CTL_OK;
	}
	for (int i = 0; i < o->n_tok; i++)
		if (o->toks[i] >= V) {
			fprintf(stderr,
			        "weightctl verify-forward: --tokens entry %d (%lld) is not below "
			        "the model's vocab_size %lld\n",
			        i + 1, (long long)o->toks[i], (long long)V);
			return CTL_USAGE;
		}
	return CTL_OK;
}

static void print_result(const ctl_layout_args *a, const sm_plan *p, const ref_result *res)
{
	char lay[1024];
	wt_layout_format(&a->layout, lay, sizeof(lay));
	printf("model %s (family %s)\nlayout %s\n", a->model_dir, shardmap_family(p), lay);
	printf("ranks %u, tokens %zu, outputs per token %lld, EP groups %u\n", res->n_ranks,
	       res->n_tok, (long long)res->width, a->layout.ep_size);
	size_t t = res->width ? res->diff.at / (size_t)res->width : 0;
	printf("max |full - sharded| %.3g (row %zu, column %zu, EP group %u), max |output| %.3g, "
	       "ratio %.3g, budget %.3g (%s)%s\n",
	       res->diff.max_abs_diff, t, res->width ? res->diff.at % (size_t)res->width : 0,
	       res->worst_group, res->diff.max_abs_ref,
	       res->diff.max_abs_ref > 0 ? res->diff.max_abs_diff / res->diff.max_abs_ref : 0.0,
	       res->budget, res->why, res->diff.nonfinite ? ", NaN/Inf present" : "");
}

static double ratio_of(const ref_result *r)
{
	return r->diff.max_abs_ref > 0 ? r->diff.max_abs_diff / r->diff.max_abs_ref : 0.0;
}

/*
 * A layout above a looser budget: check the same layout unquantized in float32
 * (exact tolerance). Agreement there proves the slicing, so the excess is the
 * scheme's (or the narrower dtype's) error on this model, not a shard error.
 */
static int explain_failure(const ckpt *c, const ctl_layout_args *a, const verify_opts *o,
                           const ref_result *res)
{
	if (res->diff.nonfinite || res->budget <= REF_TOL_F32) {
		printf("FAIL: %s\n",
		       res->diff.nonfinite
		           ? "NaN/Inf in the outputs"
		           : "the shards disagree with the checkpoint (slicing error)");
		return CTL_ERR;
	}
	wt_layout ex;
	ref_result r2;
	wt_errbuf err = {0};
	wt_layout_init(&ex);
	int rv = wt_layout_copy(&ex, &a->layout);
	ex.quant = WT_QUANT_NONE;
	ex.dtype = WT_F32;
	if (rv == WT_OK)
		rv = ref_verify(c, &ex, o->toks, (size_t)o->n_tok, NULL, NULL, &r2, &err);
	wt_layout_clear(&ex);
	const char *what = a->layout.quant != WT_QUANT_NONE ? "quantization" : "rounding";
	if (rv != WT_OK) {
		printf("FAIL: %s error above budget (ratio %.3g > %.3g); the unquantized re-check "
		       "did not run: %s (%s)\n",
		       what, ratio_of(res), res->budget, err.msg, wt_errname(rv));
	} else if (r2.pass) {
		printf("FAIL: %s error above budget (ratio %.3g > %.3g); the same layout "
		       "unquantized (--quant none --dtype fp32) agrees (ratio %.3g <= %.0e), so "
		       "the slicing is right: the scheme is too coarse for this model (accept it "
		       "with --budget, or exclude the sensitive modules)\n",
		       what, ratio_of(res), res->budget, ratio_of(&r2), REF_TOL_F32);
	} else {
		printf("FAIL: the shards disagree with the checkpoint even unquantized "
		       "(--quant none --dtype fp32: ratio %.3g > %.0e): a slicing error\n",
		       ratio_of(&r2), REF_TOL_F32);
	}
	return CTL_ERR;
}

static int run_verify(ctl_layout_args *a, verify_opts *o)
{
	store *s = NULL;
	ckpt *c = NULL;
	sm_plan *p = NULL;
	ref_result res;
	wt_errbuf err = {0};
	int rc = ctl_open_model("verify-forward", a->model_dir, a->config_override, &s, &c);
	if (rc != CTL_OK)
		return rc;
	/* plan once up front for the planner's own messages and exit codes */
	if ((rc = ctl_plan("verify-forward", c, &a->layout, &p)) != CTL_OK ||
	    (rc = check_tokens(o, ckpt_get_config(c)->vocab_size)) != CTL_OK)
		goto out;
	int rv = ref_verify(c, &a->layout, o->toks, (size_t)o->n_tok, NULL, NULL, &res, &err);
	if (rv != WT_OK) {
		fprintf(stderr, "weightctl verify-forward: %s (%s)\n", err.msg, wt_errname(rv));
		rc = rv == WT_EUNSUPPORTED ? CTL_LAYOUT : rv == WT_EINVAL ? CTL_USAGE : CTL_ERR;
		goto out;
	}
	if (o->budget > 0 && res.budget > REF_TOL_F32) {
		res.budget = o->budget;
		res.why = "--budget";
		res.pass = ref_within(&res.diff, o->budget);
	}
	print_result(a, p, &res);
	if (o->logits != NULL && (rc = save_logits(c, o)) != CTL_OK)
		goto out;
	if (res.pass) {
		printf("PASS\n");
		rc = CTL_OK;
	} else {
		rc = explain_failure(c, a, o, &res);
	}
out:
	shardmap_plan_free(p);
	ckpt_close(c);
	store_close(s);
	return rc;
}

int ctl_verify_forward(int argc, char **argv)
{
	verify_opts o = {.n_tok = 0};
	ctl_layout_args a;
	ctl_flagset own = CTL_FLAGSET(verify_flags, verify_flag, &o);
	int rc = ctl_parse_layout_args("verify-forward", argc, argv, &own, &a);
	if (rc == CTL_OK && !a.help && (a.out || a.rank_only || a.name)) {
		fprintf(stderr, "weightctl verify-forward: --out, --name and --rank-only do not "
		                "apply; every rank is checked and nothing is written\n");
		rc = CTL_USAGE;
	}
	if (rc != CTL_OK || a.help)
		verify_usage(a.help && rc == CTL_OK ? stdout : stderr);
	else
		rc = run_verify(&a, &o);
	ctl_layout_args_clear(&a);
	return rc;
}
