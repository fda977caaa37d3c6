/*
 * pool.c — the kernels' small fixed thread pool. Workers start on first use
 * (one fewer than the thread count: the caller works too) and live for the
 * process. Jobs from several callers queue FIFO; each job is split into
 * contiguous ranges fixed by (n_units, thread count) alone, so no result
 * depends on scheduling.
 */
#include <pthread.h>
#include <unistd.h>

#include "kernels/kernels.h"
#include "kernels/kernels_int.h"

#define POOL_MAX_THREADS   64
#define POOL_TASKS_PER_THR 4         /* ranges per thread, for load balance */
#define POOL_MIN_ELEMS     (1 << 17) /* below this many elements per range, stay inline */

typedef struct pool_job {
	kern_task_fn fn;
	void *ctx;
	int64_t n_units;
	int n_tasks;
	int next; /* next range to hand out; guarded by pool.lk */
	int done; /* ranges finished; guarded by pool.lk */
	struct pool_job *qnext;
} pool_job;

static struct {
	pthread_mutex_t lk;
	pthread_cond_t work_cv; /* a job was queued */
	pthread_cond_t done_cv; /* a job finished its last range */
	/* fields below guarded by lk */
	pool_job *head, *tail;
	int n_workers; /* started workers (never shrinks) */
	int n_threads; /* configured threads including the caller; 0 = not yet decided */
} pool = {PTHREAD_MUTEX_INITIALIZER,
          PTHREAD_COND_INITIALIZER,
          PTHREAD_COND_INITIALIZER,
          NULL,
          NULL,
          0,
          0};

static int online_cpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	if (n < 1)
		return 1;
	return n > POOL_MAX_THREADS ? POOL_MAX_THREADS : (int)n;
}

/* Called with pool.lk held: take the next range of the head job. */
static pool_job *take_locked(int *task)
{
	pool_job *j = pool.head;
	*task = j->next++;
	if (j->next == j->n_tasks) {
		pool.head = j->qnext;
		if (!pool.head)
			pool.tail = NULL;
	}
	return j;
}

static void run_task(pool_job *j, int t)
{
	int64_t b = j->n_units * t / j->n_tasks;
	int64_t e = j->n_units * (t + 1) / j->n_tasks;
	if (e > b)
		j->fn(j->ctx, b, e);
}

/* Called with pool.lk held, after a range of j finished. */
static void finish_locked(pool_job *j)
{
	if (++j->done == j->n_tasks)
		pthread_cond_broadcast(&pool.done_cv);
}

static void *worker(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&pool.lk);
	for (;;) {
		while (!pool.head)
			pthread_cond_wait(&pool.work_cv, &pool.lk);
		int t;
		pool_job *j = take_locked(&t);
		pthread_mutex_unlock(&pool.lk);
		run_task(j, t);
		pthread_mutex_lock(&pool.lk);
		finish_locked(j);
	}
	return NULL;
}

/* Called with pool.lk held: make sure n_threads - 1 workers run. A worker that fails
 * to start only lowers the parallelism; the caller always works. */
static void grow_locked(void)
{
	if (pool.n_threads == 0)
		pool.n_threads = online_cpus();
	while (pool.n_workers < pool.n_threads - 1) {
		pthread_t th;
		pthread_attr_t attr;
		if (pthread_attr_init(&attr) != 0)
			return;
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		int rc = pthread_create(&th, &attr, worker, NULL);
		pthread_attr_destroy(&attr);
		if (rc != 0)
			return;
		pool.n_workers++;
	}
}

void kern_set_threads(int n)
{
	if (n <= 0)
		n = online_cpus();
	if (n > POOL_MAX_THREADS)
		n = POOL_MAX_THREADS;
	pthread_mutex_lock(&pool.lk);
	pool.n_threads = n;
	pthread_mutex_unlock(&pool.lk);
}

int kern_pool_threads(void)
{
	pthread_mutex_lock(&pool.lk);
	if (pool.n_threads == 0)
		pool.n_threads = online_cpus();
	int n = pool.n_threads;
	pthread_mutex_unlock(&pool.lk);
	return n;
}

void kern_pool_for(int64_t n_units, int64_t unit_elems, kern_task_fn fn, void *ctx)
{
	if (n_units <= 0)
		return;
	int threads = kern_pool_threads();
	int64_t elems = n_units * (unit_elems > 0 ? unit_elems : 1);
	int64_t tasks = (int64_t)threads * POOL_TASKS_PER_THR;
	if (tasks > n_units)
		tasks = n_units;
	if (tasks > elems / POOL_MIN_ELEMS)
		tasks = elems / POOL_MIN_ELEMS;
	if (threads <= 1 || tasks <= 1) {
		fn(ctx, 0, n_units);
		return;
	}
	pool_job j = {fn, ctx, n_units, (int)tasks, 0, 0, NULL};
	pthread_mutex_lock(&pool.lk);
	grow_locked();
	if (pool.tail)
		pool.tail->qnext = &j;
	else
		pool.head = &j;
	pool.tail = &j;
	pthread_cond_broadcast(&pool.work_cv);
	/* The caller works on its own job until every range is handed out. */
	while (j.next < j.n_tasks) {
		int t = j.next++;
		if (j.next == j.n_tasks) {
			/* j may not be the head if other jobs queued first: unlink it */
			pool_job **pp = &pool.head;
			pool_job *prev = NULL;
			while (*pp && *pp != &j) {
				prev = *pp;
				pp = &(*pp)->qnext;
			}
			if (*pp) {
				*pp = j.qnext;
				if (pool.tail == &j)
					pool.tail = prev;
			}
		}
		pthread_mutex_unlock(&pool.lk);
		run_task(&j, t);
		pthread_mutex_lock(&pool.lk);
		finish_locked(&j);
	}
	while (j.done < j.n_tasks)
		pthread_cond_wait(&pool.done_cv, &pool.lk);
	pthread_mutex_unlock(&pool.lk);
}
