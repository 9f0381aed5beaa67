/* SPDX-License-Identifier: MIT */
/*
 * The SLURM output parsers on any bytes, aborting on a broken property: the sbatch
 * parser's id is all digits; every status row has an id and a state without spaces,
 * and slurm_select never returns a row of another job; the lookup's job id is all
 * digits; plain-host status answers have a known state; an exit-status line gives
 * -1 or 0..255; a duration parsed, formatted and parsed again is the same number of
 * seconds, and status rows' elapsed times and limits are in that one form; plain-host queue rows have an id, a user, PENDING or RUNNING and
 * GPUs, and only those of --me's user when asked.
 */
#include <stdint.h>

#include "sched/plain/plainjob.h"
#include "sched/slurm/slurm.h"
#include "sched/slurm/slurm_queue.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void digits_or_abort(const char *s)
{
	if (!s || !*s || strspn(s, "0123456789") != strlen(s))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 8192)
		return 0;
	char *text = xstrndup((const char *)data, size);
	char *id = NULL, *cluster = NULL;
	if (slurm_parse_sbatch(text, &id, &cluster) == 0)
		digits_or_abort(id);
	else if (id || cluster)
		abort();
	free(id);
	free(cluster);

	struct slurm_job *jobs;
	size_t n;
	long d = slurm_parse_duration(text);
	if (d < -1)
		abort();
	if (d >= 0 && d != 365L * 86400) {
		char *f = slurm_format_duration(text);
		if (slurm_parse_duration(f) != d)
			abort();
		free(f);
	}
	slurm_parse_status(text, &jobs, &n);
	for (size_t i = 0; i < n; i++) {
		if (!jobs[i].id[0] || !jobs[i].state[0] || strchr(jobs[i].state, ' ') ||
		    (jobs[i].cancelled_by && (!*jobs[i].cancelled_by || !streq(jobs[i].state, "CANCELLED"))))
			abort();
		long e = slurm_parse_duration(jobs[i].elapsed);
		char *again = e >= 0 ? slurm_format_seconds(e) : NULL;
		if (again && e != 365L * 86400 && !streq(again, jobs[i].elapsed))
			abort();
		free(again);
		const struct slurm_job **sel;
		size_t ns;
		slurm_select(jobs, n, jobs[i].id, &sel, &ns);
		for (size_t k = 0; k < ns; k++)
			if (!slurm_id_matches(jobs[i].id, sel[k]->id))
				abort();
		free(sel);
	}
	slurm_jobs_free(jobs, n);

	int st = slurm_parse_exit(text, "squeue");
	if (st < -1 || st > 255)
		abort();
	(void)slurm_squeue_failed(st, text);
	/* wait's state digest: one line, never empty */
	(void)slurm_poll_same(text);
	char *states = slurm_poll_states(text);
	if (states && (!*states || strchr(states, '\n')))
		abort();
	free(states);

	struct slurm_lookup lk = SLURM_LOOKUP_INIT;
	slurm_parse_lookup(text, "dsp-00", &lk);
	if (lk.job_id)
		digits_or_abort(lk.job_id);
	slurm_lookup_release(&lk);

	struct plainjob_status *ps;
	size_t np = plainjob_parse_status(text, &ps);
	for (size_t i = 0; i < np; i++)
		if (!ps[i].state || !ps[i].id[0] || !ps[i].gpus || !ps[i].reason ||
		    (streq(ps[i].state, "PENDING") && ps[i].elapsed != 0))
			abort();
	plainjob_status_free(ps, np);

	struct slurm_queue_filter f = { .me = true };
	struct slurm_queue q;
	struct dp_error err = { 0 };
	plainjob_parse_queue(text, &f, &q, &err);
	for (size_t i = 0; i < q.n; i++) {
		const struct slurm_qjob *j = &q.jobs[i];
		if (!j->id[0] || !j->user[0] || !j->gpus || strchr(j->gpus, '|') ||
		    (!streq(j->state, "PENDING") && !streq(j->state, "RUNNING")) ||
		    (q.user && !streq(j->user, q.user)))
			abort();
	}
	slurm_queue_release(&q);
	free(text);
	return 0;
}
