/* SPDX-License-Identifier: MIT */
/*
 * The detail of a job's end, pending and log tail in the forms wait and queue still
 * use (they move onto struct job_state and jobs_query): the same formatters
 * job_state.h's call.
 */
#ifndef DISPATCH_JOB_DETAIL_H
#define DISPATCH_JOB_DETAIL_H

#include <stdbool.h>

#include "jobs/job_state.h"

struct cJSON;
struct slurm_why_job;
struct slurm_pending;

void job_end_release(struct job_end *d);
void job_tail_release(struct job_tail *t);
/* w's fields from d (borrowed). */
void job_end_apply(const struct job_end *d, struct slurm_why_job *w);
/* "failure": null, or for a job that ended without COMPLETED (failed) its state,
 * exit code, signal, memory, node, step, time and canceller as fields. */
void job_end_json(struct cJSON *o, const struct slurm_why_job *w, bool failed);
/* "log_path", "log_tail", "log_tail_error" */
void job_tail_json(struct cJSON *o, const struct job_tail *t);
/* --json's "pending": {"reason", "words", "text", "detail"}; p may be NULL. */
struct cJSON *job_pending_json(const char *reason, const struct slurm_pending *p);

#endif
