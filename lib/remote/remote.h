/* SPDX-License-Identifier: MIT */
/*
 * The one remote exchange: a script built in sections, run once over a session, and
 * its reply parsed once into the marker lines it holds (lib/base/marker.h names every
 * key), each section's exit status among them.
 *
 * The builder records which sections it emitted, so a caller asks the script, never
 * its text, whether a tool was asked at all:
 *
 *	struct remote_script rs = REMOTE_SCRIPT_INIT;
 *	slurm_squeue_command(remote_section(&rs, REMOTE_SQUEUE), ids);
 *	struct remote_reply rr = REMOTE_REPLY_INIT;
 *	if (remote_run(ss, &rs, &rr, &err) < 0)
 *		...                                     // no answer: err says why
 *	int sq = remote_section_exit(&rs, &rr, REMOTE_SQUEUE);   // 0 when not emitted
 *	remote_reply_release(&rr);
 *	remote_script_release(&rs);
 *
 * Parsers of a tool's rows read rr.out (the whole stdout) or one section's text
 * (remote_section_text); nothing else of the exchange searches text.
 */
#ifndef DISPATCH_REMOTE_H
#define DISPATCH_REMOTE_H

#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"
#include "base/marker.h"
#include "base/strbuf.h"

/* The sections a script can hold: what a tool's part of the script is, and the marker
 * line that carries its exit status (remote_sections[] in remote.c; NULL: the section
 * reports none). A new section is a line here and one in that table. */
enum remote_section {
	REMOTE_SQUEUE,          /* squeue for job ids: MARK_SQUEUE_EXIT */
	REMOTE_SACCT,           /* sacct for job ids: MARK_SACCT_EXIT */
	REMOTE_PLAIN_STATUS,    /* plain-host jobs' stage dirs (MARK_JOB lines) */
	REMOTE_SCANCEL,         /* scancel: MARK_SCANCEL_EXIT */
	REMOTE_PLAIN_CANCEL,    /* plain-host cancel (MARK_CANCEL lines) */
	REMOTE_STEPS,           /* sacct per step: MARK_STEPS_EXIT */
	REMOTE_END,             /* how failed jobs ended: MARK_FAIL_STEPS_EXIT */
	REMOTE_PENDING,         /* why pending jobs wait */
	REMOTE_PATHS,           /* a job's output paths (scontrol, sacct) */
	REMOTE_TAIL,            /* a log's last lines: the script's exit status */
	REMOTE_SBATCH,          /* sbatch: MARK_SBATCH_EXIT */
	REMOTE_SINFO,           /* sinfo for hosts show --health: MARK_SINFO_EXIT */
	REMOTE_NOTEBOOK,        /* a notebook server's start: MARK_NOTEBOOK_EXIT */
	REMOTE_ATTEMPTS,        /* runs' ended attempts (MARK_ATTEMPT lines) */
	REMOTE_METRICS,         /* jobs' last metrics from their logs (MARK_METRIC lines) */
	REMOTE_USAGE,           /* what jobs did, from their samplers' files (MARK_USAGE) */
	REMOTE_SECTION_COUNT
};

struct remote_section_info {
	const char *name;       /* for messages: "squeue" */
	const char *exit_mark;  /* the exit status line's key; NULL: none */
};
extern const struct remote_section_info remote_sections[REMOTE_SECTION_COUNT];

struct remote_script {
	struct strbuf text;
	unsigned emitted;       /* bit (1u << section) per section emitted */
};
#define REMOTE_SCRIPT_INIT { .text = STRBUF_INIT, .emitted = 0 }

/* Records section s as emitted and returns the text to append its shell to. */
struct strbuf *remote_section(struct remote_script *rs, enum remote_section s);
bool remote_emitted(const struct remote_script *rs, enum remote_section s);
/* No section emitted: nothing to ask. */
bool remote_script_empty(const struct remote_script *rs);
void remote_script_release(struct remote_script *rs);

/* A marker line of the reply: its key (a pointer into the table of marker keys, or to
 * the line's own key when the table does not name it), its value ("" for a mark
 * alone) and where the line starts and ends in out. */
struct remote_mark {
	const char *key;
	char *value;
	size_t start, end;      /* the line, end past its newline */
	bool known;             /* the key is in the table */
};

struct remote_reply {
	struct strbuf out, err; /* the script's stdout and stderr */
	int status;             /* its exit status */
	struct remote_mark *marks;
	size_t n;
};
#define REMOTE_REPLY_INIT { .out = STRBUF_INIT, .err = STRBUF_INIT, .status = -1, .marks = NULL, .n = 0 }

struct ssh_session;
/* The exchange: rs's text as one command over ss, its reply parsed. 0, or -1 with
 * err (the command could not be run: no reply). */
int remote_run(struct ssh_session *ss, const struct remote_script *rs, struct remote_reply *rr,
	       struct dp_error *err);
/* Parses rr->out's marker lines into rr->marks (remote_run does it; exposed for
 * replies read otherwise, and for tests). Lines "dispatch-KEY[ VALUE]" with a key
 * of [a-z0-9-] are marks; any other line is a tool's own. Parsing again starts over. */
void remote_reply_parse(struct remote_reply *rr);
void remote_reply_release(struct remote_reply *rr);

/* The value of the last mark with key (a marker.h MARK_*), or NULL. */
const char *remote_value(const struct remote_reply *rr, const char *key);
/* That value as a number from min to max; -1 when missing or not such a number. */
long remote_long(const struct remote_reply *rr, const char *key, long min, long max);
/* The exit status a section reported (0..255), -1 when its line is missing (the
 * script did not get that far) or the section reports none. */
int remote_exit(const struct remote_reply *rr, enum remote_section s);
/* The same, 0 for a section the script did not emit (nothing asked, nothing failed). */
int remote_section_exit(const struct remote_script *rs, const struct remote_reply *rr,
			enum remote_section s);
/* The text after the first mark with key up to the next known mark (or the end); a
 * copy, NULL when there is no such mark. */
char *remote_section_text(const struct remote_reply *rr, const char *key);

/* One job's part of a section that asks for several (MARK_PATHS_JOB, MARK_TAIL_JOB):
 * the text after the first mark with key and value up to the next mark with key (or
 * the end); a copy, NULL when there is no such mark. */
char *remote_part_text(const struct remote_reply *rr, const char *key, const char *value);

/* That part as a reply of its own (its marks parsed; the whole reply's stderr and
 * status), for a reader of a whole reply: release it with remote_reply_release. */
void remote_reply_part(const struct remote_reply *rr, const char *key, const char *value,
		       struct remote_reply *part);

/* The section whose name is name ("squeue"), or REMOTE_SECTION_COUNT. */
enum remote_section remote_section_named(const char *name);
/* The exit status section s reported in text (a reply not parsed into marks: the
 * last such line), -1 when missing. */
int remote_text_exit(const char *text, enum remote_section s);

/* Every marker key dispatch's scripts print, NULL-terminated (marker.h's MARK_*). */
extern const char *const remote_keys[];

#endif
