/* SPDX-License-Identifier: MIT */
/*
 * JOB operands (CLI.md): ID, ID@HOST and ID_TASK as SLURM writes them (array
 * tasks), and the stage names dispatch gives jobs on plain hosts. A bare ID is
 * resolved through the job ledger; ambiguity is an error that asks for ID@HOST.
 */
#ifndef DISPATCH_JOBREF_H
#define DISPATCH_JOBREF_H

#include "ledger.h"

struct jobref {
	char *arg;              /* as given */
	char *id;               /* without @HOST: "123", "123_4", "train-20250101-120000-1a2b" */
	char *base;             /* the submission's id: "123" of "123_4"; plain jobs: id */
	char *host;             /* @HOST, -H, or the ledger's */
	bool in_ledger;
	struct ledger_job rec;  /* the ledger's row when in_ledger */
};

/* Resolve arg; host_opt is -H (NULL when not given). l may be NULL (no ledger):
 * then a host must be named. Errors: DPE_INPUT (malformed, ambiguous, @HOST and -H
 * disagree), DPE_NOTFOUND (a bare id the ledger does not know). */
int jobref_resolve(struct ledger *l, const char *arg, const char *host_opt, struct jobref *out,
		   struct dp_error *err);
void jobref_release(struct jobref *r);

/* True when id has the shape of a SLURM job id (digits, optionally _TASK). */
bool jobref_is_slurm_id(const char *id);

#endif
