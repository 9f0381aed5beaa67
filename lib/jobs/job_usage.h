/* SPDX-License-Identifier: MIT */
/*
 * What a job did over its life (dispatch-status(1) USAGE): the sampler the bootstrap
 * runs beside the command on every node (usage_sample.sh, --sample S) appends a line
 * per sample to STAGE/usage.JOB.NODE; status --usage reads those files on the host
 * in the exchange that asks where the job stands (jobs_query with JOBS_WANT_USAGE),
 * reduced there (usage_read.sh: per node and GPU the means, peaks, energy and a
 * series of 48 points), and the figures below are made from them here.
 */
#ifndef DISPATCH_JOB_USAGE_H
#define DISPATCH_JOB_USAGE_H

#include <stdbool.h>
#include <stddef.h>

#include "jobs/job_state.h"
#include "remote/remote.h"
#include "sched/sched.h"

struct cJSON;

/* A GPU under the job is idle when its mean utilisation stayed below this (%). */
#define JOB_USAGE_IDLE_PCT 5.0

struct job_usage_gpu {
	char *uuid;
	double mean, peak;      /* utilisation %, NAN: never known */
	double recent;          /* the mean of the last 30 minutes' samples; NAN: none */
	double mem_peak;        /* MiB, NAN: never known */
	double wh;              /* energy, NAN: never known */
	double temp_peak;       /* C, NAN: never known */
	long throttled;         /* samples with a throttle reason */
	int *series;            /* utilisation over the job's life, -1: no sample there */
	size_t nseries;
};

struct job_usage_node {
	char *node;
	long start, end;        /* seconds since the epoch: the first sample's start, the last's end */
	long samples;
	double cpu;             /* CPU seconds of the job's processes there */
	long rss_kib;           /* their peak resident memory */
	long cores, mem_mib;    /* SLURM's allocation there; 0: not known */
	struct job_usage_gpu *gpus;
	size_t ngpus;
};

struct job_usage {
	struct job_usage_node *nodes;
	size_t nnodes;
};

/* The script section that reads the samples of jobs[0..n) with a stage dir. */
void job_usage_script(struct remote_script *rs, const struct sched_job *jobs, size_t n);
/* js's usage from rr (its row's own: an array's task's, or the job's), NULL in
 * js->usage when no sample was read. */
void job_usage_take(const struct remote_reply *rr, const struct sched_job *j, struct job_state *js);
/* Whether the sampler ended jobs[0..n) (--idle-timeout; those with a stage dir):
 * the section that asks (idle_read.sh), and why, from rr, into js->idle (jobs_detail
 * asks it with JOBS_WANT_END). */
void job_idle_script(struct remote_script *rs, const struct sched_job *jobs, size_t n);
void job_idle_take(const struct remote_reply *rr, const struct sched_job *j, struct job_state *js);
void job_usage_free(struct job_usage *u);
/* Where jobs[0..n)'s stages stand (--stage; those with a stage dir): the section
 * that reads their STAGE/stages.JOB (stages_read.sh), and from rr js's stages
 * (job_state.h: stage_exit, nstages), left as they are when rr has none for it. */
void job_stages_script(struct remote_script *rs, const struct sched_job *jobs, size_t n);
void job_stages_take(const struct remote_reply *rr, const struct sched_job *j, struct job_state *js);

/* The utilisation series as one line of blocks (" ▁▂▃▄▅▆▇█", '-' where no sample
 * fell), or of ASCII (" .:-=+*#%@", '?' for none) when utf8 is false; blank only
 * at 0%. */
char *job_usage_spark(const struct job_usage_gpu *g, bool utf8);
/* CPU efficiency (CPU time over the allocated cores times the time sampled, as seff)
 * and memory efficiency (peak RSS over the allocated memory), in %; NAN when the
 * allocation is not known (a plain host). */
double job_usage_cpu_eff(const struct job_usage_node *n);
double job_usage_mem_eff(const struct job_usage_node *n);
/* The job's usage as JSON: {"nodes": [{"node", "start", "end", "samples",
 * "cpu_seconds", "peak_rss_kib", "cores", "mem_mib", "cpu_efficiency",
 * "mem_efficiency", "gpus": [{"uuid", "mean_util", "recent_util", "peak_util", "peak_mem_mib",
 * "energy_wh", "peak_temp", "throttled_samples", "idle", "series"}]}]} (null for
 * what is not known). */
struct cJSON *job_usage_json(const struct job_usage *u);
/* What js was allocated (job_usage_take): {"gpus", "seconds", "user"} (user null
 * when not known), null when the allocation is not known. */
struct cJSON *job_alloc_json(const struct job_state *js);

#endif
