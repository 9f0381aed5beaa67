/* SPDX-License-Identifier: MIT */
/*
 * dispatch logs JOB [-f] [--stderr]: the job's output file, printed from its host or
 * followed until the job ends, over one connection. Where the file is: job_log_path
 * (cmd/job-tail.c).
 */
#include <stdio.h>

#include "dispatch.h"
#include "inventory/inventory.h"
#include "jobs/joblog.h"
#include "jobref.h"
#include "jobs/sweeps.h"
#include "ledger.h"
#include "transport/ssh.h"

static const char *opt_host;
static bool opt_follow, opt_stderr;
static int opt_task = -1;

static const struct dp_option logs_options[] = {
	OPT_STRING('H', "host", &opt_host, "HOST", "the host of a job given by bare ID", "host"),
	OPT_BOOL('f', "follow", &opt_follow, "print new output as it comes, until the job ends"),
	OPT_BOOL(0, "stderr", &opt_stderr, "the job's error file (sbatch --error) instead of its output"),
	OPT_INT(0, "task", &opt_task, "K", "of a SWEEP: its task K (0, 1, ...)", 0, 99999),
	OPT_END,
};

static int to_stdout(void *data, const char *buf, size_t len)
{
	(void)data;
	if (fwrite(buf, 1, len, stdout) != len || fflush(stdout) != 0)
		return -1;
	return 0;
}

static int to_stderr(void *data, const char *buf, size_t len)
{
	(void)data;
	if (fwrite(buf, 1, len, stderr) != len)
		return -1;
	return 0;
}

/* The job that ran task k of sweep arg last: "ID_T@HOST" into *job; 0 or the exit
 * status (printed). */
static int sweep_task_job(const struct dp_ctx *ctx, const char *arg, int k, char **job)
{
	struct dp_error err = { 0 };
	_cleanup_ledger_ struct ledger *l = NULL;
	_cleanup_free_ char *id = NULL;
	struct ledger_job *rows = NULL;
	size_t n = 0;
	if (k < 0)
		return usage_error(ctx, "'%s' is a sweep: say which task with --task K", arg);
	if (ledger_open(NULL, &l, &err) < 0 || sweeps_resolve(l, arg, &id, &err) < 0 ||
	    ledger_find_sweep(l, id, &rows, &n, &err) < 0)
		return report_error(&err);
	const struct ledger_job *row = sweeps_row_of(rows, n, (size_t)k);
	int r = 0;
	if (!row) {
		error_msg("sweep %s has no task %d (its tasks: 0 to %ld)", id, k,
			  n ? rows[0].sweep_size - 1 : -1);
		r = DPE_NOTFOUND;
	} else {
		_cleanup_free_ char *task = sweeps_task_job(row, (size_t)k);
		*job = xasprintf("%s@%s", task, row->host);
	}
	ledger_jobs_free(rows, n);
	return r;
}

static int cmd_logs(struct dp_ctx *ctx, const struct dp_args *args)
{
	const char *arg = args->pos[0];
	if (!sweeps_is_ref(arg)) {
		if (opt_task >= 0)
			return usage_error(ctx, "--task %d picks a task of a SWEEP; '%s' is a job "
					   "(an array's task: ID_TASK)", opt_task, arg);
		return logs_print(ctx, arg, opt_host, opt_follow, opt_stderr);
	}
	_cleanup_free_ char *job = NULL;
	int r = sweep_task_job(ctx, arg, opt_task, &job);
	return r ? r : logs_print(ctx, job, NULL, opt_follow, opt_stderr);
}

int logs_print(struct dp_ctx *ctx, const char *job, const char *host_opt, bool follow,
	       bool want_err)
{
	struct dp_error err = { 0 };
	char *const jobs[] = { (char *)job, NULL };
	_cleanup_(job_set_release) struct job_set set = { 0 };
	int r = job_args_resolve(ctx, jobs, 1, host_opt, &set);
	if (r)
		return r;
	const struct jobref *ref = &set.refs[0];
	bool plain = job_is_plain(ctx, ref);
	_cleanup_free_ char *stage = plain ? job_stage_dir(ref) : NULL;
	if (plain && (!stage || !ref->rec.log_path)) {
		error_msg("job '%s' not found on '%s': dispatch did not submit it", ref->arg, ref->host);
		return DPE_NOTFOUND;
	}
	if (plain && want_err) {
		error_msg("job '%s' runs on a plain host, where its stderr goes to its output file "
			  "('dispatch logs %s')", ref->arg, ref->arg);
		return DPE_NOTFOUND;
	}

	_cleanup_ssh_session_ struct ssh_session *ss = NULL;
	if (session_open(ctx, inventory_ssh_destination(ctx->inv, ref->host), &ss, &err) < 0)
		return report_error(&err);
	_cleanup_free_ char *path = NULL;
	if (plain) {
		path = xstrdup(ref->rec.log_path);
	} else {
		if (job_log_path(ss, ref, want_err ? JOB_LOG_ERR : JOB_LOG_OUT, &path, &err) < 0)
			return err.kind == DPE_INPUT ? usage_error(ctx, "%s", err.msg) : report_error(&err);
	}
	info_msg(ctx, "%s: %s", ref->host, path);

	struct joblog_request rq = { .path = path, .follow = follow, .id = ref->id,
				     .stage_dir = stage, .pgid = ref->rec.pid };
	int status;
	if (joblog_stream(ss, &rq, to_stdout, to_stderr, NULL, &status, &err) < 0)
		return report_error(&err);
	if (status == JOBLOG_NO_FILE) {
		error_msg("no file '%s' on '%s'%s", path, ref->host,
			  follow ? ": the job ended without writing it"
				 : " (yet: the job may not have started; -f waits for it)");
		return DPE_NOTFOUND;
	}
	if (status != 0) {
		error_msg("cannot read '%s' on '%s' (exit status %d)", path, ref->host, status);
		return DPE_FAIL;
	}
	return 0;
}

const struct dispatch_cmd dispatch_cmd_logs = {
	.name = "logs",
	.summary = "print or follow a job's output file",
	.usage = "[-H HOST] [-f] [--stderr] JOB | --task K SWEEP",
	.description =
		"Prints the job's output file from its host; with -f, follows it until the job\n"
		"ends, over one connection. The path comes from SLURM (scontrol) while it knows\n"
		"the job, else from the job ledger; plain-host jobs from the ledger. Of a SWEEP,\n"
		"--task K prints the output of its task K (its last run, after a --retry).",
	.opts = logs_options,
	.min_args = 1,
	.max_args = 1,
	.flags = CMD_WANTS_INVENTORY | CMD_NEEDS_SSH,
	.fn = cmd_logs,
};
