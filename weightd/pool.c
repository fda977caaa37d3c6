/* pool.c — a fixed pool of worker threads for blocking work (STYLE.md 11). */
#include <pthread.h>
#include <stdlib.h>

#include "weightd/weightd_int.h"

struct wd_pool {
	pthread_mutex_t lk;
	pthread_cond_t cv;
	/* fields below guarded by lk */
	wd_job *head[WD_POOL_MAX_LANES], *tail[WD_POOL_MAX_LANES];
	unsigned running; /* jobs being run now, any lane */
	bool stopping;
	/* immutable after create */
	pthread_t *threads;
	unsigned *lane_of; /* the lane each thread serves */
	unsigned n, n_lanes;
};

typedef struct worker_arg {
	wd_pool *p;
	unsigned lane;
} worker_arg;

static bool all_empty(const wd_pool *p)
{
	for (unsigned l = 0; l < p->n_lanes; l++)
		if (p->head[l] != NULL)
			return false;
	return true;
}

/*
 * A thread runs its lane's jobs. While the pool stops, it leaves only when
 * every lane is empty and no job runs anywhere: a job of one lane may still
 * queue work on another (a production wakes requests), and it must run.
 */
static void *worker_main(void *arg)
{
	wd_pool *p = ((worker_arg *)arg)->p;
	unsigned lane = ((worker_arg *)arg)->lane;
	free(arg);
	(void)pthread_setname_np(pthread_self(), "wd:worker"); /* top -H, perf */
	pthread_mutex_lock(&p->lk);
	for (;;) {
		while (p->head[lane] == NULL && !(p->stopping && all_empty(p) && p->running == 0))
			pthread_cond_wait(&p->cv, &p->lk);
		wd_job *j = p->head[lane];
		if (j == NULL)
			break; /* stopping and drained */
		p->head[lane] = j->next;
		if (p->head[lane] == NULL)
			p->tail[lane] = NULL;
		p->running++;
		pthread_mutex_unlock(&p->lk);
		j->next = NULL;
		j->fn(j);
		pthread_mutex_lock(&p->lk);
		if (--p->running == 0 && p->stopping)
			pthread_cond_broadcast(&p->cv);
	}
	pthread_mutex_unlock(&p->lk);
	return NULL;
}

int wd_pool_create(wd_pool **out, unsigned n, wt_errbuf *err)
{
	return wd_pool_create_lanes(out, &n, 1, err);
}

int wd_pool_create_lanes(wd_pool **out, const unsigned *per_lane, unsigned n_lanes, wt_errbuf *err)
{
	WT_ASSERT(n_lanes >= 1 && n_lanes <= WD_POOL_MAX_LANES);
	unsigned total = 0;
	for (unsigned l = 0; l < n_lanes; l++)
		total += per_lane[l];
	wd_pool *p = calloc(1, sizeof(*p));
	if (p == NULL || (p->threads = calloc(total, sizeof(pthread_t))) == NULL ||
	    (p->lane_of = calloc(total, sizeof(unsigned))) == NULL) {
		if (p != NULL)
			free(p->threads);
		free(p);
		return wt_seterr(err, WT_ENOMEM, "worker pool: out of memory");
	}
	pthread_mutex_init(&p->lk, NULL);
	pthread_cond_init(&p->cv, NULL);
	p->n_lanes = n_lanes;
	for (unsigned l = 0, i = 0; l < n_lanes; l++) {
		for (unsigned k = 0; k < per_lane[l]; k++, i++) {
			worker_arg *a = malloc(sizeof(*a));
			if (a != NULL)
				*a = (worker_arg){p, l};
			if (a == NULL ||
			    pthread_create(&p->threads[i], NULL, worker_main, a) != 0) {
				free(a);
				wd_pool_destroy(p);
				return wt_seterr(err, WT_EIO,
				                 "worker pool: cannot start thread %u of %u", i + 1,
				                 total);
			}
			p->lane_of[i] = l;
			p->n = i + 1;
		}
	}
	*out = p;
	return WT_OK;
}

void wd_pool_submit_lane(wd_pool *p, unsigned lane, wd_job *job)
{
	WT_ASSERT(lane < p->n_lanes);
	job->next = NULL;
	pthread_mutex_lock(&p->lk);
	if (p->tail[lane] != NULL)
		p->tail[lane]->next = job;
	else
		p->head[lane] = job;
	p->tail[lane] = job;
	pthread_cond_broadcast(&p->cv); /* threads of several lanes share the condition */
	pthread_mutex_unlock(&p->lk);
}

void wd_pool_submit(wd_pool *p, wd_job *job)
{
	wd_pool_submit_lane(p, 0, job);
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
	free(p->lane_of);
	free(p);
}
