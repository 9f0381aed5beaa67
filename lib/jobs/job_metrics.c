/* SPDX-License-Identifier: MIT */
/* A job's metrics: job_metrics.h. */
#include "jobs/job_metrics.h"

#include <stdlib.h>
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

static int entry_cmp(const void *a, const void *b)
{
	const struct job_metrics_entry *x = a, *y = b;
	size_t n = x->keylen < y->keylen ? x->keylen : y->keylen;
	int c = memcmp(x->key, y->key, n);
	if (c)
		return c;
	if (x->keylen != y->keylen)
		return x->keylen < y->keylen ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

void job_metrics_index(const struct remote_reply *rr, struct job_metrics *m)
{
	*m = (struct job_metrics){ 0 };
	for (size_t i = 0; i < rr->n; i++) {
		const char *v = rr->marks[i].value;
		const char *bar = streq(rr->marks[i].key, MARK_METRIC) ? strchr(v, '|') : NULL;
		const char *bar2 = bar ? strchr(bar + 1, '|') : NULL;
		if (!bar2)
			continue;
		m->e = xrealloc(m->e, (m->n + 1) * sizeof(*m->e));
		m->e[m->n] = (struct job_metrics_entry){ .key = v, .keylen = (size_t)(bar2 - v),
							 .order = m->n, .metric = bar2 + 1 };
		m->n++;
	}
	if (m->n)
		qsort(m->e, m->n, sizeof(*m->e), entry_cmp);
}

void job_metrics_release(struct job_metrics *m)
{
	free(m->e);
	*m = (struct job_metrics){ 0 };
}

void job_metrics_take(const struct job_metrics *m, const struct sched_job *j,
		      struct job_state *js)
{
	if (!j->log_path || !js->id || !m->n)
		return;
	/* the row's key: "ID|-" for the job itself, "ID|K" for its array's task ID_K */
	size_t idlen = strlen(j->id);
	_cleanup_free_ char *key = NULL;
	if (streq(js->id, j->id))
		key = xasprintf("%s|-", j->id);
	else if (strncmp(js->id, j->id, idlen) == 0 && js->id[idlen] == '_')
		key = xasprintf("%s|%s", j->id, js->id + idlen + 1);
	else
		return;
	struct job_metrics_entry want = { .key = key, .keylen = strlen(key), .order = 0 };
	/* the first entry of the key: every entry of it follows, in the order printed */
	size_t lo = 0, hi = m->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (entry_cmp(&m->e[mid], &want) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < m->n && m->e[i].keylen == want.keylen &&
			    memcmp(m->e[i].key, key, want.keylen) == 0; i++) {
		const char *metric = m->e[i].metric, *eq = strchr(metric, '=');
		if (!eq || !metric_name(metric, (size_t)(eq - metric)) || js->nmetrics >= JOB_METRICS_MAX)
			continue;
		js->metrics = xrealloc(js->metrics, (js->nmetrics + 1) * sizeof(*js->metrics));
		js->metrics[js->nmetrics++] = (struct job_metric){
			.name = xstrndup(metric, (size_t)(eq - metric)),
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
