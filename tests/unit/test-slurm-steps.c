/* SPDX-License-Identifier: MIT */
/* status --steps: sacct's per-step rows (captured and crafted) and its sizes. */
#include "sched/slurm/slurm.h"
#include "sched/slurm/slurm_steps.h"
#include "unit.h"

int main(void)
{
	char *ids[] = { "177", "11_2", NULL };
	struct strbuf sb = STRBUF_INIT;
	slurm_steps_command(&sb, ids);
	CHECK_CONTAINS(sb.buf, "echo dispatch-steps\n");
	CHECK_CONTAINS(sb.buf, "sacct -n -P -j '177,11_2' -o 'JobID,State,ExitCode,Elapsed,MaxRSS,"
			       "MaxVMSize,AveCPU,TRESUsageInTot,NodeList,JobName'\n");
	CHECK_SH_N("steps command", sb.buf);
	strbuf_release(&sb);

	char *out = unit_fixture("slurm", "steps-22.05.out");
	struct job_step *st;
	size_t n = slurm_parse_steps(out, &st);
	CHECK_INT(n, 8);
	CHECK_INT(slurm_parse_exit(out, "steps"), 0);
	CHECK_STR(st[3].id, "177");
	CHECK_STR(st[3].step, "");
	CHECK_STR(st[3].name, "wtint-steps");
	CHECK_STR(st[3].nodes, "node[1-2]");
	CHECK_INT(st[3].max_rss_bytes, -1);
	CHECK_STR(st[4].step, "batch");
	CHECK_STR(st[4].job, "177");
	CHECK_STR(st[6].id, "177.1");
	CHECK_STR(st[6].name, "python3");
	CHECK_STR(st[6].max_rss, "212904K");
	CHECK_INT(st[6].max_rss_bytes, 212904LL * 1024);
	CHECK_INT(st[6].max_vmsize_bytes, 218764LL * 1024);
	CHECK_STR(st[6].ave_cpu, "00:00:00");
	CHECK_CONTAINS(st[6].tres_usage, "mem=425808K");
	CHECK_INT(st[6].exit_code, 0);
	job_steps_free(st, n);
	free(out);

	out = unit_fixture("slurm", "steps-crafted.out");
	n = slurm_parse_steps(out, &st);
	CHECK_INT(n, 4);
	CHECK_STR(st[0].name, "odd|name");
	CHECK_STR(st[0].state, "FAILED");
	CHECK_INT(st[0].exit_code, 3);
	CHECK_INT(st[1].max_rss_bytes, 1572864);
	CHECK_INT(st[1].max_vmsize_bytes, 2LL << 30);
	CHECK_STR(st[2].state, "CANCELLED");
	CHECK_INT(st[2].exit_signal, 15);
	CHECK_STR(st[3].job, "201_4");
	CHECK_STR(st[3].step, "extern");
	CHECK_INT(st[3].max_rss_bytes, 0);
	job_steps_free(st, n);
	free(out);
	/* Rows before the marker (a banner that looks like one) are not rows. */
	CHECK_INT(slurm_parse_steps("1|RUNNING|0:0|1:00|||||n|x\n", &st), 0);
	free(st);

	CHECK_INT(slurm_parse_size("1234"), 1234);
	CHECK_INT(slurm_parse_size("10K"), 10240);
	CHECK_INT(slurm_parse_size("1T"), 1LL << 40);
	CHECK_INT(slurm_parse_size(""), -1);
	CHECK_INT(slurm_parse_size("-1K"), -1);
	CHECK_INT(slurm_parse_size("12X"), -1);
	CHECK_INT(slurm_parse_size("1KK"), -1);
	CHECK_INT(slurm_parse_size("99999999P"), -1);
	return unit_done();
}
