/*
 * test_objstore_fx.h — the fixture of tests/test_objstore.c and test_objstore_version.c (test
 * code only): a temp folder holding big.bin (BIG_BYTES of seeded bytes), an odd name and a
 * small llama checkpoint under model/, served by tests/integration/objstore_server.py (its
 * fault modes are the URL's first path segment: open_mode), the files' mtimes put back so
 * that their versions can be pinned (age_files), and the server's request counts
 * (server_count). Include after cmocka.h.
 */
#ifndef WT_TEST_OBJSTORE_FX_H
#define WT_TEST_OBJSTORE_FX_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "loader/loader.h"
#include "tests/test_objstore_util.h"
#include "tests/test_weightd_util.h"
#include "tests/util/testutil.h"

#define SEED      777u
#define BIG_BYTES (3u * 1024u * 1024u + 123u)

typedef struct fx {
	char *dir;
	uint8_t *big;
	os_helper srv;
	char base[128]; /* http://127.0.0.1:PORT */
} fx;

static const st_desc descs[] = {
    {"model.embed_tokens.weight", WT_BF16, 2, {128, 64}},
    {"model.layers.0.self_attn.q_proj.weight", WT_BF16, 2, {64, 64}},
    {"model.layers.0.mlp.up_proj.weight", WT_BF16, 2, {128, 64}},
    {"model.norm.weight", WT_F32, 1, {64}},
};

/* Put the mtimes of the model's files and of the folder's own (big.bin) 10 s
 * back: an http object is pinned only once the second of its last write has
 * passed (asked again WEIGHTD_HTTP_SETTLE_MS later). 0 on success. */
static int age_files(const fx *f)
{
	char *model = tu_path(f->dir, "model");
	int rc = model == NULL || tu_touch_dir(model, -10000000000ll) != 0 ||
	         tu_touch_dir(f->dir, -10000000000ll) != 0;
	free(model);
	return rc;
}

static int setup(void **state)
{
	fx *f = calloc(1, sizeof(*f));
	if (f == NULL || (f->big = malloc(BIG_BYTES)) == NULL)
		return -1;
	*state = f;
	printf("seed %u\n", SEED);
	f->dir = tu_mkdtemp("objstore");
	if (f->dir == NULL)
		return -1;
	tu_fill(f->big, BIG_BYTES, SEED);
	char *model = tu_path(f->dir, "model");
	int rc = tu_write_file(f->dir, "big.bin", f->big, BIG_BYTES);
	rc |= tu_write_file(f->dir, "odd name+%.bin", "x y", 3);
	rc |= tu_write_ckpt(model, tu_llama_config, descs, 4, 2, SEED);
	free(model);
	rc |= age_files(f);
	if (rc != 0)
		return -1;
	/* small retries and splits so the paths run fast */
	setenv("WEIGHTD_HTTP_BACKOFF_MS", "10", 1);
	setenv("WEIGHTD_HTTP_RETRIES", "3", 1);
	setenv("WEIGHTD_HTTP_SPLIT_BYTES", "1048576", 1);
	setenv("WEIGHTD_HTTP_PARALLEL", "4", 1);
	char *script = os_script("objstore_server.py");
	char *argv[] = {script, "--root", f->dir, "--stdin", NULL};
	rc = os_start(&f->srv, argv, 20000);
	free(script);
	int port = 0;
	if (rc != 0 || sscanf(f->srv.line, "PORT %d", &port) != 1) {
		fprintf(stderr, "objstore_server.py did not start (python3 on PATH?): '%s'\n",
		        f->srv.line);
		return -1;
	}
	snprintf(f->base, sizeof(f->base), "http://127.0.0.1:%d", port);
	return 0;
}

static int teardown(void **state)
{
	fx *f = *state;
	if (f == NULL)
		return 0;
	os_stop(&f->srv);
	if (f->dir != NULL)
		tu_rmrf(f->dir);
	free(f->dir);
	free(f->big);
	free(f);
	return 0;
}

static store *open_mode(const fx *f, const char *mode)
{
	char uri[256];
	snprintf(uri, sizeof(uri), "%s/%s", f->base, mode);
	store *s = NULL;
	wt_errbuf err = {0};
	int rv = store_open(&s, uri, &err);
	if (rv != WT_OK)
		fprintf(stderr, "store_open(%s): %s\n", uri, err.msg);
	assert_int_equal(rv, WT_OK);
	return s;
}

static size_t body_cb(char *p, size_t sz, size_t n, void *ctx)
{
	char *b = ctx;
	size_t have = strlen(b), add = sz * n;
	if (have + add < 63) {
		memcpy(b + have, p, add);
		b[have + add] = '\0';
	}
	return add;
}

/* GET (what = "gets") or HEAD ("heads") requests the server counted under
 * /counted/ so far (plain libcurl). */
static long server_count(const fx *f, const char *what)
{
	char uri[200], body[64] = "";
	snprintf(uri, sizeof(uri), "%s/_%s", f->base, what);
	CURL *h = curl_easy_init();
	assert_non_null(h);
	curl_easy_setopt(h, CURLOPT_URL, uri);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, body_cb);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, body);
	assert_int_equal(curl_easy_perform(h), CURLE_OK);
	curl_easy_cleanup(h);
	return strtol(body, NULL, 10);
}

#endif
