/* SPDX-License-Identifier: MIT */
/* Messages to the user: errors and notes on stderr, results (and --json) on stdout. */
#include <cjson/cJSON.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "dispatch.h"
#include "slurm/hostlist.h"

static void vmsg(const char *prefix, const char *fmt, va_list ap) _printf_(2, 0);
static void vmsg(const char *prefix, const char *fmt, va_list ap)
{
	fflush(stdout);
	fprintf(stderr, "dispatch: %s", prefix);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void error_msg(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmsg("", fmt, ap);
	va_end(ap);
}

void notice_msg(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmsg("", fmt, ap);
	va_end(ap);
}

void warning_msg(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmsg("warning: ", fmt, ap);
	va_end(ap);
}

void info_msg(const struct dp_ctx *ctx, const char *fmt, ...)
{
	if (ctx->verbosity <= 0)
		return;
	va_list ap;
	va_start(ap, fmt);
	vmsg("", fmt, ap);
	va_end(ap);
}

int report_error(const struct dp_error *e)
{
	error_msg("%s", e->msg[0] ? e->msg : "unknown error");
	return e->kind ? e->kind : DPE_FAIL;
}

int add_hostlist(const char *expr, char ***hosts)
{
	struct dp_error err = { 0 };
	_cleanup_strv_free_ char **list = NULL;
	if (hostlist_expand(expr, &list, &err) < 0)
		return report_error(&err);
	for (char **p = list; *p; p++)
		if (!strv_contains(*hosts, *p))
			strv_add(hosts, *p);
	return 0;
}

int usage_error(const struct dp_ctx *ctx, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmsg("", fmt, ap);
	va_end(ap);
	fprintf(stderr, "Try 'dispatch %s -h' for the options.\n", ctx->cmd ? ctx->cmd->name : "");
	return DPE_INPUT;
}

void json_print(cJSON *doc)
{
	char *s = cJSON_Print(doc);
	if (!s)
		abort();
	fputs(s, stdout);
	fputc('\n', stdout);
	free(s);
	cJSON_Delete(doc);
}

bool stdout_is_tty(void)
{
	return isatty(STDOUT_FILENO);
}

bool stderr_is_tty(void)
{
	return isatty(STDERR_FILENO);
}
