/* SPDX-License-Identifier: MIT */
/* An existing sbatch script as a job: sbatch_script.h. */
#include "inventory/sbatch_script.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/strbuf.h"
#include "base/util.h"
#include "inventory/jobspec.h"

/* The sbatch options that are dispatch job options of the same meaning (the other
 * job options, --env, --setup, --sample..., are dispatch's own: an #SBATCH line
 * never sets them), with sbatch's short letters. */
static const struct {
	char letter;
	const char *name;
} known[] = {
	{ 'J', "job-name" }, { 'p', "partition" }, { 'N', "nodes" }, { 'n', "ntasks" },
	{ 0, "ntasks-per-node" }, { 'c', "cpus-per-task" }, { 0, "mem" }, { 0, "mem-per-cpu" },
	{ 't', "time" }, { 'o', "output" }, { 'e', "error" }, { 'D', "chdir" },
	{ 'd', "dependency" }, { 0, "exclusive" }, { 'C', "constraint" }, { 'A', "account" },
	{ 'q', "qos" }, { 'x', "exclude" }, { 'a', "array" }, { 0, "signal" }, { 0, "requeue" },
	{ 'G', "gpus" }, { 0, "gpus-per-node" },
};

/* sbatch's options that take no value (the others take the next word when they are
 * not given one with '='). */
static const char *const flags[] = {
	"exclusive", "requeue", "no-requeue", "hold", "overcommit", "spread-job",
	"use-min-nodes", "contiguous", "parsable", "wait", "test-only", "verbose", "quiet",
	"oversubscribe", "ignore-pbs", "no-kill", "reboot", "kill-on-invalid-dep",
	"get-user-env", "no-get-user-env",
};

static const char *known_name(const char *name, char letter)
{
	for (size_t i = 0; i < ARRAY_SIZE(known); i++)
		if (letter ? known[i].letter == letter : name && streq(known[i].name, name))
			return known[i].name;
	return NULL;
}

static bool is_flag(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(flags); i++)
		if (streq(flags[i], name))
			return true;
	return false;
}

/* The words of an #SBATCH line's rest into *v, as sbatch splits them: blanks apart,
 * quotes kept together (and removed), a word starting with '#' ends the line (a
 * comment). False when a quote is not closed. */
static bool words_of(const char *s, char ***v)
{
	*v = NULL;
	while (*s) {
		while (*s == ' ' || *s == '\t')
			s++;
		if (!*s || *s == '#')
			break;
		struct strbuf w = STRBUF_INIT;
		while (*s && *s != ' ' && *s != '\t') {
			if (*s == '"' || *s == '\'') {
				char q = *s++;
				const char *end = strchr(s, q);
				if (!end) {
					strbuf_release(&w);
					return false;
				}
				strbuf_add(&w, s, (size_t)(end - s));
				s = end + 1;
			} else {
				strbuf_addch(&w, *s++);
			}
		}
		strv_push(v, strbuf_detach(&w));
	}
	return true;
}

/* One option (name without dashes, its value or NULL) into js: a job option of the
 * same meaning where its value reads as one, else an sbatch directive passed on as
 * written. */
static int take(struct jobspec *js, const char *name, const char *value, const char *raw,
		const char *where, struct dp_error *err)
{
	const char *job = known_name(name, 0);
	struct dp_error ignored;
	if (streq(name, "no-requeue"))
		return jobspec_set(js, "requeue", "false", where, err);
	if (job && jobspec_set(js, job, value, where, &ignored) == 0)
		return 0;
	/* unknown to dispatch, or a value it does not read (--gpus-per-node=a100:2,
	 * --nodes=2-4): sbatch reads it */
	return jobspec_set(js, "sbatch", raw, where, err);
}

/* The options of one #SBATCH line. */
static int directives(struct jobspec *js, const char *name, size_t line, const char *rest,
		      size_t col, struct dp_error *err)
{
	_cleanup_free_ char *where = xasprintf("%s:%zu:%zu", name, line, col);
	_cleanup_strv_free_ char **w = NULL;
	if (!words_of(rest, &w))
		return dp_err(err, DPE_INPUT, "%s: a quote is not closed in the #SBATCH line", where);
	for (size_t i = 0; w && w[i]; i++) {
		const char *a = w[i];
		_cleanup_free_ char *opt = NULL, *raw = NULL;
		const char *value = NULL;
		if (a[0] == '-' && a[1] == '-' && a[2]) {
			const char *eq = strchr(a, '=');
			opt = eq ? xstrndup(a + 2, (size_t)(eq - a - 2)) : xstrdup(a + 2);
			if (eq)
				value = eq + 1;
			else if (!is_flag(opt) && w[i + 1] && w[i + 1][0] != '-')
				value = w[++i];
			raw = value ? xasprintf("--%s=%s", opt, value) : xstrdup(a);
		} else if (a[0] == '-' && a[1] && a[1] != '-') {
			const char *long_name = known_name(NULL, a[1]);
			if (a[2])
				value = a + 2;
			else if (w[i + 1] && w[i + 1][0] != '-')
				value = w[++i];
			opt = xstrdup(long_name ? long_name : "");
			raw = value ? xasprintf("-%c %s", a[1], value) : xstrdup(a);
			if (!long_name) {
				if (jobspec_set(js, "sbatch", raw, where, err) < 0)
					return -1;
				continue;
			}
		} else {
			return dp_err(err, DPE_INPUT, "%s: '%s' is not an sbatch option (#SBATCH "
				      "--name=value, or -X value)", where, a);
		}
		if (take(js, opt, value, raw, where, err) < 0)
			return -1;
	}
	return 0;
}

/* The interpreter of the first line ("#!/bin/bash", "#!/usr/bin/env bash"): its
 * base name, or NULL when the line is not "#!". */
static char *interpreter(const char *line, size_t len)
{
	if (len < 2 || line[0] != '#' || line[1] != '!')
		return NULL;
	_cleanup_free_ char *text = xstrndup(line + 2, len - 2);
	_cleanup_strv_free_ char **w = NULL;
	if (!words_of(text, &w) || !w || !w[0])
		return xstrdup("");
	const char *prog = w[0];
	if (streq(strrchr(prog, '/') ? strrchr(prog, '/') + 1 : prog, "env") && w[1])
		prog = w[1][0] == '-' && w[2] ? w[2] : w[1];
	const char *slash = strrchr(prog, '/');
	return xstrdup(slash ? slash + 1 : prog);
}

int sbatch_script_parse(struct jobspec *js, const char *name, const char *text, size_t len,
			struct dp_error *err)
{
	if (memchr(text, '\0', len))
		return dp_err(err, DPE_INPUT, "%s: not a script: it holds a NUL byte", name);
	size_t first = strcspn(text, "\n");
	_cleanup_free_ char *shell = interpreter(text, first < len ? first : len);
	if (!shell)
		return dp_err(err, DPE_INPUT, "%s:1:1: the first line must be #! and the shell that "
			      "runs the script (#!/bin/bash), as sbatch requires", name);
	if (!streq(shell, "bash") && !streq(shell, "sh"))
		return dp_err(err, DPE_INPUT, "%s:1:1: the script runs with '%s': --sbatch-script "
			      "takes a bash or sh script (run other programs from one)", name, shell);
	/* #SBATCH lines up to the first line that is neither blank nor a comment, as
	 * sbatch reads them */
	size_t line = 1;
	for (size_t at = 0; at < len; line++) {
		size_t end = at;
		while (end < len && text[end] != '\n')
			end++;
		_cleanup_free_ char *l = xstrndup(text + at, end - at);
		size_t lead = strspn(l, " \t");
		if (l[lead] && l[lead] != '#')
			break;
		if (!strncmp(l + lead, "#SBATCH", 7) && (l[lead + 7] == ' ' || l[lead + 7] == '\t')) {
			size_t col = lead + 8 + strspn(l + lead + 8, " \t");
			if (directives(js, name, line, l + col, col + 1, err) < 0)
				return -1;
		}
		at = end + 1;
	}
	free(js->command);
	js->command = xstrndup(text, len);
	free(js->launch);
	js->launch = xstrdup("once");
	return 0;
}

int jobspec_apply_sbatch_script(struct jobspec *js, struct dp_error *err)
{
	if (!js->sbatch_script)
		return 0;
	if (js->command)
		return dp_err(err, DPE_INPUT, "--sbatch-script %s is the command: give no other "
			      "(after '--' or as 'command:' in the job file)", js->sbatch_script);
	size_t len;
	_cleanup_free_ char *buf = read_file(js->sbatch_script, &len);
	if (!buf)
		return dp_err(err, DPE_INPUT, "cannot read --sbatch-script '%s': %s",
			      js->sbatch_script, strerror(errno));
	struct jobspec script = { 0 };
	if (sbatch_script_parse(&script, js->sbatch_script, buf, len, err) < 0) {
		jobspec_release(&script);
		return -1;
	}
	jobspec_merge(&script, js); /* the command line and the job file win */
	jobspec_release(js);
	*js = script;
	return 0;
}
