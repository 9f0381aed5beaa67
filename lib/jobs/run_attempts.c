/* SPDX-License-Identifier: MIT */
/* A run's attempts: run_attempts.h. */
#include "jobs/run_attempts.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "base/marker.h"
#include "base/shquote.h"
#include "base/strbuf.h"
#include "base/termesc.h"
#include "base/util.h"
#include "base/when.h"
#include "shfiles.h"

static bool is_run(const struct sched_job *j)
{
	return j->run_id && j->stage_dir;
}

void run_attempts_script(struct remote_script *rs, const struct sched_job *jobs, size_t n)
{
	bool any = false;
	for (size_t i = 0; i < n; i++) {
		if (!is_run(&jobs[i]))
			continue;
		struct strbuf *sb = remote_section(rs, REMOTE_ATTEMPTS);
		if (!any)
			strbuf_adds(sb, shfile_jobs_run_attempts); /* dispatch_attempts ID STAGE */
		any = true;
		strbuf_adds(sb, "dispatch_attempts ");
		sh_quote(sb, jobs[i].id);
		strbuf_addch(sb, ' ');
		sh_quote(sb, jobs[i].stage_dir);
		strbuf_addch(sb, '\n');
	}
}

static bool all_of(const char *s, const char *set, size_t max)
{
	size_t n = strlen(s);
	return n > 0 && n <= max && strspn(s, set) == n;
}

#define DIGITS "0123456789"

/* "ID|ATTEMPT|STATE|EPOCH|NODE" for job id into a, false when it is not one. */
static bool parse_line(const char *value, const char *id, struct job_attempt *a)
{
	_cleanup_free_ char *copy = xstrdup(value);
	char *f[5], *p = copy;
	for (int i = 0; i < 5; i++) {
		f[i] = p;
		p = i < 4 ? strchr(p, '|') : NULL;
		if (i < 4 && !p)
			return false;
		if (p)
			*p++ = '\0';
	}
	if (!streq(f[0], id) || !all_of(f[1], DIGITS, 7) ||
	    !all_of(f[2], "ABCDEFGHIJKLMNOPQRSTUVWXYZ_", 32) ||
	    !(streq(f[3], "-") || all_of(f[3], DIGITS, 18)) ||
	    !(streq(f[4], "-") || all_of(f[4], "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
						DIGITS "._-", 255)))
		return false;
	*a = (struct job_attempt){
		.attempt = strtol(f[1], NULL, 10),
		.state = xstrdup(f[2]),
		.ended = streq(f[3], "-") ? -1 : strtol(f[3], NULL, 10),
		.node = streq(f[4], "-") ? NULL : xstrdup(f[4]),
	};
	return true;
}

void run_attempts_take(const struct remote_reply *rr, const struct sched_job *j,
		       struct job_state *js)
{
	if (!is_run(j))
		return;
	/* a task of j's job array: its own attempts and run id (the run's, -INDEX) */
	const char *id = j->id;
	size_t idlen = strlen(j->id);
	free(js->run_id);
	if (js->id && strncmp(js->id, j->id, idlen) == 0 && js->id[idlen] == '_' &&
	    all_of(js->id + idlen + 1, DIGITS, 9)) {
		id = js->id;
		js->run_id = xasprintf("%s-%ld", j->run_id,
				       strtol(id + idlen + 1, NULL, 10) + j->sweep_first);
	} else {
		js->run_id = xstrdup(j->run_id);
	}
	js->max_restarts = j->max_restarts;
	idlen = strlen(id);
	for (size_t i = 0; i < rr->n; i++) {
		struct job_attempt a;
		const char *v = rr->marks[i].value;
		if (streq(rr->marks[i].key, MARK_GAVE_UP) && strncmp(v, id, idlen) == 0 &&
		    v[idlen] == '|' && v[idlen + 1]) {
			free(js->gave_up);
			js->gave_up = printable(v + idlen + 1);
			continue;
		}
		if (!streq(rr->marks[i].key, MARK_ATTEMPT) || !parse_line(v, id, &a))
			continue;
		js->attempts = xrealloc(js->attempts, (js->nattempts + 1) * sizeof(*js->attempts));
		js->attempts[js->nattempts++] = a;
	}
}

char *job_state_attempt_text(const struct job_state *js)
{
	if (!js->run_id)
		return NULL;
	return xasprintf("attempt %ld/%ld", js->attempt > 0 ? js->attempt : (long)js->nattempts + 1,
			 js->max_restarts + 1);
}

char *job_state_state_text(const struct job_state *js)
{
	_cleanup_free_ char *attempt = job_state_attempt_text(js);
	return attempt ? xasprintf("%s %s", js->state, attempt) : xstrdup(js->state);
}

char *job_state_attempts_text(const struct job_state *js)
{
	if (!js->nattempts)
		return NULL;
	struct strbuf sb = STRBUF_INIT;
	for (size_t i = 0; i < js->nattempts; i++) {
		const struct job_attempt *a = &js->attempts[i];
		char when[32];
		when_iso(a->ended, when);
		strbuf_addf(&sb, "%sattempt %ld %s", i ? "; " : "", a->attempt + 1, a->state);
		if (when[0])
			strbuf_addf(&sb, " %s", when);
		if (a->node)
			strbuf_addf(&sb, " on %s", a->node);
	}
	return strbuf_detach(&sb);
}

void job_state_json_run(cJSON *o, const struct job_state *js)
{
	if (!js->run_id)
		return;
	cJSON_AddStringToObject(o, "run_id", js->run_id);
	cJSON_AddNumberToObject(o, "attempt",
				(double)(js->attempt > 0 ? js->attempt : (long)js->nattempts + 1));
	cJSON_AddNumberToObject(o, "max_attempts", (double)(js->max_restarts + 1));
	if (js->attempt > 0 && !js->nattempts) { /* the ends before it: not asked */
		cJSON_AddNullToObject(o, "attempts");
		return;
	}
	cJSON *arr = cJSON_AddArrayToObject(o, "attempts");
	for (size_t i = 0; i < js->nattempts; i++) {
		const struct job_attempt *a = &js->attempts[i];
		cJSON *e = cJSON_CreateObject();
		char when[32];
		when_iso(a->ended, when);
		cJSON_AddNumberToObject(e, "attempt", (double)(a->attempt + 1));
		cJSON_AddStringToObject(e, "state", a->state);
		if (when[0])
			cJSON_AddStringToObject(e, "ended", when);
		else
			cJSON_AddNullToObject(e, "ended");
		if (a->node)
			cJSON_AddStringToObject(e, "node", a->node);
		else
			cJSON_AddNullToObject(e, "node");
		cJSON_AddItemToArray(arr, e);
	}
}
