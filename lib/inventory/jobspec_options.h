/* SPDX-License-Identifier: MIT */
/*
 * The job options (CLI.md "Job options"), in one table: what the command line of
 * submit and submit-packed offers (lib/inventory/jobspec.c's parser and cmd/'s option
 * tables are both made from it, so they cannot drift apart) and how each value is
 * checked and stored. A job YAML file uses the same names.
 *
 * X(SHORT, NAME, ARGNAME, HELP, COMPLETE, KIND, FIELD, CHECK, EXPECT, UNIQ)
 *   SHORT     the short option letter, or 0
 *   NAME      the long option name, which is also the job file's key
 *   ARGNAME   the argument's name in -h, NULL for a flag
 *   HELP      the -h line
 *   COMPLETE  how a shell completes the argument ("dir", "file"), or NULL
 *   KIND      JO_STR, JO_COUNT, JO_FLAG, JO_LIST or JO_ENV
 *   FIELD     the struct jobspec member it fills
 *   CHECK     a bool (*)(const char *) for JO_STR and JO_LIST values, or NULL
 *   EXPECT    what a valid value looks like, for the error message (NULL: none)
 *   UNIQ      JO_LIST: drop repeats
 */
#ifndef DISPATCH_JOBSPEC_OPTIONS_H
#define DISPATCH_JOBSPEC_OPTIONS_H

#define JOBSPEC_OPTIONS(X) \
	X('J', "job-name", "NAME", "job name", NULL, JO_STR, job_name, check_name, "expected one line of at most 200 characters", false) \
	X('p', "partition", "PARTITION", "partition (default: the host's default partition)", NULL, JO_STR, partition, check_word, "expected a partition name (or a comma-separated list)", false) \
	X('N', "nodes", "N", "number of nodes; the bootstrap runs once on each", NULL, JO_COUNT, nodes, NULL, NULL, false) \
	X('n', "ntasks", "N", "number of tasks (default: one per node)", NULL, JO_COUNT, ntasks, NULL, NULL, false) \
	X(0, "ntasks-per-node", "N", "tasks per node (default 1)", NULL, JO_COUNT, ntasks_per_node, NULL, NULL, false) \
	X('c', "cpus-per-task", "N", "CPUs per task", NULL, JO_COUNT, cpus_per_task, NULL, NULL, false) \
	X(0, "mem", "SIZE", "memory per node: MB, or with K, M, G, T (default: the host's mem)", NULL, JO_STR, mem, jobspec_valid_mem, "expected megabytes, or a number with a unit K, M, G or T (64G)", false) \
	X(0, "mem-per-cpu", "SIZE", "memory per CPU", NULL, JO_STR, mem_per_cpu, jobspec_valid_mem, "expected megabytes, or a number with a unit K, M, G or T (4G)", false) \
	X('t', "time", "TIME", "time limit: MIN, MM:SS, HH:MM:SS, D-HH[:MM[:SS]], UNLIMITED", NULL, JO_STR, time, jobspec_valid_time, "expected MINUTES, MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS or UNLIMITED", false) \
	X('o', "output", "PATH", "stdout file (default: the cluster's log dir, %x-%j.out)", NULL, JO_STR, output, check_line, "expected a path on one line", false) \
	X('e', "error", "PATH", "stderr file (default: with stdout)", NULL, JO_STR, error, check_line, "expected a path on one line", false) \
	X('D', "chdir", "DIR", "working directory ($VAR and ~ expand)", NULL, JO_STR, chdir, check_line, "expected a path on one line", false) \
	X('d', "dependency", "DEP", "sbatch dependency: afterok:ID[:ID...], singleton, ...", NULL, JO_STR, dependency, jobspec_valid_dependency, "expected TYPE:JOBID[:JOBID...] (after, afterany, afterok, afternotok, aftercorr, afterburstbuffer) or singleton, joined by ',' or '?'", false) \
	X(0, "exclusive", NULL, "whole nodes only", NULL, JO_FLAG, exclusive, NULL, NULL, false) \
	X('C', "constraint", "FEATURES", "node features (default: the partition's constraint)", NULL, JO_STR, constraint, check_word, "expected node features without spaces (a100&nvlink)", false) \
	X('A', "account", "ACCOUNT", "account to charge (default: the host's)", NULL, JO_STR, account, check_word, "expected an account name without spaces", false) \
	X(0, "qos", "QOS", "quality of service (default: the host's)", NULL, JO_STR, qos, check_word, "expected a QOS name without spaces", false) \
	X('x', "exclude", "NODES", "nodes to avoid, added to the host's (repeatable)", NULL, JO_LIST, exclude, check_word, "expected node names or a hostlist without spaces", true) \
	X('a', "array", "INDEXES", "job array: 0-15, 1,3,5-7, 0-15:4, with %N to throttle", NULL, JO_STR, array, jobspec_valid_array, "expected indexes like 0-15, 1,3,5-7, 0-15:4, optionally with a %N throttle", false) \
	X(0, "signal", "[B:]SIG[@SECS]", "signal before the time limit (B: the batch shell, forwarded)", NULL, JO_STR, signal, jobspec_valid_signal, "expected [R:|B:]SIGNAL[@SECONDS], e.g. B:USR1@120", false) \
	X(0, "requeue", NULL, "let SLURM requeue the job", NULL, JO_FLAG, requeue, NULL, NULL, false) \
	X(0, "gpus", "N", "GPUs in total", NULL, JO_COUNT, gpus, NULL, NULL, false) \
	X(0, "gpus-per-node", "N", "GPUs on each node", NULL, JO_COUNT, gpus_per_node, NULL, NULL, false) \
	X(0, "chip", "NAME", "GPU model from the chip catalogue (GRES type from gres_mapping)", NULL, JO_STR, chip, check_ident, "expected a chip name from the catalogue (h100, a100-sxm4-80gb)", false) \
	X(0, "gpu-share", NULL, "plain host: also lease GPUs that other processes use", NULL, JO_FLAG, gpu_share, NULL, NULL, false) \
	X(0, "env", "K[=V]", "set K in the job; K alone takes the local value (repeatable)", NULL, JO_ENV, env, NULL, NULL, false) \
	X(0, "module", "MODULE", "module load MODULE before the command (repeatable)", NULL, JO_LIST, modules, check_line, "expected a module name on one line", true) \
	X(0, "uv-group", "GROUP", "uv sync --group GROUP, with the host's groups (repeatable)", NULL, JO_LIST, uv_groups, check_ident, "expected a dependency group name ([A-Za-z0-9._-])", true) \
	X(0, "setup", "CMD", "shell command to run before the command (repeatable)", NULL, JO_LIST, setup, check_text, "expected a shell command", false) \
	X(0, "sbatch", "DIRECTIVE", "raw sbatch option, e.g. '--mail-type=END' (repeatable)", NULL, JO_LIST, sbatch, check_sbatch, "expected one sbatch option such as '--mail-type=END'", false) \
	X(0, "extract-to", "DIR", "where the payload goes (default $SLURM_TMPDIR/code, else a temp dir)", "dir", JO_STR, extract_to, check_line, "expected a path on one line", false) \
	X(0, "container-image", "IMAGE", "run the job in this image, with the host's container_runtime", NULL, JO_STR, container_image, check_image, "expected an image: a file path or a registry reference, without spaces", false) \
	X(0, "container-mounts", "SRC:DST[:ro][,...]", "also mount these in the container (repeatable)", NULL, JO_LIST, container_mounts, container_mounts_valid, "expected SRC:DST or SRC:DST:ro items (absolute paths) joined by ','", true) \
	X(0, "container-workdir", "DIR", "working directory in the container (default: the code directory)", NULL, JO_STR, container_workdir, check_line, "expected a path on one line", false) \
	X(0, "no-container", NULL, "run on the host: ignore the host's default container_image", NULL, JO_FLAG, no_container, NULL, NULL, false) \
	X(0, "max-restarts", "N", "restart the run up to N times after a time limit, preemption, ... (default 0)", NULL, JO_STR, max_restarts, jobspec_valid_max_restarts, "expected a whole number from 0 to 1000", false) \
	X(0, "restart-on", "EVENTS", "which ends restart: timeout,preempted,node-fail,lost,error (default all but error)", NULL, JO_STR, restart_on, jobspec_valid_restart_on, "expected events from timeout, preempted, node-fail, lost, error joined by ','", false) \
	X(0, "stop-signal", "SIG", "signal the command gets before its time limit (default USR1)", NULL, JO_STR, stop_signal, jobspec_valid_stop_signal, "expected a signal the command can catch: USR1, USR2, TERM, INT, HUP, QUIT, ALRM or XCPU", false) \
	X(0, "grace", "SECONDS", "seconds between the stop signal and the time limit (default 120)", NULL, JO_COUNT, grace, NULL, NULL, false) \
	X(0, "sweep", "NAME=VALUES", "one task per value: V1,V2,... or A..B[:STEP]; repeated: every combination", NULL, JO_LIST, sweep, sweep_spec_valid, "expected NAME=V1,V2,... or NAME=A..B[:STEP] (NAME: letters, digits and _, not first a digit)", false) \
	X(0, "sweep-file", "FILE", "the sweep from a local YAML file (a grid of values, or a list of tasks)", "file", JO_STR, sweep_file, check_line, "expected a path on one line", false) \
	X(0, "max-parallel", "N", "a sweep's tasks that run at once, at most", NULL, JO_COUNT, max_parallel, NULL, NULL, false) \
	X(0, "sample", "SECONDS", "record the job's GPUs, CPU and memory every SECONDS on each node (default 30; 0: off)", NULL, JO_STR, sample, jobspec_valid_sample, "expected a whole number of seconds from 0 (off) to 3600", false) \
	X(0, "idle-timeout", "TIME", "end the job once its GPUs all stayed idle this long (30m, 2h, 90s; not in its first 10 minutes)", NULL, JO_STR, idle_timeout, jobspec_valid_idle_timeout, "expected a time: N[s|m|h] (a bare N is minutes), at least 1 minute", false) \
	X(0, "stage", "CMD", "run CMD as a stage of one job: the stages in order, then the command if any (repeatable)", NULL, JO_LIST, stages, check_text, "expected a shell command", false) \
	X(0, "launch", "per-node|once", "per-node: the command on every node (default); once: once, with the allocation free for its srun or mpirun", NULL, JO_STR, launch, jobspec_valid_launch, "expected per-node or once", false) \
	X(0, "sbatch-script", "FILE", "an existing sbatch script as the job: its #SBATCH lines as options, its body run once (--launch once)", "file", JO_STR, sbatch_script, check_line, "expected a path on one line", false) \
	X(0, "idle-below", "PCT", "with --idle-timeout: a GPU under this utilisation is idle (default 5)", NULL, JO_COUNT, idle_below, NULL, NULL, false)

#endif
