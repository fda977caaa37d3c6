/*
 * test_loader_oom.c — an allocation failure while the content digests of a
 * checkpoint's files are computed (several files at once, loader/revision.c)
 * fails the open with WT_ENOMEM naming that file: never a revision built from
 * digests that were not computed, whichever file fails and however the others
 * were stopped.
 *
 * The test replaces malloc (forwarding to glibc's __libc_malloc) and fails
 * every allocation of exactly the size of the victim file's read buffer (a
 * file under the 8 MiB read block is read in one buffer of its size), on any
 * thread. Under AddressSanitizer, which owns malloc, it is skipped (exit 77).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "loader/loader.h"
#include "tests/util/oom.h"
#include "tests/util/testutil.h"

#ifndef OOM_SKIP
static _Atomic size_t fail_size; /* 0 = never */
static _Atomic long failed;

void *malloc(size_t n)
{
	if (n != 0 && n == atomic_load(&fail_size)) {
		atomic_fetch_add(&failed, 1);
		return NULL;
	}
	return __libc_malloc(n);
}

#define SEED 4242u

static const st_desc tiny[] = {
    {"model.embed_tokens.weight", WT_BF16, 2, {128, 64}},
    {"model.layers.0.self_attn.q_proj.weight", WT_BF16, 2, {64, 64}},
    {"model.layers.0.self_attn.k_proj.weight", WT_BF16, 2, {32, 64}},
    {"model.layers.0.input_layernorm.weight", WT_F32, 1, {64}},
    {"model.layers.1.mlp.up_proj.weight", WT_BF16, 2, {96, 64}},
    {"model.layers.1.mlp.down_proj.weight", WT_BF16, 2, {64, 80}},
    {"model.norm.weight", WT_BF16, 1, {64}},
    {"lm_head.weight", WT_BF16, 2, {128, 72}},
};
#define N_TINY (sizeof(tiny) / sizeof(tiny[0]))

/* Eight files, one tensor each; each file whose size no other file has fails
 * its digest's buffer in turn: the open fails with WT_ENOMEM naming it. */
static void test_digest_oom(void **state)
{
	(void)state;
	char *dir = tu_mkdtemp("ldoom");
	assert_int_equal(tu_write_ckpt(dir, tu_llama_config, tiny, N_TINY, N_TINY, SEED), 0);
	off_t size[N_TINY];
	char name[N_TINY][64];
	for (size_t k = 0; k < N_TINY; k++) {
		tu_shard_name(name[k], sizeof(name[k]), k + 1, N_TINY);
		char *p = tu_path(dir, name[k]);
		struct stat st;
		assert_int_equal(stat(p, &st), 0);
		size[k] = st.st_size;
		free(p);
	}
	store *s;
	wt_errbuf err;
	assert_int_equal(store_open(&s, dir, &err), WT_OK);
	int tried = 0;
	for (size_t k = 0; k < N_TINY; k++) {
		int twins = 0;
		for (size_t j = 0; j < N_TINY; j++)
			twins += size[j] == size[k];
		if (twins != 1)
			continue;
		ckpt *c = NULL;
		atomic_store(&failed, 0);
		atomic_store(&fail_size, (size_t)size[k]);
		memset(&err, 0, sizeof(err));
		int rv = ckpt_open(&c, s, &err);
		atomic_store(&fail_size, 0);
		printf("file %zu (%lld bytes) cannot be read into memory: %s (%ld allocations "
		       "failed): %s\n",
		       k + 1, (long long)size[k], wt_errname(rv), (long)atomic_load(&failed),
		       err.msg);
		assert_true(atomic_load(&failed) >= 1);
		assert_int_equal(rv, WT_ENOMEM);
		assert_null(c);
		assert_non_null(strstr(err.msg, name[k]));
		tried++;
	}
	assert_true(tried >= 4);
	ckpt *c = NULL;
	assert_int_equal(ckpt_open(&c, s, &err), WT_OK); /* nothing fails: it opens */
	assert_int_equal(strlen(ckpt_revision(c)), 64);
	ckpt_close(c);
	store_close(s);
	tu_rmrf(dir);
	free(dir);
}
#endif

int main(void)
{
#ifdef OOM_SKIP
	printf("test_loader_oom: skipped under AddressSanitizer (it replaces malloc)\n");
	return 77;
#else
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_digest_oom),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
#endif
}
