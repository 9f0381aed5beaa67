/* SPDX-License-Identifier: MIT */
/*
 * Option parsing from the static tables (git's parse-options, without abbreviations:
 * a script that works today keeps working when an option is added). Global options
 * (-i, -F, --json, -v, -q, -h) are understood before and after the command name.
 * Typed values (numbers, seconds, sizes, words) are converted here, and a bad one is
 * reported here, in the same words for every command.
 */
#include <errno.h>
#include <ctype.h>
#include <limits.h>
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

const struct dp_option dispatch_global_options[] = {
	{ GOPT_INVENTORY, 'i', "inventory", "FILE", "YAML inventory (default $DISPATCH_INVENTORY, then $XDG_CONFIG_HOME/dispatch/inventory.yaml)", "file" },
	{ GOPT_SSH_CONFIG, 'F', "ssh-config", "FILE", "OpenSSH client config (default $DISPATCH_SSH_CONFIG, then ~/.ssh/config)", "file" },
	{ GOPT_JSON, 0, "json", NULL, "machine-readable output on stdout", NULL },
	{ GOPT_VERBOSE, 'v', "verbose", NULL, "say more on stderr (repeatable)", NULL },
	{ GOPT_QUIET, 'q', "quiet", NULL, "say less on stderr", NULL },
	{ GOPT_HELP, 'h', "help", NULL, "show this help", NULL },
	{ 0 },
};

const char *subcommand_word(const struct dispatch_cmd *sub)
{
	const char *sp = strrchr(sub->name, ' ');
	return sp ? sp + 1 : sub->name;
}

bool options_of(const struct dp_option *opts, const struct dp_option *o)
{
	for (; opts && opts->id; opts++)
		if (opts == o)
			return true;
	return false;
}

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

static void add_opt(struct dp_args *out, const struct dp_option *o, const char *arg)
{
	out->opts = xrealloc(out->opts, (out->nopts + 1) * sizeof(*out->opts));
	out->opts[out->nopts] = (struct dp_optval){ .id = o->id, .arg = arg, .opt = o };
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
		add_opt(out, o, arg);
		return 0;
	}
}

static int bad_option(const struct dispatch_cmd *cmd, const char *problem, const char *what)
{
	usage_error_cmd(cmd->name, "option '%s' %s", what, problem);
	return -1;
}

/* ---- typed values ---- */

/* A flag takes none; the zero kind goes by whether -h names an argument. */
static bool takes_value(const struct dp_option *o)
{
	return o->kind == DP_OPT_AUTO ? o->argname != NULL : o->kind != DP_OPT_FLAG;
}

#define NO_LIMIT 1e9 /* seconds or bytes' upper bound when the table gives none */

static bool parse_seconds(const struct dp_option *o, const char *s, double *out)
{
	double max = o->max > 0 ? o->max : NO_LIMIT;
	if (o->whole) {
		long v;
		if (!parse_long(s, (long)o->min, (long)max, &v))
			return false;
		*out = (double)v;
		return true;
	}
	char *end;
	double v = strtod(s, &end);
	if (end == s || *end || !(v >= o->min) || v > max)
		return false;
	*out = v;
	return true;
}

/* N, NK, NM, NG, NT (powers of 1024). */
static bool parse_size(const struct dp_option *o, const char *s, long *out)
{
	static const char units[] = "KMGT";
	char *end;
	if (!s || !(*s >= '0' && *s <= '9'))
		return false;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno)
		return false;
	if (*end) {
		const char *u = strchr(units, toupper((unsigned char)*end));
		if (!u || end[1])
			return false;
		for (const char *p = units; p <= u; p++) {
			if (v > (unsigned long long)LONG_MAX / 1024)
				return false;
			v *= 1024;
		}
	}
	double max = o->max > 0 ? o->max : (double)LONG_MAX;
	if ((double)v < o->min || (double)v > max || v > (unsigned long long)LONG_MAX)
		return false;
	*out = (long)v;
	return true;
}

/* The index of s among the words of "words:a b c", or -1. */
static long word_index(const char *complete, const char *s)
{
	const char *w = complete && startswith(complete, "words:") ? complete + 6 : "";
	for (long i = 0; *w; i++) {
		size_t len = strcspn(w, " ");
		if (len == strlen(s) && strncmp(w, s, len) == 0)
			return i;
		w += len;
		w += strspn(w, " ");
	}
	return -1;
}

/* What a value of o must be, for "--NAME wants ..., not 'VALUE'". */
static void wants(const struct dp_option *o, struct strbuf *sb)
{
	switch (o->kind) {
	case DP_OPT_INT:
		strbuf_addf(sb, "a number from %.0f to %.0f", o->min, o->max);
		return;
	case DP_OPT_SECONDS:
		if (o->max > 0)
			strbuf_addf(sb, "a number of seconds from %g to %g", o->min, o->max);
		else if (o->min <= (o->whole ? 1 : 0.001)) /* the least the resolution allows */
			strbuf_adds(sb, "a positive number of seconds");
		else
			strbuf_addf(sb, "seconds (%g or more)", o->min);
		return;
	case DP_OPT_SIZE:
		strbuf_adds(sb, "a size in bytes (N, or N with K, M, G or T)");
		return;
	case DP_OPT_WORD: {
		const char *w = o->complete + 6;
		while (*w) {
			size_t len = strcspn(w, " ");
			const char *next = w + len + strspn(w + len, " ");
			strbuf_addf(sb, "%s'%.*s'", sb->len == 0 ? "" : *next ? ", " : " or ", (int)len, w);
			w = next;
		}
		return;
	}
	default:
		strbuf_adds(sb, "a value");
	}
}

static int bad_value(const struct dispatch_cmd *cmd, const struct dp_option *o, const char *arg)
{
	if (o->bad) {
		const char *at = strstr(o->bad, "%s");
		int n = at ? (int)(at - o->bad) : (int)strlen(o->bad);
		usage_error_cmd(cmd->name, "%.*s%s%s", n, o->bad, at ? arg : "", at ? at + 2 : "");
		return -1;
	}
	struct strbuf sb = STRBUF_INIT;
	wants(o, &sb);
	usage_error_cmd(cmd->name, "%s wants %s, not '%s'", options_spelling(o, o->id), sb.buf, arg);
	strbuf_release(&sb);
	return -1;
}

/* Converts the typed values once all options are known (a bad name or -h first). */
static int convert(const struct dispatch_cmd *cmd, struct dp_optval *v)
{
	const struct dp_option *o = v->opt;
	bool ok = true;
	switch (o->kind) {
	case DP_OPT_INT:
		ok = parse_long(v->arg, (long)o->min, (long)o->max, &v->num);
		break;
	case DP_OPT_SECONDS:
		ok = parse_seconds(o, v->arg, &v->seconds);
		v->num = (long)v->seconds;
		break;
	case DP_OPT_SIZE:
		ok = parse_size(o, v->arg, &v->num);
		break;
	case DP_OPT_WORD:
		v->num = word_index(o->complete, v->arg);
		ok = v->num >= 0;
		break;
	default:
		break;
	}
	return ok ? 0 : bad_value(cmd, o, v->arg);
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
		if (convert(cmd, &out->opts[i]) < 0)
			return -1;
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

/* "usage: dispatch NAME FORM" for each form of usage (split by '\n'), "   or:" after the first. */
static void print_forms(FILE *f, const char *name, const char *usage, bool *first)
{
	const char *u = usage;
	while (u && *u) {
		const char *nl = strchr(u, '\n');
		size_t len = nl ? (size_t)(nl - u) : strlen(u);
		fprintf(f, "%s dispatch%s%s %.*s\n", *first ? "usage:" : "   or:", name[0] ? " " : "",
			name, (int)len, u);
		*first = false;
		u = nl ? nl + 1 : u + len;
	}
}

void usage_print(FILE *f, const struct dispatch_cmd *cmd)
{
	bool first = true;
	print_forms(f, cmd->name, cmd->usage, &first);
	for (size_t i = 0; cmd->subcommands && cmd->subcommands[i]; i++)
		print_forms(f, cmd->subcommands[i]->name, cmd->subcommands[i]->usage, &first);
	if (cmd->description)
		fprintf(f, "\n%s\n", cmd->description);
	if (cmd->opts && cmd->opts->id) {
		fprintf(f, "\nOptions:\n");
		print_opts(f, cmd->opts);
	}
	for (size_t i = 0; cmd->subcommands && cmd->subcommands[i]; i++) {
		const struct dispatch_cmd *sub = cmd->subcommands[i];
		if (sub->opts && sub->opts->id) {
			fprintf(f, "\nOptions of '%s':\n", sub->name);
			print_opts(f, sub->opts);
		}
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
