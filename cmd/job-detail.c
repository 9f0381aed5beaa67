/* SPDX-License-Identifier: MIT */
/*
 * JOB operands as lib/jobs's targets, and what wait, queue and logs still call by
 * their old names over lib/jobs and the backends (each goes when its command moves
 * onto jobs_query); the log tail's printing.
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

#include "dispatch.h"
#include "inventory/inventory.h"
#include "jobref.h"
#include "jobs/jobs.h"
#include "remote/remote.h"
#include "sched/slurm/slurm_pending.h"
#include "transport/ssh.h"

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
			 .name = r->in_ledger ? r->rec.name : NULL },
	};
}

static int open_session(void *data, const char *host, struct ssh_session **ss,
			struct dp_error *err)
{
	const struct dp_ctx *ctx = data;
	struct ssh_ctx sc;
	cmd_ssh_ctx(ctx, &sc);
	return ssh_session_open(&sc, inventory_ssh_destination(ctx->inv, host), ss, err);
}

struct jobs_host jobs_host_of(const struct dp_ctx *ctx, const char *host)
{
	return (struct jobs_host){ .host = host, .open = open_session, .open_data = (void *)ctx };
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
	return sched_for(NULL, 0)->log_path(ss, &j, which, path, err);
}

void job_tail_fetch(struct ssh_session *ss, const struct jobref *r, bool plain,
		    struct job_tail *t)
{
	struct jobs_target tg;
	_cleanup_free_ char *dir = NULL;
	struct dp_ctx none = { 0 };
	jobs_target_of(&none, r, &tg, &dir);
	tg.sched = sched_for(NULL, plain ? 1 : 0);
	jobs_tail_fetch(ss, tg.sched, &tg.job, t);
}

void job_end_fetch(const struct dp_ctx *ctx, struct ssh_session *ss, const struct job_end_of *of,
		   struct job_end *const *d, size_t n)
{
	const struct sched_ops *s = sched_for(NULL, 0);
	_cleanup_free_ struct job_state *rows = xcalloc(n + 1, sizeof(*rows));
	_cleanup_free_ struct job_state **p = xcalloc(n + 1, sizeof(*p));
	struct remote_script rs = REMOTE_SCRIPT_INIT;
	struct remote_reply rr = REMOTE_REPLY_INIT;
	struct dp_error err = { 0 };
	for (size_t i = 0; i < n; i++) {
		rows[i] = (struct job_state){ .id = (char *)of[i].id, .state = (char *)of[i].state,
					      .cancelled_by = (char *)of[i].cancelled_by,
					      .nodes = (char *)of[i].nodes };
		p[i] = &rows[i];
	}
	if (ss && s->end_script(&rs, p, n)) {
		_cleanup_free_ char *note = NULL;
		if (remote_run(ss, &rs, &rr, &err) < 0)
			info_msg(ctx, "cannot ask how the jobs ended: %s", err.msg);
		else
			s->end_take(&rr, p, n, &note);
		if (note)
			info_msg(ctx, "%s", note);
		for (size_t i = 0; i < n; i++)
			*d[i] = rows[i].end;
	}
	remote_reply_release(&rr);
	remote_script_release(&rs);
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
