/* SPDX-License-Identifier: MIT */
/* Which backend a host has: sched.h. */
#include "sched/sched.h"

#include "inventory/inventory.h"

const struct sched_ops *const sched_all[] = { &sched_slurm, &sched_plain, NULL };

const struct sched_ops *sched_for(const struct inv_host *h, long ledger_pgid)
{
	if (!h)
		return ledger_pgid > 0 ? &sched_plain : &sched_slurm;
	switch (h->type) {
	case INV_HOST_PLAIN:
		return &sched_plain;
	case INV_HOST_SLURM:
	case INV_HOST_TPU:
	case INV_HOST_VOLCANO:
		break;
	}
	return &sched_slurm;
}
