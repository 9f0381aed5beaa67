/* SPDX-License-Identifier: MIT */
/* The one remote exchange: remote.h. */
#include "remote/remote.h"

#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "transport/ssh.h"

const struct remote_section_info remote_sections[REMOTE_SECTION_COUNT] = {
	[REMOTE_SQUEUE] = { "squeue", MARK_SQUEUE_EXIT },
	[REMOTE_SACCT] = { "sacct", MARK_SACCT_EXIT },
	[REMOTE_PLAIN_STATUS] = { "plain-status", NULL },
	[REMOTE_SCANCEL] = { "scancel", MARK_SCANCEL_EXIT },
	[REMOTE_PLAIN_CANCEL] = { "plain-cancel", NULL },
	[REMOTE_STEPS] = { "steps", MARK_STEPS_EXIT },
	[REMOTE_END] = { "fail-steps", MARK_FAIL_STEPS_EXIT },
	[REMOTE_PENDING] = { "pending", NULL },
	[REMOTE_PATHS] = { "paths", NULL },
	[REMOTE_TAIL] = { "tail", NULL },
	[REMOTE_SBATCH] = { "sbatch", MARK_SBATCH_EXIT },
	[REMOTE_SINFO] = { "sinfo", MARK_SINFO_EXIT },
	[REMOTE_NOTEBOOK] = { "notebook", MARK_NOTEBOOK_EXIT },
	[REMOTE_ATTEMPTS] = { "attempts", NULL },
	[REMOTE_METRICS] = { "metrics", NULL },
	[REMOTE_USAGE] = { "usage", NULL },
};

const char *const remote_keys[] = {
	MARK_SHARE, MARK_STAGE, MARK_WORK, MARK_LOG, MARK_USER, MARK_NOW, MARK_MAX_ARRAY,
	MARK_SBATCH_EXIT, MARK_SQUEUE_EXIT, MARK_SACCT_EXIT, MARK_STEPS_EXIT, MARK_SCANCEL_EXIT,
	MARK_SQUEUE_STATES, MARK_SQUEUE_SAME,
	MARK_STATUS, MARK_OUT, MARK_ERR, MARK_SQUEUE, MARK_SACCT, MARK_STEPS, MARK_END,
	MARK_VERSION, MARK_FORMAT, MARK_ACCT_OUT, MARK_ACCT_ERR, MARK_ACCT_NAME, MARK_PREFLIGHT,
	MARK_PID, MARK_TASK, MARK_TASKS_BEGIN, MARK_JOB, MARK_QJOB, MARK_CANCEL, MARK_SESSION_PID, MARK_TOP, MARK_TOP_TICK,
	MARK_SINFO_EXIT, MARK_HEALTH, MARK_FAIL_STEPS, MARK_FAIL_STEPS_EXIT, MARK_FAIL_USERS,
	MARK_FAIL_NODES, MARK_NOTEBOOK, MARK_NOTEBOOK_EXIT, MARK_NOTEBOOK_STATE,
	MARK_PENDING_JOBS, MARK_PENDING_DEPS, MARK_PENDING_NODES, MARK_PENDING_PARTS,
	MARK_PENDING_HEALTH, MARK_PENDING_QOS, MARK_PENDING_ASSOC, MARK_ATTEMPT,
	MARK_GAVE_UP, MARK_PART, MARK_PATHS_JOB, MARK_TAIL_JOB, MARK_TAIL_ERR, MARK_TAIL_EXIT,
	MARK_METRIC, NULL,
};

struct strbuf *remote_section(struct remote_script *rs, enum remote_section s)
{
	rs->emitted |= 1u << s;
	return &rs->text;
}

bool remote_emitted(const struct remote_script *rs, enum remote_section s)
{
	return (rs->emitted >> s) & 1u;
}

bool remote_script_empty(const struct remote_script *rs)
{
	/* (text outside any section, a part's mark, asks nothing) */
	return rs->emitted == 0 || rs->text.len == 0;
}

void remote_script_release(struct remote_script *rs)
{
	strbuf_release(&rs->text);
	rs->emitted = 0;
}

enum remote_section remote_section_named(const char *name)
{
	for (int s = 0; s < REMOTE_SECTION_COUNT; s++)
		if (streq(remote_sections[s].name, name))
			return (enum remote_section)s;
	return REMOTE_SECTION_COUNT;
}

int remote_text_exit(const char *text, enum remote_section s)
{
	const char *mark = s < REMOTE_SECTION_COUNT ? remote_sections[s].exit_mark : NULL;
	return mark ? (int)marker_find_long(text, mark, 0, 255) : -1;
}

static void marks_clear(struct remote_reply *rr)
{
	for (size_t i = 0; i < rr->n; i++) {
		free(rr->marks[i].value);
		if (!rr->marks[i].known)
			free((char *)rr->marks[i].key);
	}
	free(rr->marks);
	rr->marks = NULL;
	rr->n = 0;
}

static const char *known_key(const char *key, size_t len)
{
	for (size_t i = 0; remote_keys[i]; i++)
		if (strlen(remote_keys[i]) == len && !memcmp(remote_keys[i], key, len))
			return remote_keys[i];
	return NULL;
}

void remote_reply_parse(struct remote_reply *rr)
{
	static const char prefix[] = MARKER("");
	marks_clear(rr);
	struct line_iter it = LINE_ITER_INIT(rr->out.buf);
	for (char *line; (line = line_next(&it));) {
		if (strncmp(line, prefix, sizeof(prefix) - 1) != 0)
			continue;
		size_t len = sizeof(prefix) - 1 + strspn(line + sizeof(prefix) - 1,
							 "abcdefghijklmnopqrstuvwxyz0123456789-");
		if (len == sizeof(prefix) - 1 || (line[len] && line[len] != ' '))
			continue;
		struct remote_mark m = { .start = (size_t)(it.start - rr->out.buf) };
		m.end = it.next ? (size_t)(it.next - rr->out.buf) : rr->out.len;
		m.key = known_key(line, len);
		m.known = m.key != NULL;
		if (!m.known)
			m.key = xstrndup(line, len);
		m.value = xstrdup(line[len] ? line + len + 1 : "");
		rr->marks = xrealloc(rr->marks, (rr->n + 1) * sizeof(*rr->marks));
		rr->marks[rr->n++] = m;
	}
	line_iter_release(&it);
}

int remote_run(struct ssh_session *ss, const struct remote_script *rs, struct remote_reply *rr,
	       struct dp_error *err)
{
	strbuf_reset(&rr->out);
	strbuf_reset(&rr->err);
	marks_clear(rr);
	if (ssh_exec_capture(ss, rs->text.buf, NULL, &rr->out, &rr->err, &rr->status, err) < 0)
		return -1;
	remote_reply_parse(rr);
	return 0;
}

void remote_reply_release(struct remote_reply *rr)
{
	marks_clear(rr);
	strbuf_release(&rr->out);
	strbuf_release(&rr->err);
	rr->status = -1;
}

const char *remote_value(const struct remote_reply *rr, const char *key)
{
	for (size_t i = rr->n; i-- > 0;)
		if (streq(rr->marks[i].key, key))
			return rr->marks[i].value;
	return NULL;
}

long remote_long(const struct remote_reply *rr, const char *key, long min, long max)
{
	const char *v = remote_value(rr, key);
	long n;
	return v && parse_long(v, min, max, &n) ? n : -1;
}

int remote_exit(const struct remote_reply *rr, enum remote_section s)
{
	const char *mark = s < REMOTE_SECTION_COUNT ? remote_sections[s].exit_mark : NULL;
	return mark ? (int)remote_long(rr, mark, 0, 255) : -1;
}

int remote_section_exit(const struct remote_script *rs, const struct remote_reply *rr,
			enum remote_section s)
{
	return remote_emitted(rs, s) ? remote_exit(rr, s) : 0;
}

char *remote_part_text(const struct remote_reply *rr, const char *key, const char *value)
{
	for (size_t i = 0; i < rr->n; i++) {
		if (!streq(rr->marks[i].key, key) || !streq(rr->marks[i].value, value))
			continue;
		size_t end = rr->out.len;
		for (size_t k = i + 1; k < rr->n; k++)
			if (streq(rr->marks[k].key, key)) {
				end = rr->marks[k].start;
				break;
			}
		return xstrndup(rr->out.buf + rr->marks[i].end, end - rr->marks[i].end);
	}
	return NULL;
}

void remote_reply_part(const struct remote_reply *rr, const char *key, const char *value,
		       struct remote_reply *part)
{
	char *text = remote_part_text(rr, key, value);
	*part = (struct remote_reply)REMOTE_REPLY_INIT;
	if (text)
		strbuf_adds(&part->out, text);
	free(text);
	strbuf_add(&part->err, rr->err.buf, rr->err.len);
	part->status = rr->status;
	remote_reply_parse(part);
}

char *remote_section_text(const struct remote_reply *rr, const char *key)
{
	for (size_t i = 0; i < rr->n; i++) {
		if (!streq(rr->marks[i].key, key))
			continue;
		size_t end = rr->out.len;
		for (size_t k = i + 1; k < rr->n; k++)
			if (rr->marks[k].known) {
				end = rr->marks[k].start;
				break;
			}
		return xstrndup(rr->out.buf + rr->marks[i].end, end - rr->marks[i].end);
	}
	return NULL;
}
