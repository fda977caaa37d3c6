/*
 * fuzz_checkpoint.c — the Hugging Face checkpoint view: config.json, the
 * index (model.safetensors.index.json) and a safetensors shard, opened by
 * ckpt_open_quick from a file:// store in a temp folder (no network, no
 * digest).
 *
 * Input: CONFIG \0 INDEX \0 SHARD (split at the first two NUL bytes; JSON
 * text holds no raw NUL). An empty INDEX is the single-file layout (SHARD is
 * model.safetensors); otherwise SHARD is model-00001-of-00001.safetensors,
 * the file an index normally names. CONFIG also goes through
 * ckpt_config_fields.
 */
#include <string.h>
#include <unistd.h>

#include "loader/loader.h"
#include "tests/fuzz/fuzz.h"
#include "tests/util/testutil.h"

#define SHARD_NAME "model-00001-of-00001.safetensors"

static char *dir;
static store *st;

static void cleanup(void)
{
	store_close(st);
	if (dir != NULL)
		tu_rmrf(dir);
	free(dir);
}

static void setup(void)
{
	wt_errbuf err;
	if ((dir = tu_mkdtemp("fuzz-ckpt")) == NULL || store_open(&st, dir, &err) != WT_OK) {
		fprintf(stderr, "fuzz_checkpoint: cannot set up a store: %s\n", err.msg);
		abort();
	}
	atexit(cleanup);
}

/* Next part of [*p, end) up to a NUL (or the end). */
static const uint8_t *part(const uint8_t **p, const uint8_t *end, size_t *len)
{
	const uint8_t *s = *p;
	const uint8_t *z = s < end ? memchr(s, 0, (size_t)(end - s)) : NULL;
	*len = (size_t)((z ? z : end) - s);
	*p = z ? z + 1 : end;
	return s;
}

static void put(const char *name, const uint8_t *b, size_t len, int present)
{
	char *path = tu_path(dir, name);
	unlink(path);
	free(path);
	if (present && tu_write_file(dir, name, b, len) != 0)
		abort();
}

static void fields(const uint8_t *cfg, size_t len)
{
	ckpt_field f[] = {
	    {.key = "rms_norm_eps", .kind = CKPT_FIELD_REAL},
	    {.key = "rope_parameters.rope_theta", .kind = CKPT_FIELD_REAL},
	    {.key = "hidden_act", .kind = CKPT_FIELD_STRING},
	    {.key = "max_position_embeddings", .kind = CKPT_FIELD_INT},
	    {.key = "attention_bias", .kind = CKPT_FIELD_BOOL},
	};
	wt_errbuf err;
	if (fuzz_note("ckpt_config_fields",
	              ckpt_config_fields((const char *)cfg, len, f, sizeof(f) / sizeof(f[0]), &err),
	              &err) == WT_OK)
		for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++)
			FUZZ_CHECK(memchr(f[i].s, 0, sizeof(f[i].s)) != NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (st == NULL)
		setup();
	const uint8_t *p = data, *end = data + size;
	size_t cl, il, sl;
	const uint8_t *cfg = part(&p, end, &cl);
	const uint8_t *idx = part(&p, end, &il);
	const uint8_t *shard = p;
	sl = (size_t)(end - p);
	fields(cfg, cl);
	put("config.json", cfg, cl, 1);
	put("model.safetensors.index.json", idx, il, il > 0);
	put("model.safetensors", shard, sl, il == 0);
	put(SHARD_NAME, shard, sl, il > 0);

	ckpt *c = NULL;
	wt_errbuf err;
	if (fuzz_note("ckpt_open_quick", ckpt_open_quick(&c, st, &err), &err) != WT_OK) {
		FUZZ_CHECK(c == NULL && err.msg[0] != '\0');
		return 0;
	}
	size_t n = ckpt_n_tensors(c);
	uint64_t total = 0;
	for (size_t i = 0; i < n; i++) {
		const ckpt_tensor *t = ckpt_tensor_at(c, i);
		FUZZ_CHECK(ckpt_find(c, t->name) == t && ckpt_tensor_index(c, t) == i);
		FUZZ_CHECK(t->off <= sl && t->nbytes <= sl - t->off);
		if (i > 0)
			FUZZ_CHECK(strcmp(ckpt_tensor_at(c, i - 1)->name, t->name) < 0);
		total += t->nbytes;
	}
	FUZZ_CHECK(total == ckpt_total_bytes(c));
	FUZZ_CHECK(ckpt_get_config(c) != NULL);
	ckpt_close(c);
	return 0;
}
