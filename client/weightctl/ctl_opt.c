/* ctl_opt.c — getopt_long for every weightctl command (ctl_opt.h). */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "client/weightctl/ctl_opt.h"
#include "client/weightctl/weightctl.h"
#include "common/common.h"
#include "weights/layout.h"

#define CTL_MAX_FLAGS 64

static int layout_flag(void *ctx, const char *cmd, const char *flag, const char *val)
{
	wt_errbuf err;
	if (common_layout_set(ctx, flag, val, &err) == WT_OK)
		return 0;
	fprintf(stderr, "weightctl %s: %s\n", cmd, err.msg);
	return -1;
}

ctl_flagset ctl_layout_flagset(void *wt_layout_ptr)
{
	static ctl_flag tab[16];
	static size_t n;
	if (n == 0)
		for (const char *f;
		     n < sizeof(tab) / sizeof(tab[0]) && (f = common_layout_flag(n)) != NULL; n++)
			tab[n] = (ctl_flag){.name = f, .value = true};
	return (ctl_flagset){tab, n, layout_flag, wt_layout_ptr};
}

typedef struct merged {
	struct option opts[CTL_MAX_FLAGS + 2];
	const ctl_flag *flag[CTL_MAX_FLAGS + 1]; /* NULL for -h/--help */
	const ctl_flagset *set[CTL_MAX_FLAGS + 1];
	size_t n;
} merged;

/* One getopt_long table from the sets, -h/--help last. */
static void merge(merged *m, const ctl_flagset *sets, size_t n_sets)
{
	m->n = 0;
	for (size_t s = 0; s < n_sets; s++)
		for (size_t k = 0; k < sets[s].n; k++) {
			const ctl_flag *f = &sets[s].flags[k];
			WT_ASSERT(m->n < CTL_MAX_FLAGS && strncmp(f->name, "--", 2) == 0);
			m->flag[m->n] = f;
			m->set[m->n] = &sets[s];
			m->opts[m->n] =
			    (struct option){f->name + 2, f->value ? required_argument : no_argument,
			                    NULL, f->short_name};
			m->n++;
		}
	m->flag[m->n] = NULL;
	m->opts[m->n] = (struct option){"help", no_argument, NULL, 'h'};
	m->opts[m->n + 1] = (struct option){NULL, 0, NULL, 0};
}

int ctl_getopt(const char *cmd, int argc, char **argv, const ctl_flagset *sets, size_t n_sets,
               char **pos, size_t max_pos, size_t *n_pos, int *help)
{
	merged m;
	merge(&m, sets, n_sets);
	*help = 0;
	if (n_pos != NULL)
		*n_pos = 0;
	optind = 0; /* each command parses afresh */
	char msg[256];
	const char *val;
	for (int k; (k = common_opt_next(argc, argv, m.opts, &val, msg, sizeof(msg))) != -1;) {
		if (k == -2) {
			fprintf(stderr, "weightctl %s: %s; see weightctl %s --help\n", cmd, msg,
			        cmd);
			return CTL_USAGE;
		}
		if (m.flag[k] == NULL) {
			*help = 1;
			return CTL_OK;
		}
		const ctl_flagset *s = m.set[k];
		if (s->fn(s->ctx, cmd, m.flag[k]->name, val) != 0)
			return CTL_USAGE;
	}
	for (int i = optind; i < argc; i++) {
		if (n_pos == NULL || *n_pos >= max_pos) {
			fprintf(stderr,
			        "weightctl %s: unexpected argument '%s'; see weightctl %s --help\n",
			        cmd, argv[i], cmd);
			return CTL_USAGE;
		}
		pos[(*n_pos)++] = argv[i];
	}
	return CTL_OK;
}
