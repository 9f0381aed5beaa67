/* SPDX-License-Identifier: MIT */
#include <ctype.h>
#include <stdlib.h>

#include "base/shquote.h"
#include "base/util.h"
#include "gpu/gpu_top.h"
#include "jobs/jobshell.h"
#include "sched/plain/plainjob_ask.h"
#include "sched/slurm/slurm_top.h"

static bool all_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return false;
	return true;
}

const char *jobshell_pick_node(const struct gpu_top_job *j, const char *want)
{
	if (!want)
		return j->n ? j->alloc[0].node : NULL;
	for (size_t i = 0; i < j->n; i++)
		if (streq(j->alloc[i].node, want))
			return j->alloc[i].node;
	if (all_digits(want) && strlen(want) < 9) {
		long k = strtol(want, NULL, 10);
		if (k >= 1 && (size_t)k <= j->n)
			return j->alloc[k - 1].node;
	}
	return NULL;
}

/* The shell, or argv's words. */
static void what_runs(struct strbuf *sb, char *const *argv)
{
	if (argv && argv[0])
		sh_quote_argv(sb, argv);
	else
		strbuf_adds(sb, "\"${SHELL:-/bin/sh}\" -l");
}

void jobshell_slurm_command(struct strbuf *sb, const char *id, const char *node, bool pty,
			    char *const *argv)
{
	strbuf_adds(sb, "exec srun --jobid=");
	sh_quote(sb, id);
	strbuf_adds(sb, " --overlap -N1 -n1 -w ");
	sh_quote(sb, node);
	strbuf_adds(sb, pty ? " --pty " : " ");
	what_runs(sb, argv);
}

void jobshell_plain_command(struct strbuf *sb, const char *id, const char *stage_dir,
			    char *const *argv)
{
	strbuf_adds(sb, "export DISPATCH_JOB_ID=");
	sh_quote(sb, id);
	strbuf_adds(sb, "\ns=");
	sh_quote(sb, stage_dir);
	strbuf_adds(sb,
		"\nif w=$(cat -- \"$s/workdir\" 2>/dev/null) && [ -n \"$w\" ]; then\n"
		"\tcd -- \"$w\" || exit 1\n"
		"else\n"
		"\techo \"dispatch: the job recorded no work dir ($s/workdir): starting in $PWD\" >&2\n"
		"fi\n"
		"exec ");
	what_runs(sb, argv);
}

/* Why a job that does not run has no shell. */
static int not_running(const struct jobshell_request *rq, const char *state, const char *reason,
		       struct dp_error *err)
{
	bool why = reason && *reason;
	return dp_err(err, DPE_FAIL, "job '%s' is %s%s%s%s: dispatch shell needs a running job%s",
		      rq->arg, state, why ? " (reason: " : "", why ? reason : "", why ? ")" : "",
		      streq(state, "PENDING") ? " (dispatch wait --until running waits for it)" : "");
}

/* The SLURM job's state and nodes (scontrol), and the step's command on its node. */
static int slurm_prepare(struct ssh_session *ss, const struct jobshell_request *rq,
			 struct strbuf *cmd, bool *usage, struct dp_error *err)
{
	_cleanup_(gpu_top_job_release) struct gpu_top_job j = { 0 };
	if (slurm_top_job_fetch(ss, rq->id, rq->arg, rq->host, &j, err) < 0)
		return -1;
	if (!j.state || !streq(j.state, "RUNNING"))
		return not_running(rq, j.state ? j.state : "in an unknown state", j.reason, err);
	const char *node = jobshell_pick_node(&j, rq->node);
	if (!node) {
		*usage = true;
		return dp_err(err, DPE_INPUT, "--node '%s': job '%s' runs on %s (give 1 to %zu or one "
			      "of those names)", rq->node, rq->arg, j.nodes, j.n);
	}
	jobshell_slurm_command(cmd, rq->id, node, rq->pty, rq->argv);
	return 0;
}

/* The plain job's state (its stage dir's files), and the command in its work dir. */
static int plain_prepare(struct ssh_session *ss, const struct jobshell_request *rq,
			 struct strbuf *cmd, struct strbuf *remote_err, bool *usage,
			 struct dp_error *err)
{
	if (rq->node && !streq(rq->node, "1") && !streq(rq->node, rq->host)) {
		*usage = true;
		return dp_err(err, DPE_INPUT, "--node '%s': job '%s' runs on one plain host, '%s'",
			      rq->node, rq->arg, rq->host);
	}
	if (!rq->stage_dir)
		return dp_err(err, DPE_NOTFOUND, "job '%s' is not in the ledger: its stage dir on '%s' "
			      "is unknown", rq->arg, rq->host);
	_cleanup_strbuf_ struct strbuf errout = STRBUF_INIT;
	struct plainjob_ref pr = { .id = rq->id, .stage_dir = rq->stage_dir, .pgid = rq->pgid };
	struct plainjob_status *ps;
	size_t n;
	int status;
	if (plainjob_ask_one(ss, &pr, &ps, &n, &errout, &status, err) < 0)
		return -1;
	int r = 0;
	if (n == 0) {
		strbuf_add(remote_err, errout.buf, errout.len);
		r = dp_err(err, DPE_FAIL, "cannot ask '%s' for the state of job '%s' (exit status %d)",
			   rq->host, rq->arg, status);
	} else if (!streq(ps[0].state, "RUNNING")) {
		r = not_running(rq, ps[0].state, ps[0].reason, err);
	} else {
		jobshell_plain_command(cmd, rq->id, rq->stage_dir, rq->argv);
	}
	plainjob_status_free(ps, n);
	return r;
}

int jobshell_prepare(struct ssh_session *ss, bool plain, const struct jobshell_request *rq,
		     struct strbuf *cmd, struct strbuf *remote_err, bool *usage, struct dp_error *err)
{
	*usage = false;
	return plain ? plain_prepare(ss, rq, cmd, remote_err, usage, err)
		     : slurm_prepare(ss, rq, cmd, usage, err);
}
