/* SPDX-License-Identifier: MIT */
/*
 * dispatch top's parsers on any bytes, aborting on a broken property: scontrol's
 * record gives nodes with GPU counts >= 0; the session's lines, fed to a two-node
 * session, keep every row on a known node with a non-empty key, and the rows a node
 * shows are its own, and each node's --procs list (lib/sched/slurm/slurm_procs.h) holds
 * whole process lines (a command, a user), sums not negative, the GPU processes
 * its own; fed to a plain host's session (lib/sched/plain/plain_top.h), the
 * job's processes are the group's and their descendants, sums are not negative, a
 * GPU flagged shared is the job's, and the GPUs counted are the ones marked.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/marker.h"
#include "gpu/gpu_top.h"
#include "sched/slurm/slurm_top.h"
#include "sched/plain/plain_top.h"
#include "sched/slurm/slurm_procs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 65536)
		return 0;
	char *text = xstrndup((const char *)data, size);
	struct gpu_top_job j;
	gpu_top_parse_job(text, &j);
	for (size_t i = 0; i < j.n; i++)
		if (j.alloc[i].gpus < 0 || !j.alloc[i].node)
			abort();
	gpu_top_job_release(&j);

	const char two[] = "JobId=1\n NodeList=n[1-2]\n Nodes=n1 GRES=gpu:2(IDX:0-1)\n";
	gpu_top_parse_job(two, &j);
	struct gpu_top t;
	gpu_top_init(&t, &j);
	struct slurm_procs sp;
	slurm_procs_init(&sp, &t);
	struct line_iter it = LINE_ITER_INIT(text);
	double now = 1;
	for (char *l; (l = line_next(&it));) {
		gpu_top_feed(&t, l, now++);
		slurm_procs_feed(&sp, &t, l);
	}
	line_iter_release(&it);
	for (size_t k = 0; k < t.nnodes; k++) {
		const struct plain_top *p = slurm_procs_node(&sp, k);
		if (!p)
			continue;
		if (p->njob != p->nps || p->cpu < 0 || p->rss_kib < 0 || !sp.how[k])
			abort();
		for (size_t i = 0; i < p->njob; i++)
			if (!*p->job[i]->command || !p->job[i]->user || !*p->job[i]->user ||
			    strchr(p->job[i]->user, ' '))
				abort();
		for (size_t a = 0; a < p->napps; a++) {
			const struct top_app **apps;
			size_t n = plain_top_gpu_procs(p, p->apps[a].uuid, &apps);
			for (size_t i = 0; i < n; i++)
				if (!plain_top_proc(p, apps[i]->pid))
					abort();
			free(apps);
		}
	}
	slurm_procs_release(&sp);
	for (size_t i = 0; i < t.nrows; i++)
		if (!t.rows[i].key || !*t.rows[i].key ||
		    (!streq(t.rows[i].node, "n1") && !streq(t.rows[i].node, "n2")))
			abort();
	for (size_t k = 0; k < t.nnodes; k++) {
		const struct gpu_row **rows;
		size_t n = gpu_top_node_rows(&t, &t.nodes[k], &rows);
		for (size_t i = 0; i < n; i++)
			if (!streq(rows[i]->node, t.nodes[k].name))
				abort();
		free(rows);
	}
	gpu_top_release(&t);
	gpu_top_job_release(&j);
	struct gpu_top_alloc one = { .node = (char *)"h", .gpus = 0 };
	struct gpu_top_job pj = { .n = 1, .alloc = &one };
	struct plain_top p;
	plain_top_init(&p, 7);
	gpu_top_init(&t, &pj);
	struct line_iter it2 = LINE_ITER_INIT(text);
	for (char *l; (l = line_next(&it2));) {
		gpu_top_feed(&t, l, now++);
		if (plain_top_feed(&p, l))
			plain_top_settle(&p, &t);
	}
	line_iter_release(&it2);
	plain_top_settle(&p, &t);
	if (p.cpu < 0 || p.rss_kib < 0)
		abort();
	for (size_t i = 0; i < p.njob; i++) {
		const struct top_proc *q = p.job[i];
		if (q->pgid != 7 && !plain_top_proc(&p, q->ppid))
			abort();
	}
	int mine = 0;
	for (size_t i = 0; i < t.nrows; i++) {
		if (t.rows[i].shared && !t.rows[i].in_step)
			abort();
		mine += t.rows[i].in_step;
	}
	if (t.nodes[0].allocated != mine)
		abort();
	gpu_top_release(&t);
	plain_top_release(&p);
	char *w = gpu_throttle_words(text);
	free(w);
	free(text);
	return 0;
}
