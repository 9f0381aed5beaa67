/* SPDX-License-Identifier: MIT */
/*
 * dispatch queue's parser on any bytes, with and without the end-of-record mark,
 * aborting on a broken property: a failed parse returns no job; every job has an id
 * that starts with digits (then nothing, '_' or '+'), a state, and every string set;
 * the filter holds: without -t only active jobs, with -p gpu only gpu jobs, with -t R
 * only RUNNING ones.
 */
#include <stdint.h>
#include <stdlib.h>

#include "sched/slurm/slurm.h"
#include "sched/slurm/slurm_queue.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define EOR "dsp-0123456789abcdef0123456789abcdef"

static void check(const char *text, const struct slurm_queue_filter *f, const char *eor)
{
	struct slurm_queue q;
	struct dp_error err = { 0 };
	int r = slurm_parse_queue(text, f, eor, &q, &err);
	if (r < 0 && q.n)
		abort();
	for (size_t i = 0; i < q.n; i++) {
		const struct slurm_qjob *j = &q.jobs[i];
		if (!j->id || !j->partition || !j->name || !j->user || !j->state || !j->elapsed ||
		    !j->nodes || !j->reason)
			abort();
		size_t d = strspn(j->id, "0123456789");
		if (!d || (j->id[d] && j->id[d] != '_' && j->id[d] != '+') || !j->state[0])
			abort();
		if (!f->states && !slurm_state_active(j->state))
			abort();
		if (f->states && streq(f->states, "R") && !streq(j->state, "RUNNING"))
			abort();
		if (f->partitions && !streq(j->partition, f->partitions))
			abort();
	}
	slurm_queue_release(&q);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 65536)
		return 0;
	char *text = xstrndup((const char *)data, size);
	struct slurm_queue_filter none = { 0 }, gpu = { .partitions = "gpu", .states = "all" },
				  running = { .states = "R", .me = true };
	check(text, &none, EOR);
	check(text, &none, NULL);
	check(text, &gpu, EOR);
	check(text, &running, NULL);
	free(text);
	return 0;
}
