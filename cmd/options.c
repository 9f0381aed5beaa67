/* SPDX-License-Identifier: MIT */
/*
 * Option parsing from the static tables (git's parse-options, without abbreviations:
 * a script that works today keeps working when an option is added). Global options
 * (-i, -F, --json, -v, -q, -h) are understood before and after the command name.
 */
#include <stdio.h>
#include <stdlib.h>

#include "dispatch.h"

enum {
	GOPT_INVENTORY = 1001,
	GOPT_SSH_CONFIG,
	GOPT_JSON,
	GOPT_VERBOSE,
	GOPT_QUIET,
	GOPT_HELP,
};

const struct dp_option dispatch_global_options[] = {
	{ GOPT_INVENTORY, 'i', "inventory", "FILE", "YAML inventory (default $DISPATCH_INVENTORY, then $XDG_CONFIG_HOME/dispatch/inventory.yaml)", "file" },
	{ GOPT_SSH_CONFIG, 'F', "ssh-config", "FILE", "OpenSSH client config (default $DISPATCH_SSH_CONFIG, then ~/.ssh/config)", "file" },
	{ GOPT_JSON, 0, "json", NULL, "machine-readable output on stdout", NULL },
	{ GOPT_VERBOSE, 'v', "verbose", NULL, "say more on stderr (repeatable)", NULL },
	{ GOPT_QUIET, 'q', "quiet", NULL, "say less on stderr", NULL },
	{ GOPT_HELP, 'h', "help", NULL, "show this help", NULL },
	{ 0 },
};

static const struct dp_option *find_long(const struct dp_option *opts, const char *name, size_t len)
{
	for (; opts && opts->id; opts++)
		if (opts->long_name && strlen(opts->long_name) == len &&
		    strncmp(opts->long_name, name, len) == 0)
			return opts;
	return NULL;
}

static const struct dp_option *find_short(const struct dp_option *opts, char c)
{
	for (; opts && opts->id; opts++)
		if (opts->short_name == c)
			return opts;
	return NULL;
}

const char *options_spelling(const struct dp_option *opts, int id)
{
	static char buf[128];
	for (; opts && opts->id; opts++) {
		if (opts->id != id)
			continue;
		if (opts->long_name)
			snprintf(buf, sizeof(buf), "--%s", opts->long_name);
		else
			snprintf(buf, sizeof(buf), "-%c", opts->short_name);
		return buf;
	}
	return "?";
}

static void add_opt(struct dp_args *out, int id, const char *arg)
{
	out->opts = xrealloc(out->opts, (out->nopts + 1) * sizeof(*out->opts));
	out->opts[out->nopts].id = id;
	out->opts[out->nopts].arg = arg;
	out->nopts++;
}

static void add_pos(struct dp_args *out, char *arg)
{
	out->pos = xrealloc(out->pos, ((size_t)out->npos + 1) * sizeof(*out->pos));
	out->pos[out->npos++] = arg;
}

void args_release(struct dp_args *args)
{
	free(args->opts);
	free(args->pos);
	memset(args, 0, sizeof(*args));
	args->dashdash = -1;
}

/* Returns 1 when -h was handled (exit 0), 0 to go on, -1 on error (exit 2). */
static int apply(const struct dispatch_cmd *cmd, const struct dp_option *o, const char *arg,
		 struct dp_ctx *ctx, struct dp_args *out)
{
	switch (o->id) {
	case GOPT_INVENTORY:
		ctx->inventory_path = arg;
		return 0;
	case GOPT_SSH_CONFIG:
		ctx->ssh_config_path = arg;
		return 0;
	case GOPT_JSON:
		ctx->json = true;
		return 0;
	case GOPT_VERBOSE:
		ctx->verbosity = ctx->verbosity < 0 ? 1 : ctx->verbosity + 1;
		return 0;
	case GOPT_QUIET:
		ctx->verbosity = -1;
		return 0;
	case GOPT_HELP:
		usage_print(stdout, cmd);
		return 1;
	default:
		add_opt(out, o->id, arg);
		return 0;
	}
}

static int bad_option(const struct dispatch_cmd *cmd, const char *problem, const char *what)
{
	usage_error_cmd(cmd->name, "option '%s' %s", what, problem);
	return -1;
}

int options_parse(const struct dispatch_cmd *cmd, int argc, char **argv, struct dp_ctx *ctx,
		  struct dp_args *out)
{
	memset(out, 0, sizeof(*out));
	out->dashdash = -1;

	for (int i = 1; i < argc; i++) {
		char *a = argv[i];
		if (streq(a, "--")) {
			out->dashdash = out->npos;
			for (i++; i < argc; i++)
				add_pos(out, argv[i]);
			break;
		}
		if (a[0] != '-' || a[1] == '\0') {
			if (cmd->flags & CMD_POSIX_ORDER) {
				for (; i < argc; i++)
					add_pos(out, argv[i]);
				break;
			}
			add_pos(out, a);
			continue;
		}
		if (a[1] == '-') {
			const char *name = a + 2, *eq = strchr(name, '=');
			size_t len = eq ? (size_t)(eq - name) : strlen(name);
			const struct dp_option *o = find_long(cmd->opts, name, len);
			if (!o)
				o = find_long(dispatch_global_options, name, len);
			if (!o)
				return bad_option(cmd, "is unknown", a);
			const char *arg = NULL;
			if (o->argname) {
				if (eq)
					arg = eq + 1;
				else if (i + 1 < argc)
					arg = argv[++i];
				else
					return bad_option(cmd, "needs a value", a);
			} else if (eq) {
				return bad_option(cmd, "takes no value", a);
			}
			int r = apply(cmd, o, arg, ctx, out);
			if (r)
				return r;
			continue;
		}
		for (const char *p = a + 1; *p; p++) {
			const struct dp_option *o = find_short(cmd->opts, *p);
			if (!o)
				o = find_short(dispatch_global_options, *p);
			if (!o) {
				char opt[3] = { '-', *p, 0 };
				return bad_option(cmd, "is unknown", opt);
			}
			const char *arg = NULL;
			if (o->argname) {
				if (p[1])
					arg = p + 1;
				else if (i + 1 < argc)
					arg = argv[++i];
				else {
					char opt[3] = { '-', *p, 0 };
					return bad_option(cmd, "needs a value", opt);
				}
			}
			int r = apply(cmd, o, arg, ctx, out);
			if (r)
				return r;
			if (arg)
				break;
		}
	}
	return 0;
}

static void print_opts(FILE *f, const struct dp_option *o)
{
	for (; o && o->id; o++) {
		char left[96];
		int n = snprintf(left, sizeof(left), "    %s%c%s%s%s%s%s", o->short_name ? "-" : "",
				 o->short_name ? o->short_name : ' ',
				 o->short_name && o->long_name ? ", " : (o->short_name ? "" : "   "),
				 o->long_name ? "--" : "", o->long_name ? o->long_name : "",
				 o->argname ? " " : "", o->argname ? o->argname : "");
		if (!o->short_name) /* "    " + "   " + "  " keeps long-only options aligned */
			n = snprintf(left, sizeof(left), "        --%s%s%s", o->long_name,
				     o->argname ? " " : "", o->argname ? o->argname : "");
		if (n < 30)
			fprintf(f, "%-30s%s\n", left, o->help);
		else
			fprintf(f, "%s\n%30s%s\n", left, "", o->help);
	}
}

void usage_print(FILE *f, const struct dispatch_cmd *cmd)
{
	const char *u = cmd->usage;
	bool first = true;
	while (u && *u) {
		const char *nl = strchr(u, '\n');
		size_t len = nl ? (size_t)(nl - u) : strlen(u);
		fprintf(f, "%s dispatch%s%s %.*s\n", first ? "usage:" : "   or:", cmd->name[0] ? " " : "",
			cmd->name, (int)len, u);
		first = false;
		u = nl ? nl + 1 : u + len;
	}
	if (cmd->description)
		fprintf(f, "\n%s\n", cmd->description);
	if (cmd->opts && cmd->opts->id) {
		fprintf(f, "\nOptions:\n");
		print_opts(f, cmd->opts);
	}
	if (!cmd->name[0]) {
		fprintf(f, "\nCommands:\n");
		for (size_t i = 0; i < dispatch_ncommands; i++)
			fprintf(f, "    %-16s%s\n", dispatch_commands[i]->name, dispatch_commands[i]->summary);
		fprintf(f, "\n'dispatch COMMAND -h' shows a command's options; 'man dispatch-COMMAND' the details.\n");
	} else {
		fprintf(f, "\nGlobal options (before or after the command):\n");
		print_opts(f, dispatch_global_options);
	}
}
