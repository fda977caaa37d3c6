/* cmd_manifest.c — `weightctl manifest`: one rank's tensors, hashes and totals. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "client/weightctl/ctl_common.h"
#include "client/weightctl/ctl_remote.h"
#include "client/weightctl/weightctl.h"
#include "weights/client.h"
#include "weights/weights.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: weightctl manifest --endpoint URL [--endpoint URL...] --model NAME\n"
	           "                          [layout flags, as `weightctl shard`]\n"
	           "Prints the header (model, revision, layout, rank, totals), then one tensor a\n"
	           "line: NAME DTYPE SHAPE NBYTES ROLE CHUNKS XXH3-128.\n");
}

static void print_manifest(const wt_manifest *m)
{
	printf("model: %s\nrevision: %s\nlayout: %s\nrank: tp_rank=%u,ep_rank=%u\nformat: %u\n",
	       wt_manifest_model(m), wt_manifest_revision(m), wt_manifest_layout_text(m),
	       wt_manifest_tp_rank(m), wt_manifest_ep_rank(m), wt_manifest_format_version(m));
	printf("tensors: %zu\nbytes: %" PRIu64 "\nchunks: %zu\ncheckpoint_bytes: %" PRIu64
	       "\ntied_lm_head: %s\n",
	       wt_manifest_n_tensors(m), wt_manifest_total_bytes(m), wt_manifest_n_chunks(m),
	       wt_manifest_checkpoint_bytes(m), wt_manifest_tied_lm_head(m) ? "yes" : "no");
	printf("mode: %s%s%s\n", wt_fetch_mode_name(wt_manifest_mode(m)),
	       wt_manifest_mode_reason(m)[0] ? " " : "", wt_manifest_mode_reason(m));
	for (size_t i = 0; i < wt_manifest_n_skipped(m); i++)
		printf("skipped: %s\n", wt_manifest_skipped(m, i));
	for (size_t i = 0; i < wt_manifest_n_tensors(m); i++) {
		wt_tensor_info t;
		wt_manifest_tensor(m, i, &t);
		char shape[256] = "[";
		size_t n = 1;
		for (int d = 0; d < t.ndim && n < sizeof(shape); d++)
			n += (size_t)snprintf(shape + n, sizeof(shape) - n, "%s%" PRId64,
			                      d ? "," : "", t.shape[d]);
		if (n < sizeof(shape) - 1)
			snprintf(shape + n, sizeof(shape) - n, "]");
		char hex[33];
		wt_hash_hex(t.hash, hex);
		printf("%s\t%s\t%s\t%" PRIu64 "\t%s%s\t%zu\t%s\n", t.name, wt_dtype_name(t.dtype),
		       shape, t.nbytes, wt_tensor_role_name(t.role),
		       t.requantized ? ",requantized" : "", t.n_chunks, hex);
	}
}

int ctl_manifest(int argc, char **argv)
{
	ctl_remote r;
	int code = CTL_OK;
	wt_client *c = NULL;
	wt_manifest *m = NULL;
	wt_errbuf err;
	ctl_remote_init(&r);
	int help = 0;
	code = ctl_remote_parse(&r, "manifest", argc, argv, NULL, NULL, 0, NULL, usage, &help);
	if (code != CTL_OK || help)
		goto done;
	if (r.model == NULL) {
		fprintf(stderr, "weightctl manifest: --model NAME is required\n");
		code = CTL_USAGE;
		goto done;
	}
	int rv = wt_layout_check(&r.layout, &err);
	if (rv != WT_OK) {
		ctl_remote_perror("manifest", rv, &err);
		code = CTL_LAYOUT;
		goto done;
	}
	if ((code = ctl_remote_open(&r, "manifest", &c)) != CTL_OK)
		goto done;
	if ((rv = wt_client_get_manifest(c, r.model, &r.layout, &m, &err)) != WT_OK) {
		ctl_remote_perror("manifest", rv, &err);
		code = ctl_plan_exit(rv, true); /* as `weightctl plan` */
		goto done;
	}
	print_manifest(m);
done:
	wt_manifest_free(m);
	wt_client_close(c);
	ctl_remote_clear(&r);
	return code;
}
