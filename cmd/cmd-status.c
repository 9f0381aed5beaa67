/* SPDX-License-Identifier: MIT */
/*
 * dispatch status JOB...: where each job stands. One connection and one command per
 * host however many jobs: squeue for the jobs still in the queue, then sacct for
 * those that left it (lib/sched/slurm/slurm.h); plain-host jobs from their stage dir's pid and
 * exit_status files (lib/sched/plain/plainjob.h).
 */
#include <cjson/cJSON.h>
#include <stdio.h>

#include "dispatch.h"
#include "inventory/inventory.h"
#include "jobref.h"
#include "sched/plain/plainjob.h"
#include "sched/slurm/slurm.h"
#include "sched/slurm/slurm_pending.h"
#include "sched/slurm/slurm_why.h"
#include "sched/slurm/slurm_steps.h"
#include "transport/ssh.h"
#include "base/strbuf.h"
#include "base/termesc.h"

static const char *opt_host;
static bool opt_steps, opt_no_tail;

static const struct dp_option status_options[] = {
	OPT_STRING('H', "host", &opt_host, "HOST", "the host of jobs given by bare ID (settles an ambiguous ID)", "host"),
	OPT_BOOL(0, "steps", &opt_steps, "one row per job step from sacct: state, exit code, elapsed, MaxRSS, MaxVMSize, AveCPU, TRES usage"),
	OPT_BOOL(0, "no-tail", &opt_no_tail, "do not print the last lines of a failed job's stderr"),
	OPT_END,
};

/* One line of the answer. */
struct row {
	const struct jobref *ref;
	char *id;               /* the job or task as reported */
	char *state, *reason, *elapsed, *time_limit, *nodes;
	char *cancelled_by;     /* sacct's "CANCELLED by UID"; NULL */
	char *gpus;             /* plain host: the GPUs leased (indices); NULL: SLURM's */
	int exit_code, signal;  /* -1: not known */
	struct job_tail tail;   /* a job that ended without COMPLETED: its stderr's last lines */
	struct job_end end;     /* and how it ended: memory, canceller (SLURM jobs) */
	bool plain;
	char *pending_text;     /* a pending SLURM job: why, with the numbers; NULL none */
	cJSON *pending;         /* the same for --json; NULL: not pending */
};

struct answer {
	struct row *rows;
	size_t n;
	int status;             /* the exit status so far */
};

static void add_row(struct answer *a, const struct row *r)
{
	a->rows = xrealloc(a->rows, (a->n + 1) * sizeof(*a->rows));
	a->rows[a->n++] = *r;
}

static void answer_release(struct answer *a)
{
	for (size_t i = 0; i < a->n; i++) {
		free(a->rows[i].id);
		free(a->rows[i].state);
		free(a->rows[i].reason);
		free(a->rows[i].elapsed);
		free(a->rows[i].time_limit);
		free(a->rows[i].nodes);
		free(a->rows[i].gpus);
		free(a->rows[i].cancelled_by);
		job_tail_release(&a->rows[i].tail);
		job_end_release(&a->rows[i].end);
		free(a->rows[i].pending_text);
		cJSON_Delete(a->rows[i].pending);
	}
	free(a->rows);
}

static void worst(struct answer *a, int status)
{
	/* connect (255) over not found (4) over failed (1) */
	if (status == DPE_CONNECT || (a->status != DPE_CONNECT && status > a->status))
		a->status = status;
}

/* ---- one host ---- */

static void query_command(const struct dp_ctx *ctx, const struct job_set *set, const char *host,
			  struct strbuf *cmd, struct plainjob_ref **plain, size_t *nplain,
			  char ***stage_dirs)
{
	_cleanup_strv_free_ char **ids = NULL;
	*plain = NULL;
	*nplain = 0;
	for (size_t i = 0; i < set->n; i++) {
		const struct jobref *r = &set->refs[i];
		if (!streq(r->host, host))
			continue;
		if (job_is_plain(ctx, r)) {
			char *dir = job_stage_dir(r);
			if (!dir)
				continue; /* not in the ledger: reported as not found */
			strv_push(stage_dirs, dir);
			*plain = xrealloc(*plain, (*nplain + 1) * sizeof(**plain));
			(*plain)[(*nplain)++] = (struct plainjob_ref){ .id = r->id, .stage_dir = dir,
								       .pgid = r->rec.pid };
		} else if (!strv_contains(ids, r->id)) {
			strv_add(&ids, r->id);
		}
	}
	if (ids)
		slurm_status_command(cmd, ids);
	if (*nplain)
		plainjob_status_command(cmd, *plain, *nplain);
}

static void slurm_rows(struct answer *a, const struct jobref *r, const char *host,
		       const struct slurm_job *jobs, size_t n)
{
	const struct slurm_job **sel;
	size_t nsel;
	slurm_select(jobs, n, r->id, &sel, &nsel);
	for (size_t k = 0; k < nsel; k++) {
		const struct slurm_job *j = sel[k];
		struct row row = {
			.ref = r,
			.id = xstrdup(j->id),
			.state = xstrdup(j->state),
			.reason = xstrdup(j->reason),
			.elapsed = xstrdup(j->elapsed),
			.time_limit = xstrdup(j->time_limit),
			.nodes = xstrdup(j->nodes),
			.cancelled_by = j->cancelled_by ? xstrdup(j->cancelled_by) : NULL,
			.exit_code = j->exit_code,
			.signal = j->exit_signal,
		};
		add_row(a, &row);
	}
	if (nsel == 0) {
		error_msg("job '%s' not found on '%s': neither squeue nor sacct knows it", r->id, host);
		worst(a, DPE_NOTFOUND);
	}
	free(sel);
}

static int query_host(const struct dp_ctx *ctx, const struct job_set *set, const char *host,
		      struct ssh_session **ss, struct answer *a, struct slurm_job **sjobs, size_t *nsjobs,
		      struct plainjob_status **pjobs, size_t *npjobs)
{
	struct dp_error err = { 0 };
	_cleanup_strbuf_ struct strbuf cmd = STRBUF_INIT, out = STRBUF_INIT, errout = STRBUF_INIT;
	_cleanup_strv_free_ char **dirs = NULL;
	_cleanup_free_ struct plainjob_ref *plain = NULL;
	size_t nplain;
	query_command(ctx, set, host, &cmd, &plain, &nplain, &dirs);
	if (!cmd.len)
		return 0;
	int status;
	struct ssh_ctx sc;
	cmd_ssh_ctx(ctx, &sc);
	if (ssh_session_open(&sc, inventory_ssh_destination(ctx->inv, host), ss, &err) < 0 ||
	    ssh_exec_capture(*ss, cmd.buf, NULL, &out, &errout, &status, &err) < 0) {
		worst(a, report_error(&err));
		return -1;
	}
	if (status != 0) {
		fputs(errout.buf, stderr);
		error_msg("cannot ask '%s' for the jobs' state (exit status %d)", host, status);
		worst(a, DPE_FAIL);
		return -1;
	}
	/* squeue fails outright when every id has left the controller's memory (sacct
	 * answers for those); any other failure (slurmctld down or too busy) means no
	 * answer: a job that just ended may not be in sacct yet, so it is not "not
	 * found". */
	int sq = strstr(cmd.buf, "dispatch-squeue-exit") ? slurm_parse_exit(out.buf, "squeue") : 0;
	if (slurm_squeue_failed(sq, errout.buf)) {
		fputs(errout.buf, stderr);
		error_msg("cannot ask '%s' for the jobs' state: squeue failed (exit status %d); try again", host, sq);
		worst(a, DPE_FAIL);
		return -1;
	}
	slurm_parse_status(out.buf, sjobs, nsjobs);
	*npjobs = plainjob_parse_status(out.buf, pjobs);
	return 0;
}

static void plain_row(struct answer *a, const struct jobref *r, const char *host,
		      const struct plainjob_status *p, size_t n)
{
	for (size_t k = 0; k < n; k++) {
		if (!streq(p[k].id, r->id))
			continue;
		struct row row = {
			.ref = r,
			.id = xstrdup(r->id),
			.state = xstrdup(p[k].state),
			.reason = xstrdup(p[k].reason),
			.elapsed = slurm_format_seconds(p[k].elapsed),
			.gpus = xstrdup(p[k].gpus),
			.time_limit = xstrdup("UNLIMITED"),
			.nodes = xstrdup(host),
			.exit_code = p[k].exit_code,
			.signal = p[k].exit_signal,
			.plain = true,
		};
		add_row(a, &row);
		return;
	}
	error_msg("job '%s' not found on '%s'%s", r->id, host,
		  r->in_ledger ? ": no answer for its stage dir" : ": dispatch did not submit it");
	worst(a, DPE_NOTFOUND);
}

/* Ended, and not COMPLETED. */
static bool ended_failed(const struct row *r)
{
	return !streq(r->state, "COMPLETED") && !slurm_state_active(r->state);
}

/* The SLURM rows from first on that ended without COMPLETED: how they ended, in one
 * command over ss. */
static void fetch_ends(const struct dp_ctx *ctx, struct answer *a, size_t first,
		       struct ssh_session *ss)
{
	_cleanup_free_ struct job_end_of *of = xcalloc(a->n - first + 1, sizeof(*of));
	_cleanup_free_ struct job_end **d = xcalloc(a->n - first + 1, sizeof(*d));
	size_t n = 0;
	for (size_t i = first; i < a->n; i++) {
		struct row *r = &a->rows[i];
		if (r->plain || !ended_failed(r))
			continue;
		of[n] = (struct job_end_of){ .id = r->id, .state = r->state,
					     .cancelled_by = r->cancelled_by, .nodes = r->nodes };
		d[n++] = &r->end;
	}
	job_end_fetch(ctx, ss, of, d, n);
}

/* The rows from first on that ended without COMPLETED: their log tails, over ss. */
static void fetch_tails(const struct dp_ctx *ctx, struct answer *a, size_t first,
			struct ssh_session *ss)
{
	for (size_t i = first; ss && i < a->n; i++) {
		struct row *r = &a->rows[i];
		if (!ended_failed(r))
			continue;
		struct jobref task = *r->ref;   /* an array's task: its own files */
		task.id = r->id;
		job_tail_fetch(ss, &task, job_is_plain(ctx, r->ref), &r->tail);
	}
}

/* The rows from first on that are pending on SLURM: why, with the numbers, in one
 * script over ss for all of them. */
static void fetch_pending(const struct dp_ctx *ctx, struct answer *a, size_t first,
			  struct ssh_session *ss)
{
	_cleanup_strv_free_ char **ids = NULL;
	bool limits = false;
	for (size_t i = first; i < a->n; i++) {
		const struct row *r = &a->rows[i];
		if (!streq(r->state, "PENDING") || job_is_plain(ctx, r->ref))
			continue;
		if (!strv_contains(ids, r->id))
			strv_add(&ids, r->id);
		limits = limits || slurm_pending_wants_limits(r->reason);
	}
	if (!ids || !ss)
		return;
	struct slurm_pending *p;
	size_t n = job_pending_fetch(ss, ids, limits, &p);
	for (size_t i = first; i < a->n; i++) {
		struct row *r = &a->rows[i];
		if (!streq(r->state, "PENDING") || job_is_plain(ctx, r->ref))
			continue;
		const struct slurm_pending *f = slurm_pending_find(p, n, r->id);
		r->pending = job_pending_json(r->reason, f);
		r->pending_text = f && f->text ? xstrdup(f->text) : NULL;
	}
	slurm_pending_free(p, n);
}

/* ---- output ---- */

static struct slurm_why_job why_job(const struct row *r)
{
	struct slurm_why_job w = { .state = r->state, .reason = r->reason,
				   .exit_code = r->exit_code, .signal = r->signal,
				   .nodes = r->nodes, .elapsed = r->elapsed,
				   .time_limit = r->time_limit, .cancelled_by = r->cancelled_by };
	job_end_apply(&r->end, &w);
	return w;
}

static char *why_of(const struct row *r)
{
	struct slurm_why_job w = why_job(r);
	return r->plain ? slurm_why_plain(w.state, w.exit_code, w.signal) : slurm_why(&w);
}

/* Below the table: why each pending job waits and why each failed job ended. */
static void print_why(const struct answer *a)
{
	for (size_t i = 0; i < a->n; i++) {
		const struct row *r = &a->rows[i];
		_cleanup_free_ char *why = why_of(r);
		_cleanup_free_ char *job = xasprintf("%s@%s", r->id, r->ref->host);
		if (why)
			printf("%s: %s\n", job, why);
		if (r->pending_text)
			printf("  why: %s\n", r->pending_text);
		if (!why && r->tail.fetched)
			printf("%s: %s\n", job, r->state);
		job_tail_print(&r->tail, job);
	}
}

static void print_text(const struct answer *a)
{
	static const struct table_col cols[] = { { .width = 28 }, { .width = 11 }, { .width = 6 },
						 { .width = 11 }, { .width = 11 }, { .width = 14 },
						 { .width = 0 } };
	struct table t = { .ncols = 7, .sep = " ", .cols = cols };
	table_row(&t, "JOB", "STATE", "EXIT", "ELAPSED", "TIMELIMIT", "NODES", "REASON", NULL);
	for (size_t i = 0; i < a->n; i++) {
		const struct row *r = &a->rows[i];
		table_addf(&t, "%s@%s", r->id, r->ref->host);
		table_add(&t, r->state);
		if (r->exit_code >= 0 && r->signal > 0 && r->exit_code == 0)
			table_addf(&t, "sig%d", r->signal);
		else if (r->exit_code >= 0)
			table_addf(&t, "%d", r->exit_code);
		else
			table_add(&t, "-");
		table_row(&t, r->elapsed[0] ? r->elapsed : "-", r->time_limit[0] ? r->time_limit : "-",
			  r->nodes[0] ? r->nodes : "-", NULL);
		table_take(&t, printable(r->reason[0] ? r->reason : "-"));
	}
	table_print(&t);
	print_why(a);
}

static void print_json(const struct dp_ctx *ctx, const struct answer *a)
{
	cJSON *doc = cJSON_CreateObject();
	cJSON *jobs = cJSON_AddArrayToObject(doc, "jobs");
	for (size_t i = 0; i < a->n; i++) {
		const struct row *r = &a->rows[i];
		cJSON *o = cJSON_CreateObject();
		_cleanup_free_ char *job = xasprintf("%s@%s", r->id, r->ref->host);
		cJSON_AddStringToObject(o, "job", job);
		cJSON_AddStringToObject(o, "asked", r->ref->arg);
		cJSON_AddStringToObject(o, "id", r->id);
		cJSON_AddStringToObject(o, "host", r->ref->host);
		cJSON_AddStringToObject(o, "type", job_is_plain(ctx, r->ref) ? "plain" : "slurm");
		cJSON_AddStringToObject(o, "state", r->state);
		cJSON_AddBoolToObject(o, "active", streq(r->state, "RUNNING") ||
							   slurm_state_active(r->state));
		cJSON_AddStringToObject(o, "reason", r->reason);
		cJSON_AddStringToObject(o, "elapsed", r->elapsed);
		cJSON_AddStringToObject(o, "time_limit", r->time_limit);
		cJSON_AddStringToObject(o, "nodes", r->nodes);
		json_add_str_or_null(o, "gpus", r->gpus);
		json_add_int_or_null(o, "exit_code", r->exit_code);
		json_add_int_or_null(o, "signal", r->signal);
		_cleanup_free_ char *why = why_of(r);
		json_add_str_or_null(o, "why", why);
		struct slurm_why_job w = why_job(r);
		job_end_json(o, &w, ended_failed(r));
		if (r->pending)
			cJSON_AddItemToObject(o, "pending", cJSON_Duplicate(r->pending, true));
		else
			cJSON_AddNullToObject(o, "pending");
		json_add_container(o, r->ref->in_ledger ? r->ref->rec.container_runtime : NULL,
				   r->ref->in_ledger ? r->ref->rec.container_image : NULL);
		job_tail_json(o, &r->tail);
		cJSON_AddItemToArray(jobs, o);
	}
	json_print(doc);
}

/* ---- --steps: sacct's rows per job step ---- */

static void step_json(cJSON *o, const struct slurm_step *st)
{
	cJSON_AddStringToObject(o, "id", st->id);
	cJSON_AddStringToObject(o, "step", st->step);
	cJSON_AddStringToObject(o, "name", st->name);
	cJSON_AddStringToObject(o, "state", st->state);
	json_add_int_or_null(o, "exit_code", st->exit_code);
	json_add_int_or_null(o, "signal", st->exit_signal);
	cJSON_AddStringToObject(o, "elapsed", st->elapsed);
	cJSON_AddStringToObject(o, "max_rss", st->max_rss);
	if (st->max_rss_bytes >= 0)
		cJSON_AddNumberToObject(o, "max_rss_bytes", (double)st->max_rss_bytes);
	else
		cJSON_AddNullToObject(o, "max_rss_bytes");
	cJSON_AddStringToObject(o, "max_vmsize", st->max_vmsize);
	if (st->max_vmsize_bytes >= 0)
		cJSON_AddNumberToObject(o, "max_vmsize_bytes", (double)st->max_vmsize_bytes);
	else
		cJSON_AddNullToObject(o, "max_vmsize_bytes");
	cJSON_AddStringToObject(o, "ave_cpu", st->ave_cpu);
	cJSON_AddStringToObject(o, "tres_usage", st->tres_usage);
	cJSON_AddStringToObject(o, "nodes", st->nodes);
}

static void step_text(struct table *t, const struct slurm_step *st, const char *host)
{
	table_addf(t, "%s@%s", st->id, host);
	table_add(t, st->name[0] ? st->name : "-");
	table_add(t, st->state);
	if (st->exit_code >= 0 && st->exit_signal > 0 && st->exit_code == 0)
		table_addf(t, "sig%d", st->exit_signal);
	else if (st->exit_code >= 0)
		table_addf(t, "%d", st->exit_code);
	else
		table_add(t, "-");
	table_row(t, st->elapsed[0] ? st->elapsed : "-", st->max_rss[0] ? st->max_rss : "-",
		  st->max_vmsize[0] ? st->max_vmsize : "-", st->ave_cpu[0] ? st->ave_cpu : "-",
		  st->nodes[0] ? st->nodes : "-", st->tres_usage[0] ? st->tres_usage : "-", NULL);
}

static int cmd_status_steps(struct dp_ctx *ctx, const struct job_set *set)
{
	int status = 0;
	struct table t = { .ncols = 10, .trim = true };
	table_row(&t, "STEP", "NAME", "STATE", "EXIT", "ELAPSED", "MAXRSS", "MAXVMSIZE", "AVECPU",
		  "NODES", "TRES", NULL);
	cJSON *doc = cJSON_CreateObject();
	cJSON *jobs = cJSON_AddArrayToObject(doc, "jobs");
	for (size_t h = 0; set->hosts && set->hosts[h]; h++) {
		const char *host = set->hosts[h];
		_cleanup_strv_free_ char **ids = NULL;
		for (size_t i = 0; i < set->n; i++) {
			const struct jobref *r = &set->refs[i];
			if (!streq(r->host, host))
				continue;
			if (job_is_plain(ctx, r)) {
				error_msg("job '%s' runs on plain host '%s': it has no SLURM steps", r->arg, host);
				status = status == DPE_CONNECT ? status : DPE_INPUT;
			} else if (!strv_contains(ids, r->id)) {
				strv_add(&ids, r->id);
			}
		}
		if (!ids)
			continue;
		struct dp_error err = { 0 };
		_cleanup_strbuf_ struct strbuf cmd = STRBUF_INIT, out = STRBUF_INIT, errout = STRBUF_INIT;
		slurm_steps_command(&cmd, ids);
		int rc;
		if (host_exec_capture(ctx, host, cmd.buf, &out, &errout, &rc, &err) < 0) {
			status = report_error(&err);
			continue;
		}
		int sx = slurm_parse_exit(out.buf, "steps");
		if (rc != 0 || sx != 0) {
			fputs(errout.buf, stderr);
			error_msg("cannot ask '%s' for the jobs' steps: sacct failed (exit status %d)", host,
				  sx >= 0 ? sx : rc);
			status = status == DPE_CONNECT ? status : DPE_FAIL;
			continue;
		}
		struct slurm_step *steps;
		size_t n = slurm_parse_steps(out.buf, &steps);
		for (size_t i = 0; i < set->n; i++) {
			const struct jobref *r = &set->refs[i];
			if (!streq(r->host, host) || job_is_plain(ctx, r))
				continue;
			cJSON *o = cJSON_CreateObject(), *arr = NULL;
			_cleanup_free_ char *job = xasprintf("%s@%s", r->id, host);
			cJSON_AddStringToObject(o, "job", job);
			cJSON_AddStringToObject(o, "asked", r->arg);
			cJSON_AddStringToObject(o, "host", host);
			cJSON *main = NULL;
			size_t found = 0;
			for (size_t k = 0; k < n; k++) {
				if (!slurm_id_matches(r->id, steps[k].job))
					continue;
				found++;
				step_text(&t, &steps[k], host);
				cJSON *so = cJSON_CreateObject();
				step_json(so, &steps[k]);
				if (!steps[k].step[0] && !main && streq(steps[k].job, r->id)) {
					main = so;
					cJSON_AddItemToObject(o, "main", so);
					continue;
				}
				if (!arr)
					arr = cJSON_AddArrayToObject(o, "steps");
				cJSON_AddItemToArray(arr, so);
			}
			if (!main)
				cJSON_AddNullToObject(o, "main");
			if (!arr)
				cJSON_AddArrayToObject(o, "steps");
			cJSON_AddItemToArray(jobs, o);
			if (!found) {
				error_msg("job '%s' not found on '%s': sacct has no record of it (accounting "
					  "may lag a job that just started)", r->id, host);
				if (status != DPE_CONNECT && status < DPE_NOTFOUND)
					status = DPE_NOTFOUND;
			}
		}
		slurm_steps_free(steps, n);
	}
	if (ctx->json) {
		json_print(doc);
	} else {
		cJSON_Delete(doc);
		if (t.n > t.ncols) {
			table_print(&t);
			return status;
		}
	}
	for (size_t i = 0; i < t.n; i++)
		free(t.cells[i]);
	free(t.cells);
	return status;
}

static int cmd_status(struct dp_ctx *ctx, const struct dp_args *args)
{
	const char *host_opt = opt_host;
	bool steps = opt_steps, tail = !opt_no_tail;
	_cleanup_(job_set_release) struct job_set set = { 0 };
	if (args->npos == 0)
		return usage_error(ctx, "'%s' needs a JOB: 'dispatch jobs' lists the jobs dispatch submitted"
				   " (ID@HOST)", ctx->cmd->name);
	int r = job_args_resolve(ctx, args->pos, (size_t)args->npos, host_opt, &set);
	if (r)
		return r;
	if (steps)
		return cmd_status_steps(ctx, &set);

	_cleanup_(answer_release) struct answer a = { 0 };
	for (size_t h = 0; set.hosts && set.hosts[h]; h++) {
		struct slurm_job *sjobs = NULL;
		struct plainjob_status *pjobs = NULL;
		size_t nsjobs = 0, npjobs = 0;
		_cleanup_ssh_session_ struct ssh_session *ss = NULL;
		size_t first = a.n;
		bool ok = query_host(ctx, &set, set.hosts[h], &ss, &a, &sjobs, &nsjobs, &pjobs,
				     &npjobs) == 0;
		for (size_t i = 0; ok && i < set.n; i++) {
			const struct jobref *ref = &set.refs[i];
			if (!streq(ref->host, set.hosts[h]))
				continue;
			if (job_is_plain(ctx, ref))
				plain_row(&a, ref, set.hosts[h], pjobs, npjobs);
			else
				slurm_rows(&a, ref, set.hosts[h], sjobs, nsjobs);
		}
		slurm_jobs_free(sjobs, nsjobs);
		plainjob_status_free(pjobs, npjobs);
		if (ok) {
			fetch_ends(ctx, &a, first, ss);
			fetch_pending(ctx, &a, first, ss);
		}
		if (ok && tail)
			fetch_tails(ctx, &a, first, ss);
	}
	if (ctx->json)
		print_json(ctx, &a);
	else if (a.n)
		print_text(&a);
	return a.status;
}

const struct dispatch_cmd dispatch_cmd_status = {
	.name = "status",
	.summary = "show where jobs stand: state, reason, elapsed, nodes, exit code",
	.usage = "[-H HOST] [--steps] [--no-tail] JOB...",
	.description =
		"Asks each job's host in one command: squeue for jobs still queued or running,\n"
		"sacct for jobs that left the queue; plain-host jobs from their pid and exit\n"
		"files. A JOB is ID, ID_TASK or ID@HOST; a bare ID is looked up in the job ledger.\n"
		"Why each job waits or failed is said below the table, a pending job's with its\n"
		"numbers (request against free resources, dependencies, drained nodes, limits),\n"
		"a failed job's with the last 20 lines of its stderr, over the same connection\n"
		"(--no-tail: without).\n"
		"--steps shows sacct's accounting per job step instead (batch, extern, each srun).",
	.opts = status_options,
	.min_args = 0,
	.max_args = -1,
	.flags = CMD_WANTS_INVENTORY | CMD_NEEDS_SSH,
	.fn = cmd_status,
};
