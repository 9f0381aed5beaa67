/* SPDX-License-Identifier: MIT */
/*
 * Messages to the user: errors and notes on stderr, results (and --json) on stdout,
 * with the pieces every command prints with: JSON values that may be null, and
 * text tables whose columns are as wide as their widest cell.
 */
#include <cjson/cJSON.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>

#include "dispatch.h"
#include "base/strbuf.h"
#include "base/termesc.h"
#include "sched/slurm/hostlist.h"

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

void warning_msg(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmsg("warning: ", fmt, ap);
	va_end(ap);
}

void note_msg(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmsg("", fmt, ap);
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

int opt_hostlist(const struct dp_ctx *ctx, const struct dp_option *o, const char *expr)
{
	char ***hosts = o->value;
	struct dp_error err = { 0 };
	_cleanup_strv_free_ char **list = NULL;
	if (hostlist_expand(expr, &list, &err) < 0)
		return report_error(&err);
	for (char **p = list; *p; p++)
		if (!strv_contains(*hosts, *p))
			strv_add(hosts, *p);
	return 0;
}

/* A subcommand's options are in its command's -h: "hosts show" points to hosts. */
static void try_help(const char *name)
{
	fprintf(stderr, "Try 'dispatch%s%.*s -h' for the options.\n", name && name[0] ? " " : "",
		name ? (int)strcspn(name, " ") : 0, name ? name : "");
}

int usage_error(const struct dp_ctx *ctx, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmsg("", fmt, ap);
	va_end(ap);
	try_help(ctx->cmd ? ctx->cmd->name : NULL);
	return DPE_INPUT;
}

int usage_error_cmd(const char *name, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmsg("", fmt, ap);
	va_end(ap);
	try_help(name);
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

void json_add_container(cJSON *o, const char *runtime, const char *image)
{
	if (!image || !runtime) {
		cJSON_AddNullToObject(o, "container");
		return;
	}
	cJSON *c = cJSON_AddObjectToObject(o, "container");
	cJSON_AddStringToObject(c, "runtime", runtime);
	cJSON_AddStringToObject(c, "image", image);
}

/* ---- tables ---- */

void table_take(struct table *t, char *cell)
{
	t->cells = xrealloc(t->cells, (t->n + 1) * sizeof(*t->cells));
	t->cells[t->n++] = cell;
}

void table_add(struct table *t, const char *cell)
{
	table_take(t, xstrdup(cell));
}

void table_addf(struct table *t, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	struct strbuf sb = STRBUF_INIT;
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	table_take(t, strbuf_detach(&sb));
}

void table_row(struct table *t, const char *first, ...)
{
	va_list ap;
	va_start(ap, first);
	for (const char *s = first; s; s = va_arg(ap, const char *))
		table_add(t, s);
	va_end(ap);
}

void table_print(struct table *t)
{
	size_t nc = t->ncols, nrows = nc ? t->n / nc : 0;
	size_t *w = xcalloc(nc ? nc : 1, sizeof(*w));
	for (size_t c = 0; c < nc; c++) {
		if (t->cols && t->cols[c].width > 0) {
			w[c] = (size_t)t->cols[c].width;
			continue;
		}
		for (size_t i = 0; i < nrows; i++)
			if (strlen(t->cells[i * nc + c]) > w[c])
				w[c] = strlen(t->cells[i * nc + c]);
	}
	struct strbuf line = STRBUF_INIT;
	for (size_t i = 0; i < nrows; i++) {
		strbuf_reset(&line);
		for (size_t c = 0; c < nc; c++) {
			const char *cell = t->cells[i * nc + c];
			if (c)
				strbuf_adds(&line, t->sep ? t->sep : "  ");
			if (c + 1 == nc)
				strbuf_adds(&line, cell);
			else if (t->cols && t->cols[c].right)
				strbuf_addf(&line, "%*s", (int)w[c], cell);
			else
				strbuf_addf(&line, "%-*s", (int)w[c], cell);
		}
		while (t->trim && line.len && line.buf[line.len - 1] == ' ')
			line.buf[--line.len] = '\0';
		strbuf_addch(&line, '\n');
		fputs(line.buf, stdout);
	}
	strbuf_release(&line);
	for (size_t i = 0; i < t->n; i++)
		free(t->cells[i]);
	free(t->cells);
	free(w);
	t->cells = NULL;
	t->n = 0;
}

int pass_stdout(void *data, const char *buf, size_t len)
{
	(void)data;
	return write_all(STDOUT_FILENO, buf, len);
}

void print_remote_text(FILE *f, const char *text)
{
	struct strbuf sb = STRBUF_INIT;
	for (const char *p = text; p && *p;) {
		size_t n = strcspn(p, "\n");
		_cleanup_free_ char *line = xstrndup(p, n);
		strbuf_add_printable(&sb, line);
		strbuf_addch(&sb, '\n');
		p += n + (p[n] == '\n');
	}
	fputs(sb.buf ? sb.buf : "", f);
	strbuf_release(&sb);
}

int pass_stderr(void *data, const char *buf, size_t len)
{
	(void)data;
	return write_all(STDERR_FILENO, buf, len);
}

bool stdout_is_tty(void)
{
	return isatty(STDOUT_FILENO);
}

bool stderr_is_tty(void)
{
	return isatty(STDERR_FILENO);
}

bool utf8_locale(void)
{
	const char *v = getenv("LC_ALL");
	if (!v || !*v)
		v = getenv("LC_CTYPE");
	if (!v || !*v)
		v = getenv("LANG");
	for (; v && *v; v++)
		if (!strncasecmp(v, "UTF-8", 5) || !strncasecmp(v, "utf8", 4))
			return true;
	return false;
}
