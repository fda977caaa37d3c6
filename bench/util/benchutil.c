/* benchutil.c — see benchutil.h. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench/util/benchutil.h"

static char g_build[4096];
static char g_tmp[4096];

int bench_init(const char *argv0, const char *tag)
{
	snprintf(g_build, sizeof(g_build), "%s", argv0);
	char *slash = strrchr(g_build, '/');
	if (slash == NULL)
		snprintf(g_build, sizeof(g_build), "..");
	else
		snprintf(slash, sizeof(g_build) - (size_t)(slash - g_build), "/..");
	snprintf(g_tmp, sizeof(g_tmp), "%s/wt-bench-%s-XXXXXX",
	         getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", tag);
	return mkdtemp(g_tmp) == NULL ? -1 : 0;
}

const char *bench_build(void)
{
	return g_build;
}

const char *bench_tmp(void)
{
	return g_tmp;
}

int bench_run(char *const argv[], long *maxrss_kb)
{
	pid_t p = fork();
	if (p == 0) {
		int fd = open("/dev/null", O_WRONLY);
		if (fd >= 0)
			dup2(fd, 1);
		execv(argv[0], argv);
		_exit(127);
	}
	int st = 0;
	struct rusage ru;
	if (p < 0 || wait4(p, &st, 0, &ru) < 0)
		return -1;
	if (maxrss_kb != NULL)
		*maxrss_kb = ru.ru_maxrss;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

int bench_make_llama(const char *name, const char *size_mb)
{
	char bin[4200], dir[4400];
	snprintf(bin, sizeof(bin), "%s/wt-mkckpt", g_build);
	snprintf(dir, sizeof(dir), "%s/models/%s", g_tmp, name);
	char *mk[] = {bin, "--family", "llama", "--size-mb", (char *)size_mb, "--out", dir, NULL};
	return bench_run(mk, NULL) == 0 ? 0 : -1;
}

pid_t bench_start_weightd(char *url, size_t cap, const char *workers)
{
	char bin[4200], models[4200], cache[4200], ready[4200];
	snprintf(bin, sizeof(bin), "%s/weightd", g_build);
	snprintf(models, sizeof(models), "%s/models", g_tmp);
	snprintf(cache, sizeof(cache), "%s/cache", g_tmp);
	snprintf(ready, sizeof(ready), "%s/ready", g_tmp);
	pid_t p = fork();
	if (p == 0) {
		/* the bulk data plane is offered; only clients with opts.stream use it */
		execl(bin, bin, "--listen", "tcp://127.0.0.1:0", "--stream-listen",
		      "tcp://127.0.0.1:0", "--models-dir", models, "--cache-dir", cache,
		      "--workers", workers, "--log-level", "warning", "--ready-file", ready,
		      (char *)NULL);
		_exit(127);
	}
	for (int i = 0; p > 0 && i < 1200; i++) {
		FILE *f = fopen(ready, "r");
		if (f != NULL) {
			int ok = fgets(url, (int)cap, f) != NULL;
			fclose(f);
			if (ok) {
				url[strcspn(url, "\n")] = '\0';
				return p;
			}
		}
		usleep(50000);
	}
	if (p > 0)
		kill(p, SIGKILL);
	return -1;
}

pid_t bench_fixture_and_weightd(const char *who, char *url, size_t cap, const char **mb)
{
	*mb = getenv("WT_BENCH_MB") ? getenv("WT_BENCH_MB") : "256";
	pid_t wd = -1;
	if (bench_make_llama("llama", *mb) != 0 || (wd = bench_start_weightd(url, cap, "2")) < 0) {
		fprintf(stderr, "%s: cannot make the fixture or start weightd\n", who);
		return -1;
	}
	return wd;
}

void bench_client_opts(wt_client_opts *o, const char *const *eps)
{
	wt_client_opts_init(o);
	o->endpoints = eps;
	o->n_endpoints = 1;
	if (getenv("WT_BENCH_WINDOW") != NULL)
		o->window = (uint32_t)strtoul(getenv("WT_BENCH_WINDOW"), NULL, 10);
	if (getenv("WT_BENCH_CONNS") != NULL)
		o->connections = (uint32_t)strtoul(getenv("WT_BENCH_CONNS"), NULL, 10);
}

void bench_finish(pid_t weightd)
{
	if (weightd > 0) {
		kill(weightd, SIGTERM);
		waitpid(weightd, NULL, 0);
	}
	char *rm[] = {"/bin/rm", "-rf", g_tmp, NULL};
	if (g_tmp[0] != '\0')
		bench_run(rm, NULL);
}

static int cs_begin(wt_sink *s, const wt_manifest *m, wt_errbuf *e)
{
	(void)m, (void)e;
	((bench_count_sink *)s)->bytes = 0;
	return WT_OK;
}

static int cs_tensor(wt_sink *s, size_t t, wt_errbuf *e)
{
	(void)s, (void)t, (void)e;
	return WT_OK;
}

static int cs_write(wt_sink *s, size_t t, uint64_t off, const void *d, size_t len, wt_errbuf *e)
{
	(void)t, (void)off, (void)d, (void)e;
	((bench_count_sink *)s)->bytes += len;
	return WT_OK;
}

static int cs_end(wt_sink *s, wt_errbuf *e)
{
	(void)s, (void)e;
	return WT_OK;
}

static void cs_abort(wt_sink *s)
{
	(void)s;
}

static const wt_sink_ops count_ops = {sizeof(wt_sink_ops), cs_begin, cs_tensor, cs_write,
                                      cs_tensor,           cs_end,   cs_abort};

void bench_count_sink_init(bench_count_sink *s)
{
	s->base.ops = &count_ops;
	s->bytes = 0;
}

double bench_cpu_s(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
	       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

static double one_proc_cpu_s(pid_t pid)
{
	char p[64], line[1024];
	snprintf(p, sizeof(p), "/proc/%d/stat", (int)pid);
	FILE *f = fopen(p, "r");
	if (f == NULL)
		return 0;
	char *ok = fgets(line, sizeof(line), f);
	fclose(f);
	char *rp = ok != NULL ? strrchr(line, ')') : NULL; /* comm may hold spaces */
	unsigned long ut = 0, st = 0;
	if (rp == NULL ||
	    sscanf(rp + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) != 2)
		return 0;
	return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

double bench_proc_cpu_s(pid_t pid)
{
	double t = one_proc_cpu_s(pid);
	char p[64];
	snprintf(p, sizeof(p), "/proc/%d/task/%d/children", (int)pid, (int)pid);
	FILE *f = fopen(p, "r");
	int kid;
	while (f != NULL && fscanf(f, "%d", &kid) == 1)
		t += one_proc_cpu_s((pid_t)kid);
	if (f != NULL)
		fclose(f);
	return t;
}

int bench_u64(const char *name, const char *val, uint64_t *out)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(val, &end, 10);
	if (val[0] < '0' || val[0] > '9' || *end != '\0' || errno != 0) {
		fprintf(stderr, "--%s '%s': use a decimal integer\n", name, val);
		return -1;
	}
	*out = v;
	return 0;
}

int bench_prod_count_emit(void *ctx, uint32_t rank, size_t ix, const void *b, uint64_t n,
                          wt_errbuf *err)
{
	(void)rank;
	(void)ix;
	(void)b;
	(void)err;
	bench_prod_count *s = ctx;
	__atomic_fetch_add(&s->bytes, n, __ATOMIC_RELAXED);
	__atomic_fetch_add(&s->calls, 1, __ATOMIC_RELAXED);
	return WT_OK;
}

int bench_prod_count_part(void *ctx, uint32_t rank, size_t ix, uint64_t off, const void *b,
                          uint64_t n, wt_errbuf *err)
{
	(void)off;
	__atomic_fetch_add(&((bench_prod_count *)ctx)->parts, 1, __ATOMIC_RELAXED);
	return bench_prod_count_emit(ctx, rank, ix, b, n, err);
}
