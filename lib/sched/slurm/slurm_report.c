/* SPDX-License-Identifier: MIT */
/*
 * SLURM's host_report operation (lib/host_report.h): the partitions and nodes
 * scontrol gave (host_facts), with their GPUs counted per type.
 */
#include <stdlib.h>

#include "base/util.h"
#include "host_facts.h"
#include "host_report.h"
#include "sched/slurm/slurm_queue.h"
#include "slurm_report.h"

static char *dup_or_null(const char *s)
{
	return s ? xstrdup(s) : NULL;
}

static void partition_of(const struct slurm_facts *sl, const struct slurm_partition *p,
			 struct host_report_partition *out)
{
	*out = (struct host_report_partition){
		.name = xstrdup(p->name), .is_default = p->is_default, .up = p->up,
		.state = xstrdup(p->state), .nodes = xstrdup(p->nodes),
		.node_count = p->total_nodes, .cpus = p->total_cpus,
		.max_time = xstrdup(p->max_time), .default_time = xstrdup(p->default_time),
	};
	struct slurm_partition_gpus *g;
	size_t ng;
	slurm_partition_gpus(sl, p->name, &g, &ng);
	out->gpus = xcalloc(ng + 1, sizeof(*out->gpus));
	out->ngpus = ng;
	for (size_t k = 0; k < ng; k++)
		out->gpus[k] = (struct host_report_gpus){ .type = dup_or_null(g[k].type),
							  .total = g[k].total, .used = g[k].used,
							  .free = g[k].free, .free_max = g[k].free_max };
	slurm_partition_gpus_free(g, ng);
}

static void node_of(const struct slurm_node *n, struct host_report_node *out)
{
	*out = (struct host_report_node){
		.name = xstrdup(n->name), .state = xstrdup(n->state), .usable = n->usable,
		.cpus = n->cpus, .cpus_alloc = n->cpus_alloc,
		.partitions = n->partitions ? strv_copy(n->partitions) : NULL,
		.reason = dup_or_null(n->reason),
	};
	out->gpus = xcalloc(n->ngpus + 1, sizeof(*out->gpus));
	out->ngpus = n->ngpus;
	for (size_t k = 0; k < n->ngpus; k++)
		out->gpus[k] = (struct host_report_gpus){
			.type = dup_or_null(n->gpus[k].type), .total = n->gpus[k].total,
			.used = n->gpus[k].used,
			.free = n->usable ? n->gpus[k].total - n->gpus[k].used : 0 };
}

void slurm_host_report(const struct host_facts *f, struct host_report *r)
{
	const struct slurm_facts *sl = &f->sl;
	r->scheduler = "slurm";
	r->version = dup_or_null(sl->version);
	if (slurm_release_known(sl->version) == 0)
		r->newer_than = SLURM_NEWEST_KNOWN;
	r->partitions = xcalloc(sl->npartitions + 1, sizeof(*r->partitions));
	r->npartitions = sl->npartitions;
	for (size_t i = 0; i < sl->npartitions; i++)
		partition_of(sl, &sl->partitions[i], &r->partitions[i]);
	r->nodes = xcalloc(sl->nnodes + 1, sizeof(*r->nodes));
	r->nnodes = sl->nnodes;
	for (size_t i = 0; i < sl->nnodes; i++) {
		r->gpus_total += slurm_node_gpus_total(&sl->nodes[i], NULL);
		r->gpus_free += slurm_node_gpus_free(&sl->nodes[i], NULL);
		node_of(&sl->nodes[i], &r->nodes[i]);
	}
}
