/* SPDX-License-Identifier: MIT */
/*
 * Where does a job fit? The offline solver (as the reference's): hosts in priority
 * order, then inventory order (hosts of --prefer clusters before all others, hosts of
 * --forbid clusters never); plain hosts by their configured chips; SLURM hosts by
 * their chips limits (when given), the chip mapped to a GRES type through
 * gres_mapping, cpu_partitions for CPU jobs, default partitions first; when nothing
 * fits a GPU job, the SLURM host with the most of the chip (flagged as a fallback).
 *
 * Rules where the reference is silent (dispatch-solve(1) documents them):
 * - A CPU job (chips == 0) fits every plain host and every SLURM host, as in the
 *   reference; a plain GPU box is taken last, only when no other host fits (its
 *   GPUs are for GPU jobs).
 * - Any GPU (chip NULL) on a plain host: its first chip with enough devices. On a
 *   SLURM host without a chips map: an untyped GRES (gpu:N); with one: its first chip
 *   with enough and a gres_mapping.
 * - A SLURM host whose partitions are all cpu_partitions (partitions empty) takes no
 *   GPU jobs.
 * - GPU partition order: one named after the chip, its family (a100) or its GRES type,
 *   then the default ones, then the order written.
 *
 * With live facts (solve --check: req->live, one entry per host asked), a host that
 * fits on paper must also have the GPUs free now:
 * - SLURM: one node, usable (not down, drained, ...: lib/sched/slurm/slurm_nodes.h) and not in
 *   the host's exclude list, with that many free GPUs of the GRES type (any type for
 *   any GPU), in an UP partition: the one the offline rules pick, then the host's
 *   other partitions in the order written (the cluster's default partition when the
 *   host names none). A CPU job needs a usable node with a free CPU.
 * - plain: GPUs of the chip with no compute process of NVIDIA_SMI_BUSY_MIB or more
 *   (lib/gpu/nvidia_smi.h); a GPU nvidia-smi names outside the catalogue counts as the
 *   host's chip when the inventory gives it one chip only. No nvidia-smi on a GPU
 *   host: it does not fit (nothing says its GPUs are free). CPU-only hosts fit.
 * - a host that could not be asked (live entry with facts NULL, or no entry) is
 *   skipped, its note in the verdict.
 * - nothing free now: the fallback is the SLURM host, among those asked that fit on
 *   paper and have a node big enough, with the most GPUs of the type in those
 *   partitions (usable nodes), on its partition with the most; the job waits there.
 */
#ifndef DISPATCH_SOLVER_H
#define DISPATCH_SOLVER_H

#include "host_facts.h"
#include "inventory/inventory.h"

struct solve_live {             /* solve --check: what one host answered */
	const char *host;               /* inventory host name */
	const struct host_facts *facts; /* NULL: the host could not be asked */
	const char *note;               /* why not (for the verdict), or NULL */
};

struct solve_request {
	const char *chip;       /* catalogue name; NULL for any GPU */
	int chips;              /* 0: a CPU job */
	char **prefer;          /* strv of cluster names, may be NULL */
	char **forbid;          /* strv of cluster names, may be NULL (--exclude-cluster) */
	char **only;            /* strv of cluster names: hosts of these only (--cluster);
				   NULL: any */
	bool container;         /* the job names an image: hosts without a
				   container_runtime do not fit */
	bool check;             /* use live (below); the offline rules alone when false */
	const struct solve_live *live;  /* must outlive the result (it points into it) */
	size_t nlive;
};

struct solve_verdict {          /* one per host considered, for -v */
	const struct inv_host *host;
	bool fits;
	char *reason;           /* why not (or how it fits) */
	int free_gpus;          /* with live facts, a plain host that fits: its free GPUs
				   of the chip; else -1 */
};

struct solve_result {
	const struct inv_host *host;    /* NULL when nothing fits */
	const char *partition;          /* slurm: chosen partition, else NULL (the default) */
	const char *constraint;         /* slurm: the chosen partition's constraint, or NULL */
	const char *chip;               /* chosen chip name (NULL for CPU jobs, and for any
					   GPU on a SLURM host without a chips map) */
	const char *gres_type;          /* slurm GPU jobs: GRES type, else NULL */
	int chips;
	bool fallback;                  /* chosen by the most-capacity fallback */
	struct solve_verdict *verdicts; /* every host, in the order considered */
	size_t nverdicts;
};

/* 0 with res->host set when something fits; 0 with res->host NULL when nothing does;
 * -1 with err for a bad request (unknown chip or cluster, prefer/forbid overlap,
 * a chip for a CPU job, a negative count: DPE_INPUT). */
int solve(const struct inventory *inv, const struct solve_request *req, struct solve_result *res,
	  struct dp_error *err);
/* A sweep's plain hosts (dispatch-submit(1) SWEEPS, --solve): every plain host
 * that fits, least loaded first: with live facts the most free GPUs first, ties (and
 * without them, all) in the order considered; none: the chosen host alone when it
 * is a plain host. Their count, *hosts allocated (NULL when none). */
size_t solve_plain_hosts(const struct solve_result *res, const struct inv_host ***hosts);
void solve_result_release(struct solve_result *res);

#endif
