/* SPDX-License-Identifier: MIT */
/*
 * dispatch status JOB...: where each job stands. One connection and one command per
 * host however many jobs: squeue for the jobs still in the queue, then sacct for
 * those that left it (lib/sched/slurm/slurm.h); plain-host jobs from their stage dir's pid and
 * exit_status files (lib/sched/plain/plainjob.h); through lib/jobs (jobs_query).
 */
#include <cjson/cJSON.h>
#include <stdio.h>

#include "dispatch.h"
#include "inventory/inventory.h"
#include "jobref.h"
#include "jobs/jobs.h"
#include "jobs/job_usage.h"
#include "jobs/run_attempts.h"
#include "transport/ssh.h"
#include "base/strbuf.h"
#include "base/termesc.h"

static const char *opt_host, *opt_sort;
static bool opt_steps, opt_no_tail, opt_usage;

static const struct dp_option status_options[] = {
	OPT_STRING('H', "host", &opt_host, "HOST", "the host of jobs given by bare ID (settles an ambiguous ID)", "host"),
	OPT_BOOL(0, "steps", &opt_steps, "one row per job step from sacct: state, exit code, elapsed, MaxRSS, MaxVMSize, AveCPU, TRES usage"),
	OPT_BOOL(0, "no-tail", &opt_no_tail, "do not print the last lines of a failed job's stderr"),
	OPT_BOOL(0, "usage", &opt_usage, "what each job did: GPU utilisation over its life, energy, CPU and memory efficiency"),
	OPT_STRING(0, "sort", &opt_sort, "NAME", "a sweep's tasks by this metric or parameter (-NAME: descending)", NULL),
	OPT_END,
};

/* ---- output ---- */

/* Below the table: why each pending job waits and why each failed job ended. */
static void print_why(const struct status_answer *a)
{
	for (size_t i = 0; i < a->res.n; i++) {
		const struct job_state *r = &a->res.rows[i].st;
		if (a->res.rows[i].not_found)
			continue;
		_cleanup_free_ char *why = job_state_why(r);
		_cleanup_free_ char *job = job_state_name(r, a->refs[i]->host);
		if (why)
			printf("%s: %s\n", job, why);
		if (r->pending_text)
			printf("  why: %s\n", r->pending_text);
		_cleanup_free_ char *attempts = job_state_attempts_text(r);
		if (attempts)
			printf("%s: %s ended: %s\n", job, r->run_id, attempts);
		_cleanup_free_ char *wandb = r->run_id && a->refs[i]->in_ledger
					     ? job_wandb_url(a->ctx, &a->refs[i]->rec) : NULL;
		if (wandb)
			printf("%s: W&B %s\n", job, wandb);
		_cleanup_free_ char *task = job_sweep_text(a->refs[i], r);
		if (task)
			printf("%s: %s\n", job, task);
		if (!why && r->tail.fetched)
			printf("%s: %s\n", job, r->state);
		job_tail_print(&r->tail, job);
	}
}

static void print_text(const struct status_answer *a)
{
	struct table_col cols[] = { { .width = 28 }, { .width = 11 }, { .width = 6 },
				    { .width = 11 }, { .width = 11 }, { .width = 14 }, { .width = 0 } };
	for (size_t i = 0; i < a->res.n; i++) { /* a run's "RUNNING attempt 2/5" fits */
		_cleanup_free_ char *st = a->res.rows[i].not_found ? NULL
					  : job_state_state_text(&a->res.rows[i].st);
		if (st && (int)strlen(st) > cols[1].width)
			cols[1].width = (int)strlen(st);
	}
	struct table t = { .ncols = 7, .sep = " ", .cols = cols };
	table_row(&t, "JOB", "STATE", "EXIT", "ELAPSED", "TIMELIMIT", "NODES", "REASON", NULL);
	for (size_t i = 0; i < a->res.n; i++) {
		const struct job_state *r = &a->res.rows[i].st;
		if (a->res.rows[i].not_found)
			continue;
		_cleanup_free_ char *elapsed = job_state_elapsed_text(r);
		_cleanup_free_ char *limit = job_state_limit_text(r);
		table_take(&t, job_state_name(r, a->refs[i]->host));
		table_take(&t, job_state_state_text(r));
		table_take(&t, job_state_exit_text(r));
		table_row(&t, elapsed[0] ? elapsed : "-", limit[0] ? limit : "-",
			  r->nodes[0] ? r->nodes : "-", NULL);
		table_take(&t, printable(r->reason[0] ? r->reason : "-"));
	}
	table_print(&t);
	print_why(a);
}

static void print_json(const struct status_answer *a)
{
	cJSON *doc = cJSON_CreateObject();
	cJSON *jobs = cJSON_AddArrayToObject(doc, "jobs");
	for (size_t i = 0; i < a->res.n; i++) {
		const struct job_state *r = &a->res.rows[i].st;
		const struct jobref *ref = a->refs[i];
		if (a->res.rows[i].not_found)
			continue;
		cJSON *o = cJSON_CreateObject();
		_cleanup_free_ char *job = job_state_name(r, ref->host);
		cJSON_AddStringToObject(o, "job", job);
		cJSON_AddStringToObject(o, "asked", ref->arg);
		cJSON_AddStringToObject(o, "id", r->id);
		cJSON_AddStringToObject(o, "host", ref->host);
		cJSON_AddStringToObject(o, "type", r->sched->name);
		job_state_json_state(o, r);
		cJSON_AddStringToObject(o, "reason", r->reason);
		job_state_json_times(o, r);
		cJSON_AddStringToObject(o, "nodes", r->nodes);
		json_add_str_or_null(o, "gpus", r->gpus);
		job_state_json_exit(o, r);
		job_state_json_why(o, r);
		job_state_json_stages(o, r);
		job_state_json_failure(o, r);
		job_state_json_pending(o, r);
		json_add_container(o, ref->in_ledger ? ref->rec.container_runtime : NULL,
				   ref->in_ledger ? ref->rec.container_image : NULL);
		job_state_json_tail(o, r);
		job_state_json_run(o, r);
		if (opt_usage) {
			cJSON_AddItemToObject(o, "usage", job_usage_json(r->usage));
			cJSON_AddItemToObject(o, "allocated", job_alloc_json(r));
		}
		if (r->run_id) {
			_cleanup_free_ char *wandb = ref->in_ledger ? job_wandb_url(a->ctx, &ref->rec) : NULL;
			json_add_str_or_null(o, "wandb_url", wandb);
		}
		job_sweep_json(o, ref, r);
		cJSON_AddItemToArray(jobs, o);
	}
	json_print(doc);
}

/* ---- --steps: sacct's rows per job step ---- */

static void step_text(struct table *t, const struct job_step *st, const char *host)
{
	table_addf(t, "%s@%s", st->id, host);
	table_add(t, st->name[0] ? st->name : "-");
	table_add(t, st->state);
	table_take(t, job_step_exit_text(st));
	table_row(t, st->elapsed[0] ? st->elapsed : "-", st->max_rss[0] ? st->max_rss : "-",
		  st->max_vmsize[0] ? st->max_vmsize : "-", st->ave_cpu[0] ? st->ave_cpu : "-",
		  st->nodes[0] ? st->nodes : "-", st->tres_usage[0] ? st->tres_usage : "-", NULL);
}

/* A job's steps: rows of t, and its object ("main": the job itself, "steps": the rest). */
static cJSON *steps_of(struct table *t, const struct jobref *r, const struct jobs_steps *js)
{
	cJSON *o = cJSON_CreateObject(), *arr = NULL, *main = NULL;
	_cleanup_free_ char *job = xasprintf("%s@%s", r->id, r->host);
	cJSON_AddStringToObject(o, "job", job);
	cJSON_AddStringToObject(o, "asked", r->arg);
	cJSON_AddStringToObject(o, "host", r->host);
	for (size_t k = 0; k < js->n; k++) {
		const struct job_step *st = &js->steps[k];
		step_text(t, st, r->host);
		cJSON *so = cJSON_CreateObject();
		job_step_json(so, st);
		if (!st->step[0] && !main && streq(st->job, r->id)) {
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
	return o;
}

/* The steps of host's jobs in one exchange: rows of t, objects into jobs; *status
 * moved on. */
static void steps_host(struct dp_ctx *ctx, const struct job_set *set, const char *host,
		       struct table *t, cJSON *jobs, int *status)
{
	_cleanup_free_ struct jobs_target *tg = xcalloc(set->n + 1, sizeof(*tg));
	_cleanup_free_ const struct jobref **refs = xcalloc(set->n + 1, sizeof(*refs));
	_cleanup_strv_free_ char **dirs = NULL;
	size_t n = 0;
	for (size_t i = 0; i < set->n; i++) {
		const struct jobref *r = &set->refs[i];
		char *dir;
		if (!streq(r->host, host))
			continue;
		jobs_target_of(ctx, r, &tg[n], &dir);
		if (dir)
			strv_push(&dirs, dir);
		if (!tg[n].sched->steps_script) {
			error_msg("job '%s' runs on plain host '%s': it has no SLURM steps", r->arg, host);
			*status = *status == DPE_CONNECT ? *status : DPE_INPUT;
			continue;
		}
		refs[n++] = r;
	}
	if (!n)
		return;
	_cleanup_free_ struct jobs_steps *steps = xcalloc(n + 1, sizeof(*steps));
	struct jobs_result res = { 0 };
	struct jobs_host h = jobs_host_of(ctx, host);
	int r = jobs_steps(&h, tg, n, steps, &res);
	ssh_session_free(h.ss);
	if (r < 0 && res.failure == JOBS_NO_CONNECTION) {
		*status = report_error(&res.err);
	} else if (r < 0) {
		fputs(res.remote_err, stderr);
		error_msg("cannot ask '%s' for the jobs' steps: %s failed (exit status %d)", host,
			  res.tool, res.tool_exit);
		*status = *status == DPE_CONNECT ? *status : DPE_FAIL;
	}
	for (size_t i = 0; r == 0 && i < n; i++) {
		cJSON_AddItemToArray(jobs, steps_of(t, refs[i], &steps[i]));
		if (!steps[i].n) {
			error_msg("job '%s' not found on '%s': sacct has no record of it (accounting "
				  "may lag a job that just started)", refs[i]->id, host);
			if (*status != DPE_CONNECT && *status < DPE_NOTFOUND)
				*status = DPE_NOTFOUND;
		}
	}
	for (size_t i = 0; i < n; i++)
		job_steps_free(steps[i].steps, steps[i].n);
	jobs_result_release(&res);
}

static int cmd_status_steps(struct dp_ctx *ctx, const struct job_set *set)
{
	int status = 0;
	struct table t = { .ncols = 10, .trim = true };
	table_row(&t, "STEP", "NAME", "STATE", "EXIT", "ELAPSED", "MAXRSS", "MAXVMSIZE", "AVECPU",
		  "NODES", "TRES", NULL);
	cJSON *doc = cJSON_CreateObject();
	cJSON *jobs = cJSON_AddArrayToObject(doc, "jobs");
	for (size_t h = 0; set->hosts && set->hosts[h]; h++)
		steps_host(ctx, set, set->hosts[h], &t, jobs, &status);
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
	if (set.nsweeps && set.njobs)
		return usage_error(ctx, "give sweeps and jobs to separate calls: a SWEEP's status is "
				   "a table of its tasks");
	if (opt_sort && !set.nsweeps)
		return usage_error(ctx, "--sort %s orders a sweep's tasks: give a SWEEP", opt_sort);
	if (steps)
		return cmd_status_steps(ctx, &set);

	_cleanup_(status_answer_release) struct status_answer a = { .ctx = ctx };
	unsigned want = set.nsweeps ? JOBS_WANT_METRICS
			: JOBS_WANT_END | JOBS_WANT_PENDING | (tail ? JOBS_WANT_TAIL : 0);
	want |= (opt_usage ? JOBS_WANT_USAGE : 0) | (set.nsweeps ? 0 : JOBS_WANT_STAGES);
	status_query_hosts(ctx, &set, want, &a);
	int r_sweeps = set.nsweeps ? sweep_status_print(&a, &set, opt_sort, NULL) : 0;
	size_t found = 0;
	for (size_t i = 0; i < a.res.n; i++)
		found += !a.res.rows[i].not_found;
	if (ctx->json && !set.nsweeps)
		print_json(&a);
	else if (found && !set.nsweeps)
		print_text(&a);
	if (found && opt_usage && !ctx->json) /* (a sweep's: each task's) */
		usage_view_print(&a);
	return set.nsweeps ? r_sweeps : a.status;
}

const struct dispatch_cmd dispatch_cmd_status = {
	.name = "status",
	.summary = "show where jobs stand: state, reason, elapsed, nodes, exit code",
	.usage = "[-H HOST] [--steps] [--no-tail] [--usage] [--sort NAME] JOB...|SWEEP...",
	.description =
		"Asks each job's host in one command: squeue for jobs still queued or running,\n"
		"sacct for jobs that left the queue; plain-host jobs from their pid and exit\n"
		"files. A JOB is ID, ID_TASK or ID@HOST; a bare ID is looked up in the job ledger.\n"
		"Why each job waits or failed is said below the table, a pending job's with its\n"
		"numbers (request against free resources, dependencies, drained nodes, limits),\n"
		"a failed job's with the last 20 lines of its stderr, over the same connection\n"
		"(--no-tail: without).\n"
		"--steps shows sacct's accounting per job step instead (batch, extern, each srun).\n"
		"A SWEEP (its id, or the start of it: sweep-3f2a) is one table of its tasks, each\n"
		"with its parameters, state, exit, elapsed time and the last value of each\n"
		"metric it printed (DISPATCH_METRIC NAME=VALUE lines, read on the host), then a\n"
		"count of the states; --sort NAME orders it by a metric or parameter.\n"
		"--usage adds what each job did, from the samples its nodes recorded (submit\n"
		"--sample): GPU utilisation over its life, energy, CPU and memory efficiency.",
	.opts = status_options,
	.min_args = 0,
	.max_args = -1,
	.flags = CMD_WANTS_INVENTORY | CMD_NEEDS_SSH,
	.fn = cmd_status,
};
