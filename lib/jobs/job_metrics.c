/* SPDX-License-Identifier: MIT */
/* A job's metrics: job_metrics.h. */
#include "jobs/job_metrics.h"

#include <string.h>

#include "base/marker.h"
#include "base/shquote.h"
#include "base/strbuf.h"
#include "base/util.h"
#include "shfiles.h"

void job_metrics_script(struct remote_script *rs, const struct sched_job *jobs, size_t n)
{
	bool any = false;
	for (size_t i = 0; i < n; i++) {
		if (!jobs[i].log_path || !*jobs[i].log_path)
			continue;
		struct strbuf *sb = remote_section(rs, REMOTE_METRICS);
		if (!any)
			strbuf_adds(sb, shfile_jobs_job_metrics); /* dispatch_metrics ID LOG */
		any = true;
		strbuf_adds(sb, "dispatch_metrics ");
		sh_quote(sb, jobs[i].id);
		strbuf_addch(sb, ' ');
		sh_quote(sb, jobs[i].log_path);
		strbuf_addch(sb, '\n');
	}
}

static bool metric_name(const char *s, size_t n)
{
	if (n == 0 || n > 64)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.:/-", s[i]))
			return false;
	return true;
}

/* Whether the line's TASK names row: "-" the job itself, else the array task
 * "ID_TASK". */
static bool names_row(const char *task, size_t tlen, const char *id, const char *row)
{
	if (tlen == 1 && task[0] == '-')
		return streq(row, id);
	size_t idlen = strlen(id);
	return strncmp(row, id, idlen) == 0 && row[idlen] == '_' &&
	       strlen(row + idlen + 1) == tlen && strncmp(row + idlen + 1, task, tlen) == 0;
}

void job_metrics_take(const struct remote_reply *rr, const struct sched_job *j,
		      struct job_state *js)
{
	if (!j->log_path || !js->id)
		return;
	size_t idlen = strlen(j->id);
	for (size_t i = 0; i < rr->n; i++) {
		const char *v = rr->marks[i].value;
		if (!streq(rr->marks[i].key, MARK_METRIC) || strncmp(v, j->id, idlen) != 0 ||
		    v[idlen] != '|')
			continue;
		const char *task = v + idlen + 1, *bar = strchr(task, '|');
		const char *eq = bar ? strchr(bar + 1, '=') : NULL;
		if (!eq || !names_row(task, (size_t)(bar - task), j->id, js->id) ||
		    !metric_name(bar + 1, (size_t)(eq - bar - 1)) || js->nmetrics >= JOB_METRICS_MAX)
			continue;
		js->metrics = xrealloc(js->metrics, (js->nmetrics + 1) * sizeof(*js->metrics));
		js->metrics[js->nmetrics++] = (struct job_metric){
			.name = xstrndup(bar + 1, (size_t)(eq - bar - 1)),
			.value = xstrdup(eq + 1),
		};
	}
}

const char *job_state_metric(const struct job_state *js, const char *name)
{
	for (size_t i = 0; i < js->nmetrics; i++)
		if (streq(js->metrics[i].name, name))
			return js->metrics[i].value;
	return NULL;
}
