/* SPDX-License-Identifier: MIT */
/*
 * The queue of a SLURM cluster (`dispatch queue`): one remote command per host that
 * prints the login's user, the host's clock and squeue's version, then squeue's
 * answer in a form no job name can break, chosen by that version in the same shell:
 *
 *   - `squeue --json` from SLURM 21.08 on. Its schema changes with every release
 *     (openapi/v0.0.37, v0.0.38 in 22.05; data_parser v0.0.39 on turns numbers into
 *     {"set","infinite","number"} objects and job_state into a list of flags), so
 *     only the fields listed in struct slurm_qjob are read, each in every shape seen.
 *     SLURM up to 22.05 ignores filters with --json: they are applied here too.
 *   - `squeue -o` with '|' between fields and the job name, the only field a user
 *     can fill with anything, last: a '|' in a name cannot shift the columns. Each
 *     record ends with '|' and a mark the caller makes fresh for each call (a job
 *     name can hold a newline, and so could forge a whole row on the next line, but
 *     it cannot know the mark).
 */
#ifndef DISPATCH_SLURM_QUEUE_H
#define DISPATCH_SLURM_QUEUE_H

#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"
#include "base/strbuf.h"

struct slurm_queue_filter {
	const char *user;       /* squeue -u (comma-separated); NULL: everyone */
	bool me;                /* the login's own user */
	const char *partitions; /* squeue -p (comma-separated); NULL: all */
	const char *states;     /* squeue -t (comma-separated, long or short names, "all");
				   NULL: the jobs still queued or running, as squeue */
};

enum slurm_queue_format {
	SLURM_QUEUE_AUTO,       /* by squeue's version */
	SLURM_QUEUE_JSON,
	SLURM_QUEUE_TEXT,
};

/* The newest SLURM release dispatch has read the answers of (the test suite runs
 * 22.05, 24.11 and 26.05). */
#define SLURM_NEWEST_KNOWN "26.05"
#define SLURM_NEWEST_KNOWN_NUM 2605

/* 1 when version ("24.11.5") is a release up to SLURM_NEWEST_KNOWN; 0 for a newer one
 * (its answers are read as the newest known release's: a best effort, worth one
 * warning); -1 when it is no version. */
int slurm_release_known(const char *version);

/* The --json data_parser dispatch asks for on a release ("v0.0.42" for 24.11 to
 * 26.05, "v0.0.40" for 23.11 and 24.05; NULL: the release's default, as before
 * 23.11, when --json took no version, and for releases newer than dispatch knows). */
const char *slurm_data_parser(const char *version);

/* eor: the text format's end-of-record mark, letters, digits and '-' only (a fresh
 * random token: ledger_new_token); NULL: records end at the end of the line. */
void slurm_queue_command(struct strbuf *sb, const struct slurm_queue_filter *f,
			 enum slurm_queue_format fmt, const char *eor);

struct slurm_qjob {
	char *id;               /* "123", "123_4", "123_[5-9%2]", "123+1" */
	char *partition, *user;
	char *name;             /* as the user gave it: may hold spaces, '|', newlines */
	char *state;            /* "RUNNING", "PENDING", ... (the base state) */
	char *elapsed;          /* "0:05", "1:02:03", "1-02:03:04" */
	long node_count;        /* -1 when not known */
	char *nodes;            /* hostlist; "" before it runs */
	char *reason;           /* "None" while running, or why pending */
	char *gpus;             /* a plain host's: the GPUs leased (indices); NULL: SLURM */
	long restarts;          /* times SLURM requeued it (squeue --json's restart_cnt);
				   -1: not known (squeue's text, a plain host) */
};

struct slurm_queue {
	char *user;             /* the login's user name */
	char *version;          /* "22.05.8"; NULL when squeue did not say */
	char *format;           /* "json" or "text": what the host answered with */
	int squeue_status;      /* squeue's exit status; -1 when not known */
	struct slurm_qjob *jobs;
	size_t n;
};

/* Parse the command's output and apply the filter. Returns -1 (DPE_FAIL) when the
 * output has no answer of squeue (the command failed before it) or JSON that does not
 * parse; a failed squeue (squeue_status != 0) is the caller's to report. */
int slurm_parse_queue(const char *out, const struct slurm_queue_filter *f, const char *eor,
		      struct slurm_queue *q, struct dp_error *err);
void slurm_queue_release(struct slurm_queue *q);
void slurm_qjob_release(struct slurm_qjob *j);
/* Whether the filter keeps j (q->user: the login's, for --me). */
bool slurm_queue_wanted(const struct slurm_queue_filter *f, const struct slurm_queue *q,
			const struct slurm_qjob *j);

/* The long name of a job state given in either form squeue -t takes ("pd", "R",
 * "running", "OOM"); NULL when it is none. */
const char *slurm_state_name(const char *word);

#endif
