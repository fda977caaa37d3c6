/* main.c — weightctl: command dispatch. */
#include <stdio.h>
#include <string.h>

#include "client/weightctl/weightctl.h"
#include "weights/weights.h"

/* One line per command. */
static const ctl_cmd commands[] = {
    {"inspect", "validate a model folder and print its summary", ctl_inspect},
    {"plan", "print every rank's runtime tensors for a layout", ctl_plan_cmd},
    {"shard", "write one rank of a layout as safetensors", ctl_shard_cmd},
    {"verify-forward", "prove a layout's shards with the reference forward pass",
     ctl_verify_forward},
    {"fetch", "fetch a rank's verified shard from weightd into a safetensors file", ctl_fetch},
    {"models", "list the models a weightd serves", ctl_models},
    {"watch", "print a model's revision and each new one as weightd sees it", ctl_watch},
    {"manifest", "print a rank's manifest (tensors, hashes, totals) from weightd", ctl_manifest},
    {"capabilities", "what a model can be served as (layouts, quant, raw, CUDA), and why not",
     ctl_capabilities},
    {"admin", "weightd admin: stats, warm, evict, verify, register, unregister", ctl_admin},
};

static void usage(FILE *f)
{
	fprintf(f, "usage: weightctl COMMAND [ARGS]\n\ncommands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-12s %s\n", commands[i].name, commands[i].summary);
	fprintf(f, "\n`weightctl COMMAND --help` for a command's flags.\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return CTL_USAGE;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "help") == 0) {
		usage(stdout);
		return CTL_OK;
	}
	if (strcmp(argv[1], "--version") == 0) {
		printf("weightctl %s\n", WT_VERSION_STRING);
		return CTL_OK;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (strcmp(argv[1], commands[i].name) == 0)
			return commands[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "weightctl: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return CTL_USAGE;
}
