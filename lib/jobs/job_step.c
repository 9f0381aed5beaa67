/* SPDX-License-Identifier: MIT */
/* A job's steps: job_step.h. */
#include "jobs/job_step.h"

#include <cjson/cJSON.h>
#include <stdlib.h>

#include "base/util.h"
#include "jobs/job_state.h"

void job_steps_free(struct job_step *steps, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct job_step *s = &steps[i];
		free(s->id);
		free(s->job);
		free(s->step);
		free(s->name);
		free(s->state);
		free(s->elapsed);
		free(s->max_rss);
		free(s->max_vmsize);
		free(s->ave_cpu);
		free(s->tres_usage);
		free(s->nodes);
	}
	free(steps);
}

char *job_step_exit_text(const struct job_step *st)
{
	return job_exit_text(st->exit_code, st->exit_signal);
}

static void add_count_or_null(cJSON *o, const char *key, long long v)
{
	if (v >= 0)
		cJSON_AddNumberToObject(o, key, (double)v);
	else
		cJSON_AddNullToObject(o, key);
}

void job_step_json(cJSON *o, const struct job_step *st)
{
	cJSON_AddStringToObject(o, "id", st->id);
	cJSON_AddStringToObject(o, "step", st->step);
	cJSON_AddStringToObject(o, "name", st->name);
	cJSON_AddStringToObject(o, "state", st->state);
	add_count_or_null(o, "exit_code", st->exit_code);
	add_count_or_null(o, "signal", st->exit_signal);
	cJSON_AddStringToObject(o, "elapsed", st->elapsed);
	cJSON_AddStringToObject(o, "max_rss", st->max_rss);
	add_count_or_null(o, "max_rss_bytes", st->max_rss_bytes);
	cJSON_AddStringToObject(o, "max_vmsize", st->max_vmsize);
	add_count_or_null(o, "max_vmsize_bytes", st->max_vmsize_bytes);
	cJSON_AddStringToObject(o, "ave_cpu", st->ave_cpu);
	cJSON_AddStringToObject(o, "tres_usage", st->tres_usage);
	cJSON_AddStringToObject(o, "nodes", st->nodes);
}
