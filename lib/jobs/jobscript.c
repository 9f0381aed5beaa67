/* SPDX-License-Identifier: MIT */
/*
 * Script generation. The scripts are built top to bottom as the user will read them;
 * every user string goes through sh_quote (or quote_path, which adds $VAR and ~/
 * expansion around sh_quote'd pieces, or sbatch_quote for #SBATCH lines).
 */
#include "jobs/jobscript.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>

#include "base/base64.h"
#include "base/shquote.h"
#include "base/strbuf.h"
#include "container/container_run.h"
#include "inventory/sweep.h"
#include "shfiles.h"

#ifndef DISPATCH_VERSION
#define DISPATCH_VERSION "unknown"
#endif

/* ---- quoting ---- */

/* A path for the shell: a leading ~ or ~/ becomes "$HOME", $NAME and ${NAME} become
 * "${NAME}"; everything else is sh_quote'd, so no other expansion can happen. */
void jobscript_quote_path(struct strbuf *sb, const char *s)
{
	_cleanup_strbuf_ struct strbuf lit = STRBUF_INIT;
	bool any = false;
	if (s[0] == '~' && (s[1] == '/' || s[1] == '\0')) {
		strbuf_adds(sb, "\"$HOME\"");
		s++;
		any = true;
	}
	while (*s) {
		if (*s == '$') {
			bool brace = s[1] == '{';
			const char *name = s + 1 + brace;
			size_t n = 0;
			while ((name[n] >= 'A' && name[n] <= 'Z') || (name[n] >= 'a' && name[n] <= 'z') ||
			       name[n] == '_' || (n > 0 && name[n] >= '0' && name[n] <= '9'))
				n++;
			if (n > 0 && (!brace || name[n] == '}')) {
				if (lit.len)
					sh_quote(sb, lit.buf);
				strbuf_reset(&lit);
				strbuf_addf(sb, "\"${%.*s}\"", (int)n, name);
				s = name + n + brace;
				any = true;
				continue;
			}
		}
		strbuf_addch(&lit, *s++);
	}
	if (lit.len || !any)
		sh_quote(sb, lit.buf);
}

/* One #SBATCH value as sbatch reads it: bare when plain, else in double quotes with
 * " and \ escaped (sbatch's own rule; an unquoted # would start a comment). */
static void sbatch_quote(struct strbuf *sb, const char *s)
{
	bool plain = *s != '\0';
	for (const char *p = s; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
		      strchr("_./%@:,=+-[]^&|!*()", *p)))
			plain = false;
	if (plain) {
		strbuf_adds(sb, s);
		return;
	}
	strbuf_addch(sb, '"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			strbuf_addch(sb, '\\');
		strbuf_addch(sb, *s);
	}
	strbuf_addch(sb, '"');
}

/* ---- host defaults ---- */

static bool is_slurm(const struct jobscript_target *t)
{
	return t->host->type == INV_HOST_SLURM;
}

/* --launch once, which only a SLURM job has (a plain host's job is one node). */
static bool launch_once(const struct jobspec *spec, const struct jobscript_target *t)
{
	return is_slurm(t) && jobspec_launch_once(spec);
}

static const char *default_partition(const struct jobspec *spec, const struct jobscript_target *t)
{
	const struct inv_host *h = t->host;
	if (spec->partition)
		return spec->partition;
	if (t->partition)
		return t->partition;
	if (jobspec_total_gpus(spec) == 0 && h->cpu_partitions && h->cpu_partitions[0])
		return h->cpu_partitions[0];
	for (size_t i = 0; i < h->npartitions; i++)
		if (h->partitions[i].is_default)
			return h->partitions[i].name;
	return h->npartitions ? h->partitions[0].name : NULL;
}

static const char *partition_constraint(const struct inv_host *h, const char *partition)
{
	for (size_t i = 0; partition && i < h->npartitions; i++)
		if (streq(h->partitions[i].name, partition))
			return h->partitions[i].constraint;
	return NULL;
}

char *jobscript_log_dir(const struct inv_cluster *c)
{
	if (c->log)
		return xstrdup(c->log);
	return xasprintf("%s/logs", c->work);
}

char *jobscript_share_dir(const struct inv_host *host)
{
	const struct inv_cluster *c = host ? host->cluster : NULL;
	if (c && c->share)
		return xstrdup(c->share);
	if (c && c->work)
		return xasprintf("%s/.dispatch", c->work);
	return xstrdup("~/.dispatch");
}

char *jobscript_stage_name(const char *job_name, time_t now, unsigned long nonce)
{
	struct strbuf sb = STRBUF_INIT;
	for (const char *p = job_name && *job_name ? job_name : "dispatch"; *p && sb.len < 40; p++) {
		bool ok = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
			  (*p >= '0' && *p <= '9') || *p == '.' || *p == '_' || *p == '-';
		strbuf_addch(&sb, ok && !(sb.len == 0 && *p == '.') ? *p : '_');
	}
	struct tm tm;
	char stamp[32];
	gmtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
	strbuf_addf(&sb, "-%s-%04lx", stamp, nonce & 0xffff);
	return strbuf_detach(&sb);
}

/* ---- #SBATCH directives ---- */

static void directive(char ***dirs, const char *name, const char *value)
{
	struct strbuf sb = STRBUF_INIT;
	strbuf_addf(&sb, "--%s", name);
	if (value) {
		strbuf_addch(&sb, '=');
		sbatch_quote(&sb, value);
	}
	strv_push(dirs, strbuf_detach(&sb));
}

static void directive_long(char ***dirs, const char *name, long v)
{
	strv_push(dirs, xasprintf("--%s=%ld", name, v));
}

/* The GPU request: per node through --gres (what every SLURM understands), unless a
 * total does not divide evenly over the nodes (then --gpus, which needs cons_tres). */
static void gpu_directives(char ***dirs, const struct jobspec *spec, const char *type)
{
	long per_node = jobspec_gpus_per_node(spec), total = jobspec_total_gpus(spec);
	_cleanup_free_ char *v = NULL;
	if (total == 0)
		return;
	if (per_node > 0) {
		v = type ? xasprintf("gpu:%s:%ld", type, per_node) : xasprintf("gpu:%ld", per_node);
		directive(dirs, "gres", v);
	} else {
		v = type ? xasprintf("%s:%ld", type, total) : xasprintf("%ld", total);
		directive(dirs, "gpus", v);
	}
}

static char **make_directives(const struct jobspec *spec, const struct jobscript_target *t)
{
	const struct inv_host *h = t->host;
	char **d = NULL;
	const char *partition = default_partition(spec, t);
	long nodes = spec->nodes > 0 ? spec->nodes : 1;

	directive(&d, "job-name", spec->job_name ? spec->job_name : "dispatch");
	if (partition)
		directive(&d, "partition", partition);
	if (spec->account || h->account)
		directive(&d, "account", spec->account ? spec->account : h->account);
	if (spec->qos || h->qos)
		directive(&d, "qos", spec->qos ? spec->qos : h->qos);
	directive_long(&d, "nodes", nodes);
	if (spec->ntasks)
		directive_long(&d, "ntasks", spec->ntasks);
	if (spec->ntasks_per_node)
		directive_long(&d, "ntasks-per-node", spec->ntasks_per_node);
	else if (!spec->ntasks)
		directive_long(&d, "ntasks-per-node", 1); /* one bootstrap per node */
	if (spec->cpus_per_task)
		directive_long(&d, "cpus-per-task", spec->cpus_per_task);
	if (spec->chip)
		gpu_directives(&d, spec, t->gres_type ? t->gres_type : spec->chip);
	else
		gpu_directives(&d, spec, NULL);
	if (spec->mem)
		directive(&d, "mem", spec->mem);
	else if (spec->mem_per_cpu)
		directive(&d, "mem-per-cpu", spec->mem_per_cpu);
	else if (h->mem)
		directive(&d, "mem", h->mem);
	if (spec->time)
		directive(&d, "time", spec->time);
	if (spec->output) {
		directive(&d, "output", spec->output);
	} else if (h->cluster && (h->cluster->log || h->cluster->work)) {
		_cleanup_free_ char *dir = jobscript_log_dir(h->cluster);
		_cleanup_free_ char *out = xasprintf("%s/%s", dir, spec->array || t->sweep
									 ? "%x-%A_%a.out" : "%x-%j.out");
		directive(&d, "output", out);
	}
	if (spec->error)
		directive(&d, "error", spec->error);
	if (spec->chdir && !strchr(spec->chdir, '$') && spec->chdir[0] != '~')
		directive(&d, "chdir", spec->chdir); /* else only the bootstrap's cd expands it */
	if (spec->dependency)
		directive(&d, "dependency", spec->dependency);
	if (spec->exclusive > 0)
		directive(&d, "exclusive", NULL);
	const char *constraint = spec->constraint ? spec->constraint
						  : partition_constraint(h, partition);
	if (constraint)
		directive(&d, "constraint", constraint);
	_cleanup_strv_free_ char **exclude = strv_copy(h->exclude);
	for (size_t i = 0; spec->exclude && spec->exclude[i]; i++)
		if (!strv_contains(exclude, spec->exclude[i]))
			strv_add(&exclude, spec->exclude[i]);
	if (exclude) {
		struct strbuf sb = STRBUF_INIT;
		for (size_t i = 0; exclude[i]; i++)
			strbuf_addf(&sb, "%s%s", i ? "," : "", exclude[i]);
		directive(&d, "exclude", sb.buf);
		strbuf_release(&sb);
	}
	if (spec->array)
		directive(&d, "array", spec->array);
	/* A sweep's array (or arrays: one sbatch.sh for all of them) is on sbatch's
	 * command line, never here: lib/submission.c, dispatch-submit(1) SWEEPS. */
	if (spec->signal)
		directive(&d, "signal", spec->signal);
	if (t->run_id) { /* the wrapper gets the stop signal, forwards it and requeues */
		_cleanup_free_ char *sig = xasprintf("B:%s@%ld", jobspec_run_stop_signal(spec),
						     jobspec_run_grace(spec));
		directive(&d, "signal", sig);
	}
	if (t->run_id) /* one log for all the attempts */
		directive(&d, "open-mode", "append");
	if (spec->requeue > 0 || (t->run_id && jobspec_run_max_restarts(spec) > 0))
		directive(&d, "requeue", NULL);
	else if (spec->requeue < 0)
		directive(&d, "no-requeue", NULL);
	for (size_t i = 0; spec->sbatch && spec->sbatch[i]; i++)
		strv_add(&d, spec->sbatch[i]);
	return d;
}

/* ---- the scripts ---- */

static const char forward_signals[] =
	"trap 'dispatch_forward TERM 143' TERM\n"
	"trap 'dispatch_forward INT 130' INT\n"
	"trap 'dispatch_forward HUP 129' HUP\n"
	"trap 'dispatch_forward USR1 138' USR1\n"
	"trap 'dispatch_forward USR2 140' USR2\n";

/* Wait for $dispatch_child through forwarded signals (a trapped signal ends 'wait'
 * early), then exit with its status. */
static const char wait_child[] =
	"set +e\n"
	"wait \"$dispatch_child\"\n"
	"while kill -0 \"$dispatch_child\" 2>/dev/null; do\n"
	"\twait \"$dispatch_child\"\n"
	"done\n"
	"wait \"$dispatch_child\"\n"
	"dispatch_status=$?\n"
	"exit \"$dispatch_status\"\n";

static void header(struct strbuf *sb, const char *what, const struct jobspec *spec)
{
	strbuf_addf(sb, "# %s for job ", what);
	sh_quote(sb, spec->job_name ? spec->job_name : "dispatch");
	strbuf_addf(sb, ", generated by dispatch %s.\n", DISPATCH_VERSION);
}

static void boot_identity(struct strbuf *sb, const struct jobspec *spec)
{
	strbuf_adds(sb,
		"\n# Who and where this node is: the same names inside SLURM and on a plain host.\n"
		"export DISPATCH_JOB_ID=\"${SLURM_JOB_ID:-${DISPATCH_JOB_ID:-$$}}\"\n"
		"export DISPATCH_NODE_RANK=\"${SLURM_NODEID:-0}\"\n"
		"export DISPATCH_NNODES=\"${SLURM_JOB_NUM_NODES:-${SLURM_NNODES:-1}}\"\n");
	strbuf_addf(sb, "export DISPATCH_GPUS_PER_NODE=\"${SLURM_GPUS_ON_NODE:-%ld}\"\n",
		    jobspec_gpus_per_node(spec));
	strbuf_adds(sb, shfile_jobs_boot_identity); /* boot_identity.sh */
}

static void boot_traps(struct strbuf *sb)
{
	strbuf_adds(sb, shfile_jobs_boot_traps); /* boot_traps.sh */
	strbuf_adds(sb, forward_signals);
}

/* A bootstrap started by a plain bash runs itself again as a login shell. A user
 * whose login shell is not bash (or sh) has the login files of that shell: it starts
 * as a login shell (sh_login_exec: csh and tcsh source .login, fish and zsh take -l)
 * and runs the bootstrap in bash; DISPATCH_LOGIN_DONE says that this happened. */
static void boot_login_shell(struct strbuf *sb, const struct inv_host *h)
{
	if (h->no_login_shell)
		return;
	strbuf_adds(sb,
		"\n# A login shell, as the reference runs it: site profiles set up PATH, modules\n"
		"# and conda on compute nodes (the host's login_shell: false turns it off). The\n"
		"# user's own login shell when it is not bash: its login files (csh's .login,\n"
		"# zsh's .zprofile, fish's config), then this script again in bash.\n"
		"if [ -z \"${DISPATCH_LOGIN_DONE:-}\" ] && ! shopt -q login_shell; then\n"
		"\tcase ${SHELL##*/} in\n"
		"\tbash | sh | '') ;;\n"
		"\t*)\n"
		"\t\tif [ -x \"$SHELL\" ]; then\n"
		"\t\t\texport DISPATCH_LOGIN_DONE=\"$0\"\n");
	sh_login_exec(sb, "exec bash \"$DISPATCH_LOGIN_DONE\"");
	strbuf_adds(sb,
		"\t\tfi\n"
		"\t\t;;\n"
		"\tesac\n"
		"\texec bash -l \"$0\" \"$@\"\n"
		"fi\n"
		"unset DISPATCH_LOGIN_DONE\n");
}

/* A tool the job needs on this node, or a message that names node and tool. */
static void need_tool(struct strbuf *sb, const char *tool, const char *why)
{
	strbuf_addf(sb, "if ! command -v %s >/dev/null 2>&1; then\n"
			"\techo \"dispatch: %s not found on $(hostname) (PATH=$PATH): %s\" >&2\n"
			"\texit 127\n"
			"fi\n", tool, tool, why);
}

/* One export of a value; a credential is written as <redacted> when asked. */
static void export_value(struct strbuf *sb, const char *name, const char *value, bool secret,
			 const struct jobscript_target *t)
{
	strbuf_addf(sb, "export %s=", name);
	sh_quote(sb, secret && t->redact ? JOBSCRIPT_REDACTED : value);
	strbuf_addch(sb, '\n');
}

/* The cluster's paths and credentials, then the host's env (which wins on a collision,
 * as in the reference): before the JuiceFS mount, so that a host's PATH finds juicefs. */
static void boot_cluster_env(struct strbuf *sb, const struct jobscript_target *t)
{
	const struct inv_host *h = t->host;
	const struct inv_cluster *c = h->cluster;
	if (c && c->root) {
		static const char *const dirs[][2] = {
			{ "data", "DISPATCH_DATA_DIR" }, { "checkpoints", "DISPATCH_CHECKPOINTS_DIR" },
			{ "results", "DISPATCH_RESULTS_DIR" }, { "status", "DISPATCH_STATUS_DIR" },
		};
		strbuf_adds(sb, "\n# The cluster's paths (THESEUS_ROOT as the reference exports it).\n");
		strbuf_adds(sb, "export DISPATCH_ROOT=");
		jobscript_quote_path(sb, c->root);
		strbuf_adds(sb, "\nexport THESEUS_ROOT=\"$DISPATCH_ROOT\"\n");
		if (c->work) {
			strbuf_adds(sb, "export DISPATCH_WORK=");
			jobscript_quote_path(sb, c->work);
			strbuf_addch(sb, '\n');
		}
		for (size_t i = 0; i < ARRAY_SIZE(dirs); i++) {
			_cleanup_free_ char *dir = inv_cluster_dir(c, dirs[i][0]);
			strbuf_addf(sb, "export %s=", dirs[i][1]);
			jobscript_quote_path(sb, dir);
			strbuf_addch(sb, '\n');
		}
	}
	size_t i = 0;
	const char *name, *value;
	bool first = true;
	while (c && inv_cluster_secret(c, &i, &name, &value)) {
		if (first)
			strbuf_adds(sb, "\n# The cluster's credentials (this file is mode 0700).\n");
		first = false;
		export_value(sb, name, value, true, t);
	}
	if (h->nenv)
		strbuf_adds(sb, "\n# The host's environment.\n");
	for (size_t k = 0; k < h->nenv; k++)
		export_value(sb, h->env[k].key, h->env[k].value, false, t);
}

static void boot_juicefs(struct strbuf *sb, const struct jobscript_target *t)
{
	const struct inv_cluster *c = t->host->cluster;
	if (!c || !c->mount || !c->root)
		return;
	_cleanup_free_ char *password = NULL, *url = NULL, *why = NULL;
	if (inv_meta_url_split(c->mount, &url, &password, &why) < 0) {
		/* the inventory's loader refuses such a URL: never its text on a command line */
		strbuf_adds(sb, "\necho 'dispatch: the cluster'\\''s JuiceFS metadata URL is refused' >&2\nexit 1\n");
		return;
	}
	strbuf_adds(sb, "\n# The cluster's JuiceFS volume (left mounted for the jobs after this one);\n"
			"# the metadata password goes in the environment, never on the command line.\n"
			"if ! mountpoint -q ");
	jobscript_quote_path(sb, c->root);
	strbuf_adds(sb, "; then\n");
	_cleanup_strbuf_ struct strbuf check = STRBUF_INIT;
	need_tool(&check, "juicefs", "the cluster mounts a JuiceFS volume");
	for (char *line = check.buf; *line;) {
		char *nl = strchr(line, '\n');
		strbuf_addch(sb, '\t');
		strbuf_add(sb, line, (size_t)(nl - line + 1));
		line = nl + 1;
	}
	strbuf_adds(sb, "\tmkdir -p -- ");
	jobscript_quote_path(sb, c->root);
	strbuf_adds(sb, "\n\t");
	if (password) {
		strbuf_adds(sb, "META_PASSWORD=");
		sh_quote(sb, t->redact ? JOBSCRIPT_REDACTED : password);
		strbuf_adds(sb, " ");
	}
	strbuf_adds(sb, "juicefs mount --background");
	if (c->cache_size) {
		strbuf_adds(sb, " --cache-size ");
		sh_quote(sb, c->cache_size);
	}
	if (c->cache_dir) {
		strbuf_adds(sb, " --cache-dir ");
		jobscript_quote_path(sb, c->cache_dir);
	}
	if (c->all_squash) {
		strbuf_adds(sb, " --all-squash ");
		sh_quote(sb, c->all_squash);
	}
	strbuf_addch(sb, ' ');
	sh_quote(sb, url);
	strbuf_addch(sb, ' ');
	jobscript_quote_path(sb, c->root);
	strbuf_adds(sb, " ||\n\t\tmountpoint -q ");  /* another task on this node won the race */
	jobscript_quote_path(sb, c->root);
	strbuf_adds(sb, "\nfi\n");
}

static void boot_modules(struct strbuf *sb, char *const *modules)
{
	if (!modules || !modules[0])
		return;
	strbuf_adds(sb,
		"\n# Environment modules (their init scripts are not written for set -u).\n"
		"set +u\n"
		"if ! command -v module >/dev/null 2>&1; then\n"
		"\tfor dispatch_f in /etc/profile.d/lmod.sh /etc/profile.d/modules.sh \\\n"
		"\t\t/usr/share/lmod/lmod/init/bash /usr/share/modules/init/bash; do\n"
		"\t\tif [ -f \"$dispatch_f\" ]; then\n"
		"\t\t\t# shellcheck source=/dev/null\n"
		"\t\t\t. \"$dispatch_f\"\n"
		"\t\t\tbreak\n"
		"\t\tfi\n"
		"\tdone\n"
		"fi\n");
	for (size_t i = 0; modules[i]; i++) {
		strbuf_adds(sb, "module load ");
		sh_quote(sb, modules[i]);
		strbuf_addch(sb, '\n');
	}
	strbuf_adds(sb, "set -u\n");
}

static void boot_env(struct strbuf *sb, const struct jobspec *spec)
{
	if (!spec->nenv)
		return;
	strbuf_adds(sb, "\n# The job's environment.\n");
	for (size_t i = 0; i < spec->nenv; i++) {
		strbuf_addf(sb, "export %s=", spec->env[i].key); /* a checked shell name */
		sh_quote(sb, spec->env[i].value);
		strbuf_addch(sb, '\n');
	}
}

static bool env_sets(const struct jobspec *spec, const struct inv_host *h, const char *key)
{
	for (size_t i = 0; i < spec->nenv; i++)
		if (streq(spec->env[i].key, key))
			return true;
	for (size_t i = 0; i < h->nenv; i++)
		if (streq(h->env[i].key, key))
			return true;
	return false;
}

bool jobscript_sets_wandb_run(const struct jobspec *spec, const struct inv_host *h)
{
	const struct inv_cluster *c = h->cluster;
	return c && c->wandb && !env_sets(spec, h, "WANDB_RUN_ID") && !env_sets(spec, h, "WANDB_RESUME");
}

char *jobscript_wandb_url(const struct inv_host *h, const char *run_id)
{
	const struct inv_cluster *c = h ? h->cluster : NULL;
	if (!c || !c->wandb || !c->wandb_entity || !c->wandb_project || !run_id)
		return NULL;
	for (size_t i = 0; i < h->nenv; i++) /* the host's own entity or project: not ours */
		if (streq(h->env[i].key, "WANDB_ENTITY") || streq(h->env[i].key, "WANDB_PROJECT"))
			return NULL;
	return xasprintf("https://wandb.ai/%s/%s/runs/%s", c->wandb_entity, c->wandb_project, run_id);
}

/* A run (dispatch-submit(1) RUNS): its id, the attempt, the checkpoint directory (one
 * per run, on the cluster's shared storage), the stop signal and its deadline (the
 * SLURM wrapper exports those it knows; a plain host's launcher likewise). */
static void boot_run(struct strbuf *sb, const struct jobspec *spec,
		     const struct jobscript_target *t)
{
	if (!t->run_id)
		return;
	const struct inv_cluster *c = t->host->cluster;
	_cleanup_free_ char *base = c && c->root ? inv_cluster_dir(c, "checkpoints") : NULL;
	if (!base) {
		_cleanup_free_ char *share = jobscript_share_dir(t->host);
		base = xasprintf("%s/checkpoints", share);
	}
	_cleanup_free_ char *dir = xasprintf("%s/%s", base, t->run_id);
	/* a job array's task is a run of its own (requeued alone): the id with -INDEX,
	 * a sweep's index (boot_sweep's) or the task id (as the sbatch wrapper's) */
	const char *task = !is_slurm(t) ? (t->sweep ? "-\"$DISPATCH_SWEEP_INDEX\"" : "")
			 : "${SLURM_ARRAY_TASK_ID:+-$((10#$SLURM_ARRAY_TASK_ID + "
			   "10#${DISPATCH_SWEEP_FIRST:-0}))}";
	strbuf_adds(sb, "\n# The run: one id for every attempt, and its checkpoint directory.\n"
			"export DISPATCH_RUN_ID=");
	sh_quote(sb, t->run_id);
	strbuf_adds(sb, task);
	strbuf_adds(sb, "\nexport DISPATCH_ATTEMPT=\"${DISPATCH_ATTEMPT:-${SLURM_RESTART_COUNT:-0}}\"\n"
			"export DISPATCH_CHECKPOINT_DIR=");
	jobscript_quote_path(sb, dir);
	strbuf_adds(sb, task);
	strbuf_addf(sb, "\n(umask 077 && mkdir -p -- \"$DISPATCH_CHECKPOINT_DIR\")\n"
			"export DISPATCH_STOP_SIGNAL=%s\n"
			"export DISPATCH_STOP_GRACE=%ld\n"
			"export DISPATCH_STOP_DEADLINE=\"${DISPATCH_STOP_DEADLINE:-}\"\n",
		    jobspec_run_stop_signal(spec), jobspec_run_grace(spec));
	static const char *const own[][2] = { { "QUIT", "131" }, { "ALRM", "142" },
					      { "XCPU", "152" } };
	for (size_t i = 0; i < ARRAY_SIZE(own); i++)
		if (streq(jobspec_run_stop_signal(spec), own[i][0]))
			strbuf_addf(sb, "trap 'dispatch_forward %s %s' %s\n", own[i][0], own[i][1],
				    own[i][0]);
	if (jobscript_sets_wandb_run(spec, t->host))
		strbuf_adds(sb, "# Every attempt continues one W&B run.\n"
				"export WANDB_RUN_ID=\"$DISPATCH_RUN_ID\"\n"
				"export WANDB_RESUME=allow\n");
}

/* Base64 in lines of 76 characters, as base64(1) writes and reads it. */
static void base64_lines(struct strbuf *sb, const unsigned char *p, size_t n)
{
	_cleanup_strbuf_ struct strbuf flat = STRBUF_INIT;
	base64_encode(&flat, p, n, true);
	for (size_t at = 0; at < flat.len; at += 76) {
		strbuf_add(sb, flat.buf + at, flat.len - at < 76 ? flat.len - at : 76);
		strbuf_addch(sb, '\n');
	}
}

static void boot_payload(struct strbuf *sb, const struct jobspec *spec,
			 const struct jobscript_target *t)
{
	strbuf_adds(sb, "\n# The packed code, extracted on every node; the command runs in it.\n");
	if (spec->extract_to) {
		strbuf_adds(sb, "DISPATCH_CODE_DIR=");
		jobscript_quote_path(sb, spec->extract_to);
		strbuf_adds(sb,
			"\nexport DISPATCH_CODE_DIR\n"
			"mkdir -p -- \"$DISPATCH_CODE_DIR\"\n");
		strbuf_adds(sb, t->payload_path ? "tar -xzf - -C \"$DISPATCH_CODE_DIR\" <"
					       : "base64 -d <<'DISPATCH_PAYLOAD' | tar -xzf - -C \"$DISPATCH_CODE_DIR\"\n");
	} else if (launch_once(spec, t)) {
		/* where the command's srun tasks on the other nodes see it too (boot_once) */
		strbuf_adds(sb, "DISPATCH_CODE_DIR=$dispatch_tmp/code\n"
				"export DISPATCH_CODE_DIR\n"
				"dispatch_part=$(mktemp -d \"$DISPATCH_CODE_DIR.XXXXXX\")\n");
		strbuf_adds(sb, t->payload_path ? "tar -xzf - -C \"$dispatch_part\" <"
					       : "base64 -d <<'DISPATCH_PAYLOAD' | tar -xzf - -C \"$dispatch_part\"\n");
	} else {
		/* $SLURM_TMPDIR is a per-job directory where a site sets it (plain SLURM does
		 * not): extract into a private directory and rename it into place, so that
		 * several tasks of one node do not write over each other. Without it, a
		 * per-task directory under $TMPDIR, removed at exit. */
		strbuf_adds(sb,
			"if [ -n \"${SLURM_TMPDIR:-}\" ]; then\n"
			"\tDISPATCH_CODE_DIR=$SLURM_TMPDIR/code\n"
			"else\n"
			"\tdispatch_tmp=$(mktemp -d \"${TMPDIR:-/tmp}/dispatch-$DISPATCH_JOB_ID.XXXXXX\")\n"
			"\tDISPATCH_CODE_DIR=$dispatch_tmp/code\n"
			"fi\n"
			"export DISPATCH_CODE_DIR\n"
			"dispatch_part=$(mktemp -d \"$DISPATCH_CODE_DIR.XXXXXX\")\n");
		strbuf_adds(sb, t->payload_path ? "tar -xzf - -C \"$dispatch_part\" <"
					       : "base64 -d <<'DISPATCH_PAYLOAD' | tar -xzf - -C \"$dispatch_part\"\n");
	}
	if (t->payload_path) {
		jobscript_quote_path(sb, t->payload_path);
		strbuf_addch(sb, '\n');
	} else {
		base64_lines(sb, t->payload, t->payload_len);
		strbuf_adds(sb, "DISPATCH_PAYLOAD\n");
	}
	if (!spec->extract_to)
		strbuf_adds(sb,
			"if ! mv -T -- \"$dispatch_part\" \"$DISPATCH_CODE_DIR\" 2>/dev/null; then\n"
			"\trm -rf -- \"$dispatch_part\" # another task of this node was first\n"
			"fi\n");
	strbuf_adds(sb, "cd -- \"$DISPATCH_CODE_DIR\"");
	if (t->payload_subdir) {
		strbuf_addch(sb, '/');
		sh_quote(sb, t->payload_subdir);
	}
	strbuf_addch(sb, '\n');
}

/* --launch once (SLURM): the bootstrap's prepare step on every node ends here; in the
 * batch script the code goes under the stage dir, with DISPATCH_HOSTFILE
 * (boot_once.sh). */
static void boot_once(struct strbuf *sb, const struct jobspec *spec,
		      const struct jobscript_target *t)
{
	if (launch_once(spec, t)) {
		strbuf_addch(sb, '\n');
		strbuf_adds(sb, shfile_jobs_boot_once);
	}
}

/* Per-node (SLURM): an srun in the command fails at once (boot_srun_guard.sh). */
static void boot_srun_guard(struct strbuf *sb, const struct jobspec *spec,
			    const struct jobscript_target *t)
{
	if (is_slurm(t) && !launch_once(spec, t)) {
		strbuf_addch(sb, '\n');
		strbuf_adds(sb, shfile_jobs_boot_srun_guard);
	}
}

static void boot_workdir(struct strbuf *sb, const struct jobspec *spec,
			 const struct jobscript_target *t)
{
	if (t->payload || t->payload_path) {
		boot_payload(sb, spec, t);
	} else if (spec->chdir) {
		strbuf_adds(sb, "\n# The working directory.\ncd -- ");
		jobscript_quote_path(sb, spec->chdir);
		strbuf_addch(sb, '\n');
	}
}

/* uv sync whenever the code has a pyproject.toml: --frozen first, unfrozen when the
 * lock file does not match, with the host's and the job's groups; UV_CACHE_DIR is the
 * cluster's uv_dir, else a per-job directory removed when the job ends. */
static void boot_uv(struct strbuf *sb, const struct jobspec *spec, const struct inv_host *h)
{
	const char *image = container_job_image(spec, h);
	_cleanup_strv_free_ char **groups = strv_copy(h->uv_groups);
	for (size_t i = 0; spec->uv_groups && spec->uv_groups[i]; i++)
		if (!strv_contains(groups, spec->uv_groups[i]))
			strv_add(&groups, spec->uv_groups[i]);
	_cleanup_strbuf_ struct strbuf args = STRBUF_INIT;
	for (size_t i = 0; groups && groups[i]; i++) {
		strbuf_adds(&args, " --group ");
		sh_quote(&args, groups[i]);
	}
	_cleanup_strbuf_ struct strbuf check = STRBUF_INIT;
	need_tool(&check, "uv", image ? "the code has a pyproject.toml: install uv in the image, "
					 "or sync the environment into it beforehand"
				       : "the code has a pyproject.toml");
	strbuf_adds(sb, "\n# Python dependencies: uv sync when the code has a pyproject.toml.\n"
			"if [ -f pyproject.toml ]; then\n");
	for (char *line = check.buf; *line;) {
		char *nl = strchr(line, '\n');
		strbuf_addch(sb, '\t');
		strbuf_add(sb, line, (size_t)(nl - line + 1));
		line = nl + 1;
	}
	if (h->cluster && h->cluster->uv_dir) {
		strbuf_adds(sb, "\texport UV_CACHE_DIR=");
		jobscript_quote_path(sb, h->cluster->uv_dir);
		strbuf_adds(sb, "\n\tmkdir -p -- \"$UV_CACHE_DIR\"\n");
	} else {
		strbuf_adds(sb, "\tdispatch_uv_tmp=$(mktemp -d \"${TMPDIR:-/tmp}/dispatch-uv-$DISPATCH_JOB_ID.XXXXXX\")\n"
				"\texport UV_CACHE_DIR=\"$dispatch_uv_tmp\"\n");
	}
	strbuf_addf(sb, "\tuv sync --frozen%s || uv sync%s\n", args.buf, args.buf);
	strbuf_adds(sb, "\tif [ -d .venv/bin ]; then\n"
			"\t\texport VIRTUAL_ENV=\"$PWD/.venv\"\n"
			"\t\texport PATH=\"$VIRTUAL_ENV/bin:$PATH\"\n"
			"\tfi\n"
			"fi\n");
}

static void boot_setup(struct strbuf *sb, char *const *setup)
{
	if (!setup || !setup[0])
		return;
	strbuf_adds(sb, "\n# Setup commands, in this shell (so that exports and cd stay).\n");
	for (size_t i = 0; setup[i]; i++) {
		strbuf_adds(sb, "eval ");
		sh_quote(sb, setup[i]);
		strbuf_addch(sb, '\n');
	}
}

static void boot_command(struct strbuf *sb, const struct jobspec *spec,
			 const struct jobscript_target *t)
{
	strbuf_adds(sb, "\n# The command, as an ordinary bash script runs it (no strict mode), in a\n"
			"# process group of its own so that a forwarded signal reaches all of it;\n"
			"# its exit status is the script's.\n"
			"set -m\n(\n\tset +euo pipefail\n");
	if (t->run_id) /* this shell outlives the stop signal: the command handles it */
		strbuf_addf(sb, "\ttrap : %s\n", jobspec_run_stop_signal(spec));
	if (t->sweep) { /* the task's own (boot_sweep) */
		strbuf_adds(sb, "\teval \"$dispatch_command\"");
	} else if (spec->stages) { /* boot_stages */
		strbuf_adds(sb, "\tdispatch_stages");
		for (size_t i = 0; spec->stages[i]; i++) {
			strbuf_adds(sb, " \\\n\t\t");
			sh_quote(sb, spec->stages[i]);
		}
		if (spec->command) {
			strbuf_adds(sb, " \\\n\t\t");
			sh_quote(sb, spec->command);
		}
	} else {
		strbuf_adds(sb, "\teval ");
		sh_quote(sb, spec->command);
	}
	strbuf_adds(sb, "\n) &\ndispatch_child=$!\nset +m\n");
	strbuf_adds(sb, wait_child);
}

/* --stage: the runner (boot_stages.sh) and the file where the job's first task
 * records the stages, next to this script (as the usage file: STAGE/stages.JOB). */
static void boot_stages(struct strbuf *sb, const struct jobspec *spec,
			const struct jobscript_target *t)
{
	if (!spec->stages)
		return;
	strbuf_adds(sb, "\n# The job's stages (dispatch-submit(1) STAGES), in order.\n");
	if (is_slurm(t))
		strbuf_adds(sb, "dispatch_stage_file=${SLURM_ARRAY_JOB_ID:+${SLURM_ARRAY_JOB_ID}_${SLURM_ARRAY_TASK_ID:-}}\n");
	else
		strbuf_adds(sb, "dispatch_stage_file=\n");
	strbuf_adds(sb, "dispatch_stage_file=\"${BASH_SOURCE[0]%/*}/stages.${dispatch_stage_file:-$DISPATCH_JOB_ID}\"\n");
	strbuf_adds(sb, shfile_jobs_boot_stages);
}

/* A sweep's task: its index (the array task; on a plain host the end of its job id,
 * SWEEP-K: lib/sched/plain/plainjob.h), the sweep's id and size, its parameters and
 * its command, from the table of every task (sweep_script). */
static void boot_sweep(struct strbuf *sb, const struct jobscript_target *t)
{
	if (!t->sweep)
		return;
	strbuf_adds(sb, "\n# The sweep (dispatch-submit(1) SWEEPS): this task's parameters and command.\n");
	if (is_slurm(t))
		strbuf_adds(sb, "# Its index: the array task id plus the sweep index of the array's task 0\n"
				"# (DISPATCH_SWEEP_FIRST, from sbatch.sh's argument: a sweep larger than the\n"
				"# cluster's MaxArraySize runs as several arrays).\n"
				"DISPATCH_SWEEP_INDEX=${SLURM_ARRAY_TASK_ID:?not a task of the job array of a sweep}\n"
				"case ${DISPATCH_SWEEP_FIRST:-0}/$DISPATCH_SWEEP_INDEX in\n"
				"*[!0-9/]* | /* | */)\n"
				"\techo \"dispatch: the sweep task is not a number: $DISPATCH_SWEEP_INDEX plus ${DISPATCH_SWEEP_FIRST:-0}\" >&2\n"
				"\texit 1\n"
				"\t;;\n"
				"esac\n"
				"DISPATCH_SWEEP_INDEX=$((10#$DISPATCH_SWEEP_INDEX + 10#${DISPATCH_SWEEP_FIRST:-0}))\n");
	else /* a plain host's task: its job id is SWEEP-INDEX */
		strbuf_adds(sb, "DISPATCH_SWEEP_INDEX=${DISPATCH_JOB_ID##*-}\n"
				"case $DISPATCH_SWEEP_INDEX in '' | *[!0-9]*)\n"
				"\techo \"dispatch: job $DISPATCH_JOB_ID is not a task of a sweep (SWEEP-INDEX)\" >&2\n"
				"\texit 1 ;;\nesac\n");
	strbuf_adds(sb, "DISPATCH_SWEEP_ID=");
	sh_quote(sb, t->sweep_id ? t->sweep_id : "");
	strbuf_addf(sb, "\nDISPATCH_SWEEP_SIZE=%zu\n"
			"export DISPATCH_SWEEP_INDEX DISPATCH_SWEEP_ID DISPATCH_SWEEP_SIZE\n",
		    t->sweep->ntasks);
}

/* Plain hosts: where the command runs (after --chdir, the code's extraction, the
 * setup), for dispatch shell: STAGE/workdir, next to this script, which the
 * launcher filled with the directory it started in (lib/sched/plain/plainjob.h). */
static void boot_record_workdir(struct strbuf *sb, const struct jobscript_target *t)
{
	if (is_slurm(t))
		return;
	strbuf_adds(sb, "\n# Where the command runs, for dispatch shell.\n"
			"pwd >\"${BASH_SOURCE[0]%/*}/workdir\" 2>/dev/null || true\n");
}

/* The usage sampler (usage_sample.sh, --sample S), once per node (SLURM's local task
 * 0), beside the command in a process group of its own; its file is next to this
 * script, STAGE/usage.JOB.NODE (JOB: SLURM's job id, ARRAYID_TASK for an array's
 * task, a plain host's job id), every attempt of a run appending to it; with
 * --idle-timeout it ends a job whose GPUs stayed idle (STAGE/idle.JOB says so). */
static void boot_usage(struct strbuf *sb, const struct jobspec *spec,
		       const struct jobscript_target *t)
{
	long s = jobspec_sample_seconds(spec);
	if (s <= 0)
		return;
	strbuf_adds(sb, "\n# What the job does on this node, every --sample seconds (dispatch status\n"
			"# --usage reads it).\n");
	strbuf_adds(sb, shfile_jobs_usage_sample);
	if (is_slurm(t))
		strbuf_adds(sb, "dispatch_usage=${SLURM_ARRAY_JOB_ID:+${SLURM_ARRAY_JOB_ID}_${SLURM_ARRAY_TASK_ID:-}}\n");
	else
		strbuf_adds(sb, "dispatch_usage=\n");
	strbuf_addf(sb, "dispatch_usage=\"${BASH_SOURCE[0]%%/*}/usage.${dispatch_usage:-$DISPATCH_JOB_ID}.${SLURMD_NODENAME:-$(hostname)}\"\n"
			"if [ \"${SLURM_LOCALID:-0}\" = 0 ]; then\n"
			"\tset -m\n"
			"\t(set +euo pipefail; dispatch_sample %ld \"$dispatch_usage\" %ld %ld) </dev/null >/dev/null 2>&1 &\n"
			"\tdispatch_sampler=$!\n"
			"\tset +m\n"
			"fi\n", s, jobspec_idle_seconds(spec), spec->idle_below > 0 ? spec->idle_below : 5);
}

static char *make_bootstrap(const struct jobspec *spec, const struct jobscript_target *t)
{
	struct strbuf sb = STRBUF_INIT;
	strbuf_adds(&sb, "#!/bin/bash\n");
	header(&sb, "bootstrap.sh", spec);
	strbuf_adds(&sb, "# shellcheck disable=SC2016,SC1003 # single quotes keep $, ` and \\ literal on purpose\n");
	strbuf_adds(&sb, "# Runs once per node: started by srun inside SLURM, or directly on a plain\n"
			 "# host. May hold secrets (the job's environment): keep it mode 0700.\n");
	boot_login_shell(&sb, t->host);
	strbuf_adds(&sb, "set -euo pipefail\n");
	boot_traps(&sb);
	boot_identity(&sb, spec);
	container_inside_check(&sb, spec, t->host);
	boot_cluster_env(&sb, t);
	boot_juicefs(&sb, t);
	boot_modules(&sb, spec->modules);
	boot_env(&sb, spec);
	boot_once(&sb, spec, t);
	boot_sweep(&sb, t); /* (its parameters for the setup and the command alike) */
	if (t->sweep)
		sweep_script(&sb, t->sweep, spec->command);
	boot_run(&sb, spec, t);
	boot_workdir(&sb, spec, t);
	boot_uv(&sb, spec, t->host);
	if (spec->container_workdir && container_job_image(spec, t->host)) {
		strbuf_adds(&sb, "\n# The container's working directory.\ncd -- ");
		jobscript_quote_path(&sb, spec->container_workdir);
		strbuf_addch(&sb, '\n');
	}
	boot_setup(&sb, spec->setup);
	boot_record_workdir(&sb, t);
	boot_usage(&sb, spec, t);
	boot_stages(&sb, spec, t);
	boot_srun_guard(&sb, spec, t);
	boot_command(&sb, spec, t);
	return strbuf_detach(&sb);
}

/* A run's wrapper: its settings, then sbatch_run.sh (the stop, the requeue). */
static void sbatch_run(struct strbuf *sb, const struct jobspec *spec,
		       const struct jobscript_target *t)
{
	char events[128];
	jobspec_run_events_text(jobspec_run_restart_on(spec), events, sizeof(events));
	for (char *p = events; *p; p++)
		if (*p == ',')
			*p = ' ';
	strbuf_adds(sb, "# Starts the bootstrap once per node with srun and forwards signals to srun\n"
			"# (which passes them to every node). A run (dispatch-submit(1) RUNS): the\n"
			"# stop signal before the time limit, then a requeue while restarts remain.\n"
			"set -uo pipefail\n"
			"dispatch_run_id=");
	sh_quote(sb, t->run_id);
	strbuf_addf(sb, "\ndispatch_max_restarts=%ld\n"
			"dispatch_restart_on=' %s '\n"
			"dispatch_stop_signal=%s\n"
			"dispatch_grace=%ld\n"
			"dispatch_stage=",
		    jobspec_run_max_restarts(spec), events, jobspec_run_stop_signal(spec),
		    jobspec_run_grace(spec));
	jobscript_quote_path(sb, t->bootstrap_path);
	strbuf_adds(sb, "\ndispatch_stage=${dispatch_stage%/*}\n");
	strbuf_adds(sb, shfile_jobs_run_notify); /* run_notify.sh: dispatch_notify */
	strbuf_adds(sb, shfile_jobs_sbatch_run); /* sbatch_run.sh */
}

static char *make_sbatch(const struct jobspec *spec, const struct jobscript_target *t,
			 char *const *dirs)
{
	struct strbuf sb = STRBUF_INIT;
	strbuf_adds(&sb, "#!/bin/bash\n");
	for (size_t i = 0; dirs[i]; i++)
		strbuf_addf(&sb, "#SBATCH %s\n", dirs[i]);
	strbuf_adds(&sb, "\n");
	header(&sb, "sbatch.sh", spec);
	if (t->sweep) /* the bootstrap adds it to SLURM_ARRAY_TASK_ID (boot_sweep) */
		strbuf_adds(&sb,
			"# A sweep's job array (dispatch-submit(1) SWEEPS), with --array on sbatch's\n"
			"# command line: $1 is the sweep index of its task 0 (0 when not given).\n"
			"case ${1:-0} in\n"
			"*[!0-9]*)\n"
			"\techo \"dispatch: sbatch.sh takes the sweep index of the array task 0, not: $1\" >&2\n"
			"\texit 2\n"
			"\t;;\n"
			"esac\n"
			"export DISPATCH_SWEEP_FIRST=\"${1:-0}\"\n");
	if (t->run_id) {
		sbatch_run(&sb, spec, t);
	} else {
		strbuf_adds(&sb,
			"# Starts the bootstrap once per node with srun, forwards signals to srun (which\n"
			"# passes them to every node), and exits with the bootstrap's status.\n"
			"set -uo pipefail\n"
			"dispatch_child=\n"
			"# shellcheck disable=SC2317 # called from the traps\n"
			"dispatch_forward() {\n"
			"\tif [ -z \"$dispatch_child\" ]; then\n"
			"\t\texit \"$2\"\n"
			"\tfi\n"
			"\tkill -s \"$1\" \"$dispatch_child\" 2>/dev/null || true\n"
			"}\n");
		strbuf_adds(&sb, forward_signals);
	}
	if (launch_once(spec, t)) {
		strbuf_adds(&sb, "# --launch once: the bootstrap prepares every node (one task each), then\n"
				"# runs the command here, once, with the allocation free for its srun.\n"
				"srun --kill-on-bad-exit=1 -N \"$SLURM_JOB_NUM_NODES\" -n \"$SLURM_JOB_NUM_NODES\" "
				"--ntasks-per-node=1 bash ");
		jobscript_quote_path(&sb, t->bootstrap_path);
		strbuf_adds(&sb, " prepare || exit\nbash ");
		jobscript_quote_path(&sb, t->bootstrap_path);
		strbuf_adds(&sb, " &\ndispatch_child=$!\n");
		strbuf_adds(&sb, t->run_id ? "dispatch_run_wait\n" : wait_child);
		return strbuf_detach(&sb);
	}
	/* Since SLURM 22.05 a step does not inherit --cpus-per-task from the job: ask again. */
	strbuf_adds(&sb, "srun --kill-on-bad-exit=1");
	if (spec->cpus_per_task)
		strbuf_addf(&sb, " --cpus-per-task=%ld", spec->cpus_per_task);
	strbuf_addch(&sb, ' ');
	if (container_job_image(spec, t->host)) {
		container_command(&sb, spec, t->host, t->bootstrap_path, jobspec_total_gpus(spec) > 0);
	} else {
		strbuf_adds(&sb, "bash ");
		jobscript_quote_path(&sb, t->bootstrap_path);
	}
	strbuf_adds(&sb, " &\ndispatch_child=$!\n");
	strbuf_adds(&sb, t->run_id ? "dispatch_run_wait\n" : wait_child);
	return strbuf_detach(&sb);
}

/* A plain host's container.sh: the launcher runs it in place of the bootstrap. */
static char *make_container(const struct jobspec *spec, const struct jobscript_target *t)
{
	struct strbuf sb = STRBUF_INIT;
	strbuf_adds(&sb, "#!/bin/bash\n");
	header(&sb, "container.sh", spec);
	strbuf_addf(&sb, "# Runs bootstrap.sh in the image with %s; dispatch cancel removes the\n"
			 "# container by its name.\n"
			 "exec ", container_runtime_name(t->host->container_runtime));
	container_command(&sb, spec, t->host, t->bootstrap_path, jobspec_total_gpus(spec) > 0);
	strbuf_addch(&sb, '\n');
	return strbuf_detach(&sb);
}

/* The options a plain host cannot honour (it has no scheduler; its launcher does
 * --time and --dependency: lib/sched/plain/plainjob.h). */
static char **slurm_only(const struct jobspec *s)
{
	char **v = NULL;
	const struct {
		const char *name;
		bool set;
	} opts[] = {
		{ "partition", s->partition }, { "nodes", s->nodes > 1 }, { "ntasks", s->ntasks },
		{ "ntasks-per-node", s->ntasks_per_node }, { "cpus-per-task", s->cpus_per_task },
		{ "mem", s->mem }, { "mem-per-cpu", s->mem_per_cpu },
		{ "output", s->output }, { "error", s->error },
		{ "exclusive", s->exclusive > 0 }, { "constraint", s->constraint },
		{ "account", s->account }, { "qos", s->qos }, { "exclude", s->exclude },
		{ "array", s->array }, { "signal", s->signal }, { "requeue", s->requeue > 0 },
		{ "sbatch", s->sbatch }, { "launch", jobspec_launch_once(s) },
	};
	for (size_t i = 0; i < ARRAY_SIZE(opts); i++)
		if (opts[i].set)
			strv_add(&v, opts[i].name);
	return v;
}

int jobscript_generate(const struct jobspec *spec, const struct jobscript_target *t,
		       struct jobscript *out, struct dp_error *err)
{
	memset(out, 0, sizeof(*out));
	if (!t->host)
		return dp_err(err, DPE_INPUT, "no host to generate the job scripts for");
	if (!spec->command && !spec->stages)
		return dp_err(err, DPE_INPUT, "no command to run");
	for (size_t i = 0; i < spec->nenv; i++)
		if (!spec->env[i].value)
			return dp_err(err, DPE_INPUT, "env '%s' has no value", spec->env[i].key);
	if (is_slurm(t) && (!t->bootstrap_path || !*t->bootstrap_path))
		return dp_err(err, DPE_INPUT, "no path for the bootstrap on '%s'", t->host->name);
	if (t->payload && (t->payload_len < 2 || t->payload[0] != 0x1f || t->payload[1] != 0x8b))
		return dp_err(err, DPE_INPUT, "the payload is not a gzip tarball");
	if (container_job_check(spec, t->host, err) < 0)
		return -1;
	if (launch_once(spec, t) && container_job_image(spec, t->host))
		return dp_err(err, DPE_INPUT, "--launch once runs the command in the batch script, "
			      "outside an image: not with a container image (give --no-container, or "
			      "--launch per-node)");
	if (container_job_image(spec, t->host) && (!t->bootstrap_path || !*t->bootstrap_path))
		return dp_err(err, DPE_INPUT, "no path for the bootstrap on '%s'", t->host->name);
	out->bootstrap = make_bootstrap(spec, t);
	if (is_slurm(t)) {
		out->directives = make_directives(spec, t);
		/* An #SBATCH line ends at a newline: what follows would be a directive of
		 * its own. The inventory and the job options refuse such values already. */
		for (char **d = out->directives; *d; d++)
			for (const char *c = *d; *c; c++)
				if (iscntrl((unsigned char)*c) && *c != '\t') {
					char *name = xstrndup(*d, strcspn(*d, "="));
					dp_err(err, DPE_INPUT, "the value of #SBATCH %s holds a newline or "
					       "another control character", name);
					free(name);
					jobscript_release(out);
					return -1;
				}
		out->sbatch = make_sbatch(spec, t, out->directives);
	} else {
		out->ignored = slurm_only(spec);
		if (container_job_image(spec, t->host))
			out->container = make_container(spec, t);
	}
	return 0;
}

void jobscript_release(struct jobscript *js)
{
	free(js->sbatch);
	free(js->bootstrap);
	free(js->container);
	strv_free(js->directives);
	strv_free(js->ignored);
	memset(js, 0, sizeof(*js));
}

/* ---- files ---- */

int jobscript_write_file(const char *path, const char *content, struct dp_error *err)
{
	_cleanup_close_ int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
				      0700);
	if (fd < 0)
		return dp_err(err, DPE_FAIL, "cannot write '%s': %s", path, strerror(errno));
	if (fchmod(fd, 0700) < 0)
		return dp_err(err, DPE_FAIL, "cannot make '%s' private: %s", path, strerror(errno));
	if (write_all(fd, content, strlen(content)) < 0)
		return dp_err(err, DPE_FAIL, "cannot write '%s': %s", path, strerror(errno));
	int fd2 = fd;
	fd = -1;
	if (close(fd2) < 0)
		return dp_err(err, DPE_FAIL, "cannot write '%s': %s", path, strerror(errno));
	return 0;
}

int jobscript_emit(const struct jobscript *js, const char *dir, struct dp_error *err)
{
	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		return dp_err(err, DPE_FAIL, "cannot create '%s': %s", dir, strerror(errno));
	_cleanup_free_ char *boot = xasprintf("%s/bootstrap.sh", dir);
	if (jobscript_write_file(boot, js->bootstrap, err) < 0)
		return -1;
	if (js->sbatch) {
		_cleanup_free_ char *wrapper = xasprintf("%s/sbatch.sh", dir);
		if (jobscript_write_file(wrapper, js->sbatch, err) < 0)
			return -1;
	}
	if (js->container) {
		_cleanup_free_ char *runner = xasprintf("%s/container.sh", dir);
		if (jobscript_write_file(runner, js->container, err) < 0)
			return -1;
	}
	return 0;
}
