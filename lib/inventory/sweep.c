/* SPDX-License-Identifier: MIT */
/* A sweep's parameters, its tasks and their commands: sweep.h. */
#include "inventory/sweep.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "base/shquote.h"
#include "base/termesc.h"
#include "base/util.h"
#include "inventory/yaml_tree.h"

#define NAME_MAX_LEN 64
#define SHOWN_MAX 60            /* bytes of a value or key from a file in a message */
#define LEDGER "the ledger's sweep"

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

/* "A..B[:STEP]": the values, or -1 (not a range: a list then), or -2 with err, its
 * message after at ("--sweep n=5..1", "FILE:LINE:COL: 'n: 5..1'"). */
static int parse_range(const char *at, const char *s, char ***values, struct dp_error *err)
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
		dp_err(err, DPE_INPUT, "%s: the step must be 1 or more", at);
		return -2;
	}
	if (a > b) {
		dp_err(err, DPE_INPUT, "%s: the range goes down (write %ld..%ld)", at, b, a);
		return -2;
	}
	if ((b - a) / step + 1 > SWEEP_MAX_VALUES) {
		dp_err(err, DPE_INPUT, "%s: %ld values, more than %d", at, (b - a) / step + 1,
		       SWEEP_MAX_VALUES);
		return -2;
	}
	for (long v = a; v <= b; v += step)
		strv_push(values, xasprintf("%ld", v));
	return 0;
}

/* s for a message: control characters written out (printable()), cut after
 * SHOWN_MAX bytes (at a character's start) with "...". Caller frees. */
static char *shown(const char *s)
{
	size_t len = strlen(s);
	if (len <= SHOWN_MAX)
		return printable(s);
	len = SHOWN_MAX;
	while (len && ((unsigned char)s[len] & 0xc0) == 0x80)
		len--;
	struct strbuf sb = STRBUF_INIT;
	strbuf_add_escaped(&sb, s, len);
	strbuf_adds(&sb, "...");
	return strbuf_detach(&sb);
}

/* Whether name may be sw's next parameter: 0 with *env its variable (caller frees),
 * or -1 with err, the message after at ("--sweep", "FILE:LINE:COL"). */
static int new_name(const struct sweep *sw, const char *at, const char *name, char **env,
		    struct dp_error *err)
{
	if (!valid_name(name, strlen(name))) {
		_cleanup_free_ char *s = shown(name);
		return dp_err(err, DPE_INPUT, "%s: '%s' is not a parameter name (letters, digits and "
			      "_, not first a digit, at most %d)", at, s, NAME_MAX_LEN);
	}
	if (streq(name, "index"))
		return dp_err(err, DPE_INPUT, "%s: 'index' is the task's own number ({index}): name "
			      "the parameter otherwise", at);
	char *e = xasprintf("DISPATCH_PARAM_%s", name);
	for (char *c = e; *c; c++)
		*c = (char)toupper((unsigned char)*c);
	for (size_t p = 0; p < sw->nparams; p++)
		if (streq(sw->params[p].env, e)) {
			int r = dp_err(err, DPE_INPUT, "%s: '%s' is given twice (as '%s' and '%s': both "
				       "would be %s)", at, name, sw->params[p].name, name, e);
			free(e);
			return r;
		}
	*env = e;
	return 0;
}

/* Adds a parameter (name checked by new_name), taking env and values. */
static void push_param(struct sweep *sw, const char *name, char *env, char **values)
{
	sw->params = xrealloc(sw->params, (sw->nparams + 1) * sizeof(*sw->params));
	sw->params[sw->nparams++] = (struct sweep_param){ .name = xstrdup(name), .env = env,
							  .values = values, .n = strv_len(values) };
}

int sweep_add(struct sweep *sw, const char *spec, struct dp_error *err)
{
	const char *eq = strchr(spec, '=');
	size_t nlen = eq ? (size_t)(eq - spec) : strlen(spec);
	_cleanup_free_ char *name = xstrndup(spec, nlen);
	if (!eq)
		return dp_err(err, DPE_INPUT, "--sweep '%s': expected NAME=V1,V2,... or NAME=A..B[:STEP]",
			      name);
	if (sw->list)
		return dp_err(err, DPE_INPUT, "--sweep %s: a sweep file's list: takes no more "
			      "parameters (give them in the file)", name);
	_cleanup_free_ char *env = NULL;
	if (new_name(sw, "--sweep", name, &env, err) < 0)
		return -1;
	_cleanup_free_ char *at = xasprintf("--sweep %s=%s", name, eq + 1);
	_cleanup_strv_free_ char **values = NULL;
	int r = parse_range(at, eq + 1, &values, err);
	if (r == -2)
		return -1;
	if (r == -1) {
		for (const char *s = eq + 1;;) {
			size_t len = strcspn(s, ",");
			if (!len)
				return dp_err(err, DPE_INPUT, "--sweep %s: an empty value (values are "
					      "joined by ','; a value with a ',' needs a sweep file)", name);
			strv_push(&values, xstrndup(s, len));
			if (strv_len(values) > SWEEP_MAX_VALUES)
				return dp_err(err, DPE_INPUT, "--sweep %s: more than %d values", name,
					      SWEEP_MAX_VALUES);
			if (!s[len])
				break;
			s += len + 1;
		}
	}
	size_t n = strv_len(values);
	size_t total = sw->nparams ? sw->ntasks : 1;
	if (total * n > SWEEP_MAX_TASKS)
		return dp_err(err, DPE_INPUT, "--sweep: %zu tasks, more than %d in one sweep",
			      total * n, SWEEP_MAX_TASKS);
	push_param(sw, name, env, values);
	env = NULL;
	values = NULL;
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

/* ---- sweep files ---- */

/* err as "NAME:LINE:COL: " and the message, for node n of file name. */
static int at_err(struct dp_error *err, const char *name, const struct ynode *n, const char *fmt,
		  ...) _printf_(4, 5);

static int at_err(struct dp_error *err, const char *name, const struct ynode *n, const char *fmt,
		  ...)
{
	_cleanup_strbuf_ struct strbuf msg = STRBUF_INIT;
	va_list ap;
	va_start(ap, fmt);
	strbuf_vaddf(&msg, fmt, ap);
	va_end(ap);
	return dp_err(err, DPE_INPUT, "%s:%d:%d: %s", name, n->line, n->col, msg.buf);
}

/* A value of parameter pname: a scalar, and not an empty plain one (YAML's null). */
static int file_value(const char *file, const char *pname, const struct ynode *v,
		      struct dp_error *err)
{
	if (v->kind != YN_SCALAR)
		return at_err(err, file, v, "a value of '%s' is %s: each value is one scalar, a "
			      "number or a string (quote a string that holds ': ' or starts with "
			      "'[' or '{')", pname, ynode_kind_name(v));
	if (!v->quoted && !v->value[0])
		return at_err(err, file, v, "a value of '%s' is empty: write \"\" for an empty "
			      "string", pname);
	return 0;
}

/* grid: NAME: [V1, V2, ...] or NAME: "A..B[:STEP]", each a factor of the product. */
static int file_grid(struct sweep *sw, const char *file, const struct ynode *key,
		     const struct ynode *g, struct dp_error *err)
{
	if (ynode_is_null(g) || (g->kind == YN_MAP && !g->n))
		return at_err(err, file, ynode_is_null(g) ? key : g, "'grid' has no parameters: "
			      "give each with its values (lr: [0.1, 0.01])");
	if (g->kind != YN_MAP)
		return at_err(err, file, g, "'grid' must be a mapping of parameters to their values "
			      "(lr: [0.1, 0.01]), not %s", ynode_kind_name(g));
	for (size_t i = 0; i < g->n; i++) {
		const struct ynode *k = g->keys[i], *v = g->items[i];
		const char *name = k->value;
		_cleanup_free_ char *at = xasprintf("%s:%d:%d", file, k->line, k->col);
		_cleanup_free_ char *env = NULL;
		_cleanup_strv_free_ char **values = NULL;
		if (new_name(sw, at, name, &env, err) < 0)
			return -1;
		if (ynode_is_null(v))
			return at_err(err, file, k, "'%s' has no values: give a list ([0.1, 0.01]) or "
				      "a range of integers (\"1..4\")", name);
		if (v->kind == YN_SEQ) {
			if (!v->n)
				return at_err(err, file, v, "'%s' has no values: give one or more "
					      "([0.1, 0.01])", name);
			if (v->n > SWEEP_MAX_VALUES)
				return at_err(err, file, v, "'%s' has %zu values, more than %d", name,
					      v->n, SWEEP_MAX_VALUES);
			values = xcalloc(v->n + 1, sizeof(*values));
			for (size_t j = 0; j < v->n; j++) {
				if (file_value(file, name, v->items[j], err) < 0)
					return -1;
				values[j] = xstrdup(v->items[j]->value);
			}
		} else if (v->kind == YN_SCALAR) {
			_cleanup_free_ char *text = shown(v->value);
			_cleanup_free_ char *vat = xasprintf("%s:%d:%d: '%s: %s'", file, v->line, v->col,
							     name, text);
			int r = parse_range(vat, v->value, &values, err);
			if (r == -2)
				return -1;
			if (r == -1)
				return at_err(err, file, v, "'%s: %s' is neither a list nor a range of "
					      "integers A..B[:STEP] (one value is a list of one: "
					      "[%s])", name, text, text);
		} else {
			return at_err(err, file, v, "the values of '%s' must be a list ([0.1, 0.01]) "
				      "or a range of integers (\"1..4\"), not %s", name,
				      ynode_kind_name(v));
		}
		size_t n = strv_len(values);
		size_t total = sw->nparams ? sw->ntasks : 1;
		if (total * n > SWEEP_MAX_TASKS)
			return at_err(err, file, k, "%zu tasks with '%s', more than %d in one sweep: "
				      "split it into several", total * n, name, SWEEP_MAX_TASKS);
		push_param(sw, name, env, values);
		env = NULL;
		values = NULL;
		sw->ntasks = total * n;
	}
	return 0;
}

/* Parameter name of sw, or -1. */
static long param_index(const struct sweep *sw, const char *name)
{
	for (size_t p = 0; p < sw->nparams; p++)
		if (streq(sw->params[p].name, name))
			return (long)p;
	return -1;
}

/* "lr, seed": sw's names. Caller frees. */
static char *names_text(const struct sweep *sw)
{
	struct strbuf sb = STRBUF_INIT;
	strbuf_adds(&sb, "");
	for (size_t p = 0; p < sw->nparams; p++)
		strbuf_addf(&sb, "%s%s", p ? ", " : "", sw->params[p].name);
	return strbuf_detach(&sb);
}

/* A task of list: whose names are not task 0's (or it has not all of them). */
static int list_names_differ(const struct sweep *sw, const char *file, const struct ynode *l,
			     size_t i, const struct ynode *k, struct dp_error *err)
{
	_cleanup_free_ char *names = names_text(sw);
	const struct ynode *first = l->items[0];
	if (!k) { /* one of task 0's is missing */
		size_t p = 0;
		while (p < sw->nparams && sw->params[p].values[i])
			p++;
		return at_err(err, file, l->items[i], "task %zu has no '%s': every task of 'list' "
			      "gives the names of task 0 (line %d: %s)", i, sw->params[p].name,
			      first->line, names);
	}
	_cleanup_free_ char *name = shown(k->value);
	const char **cands = xcalloc(sw->nparams, sizeof(*cands));
	for (size_t p = 0; p < sw->nparams; p++)
		cands[p] = sw->params[p].name;
	const char *guess = suggest_word(k->value, cands, sw->nparams);
	int r = guess ? at_err(err, file, k, "task %zu has '%s', which task 0 (line %d) has not "
			       "(did you mean '%s'?): every task of 'list' gives the same names",
			       i, name, first->line, guess)
		      : at_err(err, file, k, "task %zu has '%s', which task 0 (line %d) has not: "
			       "every task of 'list' gives the same names (%s)", i, name,
			       first->line, names);
	free(cands);
	return r;
}

/* list: - {NAME: V, ...}, one task each, every one with task 0's names. */
static int file_list(struct sweep *sw, const char *file, const struct ynode *key,
		     const struct ynode *l, struct dp_error *err)
{
	if (ynode_is_null(l) || (l->kind == YN_SEQ && !l->n))
		return at_err(err, file, ynode_is_null(l) ? key : l, "'list' has no tasks: give "
			      "one per entry (- {lr: 0.1, seed: 1})");
	if (l->kind != YN_SEQ)
		return at_err(err, file, l, "'list' must be a list of tasks (- {lr: 0.1, seed: 1}), "
			      "not %s", ynode_kind_name(l));
	if (l->n > SWEEP_MAX_TASKS)
		return at_err(err, file, l, "'list' has %zu tasks, more than %d in one sweep: split "
			      "it into several", l->n, SWEEP_MAX_TASKS);
	sw->list = true;
	for (size_t i = 0; i < l->n; i++) {
		const struct ynode *e = l->items[i];
		if (e->kind != YN_MAP || !e->n)
			return at_err(err, file, e, "task %zu of 'list' is %s: each task is a mapping "
				      "of its parameters to their values ({lr: 0.1, seed: 1})", i,
				      e->kind == YN_MAP ? "an empty mapping" : ynode_kind_name(e));
		for (size_t j = 0; i == 0 && j < e->n; j++) {
			const struct ynode *k = e->keys[j];
			_cleanup_free_ char *at = xasprintf("%s:%d:%d", file, k->line, k->col);
			char *env;
			if (new_name(sw, at, k->value, &env, err) < 0)
				return -1;
			push_param(sw, k->value, env, xcalloc(l->n + 1, sizeof(char *)));
			sw->params[sw->nparams - 1].n = l->n;
		}
		for (size_t j = 0; j < e->n; j++) {
			const struct ynode *k = e->keys[j], *v = e->items[j];
			long p = param_index(sw, k->value);
			if (p < 0)
				return list_names_differ(sw, file, l, i, k, err);
			if (file_value(file, k->value, v, err) < 0)
				return -1;
			sw->params[p].values[i] = xstrdup(v->value);
		}
		if (e->n != sw->nparams)
			return list_names_differ(sw, file, l, i, NULL, err);
	}
	sw->ntasks = l->n;
	return 0;
}

int sweep_parse_yaml(struct sweep *sw, const char *name, const char *buf, size_t len,
		     struct dp_error *err)
{
	_cleanup_ynode_ struct ynode *root = NULL;
	if (yaml_parse(name, buf, len, &root, err) < 0)
		return -1;
	if (!root)
		return dp_err(err, DPE_INPUT, "%s:1:1: the sweep file is empty: give 'grid:' (every "
			      "combination of its parameters' values) or 'list:' (the tasks one by "
			      "one)", name);
	if (root->kind != YN_MAP)
		return at_err(err, name, root, "a sweep file is a mapping with 'grid:' or 'list:', "
			      "not %s", ynode_kind_name(root));
	const struct ynode *key = NULL, *body = NULL;
	static const char *const keys[] = { "grid", "list" };
	for (size_t i = 0; i < root->n; i++) {
		const struct ynode *k = root->keys[i];
		if (!streq(k->value, "grid") && !streq(k->value, "list")) {
			_cleanup_free_ char *s = shown(k->value);
			const char *guess = suggest_word(k->value, keys, ARRAY_SIZE(keys));
			if (guess)
				return at_err(err, name, k, "unknown key '%s' (did you mean '%s'?)", s,
					      guess);
			return at_err(err, name, k, "unknown key '%s': a sweep file has 'grid:' (every "
				      "combination) or 'list:' (the tasks one by one)", s);
		}
		if (key)
			return at_err(err, name, k, "both 'grid' and 'list': a sweep file gives one "
				      "(grid: every combination of the values; list: the tasks one by "
				      "one)");
		key = k;
		body = root->items[i];
	}
	if (!key)
		return at_err(err, name, root, "no 'grid:' or 'list:': give one (grid: every "
			      "combination of the values; list: the tasks one by one)");
	struct sweep got = SWEEP_INIT;
	if ((streq(key->value, "grid") ? file_grid(&got, name, key, body, err)
				       : file_list(&got, name, key, body, err)) < 0) {
		sweep_release(&got);
		return -1;
	}
	sweep_release(sw);
	*sw = got;
	return 0;
}

int sweep_load_file(struct sweep *sw, const char *path, struct dp_error *err)
{
	_cleanup_fclose_ FILE *fp = fopen(path, "r");
	_cleanup_strbuf_ struct strbuf buf = STRBUF_INIT;
	char chunk[65536];
	size_t n;
	/* at most SWEEP_FILE_MAX bytes: a pipe or a device ends too */
	while (fp && buf.len <= SWEEP_FILE_MAX && (n = fread(chunk, 1, sizeof(chunk), fp)) > 0)
		strbuf_add(&buf, chunk, n);
	if (!fp || ferror(fp))
		return dp_err(err, DPE_INPUT, "cannot read sweep file '%s': %s (--sweep-file takes a "
			      "local YAML file: grid: or list:)", path, strerror(errno));
	if (buf.len > SWEEP_FILE_MAX)
		return dp_err(err, DPE_INPUT, "sweep file '%s' is larger than %d MiB: split the sweep",
			      path, SWEEP_FILE_MAX >> 20);
	return sweep_parse_yaml(sw, path, buf.buf, buf.len, err);
}

const char *sweep_value(const struct sweep *sw, size_t i, size_t p)
{
	if (sw->list)
		return sw->params[p].values[i];
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

/* ---- the ledger's form ---- */

static cJSON *strings_json(char *const *v, size_t n)
{
	cJSON *a = cJSON_CreateArray();
	for (size_t i = 0; i < n; i++)
		cJSON_AddItemToArray(a, cJSON_CreateString(v[i]));
	return a;
}

char *sweep_json(const struct sweep *sw)
{
	cJSON *doc = cJSON_CreateObject();
	if (sw->list) {
		cJSON *l = cJSON_AddObjectToObject(doc, "list");
		cJSON *names = cJSON_AddArrayToObject(l, "names");
		for (size_t p = 0; p < sw->nparams; p++)
			cJSON_AddItemToArray(names, cJSON_CreateString(sw->params[p].name));
		cJSON *tasks = cJSON_AddArrayToObject(l, "tasks");
		for (size_t i = 0; i < sw->ntasks; i++) {
			cJSON *t = cJSON_CreateArray();
			for (size_t p = 0; p < sw->nparams; p++)
				cJSON_AddItemToArray(t, cJSON_CreateString(sw->params[p].values[i]));
			cJSON_AddItemToArray(tasks, t);
		}
	} else {
		cJSON *g = cJSON_AddArrayToObject(doc, "grid");
		for (size_t p = 0; p < sw->nparams; p++) {
			cJSON *o = cJSON_CreateObject();
			cJSON_AddStringToObject(o, "name", sw->params[p].name);
			cJSON_AddItemToObject(o, "values", strings_json(sw->params[p].values,
									 sw->params[p].n));
			cJSON_AddItemToArray(g, o);
		}
	}
	char *text = cJSON_PrintUnformatted(doc);
	cJSON_Delete(doc);
	char *out = xstrdup(text ? text : "{\"grid\":[]}");
	cJSON_free(text);
	return out;
}

/* a's items, all strings, as a strv of at least 1 and at most max; NULL if not. */
static char **json_strings(const cJSON *a, size_t max)
{
	int n = cJSON_GetArraySize(a);
	if (!cJSON_IsArray(a) || n < 1 || (size_t)n > max)
		return NULL;
	char **v = xcalloc((size_t)n + 1, sizeof(*v));
	size_t i = 0;
	const cJSON *s;
	cJSON_ArrayForEach(s, a)
	{
		if (!cJSON_IsString(s)) {
			strv_free(v);
			return NULL;
		}
		v[i++] = xstrdup(s->valuestring);
	}
	return v;
}

/* The form before sweep files: ["lr=0.1,0.01", "seed=1..3"]. */
static int from_specs(struct sweep *sw, const cJSON *a, struct dp_error *err)
{
	const cJSON *v;
	cJSON_ArrayForEach(v, a)
	{
		if (!cJSON_IsString(v))
			return dp_err(err, DPE_INPUT, LEDGER "'s parameters hold a non-string");
		if (sweep_add(sw, v->valuestring, err) < 0)
			return -1;
	}
	return 0;
}

/* {"grid":[{"name":"lr","values":["0.1","0.01"]},...]} */
static int from_grid(struct sweep *sw, const cJSON *g, struct dp_error *err)
{
	if (!cJSON_IsArray(g) || !cJSON_GetArraySize(g))
		return dp_err(err, DPE_INPUT, LEDGER "'s grid is not a list of parameters");
	const cJSON *o;
	cJSON_ArrayForEach(o, g)
	{
		const cJSON *name = cJSON_GetObjectItemCaseSensitive(o, "name");
		if (!cJSON_IsString(name))
			return dp_err(err, DPE_INPUT, LEDGER "'s grid has a parameter without a name");
		_cleanup_free_ char *env = NULL;
		if (new_name(sw, LEDGER, name->valuestring, &env, err) < 0)
			return -1;
		char **values = json_strings(cJSON_GetObjectItemCaseSensitive(o, "values"),
					     SWEEP_MAX_VALUES);
		size_t total = sw->nparams ? sw->ntasks : 1;
		if (!values || total * strv_len(values) > SWEEP_MAX_TASKS) {
			strv_free(values);
			return dp_err(err, DPE_INPUT, LEDGER "'s values of '%s' are not 1 to %d "
				      "strings within %d tasks", name->valuestring, SWEEP_MAX_VALUES,
				      SWEEP_MAX_TASKS);
		}
		push_param(sw, name->valuestring, env, values);
		env = NULL;
		sw->ntasks = total * sw->params[sw->nparams - 1].n;
	}
	return 0;
}

/* {"list":{"names":["lr","seed"],"tasks":[["0.1","1"],...]}} */
static int from_list(struct sweep *sw, const cJSON *l, struct dp_error *err)
{
	const cJSON *names = cJSON_GetObjectItemCaseSensitive(l, "names");
	const cJSON *tasks = cJSON_GetObjectItemCaseSensitive(l, "tasks");
	int ntasks = cJSON_GetArraySize(tasks);
	_cleanup_strv_free_ char **nv = json_strings(names, SIZE_MAX);
	if (!nv || !cJSON_IsArray(tasks) || ntasks < 1 || ntasks > SWEEP_MAX_TASKS)
		return dp_err(err, DPE_INPUT, LEDGER "'s list has no names or not 1 to %d tasks",
			      SWEEP_MAX_TASKS);
	sw->list = true;
	for (size_t p = 0; nv[p]; p++) {
		char *env;
		if (new_name(sw, LEDGER, nv[p], &env, err) < 0)
			return -1;
		push_param(sw, nv[p], env, xcalloc((size_t)ntasks + 1, sizeof(char *)));
		sw->params[p].n = (size_t)ntasks;
	}
	size_t i = 0;
	const cJSON *t;
	cJSON_ArrayForEach(t, tasks)
	{
		_cleanup_strv_free_ char **v = json_strings(t, sw->nparams);
		if (!v || strv_len(v) != sw->nparams)
			return dp_err(err, DPE_INPUT, LEDGER "'s task %zu is not %zu strings", i,
				      sw->nparams);
		for (size_t p = 0; p < sw->nparams; p++) {
			sw->params[p].values[i] = v[p];
			v[p] = NULL;
		}
		i++;
	}
	sw->ntasks = (size_t)ntasks;
	return 0;
}

int sweep_from_json(struct sweep *sw, const char *json, struct dp_error *err)
{
	cJSON *doc = json ? cJSON_Parse(json) : NULL;
	const cJSON *grid = cJSON_GetObjectItemCaseSensitive(doc, "grid");
	const cJSON *list = cJSON_GetObjectItemCaseSensitive(doc, "list");
	struct sweep got = SWEEP_INIT;
	int r;
	if (cJSON_IsArray(doc))
		r = from_specs(&got, doc, err);
	else if (cJSON_IsObject(doc) && grid && !list)
		r = from_grid(&got, grid, err);
	else if (cJSON_IsObject(doc) && list && !grid)
		r = from_list(&got, list, err);
	else
		r = dp_err(err, DPE_INPUT, LEDGER " is none of the forms dispatch writes "
			   "({\"grid\": ...}, {\"list\": ...} or an array of --sweep values)");
	cJSON_Delete(doc);
	if (r < 0) {
		sweep_release(&got);
		return -1;
	}
	sweep_release(sw);
	*sw = got;
	return 0;
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
