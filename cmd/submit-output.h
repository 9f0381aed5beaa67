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

/* A sweep on plain hosts: one host's part (cmd/submit-sweep.c). */
struct submit_sweep_part {
	struct submission_job job;
	struct submission sub;
	int result;             /* submit_run_on's: 0 when all its tasks were submitted */
};
/* The tasks' table (TASK, HOST, the values), then each host's scripts; or with --emit
 * the files written, or the --json document ("sweep" with its "runs", index and host,
 * and "hosts", each host's scripts). */
void submit_print_sweep_dry_run(const struct jobspec *spec, const struct submit_sweep_part *parts,
				size_t n, const char *emit, bool json);
/* "sweep ID: N runs on box1 (0,2,4), box2 (1,3,5)" and each run submitted as ID@HOST,
 * a line each in the order of the tasks; or the --json document. */
void submit_print_sweep(const struct jobspec *spec, const struct submit_sweep_part *parts,
			size_t n, bool json);

#endif
