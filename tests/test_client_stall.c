/* test_client_stall.c — a fetch whose weightd stops mid-fetch (SIGSTOP: its
 * connections stay up, nothing answers). Two real weightd processes serve the
 * same model; the fetch lists both and the one serving it is stopped from the
 * progress callback once chunks came in. The fetch ends on the other one,
 * byte-identical, within a few seconds: the head's wait saw no byte on the
 * streams (no request over messages end) for client_quiet_probe_ms, a Hello
 * went unanswered, and the fetch failed over: the streams closed, the requests
 * over messages left in flight (fetch_msg.c). Before, the stream path waited
 * request_timeout_ms and as long again on a retry over messages (20 s here, 62 s
 * with the default 30 s timeout); the message path waited request_timeout_ms
 * for the head and for every request behind it.
 * Left requests end with their replies (the node resumed) or their own
 * timeouts (a thread wt_client_close leaves them to waits for them, no
 * longer), and are freed.
 * A weightd that is quiet but alive (a cut-through chunk waiting for its
 * production) answers that Hello: the fetch waits on and does not fail over. */
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "client/client.h"
#include "client/client_int.h"
#include "test_weightd_util.h"
#include "weights/client.h"
#include "weights/engine.h"

#define SEED 0x57a11ull

extern char **environ;

typedef struct node {
	pid_t pid;
	char *url;
} node;

static node g_nodes[2];

/* posix_spawn argv (argv[0] the program), with fd close_fd closed in the
 * child when >= 0; the child's pid, or -1. Not fork(): from the second test
 * on, nng's threads run in this process, and a fork()ed child of a
 * multi-threaded process under ThreadSanitizer runs its interceptors (a
 * snprintf before exec) with whatever locks the other threads held. */
static pid_t spawn(char *const argv[], const int *close_fd)
{
	posix_spawn_file_actions_t fa;
	if (posix_spawn_file_actions_init(&fa) != 0)
		return -1;
	pid_t pid = -1;
	if ((close_fd == NULL || posix_spawn_file_actions_addclose(&fa, *close_fd) == 0) &&
	    posix_spawn(&pid, argv[0], &fa, NULL, argv, environ) != 0)
		pid = -1;
	posix_spawn_file_actions_destroy(&fa);
	return pid;
}

/* Start build/weightd (or $WT_BUILD/weightd) on models with a cache of its own. */
static node start_node(const tw_env *e, int k)
{
	const char *b = getenv("WT_BUILD");
	char bin[512], ready[600], cdir[600];
	snprintf(bin, sizeof(bin), "%s/weightd", b ? b : "build");
	snprintf(ready, sizeof(ready), "%s/ready%d", e->dir, k);
	snprintf(cdir, sizeof(cdir), "%s/cache%d", e->dir, k);
	char *argv[] = {bin,
	                "--listen",
	                "tcp://127.0.0.1:0",
	                "--stream-listen",
	                "tcp://127.0.0.1:0",
	                "--models-dir",
	                e->models,
	                "--cache-dir",
	                cdir,
	                "--chunk-bytes",
	                "4K",
	                "--ready-file",
	                ready,
	                "--log-level",
	                "warning",
	                NULL};
	node n = {.pid = spawn(argv, NULL)};
	assert_true(n.pid > 0);
	for (int i = 0; i < 200 && n.url == NULL; i++) {
		size_t len;
		n.url = tu_read_file(ready, &len);
		if (n.url == NULL)
			usleep(50000);
		else
			n.url[strcspn(n.url, "\n")] = '\0';
	}
	assert_non_null(n.url);
	return n;
}

static int teardown(void **state)
{
	(void)state;
	for (int k = 0; k < 2; k++) {
		if (g_nodes[k].pid > 0) {
			kill(g_nodes[k].pid, SIGCONT);
			kill(g_nodes[k].pid, SIGKILL);
			waitpid(g_nodes[k].pid, NULL, 0);
		}
		free(g_nodes[k].url);
		g_nodes[k] = (node){0};
	}
	return 0;
}

/* Two weightd processes (g_nodes) serving one generated model; eps gets
 * their URLs. two_nodes_end stops them. */
static tw_env *two_nodes(const char *tag, const char *eps[2])
{
	tw_env *e = tw_env_new(tag, SEED);
	g_nodes[0] = start_node(e, 0);
	g_nodes[1] = start_node(e, 1);
	eps[0] = g_nodes[0].url;
	eps[1] = g_nodes[1].url;
	return e;
}

static void two_nodes_end(tw_env *e)
{
	teardown(NULL);
	tw_env_free(e);
}

typedef struct stopper {
	pid_t pid;
	int calls;
} stopper;

/* Progress callback: stop the serving node after the third chunk. */
static int stop_it(void *ctx, uint64_t done, uint64_t total)
{
	(void)done, (void)total;
	stopper *s = ctx;
	if (++s->calls == 3)
		kill(s->pid, SIGSTOP);
	return 0;
}

/* A client of both nodes (one connection, window 2, connect timeout 0.5 s);
 * WT_OK or wt_client_open's error (no cmocka assert: exit_child uses it). */
static int try_open_client(const char *const *eps, int stream, uint32_t req_timeout_ms,
                           wt_client **c, wt_errbuf *err)
{
	wt_client_opts o;
	wt_client_opts_init(&o);
	o.endpoints = eps;
	o.n_endpoints = 2;
	o.stream = stream;
	o.connections = 1;
	o.window = 2;
	o.connect_timeout_ms = 500;
	o.request_timeout_ms = req_timeout_ms;
	return wt_client_open(c, &o, err);
}

static wt_client *open_client(const char *const *eps, int stream, uint32_t req_timeout_ms)
{
	wt_client *c = NULL;
	wt_errbuf err;
	if (try_open_client(eps, stream, req_timeout_ms, &c, &err) != WT_OK)
		fail_msg("open: %s", err.msg);
	return c;
}

/* Rank 0 of llama from both nodes over messages, both up: the reference. */
static wt_host_sink *reference(const char *const *eps)
{
	wt_client *ref = open_client(eps, 0, 10000);
	wt_layout l;
	wt_layout_init(&l);
	wt_errbuf err;
	wt_host_sink *want = NULL;
	wt_manifest *m = NULL;
	assert_int_equal(wt_host_sink_create(&want, &err), WT_OK);
	assert_int_equal(wt_client_get_manifest(ref, "llama", &l, &m, &err), WT_OK);
	assert_int_equal(wt_client_fetch(ref, m, wt_host_sink_sink(want), NULL, &err), WT_OK);
	wt_manifest_free(m);
	wt_client_close(ref);
	return want;
}

static void assert_same(const wt_manifest *m, wt_host_sink *want, wt_host_sink *got)
{
	for (size_t i = 0; i < wt_manifest_n_tensors(m); i++) {
		wt_tensor_info ti;
		assert_int_equal(wt_manifest_tensor(m, i, &ti), WT_OK);
		const void *a = NULL, *b = NULL;
		size_t na = 0, nb = 0;
		assert_int_equal(wt_host_sink_find(want, ti.name, &a, &na), WT_OK);
		assert_int_equal(wt_host_sink_find(got, ti.name, &b, &nb), WT_OK);
		assert_int_equal(na, nb);
		assert_memory_equal(a, b, na);
	}
}

/* Fetch rank 0 with c (request timeout req_s), its serving node stopped after
 * three chunks: done on the other node within bound_s, the same bytes.
 * Returns the index of the stopped node. */
static int fetch_stopping(wt_client *c, const char *const *eps, double req_s, double bound_s)
{
	wt_host_sink *want = reference(eps);
	wt_layout l;
	wt_layout_init(&l);
	wt_errbuf err;
	wt_manifest *m = NULL;
	assert_int_equal(wt_client_get_manifest(c, "llama", &l, &m, &err), WT_OK);
	int k = strcmp(m->served_by, g_nodes[0].url) == 0 ? 0 : 1;
	stopper sp = {.pid = g_nodes[k].pid};
	wt_fetch_stats st;
	wt_fetch_opts fo;
	wt_fetch_opts_init(&fo);
	fo.stats = &st;
	fo.progress = stop_it;
	fo.progress_ctx = &sp;
	wt_host_sink *got = NULL;
	assert_int_equal(wt_host_sink_create(&got, &err), WT_OK);
	uint64_t t0 = common_now_ns();
	int rv = wt_client_fetch(c, m, wt_host_sink_sink(got), &fo, &err);
	double t = (double)(common_now_ns() - t0) / 1e9;
	printf("node %d stopped after %d of %zu chunks: fetch %s in %.2f s on %s (fail-overs %u, "
	       "retries %u; request timeout %.0f s, connect 0.5 s)\n",
	       k, sp.calls >= 3 ? 3 : sp.calls, wt_manifest_n_chunks(m),
	       rv == WT_OK ? "done" : err.msg, t, st.endpoint, st.failovers, st.retries, req_s);
	assert_int_equal(rv, WT_OK);
	assert_true(sp.calls >= 3);
	assert_int_equal(st.failovers, 1);
	assert_string_equal(st.endpoint, g_nodes[1 - k].url);
	assert_true(t < bound_s);
	assert_same(m, want, got);
	wt_host_sink_destroy(got);
	wt_host_sink_destroy(want);
	wt_manifest_free(m);
	return k;
}

static void test_stopped_mid_stream(void **state)
{
	(void)state;
	const char *eps[2];
	tw_env *e = two_nodes("stall", eps);
	wt_client *c = open_client(eps, 1, 10000);
	/* 1.6 s here, 5.8 s under TSan on a busy machine; 20 s before */
	(void)fetch_stopping(c, eps, 10, 8.0);
	wt_client_close(c);
	two_nodes_end(e);
}

/* Over messages: the requests on the stopped node are left in flight; once it
 * resumes, their replies end them and the client frees them. */
static void test_stopped_mid_messages(void **state)
{
	(void)state;
	const char *eps[2];
	tw_env *e = two_nodes("stall-msg", eps);
	wt_client *c = open_client(eps, 0, 10000);
	/* about 2 s; 10 s and more before (the head's request timeout, then the
	 * one behind it) */
	int k = fetch_stopping(c, eps, 10, 8.0);
	size_t left = client_requests_left(c);
	printf("requests left in flight on node %d: %zu\n", k, left);
	assert_true(left >= 1);
	kill(g_nodes[k].pid, SIGCONT);
	uint64_t t0 = common_now_ns();
	size_t still;
	while ((still = client_requests_left(c)) > 0 && common_now_ns() - t0 < 5000000000ull)
		usleep(1000); /* until their replies came */
	double t = (double)(common_now_ns() - t0) / 1e9;
	assert_int_equal(still, 0);
	printf("node %d resumed: left requests ended in %.2f s\n", k, t);
	assert_true(t < 5.0);
	wt_client_close(c);
	two_nodes_end(e);
}

/* The node stays stopped: wt_client_close returns at once and leaves the
 * requests to a thread of its own, which waits for their own timeouts
 * (CLOSE_REQ_S after they were sent), no longer, cancels nothing (a canceled receive hung
 * nng_close), then closes the sockets and frees everything (LeakSanitizer:
 * the test waits for it). Before, the close itself waited that timeout (a
 * program closing after a fail-over waited 30 s with the default timeout).
 * The timeout is also the fetch's bound: 1.7 s here, 3.9 s under
 * ThreadSanitizer with both cores busy (3 s failed there). */
#define CLOSE_REQ_S 5
static void test_close_with_left_requests(void **state)
{
	(void)state;
	const char *eps[2];
	tw_env *e = two_nodes("stall-close", eps);
	wt_client *c = open_client(eps, 0, CLOSE_REQ_S * 1000);
	uint64_t t_fetch = common_now_ns();
	(void)fetch_stopping(c, eps, CLOSE_REQ_S, CLOSE_REQ_S);
	size_t left = client_requests_left(c);
	assert_true(left >= 1);
	uint64_t t0 = common_now_ns();
	wt_client_close(c);
	double t = (double)(common_now_ns() - t0) / 1e9;
	printf("close with %zu requests left on a stopped node: %.3f s (request timeout %d s)\n",
	       left, t, CLOSE_REQ_S);
	assert_true(t < 0.5);
	assert_int_equal(client_closing(), 1);
	while (client_closing() > 0 && common_now_ns() - t0 < (2 * CLOSE_REQ_S + 2) * 1000000000ull)
		usleep(1000);
	double done = (double)(common_now_ns() - t_fetch) / 1e9;
	printf("closed in the background %.2f s after the fetch began\n", done);
	assert_int_equal(client_closing(), 0);
	/* the fetch's bound, then at most the timeout */
	assert_true(done < 2.0 * CLOSE_REQ_S + 1.0);
	two_nodes_end(e);
}

/* The child of test_exit_with_left_requests (this program again, run with
 * --exit-child; no cmocka asserts): rank 0 over messages, its
 * node stopped after three chunks, request timeout 10 s; writes the time to
 * wfd, closes the client and exits. Exit 0, or the step that failed. */
static int exit_child(const char *const *eps, int wfd)
{
	wt_client *c = NULL;
	wt_manifest *m = NULL;
	wt_host_sink *got = NULL;
	wt_errbuf err;
	wt_layout l;
	wt_layout_init(&l);
	if (try_open_client(eps, 0, 10000, &c, &err) != WT_OK ||
	    wt_client_get_manifest(c, "llama", &l, &m, &err) != WT_OK ||
	    wt_host_sink_create(&got, &err) != WT_OK)
		return 2;
	stopper sp = {.pid = g_nodes[strcmp(m->served_by, g_nodes[0].url) == 0 ? 0 : 1].pid};
	wt_fetch_opts fo;
	wt_fetch_opts_init(&fo);
	fo.progress = stop_it;
	fo.progress_ctx = &sp;
	if (wt_client_fetch(c, m, wt_host_sink_sink(got), &fo, &err) != WT_OK)
		return 3;
	if (client_requests_left(c) == 0)
		return 4;
	wt_manifest_free(m);
	wt_host_sink_destroy(got);
	uint64_t t = common_now_ns();
	if (write(wfd, &t, sizeof(t)) != (ssize_t)sizeof(t))
		return 5;
	wt_client_close(c);
	return 0;
}

/* How long test_exit_with_left_requests waits for its child's close and
 * exit (about 2 s; 5 s under ThreadSanitizer on a loaded machine): past it
 * the child hangs. */
#define CHILD_WAIT_MS 60000

/* waitpid for pid, at most CHILD_WAIT_MS; past that the child is killed
 * (and reaped) and 0 returned, so that a child that hangs fails the test
 * instead of holding the suite. */
static pid_t wait_child(pid_t pid, int *status)
{
	uint64_t t0 = common_now_ns();
	for (;;) {
		pid_t got = waitpid(pid, status, WNOHANG);
		if (got != 0)
			return got;
		if (common_now_ns() - t0 > (uint64_t)CHILD_WAIT_MS * 1000000ull) {
			kill(pid, SIGKILL);
			waitpid(pid, status, 0);
			return 0;
		}
		usleep(10000);
	}
}

/* A program that closes its client after a fail-over left requests on a
 * stopped node and exits: it exits at once (the close's thread ends with
 * it), with status 0 (under ASan: LeakSanitizer finds nothing lost at exit).
 * Before, the close held the exit until the requests' timeouts (10 s here,
 * 30 s by default). */
static void test_exit_with_left_requests(void **state)
{
	(void)state;
	const char *eps[2];
	tw_env *e = two_nodes("stall-exit", eps);
	int fds[2];
	assert_int_equal(pipe(fds), 0);
	fflush(NULL);
	char fd[16], p0[16], p1[16];
	snprintf(fd, sizeof(fd), "%d", fds[1]);
	snprintf(p0, sizeof(p0), "%d", (int)g_nodes[0].pid);
	snprintf(p1, sizeof(p1), "%d", (int)g_nodes[1].pid);
	char *argv[] = {
	    "/proc/self/exe", "--exit-child", (char *)eps[0], p0, (char *)eps[1], p1, fd, NULL};
	pid_t pid = spawn(argv, &fds[0]); /* a fresh process: nng may not be used across a fork */
	assert_true(pid > 0);
	close(fds[1]);
	uint64_t closed = 0;
	ssize_t n = -1;
	struct pollfd pfd = {.fd = fds[0], .events = POLLIN};
	if (poll(&pfd, 1, CHILD_WAIT_MS) == 1)
		n = read(fds[0], &closed, sizeof(closed));
	close(fds[0]);
	int status = 0;
	pid_t got = wait_child(pid, &status);
	if (got != pid)
		fail_msg("the child neither closed nor exited within %d s: killed",
		         CHILD_WAIT_MS / 1000);
	double t = (double)(common_now_ns() - closed) / 1e9;
	if (WIFSIGNALED(status))
		printf("child: killed by signal %d\n", WTERMSIG(status));
	printf("child: exit status %d, exited %.3f s after it began its close (request timeout 10 "
	       "s)\n",
	       WIFEXITED(status) ? WEXITSTATUS(status) : -1, t);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_int_equal(n, (ssize_t)sizeof(closed));
	assert_true(t < 2.0);
	two_nodes_end(e);
}

static atomic_int g_held;

/* before_check of every server: rank 0's first check waits 2.5 s (its last
 * chunk with it: a cut-through reader's stream is quiet meanwhile). */
static void hold_check(void *ctx, uint32_t rank)
{
	(void)ctx;
	if (rank == 0 && atomic_exchange(&g_held, 1) == 0)
		usleep(2500 * 1000);
}

static tw_env *held_env(const char *tag)
{
	tw_env *e = tw_env_new(tag, SEED);
	wt_errbuf err;
	assert_int_equal(wd_config_set(&e->cfg, "stream_listen", "tcp://127.0.0.1:0", "test", &err),
	                 WT_OK);
	e->faults.before_check = hold_check;
	assert_int_equal(tw_start(e), WT_OK);
	return e;
}

static void quiet_alive(int stream)
{
	atomic_store(&g_held, 0);
	tw_env *a = held_env("quiet-a"), *b = held_env("quiet-b");
	const char *eps[] = {a->url, b->url};
	wt_client_opts o;
	wt_client_opts_init(&o);
	o.endpoints = eps;
	o.n_endpoints = 2;
	o.stream = stream;
	o.cut_through = 1;
	o.connections = 1;
	o.connect_timeout_ms = 500;
	wt_client *c = NULL;
	wt_errbuf err;
	assert_int_equal(wt_client_open(&c, &o, &err), WT_OK);
	wt_layout l;
	wt_layout_init(&l);
	wt_manifest *m = NULL;
	assert_int_equal(wt_client_get_manifest(c, "llama", &l, &m, &err), WT_OK);
	assert_int_equal(wt_manifest_live(m), 1);
	wt_host_sink *h = NULL;
	assert_int_equal(wt_host_sink_create(&h, &err), WT_OK);
	wt_fetch_stats st;
	wt_fetch_opts fo;
	wt_fetch_opts_init(&fo);
	fo.stats = &st;
	uint64_t t0 = common_now_ns();
	int rv = wt_client_fetch(c, m, wt_host_sink_sink(h), &fo, &err);
	double t = (double)(common_now_ns() - t0) / 1e9;
	printf("cut-through %s quiet 2.5 s (probe after 1 s): %s in %.2f s on %s, fail-overs "
	       "%u\n",
	       stream ? "stream" : "messages", rv == WT_OK ? "done" : err.msg, t, st.endpoint,
	       st.failovers);
	assert_int_equal(rv, WT_OK);
	assert_int_equal(atomic_load(&g_held), 1);
	assert_true(t >= 2.0);
	assert_int_equal(st.failovers, 0);
	wt_host_sink_destroy(h);
	wt_manifest_free(m);
	wt_client_close(c);
	tw_env_free(a);
	tw_env_free(b);
}

static void test_quiet_alive_no_failover(void **state)
{
	(void)state;
	quiet_alive(1);
}

static void test_quiet_alive_no_failover_messages(void **state)
{
	(void)state;
	quiet_alive(0);
}

int main(int argc, char **argv)
{
	if (argc == 7 && strcmp(argv[1], "--exit-child") == 0) { /* test_exit_with_left_requests */
		g_nodes[0] = (node){(pid_t)strtol(argv[3], NULL, 10), argv[2]};
		g_nodes[1] = (node){(pid_t)strtol(argv[5], NULL, 10), argv[4]};
		const char *eps[2] = {argv[2], argv[4]};
		exit(exit_child(eps, (int)strtol(argv[6], NULL, 10)));
	}
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_teardown(test_stopped_mid_stream, teardown),
	    cmocka_unit_test_teardown(test_stopped_mid_messages, teardown),
	    cmocka_unit_test_teardown(test_close_with_left_requests, teardown),
	    cmocka_unit_test_teardown(test_exit_with_left_requests, teardown),
	    cmocka_unit_test(test_quiet_alive_no_failover),
	    cmocka_unit_test(test_quiet_alive_no_failover_messages),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
