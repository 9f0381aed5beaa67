/* SPDX-License-Identifier: MIT */
#include "slurm/plainjob.h"

#include <stdlib.h>

#include "base/marker.h"
#include "base/shquote.h"


void plainjob_launch_command(struct strbuf *sb, const char *stage_dir, const char *workdir,
			     const char *log_path, const char *job_id)
{
	strbuf_adds(sb, "d=");
	sh_quote(sb, stage_dir);
	strbuf_adds(sb, "\nw=");
	sh_quote(sb, workdir);
	strbuf_adds(sb, "\nlog=");
	sh_quote(sb, log_path);
	strbuf_adds(sb, "\nid=");
	sh_quote(sb, job_id);
	/* The group leader: records its pid (= the group id, setsid made it a session
	 * leader), ignores HUP as nohup does, survives TERM (a handler, reset in the
	 * bootstrap, which forwards TERM to the command) to record the exit status. */
	strbuf_adds(sb,
		"\numask 077\n"
		"cd -- \"$w\" || exit 1\n"
		"if ! command -v setsid >/dev/null 2>&1; then\n"
		"\techo \"dispatch: setsid not found on $(hostname): cannot detach the job\" >&2\n"
		"\texit 1\n"
		"fi\n"
		"setsid /bin/sh -c '\n"
		"\td=$1\n"
		"\techo \"$$ $(date +%s)\" >\"$d/pid.tmp\" && mv -f \"$d/pid.tmp\" \"$d/pid\"\n"
		"\ttrap \"\" HUP\n"
		"\ttrap : TERM INT\n"
		"\tDISPATCH_JOB_ID=$2 bash \"$d/bootstrap.sh\"\n"
		"\tst=$?\n"
		"\techo \"$st $(date +%s)\" >\"$d/exit_status.tmp\" && mv -f \"$d/exit_status.tmp\" \"$d/exit_status\"\n"
		"' dispatch-job \"$d\" \"$id\" </dev/null >>\"$log\" 2>&1 &\n"
		"i=0\n"
		"while [ ! -s \"$d/pid\" ] && [ \"$i\" -lt 100 ]; do\n"
		"\tsleep 0.1 2>/dev/null || sleep 1\n"
		"\ti=$((i + 1))\n"
		"done\n"
		"if [ ! -s \"$d/pid\" ]; then\n"
		"\techo \"dispatch: the job did not start: no $d/pid after 10 s\" >&2\n"
		"\texit 1\n"
		"fi\n");
	marker_print(sb, MARK_PID, "\"$(cut -d ' ' -f 1 \"$d/pid\")\"");
}

void plainjob_pid_command(struct strbuf *sb, const char *stage_dir)
{
	_cleanup_strbuf_ struct strbuf word = STRBUF_INIT;
	strbuf_adds(&word, "\"$(cut -d ' ' -f 1 ");
	sh_quote(&word, stage_dir);
	strbuf_adds(&word, "/pid 2>/dev/null)\"");
	marker_print(sb, MARK_PID, word.buf);
}

long plainjob_parse_pid(const char *out)
{
	return marker_find_long(out, MARK_PID, 2, 0x7fffffff);
}

static void job_args(struct strbuf *sb, const char *fn, const struct plainjob_ref *j)
{
	strbuf_addf(sb, "%s ", fn);
	sh_quote(sb, j->id);
	strbuf_addch(sb, ' ');
	sh_quote(sb, j->stage_dir);
	strbuf_addf(sb, " %ld\n", j->pgid > 1 ? j->pgid : 0);
}

void plainjob_status_command(struct strbuf *sb, const struct plainjob_ref *jobs, size_t n)
{
	marker_print(sb, MARK_NOW, "\"$(date +%s)\"");
	strbuf_adds(sb,
		"dispatch_q() {\n"
		"\tst=\n"
		"\tif [ -f \"$2/pid\" ]; then\n"
		"\t\tst=$(cut -d ' ' -f 2 \"$2/pid\")\n"
		"\tfi\n"
		"\tc=\n"
		"\tif [ -f \"$2/cancelled\" ]; then\n"
		"\t\tc=cancelled\n"
		"\tfi\n"
		"\tif [ -f \"$2/exit_status\" ]; then\n"
		"\t\ts=\"exited $(cat \"$2/exit_status\")\"\n"
		"\telif [ \"$3\" -gt 1 ] && kill -0 \"-$3\" 2>/dev/null; then\n"
		"\t\ts=running\n"
		"\telse\n"
		"\t\ts=gone\n"
		"\tfi\n"
		"\tprintf '" MARK_JOB " %s|%s|%s|%s\\n' \"$1\" \"$st\" \"$c\" \"$s\"\n"
		"}\n");
	for (size_t i = 0; i < n; i++)
		job_args(sb, "dispatch_q", &jobs[i]);
}

static void set_exit(struct plainjob_status *s, long status)
{
	s->exit_code = (int)status;
	s->exit_signal = status > 128 && status < 128 + 65 ? (int)status - 128 : 0;
}

size_t plainjob_parse_status(const char *out, struct plainjob_status **res)
{
	long now = -1;
	size_t n = 0;
	*res = NULL;
	struct line_iter it = LINE_ITER_INIT(out);
	for (char *line; (line = line_next(&it));) {
		const char *v;
		long t;
		if ((v = marker_value(line, MARK_NOW))) {
			if (parse_long(v, 0, 0x7fffffffffffL, &t))
				now = t;
			continue;
		}
		if (!(v = marker_value(line, MARK_JOB)) || !*v)
			continue;
		/* ID|START|cancelled|running or exited STATUS END or gone */
		char *f[4], *s = line + (v - line);
		size_t k = 0;
		for (; k < 3; k++) {
			char *bar = strchr(s, '|');
			if (!bar)
				break;
			*bar = '\0';
			f[k] = s;
			s = bar + 1;
		}
		if (k < 3 || !f[0][0])
			continue;
		f[3] = s;
		struct plainjob_status st = { .exit_code = -1, .exit_signal = -1, .elapsed = -1 };
		long start = -1, status, end;
		if (!parse_long(f[1], 0, 0x7fffffffffffL, &start))
			start = -1;
		bool cancelled = streq(f[2], "cancelled");
		char word[16];
		if (streq(f[3], "running")) {
			st.state = "RUNNING";
			if (start >= 0 && now >= start)
				st.elapsed = now - start;
		} else if (sscanf(f[3], "exited %ld %ld", &status, &end) == 2 && status >= 0 &&
			   status <= 255) {
			set_exit(&st, status);
			st.state = cancelled ? "CANCELLED" : status == 0 ? "COMPLETED" : "FAILED";
			if (start >= 0 && end >= start)
				st.elapsed = end - start;
		} else if (sscanf(f[3], "%15s", word) == 1 && streq(word, "gone")) {
			st.state = cancelled ? "CANCELLED" : "UNKNOWN";
		} else {
			continue;
		}
		st.id = xstrdup(f[0]);
		*res = xrealloc(*res, (n + 1) * sizeof(**res));
		(*res)[n++] = st;
	}
	line_iter_release(&it);
	return n;
}

void plainjob_status_free(struct plainjob_status *res, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(res[i].id);
	free(res);
}

void plainjob_cancel_command(struct strbuf *sb, const struct plainjob_ref *jobs, size_t n)
{
	strbuf_adds(sb,
		"dispatch_c() {\n"
		"\tif [ -f \"$2/exit_status\" ]; then\n"
		"\t\tprintf '" MARK_CANCEL " %s ended\\n' \"$1\"\n"
		"\telif [ \"$3\" -gt 1 ] && kill -0 \"-$3\" 2>/dev/null; then\n"
		"\t\t: >\"$2/cancelled\"\n"
		"\t\tkill -TERM \"-$3\" 2>/dev/null\n"
		"\t\tprintf '" MARK_CANCEL " %s signalled\\n' \"$1\"\n"
		"\telse\n"
		"\t\tprintf '" MARK_CANCEL " %s gone\\n' \"$1\"\n"
		"\tfi\n"
		"}\n");
	for (size_t i = 0; i < n; i++)
		job_args(sb, "dispatch_c", &jobs[i]);
}

const char *plainjob_parse_cancel(const char *out, const char *id)
{
	struct line_iter it = LINE_ITER_INIT(out);
	const char *outcome = NULL;
	size_t n = strlen(id);
	for (char *line; (line = line_next(&it)) && !outcome;) {
		const char *v = marker_value(line, MARK_CANCEL);
		if (!v || strncmp(v, id, n) != 0 || v[n] != ' ')
			continue;
		v += n + 1;
		outcome = startswith(v, "signalled") ? "signalled"
			: startswith(v, "ended") ? "ended" : "gone";
	}
	line_iter_release(&it);
	return outcome;
}
