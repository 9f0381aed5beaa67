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
#include "sched/plain/plainjob.h"
#include "sched/slurm/slurm.h"
#include "base/strbuf.h"

static const char *opt_host;

static const struct dp_option cancel_options[] = {
	OPT_STRING('H', "host", &opt_host, "HOST", "the host of jobs given by bare ID (settles an ambiguous ID)", "host"),
	OPT_END,
};

struct result {
	const struct jobref *ref;
	const char *outcome;    /* "cancelled", "signalled", "ended", "gone", "failed" */
};

static int cancel_host(const struct dp_ctx *ctx, const struct job_set *set, const char *host,
		       struct result *res)
{
	struct dp_error err = { 0 };
	_cleanup_strbuf_ struct strbuf cmd = STRBUF_INIT, out = STRBUF_INIT, errout = STRBUF_INIT;
	_cleanup_strv_free_ char **ids = NULL, **dirs = NULL;
	_cleanup_free_ struct plainjob_ref *plain = NULL;
	size_t nplain = 0;
	int r = 0;

	for (size_t i = 0; i < set->n; i++) {
		const struct jobref *ref = &set->refs[i];
		if (!streq(ref->host, host))
			continue;
		if (!job_is_plain(ctx, ref)) {
			if (!strv_contains(ids, ref->id))
				strv_add(&ids, ref->id);
			continue;
		}
		char *dir = job_stage_dir(ref);
		if (!dir || ref->rec.pid <= 1) {
			free(dir);
			error_msg("cannot cancel '%s': dispatch has no record of its process on '%s'",
				  ref->arg, host);
			res[i].outcome = "failed";
			r = DPE_NOTFOUND;
			continue;
		}
		strv_push(&dirs, dir);
		plain = xrealloc(plain, (nplain + 1) * sizeof(*plain));
		plain[nplain++] = (struct plainjob_ref){ .id = ref->id, .stage_dir = dir,
							  .pgid = ref->rec.pid };
	}
	if (ids) {
		/* scancel's own exit status, apart from the plain jobs' */
		slurm_cancel_command(&cmd, ids);
	}
	if (nplain)
		plainjob_cancel_command(&cmd, plain, nplain);
	if (!cmd.len)
		return r;

	int status;
	if (host_exec_capture(ctx, host, cmd.buf, &out, &errout, &status, &err) < 0) {
		for (size_t i = 0; i < set->n; i++)
			if (streq(set->refs[i].host, host) && !res[i].outcome)
				res[i].outcome = "failed";
		return report_error(&err);
	}
	fputs(errout.buf, stderr); /* scancel's own words */
	bool scancel_ok = slurm_parse_exit(out.buf, "scancel") == 0;
	if (ids && !scancel_ok) {
		error_msg("scancel on '%s' failed", host);
		r = DPE_FAIL;
	}
	for (size_t i = 0; i < set->n; i++) {
		const struct jobref *ref = &set->refs[i];
		if (!streq(ref->host, host) || res[i].outcome)
			continue;
		if (!job_is_plain(ctx, ref)) {
			res[i].outcome = scancel_ok ? "cancelled" : "failed";
			continue;
		}
		const char *outcome = plainjob_parse_cancel(out.buf, ref->id);
		res[i].outcome = outcome ? outcome : "failed";
		if (!outcome) {
			error_msg("cannot cancel '%s' on '%s': no answer", ref->arg, host);
			r = DPE_FAIL;
		}
	}
	return r;
}

static int cmd_cancel(struct dp_ctx *ctx, const struct dp_args *args)
{
	const char *host_opt = opt_host;
	_cleanup_(job_set_release) struct job_set set = { 0 };
	int r = job_args_resolve(ctx, args->pos, (size_t)args->npos, host_opt, &set);
	if (r)
		return r;
	_cleanup_free_ struct result *res = xcalloc(set.n, sizeof(*res));
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
			cJSON_AddStringToObject(o, "outcome", res[i].outcome ? res[i].outcome : "failed");
			cJSON_AddItemToArray(jobs, o);
		}
		json_print(doc);
	} else if (ctx->verbosity >= 0) {
		for (size_t i = 0; i < set.n; i++) {
			const char *o = res[i].outcome ? res[i].outcome : "failed";
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
	.usage = "[-H HOST] JOB...",
	.description =
		"Cancels each job on its host, one connection and one command per host:\n"
		"scancel for SLURM jobs; for plain-host jobs, TERM to the job's process group,\n"
		"which the bootstrap passes on to the command. A JOB is ID, ID_TASK or ID@HOST.",
	.opts = cancel_options,
	.min_args = 1,
	.max_args = -1,
	.flags = CMD_WANTS_INVENTORY | CMD_NEEDS_SSH,
	.fn = cmd_cancel,
};
