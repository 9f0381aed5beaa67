/* SPDX-License-Identifier: MIT */
/* The SLURM releases the test suite runs (tests/testbed: 22.05 on the host, 24.11 and
 * 26.05 from Debian chroots), each on its own answers to dispatch's queries, captured
 * by tests/unit/data/slurm/capture on that release's test cluster: status and wait's
 * halves (squeue -o, sacct --parsable2), dispatch queue (squeue --json with the
 * release's own data_parser, and the '|' format), logs' paths (scontrol show job;
 * sacct's StdOut/StdErr for a job the controller forgot) and hosts show's probe
 * (scontrol -o). The same checks for every release: what dispatch makes of them must
 * not depend on the release. */
#include <stdlib.h>
#include <string.h>

#include "host_facts.h"
#include "jobs/jobwait.h"
#include "sched/slurm/slurm.h"
#include "sched/slurm/slurm_queue.h"
#include "unit.h"

#define EOR "dsp-0123456789abcdef0123456789abcdef"

/* The capture's jobs on each release (capture prints them). */
struct release {
	const char *rel, *version;
	const char *ok, *bad, *run, *dep, *can, *arr, *held, *forgotten;
};
static const struct release releases[] = {
	{ "24.11", "24.11.5", "64", "65", "66", "67", "68", "69", "72", "3" },
	{ "26.05", "26.05.5", "34", "35", "36", "37", "38", "39", "42", "13" },
};

/* tests/unit/data/slurm/WHAT-REL.out */
static char *fixture(const char *what, const char *rel)
{
	_cleanup_free_ char *name = xasprintf("%s-%s.out", what, rel);
	return unit_fixture("slurm", name);
}

static bool ends_with(const char *s, const char *tail)
{
	size_t a = strlen(s), b = strlen(tail);
	return a >= b && streq(s + a - b, tail);
}

static void check_wait(const struct release *r)
{
	_cleanup_free_ char *sq = fixture("wait-squeue", r->rel);
	_cleanup_free_ char *sa = fixture("wait-sacct", r->rel);
	_cleanup_free_ char *both = xasprintf("%s%s", sq, sa);
	struct slurm_job *rows = NULL;
	size_t n = 0;
	CHECK_INT(slurm_parse_exit(sq, "squeue"), 0);
	CHECK_INT(slurm_parse_exit(sa, "sacct"), 0);
	slurm_parse_status(both, &rows, &n);
	struct jobwait j;
	const char *detail;

	jobwait_init(&j, r->ok, "hpc", false, false);
	CHECK_INT(jobwait_slurm(&j, rows, n, &detail), JOBWAIT_CHANGED);
	CHECK_STR(j.state, "COMPLETED");
	CHECK(j.settled && jobwait_ok(&j));
	CHECK_INT(j.exit_code, 0);
	jobwait_release(&j);

	jobwait_init(&j, r->bad, "hpc", false, false);
	CHECK_INT(jobwait_slurm(&j, rows, n, &detail), JOBWAIT_CHANGED);
	CHECK_STR(j.state, "FAILED");
	CHECK(j.settled && !jobwait_ok(&j));
	CHECK_INT(j.exit_code, 3);
	jobwait_release(&j);

	jobwait_init(&j, r->run, "hpc", false, false);
	CHECK_INT(jobwait_slurm(&j, rows, n, &detail), JOBWAIT_CHANGED);
	CHECK_STR(j.state, "RUNNING");
	CHECK(j.seen_running && !j.settled);
	CHECK(j.first_node && (streq(j.first_node, "node1") || streq(j.first_node, "node2")));
	jobwait_release(&j);

	jobwait_init(&j, r->dep, "hpc", false, false);
	CHECK_INT(jobwait_slurm(&j, rows, n, &detail), JOBWAIT_CHANGED);
	CHECK_STR(j.state, "PENDING");
	CHECK_STR(detail, "Dependency");
	jobwait_release(&j);

	jobwait_init(&j, r->can, "hpc", false, false);
	jobwait_slurm(&j, rows, n, &detail);
	CHECK_STR(j.state, "CANCELLED");
	CHECK(j.settled && !jobwait_ok(&j));
	jobwait_release(&j);

	jobwait_init(&j, "999999", "hpc", false, false);
	CHECK_INT(jobwait_slurm(&j, rows, n, &detail), JOBWAIT_NOT_FOUND);
	jobwait_release(&j);
	slurm_jobs_free(rows, n);
}

/* status: the throttled array mid-way (tasks done, running, the pending rest). */
static void check_status(const struct release *r)
{
	_cleanup_free_ char *text = fixture("status", r->rel);
	struct slurm_job *rows = NULL;
	size_t n = 0;
	slurm_parse_status(text, &rows, &n);
	CHECK(n >= 10);
	struct jobwait j;
	const char *detail;
	jobwait_init(&j, r->arr, "hpc", false, false);
	CHECK_INT(jobwait_slurm(&j, rows, n, &detail), JOBWAIT_CHANGED);
	CHECK_STR(j.state, "RUNNING");
	CHECK(j.ntasks >= 3 && !j.settled);
	jobwait_release(&j);
	const struct slurm_job **sel = NULL;
	size_t nsel = 0;
	slurm_select(rows, n, r->bad, &sel, &nsel);
	CHECK(nsel == 1 && sel[0]->from_sacct && sel[0]->exit_code == 3);
	free(sel);
	slurm_jobs_free(rows, n);
}

static const struct slurm_qjob *qjob(const struct slurm_queue *q, const char *id)
{
	for (size_t i = 0; i < q->n; i++)
		if (streq(q->jobs[i].id, id))
			return &q->jobs[i];
	return NULL;
}

/* queue: the release's --json and the '|' format say the same of every job. */
static void check_queue(const struct release *r)
{
	struct slurm_queue_filter all = { .states = "all" };
	struct slurm_queue js = { 0 }, tx = { 0 };
	struct dp_error err = { 0 };
	_cleanup_free_ char *jtext = fixture("queue-json", r->rel);
	_cleanup_free_ char *ttext = fixture("queue-text", r->rel);
	CHECK_INT(slurm_parse_queue(jtext, &all, EOR, &js, &err), 0);
	CHECK_INT(slurm_parse_queue(ttext, &all, EOR, &tx, &err), 0);
	CHECK_STR(js.format, "json");
	CHECK_STR(tx.format, "text");
	CHECK_STR(js.version, r->version);
	CHECK_STR(tx.version, r->version);
	CHECK(js.n >= 7 && js.n == tx.n);
	for (size_t i = 0; i < tx.n; i++) {
		const struct slurm_qjob *t = &tx.jobs[i], *x = qjob(&js, t->id);
		CHECK(x != NULL);
		if (!x) {
			printf("#   job %s: in the text format, not in --json\n", t->id);
			continue;
		}
		CHECK_STR(x->state, t->state);
		CHECK_STR(x->partition, t->partition);
		CHECK_STR(x->name, t->name);
		CHECK_STR(x->user, t->user);
		CHECK_STR(x->nodes, t->nodes);
		CHECK_INT(x->node_count, t->node_count);
	}
	const struct slurm_qjob *run = qjob(&js, r->run), *dep = qjob(&js, r->dep);
	CHECK(run && streq(run->state, "RUNNING") && streq(run->name, "caprun"));
	CHECK(dep && streq(dep->state, "PENDING") && streq(dep->reason, "Dependency"));
	const struct slurm_qjob *bad = qjob(&js, r->bad);
	CHECK(bad && streq(bad->state, "FAILED"));
	slurm_queue_release(&js);
	slurm_queue_release(&tx);
}

/* logs: scontrol fills the patterns in; an unknown job; accounting's paths. */
static void check_paths(const struct release *r)
{
	_cleanup_free_ char *text = fixture("paths-pattern", r->rel);
	struct slurm_paths p;
	slurm_parse_job_paths(text, &p);
	CHECK_INT(p.records, 1);
	CHECK_STR(p.user, "dispatch-test");
	_cleanup_free_ char *out = xasprintf("/cap out/cappath a|b-%s.out", r->held);
	_cleanup_free_ char *errp = xasprintf("/cap out/dispatch-test-%s.err", r->held);
	CHECK(p.out && ends_with(p.out, out));
	CHECK(p.err && ends_with(p.err, errp));
	CHECK(!p.acct);
	slurm_paths_release(&p);

	_cleanup_free_ char *unknown = fixture("paths-unknown", r->rel);
	slurm_parse_job_paths(unknown, &p);
	CHECK_INT(p.records, 0);
	CHECK(!p.out && !p.err && !p.acct_out);
	slurm_paths_release(&p);
}

/* logs of a job slurmctld has forgotten (paths-acct-REL.out, job `forgotten`, a
 * 2-node job written to %x-%j.out): scontrol fails, accounting answers with the
 * pattern filled in (sacct --expand-patterns) and an empty StdErr (stderr goes to
 * the output). */
static void check_paths_acct(const struct release *r)
{
	if (!r->forgotten)
		return;
	_cleanup_free_ char *text = fixture("paths-acct", r->rel);
	struct slurm_paths p;
	slurm_parse_job_paths(text, &p);
	CHECK_INT(p.records, 0);
	CHECK(!p.out && !p.err && p.acct);
	_cleanup_free_ char *tail = xasprintf("/cluster/log/twonode-%s.out", r->forgotten);
	CHECK(p.acct_out && ends_with(p.acct_out, tail));
	CHECK(p.acct_err == NULL);
	CHECK_STR(p.acct_name, "twonode");
	CHECK_STR(p.user, "dispatch-test");
	slurm_paths_release(&p);
}

/* hosts show: two partitions, two nodes with two a100 each, the release named. */
static void check_probe(const struct release *r)
{
	_cleanup_free_ char *name = xasprintf("%s-running.probe", r->rel);
	_cleanup_free_ char *text = unit_fixture("slurm/scontrol", name);
	struct host_facts f;
	struct dp_error err = { 0 };
	CHECK_INT(host_facts_parse(text, "", HOST_FACTS_AUTO, &f, &err), 0);
	CHECK(f.slurm && !f.slurm_error);
	CHECK_STR(f.sl.version, r->version);
	CHECK_INT(f.sl.npartitions, 2);
	CHECK_INT(f.sl.nnodes, 2);
	const struct slurm_partition *gpu = slurm_default_partition(&f.sl);
	CHECK(gpu && streq(gpu->name, "gpu") && gpu->up && gpu->total_cpus == 4);
	for (size_t i = 0; i < f.sl.nnodes; i++) {
		const struct slurm_node *nd = &f.sl.nodes[i];
		CHECK(nd->ngpus == 1 && streq(nd->gpus[0].type, "a100") && nd->gpus[0].total == 2);
		CHECK_INT(nd->cpus, 2);
	}
	host_facts_release(&f);
}

/* Which releases dispatch knows, and the data_parser it pins on each. */
static void check_known(void)
{
	CHECK_INT(slurm_release_known("22.05.8"), 1);
	CHECK_INT(slurm_release_known("24.11.5"), 1);
	CHECK_INT(slurm_release_known("26.05.5"), 1);
	CHECK_INT(slurm_release_known("17.11.2"), 1);
	CHECK_INT(slurm_release_known("26.11.0"), 0);
	CHECK_INT(slurm_release_known("27.05.1"), 0);
	CHECK_INT(slurm_release_known(NULL), -1);
	CHECK_INT(slurm_release_known("unknown"), -1);
	CHECK(slurm_data_parser("22.05.8") == NULL);
	CHECK(slurm_data_parser("23.02.7") == NULL);
	CHECK_STR(slurm_data_parser("23.11.10"), "v0.0.40");
	CHECK_STR(slurm_data_parser("24.05.4"), "v0.0.40");
	CHECK_STR(slurm_data_parser("24.11.5"), "v0.0.42");
	CHECK_STR(slurm_data_parser("26.05.5"), "v0.0.42");
	CHECK(slurm_data_parser("26.11.0") == NULL);
}

/* 26.05's own default data_parser (v0.0.45), as a newer release's unpinned --json
 * would answer: the fallback reads it too (captured before the pinned one, ids
 * 1 to 6: ok, bad, run, dep, can, arr). */
static void check_default_parser(void)
{
	struct slurm_queue_filter all = { .states = "all" };
	struct slurm_queue q = { 0 };
	struct dp_error err = { 0 };
	_cleanup_free_ char *text = unit_fixture("slurm", "queue-json-v0.0.45-26.05.out");
	CHECK(strstr(text, "\"data_parser/v0.0.45\"") != NULL);
	CHECK_INT(slurm_parse_queue(text, &all, EOR, &q, &err), 0);
	CHECK_STR(q.version, "26.05.5");
	CHECK(q.n >= 7);
	const struct slurm_qjob *bad = qjob(&q, "2"), *run = qjob(&q, "3"), *dep = qjob(&q, "4");
	CHECK(bad && streq(bad->state, "FAILED") && streq(bad->name, "capbad") &&
	      streq(bad->nodes, "node1") && bad->node_count == 1);
	CHECK(run && streq(run->state, "RUNNING") && streq(run->user, "dispatch-test"));
	CHECK(dep && streq(dep->state, "PENDING") && streq(dep->reason, "Dependency"));
	slurm_queue_release(&q);
}

int main(void)
{
	check_known();
	check_default_parser();
	for (size_t i = 0; i < ARRAY_SIZE(releases); i++) {
		printf("# SLURM %s\n", releases[i].rel);
		check_wait(&releases[i]);
		check_status(&releases[i]);
		check_queue(&releases[i]);
		check_paths(&releases[i]);
		check_paths_acct(&releases[i]);
		check_probe(&releases[i]);
	}
	return unit_done();
}
