/* cmd_admin.c — `weightctl admin stats|warm|evict|verify`: cache operations. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "client/weightctl/ctl_remote.h"
#include "client/weightctl/weightctl.h"
#include "weights/client.h"
#include "weights/weights.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: weightctl admin --endpoint URL stats|warm|evict|verify\n"
	           "                       [--model NAME [layout flags]]\n"
	           "warm produces a layout into the cache, evict drops cached shards, verify\n"
	           "re-hashes cached chunks (exit 1 if any is bad), stats prints counters.\n");
}

static const struct {
	const char *name;
	wt_admin_op op;
} ops[] = {
    {"stats", WT_ADMIN_STATS},
    {"warm", WT_ADMIN_WARM},
    {"evict", WT_ADMIN_EVICT},
    {"verify", WT_ADMIN_VERIFY},
};

int ctl_admin(int argc, char **argv)
{
	ctl_remote r;
	int code = CTL_OK, have_op = 0;
	wt_admin_op op = WT_ADMIN_STATS;
	wt_client *c = NULL;
	wt_admin_result res = {0};
	wt_errbuf err;
	ctl_remote_init(&r);
	for (int i = 1; i < argc;) {
		int rv = ctl_remote_arg(&r, "admin", argc, argv, &i);
		if (rv < 0) {
			code = CTL_USAGE;
			goto done;
		}
		if (rv > 0)
			continue;
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			usage(stdout);
			goto done;
		}
		int found = 0;
		for (size_t k = 0; k < sizeof(ops) / sizeof(ops[0]) && !have_op; k++)
			if (strcmp(argv[i], ops[k].name) == 0) {
				op = ops[k].op;
				found = have_op = 1;
			}
		if (!found) {
			fprintf(stderr, "weightctl admin: unknown argument '%s'\n", argv[i]);
			usage(stderr);
			code = CTL_USAGE;
			goto done;
		}
		i++;
	}
	if (!have_op) {
		fprintf(stderr,
		        "weightctl admin: name an operation: stats, warm, evict or verify\n");
		code = CTL_USAGE;
		goto done;
	}
	if (r.layout_given && r.model == NULL) {
		fprintf(stderr, "weightctl admin: layout flags need --model NAME\n");
		code = CTL_USAGE;
		goto done;
	}
	int rv;
	if (r.layout_given && (rv = wt_layout_check(&r.layout, &err)) != WT_OK) {
		ctl_remote_perror("admin", rv, &err);
		code = CTL_LAYOUT;
		goto done;
	}
	if ((code = ctl_remote_open(&r, "admin", &c)) != CTL_OK)
		goto done;
	rv = wt_client_admin(c, op, r.model, r.layout_given ? &r.layout : NULL, &res, &err);
	if (rv != WT_OK) {
		ctl_remote_perror("admin", rv, &err);
		code = ctl_remote_exit(rv);
		goto done;
	}
	if (res.text[0] != '\0')
		printf("%s%s", res.text, res.text[strlen(res.text) - 1] == '\n' ? "" : "\n");
	printf("bytes=%" PRIu64 " shards=%" PRIu64 " chunks=%" PRIu64 " bad=%" PRIu64 "\n",
	       res.bytes, res.shards, res.chunks, res.bad);
	if (op == WT_ADMIN_VERIFY && res.bad > 0) {
		fprintf(stderr, "weightctl admin: verify found %" PRIu64 " bad chunks\n", res.bad);
		code = CTL_ERR;
	}
done:
	wt_admin_result_clear(&res);
	wt_client_close(c);
	ctl_remote_clear(&r);
	return code;
}
