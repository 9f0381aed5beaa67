/* SPDX-License-Identifier: MIT */
/* Why a job waits or ended: the pending-reason table (an unknown reason as SLURM
 * gives it) and the end states with exit code and signal. */
#include "sched/slurm/slurm_why.h"
#include "unit.h"

static void check(const char *state, const char *reason, int code, int sig, const char *nodes,
		  const char *want)
{
	struct slurm_why_job j = { .state = state, .reason = reason, .exit_code = code,
				   .signal = sig, .nodes = nodes };
	char *got = slurm_why(&j);
	if (want)
		CHECK_STR(got, want);
	else
		CHECK(got == NULL);
	free(got);
}

int main(void)
{
	CHECK_CONTAINS(slurm_pending_words("Resources"), "busy");
	CHECK_CONTAINS(slurm_pending_words("ReqNodeNotAvail, UnavailableNodes:node2"), "drained");
	CHECK(slurm_pending_words("SomethingNew") == NULL);
	check("PENDING", "JobHeldUser", -1, -1, "", "held by its user: 'scontrol release' lets it run (JobHeldUser)");
	check("PENDING", "SomethingNew", -1, -1, "", "pending: SomethingNew");
	check("PENDING", "None", -1, -1, "", NULL);
	check("RUNNING", "None", -1, -1, "node1", NULL);
	check("COMPLETED", "None", 0, 0, "node1", NULL);
	check("FAILED", "NonZeroExitCode", 3, 0, "node1", "its script exited with code 3");
	check("FAILED", "None", 0, 9, "node1", "killed by signal 9 (SIGKILL)");
	check("FAILED", "None", 0, 64, "node1", "killed by signal 64");
	check("NODE_FAIL", "None", 0, 0, "node2", "a node it ran on failed (node2)");
	check("OUT_OF_MEMORY", "None", 0, 125, "node1", "ran out of memory: killed for using more than its --mem");
	check("TIMEOUT", "None", 0, 0, "node1", "reached its time limit (--time) and was killed");
	check("CANCELLED", "None", 0, 15, "node1", "cancelled (scancel, or an administrator)");
	check(NULL, NULL, -1, -1, NULL, NULL);
	/* the elapsed time against the limit, who cancelled (sacct's "CANCELLED by 1001") */
	struct slurm_why_job t = { .state = "TIMEOUT", .exit_code = 0, .signal = 1,
				   .elapsed = "2:01", .time_limit = "2:00" };
	char *got = slurm_why(&t);
	CHECK_STR(got, "reached its time limit (--time) and was killed: ran 2:01 of 2:00");
	free(got);
	struct slurm_why_job c = { .state = "CANCELLED", .signal = 15, .cancelled_by = "1001" };
	got = slurm_why(&c);
	CHECK_STR(got, "cancelled by uid 1001 (scancel)");
	free(got);
	return unit_done();
}
