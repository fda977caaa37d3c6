/*
 * config.c — the daemon's configuration: ONE declarative table (STYLE.md 16)
 * that drives defaults, the INI file (libinih), the command-line flags, range
 * checks and the usage text. weightd/weightd.conf documents every key.
 *
 * Order of precedence: table default < --config file < flags.
 */
#include <errno.h>
#include <ini.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/common.h"
#include "weightd/weightd.h"

#define OFF(f) offsetof(wd_config, f)
#define KIB    1024ull
#define GIB    (1024ull * 1024ull * 1024ull)

static const wd_cfg_key table[] = {
    {"listen", WD_CFG_LIST, 0, 0, "tcp://127.0.0.1:7450", "url", false, OFF(listen),
     "nng URL to listen on (tcp://HOST:PORT or ipc:///path); repeatable"},
    {"models_dir", WD_CFG_STRING, 0, 0, "./models", "path", false, OFF(models_dir),
     "folder whose subfolders are models, each named by its folder"},
    {"model", WD_CFG_LIST, 0, 0, "", "NAME=URI", false, OFF(model),
     "one more model: NAME=URI (file:///dir, dir, s3://, http://); repeatable"},
    {"model_override", WD_CFG_LIST, 0, 0, "", "NAME=JSON", false, OFF(model_override),
     "a model key's or models_dir folder's configuration override (vLLM's hf_overrides): "
     "NAME=JSON, one JSON object "
     "merged over its config.json, e.g. ds-mtp={\"architectures\": [\"DeepSeekMTPModel\"]}; "
     "repeatable"},
    {"peer", WD_CFG_LIST, 0, 0, "", "url", false, OFF(peer),
     "another node of the cache tier (tcp://HOST:PORT or ipc:///path): a miss asks it "
     "before the object store; repeatable"},
    {"cache_dir", WD_CFG_STRING, 0, 0, "./weightd-cache", "path", false, OFF(cache_dir),
     "RocksDB shard cache directory (created if missing)"},
    {"cache_max_bytes", WD_CFG_BYTES, 1024 * KIB, 1ull << 50, "64G", "bytes", false,
     OFF(cache_max_bytes), "byte budget of distinct cached chunks; LRU shards are evicted"},
    {"cache_memory_bytes", WD_CFG_BYTES, 0, 1ull << 50, "1G", "bytes", false,
     OFF(cache_memory_bytes),
     "RAM for hot chunks (RocksDB blob cache): hits are served without a disk read; 0 = "
     "none"},
    {"cache_rehash_memory_hits", WD_CFG_UINT, 0, 1, "0", "0|1", false,
     OFF(cache_rehash_memory_hits),
     "1 = hash a chunk held in cache_memory_bytes again on every read; 0 = on its first read "
     "from RAM only (each RAM copy is made from the bytes the production hashed; every byte "
     "read from disk is hashed either way)"},
    {"cache_reclaim_ratio", WD_CFG_RATIO, 0, 100000, "1.5", "ratio", false,
     OFF(cache_reclaim_ratio),
     "after evictions, rewrite the live chunks out of mostly-dead blob files when the "
     "cache files on disk exceed this x the live chunk bytes; 0 = only on `admin reclaim`"},
    {"chunk_bytes", WD_CFG_BYTES, 64, 256ull << 20, "4M", "bytes", false, OFF(chunk_bytes),
     "largest chunk a tensor is cut into (chunks never cross tensors)"},
    {"workers", WD_CFG_UINT, 1, 256, "4", "threads", false, OFF(workers),
     "worker threads for requests (Hello, lists, manifests from the cache, chunk reads)"},
    {"tls_cert_key_file", WD_CFG_STRING, 0, 0, "", "path", false, OFF(tls_cert_key_file),
     "PEM file with the server's certificate and key, for tls+tcp:// listen URLs"},
    {"tls_ca_file", WD_CFG_STRING, 0, 0, "", "path", false, OFF(tls_ca_file),
     "PEM CA certificates: when set, tls+tcp:// clients must present a certificate they "
     "signed; empty = no client certificates"},
    {"metrics_listen", WD_CFG_STRING, 0, 0, "", "url", false, OFF(metrics_listen),
     "http://HOST:PORT for /metrics (Prometheus), /healthz and /readyz; empty = off"},
    {"stream_listen", WD_CFG_STRING, 0, 0, "", "url", false, OFF(stream_listen),
     "tcp://HOST:PORT, tls+tcp://HOST:PORT or ipc:///path of the bulk data plane (chunk "
     "bytes on a raw nng stream, offered in Hello); empty = off"},
    {"producers", WD_CFG_UINT, 1, 64, "2", "threads", false, OFF(producers),
     "threads that produce layouts (and fill them from peers), apart from the workers"},
    {"production_threads", WD_CFG_UINT, 1, 16, "2", "threads", false, OFF(production_threads),
     "threads of one production: source groups (or one rank's rows of a group) are read, "
     "sliced, converted and hashed on this many threads at once, in serving order"},
    {"contexts", WD_CFG_UINT, 1, 4096, "64", "requests", false, OFF(contexts),
     "nng contexts: requests received and served at the same time"},
    {"max_request_bytes", WD_CFG_BYTES, 1024, 64ull << 20, "64K", "bytes", false,
     OFF(max_request_bytes), "largest request message (NNG_OPT_RECVMAXSZ)"},
    {"auth_token", WD_CFG_STRING, 0, 0, "", "text", false, OFF(auth_token),
     "token every connection must present in Hello; empty = no authentication"},
    {"revalidate_ms", WD_CFG_MS, 0, 3600000, "1000", "ms", true, OFF(revalidate_ms),
     "re-check a model's source objects (revision) at most this often"},
    {"drain_timeout_ms", WD_CFG_MS, 0, 600000, "10000", "ms", true, OFF(drain_timeout_ms),
     "on SIGTERM/SIGINT, wait this long for in-flight requests"},
    {"log_level", WD_CFG_LEVEL, 0, 0, "notice", "level", true, OFF(log_level),
     "err, warning, notice, info (production summaries) or debug (every request)"},
    {"ready_file", WD_CFG_STRING, 0, 0, "", "path", false, OFF(ready_file),
     "file written with the listen URLs once the daemon serves; empty = none"},
    {"pid_file", WD_CFG_STRING, 0, 0, "", "path", false, OFF(pid_file),
     "file holding the daemon's pid, locked while it runs: a second weightd on it is "
     "refused; empty = none"},
    {"server_id", WD_CFG_STRING, 0, 0, "", "text", false, OFF(server_id),
     "name in HelloReply (and in the client_id given to peers): at most 127 bytes of "
     "printable ASCII, no control characters; empty = HOST:PID"},
    /* Security (docs/weightd.md "Security: tokens, roles and limits"). Appended: the
     * index of a row is its slot in wd_config.set. */
    {"admin_token", WD_CFG_STRING, 0, 0, "", "text", false, OFF(admin_token),
     "token of the admin role (WARM, EVICT, VERIFY, RECLAIM, REGISTER, UNREGISTER); empty = "
     "admin ops only when no token at all is configured. Prefer admin_token_file"},
    {"auth_token_file", WD_CFG_STRING, 0, 0, "", "path", false, OFF(auth_token_file),
     "file holding auth_token (one line; read at start and on SIGHUP); or the environment "
     "variable WEIGHTD_AUTH_TOKEN"},
    {"admin_token_file", WD_CFG_STRING, 0, 0, "", "path", false, OFF(admin_token_file),
     "file holding admin_token; or the environment variable WEIGHTD_ADMIN_TOKEN"},
    {"register_roots", WD_CFG_LIST, 0, 0, "", "path", false, OFF(register_roots),
     "folders a REGISTER of file:// or a path may reach (realpath, whole components); "
     "repeatable; none set = models_dir only"},
    {"register_hosts", WD_CFG_LIST, 0, 0, "", "host[:port]", false, OFF(register_hosts),
     "hosts a REGISTER of http(s):// may reach, and where its redirects may lead (no port = "
     "any port); repeatable; none = "
     "no http(s) registration"},
    {"register_buckets", WD_CFG_LIST, 0, 0, "", "bucket", false, OFF(register_buckets),
     "buckets a REGISTER of s3:// may reach; repeatable; none = no s3 registration"},
    {"register_timeout_ms", WD_CFG_MS, 100, 600000, "15000", "ms", true, OFF(register_timeout_ms),
     "a REGISTER whose source gives no checkpoint within this fails (WT_ETIMEDOUT)"},
    {"max_connections", WD_CFG_UINT, 1, 1000000, "1024", "connections", false, OFF(max_connections),
     "connections served at once; one more is closed at connect"},
    {"hello_timeout_ms", WD_CFG_MS, 0, 3600000, "10000", "ms", true, OFF(hello_timeout_ms),
     "with a token configured, close a connection that has not authenticated by then; "
     "0 = never"},
    {"send_timeout_ms", WD_CFG_MS, 0, 3600000, "30000", "ms", false, OFF(send_timeout_ms),
     "a reply on a bulk stream that moves no byte for this long ends the stream: a peer "
     "that stopped reading would hold the chunk's memory (write-behind RAM that "
     "cut-through productions wait for); a reply over messages queued this long behind "
     "others its client does not read closes the connection (each held a context); "
     "0 = never"},
    {"max_watchers", WD_CFG_UINT, 0, 4095, "16", "requests", false, OFF(max_watchers),
     "Watch requests parked at once waiting for a new revision (each holds an nng "
     "context; must be below contexts); one more gets WT_EBUSY; 0 = no watches"},
    {"writeback_bytes", WD_CFG_BYTES, 0, 1ull << 50, "1G", "bytes", false, OFF(writeback_bytes),
     "RAM for produced chunks not yet written to the cache: productions (and cut-through "
     "readers) run ahead of the disk by this much, and buffers released are kept within it "
     "for the next production; 0 = one chunk at a time"},
    {"writeback_prefault_bytes", WD_CFG_BYTES, 0, 1ull << 50, "0", "bytes", false,
     OFF(writeback_prefault_bytes),
     "write-behind RAM faulted in at start by a low-priority thread and kept (at most "
     "writeback_bytes), so that the first cold production does not pay the kernel's zeroing "
     "of fresh memory; at most half of the machine's RAM; 0 = none"},
    {"stack_batch_bytes", WD_CFG_BYTES, 4096, 1ull << 50, "256M", "bytes", false,
     OFF(stack_batch_bytes),
     "an expert stack's experts read and transformed at once by one production thread "
     "(Llama 4, GPT-OSS; docs/format.md 4.7): beyond it a few experts at a time (one at "
     "least), the bytes unchanged"},
};

#define N_KEYS (sizeof(table) / sizeof(table[0]))
_Static_assert(N_KEYS <= sizeof(((wd_config *)0)->set), "grow wd_config.set");

/* Source tags for list replacement. */
enum { SRC_DEFAULT = 1, SRC_FILE = 2, SRC_FLAG = 3 };

const wd_cfg_key *wd_config_table(size_t *n)
{
	*n = N_KEYS;
	return table;
}

static const wd_cfg_key *find_key(const char *name, size_t *idx)
{
	for (size_t i = 0; i < N_KEYS; i++) {
		if (strcmp(table[i].name, name) == 0) {
			*idx = i;
			return &table[i];
		}
	}
	return NULL;
}

bool wd_config_is_set(const wd_config *c, const char *key)
{
	size_t idx;
	return find_key(key, &idx) != NULL && c->set[idx] > SRC_DEFAULT;
}

void wd_strlist_free(wd_strlist *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	l->v = NULL;
	l->n = 0;
}

static int strlist_add(wd_strlist *l, const char *s)
{
	char *d = strdup(s);
	char **v = realloc(l->v, (l->n + 1) * sizeof(*v));
	if (d == NULL || v == NULL) {
		free(d);
		if (v != NULL)
			l->v = v;
		return WT_ENOMEM;
	}
	l->v = v;
	l->v[l->n++] = d;
	return WT_OK;
}

int wd_strlist_copy(wd_strlist *dst, const wd_strlist *src)
{
	*dst = (wd_strlist){0};
	for (size_t i = 0; i < src->n; i++)
		if (strlist_add(dst, src->v[i]) != WT_OK) {
			wd_strlist_free(dst);
			return WT_ENOMEM;
		}
	return WT_OK;
}

int wd_config_parse_bytes(const char *text, uint64_t *out)
{
	if (text == NULL || text[0] < '0' || text[0] > '9')
		return WT_EINVAL;
	errno = 0;
	char *end;
	unsigned long long v = strtoull(text, &end, 10);
	if (errno != 0)
		return WT_EOVERFLOW;
	uint64_t mul = 1;
	switch (*end) {
	case 'K':
	case 'k':
		mul = KIB;
		break;
	case 'M':
	case 'm':
		mul = KIB * KIB;
		break;
	case 'G':
	case 'g':
		mul = GIB;
		break;
	case 'T':
	case 't':
		mul = GIB * KIB;
		break;
	case 'P':
	case 'p':
		mul = GIB * KIB * KIB;
		break;
	case '\0':
		break;
	default:
		return WT_EINVAL;
	}
	if (mul != 1) {
		end++;
		if (strcmp(end, "iB") == 0 || strcmp(end, "B") == 0)
			end += strlen(end);
	} else if (strcmp(end, "B") == 0) {
		end++;
	}
	if (*end != '\0')
		return WT_EINVAL;
	if (!wt_mul_u64(v, mul, out))
		return WT_EOVERFLOW;
	return WT_OK;
}

/* "1.5" -> 150, "2" -> 200, "0" -> 0: at most two decimals, x100. */
static int parse_ratio(const char *text, uint64_t *out)
{
	uint64_t v = 0;
	const char *p = text;
	if (*p < '0' || *p > '9')
		return WT_EINVAL;
	for (; *p >= '0' && *p <= '9'; p++)
		if (!wt_mul_u64(v, 10, &v) || !wt_add_u64(v, (uint64_t)(*p - '0'), &v))
			return WT_EOVERFLOW;
	uint64_t frac = 0, scale = 100;
	if (*p == '.') {
		for (p++; *p >= '0' && *p <= '9' && scale > 1; p++) {
			scale /= 10;
			frac += (uint64_t)(*p - '0') * scale;
		}
	}
	if (*p != '\0')
		return WT_EINVAL;
	if (!wt_mul_u64(v, 100, &v) || !wt_add_u64(v, frac, out))
		return WT_EOVERFLOW;
	return WT_OK;
}

static int parse_value(const wd_cfg_key *k, const char *value, uint64_t *num, const char *where,
                       wt_errbuf *err)
{
	int rv = WT_OK;
	switch (k->type) {
	case WD_CFG_LEVEL: {
		int lv = common_log_level_from_name(value);
		if (lv < 0)
			return wt_seterr(err, WT_ECONFIG,
			                 "%s: %s '%s' is not a level; use err, warning, notice, "
			                 "info or debug",
			                 where, k->name, value);
		*num = (uint64_t)lv;
		return WT_OK;
	}
	case WD_CFG_BYTES:
		rv = wd_config_parse_bytes(value, num);
		break;
	case WD_CFG_RATIO:
		rv = parse_ratio(value, num);
		if (rv == WT_OK && *num != 0 && *num <= 100)
			return wt_seterr(err, WT_ECONFIG,
			                 "%s: %s %s must be above 1 (disk bytes per live byte); "
			                 "use 1.5, or 0 for never",
			                 where, k->name, value);
		break;
	case WD_CFG_UINT:
	case WD_CFG_MS: {
		if (value[0] < '0' || value[0] > '9') {
			rv = WT_EINVAL;
			break;
		}
		errno = 0;
		char *end;
		unsigned long long v = strtoull(value, &end, 10);
		rv = errno != 0 ? WT_EOVERFLOW : *end != '\0' ? WT_EINVAL : WT_OK;
		*num = v;
		break;
	}
	default:
		return WT_OK;
	}
	if (rv == WT_EOVERFLOW ||
	    (rv == WT_OK && k->type == WD_CFG_RATIO && (*num < k->min || *num > k->max)))
		/* a ratio is stored x100: its range is written as the user writes it,
		 * and a number past 2^64 is out of range, not "not a number" */
		return k->type == WD_CFG_RATIO
		           ? wt_seterr(
		                 err, WT_ECONFIG,
		                 "%s: %s %s is out of range; use %llu.%02llu..%llu.%02llu (%s)",
		                 where, k->name, value, (unsigned long long)k->min / 100,
		                 (unsigned long long)k->min % 100, (unsigned long long)k->max / 100,
		                 (unsigned long long)k->max % 100, k->unit)
		           : wt_seterr(err, WT_ECONFIG,
		                       "%s: %s %s is out of range; use %llu..%llu (%s)", where,
		                       k->name, value, (unsigned long long)k->min,
		                       (unsigned long long)k->max, k->unit);
	if (rv != WT_OK)
		return wt_seterr(err, WT_ECONFIG, "%s: %s '%s' is not %s", where, k->name, value,
		                 k->type == WD_CFG_BYTES ? "a byte count (e.g. 512, 64K, 4M, 1G)"
		                 : k->type == WD_CFG_RATIO
		                     ? "a decimal number, at most two decimals (e.g. 1.5, 2, 0)"
		                     : "a non-negative decimal integer");
	if (*num < k->min || *num > k->max)
		return wt_seterr(err, WT_ECONFIG,
		                 "%s: %s %llu is out of range; use %llu..%llu (%s)", where, k->name,
		                 (unsigned long long)*num, (unsigned long long)k->min,
		                 (unsigned long long)k->max, k->unit);
	return WT_OK;
}

/* A model key's NAME=URI, checked where it is written (file:line or flag):
 * the models module refused a bad name or a name given twice only at open,
 * without the place and with exit 1. Same rules as wd_models_add_from. */
static int check_model(const wd_strlist *l, const char *value, const char *where, wt_errbuf *err)
{
	size_t n = (size_t)(strchr(value, '=') - value);
	if (n > 200 || value[0] == '.' || memchr(value, '/', n) != NULL)
		return wt_seterr(
		    err, WT_ECONFIG,
		    "%s: model name '%.*s' is not usable; use 1-200 characters without "
		    "'/' and not starting with '.'",
		    where, (int)(n > 200 ? 200 : n), value);
	if (value[n + 1] == '\0')
		return wt_seterr(err, WT_ECONFIG,
		                 "%s: model '%.*s' has an empty URI; use file:///dir, s3:// or "
		                 "http(s)://",
		                 where, (int)n, value);
	for (size_t i = 0; i < l->n; i++)
		if (strncmp(l->v[i], value, n + 1) == 0)
			return wt_seterr(err, WT_ECONFIG,
			                 "%s: model '%.*s' is given twice (also as %s); keep one",
			                 where, (int)n, value, l->v[i]);
	return WT_OK;
}

int wd_config_check_server_id(const char *id, const char *where, wt_errbuf *err)
{
	size_t n = strlen(id);
	if (n > WD_SERVER_ID_MAX)
		return wt_seterr(
		    err, WT_ECONFIG,
		    "%s: server_id is %zu bytes, over %d; shorten it (printable ASCII)", where, n,
		    WD_SERVER_ID_MAX);
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)id[i] < 0x20 || (unsigned char)id[i] > 0x7e)
			return wt_seterr(
			    err, WT_ECONFIG,
			    "%s: server_id holds byte 0x%02x at offset %zu; use printable "
			    "ASCII (letters, digits, punctuation, space), at most %d bytes",
			    where, (unsigned)(unsigned char)id[i], i, WD_SERVER_ID_MAX);
	return WT_OK;
}

static int set_idx(wd_config *c, size_t idx, const char *value, int src, const char *where,
                   wt_errbuf *err)
{
	const wd_cfg_key *k = &table[idx];
	void *field = (char *)c + k->off;
	if (value == NULL)
		value = "";
	switch (k->type) {
	case WD_CFG_STRING: {
		if (k->off == OFF(server_id)) {
			int rv = wd_config_check_server_id(value, where, err);
			if (rv != WT_OK)
				return rv;
		}
		char *d = strdup(value);
		if (d == NULL)
			return wt_seterr(err, WT_ENOMEM, "%s: out of memory", where);
		free(*(char **)field);
		*(char **)field = d;
		break;
	}
	case WD_CFG_LIST: {
		wd_strlist *l = field;
		if (c->set[idx] != src)
			wd_strlist_free(l);
		if (value[0] != '\0') {
			if (k->off == OFF(model) && (strchr(value, '=') == NULL || value[0] == '='))
				return wt_seterr(err, WT_ECONFIG,
				                 "%s: model '%s' is not NAME=URI "
				                 "(e.g. llama=file:///data/llama)",
				                 where, value);
			if (k->off == OFF(model)) {
				int rv = check_model(l, value, where, err);
				if (rv != WT_OK)
					return rv;
			}
			if (k->off == OFF(model_override)) {
				int rv = wd_config_check_override(l, value, where, err);
				if (rv != WT_OK)
					return rv;
			}
			if (k->off == OFF(peer) && strncmp(value, "tcp://", 6) != 0 &&
			    strncmp(value, "ipc://", 6) != 0)
				return wt_seterr(err, WT_ECONFIG,
				                 "%s: peer '%s' is not an nng URL; use "
				                 "tcp://HOST:PORT or ipc:///path",
				                 where, value);
			if (strlist_add(l, value) != WT_OK)
				return wt_seterr(err, WT_ENOMEM, "%s: out of memory", where);
		}
		break;
	}
	default: {
		uint64_t num = 0;
		int rv = parse_value(k, value, &num, where, err);
		if (rv != WT_OK)
			return rv;
		*(uint64_t *)field = num;
		break;
	}
	}
	c->set[idx] = (uint8_t)src;
	return WT_OK;
}

static int set_src(wd_config *c, const char *key, const char *value, int src, const char *where,
                   wt_errbuf *err)
{
	size_t idx;
	if (find_key(key, &idx) == NULL)
		return wt_seterr(err, WT_ECONFIG,
		                 "%s: unknown key '%s'; see weightd/weightd.conf for the keys",
		                 where, key);
	return set_idx(c, idx, value, src, where, err);
}

int wd_config_set(wd_config *c, const char *key, const char *value, const char *where,
                  wt_errbuf *err)
{
	return set_src(c, key, value, SRC_FLAG, where, err);
}

int wd_config_init(wd_config *c)
{
	memset(c, 0, sizeof(*c));
	for (size_t i = 0; i < N_KEYS; i++) {
		wt_errbuf err;
		int rv = set_idx(c, i, table[i].def, SRC_DEFAULT, "default", &err);
		WT_ASSERT(rv != WT_ECONFIG); /* the table's defaults are in range */
		if (rv != WT_OK) {
			wd_config_free(c);
			return rv;
		}
	}
	memset(c->set, 0, sizeof(c->set));
	return WT_OK;
}

void wd_config_free(wd_config *c)
{
	if (c == NULL)
		return;
	for (size_t i = 0; i < N_KEYS; i++) {
		void *field = (char *)c + table[i].off;
		if (table[i].type == WD_CFG_STRING)
			free(*(char **)field);
		else if (table[i].type == WD_CFG_LIST)
			wd_strlist_free(field);
	}
	memset(c, 0, sizeof(*c));
}

/* ---- INI file: libinih with a line-counting reader for file:line messages ---- */

typedef struct ini_state {
	FILE *f;
	const char *path;
	int line;          /* line number of the text last handed to inih */
	int too_long;      /* line number of an over-long line, 0 if none */
	int nul;           /* line number of a line holding a NUL byte, 0 if none */
	int read_err;      /* errno of a failed read (not the end of the file), 0 if none */
	int first[N_KEYS]; /* line each single-value key was set on in this file, 0 if not */
	wd_config *c;
	wt_errbuf *err;
	int rv;
} ini_state;

/* One line into str (at most num - 1 bytes with its newline). A longer line
 * stops the parse (too_long) without being read into memory: a config path
 * that names a large binary file is refused after num bytes, not buffered
 * whole. A NUL byte stops it too: inih would read the line only up to it and
 * silently drop the rest. */
static char *ini_reader_fn(char *str, int num, void *stream)
{
	ini_state *st = stream;
	size_t n = 0, cap = (size_t)num - 2; /* the line and its newline, as before */
	int ch = EOF;
	errno = 0;
	while ((ch = getc(st->f)) != EOF) {
		if (n == cap) { /* one byte more than fits: the rest is never read */
			st->too_long = st->line + 1;
			return NULL;
		}
		str[n++] = (char)ch;
		if (ch == '\n')
			break;
	}
	if (ch == EOF && ferror(st->f)) { /* a failed read is not the end of the file */
		st->read_err = errno ? errno : EIO;
		return NULL;
	}
	if (n == 0)
		return NULL;
	st->line++;
	if (memchr(str, '\0', n) != NULL) {
		st->nul = st->line;
		return NULL;
	}
	str[n] = '\0';
	return str;
}

static int ini_handler_fn(void *user, const char *section, const char *name, const char *value)
{
	ini_state *st = user;
	char where[600];
	snprintf(where, sizeof(where), "%s:%d", st->path, st->line);
	if (section[0] != '\0' && strcmp(section, "weightd") != 0) {
		st->rv =
		    wt_seterr(st->err, WT_ECONFIG,
		              "%s: unknown section [%s]; put keys at the top or under [weightd]",
		              where, section);
		return 0;
	}
	/* a single-value key twice in one file: the later line used to win
	 * silently (an edit appended below an old value, a merge) */
	size_t idx = 0;
	const wd_cfg_key *k = find_key(name, &idx);
	if (k != NULL && k->type != WD_CFG_LIST && st->first[idx] != 0) {
		st->rv = wt_seterr(st->err, WT_ECONFIG,
		                   "%s: %s is set twice in this file (also on line %d); keep one",
		                   where, name, st->first[idx]);
		return 0;
	}
	st->rv = set_src(st->c, name, value, SRC_FILE, where, st->err);
	if (st->rv == WT_OK && k != NULL)
		st->first[idx] = st->line;
	return st->rv == WT_OK;
}

int wd_config_load_file(wd_config *c, const char *path, wt_errbuf *err)
{
	int fd; /* a FIFO is refused, not waited on; a folder is refused (it opens, then
	         * reads as an empty file: the defaults, silently) */
	int rv = wd_config_open_file("config file", path, false, &fd, err);
	if (rv != WT_OK)
		return rv;
	struct stat sb;
	unsigned mode = fstat(fd, &sb) == 0 ? (unsigned)(sb.st_mode & 0777) : 0;
	FILE *f = fdopen(fd, "r");
	if (f == NULL) {
		close(fd);
		return wt_seterr(err, WT_ENOMEM, "%s: out of memory", path);
	}
	ini_state *st = calloc(1, sizeof(*st));
	if (st == NULL) {
		fclose(f);
		return wt_seterr(err, WT_ENOMEM, "%s: out of memory", path);
	}
	*st = (ini_state){.f = f, .path = path, .c = c, .err = err, .rv = WT_OK};
	ini_allow_multiline = false;
	ini_stop_on_first_error = true;
	int r = ini_parse_stream(ini_reader_fn, st, ini_handler_fn, st);
	fclose(f);
	rv = st->rv;
	if (rv == WT_OK && st->read_err)
		rv = wt_seterr(err, WT_ECONFIG, "%s:%d: read failed: %s; nothing of it is used",
		               path, st->line + 1, strerror(st->read_err));
	else if (rv == WT_OK && st->too_long)
		rv = wt_seterr(err, WT_ECONFIG, "%s:%d: line longer than %d characters", path,
		               st->too_long, ini_max_line - 3);
	else if (rv == WT_OK && st->nul)
		rv = wt_seterr(err, WT_ECONFIG,
		               "%s:%d: NUL byte in the line; the config file must be text", path,
		               st->nul);
	else if (rv == WT_OK && r != 0)
		rv = wt_seterr(err, WT_ECONFIG, "%s:%d: syntax error; use 'key = value'", path,
		               r > 0 ? r : st->line);
	/* a token written in the file is as secret as a token file (config_token.c) */
	size_t ia = 0, ib = 0;
	find_key("auth_token", &ia);
	find_key("admin_token", &ib);
	int tok_line = st->first[ia] && c->auth_token[0]    ? st->first[ia]
	               : st->first[ib] && c->admin_token[0] ? st->first[ib]
	                                                    : 0;
	if (rv == WT_OK && tok_line != 0 && (mode & 077) != 0)
		WT_LOG(
		    WT_LOG_WARNING,
		    "%s:%d: a token in a file readable by group or others (mode %03o); chmod 600 "
		    "it, or move the token to auth_token_file / admin_token_file",
		    path, tok_line, mode);
	free(st);
	return rv;
}

static bool same_value(const wd_cfg_key *k, const wd_config *a, const wd_config *b)
{
	const void *fa = (const char *)a + k->off, *fb = (const char *)b + k->off;
	switch (k->type) {
	case WD_CFG_STRING:
		return strcmp(*(char *const *)fa, *(char *const *)fb) == 0;
	case WD_CFG_LIST: {
		const wd_strlist *la = fa, *lb = fb;
		if (la->n != lb->n)
			return false;
		for (size_t i = 0; i < la->n; i++)
			if (strcmp(la->v[i], lb->v[i]) != 0)
				return false;
		return true;
	}
	default:
		return *(const uint64_t *)fa == *(const uint64_t *)fb;
	}
}

size_t wd_config_reload(wd_config *cur, const wd_config *fresh,
                        void (*cb)(void *ctx, const wd_cfg_key *k, bool applied), void *ctx)
{
	size_t n = 0;
	for (size_t i = 0; i < N_KEYS; i++) {
		const wd_cfg_key *k = &table[i];
		if (same_value(k, cur, fresh))
			continue;
		n++;
		/* Reload-safe keys are numeric (WT_ASSERT keeps it so), read by the
		 * server's threads meanwhile (wd_cfg_live): an atomic store. */
		bool apply = k->reload_safe;
		WT_ASSERT(!apply || (k->type != WD_CFG_STRING && k->type != WD_CFG_LIST));
		if (apply)
			__atomic_store_n((uint64_t *)((char *)cur + k->off),
			                 *(const uint64_t *)((const char *)fresh + k->off),
			                 __ATOMIC_RELAXED);
		if (cb != NULL)
			cb(ctx, k, apply);
	}
	return n;
}

static const char *type_arg(const wd_cfg_key *k)
{
	switch (k->type) {
	case WD_CFG_LIST:
	case WD_CFG_STRING:
		return k->unit;
	case WD_CFG_BYTES:
		return "N[K|M|G]";
	case WD_CFG_MS:
		return "MS";
	case WD_CFG_LEVEL:
		return "LEVEL";
	case WD_CFG_RATIO:
		return "X.YY";
	default:
		return "N";
	}
}

void wd_config_usage(FILE *f)
{
	fprintf(f, "usage: weightd [--config FILE] [--FLAG VALUE ...]\n"
	           "Every config-file key is also a flag (--key-name VALUE or --key-name=VALUE).\n"
	           "Flags override the file, wherever --config stands. A flag given twice: the\n"
	           "last one wins; a repeatable flag (listen, model, peer, register-*) replaces\n"
	           "the file's list and its repeats add up. In the file, a key given twice is\n"
	           "refused (except the repeatable ones); --config given twice is refused.\n\n");
	for (size_t i = 0; i < N_KEYS; i++) {
		const wd_cfg_key *k = &table[i];
		char flag[64];
		size_t n = strlen(k->name);
		for (size_t j = 0; j <= n && j < sizeof(flag) - 1; j++)
			flag[j] = k->name[j] == '_' ? '-' : k->name[j];
		flag[sizeof(flag) - 1] = '\0';
		fprintf(f, "  --%s %s\n      %s (default: %s)\n", flag, type_arg(k), k->help,
		        k->def[0] ? k->def : "none");
	}
	fprintf(f, "  --config FILE\n      INI file with the keys above (see weightd.conf)\n");
}
