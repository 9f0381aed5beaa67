/* SPDX-License-Identifier: MIT */
/* Why a job waits or ended: the pending-reason table (an unknown reason as SLURM
 * gives it) and the end states with exit code and signal. */
#include "slurm/slurm_why.h"
#include "unit.h"

static void check(const char *state, const char *reason, int code, int sig, const char *nodes,
		  const char *want)
{
	char *got = slurm_why(state, reason, code, sig, nodes);
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
	check("FAILED", "None", 0, 9, "node1", "killed by signal 9 (KILL)");
	check("FAILED", "None", 0, 64, "node1", "killed by signal 64");
	check("NODE_FAIL", "None", 0, 0, "node2", "a node it ran on failed (node2)");
	check("OUT_OF_MEMORY", "None", 0, 125, "node1", "ran out of memory: killed for using more than its --mem");
	check("TIMEOUT", "None", 0, 0, "node1", "reached its time limit (--time) and was killed");
	check("CANCELLED", "None", 0, 15, "node1", "cancelled (scancel, or an administrator)");
	check(NULL, NULL, -1, -1, NULL, NULL);
	return unit_done();
}
