/* SPDX-License-Identifier: MIT */
/*
 * dispatch cancel JOB...: scancel for SLURM jobs (one call per host for all its
 * jobs); for plain-host jobs, TERM to the job's process group (the bootstrap passes
 * it on to the command and records the exit status), after marking it cancelled.
 */
#include <cjson/cJSON.h>
#include <stdio.h>

#include "dispatch.h"
#include "inventory/inventory.h"
#include "jobref.h"
#include "jobs/jobs.h"
#include "transport/ssh.h"
#include "base/strbuf.h"

static const char *opt_host;

static const struct dp_option cancel_options[] = {
	OPT_STRING('H', "host", &opt_host, "HOST", "the host of jobs given by bare ID (settles an ambiguous ID)", "host"),
	OPT_END,
};

/* The jobs of one host, cancelled in one exchange: outcome[i] for set->refs[i]. */
static int cancel_host(const struct dp_ctx *ctx, const struct job_set *set, const char *host,
		       const char **outcome)
{
	_cleanup_free_ struct jobs_target *t = xcalloc(set->n + 1, sizeof(*t));
	_cleanup_free_ const char **out = xcalloc(set->n + 1, sizeof(*out));
	_cleanup_free_ size_t *at = xcalloc(set->n + 1, sizeof(*at));
	_cleanup_strv_free_ char **dirs = NULL;
	size_t n = 0;
	for (size_t i = 0; i < set->n; i++) {
		if (!streq(set->refs[i].host, host))
			continue;
		char *dir;
		jobs_target_of(ctx, &set->refs[i], &t[n], &dir);
		if (dir)
			strv_push(&dirs, dir);
		out[n] = outcome[i];
		at[n++] = i;
	}
	_cleanup_ssh_session_ struct ssh_session *ss = NULL;
	_cleanup_(jobs_result_release) struct jobs_result res = { 0 };
	struct jobs_host h = jobs_host_of(ctx, host);
	int r = jobs_cancel(&h, t, n, out, &res);
	ss = h.ss;
	for (size_t i = 0; i < n; i++)
		outcome[at[i]] = out[i];
	for (size_t i = 0; i < res.nnotes; i++) {
		if (res.notes[i].kind == JOBS_NOTE_REMOTE)
			fputs(res.notes[i].text, stderr);
		else
			error_msg("%s", res.notes[i].text);
	}
	if (res.failure == JOBS_NO_CONNECTION)
		return report_error(&res.err);
	return r;
}

static int cmd_cancel(struct dp_ctx *ctx, const struct dp_args *args)
{
	const char *host_opt = opt_host;
	_cleanup_(job_set_release) struct job_set set = { 0 };
	int r = job_args_resolve(ctx, args->pos, (size_t)args->npos, host_opt, &set);
	if (r)
		return r;
	_cleanup_free_ const char **res = xcalloc(set.n + 1, sizeof(*res));
	for (size_t h = 0; set.hosts && set.hosts[h]; h++) {
		int hr = cancel_host(ctx, &set, set.hosts[h], res);
		if (hr == DPE_CONNECT || (r != DPE_CONNECT && hr > r))
			r = hr;
	}
	if (ctx->json) {
		cJSON *doc = cJSON_CreateObject();
		cJSON *jobs = cJSON_AddArrayToObject(doc, "jobs");
		for (size_t i = 0; i < set.n; i++) {
			cJSON *o = cJSON_CreateObject();
			_cleanup_free_ char *job = xasprintf("%s@%s", set.refs[i].id, set.refs[i].host);
			cJSON_AddStringToObject(o, "job", job);
			cJSON_AddStringToObject(o, "asked", set.refs[i].arg);
			cJSON_AddStringToObject(o, "outcome", res[i] ? res[i] : "failed");
			cJSON_AddItemToArray(jobs, o);
		}
		json_print(doc);
	} else if (ctx->verbosity >= 0) {
		for (size_t i = 0; i < set.n; i++) {
			const char *o = res[i] ? res[i] : "failed";
			if (streq(o, "failed"))
				continue;
			printf("%s@%s: %s\n", set.refs[i].id, set.refs[i].host,
			       streq(o, "ended") ? "had ended already"
			       : streq(o, "gone") ? "no longer running" : "cancelled");
		}
	}
	return r;
}

const struct dispatch_cmd dispatch_cmd_cancel = {
	.name = "cancel",
	.summary = "cancel jobs (scancel; TERM to a plain-host job's process group)",
	.usage = "[-H HOST] JOB...|SWEEP...",
	.description =
		"Cancels each job on its host, one connection and one command per host:\n"
		"scancel for SLURM jobs; for plain-host jobs, TERM to the job's process group,\n"
		"which the bootstrap passes on to the command. A JOB is ID, ID_TASK or ID@HOST.\n"
		"A SWEEP cancels every job of the sweep (each array, each host's runs).",
	.opts = cancel_options,
	.min_args = 1,
	.max_args = -1,
	.flags = CMD_WANTS_INVENTORY | CMD_NEEDS_SSH,
	.fn = cmd_cancel,
};
