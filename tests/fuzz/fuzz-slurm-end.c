/* SPDX-License-Identifier: MIT */
/*
 * How failed jobs ended (lib/sched/slurm/slurm_end.h), aborting on a broken property:
 * every row has all its fields, a size is -1 or not negative, a job's memory verdict
 * is one of its own steps with both numbers, a name is there only for a uid the
 * answer holds; and each line alone through slurm_mem_per_node (as AllocTRES and as
 * ReqMem) and slurm_human_bytes.
 */
#include <stdint.h>

#include "sched/slurm/slurm_end.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 8192)
		return 0;
	char *text = xstrndup((const char *)data, size);
	struct slurm_end e;
	slurm_end_parse(text, &e);
	if (e.sacct_exit < -1 || e.sacct_exit > 255 || strv_len(e.uids) != strv_len(e.names))
		abort();
	for (size_t i = 0; i < e.n; i++) {
		const struct slurm_end_row *r = &e.rows[i];
		if (!r->job || !r->step || !r->state || !r->rss_node || !r->nodes || !r->job[0])
			abort();
		if (r->max_rss < -1 || r->mem_limit < -1)
			abort();
		const struct slurm_end_row *m = slurm_end_memory(&e, r->job);
		if (m && (!m->step[0] || strcmp(m->job, r->job) != 0 || m->max_rss < 0 ||
			  m->mem_limit <= 0))
			abort();
		const char *name = slurm_end_user(&e, r->state);
		if (name && !strv_contains(e.uids, r->state))
			abort();
	}
	slurm_end_release(&e);
	char *line = xstrndup(text, strcspn(text, "\n"));
	if (slurm_mem_per_node(line, line) < -1 || slurm_mem_per_node("", line) < -1)
		abort();
	char *h = slurm_human_bytes(slurm_mem_per_node(line, "") + 2);
	if (!h[0])
		abort();
	free(h);
	free(line);
	free(text);
	return 0;
}
