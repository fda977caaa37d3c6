/* weightctl.h — the CLI's command table. Each command lives in its own cmd_*.c. */
#ifndef WT_WEIGHTCTL_H
#define WT_WEIGHTCTL_H

/* Exit codes of the CLI contract. */
/* CTL_BUSY: `admin evict` left shards cached that readers held open (retry). */
enum { CTL_OK = 0, CTL_ERR = 1, CTL_USAGE = 2, CTL_LAYOUT = 3, CTL_BUSY = 4 };

/* argv[0] is the command name. Returns an exit code above. */
typedef int (*ctl_cmd_fn)(int argc, char **argv);

typedef struct ctl_cmd {
	const char *name;
	const char *summary;
	ctl_cmd_fn fn;
} ctl_cmd;

/* Commands: one declaration each, defined in client/weightctl/cmd_<name>.c. */
int ctl_inspect(int argc, char **argv);
int ctl_plan_cmd(int argc, char **argv);       /* cmd_plan.c */
int ctl_shard_cmd(int argc, char **argv);      /* cmd_shard.c */
int ctl_verify_forward(int argc, char **argv); /* cmd_verify.c */
int ctl_fetch(int argc, char **argv);
int ctl_models(int argc, char **argv);
int ctl_manifest(int argc, char **argv);
int ctl_admin(int argc, char **argv);
int ctl_capabilities(int argc, char **argv); /* cmd_caps.c */
int ctl_watch(int argc, char **argv);        /* cmd_watch.c */

#endif
