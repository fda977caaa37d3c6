/*
 * faultyd.c — wt-faultyd, a weightd for fault tests (never installed): the
 * real server with faults injected (weightd/faults.c), for integration tests
 * that need a misbehaving daemon process.
 *
 *   wt-faultyd --corrupt-chunk N [any weightd flag ...]
 *
 * flips one byte of the N-th chunk reply after the cache verified it. Writes
 * --ready-file like weightd; SIGTERM/SIGINT drain and exit 0.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "weightd/server_int.h"

int main(int argc, char **argv)
{
	wd_faults faults = {0};
	if (argc < 3 || strcmp(argv[1], "--corrupt-chunk") != 0 ||
	    (faults.corrupt_chunk = strtoull(argv[2], NULL, 10)) == 0) {
		fprintf(stderr, "usage: wt-faultyd --corrupt-chunk N [weightd flags]\n");
		return 2;
	}
	wd_config cfg;
	wt_errbuf err;
	if (wd_config_init(&cfg) != WT_OK)
		return 1;
	argv[2] = argv[0]; /* the weightd flags, with a program name in front */
	int rv = wd_config_parse_args(&cfg, argc - 2, argv + 2, &err);
	if (rv == WT_OK)
		rv = wd_config_resolve_tokens(&cfg, &err);
	if (rv != WT_OK) {
		fprintf(stderr, "wt-faultyd: %s\n", err.msg);
		wd_config_free(&cfg);
		return 2;
	}
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	pthread_sigmask(SIG_BLOCK, &set, NULL); /* before any thread starts */
	wd_server *srv = NULL;
	if ((rv = wd_server_open(&srv, &cfg, &err)) != WT_OK) {
		fprintf(stderr, "wt-faultyd: %s\n", err.msg);
		wd_config_free(&cfg);
		return 1;
	}
	wd_server_set_faults(srv, &faults);
	if (cfg.ready_file[0] != '\0') {
		char tmp[4200];
		snprintf(tmp, sizeof(tmp), "%s.tmp", cfg.ready_file);
		FILE *f = fopen(tmp, "w");
		for (size_t i = 0; f != NULL && wd_server_url(srv, i) != NULL; i++)
			fprintf(f, "%s\n", wd_server_url(srv, i));
		if (f == NULL || fclose(f) != 0 || rename(tmp, cfg.ready_file) != 0)
			fprintf(stderr, "wt-faultyd: cannot write %s\n", cfg.ready_file);
	}
	fprintf(stderr, "wt-faultyd: listening on %s; chunk reply #%llu will be corrupted\n",
	        wd_server_url(srv, 0), (unsigned long long)faults.corrupt_chunk);
	int sig = 0;
	sigwait(&set, &sig);
	wd_stop(srv, cfg.drain_timeout_ms, NULL, NULL); /* as weightd's main */
	wd_config_free(&cfg);
	return 0;
}
