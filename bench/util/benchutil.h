/*
 * benchutil.h — what the end-to-end benchmarks share: the build and temp
 * folders, running a helper program, a weightd on a free loopback port with a
 * fresh models/ and cache/ under the temp folder, a fixture model, and a sink
 * that only counts bytes (measures the wire and verification, not a copy).
 */
#ifndef WT_BENCH_BENCHUTIL_H
#define WT_BENCH_BENCHUTIL_H

#include <stdint.h>
#include <sys/types.h>

#include "weights/client.h"
#include "weights/engine.h"

/* Build folder = the folder above argv0's (build/bench/x -> build); a new temp
 * folder $TMPDIR/wt-bench-<tag>-XXXXXX. 0 on success. */
int bench_init(const char *argv0, const char *tag);
const char *bench_build(void);
const char *bench_tmp(void);

/* Run argv (stdout to /dev/null); its exit status, -1 if it could not run.
 * *maxrss_kb (if not NULL) = its peak RSS. */
int bench_run(char *const argv[], long *maxrss_kb);

/* wt-mkckpt a llama of size_mb MiB into <tmp>/models/<name>. 0 on success. */
int bench_make_llama(const char *name, const char *size_mb);

/* Start <build>/weightd on tcp://127.0.0.1:0 with <tmp>/models, <tmp>/cache and
 * `workers` workers; its URL into url. The pid, or -1 (killed) if it did not
 * come up within 60 s. */
pid_t bench_start_weightd(char *url, size_t cap, const char *workers);

/* The usual setup of an end-to-end bench: a llama of WT_BENCH_MB MiB (default
 * 256; *mb = the text) and weightd with 2 workers; its URL into url. The pid,
 * or -1 after printing "<who>: cannot make the fixture or start weightd". */
pid_t bench_fixture_and_weightd(const char *who, char *url, size_t cap, const char **mb);

/* Client options for the one endpoint eps[0] (eps must outlive o), with
 * WT_BENCH_WINDOW and WT_BENCH_CONNS applied when set. */
void bench_client_opts(wt_client_opts *o, const char *const *eps);

/* SIGTERM and reap weightd (pid <= 0: nothing), then remove the temp folder. */
void bench_finish(pid_t weightd);

/* A sink that counts the bytes handed to it and keeps none. */
typedef struct bench_count_sink {
	wt_sink base;
	uint64_t bytes;
} bench_count_sink;

void bench_count_sink_init(bench_count_sink *s);

/* A decimal value of flag --name (no sign, no suffix) into *out; 0, or -1 after a
 * message naming the flag. */
int bench_u64(const char *name, const char *val, uint64_t *out);

/* CPU seconds (user + system) of this process so far, all its threads. */
double bench_cpu_s(void);

/* CPU seconds (user + system) of process pid and its children so far (/proc/PID/stat,
 * children of its main thread); 0 if unknown. */
double bench_proc_cpu_s(pid_t pid);

/* Production callbacks (shardmap's emit and emit_part) that count what they
 * are handed and keep none; atomic, as a production's workers call them at
 * once. */
typedef struct bench_prod_count {
	uint64_t bytes, calls, parts;
} bench_prod_count;

int bench_prod_count_emit(void *ctx, uint32_t rank, size_t ix, const void *b, uint64_t n,
                          wt_errbuf *err);
int bench_prod_count_part(void *ctx, uint32_t rank, size_t ix, uint64_t off, const void *b,
                          uint64_t n, wt_errbuf *err);

/* noverify.c: verify = 0 skips the client's chunk and tensor hash checks (to
 * measure their cost); 1 restores them. Benchmarks only. */
void bench_client_set_verify(wt_client *c, int verify);

#endif
