/* SPDX-License-Identifier: MIT */
#include <stdlib.h>

#include "base/util.h"
#include "host_facts.h"
#include "host_report.h"
#include "sched/sched.h"

void host_report_make(const struct host_facts *f, struct host_report *r)
{
	*r = (struct host_report){ 0 };
	const struct sched_ops *ops = f->slurm ? &sched_slurm : &sched_plain;
	if (ops->host_report)
		ops->host_report(f, r);
}

static void gpus_free(struct host_report_gpus *g, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(g[i].type);
	free(g);
}

void host_report_release(struct host_report *r)
{
	for (size_t i = 0; i < r->npartitions; i++) {
		struct host_report_partition *p = &r->partitions[i];
		free(p->name);
		free(p->state);
		free(p->nodes);
		free(p->max_time);
		free(p->default_time);
		gpus_free(p->gpus, p->ngpus);
	}
	for (size_t i = 0; i < r->nnodes; i++) {
		struct host_report_node *n = &r->nodes[i];
		free(n->name);
		free(n->state);
		strv_free(n->partitions);
		free(n->reason);
		gpus_free(n->gpus, n->ngpus);
	}
	free(r->partitions);
	free(r->nodes);
	free(r->version);
	*r = (struct host_report){ 0 };
}

const struct host_report_node *host_report_node(const struct host_report *r, const char *name)
{
	for (size_t i = 0; i < r->nnodes; i++)
		if (streq(r->nodes[i].name, name))
			return &r->nodes[i];
	return NULL;
}
