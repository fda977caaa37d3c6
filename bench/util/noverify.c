/*
 * noverify.c — BENCHMARKS ONLY: turn a client's hash checks off, so bench_fetch
 * can measure what verification costs. Not part of libweights and of no shipped
 * program (bench/util/ is linked into the benchmarks alone): skipping the
 * XXH3-128 checks is no user feature (DESIGN.md "Integrity on both ends": a
 * corrupt cache or peer must be an error). It reaches into client_int.h as a
 * test does.
 */
#include <stdatomic.h>

#include "bench/util/benchutil.h"
#include "client/client_int.h"

void bench_client_set_verify(wt_client *c, int verify)
{
	atomic_store(&c->verify, verify != 0);
}
