/* cmd_models.c — `weightctl models`: the models a weightd serves. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "client/weightctl/ctl_remote.h"
#include "client/weightctl/weightctl.h"
#include "weights/client.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: weightctl models --endpoint URL [--endpoint URL...] [--timeout-ms N]\n"
	           "Prints: NAME ARCHITECTURE TENSORS BYTES REVISION URI SOURCE OVERRIDE (one\n"
	           "model a line, tab-separated); a model that fails validation:\n"
	           "NAME unavailable URI SOURCE ERROR. SOURCE: folder (a models_dir subfolder),\n"
	           "config (model = NAME=URI) or registered (weightctl admin register).\n"
	           "OVERRIDE: the configuration override (JSON) the model is served under, - for\n"
	           "none (or a weightd older than 1.10).\n");
}

/* "-" from a server too old to say where its models come from. */
static const char *src(const wt_model_info *mi)
{
	return mi->source[0] ? mi->source : "-";
}

int ctl_models(int argc, char **argv)
{
	ctl_remote r;
	int code = CTL_OK;
	wt_client *c = NULL;
	wt_model_info *list = NULL;
	size_t n = 0;
	wt_errbuf err;
	ctl_remote_init(&r);
	int help = 0;
	code = ctl_remote_parse(&r, "models", argc, argv, NULL, NULL, 0, NULL, usage, &help);
	if (code != CTL_OK || help)
		goto done;
	if ((code = ctl_remote_open(&r, "models", &c)) != CTL_OK)
		goto done;
	int rv = wt_client_list_models(c, &list, &n, &err);
	if (rv != WT_OK) {
		ctl_remote_perror("models", rv, &err);
		code = ctl_remote_exit(rv);
		goto done;
	}
	for (size_t i = 0; i < n; i++) {
		if (!list[i].available) {
			printf("%s\tunavailable\t%s\t%s\t%s\n", list[i].name, list[i].uri,
			       src(&list[i]), list[i].error);
			continue;
		}
		const char *ov = wt_model_list_override(list, n, i);
		printf("%s\t%s\t%" PRIu32 "\t%" PRIu64 "\t%.16s\t%s\t%s\t%s\n", list[i].name,
		       list[i].architecture, list[i].n_tensors, list[i].checkpoint_bytes,
		       list[i].revision, list[i].uri, src(&list[i]), ov[0] ? ov : "-");
	}
done:
	wt_model_list_free(list, n);
	wt_client_close(c);
	ctl_remote_clear(&r);
	return code;
}
