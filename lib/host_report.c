/* SPDX-License-Identifier: MIT */
#include <cjson/cJSON.h>
#include <stdlib.h>

#include "base/json.h"
#include "base/util.h"
#include "host_facts.h"
#include "host_report.h"
#include "sched/sched.h"

void host_report_make(const struct host_facts *f, struct host_report *r)
{
	*r = (struct host_report){ 0 };
	const struct sched_ops *ops = f->slurm ? &sched_slurm : &sched_plain;
	if (ops->host_report)
		ops->host_report(f, r);
}

static void gpus_free(struct host_report_gpus *g, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(g[i].type);
	free(g);
}

void host_report_release(struct host_report *r)
{
	for (size_t i = 0; i < r->npartitions; i++) {
		struct host_report_partition *p = &r->partitions[i];
		free(p->name);
		free(p->state);
		free(p->nodes);
		free(p->max_time);
		free(p->default_time);
		gpus_free(p->gpus, p->ngpus);
	}
	for (size_t i = 0; i < r->nnodes; i++) {
		struct host_report_node *n = &r->nodes[i];
		free(n->name);
		free(n->state);
		strv_free(n->partitions);
		free(n->reason);
		gpus_free(n->gpus, n->ngpus);
	}
	free(r->partitions);
	free(r->nodes);
	free(r->version);
	*r = (struct host_report){ 0 };
}

const struct host_report_node *host_report_node(const struct host_report *r, const char *name)
{
	for (size_t i = 0; i < r->nnodes; i++)
		if (streq(r->nodes[i].name, name))
			return &r->nodes[i];
	return NULL;
}

static cJSON *gpus_json(const struct host_facts *f)
{
	cJSON *arr = cJSON_CreateArray();
	for (size_t i = 0; i < f->gpus.n; i++) {
		const struct nvidia_gpu *g = &f->gpus.gpus[i];
		cJSON *j = cJSON_CreateObject();
		cJSON_AddNumberToObject(j, "index", g->index);
		cJSON_AddStringToObject(j, "uuid", g->uuid);
		cJSON_AddStringToObject(j, "name", g->name);
		json_add_str_or_null(j, "chip", g->chip);
		json_add_int_or_null(j, "memory_mib", g->memory_mib);
		cJSON_AddNumberToObject(j, "processes", g->processes);
		json_add_int_or_null(j, "used_mib", g->used_mib);
		cJSON_AddBoolToObject(j, "busy", g->busy);
		cJSON_AddBoolToObject(j, "leased", g->leased);
		cJSON_AddItemToArray(arr, j);
	}
	return arr;
}

static cJSON *gpu_counts_json(const struct host_report_gpus *g, size_t n, bool free_max)
{
	cJSON *arr = cJSON_CreateArray();
	for (size_t k = 0; k < n; k++) {
		cJSON *x = cJSON_CreateObject();
		json_add_str_or_null(x, "type", g[k].type);
		cJSON_AddNumberToObject(x, "total", g[k].total);
		cJSON_AddNumberToObject(x, "used", g[k].used);
		cJSON_AddNumberToObject(x, "free", g[k].free);
		if (free_max)
			cJSON_AddNumberToObject(x, "free_max_node", g[k].free_max);
		cJSON_AddItemToArray(arr, x);
	}
	return arr;
}

cJSON *host_report_json(const char *host, const struct host_facts *f, const struct host_report *r)
{
	cJSON *doc = cJSON_CreateObject();
	cJSON_AddStringToObject(doc, "host", host);
	cJSON_AddStringToObject(doc, "kind", r->scheduler ? r->scheduler : "plain");
	json_add_str_or_null(doc, "slurm_version", r->version);
	json_add_str_or_null(doc, "slurm_error", f->slurm_error);
	cJSON *parts = cJSON_AddArrayToObject(doc, "partitions");
	for (size_t i = 0; i < r->npartitions; i++) {
		const struct host_report_partition *p = &r->partitions[i];
		cJSON *j = cJSON_CreateObject();
		cJSON_AddStringToObject(j, "name", p->name);
		cJSON_AddBoolToObject(j, "default", p->is_default);
		cJSON_AddStringToObject(j, "state", p->state);
		cJSON_AddBoolToObject(j, "up", p->up);
		cJSON_AddStringToObject(j, "nodes", p->nodes);
		cJSON_AddNumberToObject(j, "node_count", (double)p->node_count);
		cJSON_AddNumberToObject(j, "cpus", (double)p->cpus);
		cJSON_AddStringToObject(j, "max_time", p->max_time);
		cJSON_AddStringToObject(j, "default_time", p->default_time);
		cJSON_AddItemToObject(j, "gpus", gpu_counts_json(p->gpus, p->ngpus, true));
		cJSON_AddItemToArray(parts, j);
	}
	cJSON *nodes = cJSON_AddArrayToObject(doc, "nodes");
	for (size_t i = 0; i < r->nnodes; i++) {
		const struct host_report_node *n = &r->nodes[i];
		cJSON *j = cJSON_CreateObject();
		cJSON_AddStringToObject(j, "name", n->name);
		cJSON_AddStringToObject(j, "state", n->state);
		cJSON_AddBoolToObject(j, "usable", n->usable);
		cJSON_AddNumberToObject(j, "cpus", (double)n->cpus);
		cJSON_AddNumberToObject(j, "cpus_alloc", (double)n->cpus_alloc);
		cJSON *pa = cJSON_AddArrayToObject(j, "partitions");
		for (size_t k = 0; n->partitions && n->partitions[k]; k++)
			cJSON_AddItemToArray(pa, cJSON_CreateString(n->partitions[k]));
		json_add_str_or_null(j, "reason", n->reason);
		cJSON_AddItemToObject(j, "gpus", gpu_counts_json(n->gpus, n->ngpus, false));
		cJSON_AddItemToArray(nodes, j);
	}
	json_add_str_or_null(doc, "gpu_tool", f->gpu_tool ? "nvidia-smi" : NULL);
	cJSON_AddItemToObject(doc, "gpus", gpus_json(f));
	if (f->jobs_running >= 0) {
		cJSON *q = cJSON_AddObjectToObject(doc, "dispatch_jobs");
		cJSON_AddNumberToObject(q, "running", (double)f->jobs_running);
		cJSON_AddNumberToObject(q, "pending", (double)f->jobs_pending);
	} else {
		cJSON_AddNullToObject(doc, "dispatch_jobs");
	}
	json_add_str_or_null(doc, "dispatch_jobs_error", f->jobs_error);
	return doc;
}
