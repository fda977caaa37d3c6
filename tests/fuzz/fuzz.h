/*
 * fuzz.h — the libFuzzer entry point every tests/fuzz/fuzz_*.c target defines.
 *
 * Each target is linked twice (Makefile): with replay.c, a main() that runs
 * the target over every file of its corpus (gcc; build/ and build-asan/; part
 * of `make test` through tests/integration/fuzz_replay.sh), and, in
 * `make fuzz` only, with clang's -fsanitize=fuzzer (build-fuzz/fuzz/).
 *
 * A target returns 0 for every input, accepted or refused: a parser may only
 * answer an error. A broken invariant (a crash, a sanitizer report, an
 * accepted input that breaks the parser's own contract) aborts.
 */
#ifndef WT_TESTS_FUZZ_H
#define WT_TESTS_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "weights/client.h"
#include "weights/error.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Abort with a message: the target found a contract violation. */
#define FUZZ_CHECK(cond)                                                                           \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "%s:%d: fuzz check failed: %s\n", __FILE__, __LINE__,      \
			        #cond);                                                            \
			abort();                                                                   \
		}                                                                                  \
	} while (0)

/* With WT_FUZZ_VERBOSE set (corpus curation: does a seed get where it should?),
 * print what a step answered. Returns rv. */
static inline int fuzz_note(const char *step, int rv, const wt_errbuf *err)
{
	static int verbose = -1;
	if (verbose < 0)
		verbose = getenv("WT_FUZZ_VERBOSE") != NULL;
	if (verbose)
		fprintf(stderr, "  %s: %s%s%s\n", step, wt_strerror(rv), rv ? ": " : "",
		        rv ? err->msg : "");
	return rv;
}

/* A client for targets that hand it replies themselves: its one endpoint
 * (tcp://127.0.0.1:1) is never dialed. Aborts if it cannot be opened;
 * the caller wt_client_close's it. */
static inline wt_client *fuzz_client_open(void)
{
	wt_client_opts o;
	wt_client_opts_init(&o);
	const char *eps[] = {"tcp://127.0.0.1:1"};
	o.endpoints = eps;
	o.n_endpoints = 1;
	wt_client *c = NULL;
	wt_errbuf err;
	if (wt_client_open(&c, &o, &err) != WT_OK) {
		fprintf(stderr, "fuzz: wt_client_open: %s\n", err.msg);
		abort();
	}
	return c;
}

#endif
