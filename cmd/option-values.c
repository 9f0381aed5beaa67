/* SPDX-License-Identifier: MIT */
/*
 * Typed option values: numbers, seconds, sizes and words, converted from the
 * argument and checked against the table's range, a bad one reported in the same
 * words for every command ("--NAME wants ..., not 'VALUE'", exit 2).
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch.h"
#include "base/strbuf.h"

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
	usage_error_cmd(cmd->name, "%s wants %s, not '%s'", options_spelling(o), sb.buf, arg);
	strbuf_release(&sb);
	return -1;
}

int option_value(const struct dispatch_cmd *cmd, const struct dp_option *o, const char *arg,
		 union dp_value *v)
{
	bool ok = true;
	switch (o->kind) {
	case DP_OPT_INT:
		ok = parse_long(arg, (long)o->min, (long)o->max, &v->l);
		v->i = ok ? (int)v->l : 0;
		break;
	case DP_OPT_SECONDS:
		ok = parse_seconds(o, arg, &v->d);
		break;
	case DP_OPT_SIZE:
		ok = parse_size(o, arg, &v->l);
		break;
	case DP_OPT_WORD:
		v->i = (int)word_index(o->complete, arg);
		ok = v->i >= 0;
		break;
	default:
		break;
	}
	return ok ? 0 : bad_value(cmd, o, arg);
}

int option_add_words(const struct dp_ctx *ctx, const struct dp_option *o, const char *arg)
{
	char ***list = o->value;
	for (const char *p = arg; *p;) {
		size_t len = strcspn(p, ",");
		if (len)
			strv_push(list, xstrndup(p, len));
		p += len + (p[len] == ',');
	}
	return 0;
}
