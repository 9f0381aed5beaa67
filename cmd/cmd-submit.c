/* SPDX-License-Identifier: MIT */
/*
 * dispatch submit: a job from options and/or a job file, to a host named with -H or
 * chosen by the solver. Generation is lib/slurm/jobscript.c; this file parses, picks the
 * host, and submits over one SSH connection:
 *
 *   1. a shell command makes the share, stage, work and log dirs (umask 077) and
 *      prints their absolute paths;
 *   2. SFTP writes the scripts into the stage dir, created with mode 0700 (and the
 *      packed code into {share}/code/ when it is large and not there yet);
 *   3. the job ledger records the intent with a fresh token;
 *   4. SLURM: sbatch --parsable --comment=TOKEN; a plain host: the bootstrap starts
 *      detached (lib/slurm/plainjob.h).
 *
 * When the connection breaks during step 4, dispatch connects once more and looks the
 * token up (the stage dir's record of sbatch's answer, then squeue and sacct) rather
 * than submit again: a job is never submitted twice.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <git2.h>
#include <limits.h>
#include <stdlib.h>
#include <stdio.h>
#include <time.h>

#include "inventory/chips.h"
#include "dispatch.h"
#include "inventory/inventory.h"
#include "slurm/jobscript.h"
#include "inventory/jobspec.h"
#include "ledger.h"
#include "slurm/plainjob.h"
#include "base/shquote.h"
#include "slurm/slurm.h"
#include "code/snapshot.h"
#include "solver.h"
#include "transport/ssh.h"
#include "base/strbuf.h"
#include "transport/upload.h"

/* Packed code up to this size goes inside bootstrap.sh; larger code is uploaded once
 * to {share}/code/SHA256.tar.gz and every job extracts it from there. */
#define EMBED_MAX (1024 * 1024)

enum {
	OPT_HOST = 1,
	OPT_SOLVE,
	OPT_CHECK,
	OPT_FILE,
	OPT_DRY_RUN,
	OPT_EMIT,
	OPT_PAYLOAD,
	OPT_REPO,
	OPT_REF,
	OPT_DIRTY,
	OPT_JOB = 100, /* from here on, the long name is the job option's name */
};

/* The options submit and submit-packed share. */
#define SUBMIT_OPTIONS \
	{ OPT_HOST, 'H', "host", "HOST", "the inventory host (or ssh alias of a SLURM login) to submit to", "host" }, \
	{ OPT_SOLVE, 0, "solve", NULL, "let the solver pick the host from the inventory", NULL }, \
	{ OPT_CHECK, 0, "check", NULL, "with --solve: pick among hosts with the GPUs free now (asks them)", NULL }, \
	{ OPT_FILE, 'f', "file", "FILE", "read job options from a job YAML file (the command line wins)", "file" }, \
	{ OPT_DRY_RUN, 0, "dry-run", NULL, "print the scripts instead of submitting", NULL }, \
	{ OPT_EMIT, 0, "emit", "DIR", "with --dry-run: write DIR/sbatch.sh and DIR/bootstrap.sh (mode 0700)", "dir" }, \
	{ OPT_JOB + 0, 'J', "job-name", "NAME", "job name", NULL }, \
	{ OPT_JOB + 1, 'p', "partition", "PARTITION", "partition (default: the host's default partition)", NULL }, \
	{ OPT_JOB + 2, 'N', "nodes", "N", "number of nodes; the bootstrap runs once on each", NULL }, \
	{ OPT_JOB + 3, 'n', "ntasks", "N", "number of tasks (default: one per node)", NULL }, \
	{ OPT_JOB + 4, 0, "ntasks-per-node", "N", "tasks per node (default 1)", NULL }, \
	{ OPT_JOB + 5, 'c', "cpus-per-task", "N", "CPUs per task", NULL }, \
	{ OPT_JOB + 6, 0, "mem", "SIZE", "memory per node: MB, or with K, M, G, T (default: the host's mem)", NULL }, \
	{ OPT_JOB + 7, 0, "mem-per-cpu", "SIZE", "memory per CPU", NULL }, \
	{ OPT_JOB + 8, 't', "time", "TIME", "time limit: MIN, MM:SS, HH:MM:SS, D-HH[:MM[:SS]], UNLIMITED", NULL }, \
	{ OPT_JOB + 9, 'o', "output", "PATH", "stdout file (default: the cluster's log dir, %x-%j.out)", NULL }, \
	{ OPT_JOB + 10, 'e', "error", "PATH", "stderr file (default: with stdout)", NULL }, \
	{ OPT_JOB + 11, 'D', "chdir", "DIR", "working directory ($VAR and ~ expand)", NULL }, \
	{ OPT_JOB + 12, 'd', "dependency", "DEP", "sbatch dependency: afterok:ID[:ID...], singleton, ...", NULL }, \
	{ OPT_JOB + 13, 0, "exclusive", NULL, "whole nodes only", NULL }, \
	{ OPT_JOB + 14, 'C', "constraint", "FEATURES", "node features (default: the partition's constraint)", NULL }, \
	{ OPT_JOB + 15, 'A', "account", "ACCOUNT", "account to charge (default: the host's)", NULL }, \
	{ OPT_JOB + 16, 0, "qos", "QOS", "quality of service (default: the host's)", NULL }, \
	{ OPT_JOB + 17, 'x', "exclude", "NODES", "nodes to avoid, added to the host's (repeatable)", NULL }, \
	{ OPT_JOB + 18, 'a', "array", "INDEXES", "job array: 0-15, 1,3,5-7, 0-15:4, with %N to throttle", NULL }, \
	{ OPT_JOB + 19, 0, "signal", "[B:]SIG[@SECS]", "signal before the time limit (B: the batch shell, forwarded)", NULL }, \
	{ OPT_JOB + 20, 0, "requeue", NULL, "let SLURM requeue the job", NULL }, \
	{ OPT_JOB + 21, 0, "gpus", "N", "GPUs in total", NULL }, \
	{ OPT_JOB + 22, 0, "gpus-per-node", "N", "GPUs on each node", NULL }, \
	{ OPT_JOB + 23, 0, "chip", "NAME", "GPU model from the chip catalogue (GRES type from gres_mapping)", NULL }, \
	{ OPT_JOB + 24, 0, "env", "K[=V]", "set K in the job; K alone takes the local value (repeatable)", NULL }, \
	{ OPT_JOB + 25, 0, "module", "MODULE", "module load MODULE before the command (repeatable)", NULL }, \
	{ OPT_JOB + 26, 0, "uv-group", "GROUP", "uv sync --group GROUP, with the host's groups (repeatable)", NULL }, \
	{ OPT_JOB + 27, 0, "setup", "CMD", "shell command to run before the command (repeatable)", NULL }, \
	{ OPT_JOB + 28, 0, "sbatch", "DIRECTIVE", "raw sbatch option, e.g. '--mail-type=END' (repeatable)", NULL }, \
	{ OPT_JOB + 29, 0, "extract-to", "DIR", "where the payload goes (default $SLURM_TMPDIR/code, else a temp dir)", "dir" },

static const struct dp_option submit_options[] = {
	SUBMIT_OPTIONS
	{ OPT_PAYLOAD, 0, "payload", "FILE", "pack a gzip tarball into the bootstrap, extracted on every node", "file" },
	{ 0 },
};

static const struct dp_option packed_options[] = {
	SUBMIT_OPTIONS
	{ OPT_REPO, 0, "repo", "DIR", "the repository, or a directory in it where the command runs (default .)", "dir" },
	{ OPT_REF, 0, "ref", "REF", "the files of commit, tag or branch REF, as git archive (default HEAD)", NULL },
	{ OPT_DIRTY, 0, "dirty", NULL, "the work tree as it is now: edits and untracked files, not ignored ones", NULL },
	{ 0 },
};

struct submit {
	const char *host_name, *file, *emit, *payload_path;
	bool solve, dry_run, check;
	void *live;                     /* --check's answers; solved points into them */
	bool packed;                    /* submit-packed: --repo, --ref, --dirty */
	const char *repo, *ref;
	bool want_dirty;
	char *subdir;                   /* --repo below the top of its work tree: the path */
	struct snapshot_info snap;
	struct jobspec spec;
	struct inv_host adhoc;          /* -H for a host the inventory does not name */
	const struct inv_host *host;
	const char *gres_type, *partition;
	struct solve_result solved;
	unsigned char *payload;
	size_t payload_len;
	const char *payload_key;        /* sha256 of the payload (packed jobs), or NULL */
	const char *commit;             /* packed jobs: the snapshot's commit, or NULL */
	bool dirty;
	char *token, *stage;            /* this submission's token and stage dir name */
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
		case OPT_REPO:
			s->repo = o->arg;
			break;
		case OPT_REF:
			s->ref = o->arg;
			break;
		case OPT_DIRTY:
			s->want_dirty = true;
			break;
		default: {
			const char *name = options_spelling(ctx->cmd->opts, o->id) + 2;
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
	if (s->ref && s->want_dirty)
		return usage_error(ctx, "--ref and --dirty exclude each other: a commit's files, or the "
				   "work tree as it is");
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
		if (s->spec.chip && !s->gres_type && s->host->type == INV_HOST_SLURM)
			warning_msg("the inventory's gres_mapping has no entry for chip '%s': asking "
				    "'%s' for GRES type '%s' (map it under gres_mapping if the cluster "
				    "names it otherwise)", s->spec.chip, s->host->name, s->spec.chip);
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

/* ---- submit-packed: the code goes with the job ---- */

/* The path of dir below the top of its work tree ("" at the top), or NULL when dir
 * is not in one (snapshot_create reports that). */
static char *repo_subdir(const char *dir)
{
	git_repository *repo = NULL;
	char *sub = NULL;
	if (git_repository_open_ext(&repo, dir, 0, NULL) != 0)
		return NULL;
	const char *top = git_repository_workdir(repo);
	char rtop[PATH_MAX], rdir[PATH_MAX];
	if (top && realpath(top, rtop) && realpath(dir, rdir)) {
		size_t n = strlen(rtop);
		if (strncmp(rdir, rtop, n) == 0 && (rdir[n] == '/' || rdir[n] == '\0'))
			sub = xstrdup(rdir[n] ? rdir + n + 1 : "");
	}
	git_repository_free(repo);
	return sub;
}

static int make_snapshot(struct dp_ctx *ctx, struct submit *s)
{
	struct dp_error err = { 0 };
	_cleanup_strbuf_ struct strbuf buf = STRBUF_INIT;
	struct snapshot_opts so = {
		.repo = s->repo,
		.mode = s->want_dirty ? SNAPSHOT_DIRTY : SNAPSHOT_REF,
		.ref = s->ref,
		.want_sha256 = true,
		.write = snapshot_write_strbuf,
		.write_arg = &buf,
	};
	git_libgit2_init();
	s->subdir = repo_subdir(s->repo ? s->repo : ".");
	git_libgit2_shutdown();
	if (snapshot_create(&so, &s->snap, &err) < 0)
		return report_error(&err);
	if (so.mode == SNAPSHOT_DIRTY && ctx->verbosity >= 0) {
		char line[128];
		snapshot_summary(&s->snap, line, sizeof(line));
		fprintf(stderr, "dispatch: snapshot of the work tree: %s\n", line);
	}
	info_msg(ctx, "snapshot: %llu files, %llu bytes gzipped, commit %s, sha256 %s",
		 (unsigned long long)s->snap.files, (unsigned long long)s->snap.bytes,
		 s->snap.commit[0] ? s->snap.commit : "(none)", s->snap.sha256);
	s->payload_len = buf.len;
	s->payload = (unsigned char *)strbuf_detach(&buf);
	s->payload_key = s->snap.sha256;
	s->commit = s->snap.commit[0] ? s->snap.commit : NULL;
	s->dirty = so.mode == SNAPSHOT_DIRTY;
	return 0;
}

/* ---- submitting ---- */

/* The absolute paths on the host, as its shell resolved them. */
struct remote_dirs {
	char *share, *stage, *work, *log;
};

static void remote_dirs_release(struct remote_dirs *d)
{
	free(d->share);
	free(d->stage);
	free(d->work);
	free(d->log);
}

static char *cluster_work(const struct inv_host *h)
{
	return xstrdup(h->cluster && h->cluster->work ? h->cluster->work : "~");
}

static char *cluster_log(const struct inv_host *h)
{
	if (h->cluster && (h->cluster->log || h->cluster->work))
		return jobscript_log_dir(h->cluster);
	return xstrdup("~/.dispatch/logs");
}

static void print_dir(struct strbuf *sb, const char *mark, const char *path)
{
	strbuf_adds(sb, "cd -- ");
	jobscript_quote_path(sb, path);
	strbuf_addf(sb, " || exit 1\nprintf 'dispatch-%s %%s\\n' \"$PWD\"\n", mark);
}

static void prepare_command(struct strbuf *sb, const struct submit *s)
{
	_cleanup_free_ char *share = jobscript_share_dir(s->host);
	_cleanup_free_ char *stage = xasprintf("%s/%s", share, s->stage);
	_cleanup_free_ char *code = xasprintf("%s/code", share);
	_cleanup_free_ char *work = cluster_work(s->host);
	_cleanup_free_ char *log = cluster_log(s->host);
	strbuf_adds(sb, "umask 077\nmkdir -p -- ");
	jobscript_quote_path(sb, stage);
	strbuf_addch(sb, ' ');
	jobscript_quote_path(sb, code);
	strbuf_addch(sb, ' ');
	jobscript_quote_path(sb, work);
	strbuf_addch(sb, ' ');
	jobscript_quote_path(sb, log);
	strbuf_adds(sb, " || exit 1\n");
	print_dir(sb, "share", share);
	print_dir(sb, "stage", stage);
	print_dir(sb, "work", work);
	print_dir(sb, "log", log);
}

static char *marked(const char *out, const char *mark)
{
	_cleanup_free_ char *prefix = xasprintf("dispatch-%s ", mark);
	char *found = NULL;
	for (const char *p = out; p && *p;) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		if (len > strlen(prefix) && strncmp(p, prefix, strlen(prefix)) == 0) {
			free(found);
			found = xstrndup(p + strlen(prefix), len - strlen(prefix));
		}
		p = nl ? nl + 1 : NULL;
	}
	return found;
}

/* Runs a command; a non-zero exit shows its stderr and fails. */
static int run_step(struct ssh_session *ss, const char *what, const char *command,
		    struct strbuf *out, struct dp_error *err)
{
	_cleanup_strbuf_ struct strbuf errout = STRBUF_INIT;
	int status;
	if (ssh_exec_capture(ss, command, NULL, out, &errout, &status, err) < 0)
		return -1;
	if (status != 0) {
		fputs(errout.buf, stderr);
		return dp_err(err, DPE_FAIL, "cannot %s on '%s' (exit status %d)", what,
			      ssh_session_name(ss), status);
	}
	return 0;
}

static int prepare_dirs(struct ssh_session *ss, const struct submit *s, struct remote_dirs *d,
			struct dp_error *err)
{
	_cleanup_strbuf_ struct strbuf cmd = STRBUF_INIT, out = STRBUF_INIT;
	prepare_command(&cmd, s);
	if (run_step(ss, "create the job's directories", cmd.buf, &out, err) < 0)
		return -1;
	d->share = marked(out.buf, "share");
	d->stage = marked(out.buf, "stage");
	d->work = marked(out.buf, "work");
	d->log = marked(out.buf, "log");
	if (!d->share || !d->stage || !d->work || !d->log)
		return dp_err(err, DPE_FAIL, "cannot create the job's directories on '%s': the shell "
			      "did not print their paths", ssh_session_name(ss));
	return 0;
}

/* The packed code, once per content: {share}/code/SHA256.tar.gz, written under a
 * temporary name and renamed, so that a job never sees half of it. */
static int upload_code(struct upload *u, const struct submit *s, const struct remote_dirs *d,
		       struct dp_ctx *ctx, struct dp_error *err)
{
	_cleanup_free_ char *path = xasprintf("%s/code/%s.tar.gz", d->share, s->payload_key);
	uint64_t size = 0;
	int r = upload_stat(u, path, &size, err);
	if (r < 0)
		return -1;
	if (r == 1 && size == s->payload_len) {
		info_msg(ctx, "the code is on the host already: %s", path);
		return 0;
	}
	_cleanup_free_ char *part = xasprintf("%s.%s.part", path, s->token);
	if (upload_new_file(u, part, s->payload, s->payload_len, 0600, err) < 0)
		return -1;
	if (r == 1) /* a different size under this hash: a broken earlier upload */
		upload_remove(u, path, NULL);
	r = upload_rename(u, part, path, err);
	if (r == 1) /* another submission was first */
		upload_remove(u, part, NULL);
	if (r < 0)
		return -1;
	info_msg(ctx, "uploaded the code (%zu bytes): %s", s->payload_len, path);
	return 0;
}

static int upload_scripts(struct ssh_session *ss, const struct submit *s, const struct jobscript *js,
			  const struct remote_dirs *d, struct dp_ctx *ctx, struct dp_error *err)
{
	_cleanup_upload_ struct upload *u = NULL;
	if (upload_open(ss, &u, err) < 0)
		return -1;
	_cleanup_free_ char *boot = xasprintf("%s/bootstrap.sh", d->stage);
	if (upload_new_file(u, boot, js->bootstrap, strlen(js->bootstrap), 0700, err) < 0)
		return -1;
	if (js->sbatch) {
		_cleanup_free_ char *wrapper = xasprintf("%s/sbatch.sh", d->stage);
		if (upload_new_file(u, wrapper, js->sbatch, strlen(js->sbatch), 0700, err) < 0)
			return -1;
	}
	if (s->payload && s->payload_key && s->payload_len > EMBED_MAX)
		return upload_code(u, s, d, ctx, err);
	return 0;
}

/* %x and %j of an --output pattern, as far as they are known here. */
static char *log_path_for(const struct submit *s, const struct remote_dirs *d, const char *id)
{
	if (s->host->type != INV_HOST_SLURM)
		return xasprintf("%s/%s.out", d->log, s->stage);
	const char *pattern = s->spec.output;
	_cleanup_free_ char *def = NULL;
	if (!pattern) {
		bool has_dir = s->host->cluster && (s->host->cluster->log || s->host->cluster->work);
		def = has_dir ? xasprintf("%s/%s", d->log, s->spec.array ? "%x-%A_%a.out" : "%x-%j.out")
			      : xasprintf("%s/%s", d->work, s->spec.array ? "slurm-%A_%a.out"
									  : "slurm-%j.out");
		pattern = def;
	}
	struct strbuf sb = STRBUF_INIT;
	for (const char *p = pattern; *p; p++) {
		if (p[0] == '%' && (p[1] == 'j' || p[1] == 'A') && id) {
			strbuf_adds(&sb, id);
			p++;
		} else if (p[0] == '%' && p[1] == 'x') {
			strbuf_adds(&sb, s->spec.job_name ? s->spec.job_name : "dispatch");
			p++;
		} else {
			strbuf_addch(&sb, *p);
		}
	}
	return strbuf_detach(&sb);
}

struct outcome {
	char *job_id;
	long pid;
	bool recovered;         /* found by its token after the connection broke */
	bool refused;           /* sbatch (or the start) failed: certainly nothing runs */
};

static void outcome_release(struct outcome *o)
{
	free(o->job_id);
}

/* After the connection broke while sbatch may have run: once more, look the token up. */
static int recover_slurm(struct dp_ctx *ctx, const struct submit *s, const struct remote_dirs *d,
			 const struct dp_error *lost, struct outcome *o, struct dp_error *err)
{
	struct ssh_ctx sc;
	cmd_ssh_ctx(ctx, &sc);
	_cleanup_ssh_session_ struct ssh_session *ss = NULL;
	warning_msg("%s; connecting again to look for the job by its token", lost->msg);
	if (ssh_session_open(&sc, s->host->ssh ? s->host->ssh : s->host->name, &ss, err) < 0)
		return -1;
	_cleanup_strbuf_ struct strbuf cmd = STRBUF_INIT, out = STRBUF_INIT;
	slurm_lookup_command(&cmd, d->stage, s->token);
	int status;
	if (ssh_exec_capture(ss, cmd.buf, NULL, &out, NULL, &status, err) < 0)
		return -1;
	struct slurm_lookup lk = SLURM_LOOKUP_INIT;
	slurm_parse_lookup(out.buf, s->token, &lk);
	int r = 0;
	if (lk.sbatch_status > 0) {
		fputs(lk.err.buf, stderr);
		r = dp_err(err, DPE_FAIL, "sbatch on '%s' refused the job (exit status %d)",
			   s->host->name, lk.sbatch_status);
		o->refused = true;
	} else if (lk.job_id) {
		o->job_id = lk.job_id;
		lk.job_id = NULL;
		o->recovered = true;
	} else {
		r = dp_err(err, DPE_FAIL, "no job on '%s' carries this submission's token %s (yet)",
			   s->host->name, s->token);
	}
	slurm_lookup_release(&lk);
	return r;
}

static int run_sbatch(struct dp_ctx *ctx, struct ssh_session *ss, const struct submit *s,
		      const struct remote_dirs *d, struct outcome *o, struct dp_error *err)
{
	_cleanup_strbuf_ struct strbuf cmd = STRBUF_INIT, out = STRBUF_INIT, errout = STRBUF_INIT;
	struct dp_error lost = { 0 };
	int status;
	slurm_submit_command(&cmd, d->work, d->stage, s->token);
	if (ssh_exec_capture(ss, cmd.buf, NULL, &out, &errout, &status, &lost) < 0)
		return recover_slurm(ctx, s, d, &lost, o, err);
	int sbatch_status = slurm_parse_exit(out.buf, "sbatch");
	if (sbatch_status < 0) {
		/* The shell died (a signal, a killed session) before it could say what
		 * sbatch answered: sbatch may have submitted the job. */
		dp_err(&lost, DPE_FAIL, "the remote shell on '%s' ended (exit status %d) before "
		       "it reported sbatch's answer", s->host->name, status);
		return recover_slurm(ctx, s, d, &lost, o, err);
	}
	if (sbatch_status != 0) {
		/* sbatch's own words, as it wrote them */
		fputs(errout.buf, stderr);
		o->refused = true;
		return dp_err(err, DPE_FAIL, "sbatch on '%s' refused the job (exit status %d)",
			      s->host->name, sbatch_status);
	}
	if (errout.len && ctx->verbosity >= 0)
		fputs(errout.buf, stderr); /* sbatch's warnings */
	if (slurm_parse_sbatch(out.buf, &o->job_id, NULL) < 0) {
		dp_err(&lost, DPE_FAIL, "sbatch on '%s' printed no job id", s->host->name);
		return recover_slurm(ctx, s, d, &lost, o, err);
	}
	return 0;
}

static int recover_plain(struct dp_ctx *ctx, const struct submit *s, const struct remote_dirs *d,
			 const struct dp_error *lost, struct outcome *o, struct dp_error *err)
{
	struct ssh_ctx sc;
	cmd_ssh_ctx(ctx, &sc);
	_cleanup_ssh_session_ struct ssh_session *ss = NULL;
	warning_msg("%s; connecting again to see whether the job started", lost->msg);
	if (ssh_session_open(&sc, s->host->ssh ? s->host->ssh : s->host->name, &ss, err) < 0)
		return -1;
	_cleanup_strbuf_ struct strbuf cmd = STRBUF_INIT, out = STRBUF_INIT;
	struct plainjob_ref ref = { .id = s->stage, .stage_dir = d->stage, .pgid = 0 };
	plainjob_status_command(&cmd, &ref, 1);
	strbuf_adds(&cmd, "printf 'dispatch-pid %s\\n' \"$(cut -d ' ' -f 1 ");
	sh_quote(&cmd, d->stage);
	strbuf_adds(&cmd, "/pid 2>/dev/null)\"\n");
	int status;
	if (ssh_exec_capture(ss, cmd.buf, NULL, &out, NULL, &status, err) < 0)
		return -1;
	o->pid = plainjob_parse_pid(out.buf);
	if (o->pid < 0)
		return dp_err(err, DPE_FAIL, "the job on '%s' has not started (no %s/pid yet)",
			      s->host->name, d->stage);
	o->job_id = xstrdup(s->stage);
	o->recovered = true;
	return 0;
}

static int run_plain(struct dp_ctx *ctx, struct ssh_session *ss, const struct submit *s,
		     const struct remote_dirs *d, struct outcome *o, struct dp_error *err)
{
	_cleanup_strbuf_ struct strbuf cmd = STRBUF_INIT, out = STRBUF_INIT, errout = STRBUF_INIT;
	_cleanup_free_ char *log = log_path_for(s, d, NULL);
	struct dp_error lost = { 0 };
	int status;
	plainjob_launch_command(&cmd, d->stage, d->work, log, s->stage);
	if (ssh_exec_capture(ss, cmd.buf, NULL, &out, &errout, &status, &lost) < 0)
		return recover_plain(ctx, s, d, &lost, o, err);
	if (status != 0) {
		fputs(errout.buf, stderr);
		o->refused = true;
		return dp_err(err, DPE_FAIL, "cannot start the job on '%s' (exit status %d)",
			      s->host->name, status);
	}
	o->pid = plainjob_parse_pid(out.buf);
	if (o->pid < 0) {
		dp_err(&lost, DPE_FAIL, "the job's start on '%s' printed no process id", s->host->name);
		return recover_plain(ctx, s, d, &lost, o, err);
	}
	o->job_id = xstrdup(s->stage);
	return 0;
}

static void print_submitted(const struct submit *s, const struct remote_dirs *d,
			    const struct outcome *o, const char *log, bool json)
{
	_cleanup_free_ char *script = xasprintf("%s/%s", d->stage, s->host->type == INV_HOST_SLURM
								   ? "sbatch.sh" : "bootstrap.sh");
	if (!json) {
		printf("%s@%s\n", o->job_id, s->host->name);
		return;
	}
	cJSON *doc = cJSON_CreateObject();
	_cleanup_free_ char *job = xasprintf("%s@%s", o->job_id, s->host->name);
	cJSON_AddStringToObject(doc, "job", job);
	cJSON_AddStringToObject(doc, "id", o->job_id);
	cJSON_AddStringToObject(doc, "host", s->host->name);
	cJSON_AddStringToObject(doc, "type", inv_host_type_name(s->host->type));
	if (s->host->cluster)
		cJSON_AddStringToObject(doc, "cluster", s->host->cluster->name);
	else
		cJSON_AddNullToObject(doc, "cluster");
	cJSON_AddStringToObject(doc, "name", s->spec.job_name ? s->spec.job_name : "dispatch");
	cJSON_AddStringToObject(doc, "token", s->token);
	cJSON_AddStringToObject(doc, "stage_dir", d->stage);
	cJSON_AddStringToObject(doc, "script", script);
	cJSON_AddStringToObject(doc, "log", log);
	if (o->pid > 0)
		cJSON_AddNumberToObject(doc, "pid", (double)o->pid);
	else
		cJSON_AddNullToObject(doc, "pid");
	if (s->commit)
		cJSON_AddStringToObject(doc, "commit", s->commit);
	else
		cJSON_AddNullToObject(doc, "commit");
	cJSON_AddBoolToObject(doc, "dirty", s->dirty);
	cJSON_AddBoolToObject(doc, "recovered", o->recovered);
	json_print(doc);
}

/* Steps 3 and 4, and the record of the outcome. */
static int submit_recorded(struct dp_ctx *ctx, struct ledger *l, struct ssh_session *ss,
			   struct submit *s, const struct remote_dirs *d)
{
	struct dp_error err = { 0 }, e2 = { 0 };
	bool slurm = s->host->type == INV_HOST_SLURM;
	_cleanup_free_ char *script = xasprintf("%s/%s", d->stage, slurm ? "sbatch.sh" : "bootstrap.sh");
	_cleanup_free_ char *log0 = log_path_for(s, d, NULL);
	struct ledger_job rec = {
		.host = s->host->name,
		.cluster = s->host->cluster ? s->host->cluster->name : NULL,
		.name = s->spec.job_name ? s->spec.job_name : "dispatch",
		.token = s->token,
		.commit = (char *)s->commit,
		.dirty = s->dirty,
		.script_path = script,
		.log_path = log0,
		.err_path = s->spec.error,
	};
	if (ledger_begin(l, &rec, &err) < 0)
		return report_error(&err);
	info_msg(ctx, "submitting to '%s' (token %s, stage %s)", s->host->name, s->token, d->stage);

	_cleanup_(outcome_release) struct outcome o = { 0 };
	if ((slurm ? run_sbatch(ctx, ss, s, d, &o, &err) : run_plain(ctx, ss, s, d, &o, &err)) < 0) {
		if (o.refused) {
			if (ledger_forget(l, s->token, &e2) < 0)
				report_error(&e2);
			return report_error(&err);
		}
		if (ledger_set_state(l, s->token, "unknown", &e2) < 0)
			report_error(&e2);
		error_msg("%s", err.msg);
		error_msg("the state of the submission to '%s' is unknown: it may or may not have "
			  "been submitted. Do not submit again before you know: look for its token %s "
			  "with 'dispatch run -H %s -- %s'", s->host->name, s->token, s->host->name,
			  slurm ? "squeue --me -t all -o \"%i %k\"" : "ls STAGE_DIR");
		return DPE_FAIL;
	}
	if (o.recovered)
		warning_msg("found the job by its token: %s on '%s' (not submitted again)", o.job_id,
			    s->host->name);
	_cleanup_free_ char *log = log_path_for(s, d, o.job_id);
	if (ledger_submitted(l, s->token, o.job_id, o.pid, &err) < 0 ||
	    ledger_set_log_path(l, s->token, log, &err) < 0)
		return report_error(&err);
	if (!ctx->json && ctx->verbosity >= 0 && stderr_is_tty())
		fprintf(stderr, "dispatch: submitted job %s to %s; log: %s\n", o.job_id, s->host->name,
			log);
	print_submitted(s, d, &o, log, ctx->json);
	return 0;
}

static int submit_remote(struct dp_ctx *ctx, struct submit *s, const struct jobscript *js)
{
	struct dp_error err = { 0 };
	_cleanup_ledger_ struct ledger *l = NULL;
	if (ledger_open(NULL, &l, &err) < 0)
		return report_error(&err);

	struct ssh_ctx sc;
	cmd_ssh_ctx(ctx, &sc);
	_cleanup_ssh_session_ struct ssh_session *ss = NULL;
	const char *dest = s->host->ssh ? s->host->ssh : s->host->name;
	if (ssh_session_open(&sc, dest, &ss, &err) < 0)
		return report_error(&err);

	_cleanup_(remote_dirs_release) struct remote_dirs d = { 0 };
	if (prepare_dirs(ss, s, &d, &err) < 0 || upload_scripts(ss, s, js, &d, ctx, &err) < 0)
		return report_error(&err);
	return submit_recorded(ctx, l, ss, s, &d);
}

static int generate(struct dp_ctx *ctx, struct submit *s)
{
	struct dp_error err = { 0 };
	_cleanup_free_ char *share = jobscript_share_dir(s->host);
	/* The stage dir's nonce comes from the token: unique across machines. */
	s->token = ledger_new_token();
	unsigned long nonce = strtoul(s->token + strlen(s->token) - 4, NULL, 16);
	s->stage = jobscript_stage_name(s->spec.job_name, time(NULL),
					s->dry_run ? (unsigned long)getpid() : nonce);
	_cleanup_free_ char *boot_path = xasprintf("%s/%s/bootstrap.sh", share, s->stage);
	_cleanup_free_ char *code_path = NULL;
	struct jobscript_target t = {
		.host = s->host,
		.gres_type = s->gres_type,
		.partition = s->partition,
		.bootstrap_path = boot_path,
		.payload = s->payload,
		.payload_len = s->payload_len,
		.payload_subdir = s->subdir && *s->subdir ? s->subdir : NULL,
	};
	if (s->payload && s->payload_key && s->payload_len > EMBED_MAX) {
		code_path = xasprintf("%s/code/%s.tar.gz", share, s->payload_key);
		t.payload = NULL;
		t.payload_path = code_path;
	}
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
	if (!s->dry_run)
		return submit_remote(ctx, s, &js);
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

static int submit_main(struct dp_ctx *ctx, const struct dp_args *args, bool packed)
{
	struct submit s = { .packed = packed };
	int r = collect(ctx, args, &s);
	if (r == 0)
		r = check_chip(s.spec.chip);
	if (r == 0)
		r = pick_host(ctx, &s);
	if (r == 0)
		r = s.packed ? make_snapshot(ctx, &s) : read_payload(&s);
	if (r == 0)
		r = generate(ctx, &s);
	free(s.subdir);
	solve_result_release(&s.solved);
	solve_checked_free(s.live);
	jobspec_release(&s.spec);
	free(s.payload);
	free(s.token);
	free(s.stage);
	return r;
}

static int cmd_submit(struct dp_ctx *ctx, const struct dp_args *args)
{
	return submit_main(ctx, args, false);
}

static int cmd_submit_packed(struct dp_ctx *ctx, const struct dp_args *args)
{
	return submit_main(ctx, args, true);
}

const struct dispatch_cmd dispatch_cmd_submit = {
	.name = "submit",
	.summary = "submit a job to a SLURM cluster or a plain host",
	.usage = "[-H HOST | --solve [--check]] [JOB OPTIONS] [-f JOB.yaml] [--dry-run [--emit DIR]] -- COMMAND...",
	.description =
		"Builds the job's scripts: an sbatch wrapper with the #SBATCH directives that\n"
		"runs bootstrap.sh once per node with srun, and the bootstrap itself (modules,\n"
		"environment, payload, uv sync, setup, then the command). Job options follow\n"
		"sbatch; a job YAML file uses the same names. Prints the job as ID@HOST.",
	.opts = submit_options,
	.min_args = 0,
	.max_args = -1,
	.flags = CMD_WANTS_INVENTORY | CMD_POSIX_ORDER,
	.fn = cmd_submit,
};

const struct dispatch_cmd dispatch_cmd_submit_packed = {
	.name = "submit-packed",
	.summary = "submit a job with a snapshot of a git repository as its code",
	.usage = "[-H HOST | --solve [--check]] [JOB OPTIONS] [-f JOB.yaml] [--repo DIR] [--ref REF | --dirty] "
		 "[--dry-run [--emit DIR]] -- COMMAND...",
	.description =
		"As submit, with the code: a snapshot of the repository (the files of --ref as\n"
		"git archive writes them, or with --dirty the work tree with its edits and\n"
		"untracked files) is extracted on every node, and the command runs in it (in\n"
		"--repo's subdirectory when --repo is below the top). Prints the job as ID@HOST.",
	.opts = packed_options,
	.min_args = 0,
	.max_args = -1,
	.flags = CMD_WANTS_INVENTORY | CMD_POSIX_ORDER,
	.fn = cmd_submit_packed,
};
