/* SPDX-License-Identifier: MIT */
/* The queue of one host through its backend: lib/queue.h. */
#include "queue.h"

#include <stdlib.h>
#include <unistd.h>

#include "ledger.h"
#include "sched/sched.h"
#include "sched/slurm/slurm_pending.h"
#include "sched/slurm/slurm_queue.h"

/* A row of the backend's listing as a job_state; a pending SLURM job (a plain host's
 * have gpus set: their reason says it all) with why it waits, from pending. */
static void row_of(const struct slurm_qjob *j, const struct sched_ops *s,
		   const struct slurm_pending *pending, size_t npending, struct job_state *js)
{
	*js = (struct job_state){
		.id = xstrdup(j->id),
		.sched = s,
		.phase = job_phase_of(j->state),
		.state = xstrdup(j->state),
		.reason = xstrdup(j->reason),
		.exit_code = -1,
		.signal = -1,
		.limit = JOB_TIME_UNKNOWN,
		.nodes = xstrdup(j->nodes),
		.gpus = j->gpus ? xstrdup(j->gpus) : NULL,
		.partition = xstrdup(j->partition),
		.name = xstrdup(j->name),
		.user = xstrdup(j->user),
		.node_count = j->node_count,
	};
	job_state_time_of(j->elapsed, &js->elapsed, &js->elapsed_word);
	if (streq(j->state, "PENDING") && !j->gpus) {
		const struct slurm_pending *p = slurm_pending_find(pending, npending, j->id);
		js->pending = slurm_pending_json(j->reason, p);
		js->pending_text = p && p->text ? xstrdup(p->text) : NULL;
	}
}

/* A run of the user's (the ledger's, by host and id) among the rows: its run id and
 * restarts, and the attempt it is at from SLURM's restart count. The ledger is opened
 * once, only where there is one (a listing makes none). */
static void mark_run(struct ledger **l, bool *tried, const char *host, long restarts,
		     struct job_state *js)
{
	if (restarts < 0)
		return;
	if (!*tried) {
		*tried = true;
		_cleanup_free_ char *dir = ledger_state_dir();
		_cleanup_free_ char *db = xasprintf("%s/ledger.db", dir);
		struct dp_error err = { 0 };
		if (access(db, F_OK) != 0 || ledger_open(dir, l, &err) < 0)
			*l = NULL;
	}
	struct ledger_job *jobs = NULL;
	size_t n = 0;
	struct dp_error err = { 0 };
	if (!*l || ledger_find(*l, js->id, host, &jobs, &n, &err) < 0)
		return;
	if (n && jobs[0].run_id && jobs[0].max_restarts > 0) {
		js->run_id = xstrdup(jobs[0].run_id);
		js->max_restarts = jobs[0].max_restarts;
		js->attempt = restarts + 1;
	}
	ledger_jobs_free(jobs, n);
}

int queue_ask(const struct ssh_ctx *sc, const struct inventory *inv, const char *host,
	      const struct queue_filter *qf, const char *format, struct queue_host *a,
	      struct dp_error *err)
{
	_cleanup_strbuf_ struct strbuf cmd = STRBUF_INIT, out = STRBUF_INIT;
	_cleanup_free_ char *eor = ledger_new_token();
	const struct inv_host *ih = inv ? inventory_host(inv, host) : NULL;
	const struct sched_ops *s = sched_for(ih, 0);
	const struct slurm_queue_filter f = { .user = qf->user, .me = qf->me,
					      .partitions = qf->partitions, .states = qf->states };
	enum slurm_queue_format fmt = !format		  ? SLURM_QUEUE_AUTO
				      : streq(format, "json") ? SLURM_QUEUE_JSON
							      : SLURM_QUEUE_TEXT;
	struct slurm_queue q = { 0 };
	struct slurm_pending *pending = NULL;
	size_t npending = 0;
	/* (before any goto out: a cleanup variable must be set wherever out is reached) */
	_cleanup_(ledger_closep) struct ledger *l = NULL;
	bool tried = false;
	int r = -1;
	a->host = host;
	a->errout = (struct strbuf)STRBUF_INIT;
	s->queue_command(&cmd, ih, &f, fmt, eor);
	int status;
	_cleanup_ssh_session_ struct ssh_session *ss = NULL;
	if (ssh_session_open(sc, inventory_ssh_destination(inv, host), &ss, err) < 0 ||
	    ssh_exec_capture(ss, cmd.buf, NULL, &out, &a->errout, &status, err) < 0) {
		a->error = xstrdup(err->msg);
		goto out;
	}
	a->ran = true;
	int parsed = s->queue_parse(out.buf, &f, eor, &q, err);
	a->version = q.version ? xstrdup(q.version) : NULL;
	a->format = q.format ? xstrdup(q.format) : NULL;
	if (parsed < 0) {
		a->error = xstrdup(err->msg);
		goto out;
	}
	if (q.squeue_status != 0) {
		dp_err(err, DPE_FAIL, "squeue failed (exit status %d)", q.squeue_status);
		a->error = xstrdup(err->msg);
		goto out;
	}
	a->ok = true;
	r = 0;
	struct dp_error perr = { 0 };
	if (s->queue_pending && s->queue_pending(ss, &q, &pending, &npending, &perr) < 0)
		a->pending_error = xstrdup(perr.msg);
	if (slurm_release_known(q.version) == 0)
		a->warning = xasprintf("'%s' runs SLURM %s, newer than any release dispatch knows "
				       "(up to %s): its answer is read as %s's", host, q.version,
				       SLURM_NEWEST_KNOWN, SLURM_NEWEST_KNOWN);
	a->rows = xcalloc(q.n + 1, sizeof(*a->rows));
	for (size_t i = 0; i < q.n; i++) {
		row_of(&q.jobs[i], s, pending, npending, &a->rows[a->n]);
		mark_run(&l, &tried, host, q.jobs[i].restarts, &a->rows[a->n++]);
	}
out:
	slurm_queue_release(&q);
	slurm_pending_free(pending, npending);
	return r;
}

void queue_host_release(struct queue_host *a)
{
	job_states_free(a->rows, a->n);
	free(a->version);
	free(a->format);
	free(a->error);
	free(a->pending_error);
	free(a->warning);
	strbuf_release(&a->errout);
}

bool queue_state_known(const char *word)
{
	return slurm_state_name(word) != NULL;
}
