/*
 * cmd_watch.c — `weightctl watch`: print a model's revision, then each new
 * revision as weightd sees it (Watch requests: the server holds each one until
 * the revision changes or --timeout-ms passes, so nothing polls the store
 * from here).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/weightctl/ctl_remote.h"
#include "client/weightctl/weightctl.h"
#include "weights/client.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: weightctl watch --endpoint URL [--endpoint URL...] --model NAME\n"
	           "                       [--count N] [--wait-ms T] [--token-file F]\n"
	           "Prints the model's current revision, then one line per new revision as\n"
	           "it appears, until N lines were printed (default: forever). Each wait\n"
	           "lasts up to T ms on the server (default 30000, at most 60000), then is\n"
	           "renewed. Exit: 0 ok, 2 usage, 1 other.\n");
}

typedef struct watch_args {
	uint32_t count; /* 0 = forever */
	uint32_t wait_ms;
} watch_args;

static const ctl_flag watch_flags[] = {{"--count", true, 0}, {"--wait-ms", true, 0}};

static int watch_flag(void *ctx, const char *cmd, const char *flag, const char *val)
{
	watch_args *wa = ctx;
	if (strcmp(flag, "--count") == 0)
		return ctl_remote_u32(cmd, flag, val, 1, 1000000, &wa->count);
	return ctl_remote_u32(cmd, flag, val, 1, 60000, &wa->wait_ms); /* --wait-ms */
}

int ctl_watch(int argc, char **argv)
{
	watch_args wa = {.count = 0, .wait_ms = 30000};
	ctl_remote r;
	wt_client *c = NULL;
	wt_errbuf err;
	ctl_remote_init(&r);
	int help = 0;
	ctl_flagset own = CTL_FLAGSET(watch_flags, watch_flag, &wa);
	int code = ctl_remote_parse(&r, "watch", argc, argv, &own, NULL, 0, NULL, usage, &help);
	if (code != CTL_OK || help)
		goto done;
	if (r.model == NULL) {
		fprintf(stderr, "weightctl watch: --model NAME is required\n");
		usage(stderr);
		code = CTL_USAGE;
		goto done;
	}
	if ((code = ctl_remote_open(&r, "watch", &c)) != CTL_OK)
		goto done;
	char known[65] = "";
	for (uint32_t printed = 0; wa.count == 0 || printed < wa.count;) {
		char rev[65];
		int changed = 0;
		int rv = wt_client_watch(c, r.model, known, wa.wait_ms, rev, &changed, &err);
		if (rv != WT_OK) {
			ctl_remote_perror("watch", rv, &err);
			code = ctl_remote_exit(rv);
			goto done;
		}
		if (changed) {
			printf("%s\n", rev);
			fflush(stdout);
			printed++;
			snprintf(known, sizeof(known), "%s", rev);
		}
	}
done:
	wt_client_close(c);
	ctl_remote_clear(&r);
	return code;
}
