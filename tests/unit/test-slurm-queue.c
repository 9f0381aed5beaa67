/* SPDX-License-Identifier: MIT */
/* dispatch queue's parsers (lib/sched/slurm/slurm_queue.h) on outputs captured from the test
 * cluster (SLURM 22.05.8): squeue --json and the '|' format with the end-of-record
 * mark, jobs named with spaces, '|' and a newline that imitates a whole row; the
 * filters applied here; and the format chosen by the version, by running the command
 * with a stand-in squeue. */
#include <sys/stat.h>
#include <unistd.h>

#include "sched/slurm/slurm_queue.h"
#include "unit.h"

/* The mark the captures were made with (dispatch makes a fresh one per call). */
#define EOR "dsp-0123456789abcdef0123456789abcdef"
#define FORGED_NAME "jwbcap nl\n999|cpu|root|RUNNING|0:01|1|node1|None|forged"

static char *fixture(const char *name)
{
	return unit_fixture("slurm", name);
}

static int parse(const char *name, const struct slurm_queue_filter *f, const char *eor,
		 struct slurm_queue *q)
{
	_cleanup_free_ char *text = fixture(name);
	struct dp_error err = { 0 };
	if (!text)
		return -1;
	int r = slurm_parse_queue(text, f, eor, q, &err);
	if (r < 0)
		printf("# %s: %s\n", name, err.msg);
	return r;
}

static const struct slurm_qjob *job(const struct slurm_queue *q, const char *id)
{
	for (size_t i = 0; i < q->n; i++)
		if (streq(q->jobs[i].id, id))
			return &q->jobs[i];
	return NULL;
}

/* The ids in order, comma-separated, for comparing whole answers. */
static char *ids(const struct slurm_queue *q)
{
	struct strbuf sb = STRBUF_INIT;
	strbuf_adds(&sb, "");
	for (size_t i = 0; i < q->n; i++)
		strbuf_addf(&sb, "%s%s", i ? "," : "", q->jobs[i].id);
	return strbuf_detach(&sb);
}

static void test_text_names(void)
{
	struct slurm_queue_filter all = { .states = "all" };
	struct slurm_queue q;
	CHECK_INT(parse("queue-text-names-22.05.out", &all, EOR, &q), 0);
	CHECK_STR(q.user, "dispatch-test");
	CHECK_STR(q.version, "22.05.8");
	CHECK_STR(q.format, "text");
	CHECK_INT(q.squeue_status, 0);
	CHECK_INT(q.n, 14);
	/* the name with a newline stays one job's name; the row it imitates is no job */
	CHECK(job(&q, "13") && streq(job(&q, "13")->name, FORGED_NAME));
	CHECK(job(&q, "999") == NULL);
	CHECK(job(&q, "10") && streq(job(&q, "10")->name, "jwbcap|x|y"));
	CHECK(job(&q, "9") && streq(job(&q, "9")->name, "jwbcap a b|c"));
	CHECK(job(&q, "11") && streq(job(&q, "11")->name, "jwbcap held  two spaces"));
	const struct slurm_qjob *j = job(&q, "14");
	CHECK(j != NULL);
	if (j) {
		CHECK_STR(j->name, "jwbcap run a b|c");
		CHECK_STR(j->partition, "gpu");
		CHECK_STR(j->user, "dispatch-test");
		CHECK_STR(j->state, "RUNNING");
		CHECK_STR(j->elapsed, "0:04");
		CHECK_INT(j->node_count, 1);
		CHECK_STR(j->nodes, "node1");
		CHECK_STR(j->reason, "None");
		CHECK_INT(j->restarts, -1); /* squeue's text has no restart count */
	}
	j = job(&q, "4");
	CHECK(j && streq(j->nodes, "node[1-2]") && j->node_count == 2);
	j = job(&q, "11");
	CHECK(j && streq(j->state, "PENDING") && streq(j->reason, "JobHeldUser") && !j->nodes[0]);
	j = job(&q, "3");
	CHECK(j && streq(j->state, "FAILED") && streq(j->reason, "NonZeroExitCode"));
	slurm_queue_release(&q);

	/* without a -t: what squeue shows by default, the jobs still queued or running */
	struct slurm_queue_filter active = { 0 };
	CHECK_INT(parse("queue-text-names-22.05.out", &active, EOR, &q), 0);
	_cleanup_free_ char *active_ids = ids(&q);
	CHECK_STR(active_ids, "13,12,4,10,11,14");
	slurm_queue_release(&q);

	/* another mark (a row some name made up): no record ends, no job */
	CHECK_INT(parse("queue-text-names-22.05.out", &all, "dsp-ffffffffffffffffffffffffffffffff", &q), 0);
	CHECK_INT(q.n, 0);
	slurm_queue_release(&q);
}

/* A capture made without the mark (one record per line): names with '|' and spaces. */
static void test_text_lines(void)
{
	struct slurm_queue_filter all = { .states = "all" };
	struct slurm_queue q;
	CHECK_INT(parse("queue-text-22.05.out", &all, NULL, &q), 0);
	CHECK_INT(q.n, 12);
	CHECK(job(&q, "123") && streq(job(&q, "123")->name, "jwcap a|b c"));
	CHECK(job(&q, "124") && streq(job(&q, "124")->name, "jwcap|x"));
	CHECK(job(&q, "126") && streq(job(&q, "126")->name, "jwcap five"));
	const struct slurm_qjob *j = job(&q, "128_[0-3%1]");
	CHECK(j && streq(j->state, "PENDING") &&
	      streq(j->reason, "Nodes required for job are DOWN, DRAINED or reserved for jobs in higher priority partitions"));
	CHECK(job(&q, "116_3") && streq(job(&q, "116_3")->state, "COMPLETED"));
	slurm_queue_release(&q);
}

static void test_json_names(void)
{
	struct slurm_queue_filter all = { .states = "all" };
	struct slurm_queue q;
	CHECK_INT(parse("queue-json-names-22.05.out", &all, EOR, &q), 0);
	CHECK_STR(q.format, "json");
	CHECK_STR(q.version, "22.05.8");
	CHECK_INT(q.n, 14);
	CHECK(job(&q, "13") && streq(job(&q, "13")->name, FORGED_NAME));
	CHECK(job(&q, "999") == NULL);
	CHECK(job(&q, "10") && streq(job(&q, "10")->name, "jwbcap|x|y"));
	CHECK(job(&q, "11") && streq(job(&q, "11")->name, "jwbcap held  two spaces"));
	const struct slurm_qjob *j = job(&q, "14");
	CHECK(j != NULL);
	if (j) {
		CHECK_STR(j->name, "jwbcap run a b|c");
		CHECK_STR(j->partition, "gpu");
		CHECK_STR(j->state, "RUNNING");
		CHECK_INT(j->node_count, 1);
		CHECK_STR(j->nodes, "node1");
		CHECK_STR(j->reason, "None");
		CHECK_INT(j->restarts, 0); /* restart_cnt */
		/* dispatch-now 1795313194 minus start_time 1795313190 */
		CHECK_STR(j->elapsed, "0:04");
	}
	j = job(&q, "9");
	CHECK(j && streq(j->state, "COMPLETED") && streq(j->elapsed, "0:40"));
	j = job(&q, "12");
	CHECK(j && streq(j->state, "PENDING") && streq(j->elapsed, "0:00") && !j->nodes[0] &&
	      streq(j->reason, "JobHeldUser"));
	slurm_queue_release(&q);
}

/* The two formats, captured a second apart, tell the same about every job. */
static void test_formats_agree(void)
{
	struct slurm_queue_filter all = { .states = "all" };
	struct slurm_queue t, js;
	CHECK_INT(parse("queue-text-names-22.05.out", &all, EOR, &t), 0);
	CHECK_INT(parse("queue-json-names-22.05.out", &all, EOR, &js), 0);
	CHECK_INT(t.n, js.n);
	size_t same = 0;
	for (size_t i = 0; i < t.n; i++) {
		const struct slurm_qjob *a = &t.jobs[i], *b = job(&js, a->id);
		if (b && streq(a->name, b->name) && streq(a->partition, b->partition) &&
		    streq(a->user, b->user) && streq(a->state, b->state) && streq(a->nodes, b->nodes) &&
		    streq(a->reason, b->reason) && a->node_count == b->node_count)
			same++;
		else
			printf("# job %s differs\n", a->id);
	}
	CHECK_INT(same, t.n);
	slurm_queue_release(&t);
	slurm_queue_release(&js);
}

/* SLURM 22.05 ignores -u, -p, -t with --json: the filter applies here. */
static void test_json_filters(void)
{
	struct slurm_queue q;
	struct slurm_queue_filter f = { 0 };
	CHECK_INT(parse("queue-json-names-22.05.out", &f, NULL, &q), 0);
	_cleanup_free_ char *active = ids(&q);
	CHECK_STR(active, "4,10,11,12,13,14");
	slurm_queue_release(&q);

	f = (struct slurm_queue_filter){ .partitions = "gpu" };
	CHECK_INT(parse("queue-json-names-22.05.out", &f, NULL, &q), 0);
	_cleanup_free_ char *gpu = ids(&q);
	CHECK_STR(gpu, "11,14");
	slurm_queue_release(&q);

	f = (struct slurm_queue_filter){ .states = "pd" };
	CHECK_INT(parse("queue-json-names-22.05.out", &f, NULL, &q), 0);
	_cleanup_free_ char *pending = ids(&q);
	CHECK_STR(pending, "11,12,13");
	slurm_queue_release(&q);

	f = (struct slurm_queue_filter){ .states = "F,timeout", .partitions = "gpu,cpu" };
	CHECK_INT(parse("queue-json-names-22.05.out", &f, NULL, &q), 0);
	_cleanup_free_ char *ended = ids(&q);
	CHECK_STR(ended, "1,3,6");
	slurm_queue_release(&q);

	f = (struct slurm_queue_filter){ .user = "root,nobody" };
	CHECK_INT(parse("queue-json-names-22.05.out", &f, NULL, &q), 0);
	CHECK_INT(q.n, 0);
	slurm_queue_release(&q);

	f = (struct slurm_queue_filter){ .user = "root,dispatch-test", .states = "all" };
	CHECK_INT(parse("queue-json-names-22.05.out", &f, NULL, &q), 0);
	CHECK_INT(q.n, 14);
	slurm_queue_release(&q);

	f = (struct slurm_queue_filter){ .me = true, .states = "R" };
	CHECK_INT(parse("queue-json-names-22.05.out", &f, NULL, &q), 0);
	_cleanup_free_ char *mine = ids(&q);
	CHECK_STR(mine, "4,10,14");
	slurm_queue_release(&q);
}

/* The first capture: array tasks and the pending rest of a throttled array. */
static void test_json_arrays(void)
{
	struct slurm_queue_filter all = { .states = "all" };
	struct slurm_queue q;
	CHECK_INT(parse("queue-json-22.05.out", &all, NULL, &q), 0);
	CHECK_INT(q.n, 12);
	CHECK(job(&q, "116_3") && streq(job(&q, "116_3")->state, "COMPLETED"));
	CHECK(job(&q, "116_0") && streq(job(&q, "116_0")->nodes, "node2"));
	CHECK(job(&q, "128_[0-3%1]") && streq(job(&q, "128_[0-3%1]")->state, "PENDING"));
	CHECK(job(&q, "123") && streq(job(&q, "123")->name, "jwcap a|b c"));
	slurm_queue_release(&q);
}

static void test_broken(void)
{
	struct slurm_queue_filter f = { 0 };
	struct slurm_queue q;
	struct dp_error err = { 0 };
	/* the command died before squeue: no answer */
	CHECK_INT(slurm_parse_queue("dispatch-user u\nbash: line 3: syntax error\n", &f, EOR, &q, &err), -1);
	CHECK_CONTAINS(err.msg, "no answer from squeue");
	slurm_queue_release(&q);
	/* squeue failed: an answer, with its exit status */
	dp_error_clear(&err);
	CHECK_INT(slurm_parse_queue("dispatch-format json\n\ndispatch-squeue-exit 1\n", &f, EOR, &q, &err), 0);
	CHECK_INT(q.squeue_status, 1);
	CHECK_INT(q.n, 0);
	slurm_queue_release(&q);
	/* JSON that breaks off */
	dp_error_clear(&err);
	CHECK_INT(slurm_parse_queue("dispatch-format json\n{\"jobs\": [{\"job_id\": 1,\ndispatch-squeue-exit 0\n",
				    &f, EOR, &q, &err), -1);
	CHECK_CONTAINS(err.msg, "not JSON");
	slurm_queue_release(&q);
	/* a name holding the exit line: the last one is squeue's */
	dp_error_clear(&err);
	CHECK_INT(slurm_parse_queue("dispatch-format text\n5|cpu|u|RUNNING|0:01|1|n1|None|x\n"
				    "dispatch-squeue-exit 1\ny|" EOR "\n6|cpu|u|RUNNING|0:01|1|n1|None|z|" EOR
				    "\n\ndispatch-squeue-exit 0\n", &f, EOR, &q, &err), 0);
	_cleanup_free_ char *both = ids(&q);
	CHECK_STR(both, "5,6");
	CHECK(q.n == 2 && streq(q.jobs[0].name, "x\ndispatch-squeue-exit 1\ny"));
	CHECK_INT(q.squeue_status, 0);
	slurm_queue_release(&q);
}

static void test_state_names(void)
{
	CHECK_STR(slurm_state_name("pd"), "PENDING");
	CHECK_STR(slurm_state_name("R"), "RUNNING");
	CHECK_STR(slurm_state_name("running"), "RUNNING");
	CHECK_STR(slurm_state_name("OOM"), "OUT_OF_MEMORY");
	CHECK_STR(slurm_state_name("cd"), "COMPLETED");
	CHECK(slurm_state_name("RUN") == NULL);
	CHECK(slurm_state_name("all") == NULL);
	CHECK(slurm_state_name("") == NULL);
}

/* Runs the queue command in sh with a stand-in squeue that prints `version` for
 * --version and its arguments otherwise; returns its output. json_fails: 1, every
 * --json fails (no JSON plugin); 2, only a pinned --json=vX fails (a site built
 * without that data_parser). */
static char *run_with_squeue(const char *dir, const char *version, int json_fails,
			     const struct slurm_queue_filter *f)
{
	_cleanup_free_ char *script = xasprintf("%s/squeue", dir);
	FILE *fp = fopen(script, "w");
	if (!fp)
		return NULL;
	fprintf(fp, "#!/bin/sh\nif [ \"$1\" = --version ]; then %s; exit 0; fi\n"
		    "case $1 in --json*) [ %d = 0 ] || { [ %d = 2 ] && [ \"$1\" = --json ]; } || {\n"
		    "  echo 'squeue: error: cannot load the JSON plugin' >&2; exit 1; } ;; esac\n"
		    "printf 'arg:%%s\\n' \"$@\"\n", version, json_fails, json_fails);
	fclose(fp);
	chmod(script, 0755);
	_cleanup_strbuf_ struct strbuf cmd = STRBUF_INIT, full = STRBUF_INIT;
	slurm_queue_command(&cmd, f, SLURM_QUEUE_AUTO, EOR);
	_cleanup_free_ char *cmdfile = xasprintf("%s/cmd.sh", dir);
	fp = fopen(cmdfile, "w");
	if (!fp)
		return NULL;
	fputs(cmd.buf, fp);
	fclose(fp);
	strbuf_addf(&full, "PATH='%s':/usr/bin:/bin sh '%s' 2>/dev/null", dir, cmdfile);
	fp = popen(full.buf, "r");
	if (!fp)
		return NULL;
	struct strbuf out = STRBUF_INIT;
	char buf[4096];
	size_t n;
	while ((n = fread(buf, 1, sizeof(buf), fp)) > 0)
		strbuf_add(&out, buf, n);
	pclose(fp);
	return strbuf_detach(&out);
}

static void test_version_choice(void)
{
	char tmpl[] = "/tmp/test-slurm-queue.XXXXXX";
	const char *dir = mkdtemp(tmpl);
	CHECK(dir != NULL);
	if (!dir)
		return;
	static const struct {
		const char *version_cmd, *format, *json_arg;
	} cases[] = {
		{ "echo 'slurm 17.11.2'", "text", NULL },
		{ "echo 'slurm 20.11.9'", "text", NULL },
		{ "echo 'slurm 21.08.8-2'", "json", "--json" },
		{ "echo 'slurm-wlm 22.05.8'", "json", "--json" },
		{ "echo 'slurm 23.02.7'", "json", "--json" },
		{ "echo 'slurm 23.11.10'", "json", "--json=v0.0.40" },
		{ "echo 'slurm 25.05.0'", "json", "--json=v0.0.42" },
		{ "echo 'slurm-wlm 24.11.5'", "json", "--json=v0.0.42" },
		{ "echo 'slurm-wlm 26.05.5'", "json", "--json=v0.0.42" },
		{ "echo 'slurm 26.11.0'", "json", "--json" }, /* newer than known: its default */
		{ "printf 'slurm 24.05.4\\nsecond line\\n'", "json", "--json=v0.0.40" },
		{ "true", "text", NULL },       /* says nothing */
		{ "echo 'slurm 2.6.5'", "text", NULL },
	};
	struct slurm_queue_filter f = { .user = "a b", .partitions = "gpu", .states = "PD,R" };
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		_cleanup_free_ char *out = run_with_squeue(dir, cases[i].version_cmd, 0, &f);
		struct slurm_queue q;
		struct dp_error err = { 0 };
		CHECK(out != NULL);
		if (!out)
			continue;
		/* the stand-in's output is no queue: the text parser finds no job, JSON none */
		if (streq(cases[i].format, "json")) {
			_cleanup_free_ char *want = xasprintf("dispatch-format json\narg:%s\narg:-u\narg:a b\n"
							     "arg:-p\narg:gpu\narg:-t\narg:PD,R\n",
							     cases[i].json_arg);
			CHECK_CONTAINS(out, want);
		} else {
			CHECK_CONTAINS(out, "dispatch-format text\narg:-h\narg:-o\narg:%i|%P|%u|%T|%M|%D|%N|%r|%j|" EOR
					    "\narg:-u\narg:a b\narg:-p\narg:gpu\narg:-t\narg:PD,R\n");
			CHECK_INT(slurm_parse_queue(out, &f, EOR, &q, &err), 0);
			CHECK_STR(q.format, "text");
			CHECK_INT(q.squeue_status, 0);
			slurm_queue_release(&q);
		}
	}
	/* --me asks the login's own name in the same shell */
	struct slurm_queue_filter me = { .me = true };
	_cleanup_free_ char *out = run_with_squeue(dir, "echo 'slurm 20.11.9'", 0, &me);
	CHECK(out && strstr(out, "arg:-u\narg:") && !strstr(out, "arg:-u\narg:\n"));
	/* a 23.02 built without its JSON plugin: --json fails, the text format answers */
	/* a 24.11 without the pinned data_parser: the release's default --json answers */
	_cleanup_free_ char *nopin = run_with_squeue(dir, "echo 'slurm 24.11.5'", 2, &f);
	CHECK(nopin && strstr(nopin, "dispatch-format json\narg:--json\narg:-u\n"));
	_cleanup_free_ char *nojson = run_with_squeue(dir, "echo 'slurm 23.02.7'", 1, &f);
	CHECK(nojson != NULL);
	if (nojson) {
		struct slurm_queue q;
		struct dp_error err = { 0 };
		CHECK(!strstr(nojson, "dispatch-format json"));
		CHECK_CONTAINS(nojson, "dispatch-format text\narg:-h\narg:-o\n");
		CHECK_INT(slurm_parse_queue(nojson, &f, EOR, &q, &err), 0);
		CHECK_STR(q.format, "text");
		CHECK_INT(q.squeue_status, 0);
		slurm_queue_release(&q);
	}
	_cleanup_free_ char *rm = xasprintf("rm -rf '%s'", dir);
	CHECK_INT(system(rm), 0);
}

int main(void)
{
	test_text_names();
	test_text_lines();
	test_json_names();
	test_formats_agree();
	test_json_filters();
	test_json_arrays();
	test_broken();
	test_state_names();
	test_version_choice();
	return unit_done();
}
