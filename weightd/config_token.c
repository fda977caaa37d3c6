/*
 * config_token.c — where the tokens come from, so that they need not appear in
 * /proc/PID/cmdline: auth_token / admin_token (config file or flag), or
 * auth_token_file / admin_token_file (a file of one line), or the environment
 * variables WEIGHTD_AUTH_TOKEN / WEIGHTD_ADMIN_TOKEN. One source per token: a
 * key and its _file both set is an error; the environment is used only when
 * neither is set. A token is 1..WD_TOKEN_MAX bytes of UTF-8 without control
 * characters; a file's one trailing newline ("\n" or "\r\n") is dropped. A token
 * file readable by group or others is used with a warning (chmod 600 it).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/common.h"
#include "weightd/weightd.h"

static int check_token(const char *what, const char *from, const char *t, size_t n, wt_errbuf *err)
{
	if (n == 0)
		return wt_seterr(err, WT_ECONFIG, "%s from %s is empty; put the token in it", what,
		                 from);
	if (n > WD_TOKEN_MAX)
		return wt_seterr(err, WT_ECONFIG, "%s from %s is %zu bytes, over %d", what, from, n,
		                 WD_TOKEN_MAX);
	bool ctl = false;
	for (size_t i = 0; i < n; i++)
		ctl |= (unsigned char)t[i] < 0x20 || t[i] == 0x7f;
	if (ctl || !common_utf8_valid(t, n, false))
		return wt_seterr(err, WT_ECONFIG,
		                 "%s from %s holds a NUL, a control character or invalid UTF-8; "
		                 "use printable UTF-8 text",
		                 what, from);
	return WT_OK;
}

/* Read the token in path into a new string (*out; caller frees). */
static int read_token_file(const char *what, const char *path, char **out, wt_errbuf *err)
{
	char from[300];
	snprintf(from, sizeof(from), "%s_file", what);
	int fd; /* never waits on a FIFO; a file others may read is warned about */
	int rv = wd_config_open_file(from, path, true, &fd, err);
	if (rv != WT_OK)
		return rv;
	char buf[WD_TOKEN_MAX + 3];
	ssize_t n = read(fd, buf, sizeof(buf));
	if (n < 0)
		rv = wt_seterr(err, WT_ECONFIG, "%s_file %s: %s", what, path, strerror(errno));
	close(fd);
	if (rv != WT_OK)
		return rv;
	size_t len = (size_t)n;
	if (len > 0 && buf[len - 1] == '\n')
		len--;
	if (len > 0 && buf[len - 1] == '\r')
		len--;
	snprintf(from, sizeof(from), "%s_file %s", what, path);
	if ((rv = check_token(what, from, buf, len, err)) != WT_OK)
		return rv;
	char *t = malloc(len + 1);
	if (t == NULL)
		return wt_seterr(err, WT_ENOMEM, "%s: out of memory", from);
	memcpy(t, buf, len);
	t[len] = '\0';
	*out = t;
	return WT_OK;
}

static int resolve(const char *what, char **tok, const char *file, const char *env, wt_errbuf *err)
{
	char *t = NULL;
	int rv;
	if (file[0] != '\0') {
		if ((*tok)[0] != '\0')
			return wt_seterr(err, WT_ECONFIG,
			                 "both %s and %s_file are set; keep only %s_file", what,
			                 what, what);
		if ((rv = read_token_file(what, file, &t, err)) != WT_OK)
			return rv;
	} else if ((*tok)[0] != '\0') {
		return check_token(what, "the configuration", *tok, strlen(*tok), err);
	} else {
		const char *v = getenv(env);
		if (v == NULL || v[0] == '\0')
			return WT_OK;
		if ((rv = check_token(what, env, v, strlen(v), err)) != WT_OK)
			return rv;
		if ((t = strdup(v)) == NULL)
			return wt_seterr(err, WT_ENOMEM, "%s: out of memory", env);
	}
	free(*tok);
	*tok = t;
	return WT_OK;
}

int wd_config_resolve_tokens(wd_config *c, wt_errbuf *err)
{
	int rv =
	    resolve("auth_token", &c->auth_token, c->auth_token_file, "WEIGHTD_AUTH_TOKEN", err);
	if (rv == WT_OK)
		rv = resolve("admin_token", &c->admin_token, c->admin_token_file,
		             "WEIGHTD_ADMIN_TOKEN", err);
	if (rv == WT_OK && c->admin_token[0] != '\0' && strcmp(c->admin_token, c->auth_token) == 0)
		rv = wt_seterr(err, WT_ECONFIG,
		               "admin_token equals auth_token: every data client would be an "
		               "admin; give admin_token its own value");
	return rv;
}
