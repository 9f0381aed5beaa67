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

struct slurm_step {
	char *id;               /* as sacct writes it: "123", "123.batch", "123_4.0" */
	char *job;              /* the job part: "123", "123_4" */
	char *step;             /* the step part: "" (the job itself), "batch", "extern", "0" */
	char *name, *state;     /* state: the word ("CANCELLED by 0" loses " by 0") */
	int exit_code, exit_signal; /* ExitCode "N:S"; -1 when not given */
	char *elapsed;
	char *max_rss, *max_vmsize; /* as sacct writes them ("204800K", "" when none) */
	long long max_rss_bytes, max_vmsize_bytes; /* -1 when sacct gave none */
	char *ave_cpu;          /* "00:00:01" */
	char *tres_usage;       /* TRESUsageInTot: "cpu=00:00:01,mem=200M,..." */
	char *nodes;            /* hostlist */
};

/* The marker line, sacct for the ids (every step of each, [0-9_] ids), then a line
 * with its exit status (slurm_parse_exit(out, "steps")). */
void slurm_steps_command(struct strbuf *sb, char *const *ids);
/* The rows after the marker line (lines that are not rows are skipped); returns
 * their number, *steps allocated (free with slurm_steps_free). */
size_t slurm_parse_steps(const char *out, struct slurm_step **steps);
void slurm_steps_free(struct slurm_step *steps, size_t n);

/* sacct's sizes ("1234", "1234K", "1.50M", "2G": K, M, G, T, P are powers of 1024)
 * in bytes; -1 for "" or anything else. */
long long slurm_parse_size(const char *s);

#endif
