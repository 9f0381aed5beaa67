/* SPDX-License-Identifier: MIT */
/*
 * sacct's per-step rows (status --steps), aborting on a broken property: every row
 * has all its fields, its id is its job and step joined by '.', a size in bytes is
 * -1 or not negative; and each field alone through slurm_parse_size.
 */
#include <stdint.h>

#include "sched/slurm/slurm_steps.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 8192)
		return 0;
	char *text = xstrndup((const char *)data, size);
	struct job_step *st;
	size_t n = slurm_parse_steps(text, &st);
	for (size_t i = 0; i < n; i++) {
		const struct job_step *s = &st[i];
		if (!s->id || !s->job || !s->step || !s->name || !s->state || !s->elapsed ||
		    !s->max_rss || !s->max_vmsize || !s->ave_cpu || !s->tres_usage || !s->nodes)
			abort();
		size_t jl = strlen(s->job);
		if (strncmp(s->id, s->job, jl) != 0 ||
		    (s->step[0] ? s->id[jl] != '.' || strcmp(s->id + jl + 1, s->step) != 0 : s->id[jl] != '\0'))
			abort();
		if (s->max_rss_bytes < -1 || s->max_vmsize_bytes < -1)
			abort();
	}
	job_steps_free(st, n);
	if (slurm_parse_size(text) < -1)
		abort();
	free(text);
	return 0;
}
