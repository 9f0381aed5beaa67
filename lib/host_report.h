/* SPDX-License-Identifier: MIT */
/*
 * What hosts show prints of a host's scheduler, whichever it is: its partitions and
 * nodes with their GPUs, from the facts one SSH exec gathered (host_facts.h). Filled
 * by the backend's host_report operation (lib/sched/sched.h; a backend without one,
 * as plain hosts, has no partitions or nodes); the caller only formats it.
 */
#ifndef DISPATCH_HOST_REPORT_H
#define DISPATCH_HOST_REPORT_H

#include <stdbool.h>
#include <stddef.h>

struct host_facts;

struct host_report_gpus {       /* GPUs of one type (type NULL: untyped) */
	char *type;
	int total, used, free;
	int free_max;           /* partitions: the most free on one node */
};

struct host_report_partition {
	char *name;
	bool is_default, up;
	char *state;            /* as the scheduler prints it */
	char *nodes;            /* its nodes, as the scheduler writes them ("" none) */
	long node_count, cpus;
	char *max_time, *default_time;
	struct host_report_gpus *gpus;
	size_t ngpus;
};

struct host_report_node {
	char *name, *state;
	bool usable;            /* takes new jobs */
	long cpus, cpus_alloc;
	char **partitions;      /* strv, may be NULL */
	char *reason;           /* NULL when none */
	struct host_report_gpus *gpus; /* free: usable ? total - used : 0 */
	size_t ngpus;
};

struct host_report {
	const char *scheduler;  /* "slurm", or NULL: none (a plain host) */
	char *version;          /* the scheduler's, or NULL */
	/* the version is newer than any release dispatch knows: the newest one it does
	 * (its answers are read as that one's), else NULL */
	const char *newer_than;
	int gpus_total, gpus_free;
	struct host_report_partition *partitions;
	size_t npartitions;
	struct host_report_node *nodes;
	size_t nnodes;
};

/* f's report (by the backend f->slurm names) into r; release it after. */
void host_report_make(const struct host_facts *f, struct host_report *r);
void host_report_release(struct host_report *r);
/* The node of r named name, or NULL. */
const struct host_report_node *host_report_node(const struct host_report *r, const char *name);

/* `hosts show --json`'s document (without "health"): r, and f's GPUs and dispatch
 * jobs of a plain host. */
struct cJSON;
struct cJSON *host_report_json(const char *host, const struct host_facts *f,
			       const struct host_report *r);

#endif
