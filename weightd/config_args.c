/*
 * config_args.c — weightd's command line, through getopt_long: every key of
 * the configuration table is a flag, --key-name VALUE or --key-name=VALUE
 * ('_' written '-'), plus --config FILE (applied first, whatever its place),
 * -h/--help and --version. Flags are written in full (no prefixes).
 *
 * Precedence: table default < --config file < flags. A single-value flag given
 * twice: the last one wins (an override appended to a service's command line);
 * a list flag (--listen, --model, ...) given at all replaces the file's list,
 * and its repeats add up. --config twice is refused (the files were merged).
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "common/common.h"
#include "weightd/weightd.h"

#define MAX_FLAGS 64

typedef struct cli_table {
	struct option opts[MAX_FLAGS + 4];
	char names[MAX_FLAGS][64];
	size_t n_keys; /* opts[0..n_keys) are the table's keys, then config, help, version */
} cli_table;

static void cli_build(cli_table *t)
{
	const wd_cfg_key *k = wd_config_table(&t->n_keys);
	WT_ASSERT(t->n_keys <= MAX_FLAGS);
	for (size_t i = 0; i < t->n_keys; i++) {
		size_t len = strlen(k[i].name);
		WT_ASSERT(len < sizeof(t->names[i]));
		for (size_t j = 0; j <= len; j++)
			t->names[i][j] = k[i].name[j] == '_' ? '-' : k[i].name[j];
		t->opts[i] = (struct option){t->names[i], required_argument, NULL, 0};
	}
	t->opts[t->n_keys] = (struct option){"config", required_argument, NULL, 0};
	t->opts[t->n_keys + 1] = (struct option){"help", no_argument, NULL, 'h'};
	t->opts[t->n_keys + 2] = (struct option){"version", no_argument, NULL, 0};
	t->opts[t->n_keys + 3] = (struct option){NULL, 0, NULL, 0};
}

/*
 * One pass over argv: pass 0 looks for --help/--version only (*action), pass 1
 * applies --config, pass 2 every other flag. Errors are WT_ECONFIG.
 */
static int cli_pass(wd_config *c, int argc, char **argv, int pass, wd_cli_action *action,
                    wt_errbuf *err)
{
	cli_table t;
	cli_build(&t);
	size_t n = t.n_keys;
	optind = 0; /* SIGHUP parses argv again */
	char msg[200];
	const char *val, *config = NULL;
	for (int k; (k = common_opt_next(argc, argv, t.opts, &val, msg, sizeof(msg))) != -1;) {
		int rv = WT_OK;
		if (k == -2) {
			return pass == 0
			           ? WT_OK
			           : wt_seterr(err, WT_ECONFIG, "%s; see weightd --help", msg);
		} else if (pass == 0 && (size_t)k > n) {
			*action = (size_t)k == n + 1 ? WD_CLI_HELP : WD_CLI_VERSION;
			return WT_OK;
		} else if (pass == 1 && (size_t)k == n && config != NULL) {
			/* the second file was merged over the first (its lists added) */
			return wt_seterr(err, WT_ECONFIG,
			                 "--config %s: --config is given twice (also --config %s); "
			                 "give one file, and override its keys with flags",
			                 val, config);
		} else if (pass == 1 && (size_t)k == n) {
			config = val;
			rv = wd_config_load_file(c, val, err);
		} else if (pass == 2 && (size_t)k < n) {
			char where[80];
			snprintf(where, sizeof(where), "--%s", t.opts[k].name);
			rv = wd_config_set(c, wd_config_table(&n)[k].name, val, where, err);
		}
		if (rv != WT_OK)
			return rv;
	}
	if (pass == 2 && optind < argc)
		return wt_seterr(err, WT_ECONFIG, "'%s': not a flag; see weightd --help",
		                 argv[optind]);
	return WT_OK;
}

wd_cli_action wd_config_cli_action(int argc, char **argv)
{
	wd_cli_action a = WD_CLI_RUN;
	cli_pass(NULL, argc, argv, 0, &a, NULL);
	return a;
}

int wd_config_parse_args(wd_config *c, int argc, char **argv, wt_errbuf *err)
{
	int rv = cli_pass(c, argc, argv, 1, NULL, err);
	if (rv == WT_OK)
		rv = cli_pass(c, argc, argv, 2, NULL, err);
	if (rv == WT_OK)
		rv = wd_config_resolve_tokens(c, err);
	if (rv == WT_OK)
		rv = wd_config_check(c, err);
	return rv;
}
