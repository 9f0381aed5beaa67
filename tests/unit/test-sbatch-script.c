/* SPDX-License-Identifier: MIT */
/* An existing sbatch script as a job (lib/inventory/sbatch_script.h): the migration
 * guide's script read into job options and passed-through directives, the forms
 * sbatch reads (several options a line, short options joined or apart, quotes,
 * trailing comments, directives only before the first command), the refusals with
 * FILE:LINE:COL, and the command line winning over the script. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/util.h"
#include "inventory/jobspec.h"
#include "inventory/sbatch_script.h"
#include "unit.h"

static int parse(struct jobspec *js, const char *text, struct dp_error *err)
{
	return sbatch_script_parse(js, "train.sbatch", text, strlen(text), err);
}

/* ../shared/seeds/003's first script, as users bring it */
static void test_guide(void)
{
	static const char text[] =
		"#!/bin/bash\n"
		"#SBATCH --job-name=train-model\n"
		"#SBATCH --nodes=1\n"
		"#SBATCH --ntasks=1\n"
		"#SBATCH --cpus-per-task=8\n"
		"#SBATCH --gres=gpu:1\n"
		"#SBATCH --mem=32G\n"
		"#SBATCH --time=2:00:00\n"
		"#SBATCH --partition=gpu\n"
		"#SBATCH --output=train-%j.out\n"
		"#SBATCH --error=train-%j.err\n"
		"\n"
		"export LEARNING_RATE=0.001\n"
		"#SBATCH --nodes=4\n"
		"module load python/3.9\n"
		"srun python train.py --batch-size=64\n";
	struct jobspec js = { 0 };
	struct dp_error err = { 0 };
	CHECK_INT(parse(&js, text, &err), 0);
	CHECK_STR(js.job_name, "train-model");
	CHECK_INT(js.nodes, 1); /* (not the #SBATCH after the first command) */
	CHECK_INT(js.ntasks, 1);
	CHECK_INT(js.cpus_per_task, 8);
	CHECK_STR(js.mem, "32G");
	CHECK_STR(js.time, "2:00:00");
	CHECK_STR(js.partition, "gpu");
	CHECK_STR(js.output, "train-%j.out");
	CHECK_STR(js.error, "train-%j.err");
	CHECK(js.sbatch && streq(js.sbatch[0], "--gres=gpu:1") && !js.sbatch[1]);
	CHECK_STR(js.command, text);
	CHECK(jobspec_launch_once(&js));
	jobspec_release(&js);
}

static void test_forms(void)
{
	struct jobspec js = { 0 };
	struct dp_error err = { 0 };
	CHECK_INT(parse(&js, "#!/usr/bin/env bash\n"
			     "  #SBATCH -N 2 -t 10 -pgpu   # two nodes, ten minutes\n"
			     "#SBATCH --ntasks-per-node 4 --exclusive --no-requeue\n"
			     "#SBATCH --nodes=2-4 --gpus-per-node=a100:2 -w node1\n"
			     "#SBATCH --comment \"two words\" -J 'my job'\n"
			     "#SBATCHX --qos=high\n"
			     "# SBATCH --account=a\n"
			     "true\n", &err), 0);
	CHECK_INT(js.nodes, 2);
	CHECK_STR(js.time, "10");
	CHECK_STR(js.partition, "gpu");
	CHECK_INT(js.ntasks_per_node, 4);
	CHECK_INT(js.exclusive, 1);
	CHECK_INT(js.requeue, -1);
	CHECK_STR(js.job_name, "my job");
	CHECK(!js.qos && !js.account);
	CHECK(js.sbatch && js.sbatch[0] && js.sbatch[1] && js.sbatch[2] && js.sbatch[3] && !js.sbatch[4]);
	if (js.sbatch && js.sbatch[3]) {
		CHECK_STR(js.sbatch[0], "--nodes=2-4");
		CHECK_STR(js.sbatch[1], "--gpus-per-node=a100:2");
		CHECK_STR(js.sbatch[2], "-w node1");
		CHECK_STR(js.sbatch[3], "--comment=two words");
	}
	jobspec_release(&js);
}

static void test_refusals(void)
{
	static const struct {
		const char *text, *msg;
	} bad[] = {
		{ "#SBATCH -N 2\ntrue\n", "train.sbatch:1:1: the first line must be #!" },
		{ "", "train.sbatch:1:1: the first line must be #!" },
		{ "#!/usr/bin/python3\n", "train.sbatch:1:1: the script runs with 'python3'" },
		{ "#!/usr/bin/env -S python3 -u\n", "runs with 'python3'" },
		{ "#!/bin/bash\n\n#SBATCH  --comment='x\n", "train.sbatch:3:10: a quote is not closed" },
		{ "#!/bin/bash\n#SBATCH nodes=2\n", "train.sbatch:2:9: 'nodes=2' is not an sbatch option" },
		{ "#!/bin/bash\n#SBATCH --time=1:00 -\n", "train.sbatch:2:9: '-' is not an sbatch option" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		struct jobspec js = { 0 };
		struct dp_error err = { 0 };
		CHECK_INT(parse(&js, bad[i].text, &err), -1);
		CHECK_CONTAINS(err.msg, bad[i].msg);
		jobspec_release(&js);
	}
	struct jobspec js = { 0 };
	struct dp_error err = { 0 };
	CHECK_INT(sbatch_script_parse(&js, "nul", "#!/bin/sh\n\0x", 12, &err), -1);
	CHECK_CONTAINS(err.msg, "NUL");
	jobspec_release(&js);
}

/* The command line (js as collect() merged it) wins over the script's directives. */
static void test_apply(void)
{
	char path[] = "/tmp/test-sbatch-script-XXXXXX";
	int fd = mkstemp(path);
	static const char text[] = "#!/bin/bash\n#SBATCH -N 2 -t 30 -J guide\nsrun true\n";
	CHECK(fd >= 0 && write(fd, text, strlen(text)) == (ssize_t)strlen(text));
	close(fd);
	struct jobspec js = { 0 };
	struct dp_error err = { 0 };
	CHECK_INT(jobspec_apply_sbatch_script(&js, &err), 0); /* none named */
	CHECK(!js.command);
	CHECK_INT(jobspec_set(&js, "sbatch-script", path, NULL, &err), 0);
	CHECK_INT(jobspec_set(&js, "nodes", "4", NULL, &err), 0);
	CHECK_INT(jobspec_set(&js, "launch", "per-node", NULL, &err), 0);
	CHECK_INT(jobspec_apply_sbatch_script(&js, &err), 0);
	CHECK_INT(js.nodes, 4);
	CHECK_STR(js.time, "30");
	CHECK_STR(js.job_name, "guide");
	CHECK_STR(js.command, text);
	CHECK(!jobspec_launch_once(&js)); /* --launch per-node given */
	/* a value dispatch does not read goes to sbatch as written (sbatch says) */
	struct jobspec raw = { 0 };
	CHECK_INT(parse(&raw, "#!/bin/sh\n#SBATCH --mem=$((2))G\n", &err), 0);
	CHECK(!raw.mem && raw.sbatch && streq(raw.sbatch[0], "--mem=$((2))G"));
	jobspec_release(&raw);
	CHECK_INT(jobspec_apply_sbatch_script(&js, &err), -1); /* now it has a command */
	CHECK_CONTAINS(err.msg, "is the command: give no other");
	jobspec_release(&js);
	unlink(path);
}

int main(void)
{
	test_guide();
	test_forms();
	test_refusals();
	test_apply();
	return unit_done();
}
