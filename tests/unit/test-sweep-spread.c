/* SPDX-License-Identifier: MIT */
/* lib/sweep_spread: which host runs each task of a sweep on plain hosts, and
 * --max-parallel split into caps per host that sum to it (a host with cap 0 gets no
 * task), the tasks dealt by cap; without a cap, in turn. */
#include "sweep_spread.h"
#include "unit.h"

static void check_hosts(const struct sweep_spread *sp, const size_t *want, size_t n)
{
	for (size_t i = 0; i < n; i++)
		CHECK_INT(sp->host_of[i], want[i]);
}

int main(void)
{
	struct sweep_spread sp;
	/* 6 tasks, 2 hosts, P 3: caps 2 and 1, dealt 0 1 0 0 1 0 */
	sweep_spread(6, 2, 3, &sp);
	CHECK_INT(sp.cap[0], 2);
	CHECK_INT(sp.cap[1], 1);
	check_hosts(&sp, (const size_t[]){ 0, 1, 0, 0, 1, 0 }, 6);
	CHECK_INT(sp.ntasks[0], 4);
	CHECK_INT(sp.ntasks[1], 2);
	CHECK_INT(sp.tasks[1][0], 1);
	CHECK_INT(sp.tasks[1][1], 4);
	sweep_spread_release(&sp);
	/* P under the hosts: only P hosts get tasks, cap 1 each */
	sweep_spread(5, 3, 2, &sp);
	CHECK_INT(sp.cap[0] + sp.cap[1] + sp.cap[2], 2);
	CHECK_INT(sp.cap[2], 0);
	CHECK_INT(sp.ntasks[2], 0);
	check_hosts(&sp, (const size_t[]){ 0, 1, 0, 1, 0 }, 5);
	sweep_spread_release(&sp);
	/* no P: round-robin, no cap */
	sweep_spread(5, 2, 0, &sp);
	CHECK_INT(sp.cap[0], 0);
	CHECK_INT(sp.cap[1], 0);
	check_hosts(&sp, (const size_t[]){ 0, 1, 0, 1, 0 }, 5);
	sweep_spread_release(&sp);
	/* P over the tasks: every task may run at once */
	sweep_spread(3, 2, 1000000, &sp);
	CHECK_INT(sp.cap[0], 2);
	CHECK_INT(sp.cap[1], 1);
	CHECK_INT(sp.ntasks[0], 2);
	CHECK_INT(sp.ntasks[1], 1);
	sweep_spread_release(&sp);
	/* one host: all its tasks, the cap P */
	sweep_spread(4, 1, 2, &sp);
	CHECK_INT(sp.cap[0], 2);
	CHECK_INT(sp.ntasks[0], 4);
	sweep_spread_release(&sp);
	return unit_done();
}
