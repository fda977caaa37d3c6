/*
 * bench_http.c — the http:// source served by a real server (issue 13): nginx
 * from Debian, started here on loopback (sendfile, ranges), against the same
 * checkpoint through file:// and against libcurl alone, measured in the same
 * run. Prints ratios, asserts nothing.
 *
 *   build/bench/bench_http [--gib G] [--rounds N] [--cold]   (default 1 GiB, 3)
 *
 * Needs nginx (Debian: apt-get install -y nginx-light); without it the bench
 * prints a SKIP line and exits 0. `make test` runs it only as a smoke test
 * (--gib 0.05 --rounds 1: tests/integration/bench_smoke.sh; figures not judged).
 *
 * Setup: wt-mkckpt llama of G GiB in <tmp>/models/m (read once: page cache),
 * nginx on 127.0.0.1:<free port> with root = <tmp>/models (config, pid, logs
 * and temp folders in <tmp>/nginx; stopped at exit, also on error).
 *  1. cold fetch, TP=4, four concurrent clients (cut-through), of model
 *     "m" = file://<tmp>/models/m on one in-process weightd with an empty
 *     cache, then of model "mh" = http://127.0.0.1:PORT/m on a second one with
 *     its own empty cache (same options, 4 MiB chunks);
 *  2. the largest file of the checkpoint read through the http:// store
 *     (store_read, whole object and 16 MiB reads, best of 3) against libcurl
 *     easy fetching the same URL into a callback that drops the bytes (the
 *     issue's baseline) and into one buffer (the copy the store makes too); the
 *     whole-object read again with WEIGHTD_HTTP_PARALLEL=1 (one range).
 *  0. (first) the checkpoint opened through file:// and through http with no
 *     digest remembered (registering a new model: every byte read and hashed),
 *     best of 2; not timed in step 1 (each daemon registers before its clock).
 * Each cold fetch prints the CPU seconds of this process (weightd and the
 * clients) and of nginx. --cold runs step 1 only (for profiling).
 *     Step 1 runs --rounds times (default 3), each round with fresh caches and
 *     the order alternating (file:// first in odd rounds), each daemon in a
 *     child process of its own, the disk synced after each; the ratio is of the
 *     medians (one pair swings by +-30% on a shared 2-core VM).
 * Both read from the page cache, caches empty.
 * Ratios (issue 13 targets): cold fetch file:// / http >= 0.8 (the time over
 * http is at most 1.25x file://); store / curl >= 0.9.
 */
#include <dirent.h>
#include <arpa/inet.h>
#include <curl/curl.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench/util/benchutil.h"
#include "cache/cache.h"
#include "common/common.h"
#include "loader/loader.h"
#include "weightd/weightd.h"
#include "weights/client.h"
#include "weights/engine.h"

#define RANKS      4
#define REPS       3
#define MAX_ROUNDS 15

static pid_t g_nginx = -1;

static double secs(uint64_t ns)
{
	return (double)ns / 1e9;
}

static int dcmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Median of v[0..n) (sorts a copy). */
static double median(const double *v, uint64_t n)
{
	double s[MAX_ROUNDS];
	memcpy(s, v, (size_t)n * sizeof(*s));
	qsort(s, (size_t)n, sizeof(*s), dcmp);
	return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

static void nginx_stop(void)
{
	if (g_nginx > 0) {
		kill(g_nginx, SIGTERM);
		waitpid(g_nginx, NULL, 0);
		g_nginx = -1;
	}
}

/* One thread reports and exits; later callers wait for the exit. */
static int g_child; /* in a cold fetch's child: nginx is the parent's */

static void die(const char *what, const char *msg)
{
	static pthread_mutex_t once = PTHREAD_MUTEX_INITIALIZER;
	pthread_mutex_lock(&once);
	fprintf(stderr, "bench_http: %s: %s\n", what, msg);
	if (g_child)
		_exit(1); /* no exit handlers with weightd's threads running */
	nginx_stop();
	exit(1);
}

static const char *find_nginx(void)
{
	static const char *const cand[] = {"/usr/sbin/nginx", "/usr/local/sbin/nginx",
	                                   "/usr/local/nginx/sbin/nginx", "/usr/bin/nginx"};
	for (size_t i = 0; i < sizeof(cand) / sizeof(cand[0]); i++)
		if (access(cand[i], X_OK) == 0)
			return cand[i];
	return NULL;
}

/* A loopback TCP port free right now (0 on error). */
static int free_port(void)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a;
	socklen_t len = sizeof(a);
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	int port = 0;
	if (fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0 &&
	    getsockname(fd, (struct sockaddr *)&a, &len) == 0)
		port = ntohs(a.sin_port);
	if (fd >= 0)
		close(fd);
	return port;
}

static int port_open(int port)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a;
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_port = htons((uint16_t)port);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	int ok = fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0;
	if (fd >= 0)
		close(fd);
	return ok;
}

/* nginx serving root on 127.0.0.1:port, everything else in dir. */
static void nginx_start(const char *bin, const char *dir, const char *root, int port)
{
	char conf[1300], tmp[1300];
	snprintf(tmp, sizeof(tmp), "%s/tmp", dir);
	if (mkdir(dir, 0700) != 0 || mkdir(tmp, 0700) != 0)
		die("mkdir", dir);
	snprintf(conf, sizeof(conf), "%s/nginx.conf", dir);
	FILE *f = fopen(conf, "w");
	if (f == NULL)
		die("fopen", conf);
	fprintf(f,
	        "%sdaemon off;\nworker_processes 1;\npid %s/nginx.pid;\nerror_log %s/error.log;\n"
	        "events { worker_connections 256; }\n"
	        "http {\n  access_log off;\n  sendfile on;\n  tcp_nopush on;\n"
	        "  default_type application/octet-stream;\n  keepalive_requests 100000;\n"
	        "  client_body_temp_path %s/body;\n  proxy_temp_path %s/proxy;\n"
	        "  fastcgi_temp_path %s/fcgi;\n  uwsgi_temp_path %s/uwsgi;\n"
	        "  scgi_temp_path %s/scgi;\n"
	        "  server { listen 127.0.0.1:%d; root %s; }\n}\n",
	        geteuid() == 0 ? "user root;\n" : "", dir, dir, tmp, tmp, tmp, tmp, tmp, port,
	        root);
	if (fclose(f) != 0)
		die("write", conf);
	char elog[1300];
	snprintf(elog, sizeof(elog), "%s/error.log", dir);
	pid_t pid = fork();
	if (pid < 0)
		die("fork", "nginx");
	if (pid == 0) {
		int nul = open("/dev/null", O_RDWR);
		if (nul >= 0) {
			dup2(nul, 0);
			dup2(nul, 1);
		}
		execl(bin, bin, "-p", dir, "-e", elog, "-c", conf, (char *)NULL);
		_exit(127);
	}
	g_nginx = pid;
	for (int i = 0; i < 100; i++) {
		if (port_open(port))
			return;
		if (waitpid(pid, NULL, WNOHANG) == pid) {
			g_nginx = -1;
			die("nginx exited at start; see", elog);
		}
		usleep(50000);
	}
	die("nginx did not listen within 5 s; see", elog);
}

/* Read every file of dir once; bytes read. The largest file's name into big. */
static uint64_t read_dir(const char *dir, char *big, size_t cap)
{
	static uint8_t buf[8u << 20];
	DIR *d = opendir(dir);
	if (d == NULL)
		die("opendir", dir);
	uint64_t n = 0, bigsz = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		char p[1024];
		snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
		int fd = open(p, O_RDONLY);
		if (fd < 0)
			die("open", p);
		uint64_t fn = 0;
		ssize_t r;
		while ((r = read(fd, buf, sizeof(buf))) > 0)
			fn += (uint64_t)r;
		close(fd);
		n += fn;
		if (fn > bigsz) {
			bigsz = fn;
			snprintf(big, cap, "%s", e->d_name);
		}
	}
	closedir(d);
	return n;
}

typedef struct job {
	const char *url, *model;
	uint32_t rank;
	uint64_t bytes;
} job;

static void *job_main(void *arg)
{
	job *j = arg;
	wt_errbuf err;
	wt_client_opts o;
	bench_client_opts(&o, &j->url);
	o.cut_through = 1;
	o.manifest_timeout_ms = 3600000;
	o.request_timeout_ms = 600000;
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = RANKS;
	l.tp_rank = j->rank;
	wt_client *c;
	wt_manifest *m = NULL;
	if (wt_client_open(&c, &o, &err) != WT_OK ||
	    wt_client_get_manifest(c, j->model, &l, &m, &err) != WT_OK)
		die("manifest", err.msg);
	bench_count_sink cs;
	bench_count_sink_init(&cs);
	if (wt_client_fetch(c, m, &cs.base, NULL, &err) != WT_OK)
		die("fetch", err.msg);
	j->bytes = cs.bytes;
	wt_manifest_free(m);
	wt_client_close(c);
	return NULL;
}

/* A weightd with an empty cache in cachedir (models_dir = models, extra model
 * spec if not NULL); four clients fetch model's ranks at once. Seconds; *cpu:
 * CPU seconds of this process (weightd and the clients) and of nginx. */
static double cold_fetch(const char *models, const char *cachedir, const char *spec,
                         const char *model, uint64_t *bytes, double cpu[2])
{
	wd_config cfg;
	wd_config_init(&cfg);
	/* writeback_bytes above the layout, as bench_cold (a deployment's choice) */
	char *av[] = {"weightd",
	              "--listen",
	              "tcp://127.0.0.1:0",
	              "--models-dir",
	              (char *)models,
	              "--cache-dir",
	              (char *)cachedir,
	              "--chunk-bytes",
	              "4M",
	              "--cache-max-bytes",
	              "64G",
	              "--writeback-bytes",
	              "2G",
	              "--log-level",
	              "warning",
	              "--model",
	              (char *)spec};
	int ac = (int)(sizeof(av) / sizeof(av[0])) - (spec == NULL ? 2 : 0);
	wt_errbuf err;
	wd_server *srv;
	if (wd_config_parse_args(&cfg, ac, av, &err) != WT_OK ||
	    wd_server_open(&srv, &cfg, &err) != WT_OK)
		die("weightd", err.msg);
	const char *url = wd_server_url(srv, 0);
	job j[RANKS];
	pthread_t th[RANKS];
	double c0 = bench_cpu_s(), n0 = g_nginx > 0 ? bench_proc_cpu_s(g_nginx) : 0;
	uint64_t t0 = common_now_ns();
	for (uint32_t r = 0; r < RANKS; r++) {
		j[r] = (job){.url = url, .model = model, .rank = r};
		pthread_create(&th[r], NULL, job_main, &j[r]);
	}
	*bytes = 0;
	for (uint32_t r = 0; r < RANKS; r++) {
		pthread_join(th[r], NULL);
		*bytes += j[r].bytes;
	}
	double t = secs(common_now_ns() - t0);
	cpu[0] = bench_cpu_s() - c0;
	cpu[1] = g_nginx > 0 ? bench_proc_cpu_s(g_nginx) - n0 : 0;
	wd_server_close(srv);
	wd_config_free(&cfg);
	return t;
}

typedef struct cold_result {
	double t, cpu[2];
	uint64_t bytes;
} cold_result;

/* cold_fetch in a child process: each daemon starts with a fresh address space
 * (in one process, memory a previous daemon freed stays faulted in, up to
 * malloc's trim threshold, and the next one skips the page zeroing), and the
 * disk writes it left are synced before the next starts (out of the timing). */
static cold_result cold_fetch_forked(const char *models, const char *cachedir, const char *spec,
                                     const char *model)
{
	cold_result r = {0};
	int fd[2];
	if (pipe(fd) != 0)
		die("pipe", "cold fetch");
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0)
		die("fork", "cold fetch");
	if (pid == 0) {
		g_child = 1;
		close(fd[0]);
		r.t = cold_fetch(models, cachedir, spec, model, &r.bytes, r.cpu);
		_exit(write(fd[1], &r, sizeof(r)) == (ssize_t)sizeof(r) ? 0 : 1);
	}
	close(fd[1]);
	ssize_t n = read(fd[0], &r, sizeof(r));
	close(fd[0]);
	int st = 0;
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0 ||
	    n != (ssize_t)sizeof(r))
		die("cold fetch", "the child failed");
	sync();
	return r;
}

/* Seconds to open the checkpoint at uri with no digest remembered: the
 * content digest reads every byte (what registering a new model costs). */
static double open_digest(const char *uri)
{
	store *s = NULL;
	ckpt *c = NULL;
	wt_errbuf err = {0};
	uint64_t t0 = common_now_ns();
	if (store_open(&s, uri, &err) != WT_OK || ckpt_open(&c, s, &err) != WT_OK)
		die("ckpt_open", err.msg);
	double t = secs(common_now_ns() - t0);
	ckpt_close(c);
	store_close(s);
	return t;
}

/* Best seconds to read name (size bytes) through s in reads of step bytes. */
static double store_best(store *s, const char *name, uint8_t *buf, uint64_t size, uint64_t step)
{
	double best = 1e30;
	for (int r = 0; r < REPS; r++) {
		wt_errbuf err = {0};
		uint64_t t0 = common_now_ns();
		for (uint64_t off = 0; off < size; off += step) {
			size_t n = (size_t)(size - off < step ? size - off : step);
			if (store_read(s, name, off, buf + off, n, &err) != WT_OK)
				die("store_read", err.msg);
		}
		double t = secs(common_now_ns() - t0);
		best = t < best ? t : best;
	}
	return best;
}

typedef struct sink_buf {
	uint8_t *buf; /* NULL: drop the bytes */
	uint64_t got, cap;
} sink_buf;

static size_t body_cb(char *p, size_t sz, size_t n, void *u)
{
	sink_buf *b = u;
	size_t len = sz * n;
	if (b->buf != NULL) {
		if (len > b->cap - b->got)
			return 0;
		memcpy(b->buf + b->got, p, len);
	}
	b->got += len;
	return len;
}

/* Best seconds for libcurl easy to GET url (size bytes) into buf (NULL: a
 * callback that drops the bytes). */
static double curl_best(const char *url, uint8_t *buf, uint64_t size)
{
	double best = 1e30;
	for (int r = 0; r < REPS; r++) {
		CURL *h = curl_easy_init();
		sink_buf b = {buf, 0, size};
		uint64_t got = 0;
		if (h == NULL)
			die("curl", "curl_easy_init");
		curl_easy_setopt(h, CURLOPT_URL, url);
		curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, body_cb);
		curl_easy_setopt(h, CURLOPT_WRITEDATA, &b);
		curl_easy_setopt(h, CURLOPT_BUFFERSIZE, 512L * 1024);
		uint64_t t0 = common_now_ns();
		CURLcode rc = curl_easy_perform(h);
		double t = secs(common_now_ns() - t0);
		curl_easy_cleanup(h);
		got = b.got;
		if (rc != CURLE_OK || got != size)
			die("curl", rc != CURLE_OK ? curl_easy_strerror(rc) : "short body");
		best = t < best ? t : best;
	}
	return best;
}

/* --gib, --rounds, --cold into o: 0, or 2 with the usage printed. */
typedef struct opts {
	double gib;
	int cold_only;
	uint64_t rounds;
} opts;

static int parse_args(int argc, char **argv, opts *o)
{
	*o = (opts){.gib = 1.0, .rounds = 3};
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--gib") == 0 && i + 1 < argc)
			o->gib = strtod(argv[++i], NULL);
		else if (strcmp(argv[i], "--cold") == 0)
			o->cold_only = 1;
		else if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc) {
			if (bench_u64("--rounds", argv[++i], &o->rounds) != 0)
				return 2;
		} else {
			fprintf(stderr,
			        "usage: bench_http [--gib G (0.05..64, default 1)] [--rounds N "
			        "(cold fetch pairs, 1..%d, default 3)] [--cold (the cold "
			        "fetches only)]\n",
			        MAX_ROUNDS);
			return 2;
		}
	}
	if (o->rounds < 1 || o->rounds > MAX_ROUNDS) {
		fprintf(stderr, "bench_http: --rounds %llu is outside 1..%d\n",
		        (unsigned long long)o->rounds, MAX_ROUNDS);
		return 2;
	}
	if (o->gib < 0.05 || o->gib > 64) {
		fprintf(stderr, "bench_http: --gib %.3f is outside 0.05..64\n", o->gib);
		return 2;
	}
	return 0;
}

/* Registration (open with the content digest) of file:// and http://, best of 2, then
 * `rounds` pairs of cold fetches of every rank (fresh caches, alternating order): the medians
 * into *t_file, *t_http. */
static void cold_rounds(const char *models, const char *model, const char *base, const char *spec,
                        uint64_t ck, uint64_t rounds, double *t_file, double *t_http)
{
	char furi[1200], c1[1100], c2[1100];
	snprintf(furi, sizeof(furi), "file://%s", model);
	snprintf(c1, sizeof(c1), "%s/cache-file", bench_tmp());
	snprintf(c2, sizeof(c2), "%s/cache-http", bench_tmp());
	double of[2], oh[2];
	for (int r = 0; r < 2; r++) {
		of[r] = open_digest(furi);
		oh[r] = open_digest(base);
	}
	double o_file = of[0] < of[1] ? of[0] : of[1], o_http = oh[0] < oh[1] ? oh[0] : oh[1];
	printf("register (open with the content digest, every byte read), best of 2: file:// "
	       "%.3f s = %.2f GB/s, http:// %.3f s = %.2f GB/s\n",
	       o_file, (double)ck / 1e9 / o_file, o_http, (double)ck / 1e9 / o_http);
	double tf[MAX_ROUNDS], th[MAX_ROUNDS];
	for (uint64_t r = 0; r < rounds; r++) {
		/* fresh caches each round; the order alternates (drift on a shared VM) */
		char d1[1200], d2[1200];
		snprintf(d1, sizeof(d1), "%s.%llu", c1, (unsigned long long)r);
		snprintf(d2, sizeof(d2), "%s.%llu", c2, (unsigned long long)r);
		cold_result f, h;
		if (r % 2 == 0) {
			f = cold_fetch_forked(models, d1, NULL, "m");
			h = cold_fetch_forked(models, d2, spec, "mh");
		} else {
			h = cold_fetch_forked(models, d2, spec, "mh");
			f = cold_fetch_forked(models, d1, NULL, "m");
		}
		if (f.bytes != h.bytes)
			die("fetch", "http and file:// layouts differ in size");
		tf[r] = f.t;
		th[r] = h.t;
		printf("round %llu: cold fetch, all ranks (%.0f MiB out): file:// %.3f s, CPU "
		       "%.2f s; http:// %.3f s, CPU %.2f s + nginx %.2f s; file:// / http %.2f\n",
		       (unsigned long long)r + 1, (double)f.bytes / 1048576.0, f.t, f.cpu[0], h.t,
		       h.cpu[0], h.cpu[1], f.t / h.t);
	}
	*t_file = median(tf, rounds);
	*t_http = median(th, rounds);
	printf("cold fetch, all ranks, median of %llu: file:// %.3f s, http:// %.3f s\n",
	       (unsigned long long)rounds, *t_file, *t_http);
}

/* The http store's ranged reads of object `big` against libcurl fetching it (to a dropping
 * callback, into one buffer), whole, in 16 MiB reads and as one range. */
static void store_vs_curl(const char *model, const char *big, const char *base, const char *objurl)
{
	struct stat st;
	char bigpath[1400];
	snprintf(bigpath, sizeof(bigpath), "%s/%s", model, big);
	if (stat(bigpath, &st) != 0)
		die("stat", bigpath);
	uint64_t size = (uint64_t)st.st_size;
	uint8_t *buf = malloc(size);
	store *s = NULL;
	wt_errbuf err = {0};
	if (buf == NULL)
		die("malloc", "object buffer");
	if (store_open(&s, base, &err) != WT_OK)
		die("store_open", err.msg);
	double t_curl = curl_best(objurl, NULL, size);
	double t_curlbuf = curl_best(objurl, buf, size);
	double t_whole = store_best(s, big, buf, size, size);
	double t_16 = store_best(s, big, buf, size, 16u << 20);
	store_close(s);
	s = NULL;
	setenv("WEIGHTD_HTTP_PARALLEL", "1", 1); /* one range per read, for comparison */
	if (store_open(&s, base, &err) != WT_OK)
		die("store_open", err.msg);
	double t_one = store_best(s, big, buf, size, size);
	store_close(s);
	free(buf);
	double gb = (double)size / 1e9;
	printf("object %s: %.0f MiB, best of %d\n", big, (double)size / 1048576.0, REPS);
	printf("baseline: libcurl easy GET to a dropping callback: %.2f GB/s; into one buffer "
	       "(memcpy, as the store must): %.2f GB/s\n",
	       gb / t_curl, gb / t_curlbuf);
	printf("http store (WEIGHTD_HTTP_PARALLEL default), whole-object read: %.2f GB/s; 16 MiB "
	       "reads: %.2f GB/s; one range (WEIGHTD_HTTP_PARALLEL=1), whole object: %.2f GB/s\n",
	       gb / t_whole, gb / t_16, gb / t_one);
	printf("RATIO http store / curl, whole object: %.2f; 16 MiB reads: %.2f; one range: %.2f   "
	       "(target >= 0.9)\n",
	       t_curl / t_whole, t_curl / t_16, t_curl / t_one);
	printf("RATIO http store / curl into a buffer, whole object: %.2f; one range: %.2f\n",
	       t_curlbuf / t_whole, t_curlbuf / t_one);
}

int main(int argc, char **argv)
{
	opts o;
	if (parse_args(argc, argv, &o) != 0)
		return 2;
	const char *nginx = find_nginx();
	if (nginx == NULL) {
		printf("SKIP bench_http: nginx not found (Debian/Ubuntu: apt-get install -y "
		       "nginx-light)\n");
		return 0;
	}
	if (bench_init(argv[0], "http") != 0)
		return 1;
	atexit(nginx_stop);
	char mb[32], models[1024], model[1100], ngdir[1100], big[256];
	snprintf(mb, sizeof(mb), "%.0f", o.gib * 1024);
	if (bench_make_llama("m", mb) != 0)
		die("wt-mkckpt", "cannot make the fixture (build it with make)");
	snprintf(models, sizeof(models), "%s/models", bench_tmp());
	snprintf(model, sizeof(model), "%s/m", models);
	snprintf(ngdir, sizeof(ngdir), "%s/nginx", bench_tmp());
	cache_tune_malloc(4u << 20);
	common_log_set(NULL, NULL, WT_LOG_WARNING);
	curl_global_init(CURL_GLOBAL_DEFAULT);

	read_dir(model, big, sizeof(big)); /* into the page cache */
	uint64_t ck = read_dir(model, big, sizeof(big));
	int port = free_port();
	if (port == 0)
		die("socket", "no free loopback port");
	nginx_start(nginx, ngdir, models, port);
	char base[128], spec[200], objurl[512];
	snprintf(base, sizeof(base), "http://127.0.0.1:%d/m", port);
	snprintf(spec, sizeof(spec), "mh=%s", base);
	snprintf(objurl, sizeof(objurl), "%s/%s", base, big);
	printf("model: llama %.2f GiB (%llu source bytes), TP=%d, %d concurrent clients, 4 MiB "
	       "chunks, cut-through, cold caches; nginx %s on 127.0.0.1:%d (sendfile)\n",
	       (double)ck / 1073741824.0, (unsigned long long)ck, RANKS, RANKS, nginx, port);
	double t_file, t_http;
	cold_rounds(models, model, base, spec, ck, o.rounds, &t_file, &t_http);
	if (!o.cold_only)
		store_vs_curl(model, big, base, objurl);
	printf("RATIO cold fetch file:// / http (medians): %.2f   (target >= 0.8)\n",
	       t_file / t_http);
	nginx_stop();
	curl_global_cleanup();
	bench_finish(0);
	return 0;
}
