/* SPDX-License-Identifier: MIT */
/*
 * A host's answer (lib/host_facts.h) as each ask would read it: the scontrol parsing
 * (lib/sched/slurm/slurm_nodes.h) and the nvidia-smi parsing (lib/gpu/nvidia_smi.h) behind it, with
 * properties that must hold on any input: a failure returns nothing and says why;
 * on success every node's used GPUs are within 0..total, free counts are within
 * 0..total and zero on unusable nodes, partition sums add up, and a busy GPU is one
 * with a process. The input is also fed to the GRES parser and the name mapping.
 */
#include <stdint.h>

#include "host_facts.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum { MAX_INPUT = 1 << 16 };

static void check_slurm(const struct slurm_facts *sl)
{
	for (size_t i = 0; i < sl->nnodes; i++) {
		const struct slurm_node *n = &sl->nodes[i];
		if (!n->name || !n->state)
			abort();
		for (size_t k = 0; k < n->ngpus; k++)
			if (n->gpus[k].used < 0 || n->gpus[k].used > n->gpus[k].total)
				abort();
		int free_all = slurm_node_gpus_free(n, NULL), total = slurm_node_gpus_total(n, NULL);
		if (free_all < 0 || free_all > total || (!n->usable && free_all != 0))
			abort();
	}
	for (size_t i = 0; i < sl->npartitions; i++) {
		struct slurm_partition_gpus *g;
		size_t ng;
		slurm_partition_gpus(sl, sl->partitions[i].name, &g, &ng);
		for (size_t k = 0; k < ng; k++)
			if (g[k].free < 0 || g[k].free > g[k].total || g[k].used > g[k].total ||
			    g[k].free_max > g[k].free)
				abort();
		slurm_partition_gpus_free(g, ng);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > MAX_INPUT)
		return 0;
	char *text = xstrndup((const char *)data, size);
	static const enum host_facts_ask asks[] = { HOST_FACTS_AUTO, HOST_FACTS_SLURM, HOST_FACTS_GPUS };
	for (size_t a = 0; a < 3; a++) {
		struct host_facts f;
		struct dp_error err = { 0 };
		if (host_facts_parse(text, text, asks[a], &f, &err) < 0) {
			if (!err.kind || !err.msg[0] || f.slurm || f.gpus.n || f.sl.nnodes)
				abort();
			continue;
		}
		check_slurm(&f.sl);
		for (size_t i = 0; i < f.gpus.n; i++)
			if (f.gpus.gpus[i].busy && f.gpus.gpus[i].processes == 0)
				abort();
		host_facts_release(&f);
	}
	/* the bare parsers on the whole input */
	struct slurm_facts sl;
	struct dp_error err = { 0 };
	slurm_facts_parse(text, text, &sl, &err);
	check_slurm(&sl);
	slurm_facts_release(&sl);
	struct slurm_gres *g;
	size_t ng;
	if (slurm_gres_parse(text, &g, &ng, &err) == 0)
		slurm_gres_free(g, ng);
	(void)nvidia_smi_chip(text, (long)size);
	free(text);
	return 0;
}
