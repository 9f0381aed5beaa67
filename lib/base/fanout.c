/* SPDX-License-Identifier: MIT */
/* Work on many hosts at once: fanout.h. */
#include "base/fanout.h"

#include <pthread.h>
#include <stdlib.h>

#include "base/util.h"

struct pool {
	pthread_mutex_t lock;
	size_t next, n;
	void (*fn)(void *data, size_t i);
	void *data;
};

static void *worker(void *arg)
{
	struct pool *p = arg;
	for (;;) {
		pthread_mutex_lock(&p->lock);
		size_t i = p->next++;
		pthread_mutex_unlock(&p->lock);
		if (i >= p->n)
			return NULL;
		p->fn(p->data, i);
	}
}

void fanout_run(size_t n, size_t width, size_t stack_size, void (*fn)(void *data, size_t i),
		void *data)
{
	struct pool p = { .n = n, .fn = fn, .data = data };
	size_t nthreads = n < width ? n : width;
	pthread_t *threads = xcalloc(nthreads ? nthreads : 1, sizeof(*threads));
	pthread_attr_t attr;
	size_t started = 0;

	pthread_mutex_init(&p.lock, NULL);
	pthread_attr_init(&attr);
	if (stack_size)
		pthread_attr_setstacksize(&attr, stack_size);
	for (; started < nthreads; started++)
		if (pthread_create(&threads[started], &attr, worker, &p) != 0)
			break;
	pthread_attr_destroy(&attr);
	if (!started)
		worker(&p);
	for (size_t i = 0; i < started; i++)
		pthread_join(threads[i], NULL);
	free(threads);
	pthread_mutex_destroy(&p.lock);
}
