/* SPDX-License-Identifier: MIT */
/*
 * JOB operands as lib/jobs's targets and hosts, where logs finds a job's output, and
 * the log tail's printing.
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

#include "dispatch.h"
#include "inventory/inventory.h"
#include "inventory/sweep.h"
#include "jobref.h"
#include "jobs/jobs.h"
#include "jobs/jobscript.h"
#include "ledger.h"

void jobs_target_of(const struct dp_ctx *ctx, const struct jobref *r, struct jobs_target *t,
		    char **stage_dir)
{
	const struct inv_host *h = ctx->inv ? inventory_host(ctx->inv, r->host) : NULL;
	*stage_dir = job_stage_dir(r);
	*t = (struct jobs_target){
		.sched = sched_for(h, r->in_ledger ? r->rec.pid : 0),
		.job = { .id = r->id, .arg = r->arg, .stage_dir = *stage_dir, .host = r->host,
			 .pgid = r->in_ledger ? r->rec.pid : 0, .in_ledger = r->in_ledger,
			 .log_path = r->in_ledger ? r->rec.log_path : NULL,
			 .err_path = r->in_ledger ? r->rec.err_path : NULL,
			 .name = r->in_ledger ? r->rec.name : NULL,
			 .run_id = r->in_ledger ? r->rec.run_id : NULL,
			 .max_restarts = r->in_ledger ? r->rec.max_restarts : 0,
			 .sweep_first = r->in_ledger ? r->rec.sweep_first : 0 },
	};
}

char *job_wandb_url(const struct dp_ctx *ctx, const struct ledger_job *rec)
{
	if (!rec->run_id || !rec->wandb_run || !ctx->inv)
		return NULL;
	return jobscript_wandb_url(inventory_host(ctx->inv, rec->host), rec->run_id);
}

/* The ledger's sweep of r, and which task row is: false when row is none. A row's
 * array task id counts from the sweep index of its array's task 0 (sweep_first: a
 * sweep split over several arrays); a plain host's task is its row's sweep_first. */
static bool sweep_task(const struct jobref *r, const struct job_state *row, struct sweep *sw,
		       size_t *index)
{
	if (!r->in_ledger || !r->rec.sweep_id || !r->rec.job_id || !row->id || r->rec.sweep_first < 0)
		return false;
	if (sweep_from_json(sw, r->rec.sweep_params, NULL) < 0)
		return false;
	if (!jobref_is_slurm_id(r->rec.job_id)) { /* a plain host's task: its own job */
		*index = (size_t)r->rec.sweep_first;
		return streq(row->id, r->rec.job_id) && *index < sw->ntasks;
	}
	if (!sweep_task_of(sw, r->rec.job_id, row->id, index))
		return false;
	*index += (size_t)r->rec.sweep_first;
	return *index < sw->ntasks;
}

char *job_sweep_text(const struct jobref *r, const struct job_state *row)
{
	struct sweep sw = SWEEP_INIT;
	size_t k;
	char *text = NULL;
	if (sweep_task(r, row, &sw, &k)) {
		_cleanup_free_ char *values = sweep_task_text(&sw, k);
		text = xasprintf("%s task %zu/%zu: %s", r->rec.sweep_id, k, sw.ntasks, values);
	}
	sweep_release(&sw);
	return text;
}

void job_sweep_json(cJSON *o, const struct jobref *r, const struct job_state *row)
{
	struct sweep sw = SWEEP_INIT;
	size_t k;
	if (sweep_task(r, row, &sw, &k)) {
		cJSON *s = cJSON_AddObjectToObject(o, "sweep");
		cJSON_AddStringToObject(s, "id", r->rec.sweep_id);
		cJSON_AddNumberToObject(s, "index", (double)k);
		cJSON_AddNumberToObject(s, "size", (double)sw.ntasks);
		cJSON *p = cJSON_AddObjectToObject(s, "params");
		for (size_t i = 0; i < sw.nparams; i++)
			cJSON_AddStringToObject(p, sw.params[i].name, sweep_value(&sw, k, i));
	}
	sweep_release(&sw);
}

void ledger_target_of(const struct dp_ctx *ctx, const struct ledger_job *j, struct jobs_target *t,
		      char **stage_dir)
{
	*stage_dir = ledger_stage_dir(j);
	*t = (struct jobs_target){
		.sched = sched_for(ctx->inv ? inventory_host(ctx->inv, j->host) : NULL, j->pid),
		.job = { .id = j->job_id, .arg = j->job_id, .stage_dir = *stage_dir, .pgid = j->pid,
			 .host = j->host, .in_ledger = true, .run_id = j->run_id,
			 .max_restarts = j->max_restarts, .sweep_first = j->sweep_first },
	};
}

struct jobs_host jobs_host_of(const struct dp_ctx *ctx, const char *host)
{
	return (struct jobs_host){ .host = host, .sc = ctx->ssh, .inv = ctx->inv };
}

int job_log_path(struct ssh_session *ss, const struct jobref *r, enum job_log which, char **path,
		 struct dp_error *err)
{
	/* logs asks SLURM's backend only (a plain job's paths come from the ledger) */
	const struct sched_job j = { .id = r->id, .arg = r->arg, .host = r->host,
				     .in_ledger = r->in_ledger,
				     .log_path = r->in_ledger ? r->rec.log_path : NULL,
				     .err_path = r->in_ledger ? r->rec.err_path : NULL,
				     .name = r->in_ledger ? r->rec.name : NULL };
	return jobs_log_path(ss, sched_for(NULL, 0), &j, which, path, err);
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
