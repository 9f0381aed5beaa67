/* SPDX-License-Identifier: MIT */
/*
 * One step of a job as its backend's accounting has it (status --steps; a SLURM job:
 * the job itself, its batch and extern steps, one per srun), and its JSON.
 */
#ifndef DISPATCH_JOB_STEP_H
#define DISPATCH_JOB_STEP_H

#include <stddef.h>

struct cJSON;

struct job_step {
	char *id;               /* as the accounting writes it: "123", "123.batch", "123_4.0" */
	char *job;              /* the job part: "123", "123_4" */
	char *step;             /* the step part: "" (the job itself), "batch", "extern", "0" */
	char *name, *state;
	int exit_code, exit_signal; /* -1 when not given */
	char *elapsed;
	char *max_rss, *max_vmsize; /* as the accounting writes them ("204800K", "" when none) */
	long long max_rss_bytes, max_vmsize_bytes; /* -1 when none */
	char *ave_cpu;          /* "00:00:01" */
	char *tres_usage;       /* "cpu=00:00:01,mem=200M,..." */
	char *nodes;            /* hostlist */
};

void job_steps_free(struct job_step *steps, size_t n);
/* The exit column: "0", "3", "sig9" (signal with code 0), "-" when not known. */
char *job_step_exit_text(const struct job_step *st);
/* Its fields as keys of o: "id", "step", "name", "state", "exit_code", "signal", ... */
void job_step_json(struct cJSON *o, const struct job_step *st);

#endif
