/*
 * opt.c — getopt_long as the command lines of weightd, weightctl, wt-mkckpt
 * and the benchmarks use it: one flag per call, by its index in the table, and
 * every error as a message naming the flag. Long flags are written in full:
 * getopt_long also accepts any unique prefix ("--work 4" for --workers), which
 * these programs refuse, so that adding a flag never changes what an existing
 * command line means.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "common/common.h"

#define OPT_MAX_SHORTS 64

/* The word on the command line that named long option o: argv[optind - 1], or
 * argv[optind - 2] when its value was the next word. */
static const char *opt_word(char **argv, const struct option *o)
{
	bool split = o->has_arg != no_argument && optarg != NULL && optarg == argv[optind - 1];
	return argv[split ? optind - 2 : optind - 1];
}

static bool in_full(const char *w, const char *name)
{
	size_t n = strlen(name);
	if (w[0] != '-' || w[1] != '-')
		return true; /* a short alias */
	return strncmp(w + 2, name, n) == 0 && (w[2 + n] == '\0' || w[2 + n] == '=');
}

/* Index of the option whose val is short option c, or -1. */
static int short_index(const struct option *opts, int c)
{
	for (int k = 0; opts[k].name != NULL; k++)
		if (opts[k].val == c && c != 0)
			return k;
	return -1;
}

/* The switch (no_argument) named by "--name=V", or -1. */
static int switch_given_value(const struct option *opts, const char *w)
{
	const char *eq = strchr(w, '=');
	if (w[0] != '-' || w[1] != '-' || eq == NULL)
		return -1;
	for (int k = 0; opts[k].name != NULL; k++)
		if (opts[k].has_arg == no_argument &&
		    strlen(opts[k].name) == (size_t)(eq - w - 2) &&
		    strncmp(opts[k].name, w + 2, (size_t)(eq - w - 2)) == 0)
			return k;
	return -1;
}

/* getopt_long's error return c as a message naming the flag; returns -2. */
static int opt_error(const struct option *opts, char **argv, int c, char *msg, size_t cap)
{
	const char *w = argv[optind - 1];
	int k = optopt > 0 ? short_index(opts, optopt) : -1;
	if (c == ':') {
		const char *name = k >= 0 ? opts[k].name : w + 2;
		if (k < 0 && (w[0] != '-' || w[1] != '-'))
			snprintf(msg, cap, "%s needs a value", w);
		else
			snprintf(msg, cap, "--%s needs a value (--%s V or --%s=V)", name, name,
			         name);
	} else if (k >= 0 || (k = switch_given_value(opts, w)) >= 0) {
		snprintf(msg, cap, "--%s takes no value; write it alone", opts[k].name);
	} else if (optopt != 0) {
		snprintf(msg, cap, "unknown flag '-%c'", optopt);
	} else {
		snprintf(msg, cap, "unknown flag '%s'", w);
	}
	return -2;
}

int common_opt_next(int argc, char **argv, const struct option *opts, const char **val, char *msg,
                    size_t cap)
{
	char shorts[2 * OPT_MAX_SHORTS + 2];
	size_t ns = 0;
	shorts[ns++] = ':'; /* a missing value returns ':' */
	for (int k = 0; opts[k].name != NULL; k++)
		if (opts[k].val > 0 && opts[k].val < 128 && ns + 3 < sizeof(shorts)) {
			shorts[ns++] = (char)opts[k].val;
			if (opts[k].has_arg != no_argument)
				shorts[ns++] = ':';
		}
	shorts[ns] = '\0';
	opterr = 0;
	int li = -1;
	int c = getopt_long(argc, argv, shorts, opts, &li);
	*val = NULL;
	if (c == -1)
		return -1;
	if (c == '?' || c == ':')
		return opt_error(opts, argv, c, msg, cap);
	int k = li >= 0 ? li : short_index(opts, c);
	WT_ASSERT(k >= 0);
	if (li >= 0 && !in_full(opt_word(argv, &opts[li]), opts[li].name)) {
		snprintf(msg, cap, "'%s' is not a flag; write --%s in full",
		         opt_word(argv, &opts[li]), opts[li].name);
		return -2;
	}
	*val = opts[k].has_arg != no_argument ? optarg : NULL;
	return k;
}
