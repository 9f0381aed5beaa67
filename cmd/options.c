/* SPDX-License-Identifier: MIT */
/*
 * Option parsing from the static tables (git's parse-options, without abbreviations:
 * a script that works today keeps working when an option is added). Global options
 * (-i, -F, --json, -v, -q, -h) are understood before and after the command name.
 * Each entry names the variable its value goes to (options_store, once the command
 * line is known to be good), and a command's rules between its options are checked
 * here, in the words its table gives.
 */
#include <stdio.h>
#include <stdlib.h>

#include "dispatch.h"
#include "base/strbuf.h"

enum {
	GOPT_INVENTORY = 1001,
	GOPT_SSH_CONFIG,
	GOPT_JSON,
	GOPT_VERBOSE,
	GOPT_QUIET,
	GOPT_HELP,
};

#define GLOBAL(S, L, A, MODE, H, C) { .short_name = (S), .long_name = (L), .argname = (A), \
	.help = (H), .complete = (C), .kind = DP_OPT_GLOBAL, .mode = (MODE) }
const struct dp_option dispatch_global_options[] = {
	GLOBAL('i', "inventory", "FILE", GOPT_INVENTORY, "YAML inventory (default $DISPATCH_INVENTORY, then $XDG_CONFIG_HOME/dispatch/inventory.yaml)", "file"),
	GLOBAL('F', "ssh-config", "FILE", GOPT_SSH_CONFIG, "OpenSSH client config (default $DISPATCH_SSH_CONFIG, then ~/.ssh/config)", "file"),
	GLOBAL(0, "json", NULL, GOPT_JSON, "machine-readable output on stdout", NULL),
	GLOBAL('v', "verbose", NULL, GOPT_VERBOSE, "say more on stderr (repeatable)", NULL),
	GLOBAL('q', "quiet", NULL, GOPT_QUIET, "say less on stderr", NULL),
	GLOBAL('h', "help", NULL, GOPT_HELP, "show this help", NULL),
	OPT_END,
};

const char *subcommand_word(const struct dispatch_cmd *sub)
{
	const char *sp = strrchr(sub->name, ' ');
	return sp ? sp + 1 : sub->name;
}

bool options_of(const struct dp_option *opts, const struct dp_option *o)
{
	for (; opts && !OPT_IS_END(opts); opts++)
		if (opts == o)
			return true;
	return false;
}

static const struct dp_option *find_long(const struct dp_option *opts, const char *name, size_t len)
{
	for (; opts && !OPT_IS_END(opts); opts++)
		if (opts->long_name && strlen(opts->long_name) == len &&
		    strncmp(opts->long_name, name, len) == 0)
			return opts;
	return NULL;
}

static const struct dp_option *find_short(const struct dp_option *opts, char c)
{
	for (; opts && !OPT_IS_END(opts); opts++)
		if (opts->short_name == c)
			return opts;
	return NULL;
}

/* A command's options, its subcommands' (the dispatcher checks later which one they
 * belong to: options may come anywhere on the line), then the global ones. */
static const struct dp_option *lookup(const struct dispatch_cmd *cmd, const char *name, size_t len,
				      char c)
{
	const struct dp_option *o = name ? find_long(cmd->opts, name, len) : find_short(cmd->opts, c);
	for (size_t i = 0; !o && cmd->subcommands && cmd->subcommands[i]; i++) {
		const struct dp_option *so = cmd->subcommands[i]->opts;
		o = name ? find_long(so, name, len) : find_short(so, c);
	}
	if (!o)
		o = name ? find_long(dispatch_global_options, name, len)
			 : find_short(dispatch_global_options, c);
	return o;
}

const char *options_spelling(const struct dp_option *o)
{
	static char buf[128];
	if (o->long_name)
		snprintf(buf, sizeof(buf), "--%s", o->long_name);
	else
		snprintf(buf, sizeof(buf), "-%c", o->short_name);
	return buf;
}

static void add_opt(struct dp_args *out, const struct dp_option *o, const char *arg)
{
	out->opts = xrealloc(out->opts, (out->nopts + 1) * sizeof(*out->opts));
	out->opts[out->nopts] = (struct dp_optval){ .arg = arg, .opt = o };
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
	if (o->kind != DP_OPT_GLOBAL) {
		add_opt(out, o, arg);
		return 0;
	}
	switch (o->mode) {
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
	default:
		usage_print(stdout, cmd);
		return 1;
	}
}

static int bad_option(const struct dispatch_cmd *cmd, const char *problem, const char *what)
{
	usage_error_cmd(cmd->name, "option '%s' %s", what, problem);
	return -1;
}

/* A flag takes none. */
static bool takes_value(const struct dp_option *o)
{
	return o->argname != NULL;
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
			const struct dp_option *o = lookup(cmd, name, len, 0);
			if (!o)
				return bad_option(cmd, "is unknown", a);
			const char *arg = NULL;
			if (takes_value(o)) {
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
			const struct dp_option *o = lookup(cmd, NULL, 0, *p);
			if (!o) {
				char opt[3] = { '-', *p, 0 };
				return bad_option(cmd, "is unknown", opt);
			}
			const char *arg = NULL;
			if (takes_value(o)) {
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
	for (size_t i = 0; i < out->nopts; i++)
		if (option_value(cmd, out->opts[i].opt, out->opts[i].arg, &out->opts[i].v) < 0)
			return -1;
	return 0;
}

/* ---- the values into their variables ---- */

static void list_add(const char ***list, const char *arg)
{
	size_t n = 0;
	while (*list && (*list)[n])
		n++;
	*list = xrealloc(*list, (n + 2) * sizeof(**list));
	(*list)[n] = arg;
	(*list)[n + 1] = NULL;
}

/* Two CMDMODE options of one variable: git's words. */
static int cmdmode_clash(const struct dp_ctx *ctx, const struct dp_args *args, size_t i)
{
	const struct dp_option *o = args->opts[i].opt;
	for (size_t k = 0; k < i; k++) {
		const struct dp_option *p = args->opts[k].opt;
		if (p->kind == DP_OPT_CMDMODE && p->value == o->value && p->mode != o->mode) {
			char first[128];
			snprintf(first, sizeof(first), "%s", options_spelling(p));
			return usage_error(ctx, "options '%s' and '%s' cannot be used together", first,
					   options_spelling(o));
		}
	}
	return 0;
}

static int store(const struct dp_ctx *ctx, const struct dp_optval *v)
{
	const struct dp_option *o = v->opt;
	switch (o->kind) {
	case DP_OPT_FLAG: *(bool *)o->value = true; break;
	case DP_OPT_STRING: *(const char **)o->value = v->arg; break;
	case DP_OPT_INT: case DP_OPT_WORD: *(int *)o->value = v->v.i; break;
	case DP_OPT_SECONDS: *(double *)o->value = v->v.d; break;
	case DP_OPT_SIZE: *(long *)o->value = v->v.l; break;
	case DP_OPT_LIST: list_add(o->value, v->arg); break;
	case DP_OPT_CMDMODE: *(int *)o->value = o->mode; break;
	case DP_OPT_CALLBACK: return o->cb(ctx, o, v->arg);
	case DP_OPT_GLOBAL: break;
	}
	return 0;
}

enum { WORD_MAX = 64 };

/* Whether the word of list that names o ("-H" or "--host") is there: into word. */
static bool named(const char *list, const struct dp_option *o, char *word)
{
	while (list && *list) {
		size_t len = strcspn(list, " ");
		snprintf(word, WORD_MAX, "%.*s", (int)len, list);
		if ((word[1] != '-' && word[1] == o->short_name && !word[2]) ||
		    (word[1] == '-' && streq_ptr(word + 2, o->long_name)))
			return true;
		list += len;
		list += strspn(list, " ");
	}
	return false;
}

/* Whether an option of list was given: the word of the last one into word. */
static bool given(const struct dp_ctx *ctx, const struct dp_args *args, const char *list,
		  char *word)
{
	bool found = false;
	char w[WORD_MAX];
	for (size_t i = 0; i < args->nopts; i++)
		if (named(list, args->opts[i].opt, w)) {
			memcpy(word, w, WORD_MAX);
			found = true;
		}
	if (!found && ctx->json && list && strstr(list, "--json")) {
		snprintf(word, WORD_MAX, "--json");
		found = true;
	}
	return found;
}

static bool rule_broken(const struct dp_ctx *ctx, const struct dp_args *args,
			const struct dp_rule *r, char *a)
{
	char b[WORD_MAX];
	switch (r->kind) {
	case DP_EXCLUDES:
		return given(ctx, args, r->a, a) && given(ctx, args, r->b, b);
	case DP_REQUIRES:
		return given(ctx, args, r->a, a) && !given(ctx, args, r->b, b);
	default:
		a[0] = '\0';
		return !given(ctx, args, r->a, b);
	}
}

int options_store(const struct dp_ctx *ctx, const struct dispatch_cmd *cmd,
		  const struct dp_args *args)
{
	for (size_t i = 0; i < args->nopts; i++) {
		int r = store(ctx, &args->opts[i]);
		if (r)
			return r;
	}
	return cmd->flags & CMD_LATE_RULES ? 0 : options_rules(ctx, args);
}

int options_rules(const struct dp_ctx *ctx, const struct dp_args *args)
{
	for (const struct dp_rule *r = ctx->cmd->rules; r && r->msg; r++) {
		char a[WORD_MAX];
		if (!rule_broken(ctx, args, r, a))
			continue;
		const char *at = strstr(r->msg, "%s");
		int n = at ? (int)(at - r->msg) : (int)strlen(r->msg);
		return usage_error(ctx, "%.*s%s%s", n, r->msg, at ? a : "", at ? at + 2 : "");
	}
	for (size_t i = 0; i < args->nopts; i++) {
		int r = args->opts[i].opt->kind == DP_OPT_CMDMODE ? cmdmode_clash(ctx, args, i) : 0;
		if (r)
			return r;
	}
	return 0;
}

