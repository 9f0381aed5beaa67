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

/* A sweep's tasks, a row each: the index, the host (host_of: a name per task; NULL:
 * no column) and each parameter's value. */
static void print_tasks(const struct sweep *sw, const char *const *host_of)
{
	struct table t = { .ncols = sw->nparams + 1 + !!host_of, .sep = "  ", .trim = true };
	table_add(&t, "TASK");
	if (host_of)
		table_add(&t, "HOST");
	for (size_t p = 0; p < sw->nparams; p++)
		table_take(&t, printable(sw->params[p].name));
	for (size_t i = 0; i < sw->ntasks; i++) {
		table_addf(&t, "%zu", i);
		if (host_of)
			table_add(&t, host_of[i] ? host_of[i] : "-");
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
		print_tasks(sweep, NULL);
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

/* ---- a sweep on plain hosts ---- */

/* Each task's host name (NULL where none), from the parts. Caller frees the array. */
static const char **hosts_of(const struct submit_sweep_part *parts, size_t n, size_t ntasks)
{
	const char **host_of = xcalloc(ntasks ? ntasks : 1, sizeof(*host_of));
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < parts[i].sub.ntasks; k++)
			if (parts[i].sub.tasks[k].index < ntasks)
				host_of[parts[i].sub.tasks[k].index] = parts[i].job.host->name;
	return host_of;
}

static cJSON *params_json(const struct sweep *sw)
{
	cJSON *names = cJSON_CreateArray();
	for (size_t p = 0; p < sw->nparams; p++)
		cJSON_AddItemToArray(names, cJSON_CreateString(sw->params[p].name));
	return names;
}

/* "sweep" of a sweep on plain hosts: its id, size, parameters and cap; each host's part (its stage, tasks and
 * cap), and the runs (submitted: with what the submission found). */
static cJSON *plain_sweep_json(const struct jobspec *spec, const struct submit_sweep_part *parts,
			 size_t n, bool submitted)
{
	const struct submission *first = &parts[0].sub;
	cJSON *sw = cJSON_CreateObject();
	cJSON_AddStringToObject(sw, "id", first->sweep_id);
	cJSON_AddNumberToObject(sw, "tasks", (double)first->sweep.ntasks);
	cJSON_AddItemToObject(sw, "params", params_json(&first->sweep));
	json_add_int_or_null(sw, "max_parallel", spec->max_parallel > 0 ? spec->max_parallel : -1);
	cJSON *hosts = cJSON_AddArrayToObject(sw, "hosts");
	for (size_t i = 0; i < n; i++) {
		cJSON *h = cJSON_CreateObject();
		cJSON_AddStringToObject(h, "host", parts[i].job.host->name);
		cJSON_AddStringToObject(h, "stage", parts[i].sub.stage);
		cJSON *tasks = cJSON_AddArrayToObject(h, "tasks");
		for (size_t k = 0; k < parts[i].sub.ntasks; k++)
			cJSON_AddItemToArray(tasks, cJSON_CreateNumber((double)parts[i].sub.tasks[k].index));
		json_add_int_or_null(h, "max_parallel", parts[i].job.sweep_cap > 0 ? parts[i].job.sweep_cap : -1);
		if (submitted)
			json_add_str_or_null(h, "stage_dir", parts[i].sub.stage_dir);
		cJSON_AddItemToArray(hosts, h);
	}
	cJSON *runs = cJSON_AddArrayToObject(sw, "runs");
	for (size_t idx = 0; idx < first->sweep.ntasks; idx++)
		for (size_t i = 0; i < n; i++)
			for (size_t k = 0; k < parts[i].sub.ntasks; k++) {
				const struct submission_task *t = &parts[i].sub.tasks[k];
				const char *host = parts[i].job.host->name;
				if (t->index != idx)
					continue;
				if (submitted && t->state == SUBMISSION_REFUSED)
					continue; /* never started: not a run */
				cJSON *r = cJSON_CreateObject();
				_cleanup_free_ char *ref = xasprintf("%s@%s", t->id, host);
				cJSON_AddStringToObject(r, "job", ref);
				cJSON_AddStringToObject(r, "id", t->id);
				cJSON_AddNumberToObject(r, "index", (double)t->index);
				cJSON_AddStringToObject(r, "host", host);
				if (submitted) {
					cJSON_AddStringToObject(r, "state", t->state == SUBMISSION_SUBMITTED
								? "submitted" : "unknown");
					cJSON_AddStringToObject(r, "token", t->token);
					json_add_str_or_null(r, "log", t->log);
					json_add_int_or_null(r, "pid", t->pid > 0 ? t->pid : -1);
					cJSON_AddBoolToObject(r, "recovered", t->recovered);
				}
				json_add_str_or_null(r, "run_id", t->run_id);
				cJSON_AddItemToArray(runs, r);
			}
	return sw;
}

void submit_print_sweep_dry_run(const struct jobspec *spec, const struct submit_sweep_part *parts,
				size_t n, const char *emit, bool json)
{
	if (!n)
		return;
	if (json) {
		cJSON *doc = cJSON_CreateObject();
		cJSON_AddItemToObject(doc, "sweep", plain_sweep_json(spec, parts, n, false));
		cJSON *hosts = cJSON_AddArrayToObject(doc, "hosts");
		for (size_t i = 0; i < n; i++) {
			const struct jobscript *js = &parts[i].sub.js;
			cJSON *h = cJSON_CreateObject();
			cJSON_AddStringToObject(h, "host", parts[i].job.host->name);
			cJSON_AddStringToObject(h, "type", inv_host_type_name(parts[i].job.host->type));
			json_add_str_or_null(h, "container_script", js->container);
			add_container(h, parts[i].job.host, spec);
			cJSON_AddStringToObject(h, "bootstrap_script", js->bootstrap);
			cJSON_AddItemToObject(h, "ignored", strv_json(js->ignored));
			cJSON_AddItemToArray(hosts, h);
		}
		json_print(doc);
		return;
	}
	if (emit) {
		submit_print_dry_run(parts[0].job.host, spec, &parts[0].sub.sweep, &parts[0].sub.js,
				     parts[0].sub.bootstrap_path, emit, NULL, false);
		return;
	}
	const char **host_of = hosts_of(parts, n, parts[0].sub.sweep.ntasks);
	print_tasks(&parts[0].sub.sweep, host_of);
	free(host_of);
	for (size_t i = 0; i < n; i++) {
		const struct jobscript *js = &parts[i].sub.js;
		const char *name = parts[i].job.host->name;
		if (js->container)
			printf("==> %s: container.sh <==\n%s\n", name, js->container);
		printf("==> %s: bootstrap.sh <==\n%s", name, js->bootstrap);
		if (i + 1 < n)
			printf("\n");
	}
}

/* "0,2,4" (the tasks that run, or may), or for many "0,2,4,...,98: 50 runs" */
static void task_list(struct strbuf *sb, const struct submission *sub)
{
	_cleanup_free_ size_t *ix = xcalloc(sub->ntasks ? sub->ntasks : 1, sizeof(*ix));
	size_t m = 0;
	for (size_t k = 0; k < sub->ntasks; k++)
		if (sub->tasks[k].state != SUBMISSION_REFUSED)
			ix[m++] = sub->tasks[k].index;
	for (size_t k = 0; k < m; k++) {
		if (m > 8 && k == 3) {
			strbuf_addf(sb, ",...,%zu: %zu runs", ix[m - 1], m);
			break;
		}
		strbuf_addf(sb, "%s%zu", k ? "," : "", ix[k]);
	}
}

void submit_print_sweep(const struct jobspec *spec, const struct submit_sweep_part *parts,
			size_t n, bool json)
{
	if (!n)
		return;
	if (json) {
		cJSON *doc = cJSON_CreateObject();
		cJSON_AddItemToObject(doc, "sweep", plain_sweep_json(spec, parts, n, true));
		cJSON_AddStringToObject(doc, "name", spec->job_name ? spec->job_name : "dispatch");
		json_add_str_or_null(doc, "commit", parts[0].job.commit);
		cJSON_AddBoolToObject(doc, "dirty", parts[0].job.dirty);
		add_container(doc, parts[0].job.host, spec);
		json_print(doc);
		return;
	}
	const struct submission *first = &parts[0].sub;
	_cleanup_strbuf_ struct strbuf line = STRBUF_INIT;
	size_t runs = 0;
	for (size_t i = 0; i < n; i++) {
		size_t before = line.len;
		strbuf_addf(&line, "%s%s (", line.len ? ", " : "", parts[i].job.host->name);
		size_t mark = line.len;
		task_list(&line, &parts[i].sub);
		if (line.len == mark) { /* nothing runs there */
			line.len = before;
			line.buf[before] = '\0';
			continue;
		}
		strbuf_addch(&line, ')');
		for (size_t k = 0; k < parts[i].sub.ntasks; k++)
			runs += parts[i].sub.tasks[k].state != SUBMISSION_REFUSED;
	}
	if (!runs)
		return;
	printf("sweep %s: %zu run%s on %s\n", first->sweep_id, runs, runs == 1 ? "" : "s", line.buf);
	for (size_t idx = 0; idx < first->sweep.ntasks; idx++)
		for (size_t i = 0; i < n; i++)
			for (size_t k = 0; k < parts[i].sub.ntasks; k++) {
				const struct submission_task *t = &parts[i].sub.tasks[k];
				if (t->index == idx && t->state != SUBMISSION_REFUSED)
					printf("%s@%s%s\n", t->id, parts[i].job.host->name,
					       t->state == SUBMISSION_SUBMITTED ? "" : " (unknown)");
			}
}
