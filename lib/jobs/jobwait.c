/* SPDX-License-Identifier: MIT */
/* wait's state machine: what each poll's answers mean for a job (see jobwait.h). */
#include "jobs/jobwait.h"

#include <stdlib.h>

#include "base/error.h"
#include "sched/slurm/hostlist.h"

void jobwait_init(struct jobwait *j, const char *id, const char *host, bool plain,
		  bool until_running)
{
	*j = (struct jobwait){ .id = id, .host = host, .plain = plain,
			       .until_running = until_running, .exit_code = -1, .signal = -1 };
}

void jobwait_release(struct jobwait *j)
{
	free(j->state);
	free(j->reason);
	free(j->elapsed);
	free(j->time_limit);
	free(j->cancelled_by);
	free(j->nodes);
	free(j->first_node);
	j->state = j->reason = j->elapsed = j->nodes = j->first_node = NULL;
	j->time_limit = j->cancelled_by = NULL;
}

static void set_str(char **dst, const char *s)
{
	free(*dst);
	*dst = xstrdup(s ? s : "");
}

static void settle(struct jobwait *j)
{
	j->settled = true;
	j->done = true;
}

void jobwait_not_found(struct jobwait *j)
{
	j->not_found = true;
	set_str(&j->state, "NOT_FOUND");
	settle(j);
}

static void first_node_of(struct jobwait *j, const char *nodes)
{
	struct dp_error err = { 0 };
	char *first = NULL;
	if (!nodes || !*nodes || streq(nodes, "None assigned"))
		return;
	if (hostlist_first(nodes, &first, &err) < 0 || !first)
		first = xstrdup(nodes);
	free(j->first_node);
	j->first_node = first;
}

/* A new state, said once: the event for it. */
static enum jobwait_event change(const struct jobwait *j, const char *state, const char *detail,
				 const char **out)
{
	if (j->state && streq(j->state, state))
		return JOBWAIT_SAME;
	*out = detail && !streq(detail, "None") ? detail : "";
	return JOBWAIT_CHANGED;
}

enum jobwait_event jobwait_slurm(struct jobwait *j, const struct slurm_job *rows, size_t n,
				 const char **detail)
{
	const struct slurm_job **sel;
	size_t nsel;
	bool named = false;
	*detail = "";
	for (size_t i = 0; i < n; i++)
		if (slurm_id_matches(j->id, rows[i].id))
			named = true;
	slurm_select(rows, n, j->id, &sel, &nsel);
	if (nsel == 0) {
		free(sel);
		if (!named && !j->seen) {
			jobwait_not_found(j);
			return JOBWAIT_NOT_FOUND;
		}
		if (++j->lag >= JOBWAIT_LAG_POLLS) {
			/* squeue's finished rows, or nothing at all any more */
			const struct slurm_job *last = NULL;
			for (size_t i = 0; i < n; i++)
				if (!rows[i].from_sacct && slurm_id_matches(j->id, rows[i].id))
					last = &rows[i];
			set_str(&j->state, last ? last->state : "UNKNOWN");
			settle(j);
		}
		return JOBWAIT_SAME;
	}
	j->seen = true;
	j->lag = 0;
	j->ntasks = nsel;
	const struct slurm_job *running = NULL, *active = NULL, *worst = NULL;
	for (size_t k = 0; k < nsel; k++) {
		const struct slurm_job *r = sel[k];
		if (streq(r->state, "RUNNING") && !running)
			running = r;
		if (slurm_state_active(r->state)) {
			if (!active)
				active = r;
		} else if (!worst || (streq(worst->state, "COMPLETED") && !streq(r->state, "COMPLETED"))) {
			worst = r;
		}
	}
	free(sel);
	if (running && !j->seen_running) {
		j->seen_running = true;
		first_node_of(j, running->nodes);
	}
	const struct slurm_job *show = running ? running : active ? active : worst;
	enum jobwait_event ev = change(j, show->state,
				       running && running->nodes[0] ? running->nodes
				       : active ? active->reason : "", detail);
	set_str(&j->state, show->state);
	set_str(&j->reason, show->reason);
	set_str(&j->elapsed, show->elapsed);
	set_str(&j->time_limit, show->time_limit);
	free(j->cancelled_by);
	j->cancelled_by = show->cancelled_by ? xstrdup(show->cancelled_by) : NULL;
	set_str(&j->nodes, show->nodes);
	j->exit_code = show->exit_code;
	j->signal = show->exit_signal;
	if (j->until_running && j->seen_running)
		j->done = true;
	if (active) {
		j->preempted = 0;
		return ev;
	}
	/* PREEMPTED may be followed by a requeue (PENDING again): take it as an end only
	 * when the next poll still says so */
	if (streq(worst->state, "PREEMPTED") && ++j->preempted < 2)
		return ev;
	/* squeue's end while sacct answers without it: accounting lags a poll or two
	 * behind, and the exit code and the canceller come with its row */
	j->awaiting_sacct = !worst->from_sacct && j->sacct_answered &&
			    ++j->sacct_lag < JOBWAIT_LAG_POLLS;
	if (j->awaiting_sacct)
		return ev;
	settle(j);
	return ev;
}

enum jobwait_event jobwait_plain(struct jobwait *j, const struct plainjob_status *p, size_t n,
				 const char **detail)
{
	*detail = "";
	for (size_t k = 0; k < n; k++) {
		if (!streq(p[k].id, j->id))
			continue;
		j->seen = true;
		enum jobwait_event ev = change(j, p[k].state, p[k].reason ? p[k].reason : "", detail);
		set_str(&j->state, p[k].state);
		char *el = slurm_format_seconds(p[k].elapsed);
		set_str(&j->elapsed, el);
		free(el);
		set_str(&j->nodes, j->host);
		j->exit_code = p[k].exit_code;
		j->signal = p[k].exit_signal;
		if (streq(p[k].state, "RUNNING")) {
			if (!j->seen_running)
				j->first_node = xstrdup(j->host);
			j->seen_running = true;
			if (j->until_running)
				j->done = true;
		} else if (!streq(p[k].state, "PENDING")) { /* queued on the host: waits on */
			settle(j);
		}
		return ev;
	}
	jobwait_not_found(j);
	return JOBWAIT_NOT_FOUND;
}

bool jobwait_ok(const struct jobwait *j)
{
	if (j->until_running && j->seen_running && !j->settled)
		return true;
	return j->state && streq(j->state, "COMPLETED");
}

int jobwait_result(const struct jobwait *const *jobs, size_t n, bool timed_out)
{
	int r = 0;
	for (size_t i = 0; i < n; i++) {
		if (jobs[i]->not_found)
			r = DPE_NOTFOUND;
		else if (jobs[i]->done && !jobwait_ok(jobs[i]) && r == 0)
			r = DPE_FAIL;
	}
	return timed_out ? DPE_TIMEOUT : r;
}

char **jobwait_gone(char *const *ids, const struct slurm_job *rows, size_t n)
{
	char **gone = NULL;
	for (size_t i = 0; ids && ids[i]; i++) {
		bool active = false;
		for (size_t k = 0; k < n; k++)
			if (slurm_id_matches(ids[i], rows[k].id) && slurm_state_active(rows[k].state))
				active = true;
		if (!active)
			strv_add(&gone, ids[i]);
	}
	return gone;
}
