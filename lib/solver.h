/* SPDX-License-Identifier: MIT */
/*
 * Where does a job fit? The offline solver (as the reference's): hosts in priority
 * order, then inventory order; plain hosts by their configured chips; SLURM hosts by
 * their chips limits (when given), the chip mapped to a GRES type through
 * gres_mapping, cpu_partitions for CPU jobs, default partitions first; when nothing
 * fits, the SLURM host with the most capacity.
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
	const char *partition;          /* slurm: chosen partition, else NULL */
	const char *chip;               /* chosen chip name (NULL for CPU jobs) */
	const char *gres_type;          /* slurm GPU jobs: GRES type, else NULL */
	int chips;
	bool fallback;                  /* chosen by the most-capacity fallback */
	struct solve_verdict *verdicts;
	size_t nverdicts;
};

/* 0 with res->host set when something fits; 0 with res->host NULL when nothing does;
 * -1 with err for a bad request (unknown chip, prefer/forbid overlap: DPE_INPUT). */
int solve(const struct inventory *inv, const struct solve_request *req, struct solve_result *res,
	  struct dp_error *err);
void solve_result_release(struct solve_result *res);

#endif
