/* SPDX-License-Identifier: MIT */
/* dispatch top on a plain host: the refresh script's output captured on the test
 * bed's host inner (ps -e of the machine, the stand-in nvidia-smi's A100 rows and
 * --query-compute-apps lines) for a job of process group 4231 holding GPU 0, whose
 * bootstrap runs in a group of its own (4274): its processes are found as
 * descendants; then the same with another user's process on GPU 0 (shared) and a
 * process of the job on GPU 1 without a lease (the job's too). */
#include <math.h>

#include "base/marker.h"
#include "sched/plain/plain_top.h"
#include "unit.h"

static void run(const char *text, struct plain_top *p, struct gpu_top *t)
{
	struct gpu_top_alloc one = { .node = (char *)"inner", .gpus = 0 };
	struct gpu_top_job j = { .n = 1, .alloc = &one };
	gpu_top_init(t, &j);
	plain_top_init(p, 4231);
	struct line_iter it = LINE_ITER_INIT(text);
	int ticks = 0;
	for (char *l; (l = line_next(&it));) {
		gpu_top_feed(t, l, 1);
		if (plain_top_feed(p, l)) {
			plain_top_settle(p, t);
			ticks++;
		}
	}
	line_iter_release(&it);
	CHECK_INT(ticks, 1);
}

static const struct gpu_row *row(const struct gpu_top *t, const char *bus)
{
	for (size_t i = 0; i < t->nrows; i++)
		if (t->rows[i].bus_id && streq(t->rows[i].bus_id, bus))
			return &t->rows[i];
	return NULL;
}

static void test_capture(void)
{
	char *text = unit_fixture("plain-top", "inner-a100.out");
	struct plain_top p;
	struct gpu_top t;
	run(text, &p, &t);
	CHECK_INT(p.me, 1001);
	CHECK_STR(p.lease, "0");
	CHECK(!p.ended);
	CHECK(p.nps > 250);
	CHECK_INT(p.napps, 4);
	CHECK_INT(p.njob, 5);
	long pids[] = { 4231, 4272, 4274, 4275, 4276 };
	for (size_t i = 0; i < ARRAY_SIZE(pids); i++)
		CHECK(plain_top_proc(&p, pids[i]) != NULL);
	CHECK(plain_top_proc(&p, 1) == NULL);
	CHECK_INT(p.rss_kib, 3168 + 3024 + 1840 + 1532 + 8404);
	CHECK_STR(plain_top_proc(&p, 4276)->command, "python3");
	const struct gpu_row *g0 = row(&t, "00000000:07:00.0"), *g1 = row(&t, "00000000:0F:00.0");
	CHECK(g0 && g0->in_step && !g0->shared);
	CHECK(g1 && !g1->in_step);
	CHECK_INT(t.nodes[0].allocated, 1);
	const struct top_app **apps;
	CHECK_INT((int)plain_top_gpu_procs(&p, g0->uuid, &apps), 4);
	CHECK(apps[3]->pid == 4276 && apps[3]->mem_mib == 1024);
	free(apps);
	gpu_top_release(&t);
	plain_top_release(&p);

	/* another user's process on GPU 0 (pid 1: root's), a job process on GPU 1, a
	 * process ps cannot see on GPU 1 with [N/A] memory (MIG, another container) */
	char *more = xasprintf("%s%s", text,
			       "dispatch-top inner app 1, GPU-2b5a3e1c-9d2f-4c8a-b1e7-5f0a6d3c2e91, 2048\n"
			       "dispatch-top inner app 4276, GPU-7c1e9f40-3a6b-4d2e-8f5c-0b9a1d7e6c34, 10\n"
			       "dispatch-top inner app 999999, GPU-7c1e9f40-3a6b-4d2e-8f5c-0b9a1d7e6c34, [N/A]\n"
			       "dispatch-top inner app garbage\n"
			       "dispatch-top-tick\n");
	/* the tick in the middle ends the first sample; feed the rest as the second */
	struct gpu_top_alloc one = { .node = (char *)"inner", .gpus = 0 };
	struct gpu_top_job j = { .n = 1, .alloc = &one };
	gpu_top_init(&t, &j);
	plain_top_init(&p, 4231);
	struct line_iter it = LINE_ITER_INIT(more);
	for (char *l; (l = line_next(&it));) {
		gpu_top_feed(&t, l, 1);
		if (plain_top_feed(&p, l))
			plain_top_settle(&p, &t);
	}
	line_iter_release(&it);
	g0 = row(&t, "00000000:07:00.0");
	g1 = row(&t, "00000000:0F:00.0");
	CHECK(g0->in_step && g0->shared);
	CHECK(g1->in_step && g1->shared);
	CHECK_INT(t.nodes[0].allocated, 2);
	CHECK_INT((int)plain_top_gpu_procs(&p, g1->uuid, &apps), 1);
	free(apps);
	CHECK_INT(p.napps, 7);
	CHECK(isnan(p.apps[6].mem_mib));
	gpu_top_release(&t);
	plain_top_release(&p);
	free(more);
	free(text);
}

static void test_command(void)
{
	struct strbuf sb = STRBUF_INIT;
	plain_top_command(&sb, "it's", "/w/.dispatch/j 1", 42);
	CHECK_CONTAINS(sb.buf, "n='it'\\''s'\nd='/w/.dispatch/j 1'\ng=42\n");
	CHECK_CONTAINS(sb.buf, "nvidia-smi --query-compute-apps=pid,gpu_uuid,used_memory --format=csv,noheader,nounits");
	CHECK_CONTAINS(sb.buf, "ps -e -o pid= -o ppid= -o pgid= -o uid= -o pcpu= -o rss= -o comm=");
	strbuf_release(&sb);
}

int main(void)
{
	test_capture();
	test_command();
	return unit_done();
}
