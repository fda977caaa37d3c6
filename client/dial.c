/* dial.c — a dial bounded by connect_timeout_ms (nng 1.5.2's blocking dial may wait 10 s). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "client/client_int.h"
#include "common/common.h"

#include "weights/weights.h"

/*
 * A dial bounded by connect_timeout_ms. nng 1.5.2's synchronous nng_dial
 * returns at once when the connection is refused, but waits up to its
 * hard-coded 10 s SP handshake timeout when something accepts TCP and never
 * answers (measured: 10.01 s); a non-blocking dial reports nothing at all. So
 * the blocking dial runs on a short-lived thread and the caller waits at most
 * the timeout. A caller that gives up leaves the job to the thread, which
 * closes the socket and frees the job when nng_dial returns (<= 10 s); the
 * thread touches nothing else, so the client may be closed meanwhile.
 */
typedef struct dial_job {
	pthread_mutex_t lk;
	pthread_cond_t cv;
	nng_socket s;
	char *url;               /* owned */
	char *tls_ca, *tls_cert; /* owned copies for tls+tcp://; NULL = none */
	client_sockmon *mon;     /* s's pipe monitor: freed with s by an abandoned dial */
	/* fields below guarded by lk */
	int done, abandoned, nrv;
} dial_job;

static void dial_job_free(dial_job *j)
{
	pthread_cond_destroy(&j->cv);
	pthread_mutex_destroy(&j->lk);
	free(j->url);
	free(j->tls_ca);
	free(j->tls_cert);
	free(j);
}

/* nng_dial, with the TLS files set on the dialer for tls+tcp:// (nng checks the
 * server's certificate against the CA file and the URL's host name). */
static int dial_url(dial_job *j)
{
	if (strncmp(j->url, "tls+tcp://", 10) != 0)
		return nng_dial(j->s, j->url, NULL, 0);
	nng_dialer d;
	int nrv = nng_dialer_create(&d, j->s, j->url);
	if (nrv == 0 && j->tls_ca != NULL)
		nrv = nng_dialer_set_string(d, NNG_OPT_TLS_CA_FILE, j->tls_ca);
	if (nrv == 0 && j->tls_cert != NULL)
		nrv = nng_dialer_set_string(d, NNG_OPT_TLS_CERT_KEY_FILE, j->tls_cert);
	if (nrv == 0)
		nrv = nng_dialer_start(d, 0);
	return nrv;
}

static void *dial_main(void *arg)
{
	dial_job *j = arg;
	int nrv = dial_url(j);
	pthread_mutex_lock(&j->lk);
	j->nrv = nrv;
	j->done = 1;
	int gone = j->abandoned;
	pthread_cond_signal(&j->cv);
	pthread_mutex_unlock(&j->lk);
	if (gone) {
		nng_close(j->s); /* after this no pipe callback touches mon */
		free(j->mon);
		dial_job_free(j);
	}
	return NULL;
}

int client_dial_bounded(const wt_client *c, nng_socket s, client_sockmon *mon, const char *url,
                        uint32_t timeout_ms, wt_errbuf *err)
{
	dial_job *j = calloc(1, sizeof(*j));
	char *u = strdup(url);
	if (j != NULL && c->tls_ca != NULL && (j->tls_ca = strdup(c->tls_ca)) == NULL)
		u = (free(u), NULL);
	if (j != NULL && c->tls_cert_key != NULL && (j->tls_cert = strdup(c->tls_cert_key)) == NULL)
		u = (free(u), NULL);
	pthread_t th;
	pthread_attr_t at;
	if (j == NULL || u == NULL) {
		if (j != NULL) {
			free(j->tls_ca);
			free(j->tls_cert);
		}
		free(j);
		free(u);
		nng_close(s);
		free(mon);
		return wt_seterr(err, WT_ENOMEM, "endpoint %s: out of memory", url);
	}
	pthread_mutex_init(&j->lk, NULL);
	pthread_cond_init(&j->cv, NULL);
	j->s = s;
	j->url = u;
	j->mon = mon;
	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	int prv = pthread_create(&th, &at, dial_main, j);
	pthread_attr_destroy(&at);
	if (prv != 0) {
		dial_job_free(j);
		nng_close(s);
		free(mon);
		return wt_seterr(err, WT_ENOMEM, "endpoint %s: cannot start a dial thread", url);
	}
	struct timespec dl = common_timespec_in(CLOCK_REALTIME, timeout_ms);
	pthread_mutex_lock(&j->lk);
	while (!j->done && pthread_cond_timedwait(&j->cv, &j->lk, &dl) == 0)
		;
	int done = j->done, nrv = j->nrv;
	if (!done)
		j->abandoned = 1; /* the thread closes s and frees j */
	pthread_mutex_unlock(&j->lk);
	if (!done)
		return wt_seterr(err, WT_EUNAVAIL,
		                 "endpoint %s: connected, but no protocol handshake within %u ms "
		                 "(something that is not weightd, or a hung one, listens there)",
		                 url, timeout_ms);
	dial_job_free(j);
	if (nrv != 0) {
		nng_close(s);
		free(mon);
		/* any dial failure is a connect-phase failure: try elsewhere / later */
		return wt_seterr(err, WT_EUNAVAIL, "endpoint %s: cannot connect: %s", url,
		                 nng_strerror(nrv));
	}
	return WT_OK;
}
