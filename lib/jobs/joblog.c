/* SPDX-License-Identifier: MIT */
#include "jobs/joblog.h"

#include "base/marker.h"
#include "base/shquote.h"
#include "base/util.h"
#include "remote/remote.h"
#include "transport/ssh.h"

#define STR_(x) #x
#define STR(x) STR_(x)

void joblog_cat_command(struct strbuf *sb, const char *path)
{
	strbuf_adds(sb, "f=");
	sh_quote(sb, path);
	strbuf_adds(sb, "\n[ -e \"$f\" ] || exit " STR(JOBLOG_NO_FILE) "\nexec cat -- \"$f\"\n");
}

void joblog_tails_command(struct strbuf *sb, char *const *paths, size_t n, int lines)
{
	strbuf_adds(sb, "exec 3>&1\n");
	for (size_t i = 0; i < n; i++) {
		if (!paths[i])
			continue;
		char idx[24];
		snprintf(idx, sizeof(idx), "%zu", i);
		marker_print(sb, MARK_TAIL_JOB, idx);
		strbuf_adds(sb, "f=");
		sh_quote(sb, paths[i]);
		/* the lines to stdout (fd 3), led by '|'; tail's errors kept apart */
		strbuf_addf(sb, "\nif [ -e \"$f\" ]; then\n"
			    "\te=$( { tail -n %d -- \"$f\" | cut -b 1-1000 | awk '{ print \"|\" $0 }' >&3; } 2>&1 )\n"
			    "\ts=$?\n"
			    "\t[ -z \"$e\" ] || ", lines > 0 ? lines : 1);
		marker_print(sb, MARK_TAIL_ERR, "\"$(printf '%s\\n' \"$e\" | head -n 1)\"");
		strbuf_adds(sb, "\t");
		marker_print(sb, MARK_TAIL_EXIT, "\"$s\"");
		strbuf_adds(sb, "else\n\t");
		marker_print(sb, MARK_TAIL_EXIT, STR(JOBLOG_NO_FILE));
		strbuf_adds(sb, "fi\n");
	}
}

int joblog_tails_take(const struct remote_reply *rr, size_t i, char **text, char **error)
{
	char idx[24];
	snprintf(idx, sizeof(idx), "%zu", i);
	_cleanup_free_ char *part = remote_part_text(rr, MARK_TAIL_JOB, idx);
	*text = *error = NULL;
	if (!part) {
		*error = xstrdup("no answer for its log");
		return -1;
	}
	_cleanup_strbuf_ struct strbuf lines = STRBUF_INIT;
	_cleanup_free_ char *err = NULL;
	long status = -1;
	struct line_iter it = LINE_ITER_INIT(part);
	for (char *line; (line = line_next(&it));) {
		const char *v;
		if (line[0] == '|')
			strbuf_addf(&lines, "%s\n", line + 1);
		else if ((v = marker_value(line, MARK_TAIL_ERR)) && !err)
			err = xstrdup(v);
		else if ((v = marker_value(line, MARK_TAIL_EXIT)) && !parse_long(v, 0, 255, &status))
			status = -1;
	}
	line_iter_release(&it);
	if (status == JOBLOG_NO_FILE)
		*error = xstrdup("the job wrote no such file");
	else if (status < 0)
		*error = xstrdup("no answer for its log");
	else if (status != 0 || (!lines.len && err))
		*error = xasprintf("cannot read it (exit status %ld)%s%s", status, err ? ": " : "",
				   err ? err : "");
	else
		*text = strbuf_detach(&lines);
	return *text ? 0 : -1;
}

/* The common part: $f is the file, dispatch_active says whether the job still runs.
 * The watcher also ends when this shell is gone (the client went away). */
static void follow_tail(struct strbuf *sb)
{
	strbuf_adds(sb,
		"me=$$\n"
		"( i=1\n"
		"  while dispatch_active && kill -0 \"$me\" 2>/dev/null; do\n"
		"\tsleep \"$i\"\n"
		"\t[ \"$i\" -lt 5 ] && i=$((i + 1))\n"
		"  done ) </dev/null >/dev/null 2>&1 &\n"
		"w=$!\n"
		"while [ ! -e \"$f\" ] && kill -0 \"$w\" 2>/dev/null; do\n"
		"\tsleep 1\n"
		"done\n"
		"[ -e \"$f\" ] || exit " STR(JOBLOG_NO_FILE) "\n"
		/* not exec: the watcher would become tail's child, a zombie tail never
		 * reaps, and kill -0 on a zombie succeeds: tail would never end */
		"if tail --version 2>/dev/null | grep -q GNU; then\n"
		"\ttail -n +1 -f --pid=\"$w\" -- \"$f\"\n"
		"\texit $?\n"
		"fi\n"
		"tail -n +1 -f -- \"$f\" &\n"
		"t=$!\n"
		"wait \"$w\"\n"
		"sleep 1\n"
		"kill \"$t\" 2>/dev/null\n"
		"wait \"$t\" 2>/dev/null\n"
		"exit 0\n");
}

void joblog_follow_slurm_command(struct strbuf *sb, const char *path, const char *id)
{
	strbuf_adds(sb, "f=");
	sh_quote(sb, path);
	strbuf_adds(sb, "\nid=");
	sh_quote(sb, id);
	/* The controller not answering is no end: keep following. */
	strbuf_adds(sb,
		"\ndispatch_active() {\n"
		"\ts=$(squeue -h -j \"$id\" -o %T 2>&1)\n"
		"\tif [ $? -ne 0 ]; then\n"
		"\t\tcase $s in *'Invalid job id'*) return 1 ;; esac\n"
		"\t\treturn 0\n"
		"\tfi\n"
		"\tcase $s in\n"
		"\t*PENDING* | *RUNNING* | *CONFIGURING* | *COMPLETING* | *SUSPENDED* | *REQUEUE* | \\\n"
		"\t*RESIZING* | *SIGNALING* | *STAGE_OUT* | *STOPPED* | *SPECIAL_EXIT* | *RESV_DEL_HOLD*)\n"
		"\t\treturn 0 ;;\n"
		"\tesac\n"
		"\treturn 1\n"
		"}\n");
	follow_tail(sb);
}

void joblog_follow_plain_command(struct strbuf *sb, const char *path, const char *stage_dir,
				 long pgid)
{
	strbuf_adds(sb, "f=");
	sh_quote(sb, path);
	strbuf_adds(sb, "\nd=");
	sh_quote(sb, stage_dir);
	strbuf_addf(sb, "\ng=%ld\n", pgid > 1 ? pgid : 0);
	strbuf_adds(sb,
		"dispatch_active() {\n"
		"\t[ ! -f \"$d/exit_status\" ] && [ \"$g\" -gt 1 ] && kill -0 \"-$g\" 2>/dev/null\n"
		"}\n");
	follow_tail(sb);
}

int joblog_stream(struct ssh_session *ss, const struct joblog_request *rq,
		  int (*on_stdout)(void *data, const char *buf, size_t len),
		  int (*on_stderr)(void *data, const char *buf, size_t len), void *data, int *status,
		  struct dp_error *err)
{
	_cleanup_strbuf_ struct strbuf cmd = STRBUF_INIT;
	if (!rq->follow)
		joblog_cat_command(&cmd, rq->path);
	else if (rq->stage_dir)
		joblog_follow_plain_command(&cmd, rq->path, rq->stage_dir, rq->pgid);
	else
		joblog_follow_slurm_command(&cmd, rq->path, rq->id);
	struct ssh_exec x = {
		.command = cmd.buf,
		.in_fd = -1,
		.on_stdout = on_stdout,
		.on_stderr = on_stderr,
		.data = data,
	};
	return ssh_exec(ss, &x, status, err);
}
