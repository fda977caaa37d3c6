/*
 * config_check.c — what is checked of a whole configuration before anything
 * starts: settings that are each in range but combine into something invalid,
 * and the files start-up reads (config, token and TLS files).
 *
 * wd_config_parse_args runs wd_config_check last, so a bad combination is exit
 * 2 at once (it used to be found after the cache and every model had opened:
 * minutes on a large first start), and a SIGHUP that would make one keeps the
 * running configuration. wd_server_open runs it again for configurations
 * built in code.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/common.h"
#include "loader/loader.h"
#include "weightd/weightd.h"

int wd_config_open_file(const char *what, const char *path, bool secret, int *fd_out,
                        wt_errbuf *err)
{
	*fd_out = -1;
	/* O_NONBLOCK: opening a FIFO for reading waits for a writer (start-up hung) */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return wt_seterr(err, WT_ECONFIG, "%s: cannot open %s: %s; fix the path", path,
		                 what, strerror(errno));
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return wt_seterr(err, WT_ECONFIG, "%s: %s is not a regular file; give a file path",
		                 path, what);
	}
	/* regular files never block: back to plain reads */
	int fl = fcntl(fd, F_GETFL);
	if (fl >= 0)
		fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	if (secret && (st.st_mode & 077) != 0)
		WT_LOG(WT_LOG_WARNING,
		       "%s: %s is readable by group or others (mode %03o); chmod 600 it", path,
		       what, (unsigned)(st.st_mode & 0777));
	*fd_out = fd;
	return WT_OK;
}

static bool is_tls(const char *url)
{
	return strncmp(url, "tls+tcp://", 10) == 0;
}

static int check_file(const char *what, const char *path, bool secret, wt_errbuf *err)
{
	if (path[0] == '\0')
		return WT_OK;
	int fd;
	int rv = wd_config_open_file(what, path, secret, &fd, err);
	if (rv == WT_OK)
		close(fd);
	return rv;
}

/* A URL nng can listen on or dial: a known scheme, and for tcp the port
 * written out. "tcp://127.0.0.1" (the port forgotten) bound a free port that
 * nobody could learn (the readiness line said tcp://127.0.0.1); a bad scheme
 * was found only at listen, after the cache and every model had opened. */
static int check_url(const char *key, const char *url, wt_errbuf *err)
{
	static const char *const schemes[] = {"tcp://",    "tls+tcp://", "ipc://", "abstract://",
	                                      "inproc://", "ws://",      "wss://"};
	size_t n_sch = sizeof(schemes) / sizeof(schemes[0]), i = 0;
	while (i < n_sch && strncmp(url, schemes[i], strlen(schemes[i])) != 0)
		i++;
	if (i == n_sch)
		return wt_seterr(
		    err, WT_ECONFIG,
		    "%s '%s': unknown scheme; use tcp://HOST:PORT, tls+tcp://HOST:PORT "
		    "or ipc:///path",
		    key, url);
	if (i > 1)
		return WT_OK;
	const char *host = url + strlen(schemes[i]);
	const char *end = host[0] == '[' ? strchr(host, ']') : host;
	const char *colon = end != NULL ? strrchr(end, ':') : NULL;
	char *stop = NULL;
	unsigned long port =
	    colon != NULL && colon[1] >= '0' && colon[1] <= '9' ? strtoul(colon + 1, &stop, 10) : 0;
	if (stop == NULL || *stop != '\0' || port > 65535)
		return wt_seterr(err, WT_ECONFIG,
		                 "%s '%s': give the port, HOST:PORT (0..65535; 0 = a free port, "
		                 "printed at start)",
		                 key, url);
	return WT_OK;
}

/* path as it will be once created: the real path of its longest existing
 * prefix (symlinks and ".." resolved), then the rest of it, "." and ".."
 * applied by name (what does not exist yet holds no symlink). false if it
 * does not fit in PATH_MAX. */
static bool resolve_path(const char *path, char out[PATH_MAX])
{
	char work[PATH_MAX];
	size_t n = strlen(path);
	if (n == 0 || n >= sizeof(work))
		return false;
	memcpy(work, path, n + 1);
	size_t tail = n; /* path[tail..] is the part that does not exist */
	while (realpath(work[0] != '\0' ? work : ".", out) == NULL) {
		if (work[0] == '\0' || strcmp(work, "/") == 0)
			return false; /* not even "." (a removed cwd) or "/" */
		char *slash = strrchr(work, '/');
		if (slash == NULL) {
			tail = 0;
			work[0] = '\0';
		} else if (slash == work) { /* "/x": "/" always resolves */
			tail = 1;
			work[1] = '\0';
		} else {
			tail = (size_t)(slash - work) + 1;
			*slash = '\0';
		}
	}
	if (tail >= n)
		return true;
	for (const char *p = path + tail; *p != '\0';) {
		size_t len = strcspn(p, "/");
		size_t on = strlen(out);
		if (len == 2 && p[0] == '.' && p[1] == '.') {
			char *last = strrchr(out, '/');
			if (last != NULL)
				last[last == out ? 1 : 0] = '\0';
		} else if (len > 0 && !(len == 1 && p[0] == '.')) {
			bool root = on == 1;
			if (on + len + 2 > PATH_MAX)
				return false;
			if (!root)
				out[on++] = '/';
			memcpy(out + on, p, len);
			out[on + len] = '\0';
		}
		p += len + (p[len] == '/');
	}
	return true;
}

/* a is b or below it, by whole components */
static bool path_within(const char *a, const char *b)
{
	size_t nb = strlen(b);
	return strcmp(b, "/") == 0 || (strncmp(a, b, nb) == 0 && (a[nb] == '\0' || a[nb] == '/'));
}

/* cache_dir inside models_dir was listed as a model that never opened (and
 * models_dir inside cache_dir put model folders among RocksDB's files). */
static int check_dirs(const wd_config *c, wt_errbuf *err)
{
	char m[PATH_MAX], k[PATH_MAX];
	if (c->models_dir[0] == '\0' || c->cache_dir[0] == '\0' ||
	    !resolve_path(c->models_dir, m) || !resolve_path(c->cache_dir, k))
		return WT_OK;
	if (strcmp(m, k) == 0)
		return wt_seterr(err, WT_ECONFIG,
		                 "cache_dir %s and models_dir %s are the same folder (%s); give "
		                 "cache_dir a folder of its own, outside models_dir",
		                 c->cache_dir, c->models_dir, k);
	if (path_within(k, m))
		return wt_seterr(err, WT_ECONFIG,
		                 "cache_dir %s (%s) is inside models_dir %s (%s): it would be "
		                 "listed as a model; move cache_dir outside models_dir",
		                 c->cache_dir, k, c->models_dir, m);
	if (path_within(m, k))
		return wt_seterr(err, WT_ECONFIG,
		                 "models_dir %s (%s) is inside cache_dir %s (%s), among the "
		                 "cache's files; move one of them out of the other",
		                 c->models_dir, m, c->cache_dir, k);
	return WT_OK;
}

int wd_config_check_override(const wd_strlist *l, const char *value, const char *where,
                             wt_errbuf *err)
{
	const char *eq = strchr(value, '=');
	if (eq == NULL || eq == value)
		return wt_seterr(err, WT_ECONFIG,
		                 "%s: model_override '%.60s' is not NAME=JSON (e.g. "
		                 "ds-mtp={\"architectures\": [\"DeepSeekMTPModel\"]})",
		                 where, value);
	size_t n = (size_t)(eq - value);
	for (size_t i = 0; i < l->n; i++)
		if (strncmp(l->v[i], value, n + 1) == 0)
			return wt_seterr(
			    err, WT_ECONFIG,
			    "%s: model_override for '%.*s' is given twice; put every key "
			    "into one JSON object",
			    where, (int)n, value);
	char *canon = NULL;
	wt_errbuf e2 = {0};
	int rv = ckpt_override_canonical(eq + 1, &canon, &e2);
	free(canon);
	if (rv == WT_OK && eq[1] == '\0')
		rv = wt_seterr(&e2, WT_EINVAL, "config override: empty; give one JSON object");
	if (rv != WT_OK)
		return wt_seterr(err, WT_ECONFIG, "%s: model_override for '%.*s': %s", where,
		                 (int)n, value, e2.msg);
	return WT_OK;
}

/* Is the first n bytes of name a subfolder of models_dir (a folder model)? A name with a '/'
 * or starting with '.' never is (scan_dir lists neither). */
static bool is_model_folder(const wd_config *c, const char *name, size_t n)
{
	if (c->models_dir[0] == '\0' || n == 0 || name[0] == '.' || memchr(name, '/', n) != NULL)
		return false;
	char path[PATH_MAX];
	int pn = snprintf(path, sizeof(path), "%s/%.*s", c->models_dir, (int)n, name);
	struct stat sb;
	return pn > 0 && (size_t)pn < sizeof(path) && stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
}

/* Every model_override names a model key or a folder of models_dir (a typo would leave the
 * model served without it). */
static int check_overrides(const wd_config *c, wt_errbuf *err)
{
	for (size_t i = 0; i < c->model_override.n; i++) {
		const char *o = c->model_override.v[i];
		size_t n = (size_t)(strchr(o, '=') - o);
		bool found = is_model_folder(c, o, n);
		for (size_t k = 0; k < c->model.n && !found; k++)
			found = strncmp(c->model.v[k], o, n + 1) == 0;
		if (!found)
			return wt_seterr(
			    err, WT_ECONFIG,
			    "model_override names '%.*s', which no model key defines and which is "
			    "not "
			    "a folder of models_dir %s; add model = %.*s=URI, create the folder, "
			    "or "
			    "register it with weightctl admin register --config-override",
			    (int)n, o, c->models_dir[0] ? c->models_dir : "(none)", (int)n, o);
	}
	return WT_OK;
}

int wd_config_check(const wd_config *c, wt_errbuf *err)
{
	int rv = wd_config_check_server_id(c->server_id, "server_id", err);
	if (rv == WT_OK)
		rv = check_overrides(c, err);
	if (rv == WT_OK)
		rv = check_dirs(c, err);
	if (rv != WT_OK)
		return rv;
	if (c->listen.n == 0)
		return wt_seterr(err, WT_ECONFIG, "no listen URL; set listen or --listen");
	for (size_t i = 0; rv == WT_OK && i < c->listen.n; i++)
		rv = check_url("listen", c->listen.v[i], err);
	for (size_t i = 0; rv == WT_OK && i < c->peer.n; i++)
		rv = check_url("peer", c->peer.v[i], err);
	if (rv == WT_OK && c->stream_listen[0] != '\0')
		rv = check_url("stream_listen", c->stream_listen, err);
	if (rv == WT_OK) /* it was parsed last of all at start, after every model */
		rv = wd_metrics_check_url(c->metrics_listen, err);
	if (rv != WT_OK)
		return rv;
	if (c->max_watchers > 0 && c->max_watchers >= c->contexts)
		return wt_seterr(err, WT_ECONFIG,
		                 "max_watchers %llu must be below contexts %llu (parked watches "
		                 "hold contexts); lower max_watchers or raise contexts",
		                 (unsigned long long)c->max_watchers,
		                 (unsigned long long)c->contexts);
	bool tls = is_tls(c->stream_listen);
	for (size_t i = 0; i < c->listen.n; i++)
		tls |= is_tls(c->listen.v[i]);
	if (tls && c->tls_cert_key_file[0] == '\0')
		return wt_seterr(err, WT_ECONFIG,
		                 "a tls+tcp:// listen or stream_listen URL needs tls_cert_key_file "
		                 "(a PEM file with the server's certificate and key)");
	/* nng reads them only at listen: a FIFO there hung the start, and a key
	 * readable by others went unsaid */
	rv = check_file("tls_cert_key_file", c->tls_cert_key_file, true, err);
	if (rv == WT_OK)
		rv = check_file("tls_ca_file", c->tls_ca_file, false, err);
	return rv;
}
