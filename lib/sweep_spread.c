/* SPDX-License-Identifier: MIT */
/* A sweep's tasks spread over plain hosts: sweep_spread.h. */
#include "sweep_spread.h"

#include <stdlib.h>
#include <string.h>

#include "base/util.h"

void sweep_spread(size_t ntasks, size_t nhosts, long max_parallel, struct sweep_spread *out)
{
	memset(out, 0, sizeof(*out));
	out->nhosts = nhosts;
	out->cap = xcalloc(nhosts ? nhosts : 1, sizeof(*out->cap));
	out->ntasks = xcalloc(nhosts ? nhosts : 1, sizeof(*out->ntasks));
	out->tasks = xcalloc(nhosts ? nhosts : 1, sizeof(*out->tasks));
	out->host_of = xcalloc(ntasks ? ntasks : 1, sizeof(*out->host_of));
	if (!nhosts || !ntasks)
		return;
	/* one turn: each host as many times as its cap (or once, without caps) */
	size_t *turn, nturn = 0;
	if (max_parallel > 0) {
		/* more than one slot per task changes nothing: the turn stays short */
		size_t p = (size_t)max_parallel < ntasks ? (size_t)max_parallel : ntasks;
		size_t used = nhosts < p ? nhosts : p;
		for (size_t h = 0; h < used; h++)
			out->cap[h] = (long)(p / used + (h < p % used));
		turn = xcalloc(p, sizeof(*turn));
		for (long r = 0; nturn < p; r++)
			for (size_t h = 0; h < used; h++)
				if (out->cap[h] > r)
					turn[nturn++] = h;
	} else {
		turn = xcalloc(nhosts, sizeof(*turn));
		for (size_t h = 0; h < nhosts; h++)
			turn[nturn++] = h;
	}
	for (size_t i = 0; i < ntasks; i++) {
		size_t h = turn[i % nturn];
		out->host_of[i] = h;
		out->tasks[h] = xrealloc(out->tasks[h], (out->ntasks[h] + 1) * sizeof(**out->tasks));
		out->tasks[h][out->ntasks[h]++] = i;
	}
	free(turn);
}

void sweep_spread_release(struct sweep_spread *sp)
{
	for (size_t h = 0; h < sp->nhosts; h++)
		free(sp->tasks[h]);
	free(sp->tasks);
	free(sp->cap);
	free(sp->ntasks);
	free(sp->host_of);
	memset(sp, 0, sizeof(*sp));
}
