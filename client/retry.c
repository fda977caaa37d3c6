/*
 * retry.c — the retry budget: connection trouble (refused, reset, no Hello
 * reply, timeouts) is retried with exponential backoff, going round the
 * endpoint list again, until retry_budget_ms have passed since the first
 * failure. So a client with one endpoint rides out a daemon restart of a few
 * seconds, and a dead endpoint among several is skipped at once (a connect
 * phase failure moves to the next one without waiting).
 */
#include <time.h>

#include "client/client_int.h"
#include "weights/weights.h"

uint64_t client_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

void client_budget_start(client_budget *b)
{
	if (b->t0_ms == 0)
		b->t0_ms = client_now_ms();
}

int client_budget_next(const wt_client *c, client_budget *b, const wt_errbuf *err, uint32_t *ms)
{
	client_budget_start(b);
	uint64_t spent = client_now_ms() - b->t0_ms;
	if (spent >= c->o.retry_budget_ms)
		return 0;
	*ms = client_backoff_ms(c, b->passes++);
	if (spent + *ms > c->o.retry_budget_ms)
		*ms = (uint32_t)(c->o.retry_budget_ms - spent);
	client_log(c, WT_CLIENT_LOG_WARNING,
	           "%s; trying again in %u ms (%llu of %u ms of retry budget spent)",
	           err != NULL ? err->msg : "no endpoint answered", *ms, (unsigned long long)spent,
	           c->o.retry_budget_ms);
	return 1;
}

int client_budget_again(const wt_client *c, client_budget *b, const wt_errbuf *err)
{
	uint32_t ms = 0;
	if (!client_budget_next(c, b, err, &ms))
		return 0;
	client_sleep_ms(ms);
	return 1;
}

/* Up to max_retries attempts of fn on ep; a connect-phase failure (WT_EUNAVAIL)
 * or an error the server answered (*answered; WT_EBUSY excepted) gives up on
 * ep at once. */
static int try_ep(wt_client *c, size_t ep, client_ep_fn fn, void *arg, bool *answered,
                  wt_errbuf *err)
{
	for (uint32_t attempt = 0;; attempt++) {
		*answered = false;
		int rv = fn(c, ep, arg, answered, err);
		if (*answered && rv == WT_EBUSY)
			*answered = false; /* "try again": as a transport failure */
		if (rv == WT_OK || !client_retryable(rv) || rv == WT_EUNAVAIL || *answered ||
		    attempt >= c->o.max_retries)
			return rv;
		uint32_t ms = client_backoff_ms(c, attempt);
		client_log(c, WT_CLIENT_LOG_WARNING, "%s; retry %u/%u in %u ms",
		           err != NULL ? err->msg : "request failed", attempt + 1, c->o.max_retries,
		           ms);
		client_sleep_ms(ms);
	}
}

int client_each_ep(wt_client *c, const size_t *order, unsigned flags, client_ep_fn fn, void *arg,
                   size_t *used, wt_errbuf *err)
{
	client_budget b = {0};
	wt_errbuf said = {0}; /* the last error an endpoint answered, this round */
	int rv;
	for (;;) {
		said.code = WT_OK;
		for (size_t k = 0; k < c->n_eps; k++) {
			size_t ep = order != NULL ? order[k] : k;
			bool answered;
			rv = try_ep(c, ep, fn, arg, &answered, err);
			if (rv == WT_OK && used != NULL)
				*used = ep;
			if (rv == WT_OK || !client_retryable(rv) ||
			    (answered && (flags & CLIENT_ANSWER_FINAL)))
				return rv;
			if (answered && err != NULL)
				said = *err;
			else if (answered)
				said.code = rv;
			if (k + 1 < c->n_eps)
				client_log(c, WT_CLIENT_LOG_WARNING, "%s; trying the next endpoint",
				           err != NULL ? err->msg : "endpoint failed");
		}
		if (!client_budget_again(c, &b, said.code != WT_OK ? &said : err))
			break;
	}
	if (said.code != WT_OK) {
		if (err != NULL) {
			*err = said;
			wt_errprefix(err, "retry budget %u ms spent; the last answer",
			             c->o.retry_budget_ms);
		}
		return said.code;
	}
	if (err != NULL) {
		err->code = WT_EUNAVAIL;
		wt_errprefix(err, "no endpoint answered (%zu tried, retry budget %u ms spent)",
		             c->n_eps, c->o.retry_budget_ms);
	}
	return WT_EUNAVAIL;
}
