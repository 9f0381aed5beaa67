/* SPDX-License-Identifier: MIT */
/*
 * The scripts a job runs as, from a job spec and the host it goes to:
 *
 *  - bootstrap.sh runs once per node (srun starts it inside SLURM; on a plain host it
 *    is run directly). It needs nothing from SLURM: strict mode, signal forwarding to
 *    the command's process group, the cluster's JuiceFS mount, modules, the job's
 *    environment, the packed payload, uv sync, setup commands, then the command,
 *    whose exit status becomes the script's. It runs in a login shell (bash -l,
 *    so that site profiles set up PATH, modules and conda; the host's
 *    login_shell: false turns it off). Every node gets DISPATCH_NODE_RANK,
 *    DISPATCH_NNODES, DISPATCH_MASTER_ADDR, DISPATCH_MASTER_PORT,
 *    DISPATCH_GPUS_PER_NODE, DISPATCH_JOB_ID (and DISPATCH_CODE_DIR for packed jobs).
 *  - sbatch.sh (SLURM hosts only) carries the #SBATCH directives and runs the
 *    bootstrap with srun on every node, forwarding signals (--signal=B:...) to srun.
 *
 * Every user string reaches the scripts through sh_quote. The bootstrap holds env
 * values (tokens): write it with jobscript_write_file (mode 0700).
 */
#ifndef DISPATCH_JOBSCRIPT_H
#define DISPATCH_JOBSCRIPT_H

#include <time.h>

#include "inventory/inventory.h"
#include "inventory/jobspec.h"
#include "base/strbuf.h"

struct sweep;

struct jobscript_target {
	const struct inv_host *host;    /* required: type, defaults (account, qos, mem, exclude,
					   partitions, uv_groups) and cluster (paths, JuiceFS) */
	const char *gres_type;          /* GRES type of the spec's chip (gres_mapping); NULL:
					   the chip name itself */
	const char *partition;          /* the solver's choice when the spec names none; NULL:
					   the host's default partition */
	const char *bootstrap_path;     /* SLURM: where the wrapper finds bootstrap.sh on the
					   cluster; may start with ~/ or hold $VAR (expanded by
					   the shell, nothing else is) */
	const unsigned char *payload;   /* a gzip tarball to pack in (packed jobs), or NULL */
	size_t payload_len;
	const char *payload_path;       /* or: where the tarball already is on the cluster
					   (extracted from there; ~/ and $VAR expand) */
	const char *payload_subdir;     /* the command runs in this directory of the payload
					   (NULL: its top) */
	bool redact;                    /* credentials (the cluster's wandb, wandb_entity,
					   wandb_project, hf_token and the JuiceFS password)
					   written as '<redacted>': for scripts that are shown
					   (--dry-run, --emit), never for the ones that run */
	const char *run_id;             /* a run (jobspec_is_run): its id, the same for every
					   attempt; NULL: not a run (the scripts as before) */
	const struct sweep *sweep;      /* a sweep (the spec's --sweep, read): a job array of
					   its tasks, each with its parameters; NULL: none */
	const char *sweep_id;           /* its id, DISPATCH_SWEEP_ID */
};

/* Whether a run's attempts continue one W&B run: the cluster has a W&B key and neither
 * the spec nor the host sets WANDB_RUN_ID or WANDB_RESUME (then WANDB_RUN_ID is the run
 * id). */
bool jobscript_sets_wandb_run(const struct jobspec *spec, const struct inv_host *h);
/* That run's page, https://wandb.ai/ENTITY/PROJECT/runs/RUN_ID, when the cluster names
 * entity and project (and the host's env sets neither); else NULL. Caller frees. */
char *jobscript_wandb_url(const struct inv_host *h, const char *run_id);

/* What a redacted credential reads as. */
#define JOBSCRIPT_REDACTED "<redacted>"

struct jobscript {
	char *sbatch;           /* the wrapper; NULL for plain hosts */
	char *bootstrap;
	char *container;        /* plain hosts, a job with an image: container.sh, which runs
				   the bootstrap in it (lib/container/container_run.h); else NULL */
	char **directives;      /* strv: each #SBATCH line's text after "#SBATCH " */
	char **ignored;         /* strv: plain hosts: the SLURM-only options the spec set */
};

/* Build both scripts. -1 with a DPE_INPUT error for a spec that does not fit the host
 * (e.g. --chip on a host without GPUs is fine, but no bootstrap_path for SLURM is not).
 * The spec must have passed jobspec_validate. */
int jobscript_generate(const struct jobspec *spec, const struct jobscript_target *t,
		       struct jobscript *out, struct dp_error *err);
void jobscript_release(struct jobscript *js);
static inline void jobscript_releasep(struct jobscript *js) { jobscript_release(js); }
#define _cleanup_jobscript_ _cleanup_(jobscript_releasep)

/* A path for the shell: a leading ~/ becomes "$HOME", $NAME and ${NAME} expand,
 * everything else is sh_quote'd (no other expansion can happen). */
void jobscript_quote_path(struct strbuf *sb, const char *path);

/* The cluster's log dir: {log}, else {work}/logs. Caller frees. */
char *jobscript_log_dir(const struct inv_cluster *c);

/* The cluster directory scripts are uploaded to: {share}, else {work}/.dispatch, else
 * (no cluster) ~/.dispatch. Caller frees. */
char *jobscript_share_dir(const struct inv_host *host);
/* A directory name for one submission: NAME-YYYYMMDD-HHMMSS-NONCE, NAME reduced to
 * [A-Za-z0-9._-]. Caller frees. */
char *jobscript_stage_name(const char *job_name, time_t now, unsigned long nonce);

/* Write content to path with mode 0700 whatever the umask (O_CREAT|O_TRUNC|O_NOFOLLOW,
 * then fchmod), replacing a file that is there. */
int jobscript_write_file(const char *path, const char *content, struct dp_error *err);
/* DIR/sbatch.sh (SLURM), DIR/container.sh (a plain host's container job) and
 * DIR/bootstrap.sh, mode 0700; DIR is made (0700) when
 * missing. */
int jobscript_emit(const struct jobscript *js, const char *dir, struct dp_error *err);

#endif
