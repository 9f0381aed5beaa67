/* SPDX-License-Identifier: MIT */
/*
 * -h: the usage forms, the description and the options of a command, each with its
 * help text, from the command and option tables (the man-page check compares them).
 */
#include <stdio.h>

#include "dispatch.h"

static void print_opts(FILE *f, const struct dp_option *o)
{
	for (; o && !OPT_IS_END(o); o++) {
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
	if (cmd->opts && !OPT_IS_END(cmd->opts)) {
		fprintf(f, "\nOptions:\n");
		print_opts(f, cmd->opts);
	}
	for (size_t i = 0; cmd->subcommands && cmd->subcommands[i]; i++) {
		const struct dispatch_cmd *sub = cmd->subcommands[i];
		if (sub->opts && !OPT_IS_END(sub->opts)) {
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
