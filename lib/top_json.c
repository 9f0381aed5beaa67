/* SPDX-License-Identifier: MIT */
/*
 * `dispatch top --json`: one document per sample of a top session (jobs/top.h),
 * whatever the backend that sampled it.
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <time.h>

#include "base/json.h"
#include "gpu/gpu_top.h"
#include "gpu/node_health.h"
#include "jobs/top.h"
#include "top_json.h"

static void json_num(cJSON *o, const char *key, double v)
{
	if (isnan(v))
		cJSON_AddNullToObject(o, key);
	else
		cJSON_AddNumberToObject(o, key, v);
}

static cJSON *proc_json(const struct top_proc *pr, long pid, double mem_mib, bool gpu)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "pid", (double)pid);
	if (gpu)
		json_num(o, "memory_used_mib", mem_mib);
	json_add_str_or_null(o, "command", pr ? pr->command : NULL);
	json_add_str_or_null(o, "user", pr ? pr->user : NULL);
	json_num(o, "cpu_pct", pr ? pr->cpu : NAN);
	json_num(o, "rss_kib", pr ? (double)pr->rss_kib : NAN);
	return o;
}

/* --procs: the job's processes on GPU r. */
static void procs_json(const struct plain_top *p, const struct gpu_row *r, cJSON *arr)
{
	const struct top_app **apps;
	size_t na = top_gpu_procs(p, r->uuid, &apps);
	for (size_t a = 0; a < na; a++)
		cJSON_AddItemToArray(arr, proc_json(top_proc_of(p, apps[a]->pid), apps[a]->pid,
						    apps[a]->mem_mib, true));
	free(apps);
}

cJSON *top_sample_json(const struct top_session *s, const char *job, const char *host, double now)
{
	cJSON *doc = cJSON_CreateObject();
	cJSON_AddStringToObject(doc, "job", job);
	cJSON_AddStringToObject(doc, "host", host);
	cJSON_AddNumberToObject(doc, "sample", (double)s->samples);
	cJSON_AddNumberToObject(doc, "interval", s->interval);
	cJSON_AddNumberToObject(doc, "time", (double)time(NULL));
	cJSON *nodes = cJSON_AddArrayToObject(doc, "nodes");
	for (size_t i = 0; i < s->top.nnodes; i++) {
		const struct gpu_node *n = &s->top.nodes[i];
		const struct gpu_row **rows;
		size_t nr = gpu_top_node_rows(&s->top, n, &rows);
		const char *flag = top_node_flag(n, nr, now, s->interval);
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "node", n->name);
		cJSON_AddNumberToObject(o, "allocated_gpus", n->allocated);
		json_add_str_or_null(o, "flag", flag);
		json_add_str_or_null(o, "message", n->message);
		json_add_str_or_null(o, "step_gpus", n->step_gpus);
		cJSON *gpus = cJSON_AddArrayToObject(o, "gpus");
		for (size_t k = 0; k < nr; k++) {
			const struct gpu_row *r = rows[k];
			cJSON *g = cJSON_CreateObject();
			json_add_str_or_null(g, "uuid", r->uuid);
			json_add_str_or_null(g, "bus_id", r->bus_id);
			json_add_str_or_null(g, "name", r->name);
			json_add_int_or_null(g, "index", r->index);
			json_add_int_or_null(g, "minor_number", r->minor);
			json_num(g, "utilization_pct", r->util);
			json_num(g, "memory_used_mib", r->mem_used);
			json_num(g, "memory_total_mib", r->mem_total);
			json_num(g, "power_w", r->power);
			json_num(g, "power_limit_w", r->power_limit);
			json_num(g, "temperature_c", r->temp);
			json_add_str_or_null(g, "throttle_reasons", r->throttle);
			json_add_str_or_null(g, "flag", gpu_node_stale(n, now, s->interval) ? "stale"
							: r->shared ? "shared" : NULL);
			if (s->one_host)
				cJSON_AddBoolToObject(g, "shared", r->shared);
			if (s->procs && top_node_procs(s, i))
				procs_json(top_node_procs(s, i), r, cJSON_AddArrayToObject(g, "processes"));
			cJSON_AddItemToArray(gpus, g);
		}
		if (s->health) {
			struct gpu_health_report hr;
			gpu_health_parse(n->health ? n->health : "", &hr);
			cJSON_AddItemToObject(o, "health", n->health ? gpu_health_json(&hr) : cJSON_CreateNull());
			gpu_health_release(&hr);
		}
		const struct plain_top *p = top_node_procs(s, i);
		if (p) {
			cJSON *pr = cJSON_AddObjectToObject(o, "processes");
			cJSON_AddNumberToObject(pr, "count", (double)p->njob);
			cJSON_AddNumberToObject(pr, "cpu_pct", p->cpu);
			cJSON_AddNumberToObject(pr, "rss_kib", (double)p->rss_kib);
			if (top_node_procs_how(s, i))
				cJSON_AddStringToObject(pr, "found_by", top_node_procs_how(s, i));
			if (s->procs) {
				/* the job's processes holding none of the GPUs above */
				cJSON *none = cJSON_AddArrayToObject(pr, "without_gpu");
				for (size_t k = 0; k < p->njob; k++)
					if (!top_on_shown_gpu(p, p->job[k]->pid, rows, nr))
						cJSON_AddItemToArray(none, proc_json(p->job[k], p->job[k]->pid,
										     NAN, false));
			}
		} else if (top_has_procs(s)) {
			cJSON_AddNullToObject(o, "processes"); /* not reported yet */
		}
		free(rows);
		cJSON_AddItemToArray(nodes, o);
	}
	return doc;
}

