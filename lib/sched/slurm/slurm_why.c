/* SPDX-License-Identifier: MIT */
#include "sched/slurm/slurm_why.h"

#include <string.h>

#include "base/util.h"
#include "sched/slurm/slurm_end.h"

static const struct {
	const char *reason, *words;
} pending[] = {
	{ "Resources", "waiting for resources: the nodes that fit the request are busy" },
	{ "Priority", "waiting behind jobs of higher priority in the partition" },
	{ "Dependency", "waiting for the jobs it depends on (--dependency) to end" },
	{ "DependencyNeverSatisfied", "its dependency can never be satisfied: cancel it" },
	{ "JobHeldUser", "held by its user: 'scontrol release' lets it run" },
	{ "JobHeldAdmin", "held by an administrator" },
	{ "BeginTime", "its --begin time has not come yet" },
	{ "ReqNodeNotAvail", "a node it asked for (or needs) is down, drained or reserved" },
	{ "PartitionTimeLimit", "its --time is longer than the partition allows: it will never start" },
	{ "PartitionNodeLimit", "it asks for more nodes than the partition allows" },
	{ "PartitionDown", "the partition is down" },
	{ "PartitionInactive", "the partition is inactive" },
	{ "NodeDown", "a node it needs is down" },
	{ "BadConstraints", "no node matches its constraints: it will never start" },
	{ "InvalidAccount", "its account is not valid" },
	{ "InvalidQOS", "its QOS is not valid" },
	{ "Reservation", "waiting for its reservation to start" },
	{ "Licenses", "waiting for licenses" },
	{ "AssocGrpGRES", "its association's GRES (GPU) limit is reached" },
	{ "AssocMaxJobsLimit", "its association's limit on running jobs is reached" },
	{ "AssocGrpCpuLimit", "its association's CPU limit is reached" },
	{ "QOSMaxGpuPerUserLimit", "the QOS limit on GPUs per user is reached (your running jobs hold them)" },
	{ "QOSMaxGRESPerUser", "the QOS limit on GPUs (GRES) per user is reached (your running jobs hold them)" },
	{ "QOSMaxGRESPerJob", "it asks for more GPUs (GRES) than its QOS allows a job: it will never start" },
	{ "AssocMaxGRESPerJob", "it asks for more GPUs (GRES) than its association allows a job: it will never start" },
	{ "QOSMaxJobsPerUserLimit", "the QOS limit on running jobs per user is reached" },
	{ "QOSMaxCpuPerUserLimit", "the QOS limit on CPUs per user is reached" },
	{ "QOSMaxNodePerUserLimit", "the QOS limit on nodes per user is reached" },
	{ "QOSMaxWallDurationPerJobLimit", "its --time is over the QOS's limit per job" },
	{ "QOSGrpGRES", "the QOS's GRES (GPU) limit for all its users is reached" },
	{ "QOSGrpCpuLimit", "the QOS's CPU limit for all its users is reached" },
	{ "QOSJobLimit", "the QOS's limit on jobs is reached" },
	{ "launch failed requeued held", "its launch failed and it was requeued held: 'scontrol release'" },
};

const char *slurm_pending_words(const char *reason)
{
	if (!reason)
		return NULL;
	for (size_t i = 0; i < ARRAY_SIZE(pending); i++)
		if (streq(reason, pending[i].reason))
			return pending[i].words;
	/* "ReqNodeNotAvail, UnavailableNodes:node2" */
	if (startswith(reason, "ReqNodeNotAvail"))
		return pending[7].words;
	return NULL;
}

const char *slurm_signal_name(int s)
{
	static const char *const names[] = {
		[1] = "HUP", [2] = "INT", [3] = "QUIT", [4] = "ILL", [6] = "ABRT", [7] = "BUS",
		[8] = "FPE", [9] = "KILL", [10] = "USR1", [11] = "SEGV", [12] = "USR2",
		[13] = "PIPE", [14] = "ALRM", [15] = "TERM", [24] = "XCPU", [25] = "XFSZ",
	};
	return s > 0 && (size_t)s < ARRAY_SIZE(names) && names[s] ? names[s] : NULL;
}

static char *killed_by(int signal)
{
	const char *n = slurm_signal_name(signal);
	return n ? xasprintf("killed by signal %d (SIG%s)", signal, n)
		 : xasprintf("killed by signal %d", signal);
}

/* "ran out of memory: MaxRSS 309.8 MiB of 100.0 MiB limit, on node1, step batch; ..." */
static char *oom_words(const struct slurm_why_job *j)
{
	static const char *const what = "killed for using more than its --mem";
	if (j->max_rss <= 0 || j->mem_limit <= 0)
		return xasprintf("ran out of memory: %s", what);
	_cleanup_free_ char *rss = slurm_human_bytes(j->max_rss);
	_cleanup_free_ char *limit = slurm_human_bytes(j->mem_limit);
	return xasprintf("ran out of memory: MaxRSS %s of %s limit%s%s%s%s; %s", rss, limit,
			 j->rss_node && *j->rss_node ? ", on " : "",
			 j->rss_node && *j->rss_node ? j->rss_node : "",
			 j->rss_step && *j->rss_step ? ", step " : "",
			 j->rss_step && *j->rss_step ? j->rss_step : "", what);
}

char *slurm_why(const struct slurm_why_job *j)
{
	const char *state = j->state, *reason = j->reason, *nodes = j->nodes;
	int exit_code = j->exit_code, signal = j->signal;
	if (!state)
		return NULL;
	if (streq(state, "PENDING")) {
		const char *w = slurm_pending_words(reason);
		if (w)
			return xasprintf("%s (%s)", w, reason);
		return reason && *reason && !streq(reason, "None") ? xasprintf("pending: %s", reason)
								 : NULL;
	}
	if (slurm_why_oom(j))
		return oom_words(j);
	if (streq(state, "TIMEOUT"))
		return j->elapsed && *j->elapsed && j->time_limit && *j->time_limit
			       ? xasprintf("reached its time limit (--time) and was killed: ran %s "
					   "of %s", j->elapsed, j->time_limit)
			       : xstrdup("reached its time limit (--time) and was killed");
	if (streq(state, "NODE_FAIL") && j->failed_nodes && *j->failed_nodes)
		return xasprintf("a node it ran on failed: %s", j->failed_nodes);
	if (streq(state, "NODE_FAIL"))
		return nodes && *nodes && !streq(nodes, "None assigned")
			       ? xasprintf("a node it ran on failed (%s)", nodes)
			       : xstrdup("a node it ran on failed");
	if (streq(state, "PREEMPTED"))
		return xstrdup("preempted by a job of higher priority");
	if (streq(state, "CANCELLED") && j->cancelled_by && *j->cancelled_by &&
	    j->cancelled_by_name && *j->cancelled_by_name)
		return xasprintf("cancelled by %s (uid %s)", j->cancelled_by_name, j->cancelled_by);
	if (streq(state, "CANCELLED"))
		return j->cancelled_by && *j->cancelled_by
			       ? xasprintf("cancelled by uid %s (scancel)", j->cancelled_by)
			       : xstrdup("cancelled (scancel, or an administrator)");
	if (streq(state, "BOOT_FAIL"))
		return xstrdup("its node failed to boot");
	if (streq(state, "DEADLINE"))
		return xstrdup("reached its --deadline");
	if (streq(state, "FAILED") || streq(state, "UNKNOWN")) {
		if (signal > 0)
			return killed_by(signal);
		if (exit_code > 0)
			return xasprintf("its script exited with code %d", exit_code);
		return streq(state, "FAILED") ? xstrdup("failed (SLURM gave no exit code)") : NULL;
	}
	return NULL;
}

bool slurm_why_oom(const struct slurm_why_job *j)
{
	if (!j->state)
		return false;
	return streq(j->state, "OUT_OF_MEMORY") ||
	       (streq(j->state, "FAILED") && j->max_rss > 0 && j->mem_limit > 0 &&
		j->max_rss > j->mem_limit);
}

char *slurm_why_plain(const char *state, int exit_code, int signal)
{
	if (!state)
		return NULL;
	if (streq(state, "FAILED")) {
		if (signal > 0)
			return killed_by(signal);
		return exit_code > 0 ? xasprintf("its command exited with code %d", exit_code)
				     : xstrdup("failed (no exit code)");
	}
	if (streq(state, "CANCELLED"))
		return xstrdup("cancelled (dispatch cancel)");
	if (streq(state, "TIMEOUT"))
		return xstrdup("reached its time limit (--time) and was stopped");
	if (streq(state, "LOST"))
		return xstrdup("its launcher is gone and left no exit status: killed with "
			       "SIGKILL, or the host rebooted");
	return NULL;
}
