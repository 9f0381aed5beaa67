/* SPDX-License-Identifier: MIT */
#include "jobs/joblog.h"

#include "base/shquote.h"
#include "base/util.h"
#include "transport/ssh.h"

#define STR_(x) #x
#define STR(x) STR_(x)

void joblog_cat_command(struct strbuf *sb, const char *path)
{
	strbuf_adds(sb, "f=");
	sh_quote(sb, path);
	strbuf_adds(sb, "\n[ -e \"$f\" ] || exit " STR(JOBLOG_NO_FILE) "\nexec cat -- \"$f\"\n");
}

void joblog_tail_command(struct strbuf *sb, const char *path, int lines)
{
	strbuf_adds(sb, "f=");
	sh_quote(sb, path);
	strbuf_addf(sb, "\n[ -e \"$f\" ] || exit " STR(JOBLOG_NO_FILE) "\n"
		    "tail -n %d -- \"$f\" | cut -b 1-1000\n", lines > 0 ? lines : 1);
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
