/* SPDX-License-Identifier: MIT */
#include <sys/stat.h>

#include "inventory/jobspec.h"
#include "inventory/sweep.h"
#include "unit.h"

static struct dp_error err;

/* Sets one option on a fresh spec; returns the error message, "" on success. */
static const char *try_set(const char *name, const char *value)
{
	struct jobspec js = { 0 };
	dp_error_clear(&err);
	int r = jobspec_set(&js, name, value, NULL, &err);
	jobspec_release(&js);
	return r < 0 ? err.msg : "";
}

static int parse(struct jobspec *js, const char *text)
{
	dp_error_clear(&err);
	return jobspec_parse_yaml(js, "job.yaml", text, strlen(text), &err);
}

static void test_time(void)
{
	const char *good[] = { "60", "0", "30:00", "12:30:00", "48:00:00", "2-0", "2-12",
			       "2-12:30", "2-12:30:15", "UNLIMITED", "infinite" };
	const char *bad[] = { "", "1:2:3:4", "1-24", "1-2:60", "10:60", "1:60:00", "abc", "-1",
			      "1-", "1--2", "1:", ":30", "1 h", "12345678901" };
	for (size_t i = 0; i < ARRAY_SIZE(good); i++) {
		CHECK(jobspec_valid_time(good[i]));
		if (!jobspec_valid_time(good[i]))
			printf("#   rejected '%s'\n", good[i]);
	}
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		CHECK(!jobspec_valid_time(bad[i]));
		if (jobspec_valid_time(bad[i]))
			printf("#   accepted '%s'\n", bad[i]);
	}
	CHECK_CONTAINS(try_set("time", "25:99"), "invalid --time '25:99'");
	CHECK_CONTAINS(try_set("time", "25:99"), "HH:MM:SS");
	CHECK_STR(try_set("time", "1-00:00:00"), "");
}

static void test_values_name_their_option(void)
{
	CHECK(jobspec_valid_mem("64G") && jobspec_valid_mem("4000") && jobspec_valid_mem("512m") &&
	      jobspec_valid_mem("1T") && jobspec_valid_mem("0"));
	CHECK(!jobspec_valid_mem("64GB") && !jobspec_valid_mem("G") && !jobspec_valid_mem("1.5G") &&
	      !jobspec_valid_mem(""));
	CHECK_CONTAINS(try_set("mem", "64GB"), "invalid --mem '64GB'");
	CHECK_CONTAINS(try_set("mem-per-cpu", "lots"), "invalid --mem-per-cpu 'lots'");

	CHECK(jobspec_valid_array("0-15") && jobspec_valid_array("1,3,5-7") &&
	      jobspec_valid_array("0-15:4") && jobspec_valid_array("0-99%4") &&
	      jobspec_valid_array("7"));
	CHECK(!jobspec_valid_array("5-1") && !jobspec_valid_array("0-15:0") &&
	      !jobspec_valid_array("1,,2") && !jobspec_valid_array("0-15%0") &&
	      !jobspec_valid_array("a") && !jobspec_valid_array("1:2"));
	CHECK_CONTAINS(try_set("array", "5-1"), "invalid --array '5-1'");

	CHECK(jobspec_valid_dependency("afterok:123") && jobspec_valid_dependency("singleton") &&
	      jobspec_valid_dependency("afterok:1:2,afterany:3") &&
	      jobspec_valid_dependency("afternotok:12_3?afterok:4") &&
	      jobspec_valid_dependency("after:5+10"));
	/* a plain host's job ids, as submit prints them (@HOST) or not */
	/* a sweep's task on a plain host: its stage name and -K */
	CHECK(jobspec_valid_dependency("afterok:train-20261127-185300-0a1f-12@box1"));
	CHECK(!jobspec_valid_dependency("afterok:train-20261127-185300-0a1f-123456"));
	size_t stage = 0;
	CHECK(jobspec_plain_task_id("train-20261127-185300-0a1f-3", &stage) && stage == 26);
	CHECK(!jobspec_plain_task_id("train-20261127-185300-0a1f", NULL));
	CHECK(jobspec_valid_dependency("afterok:train-20261127-185300-0a1f") &&
	      jobspec_valid_dependency("afterany:my_job.1-20261127-185300-ffff@box1:12") &&
	      !jobspec_valid_dependency("afterok:train-2026-185300-0a1f") &&
	      !jobspec_valid_dependency("afterok:../x-20261127-185300-0a1f") &&
	      !jobspec_valid_dependency("afterok:train-20261127-185300-0a1f@") &&
	      !jobspec_valid_dependency("afterok:train-20261127-185300-0A1F"));
	CHECK(jobspec_time_seconds("10") == 600 && jobspec_time_seconds("0:20") == 20 &&
	      jobspec_time_seconds("1:02:03") == 3723 && jobspec_time_seconds("2-1") == 176400 &&
	      jobspec_time_seconds("1-0:0:5") == 86405 && jobspec_time_seconds("UNLIMITED") == 0 &&
	      jobspec_time_seconds("1:60") == -1 && jobspec_time_seconds("x") == -1);
	CHECK(!jobspec_valid_dependency("afterok") && !jobspec_valid_dependency("afterok:") &&
	      !jobspec_valid_dependency("whenever:1") && !jobspec_valid_dependency("afterok:x") &&
	      !jobspec_valid_dependency("afterok:1,afterany:2?afterok:3"));
	CHECK_CONTAINS(try_set("dependency", "afterok"), "invalid --dependency 'afterok'");

	CHECK(jobspec_valid_signal("USR1") && jobspec_valid_signal("B:USR1@120") &&
	      jobspec_valid_signal("SIGTERM@60") && jobspec_valid_signal("R:10") &&
	      jobspec_valid_signal("10@5"));
	CHECK(!jobspec_valid_signal("FOO") && !jobspec_valid_signal("B:") &&
	      !jobspec_valid_signal("USR1@") && !jobspec_valid_signal("99") &&
	      !jobspec_valid_signal("USR1@x") && !jobspec_valid_signal("X:USR1"));
	CHECK_CONTAINS(try_set("signal", "B:USR3"), "invalid --signal 'B:USR3'");

	CHECK_CONTAINS(try_set("nodes", "0"), "invalid --nodes '0'");
	CHECK_CONTAINS(try_set("gpus", "-1"), "invalid --gpus '-1'");
	CHECK_CONTAINS(try_set("cpus-per-task", "8x"), "invalid --cpus-per-task '8x'");
	CHECK_CONTAINS(try_set("ntasks-per-node", ""), "invalid --ntasks-per-node");
	CHECK_STR(try_set("cpus_per_task", "8"), "");

	/* a newline would start a new #SBATCH line: refused, and shown as '?' */
	CHECK_CONTAINS(try_set("job-name", "a\nb"), "invalid --job-name 'a?b'");
	char longname[300];
	memset(longname, 'x', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	CHECK_CONTAINS(try_set("job-name", longname), "invalid --job-name");
	CHECK_STR(try_set("job-name", "my run: ünïcode 'quoted'"), "");
	CHECK_CONTAINS(try_set("partition", "gpu a"), "invalid --partition");
	CHECK_CONTAINS(try_set("output", "/x\n#SBATCH --qos=high"), "invalid --output");
	CHECK_CONTAINS(try_set("chip", "h100 sxm"), "invalid --chip");
	CHECK_CONTAINS(try_set("uv-group", "a;b"), "invalid --uv-group 'a;b'");
	CHECK_CONTAINS(try_set("sbatch", "mail-type=END"), "invalid --sbatch 'mail-type=END'");
	CHECK_STR(try_set("sbatch", "#SBATCH --mail-type=END"), "");
	CHECK_CONTAINS(try_set("exclusive", "maybe"), "invalid --exclusive 'maybe'");
	CHECK_CONTAINS(try_set("bogus", "1"), "unknown job option 'bogus'");
}

static void test_env(void)
{
	struct jobspec js = { 0 };
	CHECK(jobspec_set(&js, "env", "A=x=y", NULL, &err) == 0);
	CHECK(jobspec_set(&js, "env", "EMPTY=", NULL, &err) == 0);
	setenv("DISPATCH_TEST_LOCAL", "from here", 1);
	CHECK(jobspec_set(&js, "env", "DISPATCH_TEST_LOCAL", NULL, &err) == 0);
	CHECK(jobspec_set(&js, "env", "A=again", NULL, &err) == 0);
	CHECK_INT(js.nenv, 3);
	CHECK_STR(js.env[0].key, "A");
	CHECK_STR(js.env[0].value, "again");
	CHECK_STR(js.env[1].value, "");
	CHECK_STR(js.env[2].value, "from here");

	/* bad names are named; values never appear in messages */
	CHECK(jobspec_set(&js, "env", "1BAD=supersecret", NULL, &err) < 0);
	CHECK_CONTAINS(err.msg, "invalid --env name '1BAD'");
	CHECK(strstr(err.msg, "supersecret") == NULL);
	CHECK(jobspec_set(&js, "env", "MY-KEY=supersecret", NULL, &err) < 0);
	CHECK(strstr(err.msg, "supersecret") == NULL);
	unsetenv("DISPATCH_TEST_UNSET");
	CHECK(jobspec_set(&js, "env", "DISPATCH_TEST_UNSET", NULL, &err) < 0);
	CHECK_CONTAINS(err.msg, "--env 'DISPATCH_TEST_UNSET' is not set locally");
	CHECK_INT(err.kind, DPE_INPUT);
	jobspec_release(&js);
}

static void test_command(void)
{
	struct jobspec js = { 0 };
	char *one[] = { "python train.py && echo done", NULL };
	jobspec_set_command_argv(&js, one, 1);
	CHECK_STR(js.command, "python train.py && echo done");
	char *words[] = { "python", "train.py", "--name", "my run's", NULL };
	jobspec_set_command_argv(&js, words, 4);
	CHECK_STR(js.command, "'python' 'train.py' '--name' 'my run'\\''s'");
	jobspec_release(&js);
}

static void test_yaml(void)
{
	struct jobspec js = { 0 };
	CHECK(parse(&js, "job_name: train\n"
			 "nodes: 2\n"
			 "cpus-per-task: 8\n"
			 "gpus_per_node: 4\n"
			 "chip: h100\n"
			 "time: '1-00:00:00'\n"
			 "exclusive: true\n"
			 "requeue: false\n"
			 "partition:\n"
			 "modules: [cuda/12.1, nccl]\n"
			 "uv_groups: cuda12\n"
			 "setup:\n  - echo one\n  - echo two\n"
			 "env:\n  WANDB_PROJECT: \"my project\"\n  QUOTE: \"it's $HOME `x`\"\n"
			 "command: [python, train.py, --lr, '3e-4']\n") == 0);
	CHECK_STR(err.msg, "");
	CHECK_STR(js.job_name, "train");
	CHECK_INT(js.nodes, 2);
	CHECK_INT(js.cpus_per_task, 8);
	CHECK_INT(js.gpus_per_node, 4);
	CHECK_STR(js.time, "1-00:00:00");
	CHECK_INT(js.exclusive, 1);
	CHECK_INT(js.requeue, -1);
	CHECK(js.partition == NULL);
	CHECK_INT(strv_len(js.modules), 2);
	CHECK_STR(js.uv_groups[0], "cuda12");
	CHECK_INT(strv_len(js.setup), 2);
	CHECK_INT(js.nenv, 2);
	CHECK_STR(js.env[1].value, "it's $HOME `x`");
	CHECK_STR(js.command, "'python' 'train.py' '--lr' '3e-4'");
	CHECK(jobspec_validate(&js, &err) == 0);
	jobspec_release(&js);

	/* a command string is shell text */
	CHECK(parse(&js, "command: |\n  cd src\n  python train.py\n") == 0);
	CHECK_STR(js.command, "cd src\npython train.py\n");
	jobspec_release(&js);

	/* env as a list, and a null value takes the local one */
	setenv("DISPATCH_TEST_TOKEN", "t0k3n", 1);
	CHECK(parse(&js, "env:\n  - A=1\n  - DISPATCH_TEST_TOKEN\n") == 0);
	/* a name without a value, unset locally: an error unless the command line sets it */
	js.command = xstrdup("true");
	CHECK(parse(&js, "env:\n  B:\n") == 0);
	CHECK(jobspec_validate(&js, &err) < 0);
	CHECK_CONTAINS(err.msg, "job.yaml:2:3: env 'B' has no value and is not set locally");
	struct jobspec cli = { 0 };
	CHECK(jobspec_set(&cli, "env", "B=from the command line", NULL, &err) == 0);
	jobspec_merge(&js, &cli);
	jobspec_release(&cli);
	CHECK(jobspec_validate(&js, &err) == 0);
	CHECK_STR(js.env[2].value, "from the command line");
	jobspec_release(&js);
	CHECK(parse(&js, "env: [A=1, DISPATCH_TEST_TOKEN]\n") == 0);
	CHECK(parse(&js, "env: {DISPATCH_TEST_TOKEN: ~}\n") == 0);
	CHECK_INT(js.nenv, 2);
	CHECK_STR(js.env[1].value, "t0k3n");
	jobspec_release(&js);
}

static void test_yaml_errors(void)
{
	struct {
		const char *text, *want;
	} cases[] = {
		{ "nodes: 2\npartiton: gpu\n", "job.yaml:2:1: unknown key 'partiton' (did you mean 'partition'?)" },
		{ "cpus_per_tsk: 2\n", "job.yaml:1:1: unknown key 'cpus_per_tsk' (did you mean 'cpus-per-task'?)" },
		{ "frobnicate: 2\n", "job.yaml:1:1: unknown key 'frobnicate' (the job options" },
		{ "nodes: 2\ntime: 25:99\n", "job.yaml:2:7: invalid time '25:99'" },
		{ "nodes: zero\n", "job.yaml:1:8: invalid nodes 'zero'" },
		{ "nodes: [1, 2]\n", "job.yaml:1:8: 'nodes' must be a number, not a list" },
		{ "modules:\n  - ok\n  - {a: b}\n", "job.yaml:3:5: each item of 'modules' must be a string" },
		{ "env:\n  1X: y\n", "job.yaml:2:3: invalid env name '1X'" },
		{ "env: [\"BAD-NAME=secretvalue\"]\n", "job.yaml:1:7: invalid env name 'BAD-NAME'" },
		{ "env: x\n", "job.yaml:1:6: 'env' must be a mapping" },
		{ "command: []\n", "job.yaml:1:10: 'command' must be a string or a list of words, not an empty list" },
		{ "command: {a: 1}\n", "job.yaml:1:10: 'command' must be a string or a list" },
		{ "- a\n- b\n", "job.yaml:1:1: a job file is a mapping of job options, not a list" },
		{ "nodes: 2\nnodes: 3\n", "job.yaml:2:1: duplicate key 'nodes'" },
		{ "nodes: [2\n", "job.yaml:2:1: malformed YAML" },
		{ "exclusive: sometimes\n", "job.yaml:1:12: invalid exclusive 'sometimes'" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct jobspec js = { 0 };
		CHECK(parse(&js, cases[i].text) < 0);
		CHECK_CONTAINS(err.msg, cases[i].want);
		CHECK_INT(err.kind, DPE_INPUT);
		CHECK(strstr(err.msg, "secretvalue") == NULL);
		jobspec_release(&js);
	}
}

static void test_merge(void)
{
	struct jobspec file = { 0 }, cli = { 0 };
	CHECK(parse(&file, "nodes: 4\ntime: '2:00:00'\npartition: gpu\nmodules: [cuda]\n"
			   "env: {A: file, B: file}\nexclusive: true\ncommand: python a.py\n") == 0);
	CHECK(jobspec_set(&cli, "nodes", "2", NULL, &err) == 0);
	CHECK(jobspec_set(&cli, "module", "cuda", NULL, &err) == 0);
	CHECK(jobspec_set(&cli, "module", "nccl", NULL, &err) == 0);
	CHECK(jobspec_set(&cli, "env", "B=cli", NULL, &err) == 0);
	char *argv[] = { "python b.py", NULL };
	jobspec_set_command_argv(&cli, argv, 1);
	jobspec_merge(&file, &cli);
	CHECK_INT(file.nodes, 2);               /* the command line wins */
	CHECK_STR(file.time, "2:00:00");        /* the file fills the rest */
	CHECK_STR(file.partition, "gpu");
	CHECK_INT(file.exclusive, 1);
	CHECK_INT(strv_len(file.modules), 2);   /* lists add up, repeats dropped */
	CHECK_STR(file.modules[1], "nccl");
	CHECK_INT(file.nenv, 2);
	CHECK_STR(file.env[0].value, "file");
	CHECK_STR(file.env[1].value, "cli");
	CHECK_STR(file.command, "python b.py");
	jobspec_release(&file);
	jobspec_release(&cli);
}

static void test_validate(void)
{
	struct jobspec js = { 0 };
	CHECK(jobspec_validate(&js, &err) < 0);
	CHECK_CONTAINS(err.msg, "no command to run");
	js.command = xstrdup("true");
	CHECK(jobspec_validate(&js, &err) == 0);
	CHECK(jobspec_set(&js, "mem", "4G", NULL, &err) == 0);
	CHECK(jobspec_set(&js, "mem-per-cpu", "1G", NULL, &err) == 0);
	CHECK(jobspec_validate(&js, &err) < 0);
	CHECK_CONTAINS(err.msg, "--mem and --mem-per-cpu");
	jobspec_release(&js);

	js.command = xstrdup("true");
	CHECK(jobspec_set(&js, "chip", "h100", NULL, &err) == 0);
	CHECK(jobspec_validate(&js, &err) < 0);
	CHECK_CONTAINS(err.msg, "--chip 'h100' needs a GPU count");
	CHECK(jobspec_set(&js, "gpus", "8", NULL, &err) == 0);
	CHECK(jobspec_set(&js, "nodes", "2", NULL, &err) == 0);
	CHECK(jobspec_validate(&js, &err) == 0);
	CHECK_INT(jobspec_gpus_per_node(&js), 4);
	CHECK_INT(jobspec_total_gpus(&js), 8);
	CHECK(jobspec_set(&js, "gpus-per-node", "2", NULL, &err) == 0);
	CHECK(jobspec_validate(&js, &err) < 0);
	CHECK_CONTAINS(err.msg, "--gpus and --gpus-per-node");
	jobspec_release(&js);

	js.command = xstrdup("true");
	js.gpus_per_node = 4;
	js.nodes = 3;
	CHECK_INT(jobspec_total_gpus(&js), 12);
	js.gpus_per_node = 0;
	js.gpus = 5;
	CHECK_INT(jobspec_gpus_per_node(&js), 0);
	jobspec_release(&js);
}

/* The container options, from the command line and a job file. */
static void test_container(void)
{
	CHECK_STR(try_set("container-image", "nvcr.io/nvidia/pytorch:24.01-py3"), "");
	CHECK_STR(try_set("container-image", "-x"), "invalid --container-image '-x': expected an "
		  "image: a file path or a registry reference, without spaces");
	CHECK_STR(try_set("container-mounts", "/a:/b,/c:d"), "invalid --container-mounts item '/c:d': "
		  "DST is not an absolute path (start it with /, ~/ or $VAR) (expected SRC:DST or "
		  "SRC:DST:ro, absolute paths, items joined by ',')");
	struct jobspec js = { 0 };
	CHECK(parse(&js, "container_image: /images/x.sqsh\n"
			 "container-mounts: [/data:/data:ro, '/a:/b,/c:/d']\n"
			 "container_workdir: /work\n"
			 "no_container: false\n"
			 "command: python train.py\n") == 0);
	CHECK_STR(js.container_image, "/images/x.sqsh");
	CHECK_INT(strv_len(js.container_mounts), 2);
	CHECK_STR(js.container_workdir, "/work");
	CHECK_INT(js.no_container, -1);
	CHECK(jobspec_validate(&js, &err) == 0);
	CHECK(jobspec_set(&js, "no-container", NULL, NULL, &err) == 0);
	CHECK(jobspec_validate(&js, &err) < 0);
	CHECK_STR(err.msg, "--no-container and --container-image '/images/x.sqsh' exclude each "
		  "other: give one");
	jobspec_release(&js);
	CHECK(parse(&js, "container_mounts: relative:/x\n") < 0);
	CHECK_STR(err.msg, "job.yaml:1:19: invalid container-mounts item 'relative:/x': SRC is not "
		  "an absolute path (start it with /, ~/ or $VAR) (expected SRC:DST or SRC:DST:ro, "
		  "absolute paths, items joined by ',')");
	jobspec_release(&js);
}

/* The run options: values, defaults, the job file, merging, whole-spec checks. */
static void test_run(void)
{
	char buf[128];
	struct jobspec js = { 0 };
	CHECK(!jobspec_is_run(&js));
	CHECK_INT(jobspec_run_max_restarts(&js), 0);
	CHECK_INT(jobspec_run_restart_on(&js), RUN_ON_DEFAULT);
	CHECK_STR(jobspec_run_stop_signal(&js), "USR1");
	CHECK_INT(jobspec_run_grace(&js), 120);
	jobspec_run_events_text(jobspec_run_restart_on(&js), buf, sizeof(buf));
	CHECK_STR(buf, "timeout,preempted,node-fail,lost");

	CHECK_STR(try_set("max-restarts", "0"), "");
	CHECK_STR(try_set("max-restarts", "1000"), "");
	CHECK_STR(try_set("max-restarts", "1001"), "invalid --max-restarts '1001': expected a whole "
		  "number from 0 to 1000");
	CHECK_CONTAINS(try_set("max-restarts", "-1"), "invalid --max-restarts '-1'");
	CHECK_CONTAINS(try_set("max-restarts", "3x"), "invalid --max-restarts '3x'");
	CHECK_CONTAINS(try_set("max-restarts", ""), "invalid --max-restarts ''");
	CHECK_STR(try_set("restart-on", "timeout,error"), "");
	CHECK_STR(try_set("restart-on", "node-fail"), "");
	CHECK_STR(try_set("restart-on", "timeout,oom"), "invalid --restart-on 'timeout,oom': "
		  "expected events from timeout, preempted, node-fail, lost, error joined by ','");
	CHECK_CONTAINS(try_set("restart-on", "timeout,"), "invalid --restart-on");
	CHECK_CONTAINS(try_set("restart-on", ""), "invalid --restart-on");
	CHECK_STR(try_set("stop-signal", "SIGUSR2"), "");
	CHECK_STR(try_set("stop-signal", "term"), "");
	CHECK_CONTAINS(try_set("stop-signal", "KILL"), "invalid --stop-signal 'KILL': expected a "
		       "signal the command can catch");
	CHECK_CONTAINS(try_set("stop-signal", "B:USR1@60"), "invalid --stop-signal");
	CHECK_CONTAINS(try_set("grace", "0"), "invalid --grace '0'");
	CHECK_STR(try_set("grace", "30"), "");

	CHECK(parse(&js, "max_restarts: 4\nrestart-on: timeout,error\nstop_signal: SIGTERM\n"
			 "grace: 15\ncommand: python train.py\n") == 0);
	CHECK(jobspec_is_run(&js));
	CHECK_INT(jobspec_run_max_restarts(&js), 4);
	CHECK_INT(jobspec_run_restart_on(&js), RUN_ON_TIMEOUT | RUN_ON_ERROR);
	CHECK_STR(jobspec_run_stop_signal(&js), "TERM");
	CHECK_INT(jobspec_run_grace(&js), 15);
	CHECK(jobspec_validate(&js, &err) == 0);
	struct jobspec cli = { 0 };
	CHECK(jobspec_set(&cli, "max-restarts", "0", NULL, &err) == 0);
	jobspec_merge(&js, &cli); /* an explicit 0 on the command line wins */
	CHECK_INT(jobspec_run_max_restarts(&js), 0);
	CHECK(jobspec_validate(&js, &err) < 0);
	CHECK_STR(err.msg, "--restart-on 'timeout,error' needs --max-restarts N (how many restarts "
		  "a run may have)");
	jobspec_release(&cli);
	jobspec_release(&js);

	CHECK(parse(&js, "max-restarts: nine\n") < 0);
	CHECK_STR(err.msg, "job.yaml:1:15: invalid max-restarts 'nine': expected a whole number "
		  "from 0 to 1000");
	jobspec_release(&js);

	js.command = xstrdup("true");
	CHECK(jobspec_set(&js, "grace", "70000", NULL, &err) == 0);
	CHECK(jobspec_validate(&js, &err) < 0);
	CHECK_CONTAINS(err.msg, "--grace 70000 is more than 65535 seconds");
	jobspec_release(&js);

	js.command = xstrdup("true");
	CHECK(jobspec_set(&js, "max-restarts", "2", NULL, &err) == 0);
	CHECK(jobspec_set(&js, "signal", "B:USR1@60", NULL, &err) == 0);
	CHECK(jobspec_validate(&js, &err) < 0);
	CHECK_CONTAINS(err.msg, "--signal 'B:USR1@60' and --max-restarts, --stop-signal or --grace "
		       "exclude each other");
	jobspec_release(&js);
	js.command = xstrdup("true");
	CHECK(jobspec_set(&js, "stop-signal", "USR2", NULL, &err) == 0);
	CHECK(jobspec_is_run(&js)); /* a stop signal without restarts: checkpoint, then end */
	CHECK_INT(jobspec_run_max_restarts(&js), 0);
	jobspec_release(&js);
}

/* A sweep: --sweep or --sweep-file (a job file's path beside the job file), built by
 * jobspec_sweep, checked by jobspec_validate. */
static void test_sweep(void)
{
	_cleanup_free_ char *dir = xasprintf("/tmp/test-jobspec-%d", (int)getpid());
	_cleanup_free_ char *path = xasprintf("%s/sw.yaml", dir);
	CHECK(mkdir(dir, 0700) == 0);
	FILE *fp = fopen(path, "w");
	if (!fp)
		abort();
	fputs("list:\n  - {lr: 0.1, seed: 1}\n  - {lr: 0.01, seed: 7}\n", fp);
	fclose(fp);

	/* a job file's relative path is the job file's neighbour; an absolute one stays */
	struct jobspec js = { 0 };
	_cleanup_free_ char *job = xasprintf("%s/job.yaml", dir);
	static const char text[] = "sweep_file: sw.yaml\ncommand: x\n";
	CHECK(jobspec_parse_yaml(&js, job, text, strlen(text), &err) == 0);
	CHECK_STR(js.sweep_file, path);
	CHECK(jobspec_validate(&js, &err) == 0);
	struct sweep sw = SWEEP_INIT;
	CHECK(jobspec_sweep(&js, &sw, &err) == 0);
	CHECK(sw.list);
	CHECK_INT(sw.ntasks, 2);
	CHECK_STR(sweep_value(&sw, 1, 1), "7");
	sweep_release(&sw);
	jobspec_release(&js);
	CHECK(parse(&js, "sweep-file: sub/sw.yaml\n") == 0); /* job.yaml: no directory */
	CHECK_STR(js.sweep_file, "sub/sw.yaml");
	jobspec_release(&js);
	_cleanup_free_ char *abs = xasprintf("sweep-file: %s\n", path);
	CHECK(jobspec_parse_yaml(&js, "elsewhere/job.yaml", abs, strlen(abs), &err) == 0);
	CHECK_STR(js.sweep_file, path);
	jobspec_release(&js);
	CHECK(parse(&js, "sweep-file: [a, b]\n") < 0);
	CHECK_CONTAINS(err.msg, "job.yaml:1:13: 'sweep-file' must be a string, not a list");
	CHECK_STR(try_set("sweep-file", "a\nb"), "invalid --sweep-file 'a?b': expected a path on one line");

	/* the file's errors, with its line and column, at validation */
	js.command = xstrdup("true");
	CHECK(jobspec_set(&js, "sweep-file", path, NULL, &err) == 0);
	fp = fopen(path, "w");
	if (!fp)
		abort();
	fputs("grid:\n  lr: [0.1, {a: 1}]\n", fp);
	fclose(fp);
	CHECK(jobspec_validate(&js, &err) < 0);
	_cleanup_free_ char *where = xasprintf("%s:2:13: a value of 'lr' is a mapping", path);
	CHECK_CONTAINS(err.msg, where);
	CHECK_INT(err.kind, DPE_INPUT);
	unlink(path);
	CHECK(jobspec_validate(&js, &err) < 0);
	CHECK_CONTAINS(err.msg, "cannot read sweep file");
	rmdir(dir);

	/* --sweep and --sweep-file: one of them */
	CHECK(jobspec_set(&js, "sweep", "a=1,2", NULL, &err) == 0);
	CHECK(jobspec_validate(&js, &err) < 0);
	CHECK_CONTAINS(err.msg, "--sweep and --sweep-file '");
	CHECK_CONTAINS(err.msg, "' exclude each other: give the parameters in one of them");
	CHECK(jobspec_sweep(&js, &sw, &err) < 0);
	CHECK_INT(sw.nparams, 0);
	jobspec_release(&js);

	/* --sweep alone, through the same function; --array and --max-parallel checks */
	js.command = xstrdup("true");
	CHECK(jobspec_sweep(&js, &sw, &err) == 0);
	CHECK_INT(sw.ntasks, 0);
	CHECK(jobspec_set(&js, "max-parallel", "2", NULL, &err) == 0);
	CHECK(jobspec_validate(&js, &err) < 0);
	CHECK_CONTAINS(err.msg, "--max-parallel 2 needs --sweep or --sweep-file");
	CHECK(jobspec_set(&js, "sweep", "a=1,2", NULL, &err) == 0);
	CHECK(jobspec_set(&js, "sweep", "b=1..3", NULL, &err) == 0);
	CHECK(jobspec_validate(&js, &err) == 0);
	CHECK(jobspec_sweep(&js, &sw, &err) == 0);
	CHECK_INT(sw.ntasks, 6);
	sweep_release(&sw);
	CHECK(jobspec_set(&js, "array", "0-3", NULL, &err) == 0);
	CHECK(jobspec_validate(&js, &err) < 0);
	CHECK_CONTAINS(err.msg, "--sweep makes the job array itself: drop --array '0-3'");
	jobspec_release(&js);
}

static void test_default_name(void)
{
	static const struct {
		const char *command, *code, *script, *want;
	} cases[] = {
		{ "python train.py", NULL, NULL, "python" },
		{ "  A=1 B=x/y ./bin/train.sh --lr 1", NULL, NULL, "train.sh" },
		{ "\"$(pick)\" x", NULL, NULL, "dispatch" },
		{ "cd /x && make", NULL, NULL, "cd" },
		{ "A=1", NULL, NULL, "dispatch" },
		{ "python x.py", "my repo!", NULL, "myrepo" },
		{ "python x.py", "..", NULL, "python" },
		{ "#!/bin/bash\n", NULL, "jobs/train.sbatch", "train.sbatch" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct jobspec js = { .command = xstrdup(cases[i].command) };
		if (cases[i].script)
			js.sbatch_script = xstrdup(cases[i].script);
		jobspec_default_name(&js, cases[i].code);
		CHECK_STR(js.job_name, cases[i].want);
		jobspec_release(&js);
	}
	struct jobspec js = { .command = xstrdup("python x.py"), .job_name = xstrdup("run 1"),
			      .project = xstrdup("lm"), .group = xstrdup("g") };
	jobspec_default_name(&js, "repo");
	CHECK_STR(js.job_name, "lm-g-run 1");
	jobspec_default_name(&js, "repo"); /* applied once */
	CHECK_STR(js.job_name, "lm-g-run 1");
	jobspec_release(&js);
}

int main(void)
{
	test_default_name();
	test_sweep();
	test_run();
	test_container();
	test_time();
	test_values_name_their_option();
	test_env();
	test_command();
	test_yaml();
	test_yaml_errors();
	test_merge();
	test_validate();
	return unit_done();
}
