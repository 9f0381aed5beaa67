/* SPDX-License-Identifier: MIT */
/*
 * Where a job writes its output, and the last lines of it for a job that ended
 * without COMPLETED (wait, status, submit --wait), over the connection the caller
 * already has. Where the file is: SLURM says (`scontrol show job`, patterns filled
 * in) while it knows the job; else SLURM's accounting (sacct's StdOut/StdErr, from
 * 24.05 on; an empty StdErr, in either, means stderr goes to the output file), else
 * the job ledger (sbatch patterns filled in here); plain-host jobs from the ledger.
 */
#include <cjson/cJSON.h>
#include <stdio.h>

#include "dispatch.h"
#include "jobref.h"
#include "jobs/joblog.h"
#include "sched/slurm/slurm.h"
#include "transport/ssh.h"
#include "base/strbuf.h"

/* The "123" and "4" of "123_4" (task NULL without one). */
static void split_task(const char *id, char **base, char **task)
{
	const char *us = strchr(id, '_');
	*base = us ? xstrndup(id, (size_t)(us - id)) : xstrdup(id);
	*task = us ? xstrdup(us + 1) : NULL;
}

int job_log_path(struct ssh_session *ss, const struct jobref *r, enum job_log which, char **path,
		 struct dp_error *err)
{
	_cleanup_strbuf_ struct strbuf cmd = STRBUF_INIT, out = STRBUF_INIT, errout = STRBUF_INIT;
	int status;
	bool want_err = which != JOB_LOG_OUT;
	slurm_job_paths_command(&cmd, r->id);
	if (ssh_exec_capture(ss, cmd.buf, NULL, &out, &errout, &status, err) < 0)
		return -1;
	_cleanup_(slurm_paths_release) struct slurm_paths p;
	slurm_parse_job_paths(out.buf, &p);
	if (p.records > 1)
		return dp_err(err, DPE_INPUT, "job '%s' is an array: name one of its tasks (%s_N)",
			      r->arg, r->id);
	/* SLURM 26.05 leaves StdErr empty when stderr goes to the output (22.05 names
	 * the output file there): the output file, either way. */
	const char *known = want_err && p.records == 1 && !p.err ? p.out : want_err ? p.err : p.out;
	if (known) {
		*path = xstrdup(known);
		return 0;
	}
	_cleanup_free_ char *base = NULL, *task = NULL;
	split_task(r->id, &base, &task);
	if (p.acct_out) {
		/* Accounting's paths (a job SLURM's controller forgot; 24.05 and later):
		 * patterns left in them are filled in as sbatch would have. */
		*path = slurm_expand_pattern(want_err && p.acct_err ? p.acct_err : p.acct_out, base,
					     task, p.acct_name, p.user);
		return 0;
	}
	const char *pattern = !r->in_ledger ? NULL : want_err ? r->rec.err_path : r->rec.log_path;
	if (!pattern && r->in_ledger && which == JOB_LOG_ERR_OR_OUT)
		pattern = r->rec.log_path;
	if (!pattern) {
		if (r->in_ledger && want_err)
			return dp_err(err, DPE_NOTFOUND, "job '%s' has no error file of its own: its "
				      "stderr goes to its output ('dispatch logs %s')", r->arg, r->arg);
		return dp_err(err, DPE_NOTFOUND, "cannot tell where job '%s' writes its output: SLURM "
			      "on '%s' no longer knows the job, its accounting has no paths (SLURM "
			      "before 24.05) and dispatch did not submit it", r->arg, r->host);
	}
	*path = slurm_expand_pattern(pattern, base, task, r->rec.name, p.user);
	return 0;
}

/* ---- the tail of a failed job ---- */

void job_tail_fetch(struct ssh_session *ss, const struct jobref *r, bool plain,
		    struct job_tail *t)
{
	struct dp_error err = { 0 };
	*t = (struct job_tail){ .fetched = true };
	if (plain) {
		if (r->in_ledger && r->rec.log_path)
			t->path = xstrdup(r->rec.log_path);
		else
			t->error = xstrdup("dispatch did not submit it: its output file is not known");
	} else if (job_log_path(ss, r, JOB_LOG_ERR_OR_OUT, &t->path, &err) < 0) {
		t->error = xstrdup(err.msg);
	}
	if (!t->path)
		return;
	_cleanup_strbuf_ struct strbuf cmd = STRBUF_INIT, out = STRBUF_INIT, errout = STRBUF_INIT;
	int status;
	joblog_tail_command(&cmd, t->path, JOBLOG_TAIL_LINES);
	if (ssh_exec_capture(ss, cmd.buf, NULL, &out, &errout, &status, &err) < 0)
		t->error = xstrdup(err.msg);
	else if (status == JOBLOG_NO_FILE)
		t->error = xstrdup("the job wrote no such file");
	else if (status != 0 || (!out.len && errout.len))
		t->error = xasprintf("cannot read it (exit status %d)%s%.*s", status,
				     errout.len ? ": " : "", (int)strcspn(errout.buf, "\n"), errout.buf);
	else
		t->text = strbuf_detach(&out);
}

void job_tail_release(struct job_tail *t)
{
	free(t->path);
	free(t->text);
	free(t->error);
	*t = (struct job_tail){ 0 };
}

void job_tail_print(const struct job_tail *t, const char *job)
{
	if (!t->fetched)
		return;
	if (!t->text) {
		printf("  (no log tail for %s%s%s: %s)\n", job, t->path ? " from " : "",
		       t->path ? t->path : "", t->error ? t->error : "not fetched");
		return;
	}
	if (!t->text[0]) {
		printf("  (no log tail for %s: %s is empty)\n", job, t->path);
		return;
	}
	size_t n = 0;
	for (const char *p = t->text; *p; p++)
		n += *p == '\n';
	if (t->text[0] && t->text[strlen(t->text) - 1] != '\n')
		n++;
	printf("  last %zu line%s of %s:\n", n, n == 1 ? "" : "s", t->path);
	for (const char *p = t->text; *p;) {
		size_t len = strcspn(p, "\n");
		printf("  | %.*s\n", (int)len, p);
		p += len + (p[len] == '\n');
	}
}

void job_tail_json(cJSON *o, const struct job_tail *t)
{
	json_add_str_or_null(o, "log_path", t->fetched ? t->path : NULL);
	if (!t->text) {
		cJSON_AddNullToObject(o, "log_tail");
	} else {
		cJSON *a = cJSON_AddArrayToObject(o, "log_tail");
		for (const char *p = t->text; *p;) {
			size_t len = strcspn(p, "\n");
			_cleanup_free_ char *line = xstrndup(p, len);
			cJSON_AddItemToArray(a, cJSON_CreateString(line));
			p += len + (p[len] == '\n');
		}
	}
	json_add_str_or_null(o, "log_tail_error", t->fetched ? t->error : NULL);
}
