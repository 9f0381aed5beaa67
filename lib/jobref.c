/* SPDX-License-Identifier: MIT */
#include "jobref.h"

#include <stdlib.h>

#include "base/strbuf.h"

bool jobref_is_slurm_id(const char *id)
{
	size_t i = strspn(id, "0123456789");
	if (i == 0)
		return false;
	if (id[i] == '\0')
		return true;
	return id[i] == '_' && id[i + 1] && strspn(id + i + 1, "0123456789") == strlen(id + i + 1);
}

/* A plain job's id: a stage name, [A-Za-z0-9._-]. */
static bool valid_stage_id(const char *id)
{
	if (!*id || *id == '-' || *id == '.')
		return false;
	for (const char *p = id; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
		      *p == '.' || *p == '_' || *p == '-'))
			return false;
	return true;
}

int jobref_resolve(struct ledger *l, const char *arg, const char *host_opt, struct jobref *out,
		   struct dp_error *err)
{
	memset(out, 0, sizeof(*out));
	out->arg = xstrdup(arg);
	const char *at = strrchr(arg, '@');
	out->id = at ? xstrndup(arg, (size_t)(at - arg)) : xstrdup(arg);
	if (at) {
		if (!at[1])
			return dp_err(err, DPE_INPUT, "invalid job '%s': no host after '@'", arg);
		if (host_opt && !streq(host_opt, at + 1))
			return dp_err(err, DPE_INPUT, "job '%s' names host '%s' but -H says '%s'", arg,
				      at + 1, host_opt);
		out->host = xstrdup(at + 1);
	} else if (host_opt) {
		out->host = xstrdup(host_opt);
	}
	if (jobref_is_slurm_id(out->id))
		out->base = xstrndup(out->id, strspn(out->id, "0123456789"));
	else if (valid_stage_id(out->id))
		out->base = xstrdup(out->id);
	else
		return dp_err(err, DPE_INPUT, "invalid job '%s': a job is ID, ID_TASK or ID@HOST", arg);

	struct ledger_job *jobs = NULL;
	size_t n = 0;
	if (l && ledger_find(l, out->base, out->host, &jobs, &n, err) < 0)
		return -1;
	if (n == 0) {
		if (out->host)
			return 0; /* not submitted by dispatch (or another ledger): ask the host */
		return dp_err(err, DPE_NOTFOUND, "unknown job '%s': dispatch did not submit it (not "
			      "in the job ledger); name its host: %s@HOST", arg, arg);
	}
	for (size_t i = 1; i < n; i++) {
		if (streq(jobs[i].host, jobs[0].host))
			continue;
		_cleanup_strbuf_ struct strbuf hosts = STRBUF_INIT;
		_cleanup_strv_free_ char **seen = NULL;
		for (size_t k = 0; k < n; k++) {
			if (strv_contains(seen, jobs[k].host))
				continue;
			strv_add(&seen, jobs[k].host);
			strbuf_addf(&hosts, "%s%s@%s", hosts.len ? ", " : "", out->id, jobs[k].host);
		}
		ledger_jobs_free(jobs, n);
		return dp_err(err, DPE_INPUT, "job id '%s' is ambiguous: dispatch submitted it to "
			      "several hosts; say which: %s (or -H HOST)", out->id, hosts.buf);
	}
	/* The newest of the rows for one host (a cluster that was reset reuses ids). */
	out->rec = jobs[0];
	out->in_ledger = true;
	for (size_t i = 1; i < n; i++)
		ledger_job_release(&jobs[i]);
	free(jobs);
	if (!out->host)
		out->host = xstrdup(out->rec.host);
	return 0;
}

void jobref_release(struct jobref *r)
{
	free(r->arg);
	free(r->id);
	free(r->base);
	free(r->host);
	ledger_job_release(&r->rec);
	memset(r, 0, sizeof(*r));
}
