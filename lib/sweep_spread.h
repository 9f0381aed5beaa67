/* SPDX-License-Identifier: MIT */
/*
 * A sweep on plain hosts (dispatch-submit(1) SWEEPS): which host runs each task, and
 * --max-parallel P split into caps per host that sum to P, so that no more than P
 * tasks run at once in all without anything that watches them all: each host's
 * launchers hold its tasks to its cap (lib/sched/plain/plainjob.h, sweep_max).
 *
 * With P: the hosts used are the first min(hosts, P, tasks); each gets P / used, the
 * first P % used one more (a host with cap 0 gets no task; a P over the tasks' count
 * counts as that count: every task may run at once); the tasks are dealt in
 * turn, each host as many times a turn as its cap (caps 2 and 1: hosts 0, 1, 0, 0, 1,
 * 0 for 6 tasks), so that every host takes about as many rounds. Without P: in turn
 * (round-robin), no cap.
 *
 *	struct sweep_spread sp;
 *	sweep_spread(6, 2, 3, &sp);     // sp.cap {2, 1}, sp.ntasks {4, 2}
 *	sp.tasks[1]                     // {1, 4}; sp.host_of[3] == 0
 *	sweep_spread_release(&sp);
 */
#ifndef DISPATCH_SWEEP_SPREAD_H
#define DISPATCH_SWEEP_SPREAD_H

#include <stddef.h>

struct sweep_spread {
	size_t nhosts;
	long *cap;              /* per host: its tasks running at once at most; 0: no cap */
	size_t *ntasks;         /* per host: its tasks' count (0: it gets none) */
	size_t **tasks;         /* per host: its tasks' indexes, ascending */
	size_t *host_of;        /* per task: its host */
};

/* ntasks >= 1, nhosts >= 1; max_parallel 0: none. */
void sweep_spread(size_t ntasks, size_t nhosts, long max_parallel, struct sweep_spread *out);
void sweep_spread_release(struct sweep_spread *sp);

#endif
