/* SPDX-License-Identifier: MIT */
/*
 * Job options: one table (name, kind, where in struct jobspec, checker) drives setting
 * from the command line, reading a job file and merging the two.
 */
#include "inventory/jobspec.h"
#include "inventory/jobspec_options.h"
#include "inventory/sbatch_script.h"

#include <ctype.h>
#include <errno.h>
#include <stddef.h>
#include <strings.h>

#include "base/shquote.h"
#include "base/strbuf.h"
#include "container/container.h"
#include "inventory/sweep.h"
#include "inventory/yaml_tree.h"

enum jo_kind { JO_STR, JO_COUNT, JO_FLAG, JO_LIST, JO_ENV };

struct jobopt {
	const char *name;
	enum jo_kind kind;
	size_t off;
	bool (*check)(const char *s);   /* JO_STR and JO_LIST values; NULL: any text */
	const char *expect;             /* what a valid value looks like */
	bool uniq;                      /* JO_LIST: drop repeats */
};

#define MAX_COUNT 1000000L
#define MAX_NAME 200

static bool has_control(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return true;
	return false;
}

static bool check_line(const char *s)   /* one line of text: paths, module names */
{
	return *s && !has_control(s);
}

static bool check_word(const char *s)   /* no spaces either: partitions, accounts, nodes */
{
	if (!*s || has_control(s))
		return false;
	for (; *s; s++)
		if (*s == ' ')
			return false;
	return true;
}

static bool check_name(const char *s)
{
	return check_line(s) && strlen(s) <= MAX_NAME;
}

static bool check_ident(const char *s)  /* chips, uv groups: [A-Za-z0-9._-]+ */
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
		      *s == '.' || *s == '_' || *s == '-'))
			return false;
	return true;
}

static bool check_text(const char *s)   /* shell text: setup commands */
{
	for (const char *p = s; *p; p++)
		if (*p != ' ' && *p != '\t' && *p != '\n')
			return true;
	return false;
}

static bool check_image(const char *s)
{
	return check_word(s) && s[0] != '-';
}

static bool check_sbatch(const char *s)
{
	return check_line(s) && s[0] == '-' && s[1] != '\0';
}

/* ---- value syntax, as sbatch reads it ---- */

/* Reads 1-9 digits at *p into *v. */
static bool digits(const char **p, long *v)
{
	const char *s = *p;
	long n = 0;
	int len = 0;
	while (*s >= '0' && *s <= '9' && len < 10) {
		n = n * 10 + (*s - '0');
		s++;
		len++;
	}
	if (len == 0 || len > 9)
		return false;
	*p = s;
	*v = n;
	return true;
}

bool jobspec_valid_time(const char *s)
{
	return jobspec_time_seconds(s) >= 0;
}

long jobspec_time_seconds(const char *s)
{
	if (!strcasecmp(s, "unlimited") || !strcasecmp(s, "infinite"))
		return 0;
	long f[3], days = -1;
	int n = 0;
	const char *p = s;
	if (strchr(s, '-')) {
		if (!digits(&p, &days) || *p++ != '-')
			return -1;
	}
	for (;;) {
		if (n == 3 || !digits(&p, &f[n]))
			return -1;
		n++;
		if (*p == '\0')
			break;
		if (*p++ != ':')
			return -1;
	}
	if (days >= 0) { /* D-HH, D-HH:MM, D-HH:MM:SS */
		if (!(f[0] < 24 && (n < 2 || f[1] < 60) && (n < 3 || f[2] < 60)))
			return -1;
		return days * 86400 + f[0] * 3600 + (n > 1 ? f[1] * 60 : 0) + (n > 2 ? f[2] : 0);
	}
	if (n == 1) /* minutes */
		return f[0] * 60;
	if (n == 2) /* MM:SS */
		return f[1] < 60 ? f[0] * 60 + f[1] : -1;
	return f[1] < 60 && f[2] < 60 ? f[0] * 3600 + f[1] * 60 + f[2] : -1; /* HH:MM:SS */
}

bool jobspec_valid_mem(const char *s)
{
	long v;
	if (!digits(&s, &v))
		return false;
	if (*s && strchr("KMGTkmgt", *s))
		s++;
	return *s == '\0';
}

bool jobspec_valid_array(const char *s)
{
	const char *p = s;
	for (;;) {
		long a, b, step;
		if (!digits(&p, &a))
			return false;
		if (*p == '-') {
			p++;
			if (!digits(&p, &b) || b < a)
				return false;
			if (*p == ':') {
				p++;
				if (!digits(&p, &step) || step < 1)
					return false;
			}
		}
		if (*p == ',') {
			p++;
			continue;
		}
		break;
	}
	if (*p == '%') {
		long throttle;
		p++;
		if (!digits(&p, &throttle) || throttle < 1)
			return false;
	}
	return *p == '\0';
}

/* Whether the n characters at s end as jobscript_stage_name's names do. */
static bool stage_shape(const char *s, size_t n)
{
	const char *shape = "-dddddddd-dddddd-xxxx";
	size_t k = strlen(shape);
	if (n <= k)
		return false;
	for (size_t i = 0; i < k; i++) {
		char c = s[n - k + i];
		bool ok = shape[i] == '-' ? c == '-'
			: shape[i] == 'd' ? (c >= '0' && c <= '9')
			: (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
		if (!ok)
			return false;
	}
	return true;
}

/* The length of the plain host's job id at s (jobscript_stage_name's
 * NAME-YYYYMMDD-HHMMSS-XXXX, or a sweep's task's: that and -K, K at most 5 digits
 * (SWEEP_MAX_TASKS); then @HOST as submit prints it, optional), else 0. */
bool jobspec_plain_task_id(const char *id, size_t *stage_len)
{
	size_t n = strlen(id), task = 0;
	while (task < n && id[n - 1 - task] >= '0' && id[n - 1 - task] <= '9')
		task++;
	if (task < 1 || task > 5 || task >= n || id[n - 1 - task] != '-' ||
	    !stage_shape(id, n - 1 - task))
		return false;
	if (stage_len)
		*stage_len = n - 1 - task;
	return true;
}

static size_t plain_job_id(const char *s)
{
	size_t n = strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-");
	if (s[0] == '.' || s[0] == '-')
		return 0;
	_cleanup_free_ char *id = xstrndup(s, n);
	if (!stage_shape(s, n) && !jobspec_plain_task_id(id, NULL))
		return 0;
	if (s[n] == '@') {
		size_t h = strspn(s + n + 1, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-");
		if (!h)
			return 0;
		n += 1 + h;
	}
	return n;
}

bool jobspec_valid_dependency(const char *s)
{
	static const char *const types[] = { "after", "afterany", "afterburstbuffer", "aftercorr",
					     "afternotok", "afterok" };
	bool comma = strchr(s, ',') != NULL, any = strchr(s, '?') != NULL;
	if (comma && any) /* sbatch takes all-of (,) or any-of (?), not both */
		return false;
	const char *p = s;
	for (;;) {
		size_t len = strcspn(p, ":,?");
		if (len == 9 && !strncmp(p, "singleton", 9)) {
			p += 9;
		} else {
			bool known = false;
			for (size_t i = 0; i < ARRAY_SIZE(types); i++)
				if (strlen(types[i]) == len && !strncmp(p, types[i], len))
					known = true;
			if (!known || p[len] != ':')
				return false;
			p += len;
			while (*p == ':') { /* :JOBID[_TASK][+MINUTES] ... */
				long v;
				p++;
				size_t plain = plain_job_id(p);
				if (plain) { /* a plain host's job */
					p += plain;
					continue;
				}
				if (!digits(&p, &v))
					return false;
				if (*p == '_' && (p++, !digits(&p, &v)))
					return false;
				if (*p == '+' && (p++, !digits(&p, &v)))
					return false;
			}
		}
		if (*p == '\0')
			return true;
		if (*p != ',' && *p != '?')
			return false;
		p++;
	}
}

bool jobspec_valid_signal(const char *s)
{
	static const char *const names[] = { "HUP", "INT", "QUIT", "ABRT", "KILL", "ALRM", "TERM",
					     "USR1", "USR2", "CONT", "STOP", "TSTP", "TTIN", "TTOU",
					     "URG", "XCPU", "XFSZ", "VTALRM", "PROF", "WINCH", "PIPE" };
	const char *p = s;
	if (!strncmp(p, "RB:", 3) || !strncmp(p, "BR:", 3))
		p += 3;
	else if (!strncmp(p, "R:", 2) || !strncmp(p, "B:", 2))
		p += 2;
	size_t len = strcspn(p, "@");
	const char *end = p + len;
	long v;
	if (*p >= '0' && *p <= '9') {
		const char *q = p;
		if (!digits(&q, &v) || q != p + len || v < 1 || v > 64)
			return false;
	} else {
		const char *name = p;
		if (len > 3 && !strncasecmp(name, "SIG", 3)) {
			name += 3;
			len -= 3;
		}
		bool known = false;
		for (size_t i = 0; i < ARRAY_SIZE(names); i++)
			if (strlen(names[i]) == len && !strncasecmp(name, names[i], len))
				known = true;
		if (!known)
			return false;
	}
	p = end;
	if (*p == '@') {
		p++;
		if (!digits(&p, &v) || v > 65535)
			return false;
	}
	return *p == '\0';
}

/* ---- the run ---- */

static const struct {
	const char *name;
	unsigned bit;
} run_events[] = {
	{ "timeout", RUN_ON_TIMEOUT },
	{ "preempted", RUN_ON_PREEMPTED },
	{ "node-fail", RUN_ON_NODE_FAIL },
	{ "lost", RUN_ON_LOST },
	{ "error", RUN_ON_ERROR },
};

/* The bits of a comma-separated event list; 0 when a word is not an event. */
static unsigned parse_events(const char *s)
{
	unsigned bits = 0;
	for (const char *p = s;;) {
		size_t len = strcspn(p, ",");
		unsigned bit = 0;
		for (size_t i = 0; i < ARRAY_SIZE(run_events); i++)
			if (strlen(run_events[i].name) == len && !strncmp(p, run_events[i].name, len))
				bit = run_events[i].bit;
		if (!bit)
			return 0;
		bits |= bit;
		if (p[len] == '\0')
			return bits;
		p += len + 1;
	}
}

bool jobspec_valid_restart_on(const char *s)
{
	return parse_events(s) != 0;
}

bool jobspec_valid_max_restarts(const char *s)
{
	long v;
	return digits(&s, &v) && *s == '\0' && v <= 1000;
}

bool jobspec_valid_sample(const char *s)
{
	long v;
	return digits(&s, &v) && *s == '\0' && v <= 3600;
}

bool jobspec_valid_launch(const char *s)
{
	return streq(s, "once") || streq(s, "per-node");
}

bool jobspec_launch_once(const struct jobspec *js)
{
	return js->launch && streq(js->launch, "once");
}

long jobspec_sample_seconds(const struct jobspec *js)
{
	long v = 30;
	const char *p = js->sample;
	if (p && !digits(&p, &v))
		v = 30;
	return v;
}

/* N[s|m|h], a bare N minutes; -1 when not one */
static long idle_seconds(const char *s)
{
	long v;
	if (!s || !digits(&s, &v))
		return -1;
	if (*s && s[1])
		return -1;
	long unit = *s == 's' ? 1 : *s == 'h' ? 3600 : (*s == 'm' || !*s) ? 60 : -1;
	return unit < 0 || v > 30L * 86400 / unit ? -1 : v * unit;
}

bool jobspec_valid_idle_timeout(const char *s)
{
	return idle_seconds(s) >= 60;
}

long jobspec_idle_seconds(const struct jobspec *js)
{
	long v = js->idle_timeout ? idle_seconds(js->idle_timeout) : 0;
	return v > 0 ? v : 0;
}

/* Signals a command can catch and that mean "stop soon"; "SIG" optional. */
static const char *const stop_signals[] = { "USR1", "USR2", "TERM", "INT", "HUP", "QUIT", "ALRM",
					    "XCPU" };

static const char *stop_signal_name(const char *s)
{
	if (strlen(s) > 3 && !strncasecmp(s, "SIG", 3))
		s += 3;
	for (size_t i = 0; i < ARRAY_SIZE(stop_signals); i++)
		if (!strcasecmp(s, stop_signals[i]))
			return stop_signals[i];
	return NULL;
}

bool jobspec_valid_stop_signal(const char *s)
{
	return stop_signal_name(s) != NULL;
}

long jobspec_run_max_restarts(const struct jobspec *js)
{
	long v = 0;
	const char *p = js->max_restarts;
	if (p && !digits(&p, &v))
		v = 0;
	return v;
}

unsigned jobspec_run_restart_on(const struct jobspec *js)
{
	return js->restart_on ? parse_events(js->restart_on) : RUN_ON_DEFAULT;
}

const char *jobspec_run_stop_signal(const struct jobspec *js)
{
	const char *name = js->stop_signal ? stop_signal_name(js->stop_signal) : NULL;
	return name ? name : "USR1";
}

long jobspec_run_grace(const struct jobspec *js)
{
	return js->grace > 0 ? js->grace : RUN_DEFAULT_GRACE;
}

bool jobspec_is_run(const struct jobspec *js)
{
	return jobspec_run_max_restarts(js) > 0 || js->stop_signal || js->grace > 0;
}

void jobspec_run_events_text(unsigned bits, char *buf, size_t size)
{
	size_t n = 0;
	if (size)
		buf[0] = '\0';
	for (size_t i = 0; i < ARRAY_SIZE(run_events); i++) {
		if (!(bits & run_events[i].bit))
			continue;
		int w = snprintf(buf + n, size > n ? size - n : 0, "%s%s", n ? "," : "",
				 run_events[i].name);
		if (w < 0 || (size_t)w >= size - n)
			return;
		n += (size_t)w;
	}
}

/* ---- the table ---- */

#define X(SHORT, NAME, ARGNAME, HELP, COMPLETE, KIND, FIELD, CHECK, EXPECT, UNIQ) \
	{ NAME, KIND, offsetof(struct jobspec, FIELD), CHECK, EXPECT, UNIQ },
static const struct jobopt options[] = { JOBSPEC_OPTIONS(X) };
#undef X

#define X(SHORT, NAME, ...) NAME,
const char *const jobspec_option_names[] = { JOBSPEC_OPTIONS(X) };
#undef X
const size_t jobspec_noption_names = ARRAY_SIZE(jobspec_option_names);

/* Job file spellings that are not option names. */
static const struct {
	const char *alias, *name;
} aliases[] = {
	{ "modules", "module" },
	{ "uv-groups", "uv-group" },
	{ "stages", "stage" },
	{ "workdir", "chdir" },
};

/* "cpus_per_task" -> "cpus-per-task", and the aliases; NULL when unknown. */
static const struct jobopt *find_option(const char *name)
{
	char canon[64];
	size_t n = strlen(name);
	if (n >= sizeof(canon))
		return NULL;
	for (size_t i = 0; i <= n; i++)
		canon[i] = name[i] == '_' ? '-' : name[i];
	for (size_t i = 0; i < ARRAY_SIZE(aliases); i++)
		if (streq(canon, aliases[i].alias))
			return find_option(aliases[i].name);
	for (size_t i = 0; i < ARRAY_SIZE(options); i++)
		if (streq(canon, options[i].name))
			return &options[i];
	return NULL;
}

#define FIELD(js, o, type) ((type *)((char *)(js) + (o)->off))

void jobspec_release(struct jobspec *js)
{
	for (size_t i = 0; i < ARRAY_SIZE(options); i++) {
		const struct jobopt *o = &options[i];
		if (o->kind == JO_STR)
			free(*FIELD(js, o, char *));
		else if (o->kind == JO_LIST)
			strv_free(*FIELD(js, o, char **));
	}
	for (size_t i = 0; i < js->nenv; i++) {
		free(js->env[i].key);
		free(js->env[i].value);
		free(js->env[i].where);
	}
	free(js->env);
	free(js->command);
	free(js->project);
	free(js->group);
	memset(js, 0, sizeof(*js));
}

/* The value as it may appear in a message: control characters as '?', cut short. */
static const char *shown(const char *s, char *buf, size_t size)
{
	size_t i = 0;
	for (; s[i] && i + 4 < size; i++)
		buf[i] = ((unsigned char)s[i] < 0x20 || s[i] == 0x7f) ? '?' : s[i];
	if (s[i]) {
		memcpy(buf + i, "...", 3);
		i += 3;
	}
	buf[i] = '\0';
	return buf;
}

static int bad_value(struct dp_error *err, const char *where, const char *name, const char *value,
		     const char *expect)
{
	char buf[128];
	if (where)
		return dp_err(err, DPE_INPUT, "%s: invalid %s '%s': %s", where, name,
			      shown(value, buf, sizeof(buf)), expect);
	return dp_err(err, DPE_INPUT, "invalid --%s '%s': %s", name, shown(value, buf, sizeof(buf)),
		      expect);
}

static void env_put(struct jobspec *js, const char *key, const char *value, const char *where)
{
	struct job_env *e = NULL;
	for (size_t i = 0; i < js->nenv && !e; i++)
		if (streq(js->env[i].key, key))
			e = &js->env[i];
	if (!e) {
		js->env = xrealloc(js->env, (js->nenv + 1) * sizeof(*js->env));
		e = &js->env[js->nenv++];
		e->key = xstrdup(key);
	} else if (!value) {
		return; /* an unresolved name does not undo a value */
	} else {
		free(e->value);
		free(e->where);
	}
	e->value = value ? xstrdup(value) : NULL;
	e->where = !value && where ? xstrdup(where) : NULL;
}

/* "K=V", or "K" alone for the local value. The value never reaches a message. */
static int set_env(struct jobspec *js, const char *spec, const char *where, struct dp_error *err)
{
	const char *eq = strchr(spec, '=');
	_cleanup_free_ char *key = eq ? xstrndup(spec, (size_t)(eq - spec)) : xstrdup(spec);
	char buf[128];
	if (!sh_is_name(key)) {
		const char *fmt = "expected NAME=VALUE or NAME, NAME being a shell variable name "
				  "([A-Za-z_][A-Za-z0-9_]*)";
		if (where)
			return dp_err(err, DPE_INPUT, "%s: invalid env name '%s': %s", where,
				      shown(key, buf, sizeof(buf)), fmt);
		return dp_err(err, DPE_INPUT, "invalid --env name '%s': %s",
			      shown(key, buf, sizeof(buf)), fmt);
	}
	const char *value = eq ? eq + 1 : getenv(key);
	if (!value && !where)
		return dp_err(err, DPE_INPUT, "--env '%s' is not set locally (give --env %s=VALUE, or "
			      "export it before running dispatch)", key, key);
	env_put(js, key, value, where); /* a job file's may still come from the command line */
	return 0;
}

static int parse_bool(const char *s, int *out)
{
	static const char *const yes[] = { "true", "yes", "on", "1" };
	static const char *const no[] = { "false", "no", "off", "0" };
	for (size_t i = 0; i < ARRAY_SIZE(yes); i++) {
		if (!strcasecmp(s, yes[i])) {
			*out = 1;
			return 0;
		}
		if (!strcasecmp(s, no[i])) {
			*out = -1;
			return 0;
		}
	}
	return -1;
}

static const char *strip_sbatch_prefix(const char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	if (startswith(s, "#SBATCH"))
		s += 7;
	while (*s == ' ' || *s == '\t')
		s++;
	return s;
}

int jobspec_set(struct jobspec *js, const char *name, const char *value, const char *where,
		struct dp_error *err)
{
	const struct jobopt *o = find_option(name);
	if (!o)
		return dp_err(err, DPE_INPUT, "%s%sunknown job option '%s'", where ? where : "",
			      where ? ": " : "", name);
	switch (o->kind) {
	case JO_FLAG:
		if (!value) {
			*FIELD(js, o, int) = 1;
			return 0;
		}
		if (parse_bool(value, FIELD(js, o, int)) < 0)
			return bad_value(err, where, o->name, value, "expected true or false");
		return 0;
	case JO_COUNT: {
		long v;
		if (!value || !parse_long(value, 1, MAX_COUNT, &v))
			return bad_value(err, where, o->name, value ? value : "",
					 "expected a whole number from 1 to 1000000");
		*FIELD(js, o, long) = v;
		return 0;
	}
	case JO_ENV:
		return set_env(js, value ? value : "", where, err);
	case JO_STR:
	case JO_LIST:
		break;
	}
	if (!value)
		value = "";
	if (streq(o->name, "sbatch"))
		value = strip_sbatch_prefix(value);
	if (streq(o->name, "container-mounts") && !o->check(value)) {
		/* the parser says which item is wrong, and why */
		struct container_mount *m = NULL;
		size_t n = 0;
		struct dp_error e;
		container_mounts_parse(value, where ? o->name : "--container-mounts", &m, &n, &e);
		container_mounts_free(m, n);
		if (where)
			return dp_err(err, DPE_INPUT, "%s: %s", where, e.msg);
		return dp_err(err, DPE_INPUT, "%s", e.msg);
	}
	if (o->check && !o->check(value))
		return bad_value(err, where, o->name, value, o->expect);
	if (o->kind == JO_STR) {
		char **f = FIELD(js, o, char *);
		free(*f);
		*f = xstrdup(value);
	} else {
		char ***f = FIELD(js, o, char **);
		if (!o->uniq || !strv_contains(*f, value))
			strv_add(f, value);
	}
	return 0;
}

static void set_command_words(struct jobspec *js, char *const *argv, size_t argc)
{
	struct strbuf sb = STRBUF_INIT;
	for (size_t i = 0; i < argc; i++) {
		if (i)
			strbuf_addch(&sb, ' ');
		sh_quote(&sb, argv[i]);
	}
	free(js->command);
	js->command = strbuf_detach(&sb);
}

void jobspec_set_command_argv(struct jobspec *js, char *const *argv, size_t argc)
{
	if (argc == 1) {
		free(js->command);
		js->command = xstrdup(argv[0]);
		return;
	}
	set_command_words(js, argv, argc);
}

/* ---- job files ---- */

static char *where_of(const char *name, const struct ynode *n)
{
	return xasprintf("%s:%d:%d", name, n->line, n->col);
}

static int yaml_command(struct jobspec *js, const char *name, const struct ynode *v,
			struct dp_error *err)
{
	if (v->kind == YN_SCALAR) {
		if (!check_text(v->value))
			return dp_err(err, DPE_INPUT, "%s:%d:%d: 'command' is empty", name, v->line,
				      v->col);
		free(js->command);
		js->command = xstrdup(v->value);
		return 0;
	}
	if (v->kind != YN_SEQ || v->n == 0)
		return dp_err(err, DPE_INPUT, "%s:%d:%d: 'command' must be a string or a list of words, "
			      "not %s", name, v->line, v->col, v->kind == YN_SEQ ? "an empty list" :
			      ynode_kind_name(v));
	_cleanup_strv_free_ char **words = NULL;
	for (size_t i = 0; i < v->n; i++) {
		const struct ynode *w = v->items[i];
		if (w->kind != YN_SCALAR || ynode_is_null(w))
			return dp_err(err, DPE_INPUT, "%s:%d:%d: each word of 'command' must be a string, "
				      "not %s", name, w->line, w->col,
				      w->kind == YN_SCALAR ? "null" : ynode_kind_name(w));
		strv_add(&words, w->value);
	}
	set_command_words(js, words, v->n);
	return 0;
}

static int yaml_env(struct jobspec *js, const char *name, const struct ynode *v,
		    struct dp_error *err)
{
	if (v->kind == YN_SEQ) {
		for (size_t i = 0; i < v->n; i++) {
			const struct ynode *e = v->items[i];
			_cleanup_free_ char *where = where_of(name, e);
			if (e->kind != YN_SCALAR)
				return dp_err(err, DPE_INPUT, "%s: each item of 'env' must be NAME=VALUE or "
					      "NAME, not %s", where, ynode_kind_name(e));
			if (set_env(js, e->value, where, err) < 0)
				return -1;
		}
		return 0;
	}
	if (v->kind != YN_MAP)
		return dp_err(err, DPE_INPUT, "%s:%d:%d: 'env' must be a mapping (NAME: VALUE) or a "
			      "list, not %s", name, v->line, v->col, ynode_kind_name(v));
	for (size_t i = 0; i < v->n; i++) {
		const struct ynode *k = v->keys[i], *e = v->items[i];
		_cleanup_free_ char *where = where_of(name, k);
		if (e->kind != YN_SCALAR)
			return dp_err(err, DPE_INPUT, "%s:%d:%d: the value of env '%s' must be a string, "
				      "not %s", name, e->line, e->col, k->value, ynode_kind_name(e));
		/* the name is checked on its own: a '=' inside it must not shift part of
		 * the name into the value */
		if (!sh_is_name(k->value)) {
			char buf[128];
			return dp_err(err, DPE_INPUT, "%s: invalid env name '%s': expected a shell "
				      "variable name ([A-Za-z_][A-Za-z0-9_]*)", where,
				      shown(k->value, buf, sizeof(buf)));
		}
		_cleanup_free_ char *spec = ynode_is_null(e) ? xstrdup(k->value)
							     : xasprintf("%s=%s", k->value, e->value);
		if (set_env(js, spec, where, err) < 0)
			return -1;
	}
	return 0;
}

static int unknown_key(const char *name, const struct ynode *k, struct dp_error *err)
{
	const char *cands[ARRAY_SIZE(jobspec_option_names) + 4];
	size_t n = 0;
	for (size_t i = 0; i < jobspec_noption_names; i++)
		cands[n++] = jobspec_option_names[i];
	cands[n++] = "command";
	cands[n++] = "modules";
	cands[n++] = "uv-groups";
	cands[n++] = "stages";
	char canon[128], buf[128];
	snprintf(canon, sizeof(canon), "%s", k->value);
	for (char *p = canon; *p; p++)
		if (*p == '_')
			*p = '-';
	const char *guess = suggest_word(canon, cands, n);
	if (guess)
		return dp_err(err, DPE_INPUT, "%s:%d:%d: unknown key '%s' (did you mean '%s'?)", name,
			      k->line, k->col, shown(k->value, buf, sizeof(buf)), guess);
	return dp_err(err, DPE_INPUT, "%s:%d:%d: unknown key '%s' (the job options are listed in "
		      "dispatch-submit(1))", name, k->line, k->col, shown(k->value, buf, sizeof(buf)));
}

static int yaml_option(struct jobspec *js, const char *name, const struct jobopt *o,
		       const struct ynode *k, const struct ynode *v, struct dp_error *err)
{
	if (v->kind == YN_SCALAR && ynode_is_null(v))
		return 0; /* "partition:" with nothing: not given */
	if (v->kind == YN_SEQ && o->kind == JO_LIST) {
		for (size_t i = 0; i < v->n; i++) {
			const struct ynode *item = v->items[i];
			if (item->kind != YN_SCALAR)
				return dp_err(err, DPE_INPUT, "%s:%d:%d: each item of '%s' must be a string, "
					      "not %s", name, item->line, item->col, k->value,
					      ynode_kind_name(item));
			_cleanup_free_ char *where = where_of(name, item);
			if (jobspec_set(js, o->name, item->value, where, err) < 0)
				return -1;
		}
		return 0;
	}
	if (v->kind != YN_SCALAR)
		return dp_err(err, DPE_INPUT, "%s:%d:%d: '%s' must be %s, not %s", name, v->line, v->col,
			      k->value, o->kind == JO_LIST ? "a string or a list of strings" :
			      o->kind == JO_FLAG ? "true or false" : o->kind == JO_COUNT ? "a number" :
			      "a string", ynode_kind_name(v));
	_cleanup_free_ char *where = where_of(name, v);
	const char *slash = strrchr(name, '/');
	if ((streq(o->name, "sweep-file") || streq(o->name, "sbatch-script")) && slash &&
	    v->value[0] != '/' && v->value[0]) {
		/* a file beside the job file, wherever dispatch runs */
		_cleanup_free_ char *path = xasprintf("%.*s/%s", (int)(slash - name), name, v->value);
		return jobspec_set(js, o->name, path, where, err);
	}
	return jobspec_set(js, o->name, v->value, where, err);
}

int jobspec_parse_yaml(struct jobspec *js, const char *name, const char *buf, size_t len,
		       struct dp_error *err)
{
	_cleanup_ynode_ struct ynode *root = NULL;
	if (yaml_parse(name, buf, len, &root, err) < 0)
		return -1;
	if (!root)
		return 0;
	if (root->kind != YN_MAP)
		return dp_err(err, DPE_INPUT, "%s:%d:%d: a job file is a mapping of job options, not %s",
			      name, root->line, root->col, ynode_kind_name(root));
	for (size_t i = 0; i < root->n; i++) {
		const struct ynode *k = root->keys[i], *v = root->items[i];
		if (streq(k->value, "command")) {
			if (!ynode_is_null(v) && yaml_command(js, name, v, err) < 0)
				return -1;
			continue;
		}
		if (streq(k->value, "env")) {
			if (!ynode_is_null(v) && yaml_env(js, name, v, err) < 0)
				return -1;
			continue;
		}
		if (streq(k->value, "project") || streq(k->value, "group")) {
			char **part = streq(k->value, "project") ? &js->project : &js->group;
			if (ynode_is_null(v))
				continue;
			if (v->kind != YN_SCALAR || !check_name(v->value) || strchr(v->value, '/'))
				return dp_err(err, DPE_INPUT, "%s:%d:%d: '%s' must be a name on one line "
					      "(it leads the job's name)", name, v->line, v->col, k->value);
			free(*part);
			*part = xstrdup(v->value);
			continue;
		}
		const struct jobopt *o = find_option(k->value);
		if (!o)
			return unknown_key(name, k, err);
		if (yaml_option(js, name, o, k, v, err) < 0)
			return -1;
	}
	return 0;
}

int jobspec_load_file(struct jobspec *js, const char *path, struct dp_error *err)
{
	size_t len;
	_cleanup_free_ char *buf = read_file(path, &len);
	if (!buf)
		return dp_err(err, errno == ENOENT ? DPE_NOTFOUND : DPE_INPUT,
			      "cannot read job file '%s': %s", path, strerror(errno));
	return jobspec_parse_yaml(js, path, buf, len, err);
}

/* ---- merging and whole-spec checks ---- */

void jobspec_merge(struct jobspec *js, const struct jobspec *over)
{
	char **parts[][2] = { { &js->project, (char **)&over->project },
			      { &js->group, (char **)&over->group } };
	for (size_t i = 0; i < ARRAY_SIZE(parts); i++)
		if (*parts[i][1]) {
			free(*parts[i][0]);
			*parts[i][0] = xstrdup(*parts[i][1]);
		}
	for (size_t i = 0; i < ARRAY_SIZE(options); i++) {
		const struct jobopt *o = &options[i];
		switch (o->kind) {
		case JO_STR: {
			char *v = *FIELD(over, o, char *);
			if (v) {
				free(*FIELD(js, o, char *));
				*FIELD(js, o, char *) = xstrdup(v);
			}
			break;
		}
		case JO_COUNT:
			if (*FIELD(over, o, long))
				*FIELD(js, o, long) = *FIELD(over, o, long);
			break;
		case JO_FLAG:
			if (*FIELD(over, o, int))
				*FIELD(js, o, int) = *FIELD(over, o, int);
			break;
		case JO_LIST: {
			char **v = *FIELD(over, o, char **);
			for (size_t j = 0; v && v[j]; j++)
				if (!o->uniq || !strv_contains(*FIELD(js, o, char **), v[j]))
					strv_add(FIELD(js, o, char **), v[j]);
			break;
		}
		case JO_ENV:
			for (size_t j = 0; j < over->nenv; j++)
				env_put(js, over->env[j].key, over->env[j].value, over->env[j].where);
			break;
		}
	}
	if (over->command) {
		free(js->command);
		js->command = xstrdup(over->command);
	}
}

int jobspec_complete(struct jobspec *js, const struct jobspec *over, struct dp_error *err)
{
	jobspec_merge(js, over);
	if (jobspec_apply_sbatch_script(js, err) < 0)
		return -1;
	return jobspec_validate(js, err);
}

/* s's base name as a job name: [A-Za-z0-9._-] kept, NULL when nothing is left. */
static char *name_of(const char *s, size_t len)
{
	const char *base = s;
	for (size_t i = 0; i < len; i++)
		if (s[i] == '/')
			base = s + i + 1;
	struct strbuf sb = STRBUF_INIT;
	for (const char *p = base; p < s + len && sb.len < 64; p++)
		if (isalnum((unsigned char)*p) || strchr("._-", *p))
			strbuf_addch(&sb, *p);
	if (!sb.len || streq(sb.buf, ".") || streq(sb.buf, "..")) {
		strbuf_release(&sb);
		return NULL;
	}
	return strbuf_detach(&sb);
}

/* The command's first word that is not a variable assignment (FOO=1 python ...). */
static char *first_word(const char *cmd)
{
	for (const char *p = cmd; p && *p;) {
		p += strspn(p, " \t\n");
		size_t n = strcspn(p, " \t\n;&|()<>");
		if (!n)
			return NULL;
		const char *eq = memchr(p, '=', n);
		if (!eq || memchr(p, '/', (size_t)(eq - p)) || eq == p)
			return name_of(p, n);
		p += n;
	}
	return NULL;
}

void jobspec_default_name(struct jobspec *js, const char *code_name)
{
	char *base = NULL;
	if (!js->job_name) {
		if (code_name && *code_name)
			base = name_of(code_name, strlen(code_name));
		if (!base && js->sbatch_script)
			base = name_of(js->sbatch_script, strlen(js->sbatch_script));
		if (!base && (js->command || js->stages))
			base = first_word(js->command ? js->command : js->stages[0]);
	}
	const char *name = js->job_name ? js->job_name : base ? base : "dispatch";
	char *full = xasprintf("%s%s%s%s%s", js->project ? js->project : "", js->project ? "-" : "",
			       js->group ? js->group : "", js->group ? "-" : "", name);
	free(base);
	free(js->job_name);
	js->job_name = full;
	free(js->project); /* (applied: a second call leaves the name as it is) */
	free(js->group);
	js->project = js->group = NULL;
}

int jobspec_validate(const struct jobspec *js, struct dp_error *err)
{
	if ((!js->command || !check_text(js->command)) && !js->stages)
		return dp_err(err, DPE_INPUT, "no command to run: give it after '--' (dispatch submit "
			      "-H HOST -- python train.py) or as 'command:' in the job file");
	if (js->stages && jobspec_is_sweep(js))
		return dp_err(err, DPE_INPUT, "--stage and a sweep do not go together yet: a sweep's "
			      "task runs one command (give each stage's work to it)");
	for (size_t i = 0; i < js->nenv; i++)
		if (!js->env[i].value)
			return dp_err(err, DPE_INPUT, "%s: env '%s' has no value and is not set locally "
				      "(give it a value, export it, or add --env %s=VALUE)",
				      js->env[i].where ? js->env[i].where : "job file", js->env[i].key,
				      js->env[i].key);
	if (js->mem && js->mem_per_cpu)
		return dp_err(err, DPE_INPUT, "--mem and --mem-per-cpu exclude each other (as in "
			      "sbatch): give one");
	if (js->gpus && js->gpus_per_node)
		return dp_err(err, DPE_INPUT, "--gpus and --gpus-per-node exclude each other: give "
			      "--gpus for a total, or --gpus-per-node");
	if (js->chip && !js->gpus && !js->gpus_per_node)
		return dp_err(err, DPE_INPUT, "--chip '%s' needs a GPU count: add --gpus N or "
			      "--gpus-per-node N", js->chip);
	if (js->no_container > 0 && js->container_image)
		return dp_err(err, DPE_INPUT, "--no-container and --container-image '%s' exclude each "
			      "other: give one", js->container_image);
	if (js->ntasks && js->nodes && js->ntasks < js->nodes)
		return dp_err(err, DPE_INPUT, "--ntasks %ld is fewer than --nodes %ld: every node needs "
			      "a task", js->ntasks, js->nodes);
	if (js->restart_on && jobspec_run_max_restarts(js) == 0)
		return dp_err(err, DPE_INPUT, "--restart-on '%s' needs --max-restarts N (how many "
			      "restarts a run may have)", js->restart_on);
	if (js->idle_below > 100)
		return dp_err(err, DPE_INPUT, "--idle-below %ld is more than 100%%: give a utilisation "
			      "from 1 to 100", js->idle_below);
	if (js->idle_below && !js->idle_timeout)
		return dp_err(err, DPE_INPUT, "--idle-below %ld needs --idle-timeout TIME (how long the "
			      "GPUs may stay under it)", js->idle_below);
	if (js->idle_timeout && jobspec_sample_seconds(js) == 0)
		return dp_err(err, DPE_INPUT, "--idle-timeout %s needs the sampler: drop --sample 0",
			      js->idle_timeout);
	if (js->grace > RUN_MAX_GRACE)
		return dp_err(err, DPE_INPUT, "--grace %ld is more than %d seconds (what sbatch "
			      "--signal takes): give at most %d", js->grace, RUN_MAX_GRACE,
			      RUN_MAX_GRACE);
	if (jobspec_is_sweep(js)) {
		const char *opt = js->sweep_file ? "--sweep-file" : "--sweep";
		struct sweep sw = SWEEP_INIT;
		int r = jobspec_sweep(js, &sw, err);
		sweep_release(&sw);
		if (r < 0)
			return -1;
		if (js->array)
			return dp_err(err, DPE_INPUT, "%s makes the job array itself: drop --array '%s'",
				      opt, js->array);
	}
	if (js->max_parallel && !jobspec_is_sweep(js))
		return dp_err(err, DPE_INPUT, "--max-parallel %ld needs --sweep or --sweep-file: it "
			      "caps a sweep's tasks (for a job array of your own: --array 0-9%%%ld)",
			      js->max_parallel, js->max_parallel);
	if (js->signal && jobspec_is_run(js))
		return dp_err(err, DPE_INPUT, "--signal '%s' and --max-restarts, --stop-signal or "
			      "--grace exclude each other: a run gets its stop signal from "
			      "--stop-signal and --grace", js->signal);
	return 0;
}

bool jobspec_is_sweep(const struct jobspec *js)
{
	return js->sweep || js->sweep_file;
}

int jobspec_sweep(const struct jobspec *js, struct sweep *sw, struct dp_error *err)
{
	if (js->sweep && js->sweep_file)
		return dp_err(err, DPE_INPUT, "--sweep and --sweep-file '%s' exclude each other: give "
			      "the parameters in one of them (a sweep file's grid: takes ranges as "
			      "\"A..B\")", js->sweep_file);
	if (js->sweep_file)
		return sweep_load_file(sw, js->sweep_file, err);
	for (size_t i = 0; js->sweep && js->sweep[i]; i++)
		if (sweep_add(sw, js->sweep[i], err) < 0)
			return -1;
	return 0;
}

long jobspec_total_gpus(const struct jobspec *js)
{
	if (js->gpus)
		return js->gpus;
	return js->gpus_per_node * (js->nodes > 0 ? js->nodes : 1);
}

long jobspec_gpus_per_node(const struct jobspec *js)
{
	if (js->gpus_per_node)
		return js->gpus_per_node;
	long nodes = js->nodes > 0 ? js->nodes : 1;
	return js->gpus % nodes == 0 ? js->gpus / nodes : 0;
}
