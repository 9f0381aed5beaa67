/* SPDX-License-Identifier: MIT */
/* dispatch top --procs on a SLURM job: the session's output captured on the test
 * cluster (tests/unit/data/slurm-top/README.md): each node's processes as
 * `scontrol listpids` named them, their user, CPU and RSS, the GPU each holds (the
 * other node's process, which the stand-in nvidia-smi lists too, is not this
 * node's), a list begun and not ended never shown half; the node script. */
#include <math.h>

#include "base/marker.h"

#include "sched/slurm/slurm_procs.h"
#include "sched/slurm/slurm_top.h"
#include "unit.h"

#define U0 "GPU-2b5a3e1c-9d2f-4c8a-b1e7-5f0a6d3c2e91"

static void test_capture(void)
{
	char *text = unit_fixture("slurm-top", "procs-2node.out");
	struct gpu_top_job j;
	const char rec[] = "JobId=2\n NodeList=node[1-2]\n Nodes=node[1-2] GRES=gpu:a100:1(IDX:0)\n";
	CHECK_INT(gpu_top_parse_job(rec, &j), 0);
	struct gpu_top t;
	gpu_top_init(&t, &j);
	struct slurm_procs sp;
	slurm_procs_init(&sp, &t);
	struct line_iter it = LINE_ITER_INIT(text);
	int ticks = 0;
	for (char *l; (l = line_next(&it));) {
		bool tick = gpu_top_feed(&t, l, 1);
		slurm_procs_feed(&sp, &t, l);
		if (!tick)
			continue;
		ticks++;
		const struct plain_top *n1 = slurm_procs_node(&sp, 0), *n2 = slurm_procs_node(&sp, 1);
		CHECK(n1 && n2);
		if (!n1 || !n2)
			break;
		CHECK_INT(n1->njob, 5);
		CHECK_INT(n2->njob, 1);
		CHECK_STR(sp.how[0], "listpids");
		const struct top_proc *b = plain_top_proc(n1, 3581);
		CHECK(b && streq(b->command, "slurm_script") && streq(b->user, "dispatch-test"));
		CHECK(b && b->rss_kib == 1700 && b->cpu == 0 && b->uid == 1001);
		CHECK_INT(n1->rss_kib, 1700 + 7944 + 1448 + 1712 + 1408);
		/* each node's GPU holds its own sleep only */
		const struct top_app **apps;
		CHECK_INT((int)plain_top_gpu_procs(n1, U0, &apps), 1);
		CHECK(apps[0]->pid == 3611 && apps[0]->mem_mib == 555);
		free(apps);
		CHECK_INT((int)plain_top_gpu_procs(n2, U0, &apps), 1);
		CHECK(apps[0]->pid == 3609);
		free(apps);
		CHECK(plain_top_proc(n2, 3611) == NULL);
	}
	line_iter_release(&it);
	CHECK_INT(ticks, 3);
	/* the capture ends inside lists (node1's begun, node2's with one line): the
	 * last complete ones stay */
	CHECK(sp.open[0] && sp.open[1]);
	CHECK_INT(slurm_procs_node(&sp, 0)->njob, 5);
	CHECK_INT(slurm_procs_node(&sp, 1)->napps, 2);
	/* the GPU rows are read as before */
	const struct gpu_row **rows;
	CHECK_INT((int)gpu_top_node_rows(&t, &t.nodes[1], &rows), 1);
	CHECK_STR(rows[0]->uuid, U0);
	free(rows);

	/* a list that ends: other nodes, garbage and a command with blanks */
	const char *more[] = {
		"0: dispatch-top node1 procs-begin",
		"0: dispatch-top node1 proc 17 1 17 0 1.5 2048 tmux: server   root",
		"0: dispatch-top node1 proc 18 1 18 0 1.5 2048 nouser",
		"0: dispatch-top node1 proc x 1 18 0 1.5 2048 bad root",
		"0: dispatch-top node3 proc 19 1 19 0 1.5 2048 other root",
		"dispatch-top node1 app 17, " U0 ", [N/A]",
		"0: dispatch-top node1 procs-end",
	};
	for (size_t i = 0; i < ARRAY_SIZE(more); i++)
		slurm_procs_feed(&sp, &t, more[i]);
	const struct plain_top *n1 = slurm_procs_node(&sp, 0);
	CHECK_INT(n1->njob, 1);
	CHECK_STR(n1->job[0]->command, "tmux: server");
	CHECK_STR(n1->job[0]->user, "root");
	CHECK(n1->cpu == 1.5 && n1->rss_kib == 2048);
	CHECK(isnan(n1->apps[0].mem_mib));
	CHECK_STR(sp.how[0], "");
	slurm_procs_release(&sp);
	gpu_top_release(&t);
	gpu_top_job_release(&j);
	free(text);
}

static size_t occurrences(const char *s, const char *what)
{
	size_t n = 0;
	for (const char *p = s; (p = strstr(p, what)); p++)
		n++;
	return n;
}

static void test_script(void)
{
	struct gpu_top_job j;
	const char rec[] = "JobId=2\n NodeList=node[1-3]\n Nodes=node[1-2] GRES=gpu:a100:1(IDX:0)\n";
	CHECK_INT(gpu_top_parse_job(rec, &j), 0);
	struct strbuf sb = STRBUF_INIT;
	gpu_top_slurm_command(&sb, "2", &j, 3, 0, false, true);
	/* one step per group of nodes, as without --procs: the processes come from it */
	CHECK_INT((int)occurrences(sb.buf, "srun --jobid="), 2);
	CHECK_CONTAINS(sb.buf, "scontrol listpids \"${SLURM_JOB_ID-}\" \"$n\"");
	CHECK_CONTAINS(sb.buf, "$3 != s");
	CHECK_CONTAINS(sb.buf, "while :; do P; sleep 3; done &");
	CHECK_CONTAINS(sb.buf, "nvidia-smi --query-compute-apps=pid,gpu_uuid,used_memory --format=csv,noheader,nounits");
	strbuf_reset(&sb);
	gpu_top_slurm_command(&sb, "2", &j, 3, 0, false, false);
	CHECK(!strstr(sb.buf, "listpids"));
	strbuf_release(&sb);
	gpu_top_job_release(&j);
}

int main(void)
{
	test_capture();
	test_script();
	return unit_done();
}
