/* pool.c — a fixed pool of worker threads for blocking work (STYLE.md 11). */
#include <pthread.h>
#include <stdlib.h>

#include "weightd/weightd_int.h"

struct wd_pool {
	pthread_mutex_t lk;
	pthread_cond_t cv;
	/* fields below guarded by lk */
	wd_job *head, *tail;
	bool stopping;
	/* immutable after create */
	pthread_t *threads;
	unsigned n;
};

static void *worker_main(void *arg)
{
	wd_pool *p = arg;
	pthread_mutex_lock(&p->lk);
	for (;;) {
		while (p->head == NULL && !p->stopping)
			pthread_cond_wait(&p->cv, &p->lk);
		wd_job *j = p->head;
		if (j == NULL)
			break; /* stopping and drained */
		p->head = j->next;
		if (p->head == NULL)
			p->tail = NULL;
		pthread_mutex_unlock(&p->lk);
		j->next = NULL;
		j->fn(j);
		pthread_mutex_lock(&p->lk);
	}
	pthread_mutex_unlock(&p->lk);
	return NULL;
}

int wd_pool_create(wd_pool **out, unsigned n, wt_errbuf *err)
{
	wd_pool *p = calloc(1, sizeof(*p));
	if (p == NULL || (p->threads = calloc(n, sizeof(pthread_t))) == NULL) {
		free(p);
		return wt_seterr(err, WT_ENOMEM, "worker pool: out of memory");
	}
	pthread_mutex_init(&p->lk, NULL);
	pthread_cond_init(&p->cv, NULL);
	for (unsigned i = 0; i < n; i++) {
		if (pthread_create(&p->threads[i], NULL, worker_main, p) != 0) {
			wd_pool_destroy(p);
			return wt_seterr(err, WT_EIO, "worker pool: cannot start thread %u of %u",
			                 i + 1, n);
		}
		p->n = i + 1;
	}
	*out = p;
	return WT_OK;
}

void wd_pool_submit(wd_pool *p, wd_job *job)
{
	job->next = NULL;
	pthread_mutex_lock(&p->lk);
	if (p->tail != NULL)
		p->tail->next = job;
	else
		p->head = job;
	p->tail = job;
	pthread_cond_signal(&p->cv);
	pthread_mutex_unlock(&p->lk);
}

void wd_pool_destroy(wd_pool *p)
{
	if (p == NULL)
		return;
	pthread_mutex_lock(&p->lk);
	p->stopping = true;
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->lk);
	for (unsigned i = 0; i < p->n; i++)
		pthread_join(p->threads[i], NULL);
	pthread_cond_destroy(&p->cv);
	pthread_mutex_destroy(&p->lk);
	free(p->threads);
	free(p);
}
