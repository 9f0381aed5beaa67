/* SPDX-License-Identifier: MIT */
/*
 * How SLURM jobs that ended without COMPLETED ended (wait, status, submit --wait):
 * one more command on the host's connection, for all of its failed jobs at once,
 * that brings each step's MaxRSS against its memory limit, the names of the users
 * who cancelled them and which nodes of a NODE_FAIL job are down
 * (lib/sched/slurm/slurm_end.h); and the "failure" object of --json.
 */
#include <cjson/cJSON.h>

#include "dispatch.h"
#include "sched/slurm/slurm.h"
#include "sched/slurm/slurm_end.h"
#include "sched/slurm/slurm_why.h"
#include "transport/ssh.h"
#include "base/strbuf.h"

/* What the command must ask of a job that ended without COMPLETED. */
static void want(const struct job_end_of *of, char ***ids, char ***uids, char ***nodes)
{
	if (!strv_contains(*ids, of->id))
		strv_add(ids, of->id);
	if (of->cancelled_by && !strv_contains(*uids, of->cancelled_by))
		strv_add(uids, of->cancelled_by);
	if (streq(of->state, "NODE_FAIL") && of->nodes && *of->nodes &&
	    !streq(of->nodes, "None assigned") && !strv_contains(*nodes, of->nodes))
		strv_add(nodes, of->nodes);
}

/* The details from e of one job. */
static void take(const struct slurm_end *e, const struct job_end_of *of, struct job_end *d)
{
	*d = (struct job_end){ 0 };
	const struct slurm_end_row *m = slurm_end_memory(e, of->id);
	if (m) {
		d->max_rss = m->max_rss;
		d->mem_limit = m->mem_limit;
		d->rss_node = xstrdup(m->rss_node[0] ? m->rss_node : m->nodes);
		d->rss_step = xstrdup(m->step);
	}
	const char *name = slurm_end_user(e, of->cancelled_by);
	d->cancelled_by_name = name ? xstrdup(name) : NULL;
	if (streq(of->state, "NODE_FAIL"))
		d->failed_nodes = slurm_end_failed_nodes(e, of->nodes);
}

void job_end_fetch(const struct dp_ctx *ctx, struct ssh_session *ss, const struct job_end_of *of,
		   struct job_end *const *d, size_t n)
{
	_cleanup_strv_free_ char **ids = NULL, **uids = NULL, **nodes = NULL;
	for (size_t i = 0; i < n; i++)
		want(&of[i], &ids, &uids, &nodes);
	if (!ids || !ss)
		return;
	struct dp_error err = { 0 };
	_cleanup_strbuf_ struct strbuf cmd = STRBUF_INIT, out = STRBUF_INIT, errout = STRBUF_INIT;
	int status;
	slurm_end_command(&cmd, ids, uids, nodes);
	if (ssh_exec_capture(ss, cmd.buf, NULL, &out, &errout, &status, &err) < 0) {
		info_msg(ctx, "cannot ask how the jobs ended: %s", err.msg);
		return;
	}
	_cleanup_(slurm_end_release) struct slurm_end e;
	slurm_end_parse(out.buf, &e);
	if (e.sacct_exit != 0)
		info_msg(ctx, "sacct for the failed jobs' steps: exit status %d%s%.*s", e.sacct_exit,
			 errout.len ? ": " : "", (int)strcspn(errout.buf, "\n"), errout.buf);
	for (size_t i = 0; i < n; i++)
		take(&e, &of[i], d[i]);
}

void job_end_release(struct job_end *d)
{
	free(d->rss_node);
	free(d->rss_step);
	free(d->cancelled_by_name);
	free(d->failed_nodes);
	*d = (struct job_end){ 0 };
}

void job_end_apply(const struct job_end *d, struct slurm_why_job *w)
{
	w->max_rss = d->max_rss;
	w->mem_limit = d->mem_limit;
	w->rss_node = d->rss_node;
	w->rss_step = d->rss_step;
	w->cancelled_by_name = d->cancelled_by_name;
	w->failed_nodes = d->failed_nodes;
}

static void add_bytes(cJSON *o, const char *key, long long v)
{
	if (v > 0)
		cJSON_AddNumberToObject(o, key, (double)v);
	else
		cJSON_AddNullToObject(o, key);
}

void job_end_json(cJSON *o, const struct slurm_why_job *w, bool failed)
{
	if (!failed || !w->state) {
		cJSON_AddNullToObject(o, "failure");
		return;
	}
	cJSON *f = cJSON_AddObjectToObject(o, "failure");
	cJSON_AddStringToObject(f, "state", w->state);
	cJSON_AddBoolToObject(f, "out_of_memory", slurm_why_oom(w));
	json_add_int_or_null(f, "exit_code", w->exit_code);
	json_add_int_or_null(f, "signal", w->signal > 0 ? w->signal : -1);
	const char *sig = w->signal > 0 ? slurm_signal_name(w->signal) : NULL;
	_cleanup_free_ char *signame = sig ? xasprintf("SIG%s", sig) : NULL;
	json_add_str_or_null(f, "signal_name", signame);
	add_bytes(f, "max_rss_bytes", w->max_rss);
	add_bytes(f, "mem_limit_bytes", w->mem_limit);
	json_add_str_or_null(f, "max_rss_node", w->max_rss > 0 ? w->rss_node : NULL);
	json_add_str_or_null(f, "max_rss_step", w->max_rss > 0 ? w->rss_step : NULL);
	json_add_str_or_null(f, "nodes", w->nodes && *w->nodes ? w->nodes : NULL);
	json_add_str_or_null(f, "failed_nodes", w->failed_nodes);
	json_add_str_or_null(f, "elapsed", w->elapsed && *w->elapsed ? w->elapsed : NULL);
	json_add_str_or_null(f, "time_limit", w->time_limit && *w->time_limit ? w->time_limit : NULL);
	json_add_str_or_null(f, "cancelled_by_uid", w->cancelled_by);
	json_add_str_or_null(f, "cancelled_by", w->cancelled_by_name);
}
