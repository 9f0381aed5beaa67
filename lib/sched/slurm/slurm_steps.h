/* SPDX-License-Identifier: MIT */
/*
 * Per-step accounting (status --steps, the reference's job_info): one sacct row per
 * job step: the job itself ("123", the reference's main), its batch and extern
 * steps and one per srun ("123.0", "123.1", ...), with state, exit code, elapsed
 * time, MaxRSS, MaxVMSize, AveCPU and TRES usage. The free-text job name is the last
 * field of sacct's '|'-separated row, so a '|' in a name cannot shift the others.
 */
#ifndef DISPATCH_SLURM_STEPS_H
#define DISPATCH_SLURM_STEPS_H

#include <stddef.h>

#include "base/strbuf.h"
#include "jobs/job_step.h" /* the rows, each backend's */

/* The marker line, sacct for the ids (every step of each, [0-9_] ids), then a line
 * with its exit status (slurm_parse_exit(out, "steps")). */
void slurm_steps_command(struct strbuf *sb, char *const *ids);
/* The rows after the marker line (lines that are not rows are skipped); returns
 * their number, *steps allocated (free with job_steps_free). */
size_t slurm_parse_steps(const char *out, struct job_step **steps);

/* sacct's sizes ("1234", "1234K", "1.50M", "2G": K, M, G, T, P are powers of 1024)
 * in bytes; -1 for "" or anything else. */
long long slurm_parse_size(const char *s);

#endif
