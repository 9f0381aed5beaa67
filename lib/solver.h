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
 * - A CPU job (chips == 0) fits plain hosts without chips (CPU-only boxes) and every
 *   SLURM host; plain GPU boxes are left to GPU jobs.
 * - Any GPU (chip NULL) on a plain host: its first chip with enough devices. On a
 *   SLURM host without a chips map: an untyped GRES (gpu:N); with one: its first chip
 *   with enough and a gres_mapping.
 * - A SLURM host whose partitions are all cpu_partitions (partitions empty) takes no
 *   GPU jobs.
 * - GPU partition order: one named after the chip, its family (a100) or its GRES type,
 *   then the default ones, then the order written.
 */
#ifndef DISPATCH_SOLVER_H
#define DISPATCH_SOLVER_H

#include "inventory.h"

struct solve_request {
	const char *chip;       /* catalogue name; NULL for any GPU */
	int chips;              /* 0: a CPU job */
	char **prefer;          /* strv of cluster names, may be NULL */
	char **forbid;          /* strv of cluster names, may be NULL */
};

struct solve_verdict {          /* one per host considered, for -v */
	const struct inv_host *host;
	bool fits;
	char *reason;           /* why not (or how it fits) */
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
void solve_result_release(struct solve_result *res);

#endif
