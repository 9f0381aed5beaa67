/* SPDX-License-Identifier: MIT */
/*
 * What a job did, read from a reply (lib/jobs/job_usage.h), aborting on a broken
 * property: every node and GPU taken has a name of printable characters without
 * blanks, utilisation figures that are numbers are in 0..100 or NAN... (a number
 * the reply gave, never a crash), series points in -1..100, the idle reason no
 * control character, the stages' exits -2..255, the allocation (SLURM's sacct line, the user it names) -1 or a
 * count with a user name of printable characters, and the spark lines and JSON are
 * built without a crash.
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "jobs/job_usage.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_word(const char *s)
{
	if (!*s)
		abort();
	for (; *s; s++)
		if ((unsigned char)*s < 0x21 || (unsigned char)*s > 0x7e)
			abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 8192)
		return 0;
	struct remote_reply rr = REMOTE_REPLY_INIT;
	strbuf_add(&rr.out, (const char *)data, size);
	remote_reply_parse(&rr);
	const struct sched_job j = { .id = "7", .stage_dir = "/s" };
	struct job_state js = { .id = strdup("7"), .state = strdup("FAILED"),
				.sched = &sched_slurm, .elapsed = -1 };
	job_usage_take(&rr, &j, &js);
	if (js.alloc_gpus < -1 || js.alloc_seconds < -1 || (js.alloc_gpus < 0) != (js.alloc_seconds < 0))
		abort();
	if (js.user)
		check_word(js.user);
	cJSON_Delete(job_alloc_json(&js));
	job_idle_take(&rr, &j, &js);
	job_stages_take(&rr, &j, &js);
	if (js.nstages > 1000 || (js.nstages && !js.stage_exit))
		abort();
	for (size_t i = 0; i < js.nstages; i++)
		if (js.stage_exit[i] < JOB_STAGE_NOT_RUN || js.stage_exit[i] > 255)
			abort();
	free(job_state_why(&js));
	for (size_t i = 0; js.usage && i < js.usage->nnodes; i++) {
		const struct job_usage_node *n = &js.usage->nodes[i];
		check_word(n->node);
		if (n->cores < 0 || n->mem_mib < 0 || n->rss_kib < 0)
			abort();
		(void)job_usage_cpu_eff(n);
		(void)job_usage_mem_eff(n);
		for (size_t k = 0; k < n->ngpus; k++) {
			const struct job_usage_gpu *g = &n->gpus[k];
			check_word(g->uuid);
			if (!isnan(g->mean) && g->mean < 0)
				abort();
			for (size_t s = 0; s < g->nseries; s++)
				if (g->series[s] < -1 || g->series[s] > 100)
					abort();
			free(job_usage_spark(g, true));
			free(job_usage_spark(g, false));
		}
	}
	for (const char *p = js.idle; p && *p; p++) /* shown escaped: no terminal control */
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			abort();
	cJSON_Delete(job_usage_json(js.usage));
	job_state_release(&js);
	remote_reply_release(&rr);
	return 0;
}
