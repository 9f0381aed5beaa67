/* SPDX-License-Identifier: MIT */
/*
 * Where the jobs of a job set stand, every host asked at once (lib/jobs: jobs_query_hosts),
 * the answers taken in the hosts' order: for status, wait's sweeps and submit --retry.
 */
#include <stdio.h>

#include "dispatch.h"
#include "jobref.h"
#include "jobs/jobs.h"
#include "transport/ssh.h"

void status_answer_release(struct status_answer *a)
{
	jobs_result_release(&a->res);
	free(a->refs);
}

static void worst(struct status_answer *a, int status)
{
	/* connect (255) over not found (4) over failed (1) */
	if (status == DPE_CONNECT || (a->status != DPE_CONNECT && status > a->status))
		a->status = status;
}

static void print_notes(const struct dp_ctx *ctx, const struct jobs_result *res, size_t from)
{
	for (size_t i = from; i < res->nnotes; i++) {
		const struct jobs_note *n = &res->notes[i];
		if (n->kind == JOBS_NOTE_ERROR)
			error_msg("%s", n->text);
		else if (n->kind == JOBS_NOTE_WARNING)
			warning_msg("%s", n->text);
		else if (n->kind == JOBS_NOTE_INFO)
			info_msg(ctx, "%s", n->text);
		else
			fputs(n->text, stderr);
	}
}

/* One host's answer (asked by status_query_hosts) into a: its errors and notes
 * printed, its rows appended with their operands. */
static void take_answer(const struct dp_ctx *ctx, struct jobs_query_item *it,
			const struct jobref **refs, struct status_answer *a)
{
	struct jobs_result *res = &it->res;
	if (it->r < 0) {
		if (res->failure == JOBS_NO_CONNECTION) {
			worst(a, report_error(&res->err));
			return;
		}
		fputs(res->remote_err, stderr);
		if (res->failure == JOBS_EXIT_STATUS)
			error_msg("cannot ask '%s' for the jobs' state (exit status %d)", it->host.host,
				  res->exit_status);
		else
			error_msg("cannot ask '%s' for the jobs' state: %s failed (exit status %d); try again",
				  it->host.host, res->tool, res->tool_exit);
		worst(a, DPE_FAIL);
		return;
	}
	size_t first = a->res.n, notes = a->res.nnotes;
	jobs_result_take(&a->res, res);
	a->refs = xrealloc(a->refs, (a->res.n + 1) * sizeof(*a->refs));
	for (size_t i = first; i < a->res.n; i++) {
		a->refs[i] = refs[a->res.rows[i].target];
		if (a->res.rows[i].not_found) {
			error_msg("%s", a->res.rows[i].not_found);
			worst(a, DPE_NOTFOUND);
		}
	}
	print_notes(ctx, &a->res, notes);
}

void status_query_hosts(const struct dp_ctx *ctx, const struct job_set *set, unsigned want,
			struct status_answer *a)
{
	size_t nhosts = strv_len(set->hosts);
	if (!nhosts)
		return;
	struct jobs_query_item *items = xcalloc(nhosts, sizeof(*items));
	struct jobs_target *t = xcalloc(set->n + 1, sizeof(*t));
	const struct jobref **refs = xcalloc(set->n + 1, sizeof(*refs));
	_cleanup_strv_free_ char **dirs = NULL;
	/* each host's targets side by side in t (and their operands in refs) */
	size_t n = 0;
	for (size_t h = 0; h < nhosts; h++) {
		items[h].host = jobs_host_of(ctx, set->hosts[h]);
		items[h].targets = t + n;
		for (size_t i = 0; i < set->n; i++) {
			if (!streq(set->refs[i].host, set->hosts[h]))
				continue;
			char *dir;
			jobs_target_of(ctx, &set->refs[i], &t[n], &dir);
			if (dir)
				strv_push(&dirs, dir);
			refs[n++] = &set->refs[i];
		}
		items[h].n = (size_t)(t + n - items[h].targets);
	}
	jobs_query_hosts(items, nhosts, want, 0);
	for (size_t h = 0; h < nhosts; h++) {
		take_answer(ctx, &items[h], refs + (items[h].targets - t), a);
		ssh_session_free(items[h].host.ss);
		jobs_result_release(&items[h].res);
	}
	free(items);
	free(t);
	free(refs);
}
