/*
 * auth.c — who may do what (docs/weightd.md "Security: tokens, roles and limits").
 *
 * Roles of a connection, set by its latest Hello:
 *
 *   NONE   no token proven (also after a Hello with a wrong token)
 *   DATA   Hello carried auth_token: ListModels, Manifest, Chunk, admin STATS
 *   ADMIN  Hello carried admin_token: everything (data included)
 *
 * Without auth_token, data requests need no Hello. Admin ops other than STATS
 * (WARM, EVICT, VERIFY, RECLAIM, REGISTER, UNREGISTER) need the ADMIN role;
 * with no token configured at all (the loopback development default) they are
 * open to every connection, and with only auth_token set they are off.
 *
 * Tokens are compared as SHA-256 digests with CRYPTO_memcmp: the time taken
 * depends on neither the configured token nor how much of it a guess matched.
 * Auth failures are logged at most WD_AUTH_LOG_PER_S times a second per daemon;
 * the count of the ones left out is logged with the next one logged.
 */
#include <openssl/crypto.h>
#include <openssl/sha.h>
#include <string.h>

#include "weightd/server_int.h"

#define WD_AUTH_LOG_PER_S 10

static bool token_eq(const char *want, const char *got)
{
	unsigned char a[SHA256_DIGEST_LENGTH], b[SHA256_DIGEST_LENGTH];
	SHA256((const unsigned char *)want, strlen(want), a);
	SHA256((const unsigned char *)got, strlen(got), b);
	return CRYPTO_memcmp(a, b, sizeof(a)) == 0;
}

int wd_auth_hello(const wd_config *cfg, const char *token, int *role)
{
	const char *got = token != NULL ? token : "";
	bool need_auth = cfg->auth_token[0] != '\0', has_admin = cfg->admin_token[0] != '\0';
	*role = WD_ROLE_NONE;
	if (has_admin && token_eq(cfg->admin_token, got)) {
		*role = WD_ROLE_ADMIN;
		return WT_OK;
	}
	if (need_auth && token_eq(cfg->auth_token, got)) {
		*role = WD_ROLE_DATA;
		return WT_OK;
	}
	/* No token given where none is needed for data; or no token configured at
	 * all (then any token is accepted, as before tokens had roles). */
	if ((!need_auth && got[0] == '\0') || (!need_auth && !has_admin))
		return WT_OK;
	return WT_EPERM;
}

static bool admin_op(const Weights__Request *rq)
{
	return rq->body_case == WEIGHTS__REQUEST__BODY_ADMIN &&
	       rq->admin->op != WEIGHTS__ADMIN_REQUEST__OP__OP_STATS;
}

const char *wd_auth_check(const wd_config *cfg, int role, const Weights__Request *rq)
{
	bool need_auth = cfg->auth_token[0] != '\0', has_admin = cfg->admin_token[0] != '\0';
	if (rq->body_case == WEIGHTS__REQUEST__BODY_HELLO)
		return NULL;
	if (!admin_op(rq)) {
		if (!need_auth || role >= WD_ROLE_DATA)
			return NULL;
		return "this connection has not authenticated; send Hello with the server's "
		       "auth_token (or admin_token) first";
	}
	if (!need_auth && !has_admin)
		return NULL; /* no token configured at all: development mode */
	if (!has_admin)
		return "admin operations are off: this server has auth_token but no admin_token; "
		       "set admin_token (or admin_token_file) and send it in Hello";
	if (role == WD_ROLE_ADMIN)
		return NULL;
	return "admin operation refused: this connection has not authenticated with the "
	       "server's admin_token (a data token may only read); send Hello with admin_token";
}

void wd_auth_log_failure(wd_server *s, const char *what)
{
	uint64_t now = common_now_ns();
	pthread_mutex_lock(&s->authlog_lk);
	if (now - s->authlog_t0_ns >= 1000000000ull) {
		s->authlog_t0_ns = now;
		s->authlog_n = 0;
	}
	bool log = s->authlog_n < WD_AUTH_LOG_PER_S;
	s->authlog_n++;
	uint64_t left_out = 0;
	if (log) {
		left_out = s->authlog_suppressed;
		s->authlog_suppressed = 0;
	} else {
		s->authlog_suppressed++;
	}
	pthread_mutex_unlock(&s->authlog_lk);
	if (!log)
		return;
	if (left_out > 0)
		WT_LOG(WT_LOG_WARNING,
		       "auth: %s (and %llu more auth failures not logged: at most %d "
		       "a second are)",
		       what, (unsigned long long)left_out, WD_AUTH_LOG_PER_S);
	else
		WT_LOG(WT_LOG_WARNING, "auth: %s", what);
}
