/* SPDX-License-Identifier: MIT */
/*
 * main: global options, the command table, preconditions (the inventory, the ssh
 * context), the options into the command's variables and their rules, and the
 * final check that stdout was written (git's run_builtin).
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "dispatch.h"
#include "base/strbuf.h"
#include "inventory/inventory.h"
#include "transport/ssh.h"
#include "transport/ssh_config.h"
#include "versions.h"

#ifndef DISPATCH_VERSION
#define DISPATCH_VERSION "unknown"
#endif

/* Sorted by name; only commands that work are here. */
const struct dispatch_cmd *const dispatch_commands[] = {
	&dispatch_cmd_cancel,
	&dispatch_cmd_completion,
	&dispatch_cmd_cp,
	&dispatch_cmd_forward,
	&dispatch_cmd_hostlist,
	&dispatch_cmd_hosts,
	&dispatch_cmd_jobs,
	&dispatch_cmd_logs,
	&dispatch_cmd_notebook,
	&dispatch_cmd_queue,
	&dispatch_cmd_run,
	&dispatch_cmd_shell,
	&dispatch_cmd_ship,
	&dispatch_cmd_solve,
	&dispatch_cmd_status,
	&dispatch_cmd_submit,
	&dispatch_cmd_submit_packed,
	&dispatch_cmd_top,
	&dispatch_cmd_wait,
};
const size_t dispatch_ncommands = ARRAY_SIZE(dispatch_commands);

static bool want_version;

static const struct dp_option top_options[] = {
	OPT_BOOL('V', "version", &want_version, "print the versions of dispatch and its libraries"),
	OPT_END,
};

static const struct dispatch_cmd top = {
	.name = "",
	.usage = "[-i FILE] [-F FILE] [--json] [-v | -q] COMMAND [ARGS]...",
	.description = "Run, submit and watch jobs on SSH hosts and SLURM clusters.",
	.opts = top_options,
	.flags = CMD_POSIX_ORDER,
};

static const struct dispatch_cmd *find_command(const char *name)
{
	for (size_t i = 0; i < dispatch_ncommands; i++)
		if (streq(dispatch_commands[i]->name, name))
			return dispatch_commands[i];
	return NULL;
}

/* The subcommand the first operand names; NULL (reported, with a guess) when none. */
static const struct dispatch_cmd *find_subcommand(const struct dispatch_cmd *cmd, const char *word)
{
	const char *names[32];
	size_t n = 0;
	for (size_t i = 0; cmd->subcommands[i]; i++) {
		if (streq(subcommand_word(cmd->subcommands[i]), word))
			return cmd->subcommands[i];
		if (n < ARRAY_SIZE(names))
			names[n++] = subcommand_word(cmd->subcommands[i]);
	}
	const char *guess = suggest_word(word, names, n);
	if (guess) {
		usage_error_cmd(cmd->name, "'%s %s' is not a %s command (did you mean '%s'?)", cmd->name,
				word, cmd->name, guess);
		return NULL;
	}
	struct strbuf forms = STRBUF_INIT;
	for (size_t i = 0; cmd->subcommands[i]; i++) {
		const struct dispatch_cmd *sub = cmd->subcommands[i];
		strbuf_addf(&forms, "%s'%s%s%s'", i == 0 ? "" : cmd->subcommands[i + 1] ? ", " : " or ",
			    subcommand_word(sub), sub->usage && sub->usage[0] ? " " : "",
			    sub->usage ? sub->usage : "");
	}
	usage_error_cmd(cmd->name, "'%s %s' is not a %s command: %s", cmd->name, word, cmd->name,
			forms.buf);
	strbuf_release(&forms);
	return NULL;
}

/* The command's operand counts, from the table; 0 or the exit status (reported). */
static int check_counts(const struct dp_ctx *ctx, const struct dispatch_cmd *cmd,
			const struct dp_args *args)
{
	if (args->npos < cmd->min_args) {
		/* a subcommand of one operand names it: "'hosts show' needs one HOST" (the
		 * last word of its usage, after any options) */
		if (strchr(cmd->name, ' ') && cmd->min_args == 1 && cmd->max_args == 1) {
			const char *operand = strrchr(cmd->usage, ' ');
			return usage_error(ctx, "'%s' needs one %s", cmd->name,
					   operand ? operand + 1 : cmd->usage);
		}
		return usage_error(ctx, "'%s' needs %s%d argument%s", cmd->name,
				   cmd->max_args == cmd->min_args ? "" : "at least ", cmd->min_args,
				   cmd->min_args == 1 ? "" : "s");
	}
	if (cmd->max_args >= 0 && args->npos > cmd->max_args)
		return usage_error(ctx, "too many arguments for '%s' (from '%s' on)", cmd->name,
				   args->pos[cmd->max_args]);
	return 0;
}

/* An entry of opts is o's twin: the same option in another table (notebook and
 * notebook attach share --port, --timeout, --cancel-on-exit). */
static bool options_same(const struct dp_option *opts, const struct dp_option *o)
{
	for (; opts && !OPT_IS_END(opts); opts++)
		if (opts->value == o->value && streq_ptr(opts->long_name, o->long_name))
			return true;
	return false;
}

/* A subcommand takes the options of its own table (and the global ones); the
 * command's own options are not for it, and its options not for the command. */
static int check_options(const struct dp_ctx *ctx, const struct dispatch_cmd *cmd,
			 const struct dispatch_cmd *sub, const struct dp_args *args)
{
	for (size_t i = 0; i < args->nopts; i++) {
		const struct dp_option *o = args->opts[i].opt;
		if (sub && !options_of(sub->opts, o) && !options_same(sub->opts, o)) {
			if (!sub->opts || OPT_IS_END(sub->opts))
				return usage_error(ctx, "'%s' takes no options", sub->name);
			return usage_error(ctx, "%s does not go with '%s'", options_spelling(o),
					   sub->name);
		}
		for (size_t k = 0; !sub && cmd->subcommands && cmd->subcommands[k]; k++)
			if (options_of(cmd->subcommands[k]->opts, o))
				return usage_error(ctx, "%s goes with '%s'", options_spelling(o),
						   cmd->subcommands[k]->name);
	}
	return 0;
}

/* -i, then $DISPATCH_INVENTORY (both must exist), then the XDG path (may be absent). */
static int load_inventory(struct dp_ctx *ctx, const struct dispatch_cmd *cmd)
{
	static char xdg[4096];
	const char *path = ctx->inventory_path;
	bool explicit = true;

	if (!path || !*path)
		path = getenv("DISPATCH_INVENTORY");
	if (!path || !*path) {
		explicit = false;
		const char *base = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");
		if (base && *base)
			snprintf(xdg, sizeof(xdg), "%s/dispatch/inventory.yaml", base);
		else if (home && *home)
			snprintf(xdg, sizeof(xdg), "%s/.config/dispatch/inventory.yaml", home);
		else
			xdg[0] = '\0';
		path = xdg[0] ? xdg : NULL;
		if (path && access(path, F_OK) != 0)
			path = NULL;
	}
	ctx->inventory_path = path;
	if (!path) {
		if (cmd->flags & CMD_NEEDS_INVENTORY) {
			error_msg("no inventory: give -i FILE, set DISPATCH_INVENTORY, or create "
				  "~/.config/dispatch/inventory.yaml (see examples/inventory.yaml)");
			return DPE_INPUT;
		}
		return 0;
	}
	struct dp_error err = { 0 };
	if (inventory_load(path, &ctx->inv, &err) < 0) {
		if (err.kind == DPE_NOTFOUND)
			err.kind = DPE_INPUT;
		(void)explicit;
		return report_error(&err);
	}
	if (inventory_secrets_exposed(ctx->inv))
		warning_msg("inventory '%s' holds credentials and is readable by %s (mode %04o): "
			    "make it private with 'chmod 600 %s'", path,
			    ctx->inv->file_mode & 07 ? "others" : "its group", ctx->inv->file_mode,
			    path);
	return 0;
}

/* -V: dispatch's version, then each library's as loaded at run time (with -v, also
 * the headers it was built against); --json: the same as one document. */
static void print_versions(const struct dp_ctx *ctx)
{
	size_t n;
	const struct dp_library_version *v = library_versions(&n);

	if (ctx->json) {
		cJSON *doc = cJSON_CreateObject();
		cJSON_AddStringToObject(doc, "version", DISPATCH_VERSION);
		cJSON *libs = cJSON_AddObjectToObject(doc, "libraries");
		for (size_t i = 0; i < n; i++) {
			cJSON *lib = cJSON_AddObjectToObject(libs, v[i].name);
			cJSON_AddStringToObject(lib, "version", v[i].runtime);
			cJSON_AddStringToObject(lib, "built_against", v[i].built);
			cJSON_AddBoolToObject(lib, "static", v[i].linked_static);
		}
		json_print(doc);
		return;
	}
	printf("dispatch %s\n", DISPATCH_VERSION);
	for (size_t i = 0; i < n; i++) {
		if (ctx->verbosity > 0)
			printf("%s %s (built against %s%s)\n", v[i].name, v[i].runtime, v[i].built,
			       v[i].linked_static ? ", linked statically" : "");
		else
			printf("%s %s\n", v[i].name, v[i].runtime);
	}
}

static int finish(int status)
{
	errno = 0;
	if (fflush(stdout) != 0 || ferror(stdout)) {
		if (errno != EPIPE) {
			error_msg("cannot write to standard output: %s", strerror(errno ? errno : EIO));
			return status ? status : DPE_FAIL;
		}
	}
	return status;
}

int main(int argc, char **argv)
{
	struct dp_ctx ctx = { 0 };
	struct ssh_ctx sc;
	struct dp_args top_args;
	int r;

	ctx.ssh_config_path = getenv("DISPATCH_SSH_CONFIG");
	if (ctx.ssh_config_path && !*ctx.ssh_config_path)
		ctx.ssh_config_path = NULL;
	_cleanup_free_ char *ssh_home = ssh_user_home();
	ctx.ssh_home = ssh_home;

	r = options_parse(&top, argc, argv, &ctx, &top_args);
	if (r)
		return finish(r > 0 ? 0 : DPE_INPUT);
	ctx.cmd = &top;
	if (options_store(&ctx, &top, &top_args) == 0 && want_version) {
		print_versions(&ctx);
		args_release(&top_args);
		return finish(0);
	}
	if (top_args.npos == 0) {
		usage_print(stderr, &top);
		args_release(&top_args);
		return DPE_INPUT;
	}

	const struct dispatch_cmd *cmd = find_command(top_args.pos[0]);
	if (!cmd) {
		const char *names[64];
		size_t n = 0;
		for (size_t i = 0; i < dispatch_ncommands && n < ARRAY_SIZE(names); i++)
			names[n++] = dispatch_commands[i]->name;
		const char *guess = suggest_word(top_args.pos[0], names, n);
		if (guess)
			error_msg("'%s' is not a dispatch command (did you mean '%s'?)", top_args.pos[0], guess);
		else
			error_msg("'%s' is not a dispatch command; 'dispatch -h' lists them", top_args.pos[0]);
		args_release(&top_args);
		return DPE_INPUT;
	}
	ctx.cmd = cmd;

	/* The command's own parse: argv from the command name on. */
	int cargc = top_args.npos;
	char **cargv = top_args.pos;
	struct dp_args args;
	r = options_parse(cmd, cargc, cargv, &ctx, &args);
	if (r) {
		args_release(&args);
		args_release(&top_args);
		return finish(r > 0 ? 0 : DPE_INPUT);
	}
	/* A subcommand: the first operand names it, the others are its operands. */
	const struct dispatch_cmd *parent = cmd, *sub = NULL;
	struct dp_args cargs = args;
	if (cmd->subcommands && args.npos > 0) {
		sub = find_subcommand(cmd, args.pos[0]);
		if (!sub) {
			r = DPE_INPUT;
			goto out;
		}
		ctx.cmd = cmd = sub;
		cargs.pos++;
		cargs.npos--;
		if (cargs.dashdash > 0)
			cargs.dashdash--;
	}
	r = check_options(&ctx, parent, sub, &cargs);
	if (!r)
		r = check_counts(&ctx, cmd, &cargs);
	if (r)
		goto out;
	if (cmd->flags & (CMD_NEEDS_INVENTORY | CMD_WANTS_INVENTORY)) {
		r = load_inventory(&ctx, cmd);
		if (r)
			goto out;
	}
	r = options_store(&ctx, cmd, &cargs);
	if (r)
		goto out;
	if (cmd->flags & CMD_NEEDS_SSH) {
		cmd_ssh_ctx(&ctx, &sc);
		ctx.ssh = &sc;
	}
	if (cmd->flags & CMD_NEEDS_SESSION) {
		const char *host = NULL;
		struct dp_error err = { 0 };
		r = cmd->session_host(&ctx, &cargs, &host);
		if (r)
			goto out;
		if (session_open(&ctx, host, &ctx.session, &err) < 0) {
			r = report_error(&err);
			goto out;
		}
	}
	r = cmd->fn(&ctx, &cargs);
out:
	ssh_session_free(ctx.session);
	inventory_free(ctx.inv);
	args_release(&args);
	args_release(&top_args);
	return finish(r);
}
