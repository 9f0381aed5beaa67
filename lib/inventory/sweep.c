/* SPDX-License-Identifier: MIT */
/* A sweep's parameters, its tasks and their commands: sweep.h. */
#include "inventory/sweep.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "base/shquote.h"
#include "base/termesc.h"
#include "base/util.h"

#define NAME_MAX_LEN 64

static bool valid_name(const char *s, size_t len)
{
	if (!len || len > NAME_MAX_LEN || isdigit((unsigned char)s[0]))
		return false;
	for (size_t i = 0; i < len; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '_')
			return false;
	return true;
}

static bool parse_int(const char *s, size_t len, long *v)
{
	_cleanup_free_ char *t = xstrndup(s, len);
	char *end;
	if (!len || (!isdigit((unsigned char)t[0]) && t[0] != '-'))
		return false;
	errno = 0;
	*v = strtol(t, &end, 10);
	return !errno && *end == '\0' && end != t && *v > -1000000000L && *v < 1000000000L;
}

/* "A..B[:STEP]": the values, or -1 (not a range: a list then), or -2 with err. */
static int parse_range(const char *name, const char *s, char ***values, struct dp_error *err)
{
	const char *dots = strstr(s, "..");
	if (!dots)
		return -1;
	const char *colon = strchr(dots + 2, ':');
	long a, b, step = 1;
	if (!parse_int(s, (size_t)(dots - s), &a) ||
	    !parse_int(dots + 2, colon ? (size_t)(colon - dots - 2) : strlen(dots + 2), &b) ||
	    (colon && !parse_int(colon + 1, strlen(colon + 1), &step)))
		return -1;
	if (step <= 0) {
		dp_err(err, DPE_INPUT, "--sweep %s=%s: the step must be 1 or more", name, s);
		return -2;
	}
	if (a > b) {
		dp_err(err, DPE_INPUT, "--sweep %s=%s: the range goes down (write %ld..%ld)", name, s,
		       b, a);
		return -2;
	}
	if ((b - a) / step + 1 > SWEEP_MAX_VALUES) {
		dp_err(err, DPE_INPUT, "--sweep %s=%s: %ld values, more than %d", name, s,
		       (b - a) / step + 1, SWEEP_MAX_VALUES);
		return -2;
	}
	for (long v = a; v <= b; v += step)
		strv_push(values, xasprintf("%ld", v));
	return 0;
}

int sweep_add(struct sweep *sw, const char *spec, struct dp_error *err)
{
	const char *eq = strchr(spec, '=');
	size_t nlen = eq ? (size_t)(eq - spec) : strlen(spec);
	_cleanup_free_ char *name = xstrndup(spec, nlen);
	if (!eq)
		return dp_err(err, DPE_INPUT, "--sweep '%s': expected NAME=V1,V2,... or NAME=A..B[:STEP]",
			      name);
	if (!valid_name(spec, nlen))
		return dp_err(err, DPE_INPUT, "--sweep: '%s' is not a parameter name (letters, digits "
			      "and _, not first a digit, at most %d)", name, NAME_MAX_LEN);
	if (streq(name, "index"))
		return dp_err(err, DPE_INPUT, "--sweep: 'index' is the task's own number ({index}): "
			      "name the parameter otherwise");
	_cleanup_free_ char *env = xasprintf("DISPATCH_PARAM_%s", name);
	for (char *c = env; *c; c++)
		*c = (char)toupper((unsigned char)*c);
	for (size_t p = 0; p < sw->nparams; p++)
		if (streq(sw->params[p].env, env))
			return dp_err(err, DPE_INPUT, "--sweep: '%s' is given twice (as '%s' and '%s': "
				      "both would be %s)", name, sw->params[p].name, name, env);
	char **values = NULL;
	int r = parse_range(name, eq + 1, &values, err);
	if (r == -2)
		return -1;
	if (r == -1) {
		for (const char *s = eq + 1;;) {
			size_t len = strcspn(s, ",");
			if (!len) {
				strv_free(values);
				return dp_err(err, DPE_INPUT, "--sweep %s: an empty value (values are "
					      "joined by ','; a value with a ',' needs a sweep file)", name);
			}
			strv_push(&values, xstrndup(s, len));
			if (strv_len(values) > SWEEP_MAX_VALUES) {
				strv_free(values);
				return dp_err(err, DPE_INPUT, "--sweep %s: more than %d values", name,
					      SWEEP_MAX_VALUES);
			}
			if (!s[len])
				break;
			s += len + 1;
		}
	}
	size_t n = strv_len(values);
	size_t total = sw->nparams ? sw->ntasks : 1;
	if (total * n > SWEEP_MAX_TASKS) {
		strv_free(values);
		return dp_err(err, DPE_INPUT, "--sweep: %zu tasks, more than %d in one sweep",
			      total * n, SWEEP_MAX_TASKS);
	}
	sw->params = xrealloc(sw->params, (sw->nparams + 1) * sizeof(*sw->params));
	sw->params[sw->nparams++] = (struct sweep_param){ .name = xstrdup(name), .env = xstrdup(env),
							  .values = values, .n = n };
	sw->ntasks = total * n;
	return 0;
}

bool sweep_spec_valid(const char *spec)
{
	struct sweep sw = SWEEP_INIT;
	bool ok = sweep_add(&sw, spec, NULL) == 0;
	sweep_release(&sw);
	return ok;
}

const char *sweep_value(const struct sweep *sw, size_t i, size_t p)
{
	size_t stride = 1;
	for (size_t k = p + 1; k < sw->nparams; k++)
		stride *= sw->params[k].n;
	return sw->params[p].values[(i / stride) % sw->params[p].n];
}

/* The task's variable var as shell text in the quotes it stands in: its value as one
 * word, part of the word around it; never the value itself, so that no value is ever
 * read as shell, whatever quotes a reading of the command got wrong. */
static void add_ref(struct strbuf *sb, char quote, const char *var)
{
	if (quote == '\'')
		strbuf_addf(sb, "'\"${%s}\"'", var);
	else if (quote == '"')
		strbuf_addf(sb, "${%s}", var);
	else
		strbuf_addf(sb, "\"${%s}\"", var);
}

/* The quotes a command's text stands in as it is read: 0, '\'' or '"', and for each
 * $( (or `, or a subshell's bare '(') it is nested in, which it is and the quotes
 * around it. */
struct quotes {
	char now;
	char kind[32], saved[32];
	size_t depth;
};

/* Reads the characters at *c that change q, moved past them; false when *c is not one. */
static bool quotes_step(struct quotes *q, const char **c)
{
	const char *p = *c;
	size_t top = q->depth ? q->depth - 1 : 0;
	if (q->now == '\'' && *p != '\'')
		return false;
	if ((*p == '`' && q->depth && q->kind[top] == '`') ||
	    (*p == ')' && !q->now && q->depth && q->kind[top] == '(')) {
		q->now = q->saved[--q->depth];
		*c = p + 1;
		return true;
	}
	if (((*p == '$' && p[1] == '(') || *p == '`' || (*p == '(' && !q->now)) &&
	    q->depth < sizeof(q->kind)) {
		q->kind[q->depth] = *p == '`' ? '`' : '(';
		q->saved[q->depth++] = q->now;
		q->now = 0;
		*c = p + (*p == '$' ? 2 : 1);
		return true;
	}
	if ((*p == '\'' && q->now != '"') || (*p == '"' && q->now != '\'')) {
		q->now = q->now ? 0 : *p;
		*c = p + 1;
		return true;
	}
	return false;
}

char *sweep_command(const struct sweep *sw, const char *command)
{
	struct strbuf sb = STRBUF_INIT;
	struct quotes q = { 0 };
	for (const char *c = command; *c;) {
		if (q.now != '\'' && *c == '\\' && c[1]) { /* an escaped character, as it is */
			strbuf_add(&sb, c, 2);
			c += 2;
			continue;
		}
		const char *from = c;
		if (quotes_step(&q, &c)) {
			strbuf_add(&sb, from, (size_t)(c - from));
			continue;
		}
		const char *close = *c == '{' && (c == command || c[-1] != '$') ? strchr(c, '}') : NULL;
		const char *var = NULL;
		if (close) {
			size_t len = (size_t)(close - c - 1);
			if (len == 5 && strncmp(c + 1, "index", 5) == 0)
				var = "DISPATCH_SWEEP_INDEX";
			for (size_t p = 0; !var && p < sw->nparams; p++)
				if (strlen(sw->params[p].name) == len &&
				    strncmp(c + 1, sw->params[p].name, len) == 0)
					var = sw->params[p].env;
		}
		if (var) {
			add_ref(&sb, q.now, var);
			c = close + 1;
		} else {
			strbuf_addch(&sb, *c++);
		}
	}
	return strbuf_detach(&sb);
}

void sweep_script(struct strbuf *sb, const struct sweep *sw, const char *command)
{
	strbuf_adds(sb, "case $DISPATCH_SWEEP_INDEX in\n");
	for (size_t i = 0; i < sw->ntasks; i++) {
		strbuf_addf(sb, "%zu) export", i);
		for (size_t p = 0; p < sw->nparams; p++) {
			strbuf_addf(sb, " %s=", sw->params[p].env);
			sh_quote(sb, sweep_value(sw, i, p));
		}
		strbuf_adds(sb, " ;;\n");
	}
	strbuf_addf(sb, "*)\n\techo \"dispatch: task $DISPATCH_SWEEP_INDEX is not one of this "
		    "sweep's %zu (0-%zu)\" >&2\n\texit 1\n\t;;\nesac\n", sw->ntasks,
		    sw->ntasks ? sw->ntasks - 1 : 0);
	_cleanup_free_ char *cmd = sweep_command(sw, command);
	strbuf_adds(sb, "dispatch_command=");
	sh_quote(sb, cmd);
	strbuf_addch(sb, '\n');
}

char *sweep_specs_json(char *const *specs)
{
	cJSON *a = cJSON_CreateArray();
	for (size_t i = 0; specs && specs[i]; i++)
		cJSON_AddItemToArray(a, cJSON_CreateString(specs[i]));
	char *text = cJSON_PrintUnformatted(a);
	cJSON_Delete(a);
	char *out = xstrdup(text ? text : "[]");
	cJSON_free(text);
	return out;
}

int sweep_from_json(struct sweep *sw, const char *json, struct dp_error *err)
{
	cJSON *a = json ? cJSON_Parse(json) : NULL;
	int r = 0;
	if (!cJSON_IsArray(a))
		r = dp_err(err, DPE_INPUT, "the ledger's sweep parameters are not a JSON array");
	const cJSON *v;
	cJSON_ArrayForEach(v, a)
	{
		if (r == 0 && (!cJSON_IsString(v) || sweep_add(sw, v->valuestring, err) < 0))
			r = cJSON_IsString(v) ? -1
				: dp_err(err, DPE_INPUT, "the ledger's sweep parameters hold a non-string");
	}
	cJSON_Delete(a);
	return r;
}

bool sweep_task_of(const struct sweep *sw, const char *job_id, const char *row_id,
		   size_t *index)
{
	size_t n = strlen(job_id);
	long k;
	if (!job_id[0] || strncmp(row_id, job_id, n) != 0 || row_id[n] != '_' ||
	    !parse_long(row_id + n + 1, 0, SWEEP_MAX_TASKS, &k) || (size_t)k >= sw->ntasks)
		return false;
	*index = (size_t)k;
	return true;
}

char *sweep_task_text(const struct sweep *sw, size_t i)
{
	struct strbuf sb = STRBUF_INIT;
	for (size_t p = 0; p < sw->nparams; p++) {
		_cleanup_free_ char *v = printable(sweep_value(sw, i, p));
		strbuf_addf(&sb, "%s%s=%s", p ? " " : "", sw->params[p].name, v);
	}
	return strbuf_detach(&sb);
}

void sweep_release(struct sweep *sw)
{
	for (size_t p = 0; p < sw->nparams; p++) {
		free(sw->params[p].name);
		free(sw->params[p].env);
		strv_free(sw->params[p].values);
	}
	free(sw->params);
	*sw = (struct sweep)SWEEP_INIT;
}
