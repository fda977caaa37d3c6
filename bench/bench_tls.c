/*
 * bench_tls.c — cache-hit goodput over tls+tcp:// against plain tcp:// from
 * the same weightd in the same run (nng's TLS over mbedTLS 2.28).
 *
 *   TLS / plain goodput      (no target: the price of encryption on this host)
 *
 * Makes a llama of WT_BENCH_MB MiB (default 128) with build/wt-mkckpt, a CA
 * and a server certificate for "localhost" with openssl, starts build/weightd
 * listening on both, warms a TP=1 layout, and reports the best of 3 fetches
 * over each (libweights, counting sink, verified) with their CPU seconds.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench/util/benchutil.h"
#include "common/common.h"
#include "weights/client.h"
#include "weights/engine.h"

static double cpu_s(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

/* Best of 3 verified fetches of the warm layout; *cpu = client CPU s per GB. */
static double best_goodput(wt_client *c, const wt_layout *l, double *cpu_per_gb)
{
	double best = 0;
	*cpu_per_gb = 0;
	for (int i = 0; i < 3; i++) {
		wt_manifest *m = NULL;
		wt_errbuf err;
		bench_count_sink cs;
		bench_count_sink_init(&cs);
		if (wt_client_get_manifest(c, "llama", l, &m, &err) != WT_OK) {
			fprintf(stderr, "bench_tls: manifest: %s\n", err.msg);
			return 0;
		}
		double c0 = cpu_s();
		uint64_t t0 = common_now_ns();
		int rv = wt_client_fetch(c, m, &cs.base, NULL, &err);
		double s = (double)(common_now_ns() - t0) / 1e9;
		double c1 = cpu_s();
		wt_manifest_free(m);
		if (rv != WT_OK) {
			fprintf(stderr, "bench_tls: fetch: %s\n", err.msg);
			return 0;
		}
		double g = (double)cs.bytes / s / 1e9;
		if (g > best) {
			best = g;
			*cpu_per_gb = (c1 - c0) / ((double)cs.bytes / 1e9);
		}
	}
	return best;
}

static pid_t start(char *plain, char *tls, size_t cap)
{
	char bin[4200], models[4200], cache[4200], ready[4200], pem[4200];
	snprintf(bin, sizeof(bin), "%s/weightd", bench_build());
	snprintf(models, sizeof(models), "%s/models", bench_tmp());
	snprintf(cache, sizeof(cache), "%s/cache", bench_tmp());
	snprintf(ready, sizeof(ready), "%s/ready", bench_tmp());
	snprintf(pem, sizeof(pem), "%s/server.pem", bench_tmp());
	pid_t p = fork();
	if (p == 0) {
		execl(bin, bin, "--listen", "tcp://127.0.0.1:0", "--listen",
		      "tls+tcp://127.0.0.1:0", "--tls-cert-key-file", pem, "--models-dir", models,
		      "--cache-dir", cache, "--log-level", "warning", "--ready-file", ready,
		      (char *)NULL);
		_exit(127);
	}
	for (int i = 0; p > 0 && i < 1200; i++) {
		FILE *f = fopen(ready, "r");
		if (f != NULL) {
			char t[512];
			int ok =
			    fgets(plain, (int)cap, f) != NULL && fgets(t, sizeof(t), f) != NULL;
			fclose(f);
			if (ok) {
				plain[strcspn(plain, "\n")] = '\0';
				t[strcspn(t, "\n")] = '\0';
				const char *port = strrchr(t, ':');
				snprintf(tls, cap, "tls+tcp://localhost%s", port ? port : ":0");
				return p;
			}
		}
		usleep(50000);
	}
	if (p > 0)
		kill(p, SIGKILL);
	return -1;
}

int main(int argc, char **argv)
{
	(void)argc;
	if (bench_init(argv[0], "tls") != 0)
		return 1;
	const char *mb = getenv("WT_BENCH_MB") ? getenv("WT_BENCH_MB") : "128";
	char cmd[16384];
	const char *d = bench_tmp();
	snprintf(cmd, sizeof(cmd),
	         "cd '%s' && openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -subj "
	         "'/CN=bench CA' -days 1 -out ca.crt >/dev/null 2>&1 && openssl req -newkey "
	         "rsa:2048 -nodes -keyout server.key -subj /CN=localhost -addext "
	         "subjectAltName=DNS:localhost -out server.csr >/dev/null 2>&1 && openssl x509 "
	         "-req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 1 -extfile "
	         "<(echo subjectAltName=DNS:localhost) -out server.crt >/dev/null 2>&1 && cat "
	         "server.crt server.key > server.pem",
	         d);
	char *sh[] = {"/bin/bash", "-c", cmd, NULL};
	char plain[512], tls[512];
	pid_t wd = -1;
	if (bench_make_llama("llama", mb) != 0 || bench_run(sh, NULL) != 0 ||
	    (wd = start(plain, tls, sizeof(plain))) < 0) {
		fprintf(stderr, "bench_tls: cannot make the fixture, certificates or weightd\n");
		bench_finish(wd);
		return 1;
	}
	char ca[4200];
	snprintf(ca, sizeof(ca), "%s/ca.crt", d);
	const char *ep_plain[] = {plain}, *ep_tls[] = {tls};
	wt_client_opts o;
	wt_client *cp = NULL, *ct = NULL;
	wt_errbuf err;
	bench_client_opts(&o, ep_plain);
	int rv = wt_client_open(&cp, &o, &err);
	bench_client_opts(&o, ep_tls);
	o.tls_ca_file = ca;
	if (rv == WT_OK)
		rv = wt_client_open(&ct, &o, &err);
	wt_layout l;
	wt_layout_init(&l);
	double gp = 0, gt = 0, cpp = 0, cpt = 0;
	if (rv == WT_OK) {
		best_goodput(cp, &l, &cpp); /* warm: produce the layout */
		gp = best_goodput(cp, &l, &cpp);
		gt = best_goodput(ct, &l, &cpt);
	} else {
		fprintf(stderr, "bench_tls: %s\n", err.msg);
	}
	printf("bench_tls: llama %s MiB, TP=1, cache hit, best of 3, %u connections\n", mb,
	       o.connections);
	printf("  plain tcp://   %.2f GB/s  (client CPU %.2f s/GB)\n", gp, cpp);
	printf("  tls+tcp://     %.2f GB/s  (client CPU %.2f s/GB)\n", gt, cpt);
	printf("  TLS / plain goodput = %.3f\n", gp > 0 ? gt / gp : 0);
	wt_layout_clear(&l);
	wt_client_close(cp);
	wt_client_close(ct);
	bench_finish(wd);
	return gp > 0 && gt > 0 ? 0 : 1;
}
