/* SPDX-License-Identifier: MIT */
/*
 * The plain-host backend's table of operations (lib/sched/sched.h): each job's stage
 * dir read for where it stands (plainjob_status_command), TERM to its process group
 * to cancel it; no accounting, so no end detail and no pending numbers.
 */
#include <stdlib.h>
#include <string.h>

#include "base/strbuf.h"
#include "base/util.h"
#include "inventory/inventory.h"
#include "jobs/job_state.h"
#include "remote/remote.h"
#include "sched/plain/plainjob.h"
#include "sched/sched.h"
#include "sched/plain/plain_top.h"
#include "sched/slurm/slurm_why.h"

struct sched_answer {
	struct plainjob_status *jobs;
	size_t n;
};

static bool can_query(const struct sched_job *j)
{
	return j->stage_dir != NULL;
}

static struct plainjob_ref *refs_of(const struct sched_job *jobs, size_t n)
{
	struct plainjob_ref *refs = xcalloc(n + 1, sizeof(*refs));
	for (size_t i = 0; i < n; i++)
		refs[i] = (struct plainjob_ref){ .id = jobs[i].id, .stage_dir = jobs[i].stage_dir,
						 .pgid = jobs[i].pgid };
	return refs;
}

static void query_script(struct remote_script *rs, const struct sched_job *jobs, size_t n)
{
	if (!n)
		return;
	_cleanup_free_ struct plainjob_ref *refs = refs_of(jobs, n);
	plainjob_status_command(remote_section(rs, REMOTE_PLAIN_STATUS), refs, n);
}

static bool query_failed(const struct remote_script *rs, const struct remote_reply *rr,
			 const char **tool, int *tool_exit)
{
	(void)rs, (void)rr, (void)tool, (void)tool_exit;
	return false;
}

static struct sched_answer *parse(const struct remote_reply *rr)
{
	struct sched_answer *a = xcalloc(1, sizeof(*a));
	a->n = plainjob_parse_status(rr->out.buf, &a->jobs);
	return a;
}

static void answer_free(struct sched_answer *a)
{
	if (!a)
		return;
	plainjob_status_free(a->jobs, a->n);
	free(a);
}

static void not_found(const struct sched_job *j, const char *host, struct dp_error *err)
{
	dp_err(err, DPE_NOTFOUND, "job '%s' not found on '%s'%s", j->id, host,
	       j->in_ledger ? ": no answer for its stage dir" : ": dispatch did not submit it");
}

static size_t query_rows(const struct sched_answer *a, const struct sched_job *j,
			 const char *host, struct job_state **rows, size_t *n,
			 struct dp_error *err)
{
	for (size_t k = 0; a && k < a->n; k++) {
		const struct plainjob_status *p = &a->jobs[k];
		if (!streq(p->id, j->id))
			continue;
		*rows = xrealloc(*rows, (*n + 1) * sizeof(**rows));
		(*rows)[(*n)++] = (struct job_state){
			.id = xstrdup(j->id),
			.sched = &sched_plain,
			.phase = job_phase_of(p->state),
			.state = xstrdup(p->state),
			.reason = xstrdup(p->reason),
			.exit_code = p->exit_code,
			.signal = p->exit_signal,
			.elapsed = p->elapsed >= 0 ? p->elapsed : JOB_TIME_UNKNOWN,
			.limit = JOB_TIME_UNLIMITED,
			.nodes = xstrdup(host),
			.gpus = xstrdup(p->gpus),
		};
		return 1;
	}
	not_found(j, host, err);
	return 0;
}

static char *why(const struct job_state *js)
{
	return slurm_why_plain(js->state, js->exit_code, js->signal);
}

static int path_take(const struct remote_reply *rr, const struct sched_job *j, size_t i,
		     enum job_log which, char **path, struct dp_error *err)
{
	(void)rr, (void)i, (void)which;
	if (j->in_ledger && j->log_path) {
		*path = xstrdup(j->log_path);
		return 0;
	}
	return dp_err(err, DPE_NOTFOUND, "dispatch did not submit it: its output file is not known");
}

/* ---- cancel ---- */

static bool can_cancel(const struct sched_job *j, const char *host, struct dp_error *err)
{
	if (j->stage_dir && j->pgid > 1)
		return true;
	dp_err(err, DPE_NOTFOUND, "cannot cancel '%s': dispatch has no record of its process on '%s'",
	       j->arg, host);
	return false;
}

static void cancel_script(struct remote_script *rs, const struct sched_job *jobs, size_t n)
{
	if (!n)
		return;
	_cleanup_free_ struct plainjob_ref *refs = refs_of(jobs, n);
	plainjob_cancel_command(remote_section(rs, REMOTE_PLAIN_CANCEL), refs, n);
}

static bool cancel_ok(const struct remote_script *rs, const struct remote_reply *rr,
		      const char *host, struct dp_error *err)
{
	(void)rs, (void)rr, (void)host, (void)err;
	return true;
}

/* "dispatch-cancel ID OUTCOME": the first line for j. */
static const char *cancel_outcome(const struct remote_reply *rr, const struct sched_job *j,
				  bool ok, const char *host, struct dp_error *err)
{
	size_t n = strlen(j->id);
	(void)ok;
	for (size_t i = 0; i < rr->n; i++) {
		const char *v = rr->marks[i].value;
		if (!streq(rr->marks[i].key, MARK_CANCEL) || strncmp(v, j->id, n) != 0 || v[n] != ' ')
			continue;
		v += n + 1;
		return startswith(v, "signalled") ? "signalled" : startswith(v, "ended") ? "ended" : "gone";
	}
	dp_err(err, DPE_FAIL, "cannot cancel '%s' on '%s': no answer", j->arg, host);
	return NULL;
}

/* ---- queue ---- */

static void queue_command(struct strbuf *sb, const struct inv_host *h,
			  const struct slurm_queue_filter *f, enum slurm_queue_format fmt,
			  const char *eor)
{
	plainjob_queue_command(sb, h ? h->gpu_lock_dir : NULL);
}

static int queue_parse(const char *out, const struct slurm_queue_filter *f, const char *eor,
		       struct slurm_queue *q, struct dp_error *err)
{
	return plainjob_parse_queue(out, f, q, err);
}

const struct sched_ops sched_plain = {
	.name = "plain",
	.can_query = can_query,
	.query_script = query_script,
	.query_failed = query_failed,
	.parse = parse,
	.answer_free = answer_free,
	.query_rows = query_rows,
	.not_found = not_found,
	.why = why,
	.path_take = path_take,
	.can_cancel = can_cancel,
	.cancel_script = cancel_script,
	.cancel_ok = cancel_ok,
	.cancel_outcome = cancel_outcome,
	.top = plain_top_run,
	.queue_command = queue_command,
	.queue_parse = queue_parse,
};
