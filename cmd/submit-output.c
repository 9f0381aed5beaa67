/* SPDX-License-Identifier: MIT */
/* What submit and submit-packed print: the scripts of a dry run, and the job. */
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <stdio.h>

#include "dispatch.h"
#include "inventory/inventory.h"
#include "inventory/jobspec.h"
#include "inventory/sweep.h"
#include "container/container_run.h"
#include "jobs/sweep_arrays.h"
#include "submit-output.h"

/* A sweep's tasks, a row each: the index and each parameter's value. */
static void print_tasks(const struct sweep *sw)
{
	struct table t = { .ncols = sw->nparams + 1, .sep = "  ", .trim = true };
	table_add(&t, "TASK");
	for (size_t p = 0; p < sw->nparams; p++)
		table_take(&t, printable(sw->params[p].name));
	for (size_t i = 0; i < sw->ntasks; i++) {
		table_addf(&t, "%zu", i);
		for (size_t p = 0; p < sw->nparams; p++)
			table_take(&t, printable(sweep_value(sw, i, p)));
	}
	printf("==> the sweep's %zu tasks <==\n", sw->ntasks);
	table_print(&t);
	printf("\n");
}

static void print_text(const struct sweep *sweep, const struct jobscript *js,
		       const char *sweep_sbatch)
{
	if (sweep)
		print_tasks(sweep);
	if (sweep_sbatch)
		printf("==> sbatch, once per job array (under SLURM's default MaxArraySize, %d: "
		       "the cluster's own is asked at submission) <==\n%s\n",
		       SWEEP_ARRAY_DEFAULT_MAX, sweep_sbatch);
	if (js->sbatch)
		printf("==> sbatch.sh <==\n%s\n", js->sbatch);
	if (js->container)
		printf("==> container.sh <==\n%s\n", js->container);
	printf("==> bootstrap.sh <==\n%s", js->bootstrap);
}

static void add_container(cJSON *doc, const struct inv_host *h, const struct jobspec *spec)
{
	json_add_container(doc, container_runtime_name(h->container_runtime),
			   container_job_image(spec, h));
}

static cJSON *strv_json(char *const *v)
{
	cJSON *arr = cJSON_CreateArray();
	for (size_t i = 0; v && v[i]; i++)
		cJSON_AddItemToArray(arr, cJSON_CreateString(v[i]));
	return arr;
}

static void print_json(const struct inv_host *h, const struct jobspec *spec,
		       const struct jobscript *js, const char *boot_path, const char *emit,
		       const char *sweep_sbatch)
{
	cJSON *doc = cJSON_CreateObject();
	cJSON_AddStringToObject(doc, "host", h->name);
	cJSON_AddStringToObject(doc, "type", inv_host_type_name(h->type));
	if (js->sbatch) {
		cJSON_AddStringToObject(doc, "bootstrap_path", boot_path);
		cJSON_AddStringToObject(doc, "sbatch_script", js->sbatch);
	} else {
		cJSON_AddNullToObject(doc, "bootstrap_path");
		cJSON_AddNullToObject(doc, "sbatch_script");
	}
	if (js->container)
		cJSON_AddStringToObject(doc, "container_script", js->container);
	else
		cJSON_AddNullToObject(doc, "container_script");
	add_container(doc, h, spec);
	cJSON_AddStringToObject(doc, "bootstrap_script", js->bootstrap);
	cJSON_AddItemToObject(doc, "directives", strv_json(js->directives));
	cJSON_AddItemToObject(doc, "ignored", strv_json(js->ignored));
	if (sweep_sbatch) {
		cJSON *cmds = cJSON_AddArrayToObject(doc, "sbatch_commands");
		for (const char *l = sweep_sbatch; *l;) {
			size_t n = strcspn(l, "\n");
			char *line = xstrndup(l, n);
			cJSON_AddItemToArray(cmds, cJSON_CreateString(line));
			free(line);
			l += n + (l[n] == '\n');
		}
	} else {
		cJSON_AddNullToObject(doc, "sbatch_commands");
	}
	if (emit) {
		cJSON *files = cJSON_AddArrayToObject(doc, "emitted");
		char *p;
		if (js->sbatch) {
			p = xasprintf("%s/sbatch.sh", emit);
			cJSON_AddItemToArray(files, cJSON_CreateString(p));
			free(p);
		}
		if (js->container) {
			p = xasprintf("%s/container.sh", emit);
			cJSON_AddItemToArray(files, cJSON_CreateString(p));
			free(p);
		}
		p = xasprintf("%s/bootstrap.sh", emit);
		cJSON_AddItemToArray(files, cJSON_CreateString(p));
		free(p);
	}
	json_print(doc);
}

void submit_print_dry_run(const struct inv_host *h, const struct jobspec *spec,
			  const struct sweep *sweep, const struct jobscript *js,
			  const char *boot_path, const char *emit, const char *sweep_sbatch,
			  bool json)
{
	if (json)
		print_json(h, spec, js, boot_path, emit, sweep_sbatch);
	else if (emit) {
		if (js->sbatch)
			printf("%s/sbatch.sh\n", emit);
		if (js->container)
			printf("%s/container.sh\n", emit);
		printf("%s/bootstrap.sh\n", emit);
	} else
		print_text(sweep, js, sweep_sbatch);
}

void submit_print_job(const struct inv_host *h, const struct submission_job *job,
		      const struct submission *sub, bool json)
{
	if (!json && sub->narrays > 1) { /* a sweep in several arrays: each of them */
		printf("sweep %s: %zu tasks on %s as ", sub->sweep_id,
		       job->sweep_indexes ? job->sweep_nindexes : sub->sweep.ntasks, h->name);
		for (size_t k = 0; k < sub->narrays; k++)
			printf("%s%s@%s (%s)", k ? ", " : "", sub->arrays[k].job_id, h->name,
			       sub->arrays[k].tasks);
		printf("\n");
		return;
	}
	if (!json && sub->sweep_id) { /* the sweep's reference first: status, wait take it */
		printf("sweep %s: %zu tasks on %s as %s@%s\n", sub->sweep_id,
		       job->sweep_indexes ? job->sweep_nindexes : sub->sweep.ntasks, h->name,
		       sub->job_id, h->name);
		return;
	}
	if (!json) {
		printf("%s@%s\n", sub->job_id, h->name);
		return;
	}
	cJSON *doc = cJSON_CreateObject();
	_cleanup_free_ char *ref = xasprintf("%s@%s", sub->job_id, h->name);
	cJSON_AddStringToObject(doc, "job", ref);
	cJSON_AddStringToObject(doc, "id", sub->job_id);
	cJSON_AddStringToObject(doc, "host", h->name);
	cJSON_AddStringToObject(doc, "type", inv_host_type_name(h->type));
	if (h->cluster)
		cJSON_AddStringToObject(doc, "cluster", h->cluster->name);
	else
		cJSON_AddNullToObject(doc, "cluster");
	cJSON_AddStringToObject(doc, "name", job->spec->job_name ? job->spec->job_name : "dispatch");
	cJSON_AddStringToObject(doc, "token", sub->token);
	cJSON_AddStringToObject(doc, "stage_dir", sub->stage_dir);
	cJSON_AddStringToObject(doc, "script", sub->script);
	cJSON_AddStringToObject(doc, "log", sub->log);
	if (sub->pid > 0)
		cJSON_AddNumberToObject(doc, "pid", (double)sub->pid);
	else
		cJSON_AddNullToObject(doc, "pid");
	if (job->commit)
		cJSON_AddStringToObject(doc, "commit", job->commit);
	else
		cJSON_AddNullToObject(doc, "commit");
	cJSON_AddBoolToObject(doc, "dirty", job->dirty);
	add_container(doc, h, job->spec);
	cJSON_AddBoolToObject(doc, "recovered", sub->recovered);
	if (sub->sweep_id) {
		cJSON *sw = cJSON_AddObjectToObject(doc, "sweep");
		cJSON_AddStringToObject(sw, "id", sub->sweep_id);
		cJSON_AddNumberToObject(sw, "tasks", (double)sub->sweep.ntasks);
		cJSON *names = cJSON_AddArrayToObject(sw, "params");
		for (size_t p = 0; p < sub->sweep.nparams; p++)
			cJSON_AddItemToArray(names, cJSON_CreateString(sub->sweep.params[p].name));
		/* its job arrays: one, or several past the cluster's MaxArraySize */
		cJSON *arrays = cJSON_AddArrayToObject(sw, "arrays");
		for (size_t k = 0; k < sub->narrays; k++) {
			const struct submission_array *a = &sub->arrays[k];
			cJSON *o = cJSON_CreateObject();
			_cleanup_free_ char *aref = xasprintf("%s@%s", a->job_id, h->name);
			cJSON_AddStringToObject(o, "job", aref);
			cJSON_AddNumberToObject(o, "first", (double)a->first);
			cJSON_AddStringToObject(o, "tasks", a->tasks);
			cJSON_AddStringToObject(o, "log", a->log);
			cJSON_AddItemToArray(arrays, o);
		}
	} else {
		cJSON_AddNullToObject(doc, "sweep");
	}
	json_print(doc);
}
