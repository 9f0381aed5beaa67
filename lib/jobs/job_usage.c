/* SPDX-License-Identifier: MIT */
/* What a job did over its life: job_usage.h. */
#include "jobs/job_usage.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/marker.h"
#include "base/shquote.h"
#include "base/strbuf.h"
#include "base/termesc.h"
#include "base/util.h"
#include "shfiles.h"

/* FN ID STAGE for each of jobs[0..n) with a stage dir, after the program that
 * defines FN (once). */
static void per_job(struct remote_script *rs, const struct sched_job *jobs, size_t n,
		    const char *program, const char *fn)
{
	bool any = false;
	for (size_t i = 0; i < n; i++) {
		if (!jobs[i].stage_dir)
			continue;
		struct strbuf *sb = remote_section(rs, REMOTE_USAGE);
		if (!any)
			strbuf_adds(sb, program);
		any = true;
		strbuf_addf(sb, "%s ", fn);
		sh_quote(sb, jobs[i].id);
		strbuf_addch(sb, ' ');
		sh_quote(sb, jobs[i].stage_dir);
		strbuf_addch(sb, '\n');
	}
}

void job_usage_script(struct remote_script *rs, const struct sched_job *jobs, size_t n)
{
	if (n)
		marker_print(remote_section(rs, REMOTE_USAGE), MARK_USER, "\"$(id -un)\"");
	per_job(rs, jobs, n, shfile_jobs_usage_read, "dispatch_usage_read");
}

void job_idle_script(struct remote_script *rs, const struct sched_job *jobs, size_t n)
{
	per_job(rs, jobs, n, shfile_jobs_idle_read, "dispatch_idle_read");
}

void job_stages_script(struct remote_script *rs, const struct sched_job *jobs, size_t n)
{
	per_job(rs, jobs, n, shfile_jobs_stages_read, "dispatch_stages_read");
}

void job_stages_take(const struct remote_reply *rr, const struct sched_job *j, struct job_state *js)
{
	const char *id = js->id ? js->id : j->id;
	for (size_t i = 0; i < rr->n; i++) {
		const char *v = rr->marks[i].value, *bar = strchr(v, '|');
		if (!streq(rr->marks[i].key, MARK_STAGES) || !bar || strncmp(v, id, (size_t)(bar - v)) ||
		    id[bar - v])
			continue;
		/* "N,I:S,I:S" */
		char *end;
		long n = strtol(bar + 1, &end, 10);
		if (n < 1 || n > 1000 || (*end && *end != ','))
			continue;
		free(js->stage_exit);
		js->stage_exit = xcalloc((size_t)n, sizeof(*js->stage_exit));
		js->nstages = (size_t)n;
		for (long k = 0; k < n; k++)
			js->stage_exit[k] = JOB_STAGE_NOT_RUN;
		for (const char *p = end; *p == ',';) {
			long stage = strtol(p + 1, &end, 10), code = JOB_STAGE_STARTED;
			if (*end != ':')
				break;
			p = end + 1;
			if (*p == '-')
				end = (char *)p + 1;
			else
				code = strtol(p, &end, 10);
			if (end == p || (*end && *end != ',') || code < -1 || code > 255)
				break;
			if (stage >= 1 && stage <= n)
				js->stage_exit[stage - 1] = (int)code;
			p = end;
		}
	}
}

/* The '|' fields of v into f[0..n), in a copy the caller frees; false when there
 * are not exactly n. */
static bool fields(const char *v, char **copy, char **f, size_t n)
{
	*copy = xstrdup(v);
	char *p = *copy;
	for (size_t i = 0; i < n; i++) {
		f[i] = p;
		p = strchr(p, '|');
		if (i + 1 < n && !p)
			return false;
		if (p)
			*p++ = '\0';
	}
	return p == NULL;
}

/* A figure, NAN for "-" or anything that is not a plain number. */
static double figure(const char *s)
{
	char *end;
	if (!*s || strspn(s, "0123456789.") != strlen(s))
		return NAN;
	double v = strtod(s, &end);
	return *end ? NAN : v;
}

static long whole(const char *s)
{
	double v = figure(s);
	return isnan(v) ? 0 : (long)v;
}

static bool word_ok(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x21 || (unsigned char)*s > 0x7e)
			return false;
	return true;
}

static void take_series(struct job_usage_gpu *g, const char *s)
{
	if (streq(s, "-"))
		return;
	_cleanup_free_ char *copy = xstrdup(s);
	for (char *tok = strtok(copy, ","); tok && g->nseries < 1000; tok = strtok(NULL, ",")) {
		double v = figure(tok);
		g->series = xrealloc(g->series, (g->nseries + 1) * sizeof(*g->series));
		g->series[g->nseries++] = isnan(v) || v > 100 ? -1 : (int)v;
	}
}

static struct job_usage_node *node_of(struct job_usage *u, const char *name)
{
	for (size_t i = 0; i < u->nnodes; i++)
		if (streq(u->nodes[i].node, name))
			return &u->nodes[i];
	return NULL;
}

void job_idle_take(const struct remote_reply *rr, const struct sched_job *j, struct job_state *js)
{
	const char *id = js->id ? js->id : j->id;
	size_t len = strlen(id);
	for (size_t i = 0; i < rr->n; i++) {
		const char *v = rr->marks[i].value;
		if (streq(rr->marks[i].key, MARK_IDLE) && strncmp(v, id, len) == 0 && v[len] == '|' &&
		    v[len + 1]) {
			free(js->idle);
			js->idle = printable(v + len + 1);
		}
	}
}

/* How many GPUs a plain job leased: its indices "0,2" (a lease), "" none. */
static long leased(const char *gpus)
{
	long n = 0;
	for (const char *p = gpus; p && *p; p += strcspn(p, ","), p += !!*p)
		n++;
	return n;
}

/* What js was allocated (job_state.h): its backend's answer (alloc_take) where it
 * asked, else its lease; the user it ran as, else the login's. */
static void alloc_take(const struct remote_reply *rr, const char *id, struct job_state *js)
{
	js->alloc_gpus = js->alloc_seconds = -1;
	if (js->sched && js->sched->alloc_take)
		js->sched->alloc_take(rr, id, js);
	if (js->alloc_gpus < 0 && js->gpus && js->elapsed >= 0) {
		js->alloc_gpus = leased(js->gpus);
		js->alloc_seconds = js->elapsed;
	}
	const char *login = remote_value(rr, MARK_USER);
	if (!js->user && login && *login && word_ok(login))
		js->user = xstrdup(login);
}

void job_usage_take(const struct remote_reply *rr, const struct sched_job *j, struct job_state *js)
{
	const char *id = js->id ? js->id : j->id;
	struct job_usage *u = xcalloc(1, sizeof(*u));
	alloc_take(rr, id, js);
	for (size_t i = 0; i < rr->n; i++) {
		const char *key = rr->marks[i].key, *v = rr->marks[i].value;
		char *f[11];
		_cleanup_free_ char *copy = NULL;
		if (streq(key, MARK_USAGE)) {
			if (!fields(v, &copy, f, 9) || !streq(f[0], id) || !word_ok(f[1]) ||
			    node_of(u, f[1]))
				continue;
			u->nodes = xrealloc(u->nodes, (u->nnodes + 1) * sizeof(*u->nodes));
			u->nodes[u->nnodes++] = (struct job_usage_node){
				.node = xstrdup(f[1]), .start = whole(f[2]), .end = whole(f[3]),
				.samples = whole(f[4]), .cpu = figure(f[5]), .rss_kib = whole(f[6]),
				.cores = whole(f[7]), .mem_mib = whole(f[8]),
			};
		} else if (streq(key, MARK_USAGE_GPU)) {
			struct job_usage_node *n;
			if (!fields(v, &copy, f, 11) || !streq(f[0], id) || !(n = node_of(u, f[1])) ||
			    !word_ok(f[2]))
				continue;
			n->gpus = xrealloc(n->gpus, (n->ngpus + 1) * sizeof(*n->gpus));
			struct job_usage_gpu *g = &n->gpus[n->ngpus++];
			*g = (struct job_usage_gpu){
				.uuid = xstrdup(f[2]), .mean = figure(f[3]), .peak = figure(f[4]),
				.mem_peak = figure(f[5]), .wh = figure(f[6]), .temp_peak = figure(f[7]),
				.throttled = whole(f[8]), .recent = figure(f[10]),
			};
			take_series(g, f[9]);
		}
	}
	job_usage_free(js->usage);
	js->usage = NULL;
	if (u->nnodes)
		js->usage = u;
	else
		job_usage_free(u);
}

void job_usage_free(struct job_usage *u)
{
	if (!u)
		return;
	for (size_t i = 0; i < u->nnodes; i++) {
		for (size_t k = 0; k < u->nodes[i].ngpus; k++) {
			free(u->nodes[i].gpus[k].uuid);
			free(u->nodes[i].gpus[k].series);
		}
		free(u->nodes[i].gpus);
		free(u->nodes[i].node);
	}
	free(u->nodes);
	free(u);
}

char *job_usage_spark(const struct job_usage_gpu *g, bool utf8)
{
	static const char *const blocks[] = { " ", "\u2581", "\u2582", "\u2583", "\u2584",
					      "\u2585", "\u2586", "\u2587", "\u2588" };
	static const char ascii[] = " .:-=+*#%@";
	struct strbuf sb = STRBUF_INIT;
	for (size_t i = 0; i < g->nseries; i++) {
		int v = g->series[i];
		/* (a GPU in use at all is never drawn blank) */
		int b8 = v > 0 && (v * 8 + 50) / 100 == 0 ? 1 : (v * 8 + 50) / 100;
		int b9 = v > 0 && (v * 9 + 50) / 100 == 0 ? 1 : (v * 9 + 50) / 100;
		if (v < 0)
			strbuf_addch(&sb, utf8 ? '-' : '?');
		else if (utf8)
			strbuf_adds(&sb, blocks[b8]);
		else
			strbuf_addch(&sb, ascii[b9]);
	}
	return strbuf_detach(&sb);
}

double job_usage_cpu_eff(const struct job_usage_node *n)
{
	long span = n->end - n->start;
	if (n->cores <= 0 || span <= 0 || isnan(n->cpu))
		return NAN;
	return 100.0 * n->cpu / ((double)n->cores * (double)span);
}

double job_usage_mem_eff(const struct job_usage_node *n)
{
	if (n->mem_mib <= 0)
		return NAN;
	return 100.0 * (double)n->rss_kib / 1024.0 / (double)n->mem_mib;
}

static void add_figure(cJSON *o, const char *name, double v)
{
	if (isnan(v))
		cJSON_AddNullToObject(o, name);
	else
		cJSON_AddNumberToObject(o, name, (double)(long long)(v * 1000 + 0.5) / 1000);
}

cJSON *job_usage_json(const struct job_usage *u)
{
	cJSON *o = cJSON_CreateObject();
	cJSON *nodes = cJSON_AddArrayToObject(o, "nodes");
	for (size_t i = 0; u && i < u->nnodes; i++) {
		const struct job_usage_node *n = &u->nodes[i];
		cJSON *jn = cJSON_CreateObject();
		cJSON_AddStringToObject(jn, "node", n->node);
		cJSON_AddNumberToObject(jn, "start", (double)n->start);
		cJSON_AddNumberToObject(jn, "end", (double)n->end);
		cJSON_AddNumberToObject(jn, "samples", (double)n->samples);
		add_figure(jn, "cpu_seconds", n->cpu);
		cJSON_AddNumberToObject(jn, "peak_rss_kib", (double)n->rss_kib);
		add_figure(jn, "cores", n->cores > 0 ? (double)n->cores : NAN);
		add_figure(jn, "mem_mib", n->mem_mib > 0 ? (double)n->mem_mib : NAN);
		add_figure(jn, "cpu_efficiency", job_usage_cpu_eff(n));
		add_figure(jn, "mem_efficiency", job_usage_mem_eff(n));
		cJSON *gpus = cJSON_AddArrayToObject(jn, "gpus");
		for (size_t k = 0; k < n->ngpus; k++) {
			const struct job_usage_gpu *g = &n->gpus[k];
			cJSON *jg = cJSON_CreateObject();
			cJSON_AddStringToObject(jg, "uuid", g->uuid);
			add_figure(jg, "mean_util", g->mean);
			add_figure(jg, "recent_util", g->recent);
			add_figure(jg, "peak_util", g->peak);
			add_figure(jg, "peak_mem_mib", g->mem_peak);
			add_figure(jg, "energy_wh", g->wh);
			add_figure(jg, "peak_temp", g->temp_peak);
			cJSON_AddNumberToObject(jg, "throttled_samples", (double)g->throttled);
			cJSON_AddBoolToObject(jg, "idle", !isnan(g->mean) && g->mean < JOB_USAGE_IDLE_PCT);
			cJSON *series = cJSON_AddArrayToObject(jg, "series");
			for (size_t s = 0; s < g->nseries; s++)
				cJSON_AddItemToArray(series, g->series[s] < 0 ? cJSON_CreateNull()
							     : cJSON_CreateNumber(g->series[s]));
			cJSON_AddItemToArray(gpus, jg);
		}
		cJSON_AddItemToArray(nodes, jn);
	}
	return o;
}

cJSON *job_alloc_json(const struct job_state *js)
{
	if (js->alloc_gpus < 0 || js->alloc_seconds < 0)
		return cJSON_CreateNull();
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "gpus", (double)js->alloc_gpus);
	cJSON_AddNumberToObject(o, "seconds", (double)js->alloc_seconds);
	cJSON_AddItemToObject(o, "user", js->user ? cJSON_CreateString(js->user) : cJSON_CreateNull());
	return o;
}
