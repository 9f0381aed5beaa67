/* SPDX-License-Identifier: MIT */
/*
 * dispatch submit: a job from options and/or a job file, to a host named with -H or
 * chosen by the solver. For now only --dry-run: print (or --emit) the sbatch wrapper
 * and the bootstrap it would submit. Generation is lib/jobscript.c; this file parses,
 * picks the host and prints.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <time.h>

#include "chips.h"
#include "dispatch.h"
#include "inventory.h"
#include "jobscript.h"
#include "jobspec.h"
#include "solver.h"
#include "strbuf.h"

enum {
	OPT_HOST = 1,
	OPT_SOLVE,
	OPT_CHECK,
	OPT_FILE,
	OPT_DRY_RUN,
	OPT_EMIT,
	OPT_PAYLOAD,
	OPT_JOB, /* from here on, the long name is the job option's name */
};

static const struct dp_option submit_options[] = {
	{ OPT_HOST, 'H', "host", "HOST", "the inventory host (or ssh alias of a SLURM login) to submit to", "host" },
	{ OPT_SOLVE, 0, "solve", NULL, "let the solver pick the host from the inventory", NULL },
	{ OPT_CHECK, 0, "check", NULL, "with --solve: pick among hosts with the GPUs free now (asks them)", NULL },
	{ OPT_FILE, 'f', "file", "FILE", "read job options from a job YAML file (the command line wins)", "file" },
	{ OPT_DRY_RUN, 0, "dry-run", NULL, "print the scripts instead of submitting", NULL },
	{ OPT_EMIT, 0, "emit", "DIR", "with --dry-run: write DIR/sbatch.sh and DIR/bootstrap.sh (mode 0700)", "dir" },
	{ OPT_PAYLOAD, 0, "payload", "FILE", "pack a gzip tarball into the bootstrap, extracted on every node", "file" },
	{ OPT_JOB + 0, 'J', "job-name", "NAME", "job name", NULL },
	{ OPT_JOB + 1, 'p', "partition", "PARTITION", "partition (default: the host's default partition)", NULL },
	{ OPT_JOB + 2, 'N', "nodes", "N", "number of nodes; the bootstrap runs once on each", NULL },
	{ OPT_JOB + 3, 'n', "ntasks", "N", "number of tasks (default: one per node)", NULL },
	{ OPT_JOB + 4, 0, "ntasks-per-node", "N", "tasks per node (default 1)", NULL },
	{ OPT_JOB + 5, 'c', "cpus-per-task", "N", "CPUs per task", NULL },
	{ OPT_JOB + 6, 0, "mem", "SIZE", "memory per node: MB, or with K, M, G, T (default: the host's mem)", NULL },
	{ OPT_JOB + 7, 0, "mem-per-cpu", "SIZE", "memory per CPU", NULL },
	{ OPT_JOB + 8, 't', "time", "TIME", "time limit: MIN, MM:SS, HH:MM:SS, D-HH[:MM[:SS]], UNLIMITED", NULL },
	{ OPT_JOB + 9, 'o', "output", "PATH", "stdout file (default: the cluster's log dir, %x-%j.out)", NULL },
	{ OPT_JOB + 10, 'e', "error", "PATH", "stderr file (default: with stdout)", NULL },
	{ OPT_JOB + 11, 'D', "chdir", "DIR", "working directory ($VAR and ~ expand)", NULL },
	{ OPT_JOB + 12, 'd', "dependency", "DEP", "sbatch dependency: afterok:ID[:ID...], singleton, ...", NULL },
	{ OPT_JOB + 13, 0, "exclusive", NULL, "whole nodes only", NULL },
	{ OPT_JOB + 14, 'C', "constraint", "FEATURES", "node features (default: the partition's constraint)", NULL },
	{ OPT_JOB + 15, 'A', "account", "ACCOUNT", "account to charge (default: the host's)", NULL },
	{ OPT_JOB + 16, 0, "qos", "QOS", "quality of service (default: the host's)", NULL },
	{ OPT_JOB + 17, 'x', "exclude", "NODES", "nodes to avoid, added to the host's (repeatable)", NULL },
	{ OPT_JOB + 18, 'a', "array", "INDEXES", "job array: 0-15, 1,3,5-7, 0-15:4, with %N to throttle", NULL },
	{ OPT_JOB + 19, 0, "signal", "[B:]SIG[@SECS]", "signal before the time limit (B: the batch shell, forwarded)", NULL },
	{ OPT_JOB + 20, 0, "requeue", NULL, "let SLURM requeue the job", NULL },
	{ OPT_JOB + 21, 0, "gpus", "N", "GPUs in total", NULL },
	{ OPT_JOB + 22, 0, "gpus-per-node", "N", "GPUs on each node", NULL },
	{ OPT_JOB + 23, 0, "chip", "NAME", "GPU model from the chip catalogue (GRES type from gres_mapping)", NULL },
	{ OPT_JOB + 24, 0, "env", "K[=V]", "set K in the job; K alone takes the local value (repeatable)", NULL },
	{ OPT_JOB + 25, 0, "module", "MODULE", "module load MODULE before the command (repeatable)", NULL },
	{ OPT_JOB + 26, 0, "uv-group", "GROUP", "uv sync --group GROUP, with the host's groups (repeatable)", NULL },
	{ OPT_JOB + 27, 0, "setup", "CMD", "shell command to run before the command (repeatable)", NULL },
	{ OPT_JOB + 28, 0, "sbatch", "DIRECTIVE", "raw sbatch option, e.g. '--mail-type=END' (repeatable)", NULL },
	{ OPT_JOB + 29, 0, "extract-to", "DIR", "where the payload goes (default $SLURM_TMPDIR/code, else a temp dir)", "dir" },
	{ 0 },
};

struct submit {
	const char *host_name, *file, *emit, *payload_path;
	bool solve, dry_run, check;
	void *live;                     /* --check's answers; solved points into them */
	struct jobspec spec;
	struct inv_host adhoc;          /* -H for a host the inventory does not name */
	const struct inv_host *host;
	const char *gres_type, *partition;
	struct solve_result solved;
	unsigned char *payload;
	size_t payload_len;
};

static int collect(struct dp_ctx *ctx, const struct dp_args *args, struct submit *s)
{
	struct jobspec cli = { 0 };
	struct dp_error err = { 0 };
	int r = 0;

	for (size_t i = 0; i < args->nopts && r == 0; i++) {
		const struct dp_optval *o = &args->opts[i];
		switch (o->id) {
		case OPT_HOST:
			s->host_name = o->arg;
			break;
		case OPT_SOLVE:
			s->solve = true;
			break;
		case OPT_CHECK:
			s->check = true;
			break;
		case OPT_FILE:
			s->file = o->arg;
			break;
		case OPT_DRY_RUN:
			s->dry_run = true;
			break;
		case OPT_EMIT:
			s->emit = o->arg;
			break;
		case OPT_PAYLOAD:
			s->payload_path = o->arg;
			break;
		default: {
			const char *name = options_spelling(submit_options, o->id) + 2;
			if (jobspec_set(&cli, name, o->arg, NULL, &err) < 0)
				r = report_error(&err);
		}
		}
	}
	if (r == 0 && args->npos > 0)
		jobspec_set_command_argv(&cli, args->pos, (size_t)args->npos);
	if (r == 0 && s->file && jobspec_load_file(&s->spec, s->file, &err) < 0) {
		if (err.kind == DPE_NOTFOUND)
			err.kind = DPE_INPUT;
		r = report_error(&err);
	}
	if (r == 0) {
		jobspec_merge(&s->spec, &cli);
		if (jobspec_validate(&s->spec, &err) < 0)
			r = report_error(&err);
	}
	jobspec_release(&cli);
	if (r)
		return r;
	if (s->host_name && s->solve)
		return usage_error(ctx, "-H and --solve exclude each other: name the host, or let the "
				   "solver pick one");
	if (s->check && !s->solve)
		return usage_error(ctx, "--check goes with --solve");
	if (!s->host_name && !s->solve)
		return usage_error(ctx, "submit needs a host: give -H HOST, or --solve to pick one "
				   "from the inventory");
	if (s->host_name && strpbrk(s->host_name, ",["))
		return usage_error(ctx, "submit takes one host, not the list '%s'", s->host_name);
	if (s->emit && !s->dry_run)
		return usage_error(ctx, "--emit writes the scripts of a dry run: add --dry-run");
	return 0;
}

static int check_chip(const char *chip)
{
	if (!chip || chip_find(chip))
		return 0;
	const char *names[64];
	size_t n = 0;
	for (size_t i = 0; i < chip_catalogue_len && n < ARRAY_SIZE(names); i++)
		names[n++] = chip_catalogue[i].name;
	const char *guess = suggest_word(chip, names, n);
	if (guess)
		error_msg("unknown chip '%s' (did you mean '%s'?)", chip, guess);
	else
		error_msg("unknown chip '%s'; 'dispatch solve -h' and dispatch-solve(1) list the "
			  "catalogue", chip);
	return DPE_INPUT;
}

static int pick_host(struct dp_ctx *ctx, struct submit *s)
{
	struct dp_error err = { 0 };
	if (s->solve) {
		if (!ctx->inv) {
			error_msg("--solve needs an inventory: give -i FILE or set DISPATCH_INVENTORY");
			return DPE_INPUT;
		}
		struct solve_request req = { .chip = s->spec.chip,
					     .chips = (int)jobspec_total_gpus(&s->spec) };
		if (s->check) {
			req.check = true;
			int r = solve_checked(ctx, &req, &s->solved, &s->live);
			if (r)
				return r;
		} else if (solve(ctx->inv, &req, &s->solved, &err) < 0) {
			return report_error(&err);
		}
		for (size_t i = 0; i < s->solved.nverdicts; i++)
			info_msg(ctx, "solve: %s: %s", s->solved.verdicts[i].host->name,
				 s->solved.verdicts[i].reason ? s->solved.verdicts[i].reason : "");
		if (!s->solved.host) {
			error_msg("no host in the inventory fits %d %s GPU%s (-v says why)", req.chips,
				  req.chip ? req.chip : "", req.chips == 1 ? "" : "s");
			return DPE_FAIL;
		}
		s->host = s->solved.host;
		s->partition = s->solved.partition;
		s->gres_type = s->solved.gres_type;
		if (!s->gres_type && s->spec.chip)
			s->gres_type = inventory_gres_type(ctx->inv, s->spec.chip);
		return 0;
	}
	s->host = ctx->inv ? inventory_host(ctx->inv, s->host_name) : NULL;
	if (s->host) {
		if (s->spec.chip)
			s->gres_type = inventory_gres_type(ctx->inv, s->spec.chip);
		return 0;
	}
	/* Not an inventory host: an ssh alias of a SLURM login, with no defaults. */
	s->adhoc.name = (char *)s->host_name;
	s->adhoc.ssh = (char *)s->host_name;
	s->adhoc.type = INV_HOST_SLURM;
	s->host = &s->adhoc;
	info_msg(ctx, "'%s' is not in the inventory: taking it for a SLURM login with no defaults",
		 s->host_name);
	return 0;
}

static int read_payload(struct submit *s)
{
	if (!s->payload_path)
		return 0;
	char *buf = read_file(s->payload_path, &s->payload_len);
	if (!buf) {
		error_msg("cannot read payload '%s': %s", s->payload_path, strerror(errno));
		return DPE_INPUT;
	}
	s->payload = (unsigned char *)buf;
	return 0;
}

static void print_text(const struct jobscript *js)
{
	if (js->sbatch)
		printf("==> sbatch.sh <==\n%s\n", js->sbatch);
	printf("==> bootstrap.sh <==\n%s", js->bootstrap);
}

static cJSON *strv_json(char *const *v)
{
	cJSON *arr = cJSON_CreateArray();
	for (size_t i = 0; v && v[i]; i++)
		cJSON_AddItemToArray(arr, cJSON_CreateString(v[i]));
	return arr;
}

static void print_json(const struct submit *s, const struct jobscript *js, const char *boot_path)
{
	cJSON *doc = cJSON_CreateObject();
	cJSON_AddStringToObject(doc, "host", s->host->name);
	cJSON_AddStringToObject(doc, "type", inv_host_type_name(s->host->type));
	if (js->sbatch) {
		cJSON_AddStringToObject(doc, "bootstrap_path", boot_path);
		cJSON_AddStringToObject(doc, "sbatch_script", js->sbatch);
	} else {
		cJSON_AddNullToObject(doc, "bootstrap_path");
		cJSON_AddNullToObject(doc, "sbatch_script");
	}
	cJSON_AddStringToObject(doc, "bootstrap_script", js->bootstrap);
	cJSON_AddItemToObject(doc, "directives", strv_json(js->directives));
	cJSON_AddItemToObject(doc, "ignored", strv_json(js->ignored));
	if (s->emit) {
		cJSON *files = cJSON_AddArrayToObject(doc, "emitted");
		char *p;
		if (js->sbatch) {
			p = xasprintf("%s/sbatch.sh", s->emit);
			cJSON_AddItemToArray(files, cJSON_CreateString(p));
			free(p);
		}
		p = xasprintf("%s/bootstrap.sh", s->emit);
		cJSON_AddItemToArray(files, cJSON_CreateString(p));
		free(p);
	}
	json_print(doc);
}

static int generate(struct dp_ctx *ctx, struct submit *s)
{
	struct dp_error err = { 0 };
	_cleanup_free_ char *share = jobscript_share_dir(s->host);
	_cleanup_free_ char *stage = jobscript_stage_name(s->spec.job_name, time(NULL),
							  (unsigned long)getpid());
	_cleanup_free_ char *boot_path = xasprintf("%s/%s/bootstrap.sh", share, stage);
	struct jobscript_target t = {
		.host = s->host,
		.gres_type = s->gres_type,
		.partition = s->partition,
		.bootstrap_path = boot_path,
		.payload = s->payload,
		.payload_len = s->payload_len,
	};
	_cleanup_jobscript_ struct jobscript js = { 0 };
	if (jobscript_generate(&s->spec, &t, &js, &err) < 0)
		return report_error(&err);
	if (js.ignored) {
		struct strbuf sb = STRBUF_INIT;
		for (size_t i = 0; js.ignored[i]; i++)
			strbuf_addf(&sb, "%s--%s", i ? ", " : "", js.ignored[i]);
		warning_msg("'%s' is a plain host (no scheduler): ignoring %s", s->host->name, sb.buf);
		strbuf_release(&sb);
	}
	if (!s->dry_run) {
		error_msg("cannot submit yet: submission over SSH is not built; use --dry-run to see "
			  "the scripts (--emit DIR to write them)");
		return DPE_INPUT;
	}
	info_msg(ctx, "host '%s' (%s); the bootstrap would go to %s", s->host->name,
		 inv_host_type_name(s->host->type), js.sbatch ? boot_path : "(run directly)");
	if (s->emit && jobscript_emit(&js, s->emit, &err) < 0)
		return report_error(&err);
	if (ctx->json)
		print_json(s, &js, boot_path);
	else if (s->emit) {
		if (js.sbatch)
			printf("%s/sbatch.sh\n", s->emit);
		printf("%s/bootstrap.sh\n", s->emit);
	} else
		print_text(&js);
	return 0;
}

static int cmd_submit(struct dp_ctx *ctx, const struct dp_args *args)
{
	struct submit s = { 0 };
	int r = collect(ctx, args, &s);
	if (r == 0)
		r = check_chip(s.spec.chip);
	if (r == 0)
		r = pick_host(ctx, &s);
	if (r == 0)
		r = read_payload(&s);
	if (r == 0)
		r = generate(ctx, &s);
	solve_result_release(&s.solved);
	solve_checked_free(s.live);
	jobspec_release(&s.spec);
	free(s.payload);
	return r;
}

const struct dispatch_cmd dispatch_cmd_submit = {
	.name = "submit",
	.summary = "submit a job to a SLURM cluster or a plain host",
	.usage = "[-H HOST | --solve [--check]] [JOB OPTIONS] [-f JOB.yaml] [--dry-run [--emit DIR]] -- COMMAND...",
	.description =
		"Builds the job's scripts: an sbatch wrapper with the #SBATCH directives that\n"
		"runs bootstrap.sh once per node with srun, and the bootstrap itself (modules,\n"
		"environment, payload, uv sync, setup, then the command). Job options follow\n"
		"sbatch; a job YAML file uses the same names. For now only --dry-run works.",
	.opts = submit_options,
	.min_args = 0,
	.max_args = -1,
	.flags = CMD_WANTS_INVENTORY | CMD_POSIX_ORDER,
	.fn = cmd_submit,
};
