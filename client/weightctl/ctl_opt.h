/*
 * ctl_opt.h — the command lines of weightctl's commands, through getopt_long:
 * a command lists its flags by name in tables (the shared remote flags, the
 * layout flags, its own), and gets each flag it was given, by its long name,
 * in command-line order. Errors name the flag and the fix, prefixed with
 * "weightctl CMD:".
 */
#ifndef WT_CTL_OPT_H
#define WT_CTL_OPT_H

#include <stdbool.h>
#include <stddef.h>

typedef struct ctl_flag {
	const char *name; /* "--timeout-ms"; written in full on the command line */
	bool value;       /* takes a value: "--name V" or "--name=V" */
	char short_name;  /* 'q' for -q; 0 = none */
} ctl_flag;

/* One flag given on the command line: flag is the table's name (also for a short
 * alias), val its value (NULL for a switch). 0, or -1 after printing the error. */
typedef int (*ctl_flag_fn)(void *ctx, const char *cmd, const char *flag, const char *val);

typedef struct ctl_flagset {
	const ctl_flag *flags;
	size_t n;
	ctl_flag_fn fn;
	void *ctx;
} ctl_flagset;

#define CTL_FLAGSET(tab, fn, ctx)                                                                  \
	{                                                                                          \
		(tab), sizeof(tab) / sizeof((tab)[0]), (fn), (ctx)                                 \
	}

/* The layout flags (wt_layout_parse_arg's names) as a set that fills *l. */
ctl_flagset ctl_layout_flagset(void *wt_layout_ptr);

/*
 * Parse argv[1..argc) with getopt_long over the sets and -h/--help. Flags and
 * positional arguments may be mixed; "--" ends the flags. Positional arguments
 * go to pos[0..*n_pos), at most max_pos (pos may be NULL when max_pos is 0).
 * Errors, printed to stderr: an unknown flag, an abbreviated one, a missing
 * value, a value given to a switch, too many positional arguments, and what a
 * set's fn refuses. Returns CTL_OK or CTL_USAGE; *help = 1 (and CTL_OK) when
 * -h/--help was given, whatever else was.
 */
int ctl_getopt(const char *cmd, int argc, char **argv, const ctl_flagset *sets, size_t n_sets,
               char **pos, size_t max_pos, size_t *n_pos, int *help);

#endif
