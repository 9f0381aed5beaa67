/* SPDX-License-Identifier: MIT */
/*
 * status --usage: below the table, what each job did over its life (lib/jobs/
 * job_usage.h, read in the same exchange): per node the CPU time and efficiency and
 * the peak memory, per GPU the mean and peak utilisation, peak memory, energy and a
 * line of blocks over the job's life (ASCII without a UTF-8 locale), an idle GPU
 * flagged.
 *
 *	4242@hpc: node1, 10:00 sampled (21 samples)
 *	  node1  CPU 1203.4 s: 2.0 cores of 4 (50%)  RSS peak 3.1 GiB of 16.0 GiB (19%)
 *	    GPU-2b5a3e1c  util 87% mean, 99% peak  mem 40833 MiB  62.3 Wh  ▁▅▇██▇▇█
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "dispatch.h"
#include "jobref.h"
#include "jobs/job_usage.h"

static void node_line(const struct job_usage_node *n)
{
	double span = (double)(n->end - n->start);
	printf("  %s  CPU %.1f s", n->node, isnan(n->cpu) ? 0.0 : n->cpu);
	if (span > 0 && !isnan(n->cpu))
		printf(": %.1f cores", n->cpu / span);
	if (n->cores > 0)
		printf(" of %ld (%.0f%%)", n->cores, job_usage_cpu_eff(n));
	printf("  RSS peak %.1f MiB", (double)n->rss_kib / 1024.0);
	if (n->mem_mib > 0)
		printf(" of %ld MiB (%.0f%%)", n->mem_mib, job_usage_mem_eff(n));
	putchar('\n');
}

static void gpu_line(const struct job_usage_gpu *g, bool utf8)
{
	printf("    %.12s  util ", g->uuid);
	if (isnan(g->mean))
		printf("unknown");
	else
		printf("%.0f%% mean, %.0f%% peak", g->mean, g->peak);
	if (!isnan(g->mem_peak))
		printf("  mem %.0f MiB", g->mem_peak);
	if (!isnan(g->wh))
		printf("  %.1f Wh", g->wh);
	if (!isnan(g->temp_peak))
		printf("  %.0fC", g->temp_peak);
	if (g->throttled)
		printf("  throttled in %ld samples", g->throttled);
	_cleanup_free_ char *spark = job_usage_spark(g, utf8);
	printf("  %s", spark);
	if (!isnan(g->mean) && g->mean < JOB_USAGE_IDLE_PCT)
		printf("  IDLE: under %.0f%% on average", JOB_USAGE_IDLE_PCT);
	putchar('\n');
}

void usage_view_print(const struct status_answer *a)
{
	bool utf8 = utf8_locale();
	for (size_t i = 0; i < a->res.n; i++) {
		const struct job_state *r = &a->res.rows[i].st;
		if (a->res.rows[i].not_found)
			continue;
		_cleanup_free_ char *job = job_state_name(r, a->refs[i]->host);
		if (!r->usage) {
			printf("%s: no samples (the job has not started, or ran with --sample 0 or "
			       "before dispatch sampled)\n", job);
			continue;
		}
		long start = r->usage->nodes[0].start, end = r->usage->nodes[0].end, samples = 0;
		for (size_t k = 0; k < r->usage->nnodes; k++) {
			const struct job_usage_node *n = &r->usage->nodes[k];
			start = n->start < start ? n->start : start;
			end = n->end > end ? n->end : end;
			samples += n->samples;
		}
		long span = end - start;
		printf("%s: %zu node%s, %ld:%02ld:%02ld sampled (%ld samples)\n", job,
		       r->usage->nnodes, r->usage->nnodes == 1 ? "" : "s", span / 3600,
		       span / 60 % 60, span % 60, samples);
		for (size_t k = 0; k < r->usage->nnodes; k++) {
			node_line(&r->usage->nodes[k]);
			for (size_t g = 0; g < r->usage->nodes[k].ngpus; g++)
				gpu_line(&r->usage->nodes[k].gpus[g], utf8);
		}
	}
}
