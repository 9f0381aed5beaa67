/* SPDX-License-Identifier: MIT */
/*
 * A job's options (CLI.md "Job options"): what the user asked for, before any host
 * adds its defaults. Filled from the command line (jobspec_set with the long option
 * name) and/or a job YAML file (jobspec_parse_yaml: the same names, dashes or
 * underscores); two specs merge with the command line winning (jobspec_merge).
 * Every value is checked as it is set, so a bad one is reported against its option:
 * "invalid --time '25:99': ..." or "job.yaml:4:7: invalid time '25:99': ...".
 * Env values are secrets: no error message ever contains one.
 */
#ifndef DISPATCH_JOBSPEC_H
#define DISPATCH_JOBSPEC_H

#include <stdbool.h>

#include "base/error.h"

struct sweep;

struct job_env {
	char *key;
	char *value;            /* NULL: a job file named it without a value and it is not set
				   locally; jobspec_validate reports it unless the command
				   line gave one */
	char *where;            /* for that message: FILE:LINE:COL */
};

struct jobspec {
	/* sbatch's options, NULL / 0 when not given */
	char *job_name, *partition;
	long nodes, ntasks, ntasks_per_node, cpus_per_task;
	char *mem, *mem_per_cpu, *time, *output, *error, *chdir, *dependency;
	int exclusive, requeue;         /* 0 not given, 1 yes, -1 no (a job file's "false") */
	char *constraint, *account, *qos;
	char **exclude;                 /* strv; each entry a node name or hostlist */
	char *array, *signal;
	/* dispatch's own */
	long gpus, gpus_per_node;
	char *chip;                     /* catalogue name, e.g. "h100" */
	int gpu_share;                  /* plain host: lease busy GPUs too (as exclusive) */
	struct job_env *env;            /* values resolved (--env K takes the local value) */
	size_t nenv;
	char **modules, **uv_groups, **setup, **sbatch;  /* strv; sbatch: "--mail-type=END" */
	char *extract_to;
	char *container_image;          /* NULL: the host's default image, if any */
	char **container_mounts;        /* strv of SRC:DST[:ro][,...] lists */
	char *container_workdir;
	int no_container;               /* 1: ignore the host's default image */
	char *command;                  /* shell text of the main command, NULL when not given */
	/* the run (dispatch-submit(1) RUNS): read them through the jobspec_run_* helpers */
	char *max_restarts;             /* "0".."1000", NULL: 0 */
	char *restart_on;               /* "timeout,preempted,...", NULL: the default */
	char *stop_signal;              /* "USR1", "SIGTERM", ..., NULL: USR1 */
	long grace;                     /* seconds, 0: 120 */
	/* a sweep (dispatch-submit(1) SWEEPS; lib/inventory/sweep.h reads them) */
	char **sweep;                   /* strv of "NAME=V1,V2" / "NAME=A..B[:STEP]" */
	char *sweep_file;               /* or a local sweep file (a job file's relative path:
					   made relative to the job file's directory) */
	long max_parallel;              /* tasks at once, 0: no cap */
	char *sample;                   /* the usage sampler's seconds, "0": off; NULL: 30
					   (jobspec_sample_seconds) */
	char *idle_timeout;             /* "30m", ... (jobspec_idle_seconds); NULL: none */
	long idle_below;                /* %, 0: 5 */
	char **stages;                  /* strv: --stage commands, run in order before the
					   command (dispatch-submit(1) STAGES); NULL: none */
	char *project, *group;          /* a job file's (the reference's keys): they lead the
					   job's name (jobspec_default_name) */
	char *sbatch_script;            /* a local sbatch script as the job (sbatch_script.h) */
	char *launch;                   /* "once" (jobspec_launch_once), "per-node" or NULL: the
					   command on every node */
};

/* The ends that may restart a run (--restart-on). */
enum run_event {
	RUN_ON_TIMEOUT = 1 << 0,
	RUN_ON_PREEMPTED = 1 << 1,
	RUN_ON_NODE_FAIL = 1 << 2,
	RUN_ON_LOST = 1 << 3,        /* a plain host's launcher vanished */
	RUN_ON_ERROR = 1 << 4,       /* a non-zero exit */
};
#define RUN_ON_DEFAULT (RUN_ON_TIMEOUT | RUN_ON_PREEMPTED | RUN_ON_NODE_FAIL | RUN_ON_LOST)
#define RUN_DEFAULT_GRACE 120
#define RUN_MAX_GRACE 65535          /* what sbatch --signal's @SECONDS takes */

/* The job option names, as the command line spells them (without "--"). */
extern const char *const jobspec_option_names[];
extern const size_t jobspec_noption_names;

void jobspec_release(struct jobspec *js);
static inline void jobspec_releasep(struct jobspec *js) { jobspec_release(js); }
#define _cleanup_jobspec_ _cleanup_(jobspec_releasep)

/* Set one option from its text, checking it. name is the long option name without
 * dashes ("cpus-per-task"; "cpus_per_task" works too); flags take NULL or a boolean
 * word; repeatable options append. where is NULL for the command line (messages say
 * "--time"), or "FILE:LINE:COL" for a job file (messages start with it). */
int jobspec_set(struct jobspec *js, const char *name, const char *value, const char *where,
		struct dp_error *err);

/* The main command from operands: one operand is shell text used as written (as ssh
 * and sbatch --wrap take it); several are words, each quoted (as srun takes them). */
void jobspec_set_command_argv(struct jobspec *js, char *const *argv, size_t argc);

/* Read a job YAML file (a mapping of option names, plus "command:" as a string or a
 * list of words, and "env:" as a mapping or a list of K=V / K). Errors name
 * name:line:col; unknown keys get a did-you-mean. */
int jobspec_parse_yaml(struct jobspec *js, const char *name, const char *buf, size_t len,
		       struct dp_error *err);
int jobspec_load_file(struct jobspec *js, const char *path, struct dp_error *err);

/* Apply over on top of js: options over gives win; lists append (repeats dropped for
 * modules, uv groups and excludes); env merges by key, over's value winning. */
void jobspec_merge(struct jobspec *js, const struct jobspec *over);

/* The spec a command runs: over (the command line) merged into js (the job file's),
 * then --sbatch-script applied (sbatch_script.h) and the whole checked
 * (jobspec_validate). 0, or -1 with err. */
int jobspec_complete(struct jobspec *js, const struct jobspec *over, struct dp_error *err);

/* The job's name as the reference names jobs, "PROJECT-GROUP-NAME" (a job file's
 * project and group, where given), NAME the --job-name, else a default: code_name
 * (the packed repository's directory name: submit-packed, notebook), else the
 * sbatch script's file name (as sbatch names it), else the command's first word
 * (its base name: "python", "train.sh"); "dispatch" when none of those reads as a
 * name. */
void jobspec_default_name(struct jobspec *js, const char *code_name);

/* Checks that need the whole spec (run after merging): options that exclude each
 * other, a command to run, --chip without a GPU count. */
int jobspec_validate(const struct jobspec *js, struct dp_error *err);

/* The job's sweep (lib/inventory/sweep.h) into sw (empty): from --sweep-file, read
 * now, or from the --sweep values; none (ntasks 0) when the spec gives neither. Both
 * are refused. 0, or -1 with err (DPE_INPUT). */
int jobspec_sweep(const struct jobspec *js, struct sweep *sw, struct dp_error *err);
/* Whether the job is a sweep: --sweep or --sweep-file. */
bool jobspec_is_sweep(const struct jobspec *js);

/* GPUs per node the spec implies (0 when it asks for none or they do not divide). */
long jobspec_gpus_per_node(const struct jobspec *js);
/* Total GPUs the spec asks for (--gpus, or --gpus-per-node times the nodes). */
long jobspec_total_gpus(const struct jobspec *js);

/* Whether id is a sweep's task's id on a plain host (lib/sched/plain/plainjob.h):
 * a stage name (NAME-YYYYMMDD-HHMMSS-XXXX) and -K; *stage_len (may be NULL): the
 * stage name's length. */
bool jobspec_plain_task_id(const char *id, size_t *stage_len);

/* The value checkers, exposed for the tests: true when s is valid. */
bool jobspec_valid_time(const char *s);
/* The seconds of a valid --time value (0: UNLIMITED), -1 when it is not valid. */
long jobspec_time_seconds(const char *s);
bool jobspec_valid_mem(const char *s);
bool jobspec_valid_array(const char *s);
bool jobspec_valid_dependency(const char *s);
bool jobspec_valid_signal(const char *s);
bool jobspec_valid_max_restarts(const char *s);
bool jobspec_valid_restart_on(const char *s);
bool jobspec_valid_stop_signal(const char *s);
bool jobspec_valid_sample(const char *s);
bool jobspec_valid_launch(const char *s);
/* --launch once: the bootstrap prepares every node, then the command runs once in the
 * batch script, with the allocation free for the command's own srun or mpirun. */
bool jobspec_launch_once(const struct jobspec *js);
/* The usage sampler's interval in seconds (--sample; default 30), 0 when off. */
long jobspec_sample_seconds(const struct jobspec *js);
bool jobspec_valid_idle_timeout(const char *s);
/* --idle-timeout in seconds, 0 when not given. */
long jobspec_idle_seconds(const struct jobspec *js);

/* The run's settings with their defaults. A spec is a run (the job gets the stop
 * signal and the DISPATCH_RUN_* environment) when it gives --max-restarts N > 0,
 * --stop-signal or --grace. */
long jobspec_run_max_restarts(const struct jobspec *js);
unsigned jobspec_run_restart_on(const struct jobspec *js);   /* enum run_event bits */
const char *jobspec_run_stop_signal(const struct jobspec *js); /* "USR1": no "SIG" */
long jobspec_run_grace(const struct jobspec *js);
bool jobspec_is_run(const struct jobspec *js);
/* "timeout,preempted" for bits, in the order above; "" for none. */
void jobspec_run_events_text(unsigned bits, char *buf, size_t size);

#endif
