/* SPDX-License-Identifier: MIT */
/* How failed jobs ended (lib/sched/slurm/slurm_end.h), on real captures of three releases
 * (tests/unit/data/slurm/end-*.out, made by capture-failed on the test cluster,
 * which kills a step over its memory): MaxRSS against the limit per node (the
 * batch step over --mem, an srun step on two nodes, --mem-per-cpu), the cancellers'
 * names, a NODE_FAIL job's node that sinfo says is down; the sentences slurm_why
 * makes of them; ReqMem's forms before 21.08. */
#include "sched/slurm/slurm_end.h"
#include "sched/slurm/slurm_why.h"
#include "unit.h"

#define MIB (1024LL * 1024)

static char *why_of(const struct slurm_end *e, const char *id, const char *state, int code,
		    int sig, const char *uid)
{
	const struct slurm_end_row *m = slurm_end_memory(e, id);
	struct slurm_why_job w = { .state = state, .exit_code = code, .signal = sig,
				   .cancelled_by = uid, .cancelled_by_name = slurm_end_user(e, uid) };
	if (m) {
		w.max_rss = m->max_rss;
		w.mem_limit = m->mem_limit;
		w.rss_node = m->rss_node;
		w.rss_step = m->step;
	}
	return slurm_why(&w);
}

/* the capture "end-WHATREL.out", parsed into *e; the text, to free */
static char *load(const char *what, const char *rel, struct slurm_end *e)
{
	char name[64];
	snprintf(name, sizeof(name), "end-%s%s.out", what, rel);
	char *out = unit_fixture("slurm", name);
	slurm_end_parse(out, e);
	CHECK_INT(e->sacct_exit, 0);
	return out;
}

static void release(const char *rel)
{
	struct slurm_end e;
	char *out = load("", rel, &e);
	CHECK_INT(e.n, 13);
	long first = atol(e.rows[0].job);
	char id[7][16];
	for (int i = 0; i < 7; i++)
		snprintf(id[i], sizeof(id[i]), "%ld", first + i);

	/* over --mem=100M in the batch script */
	const struct slurm_end_row *m = slurm_end_memory(&e, id[0]);
	CHECK(m != NULL);
	CHECK_STR(m->step, "batch");
	CHECK_STR(m->rss_node, "node1");
	CHECK_INT(m->mem_limit, 100 * MIB);
	CHECK(m->max_rss > 300 * MIB && m->max_rss < 320 * MIB);
	CHECK_STR(e.rows[1].state, "CANCELLED");
	CHECK_INT(e.rows[1].signal, 9);
	char *w = why_of(&e, id[0], "FAILED", 0, 9, NULL);
	CHECK(w && startswith(w, "ran out of memory: MaxRSS 3"));
	CHECK_CONTAINS(w, " MiB of 100.0 MiB limit, on node1, step batch; killed for using more than its --mem");
	free(w);

	/* an srun step on two nodes over --mem=150M: mem=300M,node=2 is 150M a node */
	m = slurm_end_memory(&e, id[1]);
	CHECK(m != NULL);
	CHECK_STR(m->step, "0");
	CHECK_INT(m->mem_limit, 150 * MIB);
	CHECK_STR(m->nodes, "node[1-2]");
	w = why_of(&e, id[1], "FAILED", e.rows[2].exit_code, e.rows[2].signal, NULL);
	CHECK_CONTAINS(w, " MiB of 150.0 MiB limit, on node");
	CHECK_CONTAINS(w, ", step 0; ");
	free(w);

	/* --mem-per-cpu=60M with -c 2 */
	m = slurm_end_memory(&e, id[2]);
	CHECK(m != NULL);
	CHECK_INT(m->mem_limit, 120 * MIB);

	/* killed by SIGSEGV, exit 3: no step with a MaxRSS, no memory verdict */
	CHECK(slurm_end_memory(&e, id[3]) == NULL);
	w = why_of(&e, id[3], "FAILED", 0, 11, NULL);
	CHECK_STR(w, "killed by signal 11 (SIGSEGV)");
	free(w);
	CHECK(slurm_end_memory(&e, id[4]) == NULL);

	/* cancelled by the test user and by root, named by the cluster's passwd */
	CHECK_STR(slurm_end_user(&e, "1001"), "dispatch-test");
	CHECK_STR(slurm_end_user(&e, "0"), "root");
	CHECK(slurm_end_user(&e, "4242") == NULL);
	w = why_of(&e, id[5], "CANCELLED", 0, 0, "1001");
	CHECK_STR(w, "cancelled by dispatch-test (uid 1001)");
	free(w);
	w = why_of(&e, id[6], "CANCELLED", 0, 0, "0");
	CHECK_STR(w, "cancelled by root (uid 0)");
	free(w);
	/* a job the answer does not hold */
	CHECK(slurm_end_memory(&e, "99999") == NULL);
	slurm_end_release(&e);
	free(out);
}

/* a job whose node died: node2's daemons killed, node2 set DOWN */
static void node_fail(const char *rel)
{
	struct slurm_end e;
	char *out = load("nodefail-", rel, &e);
	CHECK_INT(e.n, 2);
	CHECK_INT(e.nnodes, 1); /* node2 once, though sinfo -N lists it per partition */
	CHECK_STR(e.rows[0].state, "NODE_FAIL");
	char *f = slurm_end_failed_nodes(&e, "node2");
	CHECK_STR(f, "node2 down (capture-failed: its slurmd was killed)");
	free(f);
	f = slurm_end_failed_nodes(&e, "node[1-2]");
	CHECK_STR(f, "node2 down (capture-failed: its slurmd was killed)");
	free(f);
	CHECK(slurm_end_failed_nodes(&e, "node1") == NULL);
	CHECK(slurm_end_failed_nodes(&e, "bad[") == NULL);
	struct slurm_why_job w = { .state = "NODE_FAIL", .nodes = "node2",
				   .failed_nodes = "node2 down (capture-failed: its slurmd was killed)" };
	f = slurm_why(&w);
	CHECK_STR(f, "a node it ran on failed: node2 down (capture-failed: its slurmd was killed)");
	free(f);
	slurm_end_release(&e);
	free(out);
}

int main(void)
{
	char *ids[] = { "12", "13_4", NULL }, *uids[] = { "0", "1001", "x; rm -rf /", NULL };
	struct strbuf sb = STRBUF_INIT;
	slurm_end_command(&sb, ids, uids, NULL);
	CHECK_CONTAINS(sb.buf, "echo dispatch-fail-steps\nsacct -n -P -j '12,13_4' -o "
			       "'JobID,State,ExitCode,MaxRSS,MaxRSSNode,ReqMem,AllocTRES,NodeList'\n");
	CHECK_CONTAINS(sb.buf, "getent passwd '0'\ngetent passwd '1001'\n");
	CHECK(strstr(sb.buf, "rm -rf") == NULL);
	CHECK_SH_N("end command", sb.buf);
	strbuf_release(&sb);

	release("22.05");
	release("24.11");
	release("26.05");
	node_fail("22.05");
	node_fail("24.11");
	node_fail("26.05");
	/* states sinfo gives a node that is not up: not responding ("*"), drained */
	struct slurm_end e;
	char crafted[] = "dispatch-fail-nodes\nnode1|idle*|Not responding\nnode2|drained|bad gpu\n"
			 "node3|mixed|none\nnode4|down|none\n";
	slurm_end_parse(crafted, &e);
	char *down = slurm_end_failed_nodes(&e, "node[1-4]");
	CHECK_STR(down, "node1 idle* (Not responding), node2 drained (bad gpu), node4 down");
	free(down);
	slurm_end_release(&e);

	/* the limit per node from AllocTRES, else ReqMem: 21.08 and later a plain size
	 * for the whole job, before it "Mn" per node and "Mc" per CPU */
	CHECK_INT(slurm_mem_per_node("cpu=2,mem=300M,node=2", "300M"), 150 * MIB);
	CHECK_INT(slurm_mem_per_node("cpu=4,mem=1.50G,node=1", ""), 1536 * MIB);
	CHECK_INT(slurm_mem_per_node("", "4000Mn"), 4000 * MIB);
	CHECK_INT(slurm_mem_per_node("cpu=8,node=2", "1000Mc"), 4000 * MIB);
	CHECK_INT(slurm_mem_per_node("billing=2,cpu=2,node=2", "300M"), 150 * MIB);
	CHECK_INT(slurm_mem_per_node("", "2000"), 2000 * MIB);
	CHECK_INT(slurm_mem_per_node("", ""), -1);
	CHECK_INT(slurm_mem_per_node("mem=lots", "n"), -1);

	char *h = slurm_human_bytes(1932735283LL);
	CHECK_STR(h, "1.8 GiB");
	free(h);
	h = slurm_human_bytes(512);
	CHECK_STR(h, "512 B");
	free(h);
	h = slurm_human_bytes(100 * MIB);
	CHECK_STR(h, "100.0 MiB");
	free(h);

	/* OUT_OF_MEMORY (cgroups' OOM killer) without numbers; a FAILED job under its
	 * limit is not out of memory */
	struct slurm_why_job o = { .state = "OUT_OF_MEMORY", .exit_code = 0, .signal = 125 };
	char *w = slurm_why(&o);
	CHECK_STR(w, "ran out of memory: killed for using more than its --mem");
	free(w);
	struct slurm_why_job f = { .state = "FAILED", .signal = 9, .max_rss = 50 * MIB,
				   .mem_limit = 100 * MIB };
	CHECK(!slurm_why_oom(&f));
	w = slurm_why(&f);
	CHECK_STR(w, "killed by signal 9 (SIGKILL)");
	free(w);

	/* plain hosts */
	w = slurm_why_plain("FAILED", 4, 0);
	CHECK_STR(w, "its command exited with code 4");
	free(w);
	w = slurm_why_plain("FAILED", 137, 9);
	CHECK_STR(w, "killed by signal 9 (SIGKILL)");
	free(w);
	w = slurm_why_plain("CANCELLED", -1, -1);
	CHECK_STR(w, "cancelled (dispatch cancel)");
	free(w);
	w = slurm_why_plain("LOST", -1, -1);
	CHECK_CONTAINS(w, "left no exit status");
	free(w);
	CHECK(slurm_why_plain("COMPLETED", 0, 0) == NULL);
	CHECK(slurm_why_plain("RUNNING", -1, -1) == NULL);
	return unit_done();
}
