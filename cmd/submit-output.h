/* SPDX-License-Identifier: MIT */
/* What submit and submit-packed print (cmd/submit-output.c). */
#ifndef DISPATCH_SUBMIT_OUTPUT_H
#define DISPATCH_SUBMIT_OUTPUT_H

#include <stdbool.h>

#include "submission.h"

struct inv_host;

/* The scripts (text, after the table of a sweep's tasks: the submission's sweep, NULL
 * for none), the files written with --emit, or the --json document; sweep_sbatch: a
 * sweep's sbatch commands, a line each (submission_sweep_commands), or NULL. */
void submit_print_dry_run(const struct inv_host *h, const struct jobspec *spec,
			  const struct sweep *sweep, const struct jobscript *js,
			  const char *boot_path, const char *emit, const char *sweep_sbatch,
			  bool json);
/* ID@HOST; a sweep: "sweep ID: N tasks on HOST as ID@HOST", its arrays each with
 * their tasks when there are several; or the --json document of the submitted job. */
void submit_print_job(const struct inv_host *h, const struct submission_job *job,
		      const struct submission *sub, bool json);

#endif
