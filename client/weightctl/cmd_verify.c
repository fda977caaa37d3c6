/* cmd_verify.c — `weightctl verify-forward --model-dir DIR <layout flags> [--tokens a,b,..]`:
 * produce every rank of the layout offline, run the reference forward pass over
 * the checkpoint and over the rank tensors (engine/reference*), print the
 * largest logit difference and PASS/FAIL. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/weightctl/ctl_common.h"
#include "client/weightctl/weightctl.h"
#include "engine/reference_ckpt.h"

#define VERIFY_MAX_TOKENS 64

static void verify_usage(FILE *f)
{
	fprintf(f,
	        "usage: weightctl verify-forward --model-dir DIR <layout flags as for plan, rank "
	        "flags ignored>\n"
	        "                                [--tokens ID,ID,...]\n\n"
	        "Produce every rank of the layout, run the reference float32 forward pass over\n"
	        "the checkpoint (full) and over the rank tensors as a TP/EP engine would\n"
	        "(sharded, every EP group), and compare the logits. Layouts whose tensors hold\n"
	        "the checkpoint's values must agree within %.0e x max|logit| (float32\n"
	        "summation order only); quantized ones within the scheme's budget (fp8 %.2f,\n"
	        "int8 %.2f, int4 %.2f x max|logit|); unquantized outputs narrower than the\n"
	        "source (FP8 checkpoint as BF16) within %.2f.\n"
	        "Default tokens: 1, V-1, 17, V/2, 3, V/4, 2V/3.\n"
	        "Exit 0 PASS, 1 FAIL or error, 2 usage, 3 layout invalid for this model.\n",
	        ENGINE_REF_TOL_F32, ENGINE_REF_BUDGET_FP8, ENGINE_REF_BUDGET_INT8,
	        ENGINE_REF_BUDGET_INT4, ENGINE_REF_BUDGET_ROUND);
}

/* Parse "a,b,c" into toks; returns the count or -1. */
static int parse_tokens(const char *s, int64_t *toks)
{
	int n = 0;
	while (*s) {
		char *end;
		errno = 0;
		long long v = strtoll(s, &end, 10);
		if (end == s || errno != 0 || v < 0 || n == VERIFY_MAX_TOKENS ||
		    (*end != ',' && *end != '\0'))
			return -1;
		toks[n++] = v;
		s = *end == ',' ? end + 1 : end;
	}
	return n;
}

/* Split --tokens out of argv (the rest goes to the layout parser). */
static int take_tokens(int argc, char **argv, char **rest, int *n_rest, const char **tok)
{
	*n_rest = 0;
	for (int i = 0; i < argc; i++) {
		if (strcmp(argv[i], "--tokens") == 0) {
			if (i + 1 >= argc)
				return -1;
			*tok = argv[++i];
		} else if (strncmp(argv[i], "--tokens=", 9) == 0) {
			*tok = argv[i] + 9;
		} else {
			rest[(*n_rest)++] = argv[i];
		}
	}
	return 0;
}

static int run_verify(ctl_layout_args *a, const int64_t *toks, int n_tok)
{
	store *s = NULL;
	ckpt *c = NULL;
	sm_plan *p = NULL;
	engine_ref_result res;
	wt_errbuf err = {0};
	int64_t dflt[7];
	int rc = ctl_open_model("verify-forward", a->model_dir, &s, &c);
	if (rc != CTL_OK)
		return rc;
	/* plan once up front for the planner's own messages and exit codes */
	if ((rc = ctl_plan("verify-forward", c, &a->layout, &p)) != CTL_OK)
		goto out;
	if (n_tok == 0) {
		int64_t V = ckpt_get_config(c)->vocab_size;
		int64_t d[7] = {1, V - 1, 17, V / 2, 3, V / 4, 2 * V / 3};
		for (int i = 0; i < 7; i++)
			dflt[i] = d[i] < V ? d[i] : V - 1;
		toks = dflt;
		n_tok = 7;
	}
	int rv = engine_ref_verify(c, &a->layout, toks, (size_t)n_tok, NULL, NULL, &res, &err);
	if (rv != WT_OK) {
		fprintf(stderr, "weightctl verify-forward: %s (%s)\n", err.msg, wt_errname(rv));
		rc = rv == WT_EUNSUPPORTED ? CTL_LAYOUT : rv == WT_EINVAL ? CTL_USAGE : CTL_ERR;
		goto out;
	}
	char lay[1024];
	wt_layout_format(&a->layout, lay, sizeof(lay));
	printf("model %s (family %s)\nlayout %s\n", a->model_dir, shardmap_family(p), lay);
	printf("ranks %u, tokens %zu, outputs per token %lld, EP groups %u\n", res.n_ranks,
	       res.n_tok, (long long)res.width, a->layout.ep_size);
	size_t t = res.width ? res.diff.at / (size_t)res.width : 0;
	printf("max |full - sharded| %.3g (row %zu, column %zu, EP group %u), max |output| %.3g, "
	       "ratio %.3g, budget %.3g (%s)%s\n",
	       res.diff.max_abs_diff, t, res.width ? res.diff.at % (size_t)res.width : 0,
	       res.worst_group, res.diff.max_abs_ref,
	       res.diff.max_abs_ref > 0 ? res.diff.max_abs_diff / res.diff.max_abs_ref : 0.0,
	       res.budget, res.why, res.diff.nonfinite ? ", NaN/Inf present" : "");
	printf("%s\n", res.pass ? "PASS" : "FAIL");
	rc = res.pass ? CTL_OK : CTL_ERR;
out:
	shardmap_plan_free(p);
	ckpt_close(c);
	store_close(s);
	return rc;
}

int ctl_verify_forward(int argc, char **argv)
{
	char **rest = calloc((size_t)argc + 1, sizeof(char *));
	int n_rest = 0, n_tok = 0, rc;
	const char *tok = NULL;
	int64_t toks[VERIFY_MAX_TOKENS];
	ctl_layout_args a;
	if (rest == NULL) {
		fprintf(stderr, "weightctl verify-forward: out of memory\n");
		return CTL_ERR;
	}
	if (take_tokens(argc, argv, rest, &n_rest, &tok) != 0 ||
	    (tok && (n_tok = parse_tokens(tok, toks)) <= 0)) {
		fprintf(stderr,
		        "weightctl verify-forward: --tokens wants 1 to %d comma-separated "
		        "token ids, e.g. --tokens 1,17,300\n",
		        VERIFY_MAX_TOKENS);
		free(rest);
		verify_usage(stderr);
		return CTL_USAGE;
	}
	rc = ctl_parse_layout_args("verify-forward", n_rest, rest, &a);
	if (rc == CTL_OK && !a.help && (a.out || a.rank_only)) {
		fprintf(stderr, "weightctl verify-forward: --out and --rank-only do not apply; "
		                "every rank is checked\n");
		rc = CTL_USAGE;
	}
	if (rc != CTL_OK || a.help)
		verify_usage(a.help && rc == CTL_OK ? stdout : stderr);
	else
		rc = run_verify(&a, toks, n_tok);
	ctl_layout_args_clear(&a);
	free(rest);
	return rc;
}
