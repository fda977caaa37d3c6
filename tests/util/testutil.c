/* testutil.c — shared test helpers (see testutil.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include "tests/util/testutil.h"

const st_desc tu_tiny_llama[TU_TINY_LLAMA_N] = {
    {"model.embed_tokens.weight", WT_BF16, 2, {128, 64}},
    {"model.layers.0.self_attn.q_proj.weight", WT_BF16, 2, {64, 64}},
    {"model.layers.0.self_attn.k_proj.weight", WT_BF16, 2, {32, 64}},
    {"model.layers.0.input_layernorm.weight", WT_F32, 1, {64}},
    {"model.layers.1.mlp.up_proj.weight", WT_BF16, 2, {128, 64}},
    {"model.layers.1.mlp.up_proj.weight_scale", WT_F32, 0, {0}},
    {"model.norm.weight", WT_F32, 1, {64}},
    {"lm_head.weight", WT_BF16, 2, {128, 64}},
};

const char tu_llama_config[] =
    "{\"architectures\": [\"LlamaForCausalLM\"], \"model_type\": \"llama\", "
    "\"hidden_size\": 64, \"num_attention_heads\": 4, \"num_key_value_heads\": 2, "
    "\"intermediate_size\": 128, \"num_hidden_layers\": 2, \"vocab_size\": 128, "
    "\"tie_word_embeddings\": false, \"torch_dtype\": \"bfloat16\"}";

char *tu_mkdtemp(const char *tag)
{
	const char *base = getenv("TMPDIR");
	if (base == NULL || base[0] == '\0')
		base = "/tmp";
	size_t n = strlen(base) + strlen(tag) + 32;
	char *p = malloc(n);
	if (p == NULL)
		return NULL;
	snprintf(p, n, "%s/wt-%s-XXXXXX", base, tag);
	if (mkdtemp(p) == NULL) {
		free(p);
		return NULL;
	}
	return p;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

int tu_rmrf(const char *path)
{
	if (path == NULL)
		return 0;
	struct stat st;
	if (lstat(path, &st) != 0)
		return errno == ENOENT ? 0 : -1;
	return nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

char *tu_path(const char *dir, const char *rel)
{
	size_t n = strlen(dir) + strlen(rel) + 2;
	char *p = malloc(n);
	if (p != NULL)
		snprintf(p, n, "%s/%s", dir, rel);
	return p;
}

char *tu_mkckpt(void)
{
	const char *m = getenv("WT_MKCKPT");
	if (m != NULL && *m != '\0')
		return strdup(m);
	const char *b = getenv("WT_BUILD");
	return tu_path(b != NULL && *b ? b : "build", "wt-mkckpt");
}

static int mkparents(char *path)
{
	for (char *s = strchr(path + 1, '/'); s != NULL; s = strchr(s + 1, '/')) {
		*s = '\0';
		int r = mkdir(path, 0755);
		*s = '/';
		if (r != 0 && errno != EEXIST)
			return -1;
	}
	return 0;
}

int tu_write_file(const char *dir, const char *rel, const void *data, size_t len)
{
	char *p = tu_path(dir, rel);
	if (p == NULL || mkparents(p) != 0) {
		free(p);
		return -1;
	}
	FILE *f = fopen(p, "wb");
	free(p);
	if (f == NULL)
		return -1;
	size_t w = len ? fwrite(data, 1, len, f) : 0;
	int rc = fclose(f);
	return (w == len && rc == 0) ? 0 : -1;
}

char *tu_read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (f == NULL)
		return NULL;
	char *buf = NULL;
	size_t cap = 0, n = 0;
	for (;;) {
		if (n + 4096 + 1 > cap) {
			cap = (n + 4096 + 1) * 2;
			char *nb = realloc(buf, cap);
			if (nb == NULL) {
				free(buf);
				fclose(f);
				return NULL;
			}
			buf = nb;
		}
		size_t k = fread(buf + n, 1, 4096, f);
		n += k;
		if (k < 4096)
			break;
	}
	fclose(f);
	buf[n] = '\0';
	*len = n;
	return buf;
}

void tu_fill(void *buf, size_t len, uint64_t seed)
{
	uint8_t *p = buf;
	uint64_t x = seed;
	for (size_t i = 0; i < len; i += 8) {
		uint64_t z = tu_splitmix64(&x);
		for (size_t k = 0; k < 8 && i + k < len; k++)
			p[i + k] = (uint8_t)(z >> (8 * k));
	}
}

int tu_touch(const char *path, int64_t delta_ns)
{
	struct stat st;
	if (stat(path, &st) != 0)
		return -1;
	int64_t ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec + delta_ns;
	struct timespec ts[2] = {st.st_atim,
	                         {.tv_sec = ns / 1000000000, .tv_nsec = ns % 1000000000}};
	return utimensat(AT_FDCWD, path, ts, 0);
}

int tu_touch_dir(const char *dir, int64_t delta_ns)
{
	DIR *d = opendir(dir);
	if (d == NULL)
		return -1;
	int rc = 0;
	struct dirent *de;
	while (rc == 0 && (de = readdir(d)) != NULL) {
		char *p = de->d_name[0] == '.' ? NULL : tu_path(dir, de->d_name);
		struct stat st;
		if (p != NULL && stat(p, &st) == 0 && S_ISREG(st.st_mode))
			rc = tu_touch(p, delta_ns);
		free(p);
	}
	closedir(d);
	return rc;
}

uint64_t tu_desc_nbytes(const st_desc *d)
{
	uint64_t n = wt_dtype_size(d->dtype);
	for (int i = 0; i < d->ndim; i++)
		if (d->shape[i] < 0 || __builtin_mul_overflow(n, (uint64_t)d->shape[i], &n))
			return 0;
	return n;
}

void tu_shard_name(char *buf, size_t bufsz, size_t k, size_t n)
{
	snprintf(buf, bufsz, "model-%05zu-of-%05zu.safetensors", k, n);
}

/* Write descs[lo, hi) to dir/name with data tu_fill(seed + i). */
static int write_group(const char *dir, const char *name, const st_desc *descs, size_t lo,
                       size_t hi, uint64_t seed)
{
	size_t n = hi - lo;
	void **data = calloc(n ? n : 1, sizeof(*data));
	int rc = data ? 0 : -1;
	for (size_t i = 0; rc == 0 && i < n; i++) {
		uint64_t nb = tu_desc_nbytes(&descs[lo + i]);
		data[i] = malloc(nb ? nb : 1);
		if (data[i] == NULL)
			rc = -1;
		else
			tu_fill(data[i], nb, seed + lo + i);
	}
	char *path = tu_path(dir, name);
	if (rc == 0 && path != NULL) {
		wt_errbuf err;
		rc = st_write_path(path, descs + lo, (const void *const *)data, n, NULL, 0, &err) ==
		             WT_OK
		         ? 0
		         : -1;
		if (rc != 0)
			fprintf(stderr, "tu_write_ckpt: %s\n", err.msg);
	}
	free(path);
	for (size_t i = 0; data && i < n; i++)
		free(data[i]);
	free(data);
	return rc;
}

int tu_write_ckpt(const char *dir, const char *config_json, const st_desc *descs, size_t n,
                  size_t n_shards, uint64_t seed)
{
	if (tu_write_file(dir, "config.json", config_json, strlen(config_json)) != 0)
		return -1;
	if (n_shards <= 1)
		return write_group(dir, "model.safetensors", descs, 0, n, seed);
	size_t cap = 256 + n * 512;
	char *idx = malloc(cap);
	if (idx == NULL)
		return -1;
	size_t len = (size_t)snprintf(idx, cap, "{\"metadata\": {}, \"weight_map\": {");
	size_t per = (n + n_shards - 1) / n_shards;
	int rc = 0;
	const char *sep = "";
	for (size_t k = 0; rc == 0 && k < n_shards; k++) {
		size_t lo = k * per < n ? k * per : n, hi = lo + per < n ? lo + per : n;
		char name[64];
		tu_shard_name(name, sizeof(name), k + 1, n_shards);
		rc = write_group(dir, name, descs, lo, hi, seed);
		for (size_t i = lo; i < hi; i++) {
			len += (size_t)snprintf(idx + len, cap - len, "%s\"%s\": \"%s\"", sep,
			                        descs[i].name, name);
			sep = ", ";
		}
	}
	len += (size_t)snprintf(idx + len, cap - len, "}}");
	if (rc == 0)
		rc = tu_write_file(dir, "model.safetensors.index.json", idx, len);
	free(idx);
	return rc;
}

int tu_flip_last_byte(const char *path, int64_t mtime_delta_s)
{
	struct stat st;
	if (stat(path, &st) != 0 || st.st_size < 1)
		return -1;
	int fd = open(path, O_RDWR);
	if (fd < 0)
		return -1;
	uint8_t b;
	int rc = pread(fd, &b, 1, st.st_size - 1) == 1 ? 0 : -1;
	b ^= 0x5a;
	if (rc == 0 && pwrite(fd, &b, 1, st.st_size - 1) != 1)
		rc = -1;
	struct timespec ts[2] = {st.st_atim, st.st_mtim};
	ts[1].tv_sec += (time_t)mtime_delta_s;
	if (rc == 0 && futimens(fd, ts) != 0)
		rc = -1;
	close(fd);
	return rc;
}
