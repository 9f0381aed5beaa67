/* SPDX-License-Identifier: MIT */
/* What a job did (lib/jobs/job_usage.h): the sampler (usage_sample.sh) with a fake
 * nvidia-smi that loops as `-lms` does, the job's GPUs picked by UUID and by minor
 * number; the day-old lines merged in pairs; the reader (usage_read.sh) through sh
 * over a file of known samples, its figures (weighted mean, peak, energy, series,
 * efficiencies) checked against hand arithmetic, and lines it cannot read skipped. */
#include <cjson/cJSON.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/util.h"
#include "jobs/job_usage.h"
#include "sched/slurm/slurm.h"
#include "shfiles.h"
#include "unit.h"

static char tmpdir[] = "/tmp/test-job-usage-XXXXXX";

static void write_file(const char *path, const char *text, mode_t mode)
{
	FILE *fp = fopen(path, "w");
	if (!fp)
		abort();
	fputs(text, fp);
	fclose(fp);
	chmod(path, mode);
}

static char *slurp(const char *path)
{
	struct strbuf sb = STRBUF_INIT;
	FILE *fp = fopen(path, "r");
	char buf[4096];
	size_t n;
	while (fp && (n = fread(buf, 1, sizeof(buf), fp)) > 0)
		strbuf_add(&sb, buf, n);
	if (fp)
		fclose(fp);
	return strbuf_detach(&sb);
}

static int run_sh(const char *shell, const char *text, struct strbuf *out)
{
	_cleanup_free_ char *file = xasprintf("%s/cmd.sh", tmpdir);
	write_file(file, text, 0600);
	_cleanup_free_ char *cmd = xasprintf("%s '%s'", shell, file);
	FILE *p = popen(cmd, "r");
	char buf[4096];
	size_t n;
	while ((n = fread(buf, 1, sizeof(buf), p)) > 0)
		if (out)
			strbuf_add(out, buf, n);
	return WEXITSTATUS(pclose(p));
}

static size_t count_lines(const char *text)
{
	size_t n = 0;
	for (const char *p = text; (p = strchr(p, '\n')); p++)
		n++;
	return n;
}

/* The sampler for a second or two (until FILE has 2 samples, at most 60 s), with a
 * fake nvidia-smi of two GPUs that prints a row each per -lms interval. */
static char *sample(const char *env)
{
	_cleanup_free_ char *bin = xasprintf("%s/bin", tmpdir);
	_cleanup_free_ char *smi = xasprintf("%s/nvidia-smi", bin);
	_cleanup_free_ char *file = xasprintf("%s/usage.7.node1", tmpdir);
	mkdir(bin, 0700);
	unlink(file);
	write_file(smi,
		   "#!/bin/sh\n"
		   "case \"$*\" in\n"
		   "--help-query-gpu) echo '\"clocks_event_reasons.active\"'; exit 0 ;;\n"
		   "'--query-gpu=uuid --format=csv,noheader,nounits') printf 'GPU-a\\nGPU-b\\n'; exit 0 ;;\n"
		   "*-lms\\ 1000*) ;;\n"
		   "*) echo \"unexpected: $*\" >&2; exit 2 ;;\n"
		   "esac\n"
		   "while :; do\n"
		   "\tprintf 'GPU-a, 0, 97, 1000, 200.00, 60, 0x0000000000000000\\n'\n"
		   "\tprintf 'GPU-b, 1, [N/A], 10, [Not Supported], 30, 0x0000000000000004\\n'\n"
		   "\tsleep 1\n"
		   "done\n", 0700);
	struct strbuf sb = STRBUF_INIT;
	strbuf_addf(&sb, "PATH=%s:$PATH\n%s\n", bin, env);
	strbuf_adds(&sb, shfile_jobs_usage_sample);
	strbuf_addf(&sb, "set -m\n(dispatch_sample 1 %s) </dev/null >/dev/null 2>&1 &\n"
			 "p=$!\nset +m\n"
			 "i=0\n"
			 "while [ \"$(cat %s 2>/dev/null | grep -c '^[0-9]')\" -lt 2 ] && [ $i -lt 600 ]; do\n"
			 "\tsleep 0.1\n\ti=$((i + 1))\n"
			 "done\n"
			 "kill -- -$p\nwait $p 2>/dev/null\n", file, file);
	run_sh("bash", sb.buf, NULL);
	strbuf_release(&sb);
	return slurp(file);
}

static void test_sample(void)
{
	/* a plain host's lease: the GPU by UUID; nvidia-smi's [N/A] never a number */
	_cleanup_free_ char *a = sample("export CUDA_VISIBLE_DEVICES=GPU-a; unset SLURM_JOB_ID");
	CHECK(startswith(a, "# dispatch-usage 1 1 - -\n"));
	CHECK(count_lines(a) >= 3);
	CHECK_CONTAINS(a, " 1 GPU-a 97 1000 200.00 60 0x0000000000000000\n");
	CHECK(!strstr(a, "GPU-b"));
	/* a SLURM step: by minor number, with what SLURM allocated */
	_cleanup_free_ char *b = sample("unset CUDA_VISIBLE_DEVICES; export SLURM_JOB_ID=7 "
					"SLURM_STEP_GPUS=1 SLURM_CPUS_ON_NODE=4 SLURM_MEM_PER_NODE=1000");
	CHECK(startswith(b, "# dispatch-usage 1 1 4 1000\n"));
	CHECK_CONTAINS(b, " 1 GPU-b - 10 - 30 0x0000000000000004\n");
	CHECK(!strstr(b, "GPU-a"));
	/* a job without GPUs (a plain job without a lease): CPU and memory alone */
	_cleanup_free_ char *c = sample("export CUDA_VISIBLE_DEVICES=; unset SLURM_JOB_ID");
	CHECK(count_lines(c) >= 3);
	CHECK(!strstr(c, "GPU-"));
	/* each line: EPOCH DT CPU RSS NGPUS */
	unsigned long t, dt, rss, ng;
	double cpu;
	const char *line = strchr(c, '\n') + 1;
	CHECK_INT(sscanf(line, "%lu %lu %lf %lu %lu", &t, &dt, &cpu, &rss, &ng), 5);
	CHECK(t > 1700000000 && ng == 0 && rss > 0);
}

static void test_merge(void)
{
	long now = (long)time(NULL), old = now - 2 * 86400;
	_cleanup_free_ char *file = xasprintf("%s/usage.8.n", tmpdir);
	_cleanup_free_ char *text = xasprintf(
		"# dispatch-usage 1 10 - -\n"
		"%ld 10 1.00 100 1 GPU-a 100 500 300.0 60 0x0000000000000000\n"
		"%ld 30 2.00 300 1 GPU-a 0 200 100.0 70 0x0000000000000004\n"
		"%ld 10 3.00 200 1 GPU-a 50 100 - 65 0x0000000000000000\n"
		"%ld 10 4.00 100 1 GPU-a 10 100 50.0 61 0x0000000000000000\n",
		old, old + 30, old + 40, now);
	write_file(file, text, 0600);
	struct strbuf sb = STRBUF_INIT;
	strbuf_adds(&sb, shfile_jobs_usage_sample);
	strbuf_addf(&sb, "dispatch_sample_merge %s\n", file);
	CHECK_INT(run_sh("bash", sb.buf, NULL), 0);
	strbuf_release(&sb);
	_cleanup_free_ char *got = slurp(file);
	/* the first two merged (spans 10 + 30: utilisation (100*10 + 0*30) / 40 = 25,
	 * power (300*10 + 100*30) / 40 = 150, the peaks, the mask that is not zero); the
	 * third alone (no pair); the recent line as it was */
	_cleanup_free_ char *want = xasprintf(
		"# dispatch-usage 1 10 - -\n"
		"%ld 40 2.00 300 1 GPU-a 25.0 500 150.0 70 0x0000000000000004\n"
		"%ld 10 3.00 200 1 GPU-a 50 100 - 65 0x0000000000000000\n"
		"%ld 10 4.00 100 1 GPU-a 10 100 50.0 61 0x0000000000000000\n",
		old + 30, old + 40, now);
	CHECK_STR(got, want);
}

static void test_read(void)
{
	_cleanup_free_ char *stage = xasprintf("%s/stage", tmpdir);
	CHECK_INT(mkdir(stage, 0700), 0);
	_cleanup_free_ char *f1 = xasprintf("%s/usage.42.node1.cluster", stage);
	_cleanup_free_ char *f2 = xasprintf("%s/usage.42_3.node2", stage);
	_cleanup_free_ char *f3 = xasprintf("%s/usage.420.node9", stage); /* another job's */
	write_file(f1, "# dispatch-usage 1 10 4 1000\n"
		       "1000 10 5.00 2048 1 GPU-a 100 1000 200.0 60 0x0000000000000000\n"
		       "1010 10 10.00 4096 1 GPU-a 0 3000 100.0 65 0x0000000000000004\n"
		       "garbage|line @MARK_USAGE@\n"
		       "1030 20 30.00 1024 1 GPU-a 50 2000 - 61 -\n"
		       "1030 0 40.00 0 0\n", 0600);
	write_file(f2, "1000 5 1.00 10 0\n", 0600);
	write_file(f3, "1000 5 1.00 10 0\n", 0600);
	_cleanup_free_ char *i3 = xasprintf("%s/idle.42_3", stage);
	write_file(i3, "idle: GPUs under 5% for 30 min\033[2J\n", 0600);
	struct strbuf sb = STRBUF_INIT;
	struct job_state js = { .id = xstrdup("42") };
	struct sched_job j = { .id = "42", .stage_dir = stage };
	struct remote_script rs = REMOTE_SCRIPT_INIT;
	job_usage_script(&rs, &j, 1);
	job_idle_script(&rs, &j, 1);
	struct remote_reply rr = REMOTE_REPLY_INIT;
	CHECK_INT(run_sh("sh", rs.text.buf, &rr.out), 0);
	remote_reply_parse(&rr);
	job_usage_take(&rr, &j, &js);
	job_idle_take(&rr, &j, &js);
	CHECK(js.usage && js.usage->nnodes == 1);
	CHECK(js.idle == NULL);
	const struct job_usage_node *n = &js.usage->nodes[0];
	CHECK_STR(n->node, "node1.cluster");
	CHECK_INT(n->start, 990);
	CHECK_INT(n->end, 1030);
	CHECK_INT(n->samples, 4);
	CHECK(n->cpu == 40.0 && n->rss_kib == 4096 && n->cores == 4 && n->mem_mib == 1000);
	/* 40 CPU seconds over 4 cores for 40 s: 25 %; 4 MiB of 1000 MiB: 0.4 % */
	CHECK(fabs(job_usage_cpu_eff(n) - 25.0) < 1e-9);
	CHECK(fabs(job_usage_mem_eff(n) - 0.4) < 1e-9);
	CHECK_INT(n->ngpus, 1);
	const struct job_usage_gpu *g = &n->gpus[0];
	CHECK_STR(g->uuid, "GPU-a");
	/* (100*10 + 0*10 + 50*20) / 40 = 50; energy (200*10 + 100*10) / 3600 Wh */
	CHECK(g->mean == 50.0 && g->peak == 100 && g->mem_peak == 3000 && g->temp_peak == 65);
	CHECK(fabs(g->wh - 0.833) < 1e-9);
	CHECK_INT(g->throttled, 1);
	/* three samples, three spans of the 40 s: at their midpoints 995, 1005, 1020 */
	CHECK_INT(g->nseries, 3);
	CHECK(g->series[0] == 100 && g->series[1] == 0 && g->series[2] == 50);
	_cleanup_free_ char *spark = job_usage_spark(g, true);
	CHECK_STR(spark, "\u2588 \u2584");
	_cleanup_free_ char *ascii = job_usage_spark(g, false);
	CHECK_STR(ascii, "@ +");
	/* a GPU in use at all is never blank; no sample there: '-' ('?') */
	int low[] = { 2, 0, -1 };
	struct job_usage_gpu lg = { .series = low, .nseries = 3 };
	_cleanup_free_ char *lu = job_usage_spark(&lg, true);
	_cleanup_free_ char *la = job_usage_spark(&lg, false);
	CHECK_STR(lu, "\u2581 -");
	CHECK_STR(la, ". ?");
	cJSON *o = job_usage_json(js.usage);
	_cleanup_free_ char *json = cJSON_PrintUnformatted(o);
	CHECK_CONTAINS(json, "\"cpu_efficiency\":25,\"mem_efficiency\":0.4,");
	CHECK(g->recent == 50.0); /* all three are within 30 minutes of the last */
	CHECK_CONTAINS(json, "\"mean_util\":50,\"recent_util\":50,\"peak_util\":100,\"peak_mem_mib\":3000,"
			     "\"energy_wh\":0.833,\"peak_temp\":65,\"throttled_samples\":1,"
			     "\"idle\":false,\"series\":[100,0,50]");
	cJSON_Delete(o);
	job_state_release(&js);

	/* the array's task: its own file; a row with no file: none */
	js = (struct job_state){ .id = xstrdup("42_3") };
	job_usage_take(&rr, &j, &js);
	job_idle_take(&rr, &j, &js);
	CHECK_STR(js.idle, "idle: GPUs under 5% for 30 min\\e[2J");
	CHECK(js.usage && js.usage->nnodes == 1 && streq(js.usage->nodes[0].node, "node2"));
	CHECK(js.usage && js.usage->nodes[0].ngpus == 0);
	CHECK(js.usage && isnan(job_usage_cpu_eff(&js.usage->nodes[0])));
	job_state_release(&js);
	js = (struct job_state){ .id = xstrdup("42_4") };
	job_usage_take(&rr, &j, &js);
	job_idle_take(&rr, &j, &js);
	CHECK(js.usage == NULL);
	job_state_release(&js);
	remote_reply_release(&rr);
	remote_script_release(&rs);
	strbuf_release(&sb);
}

/* --idle-timeout: GPU-a at 97% is under --idle-below 99; with no grace and 1 s of
 * idleness the sampler votes, writes why and sends TERM to the bootstrap ($$ here:
 * the script that started it). */
static void test_idle(void)
{
	_cleanup_free_ char *bin = xasprintf("%s/bin", tmpdir);
	_cleanup_free_ char *file = xasprintf("%s/usage.9.node1", tmpdir);
	_cleanup_free_ char *why = xasprintf("%s/idle.9", tmpdir);
	_cleanup_free_ char *vote = xasprintf("%s/idle-vote.9.node1", tmpdir);
	_cleanup_free_ char *pg = xasprintf("%s/pg", tmpdir);
	struct strbuf sb = STRBUF_INIT;
	strbuf_addf(&sb, "PATH=%s:$PATH\nexport CUDA_VISIBLE_DEVICES=GPU-a DISPATCH_IDLE_GRACE=0\n"
			 "unset SLURM_JOB_ID SLURM_NODEID SLURM_JOB_NUM_NODES\n", bin);
	strbuf_adds(&sb, shfile_jobs_usage_sample);
	strbuf_addf(&sb, "set -m\n(dispatch_sample 1 %s 1 99) </dev/null >/dev/null 2>&1 &\n"
			 "echo $! >%s\nset +m\n"
			 "trap 'exit 143' TERM\n"
			 "for i in $(seq 1 600); do sleep 0.1; done\n"
			 "exit 0\n", file, pg);
	CHECK_INT(run_sh("bash", sb.buf, NULL), 143);
	strbuf_release(&sb);
	_cleanup_free_ char *pid = slurp(pg);
	if (atoi(pid) > 1)
		kill(-atoi(pid), SIGKILL);
	_cleanup_free_ char *got = slurp(why);
	CHECK_STR(got, "idle: GPUs under 99% for 1 s\n");
	CHECK(access(vote, F_OK) == 0);
}

/* What a job was allocated: sacct's AllocTRES (captured on the test cluster: a
 * two-node job with a GPU each, a one-GPU job, an array's two tasks), else a plain
 * job's lease; the user sacct names, else the login's. */
static void test_alloc(void)
{
	_cleanup_free_ char *out = unit_fixture("slurm", "alloc-22.05.out");
	struct remote_reply rr = REMOTE_REPLY_INIT;
	strbuf_adds(&rr.out, "dispatch-user login\n");
	strbuf_adds(&rr.out, out);
	remote_reply_parse(&rr);
	static const struct {
		const char *id;
		long gpus, secs;
	} want[] = { { "1", 2, 8 }, { "2", 1, 60 }, { "3_1", 1, 2 }, { "9", -1, -1 } };
	for (size_t i = 0; i < ARRAY_SIZE(want); i++) {
		struct job_state js = { .id = xstrdup(want[i].id), .sched = &sched_slurm,
					.elapsed = 5 };
		struct sched_job j = { .id = want[i].id };
		job_usage_take(&rr, &j, &js);
		CHECK_INT(js.alloc_gpus, want[i].gpus);
		CHECK_INT(js.alloc_seconds, want[i].secs);
		CHECK_STR(js.user, want[i].gpus < 0 ? "login" : "dispatch-test");
		job_state_release(&js);
	}
	/* a plain job: its lease for its elapsed time */
	struct job_state js = { .id = xstrdup("p"), .sched = &sched_plain, .gpus = xstrdup("0,3"),
				.elapsed = 90 };
	struct sched_job j = { .id = "p" };
	job_usage_take(&rr, &j, &js);
	CHECK_INT(js.alloc_gpus, 2);
	CHECK_INT(js.alloc_seconds, 90);
	CHECK_STR(js.user, "login");
	job_state_release(&js);
	remote_reply_release(&rr);
	CHECK_INT(slurm_tres_gpus("cpu=2,gres/gpu:a100=2,gres/gpu:h100=1,mem=1G"), 3); /* crafted */
	CHECK_INT(slurm_tres_gpus("cpu=2,gres/gpu:a100=2,gres/gpu=2"), 2);
	CHECK_INT(slurm_tres_gpus("cpu=2,gres/gpumem=80G,mem=1G"), 0);
	CHECK_INT(slurm_tres_gpus(""), 0);
}

/* Where stages stand: stages_read.sh over a file of two attempts (the second
 * resumed at stage 2), and the reply read back; a task's file of its own. */
static void test_stages(void)
{
	_cleanup_free_ char *stage = xasprintf("%s/st", tmpdir);
	CHECK_INT(mkdir(stage, 0700), 0);
	_cleanup_free_ char *f = xasprintf("%s/stages.42", stage);
	write_file(f, "1/3 start 100\n1/3 exit 0 101\n2/3 start 101\n2/3 start 200\n2/3 exit 7 201\n", 0600);
	_cleanup_free_ char *t = xasprintf("%s/stages.42_1", stage);
	write_file(t, "1/2 start 100\n", 0600);
	struct sched_job j = { .id = "42", .stage_dir = stage };
	struct remote_script rs = REMOTE_SCRIPT_INIT;
	job_stages_script(&rs, &j, 1);
	struct remote_reply rr = REMOTE_REPLY_INIT;
	CHECK_INT(run_sh("sh", rs.text.buf, &rr.out), 0);
	remote_reply_parse(&rr);
	struct job_state js = { .id = xstrdup("42"), .state = xstrdup("FAILED") };
	job_stages_take(&rr, &j, &js);
	CHECK_INT(js.nstages, 3);
	if (js.nstages == 3) {
		CHECK_INT(js.stage_exit[0], 0);
		CHECK_INT(js.stage_exit[1], 7);
		CHECK_INT(js.stage_exit[2], JOB_STAGE_NOT_RUN);
	}
	_cleanup_free_ char *why = job_state_why(&js);
	CHECK_STR(why, "stage 2/3 exited with code 7");
	job_state_release(&js);
	struct job_state task = { .id = xstrdup("42_1"), .state = xstrdup("TIMEOUT") };
	job_stages_take(&rr, &j, &task);
	CHECK(task.nstages == 2 && task.stage_exit[0] == JOB_STAGE_STARTED);
	job_state_release(&task);
	remote_reply_release(&rr);
	remote_script_release(&rs);
}

int main(void)
{
	if (!mkdtemp(tmpdir))
		return 1;
	test_read();
	test_merge();
	test_sample();
	test_idle();
	test_alloc();
	test_stages();
	_cleanup_free_ char *rm = xasprintf("rm -rf '%s'", tmpdir);
	CHECK_INT(system(rm), 0);
	return unit_done();
}
