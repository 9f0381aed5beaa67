/* SPDX-License-Identifier: MIT */
#include "sched/plain/plainjob.h"

#include <stdlib.h>

#include "base/marker.h"
#include "base/shquote.h"
#include "gpu/nvidia_smi.h"
#include "inventory/jobspec.h"
#include "sched/slurm/slurm.h"
#include "sched/slurm/slurm_queue.h"
#include "shfiles.h"

/* The restart events the launcher and status.sh act on, joined by ',' ("-": none). */
static char *restart_events(const struct plainjob_lease *lease)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	if (lease->restart_on_timeout)
		strbuf_adds(&sb, ",timeout");
	if (lease->restart_on_error)
		strbuf_adds(&sb, ",error");
	if (lease->restart_on_lost)
		strbuf_adds(&sb, ",lost");
	return xstrdup(sb.len ? sb.buf + 1 : "-");
}

/* STAGE/launch.sh: starts the launcher in the job's directory with the job's
 * arguments, the first attempt's number as its own argument (0 at submission;
 * status.sh's restart of a lost run gives the next). Every value is quoted here. */
static void launch_script(struct strbuf *sb, const char *stage_dir, const char *workdir,
			  const char *log_path, const char *job_id,
			  const struct plainjob_lease *lease)
{
	_cleanup_free_ char *events = restart_events(lease);
	strbuf_adds(sb, "# dispatch: starts the job's launcher (lib/sched/plain/plainjob.c)\numask 077\nd=");
	sh_quote(sb, stage_dir);
	strbuf_adds(sb, "\ncd -- ");
	sh_quote(sb, workdir);
	strbuf_adds(sb, " || exit 1\nsetsid bash \"$d/launcher.sh\" \"$d\" ");
	sh_quote(sb, job_id);
	strbuf_addf(sb, " %ld %d ", lease->gpus > 0 ? lease->gpus : 0, lease->gpu_share ? 1 : 0);
	sh_quote(sb, lease->lock_dir && *lease->lock_dir ? lease->lock_dir : PLAINJOB_LOCK_DIR);
	strbuf_addf(sb, " %ld ", lease->max_jobs > 0 ? lease->max_jobs : 0);
	sh_quote(sb, lease->allowed ? lease->allowed : "");
	strbuf_addf(sb, " %ld %d ", lease->busy_mib > 0 ? lease->busy_mib : NVIDIA_SMI_BUSY_MIB,
		    lease->lock_wait > 0 ? lease->lock_wait : PLAINJOB_LOCK_WAIT);
	sh_quote(sb, lease->dependency ? lease->dependency : "");
	strbuf_addf(sb, " %ld %ld ", lease->time_limit > 0 ? lease->time_limit : 0,
		    lease->grace > 0 ? lease->grace : PLAINJOB_GRACE);
	sh_quote(sb, lease->stop_signal && *lease->stop_signal ? lease->stop_signal
							       : PLAINJOB_STOP_SIGNAL);
	strbuf_addf(sb, " %ld %s \"${1:-0}\"", lease->max_restarts > 0 ? lease->max_restarts : 0,
		    events);
	if (lease->sweep) { /* a sweep's task: the sweep, and its cap on this host */
		strbuf_addch(sb, ' ');
		sh_quote(sb, lease->sweep);
		strbuf_addf(sb, " %ld", lease->sweep_max > 0 ? lease->sweep_max : 0);
	}
	strbuf_adds(sb, " </dev/null >>");
	sh_quote(sb, log_path);
	strbuf_adds(sb, " 2>&1 &\n");
}

/* The tools the launch needs, and $d/launcher.sh written (d and w set, in w). */
static void launcher_file(struct strbuf *sb)
{
	strbuf_adds(sb,
		"for c in setsid bash; do\n"
		"\tif ! command -v $c >/dev/null 2>&1; then\n"
		"\t\techo \"dispatch: $c not found on $(hostname): cannot start the job\" >&2\n"
		"\t\texit 1\n"
		"\tfi\n"
		"done\n"
		"cat >\"$d/launcher.sh\" <<'DISPATCH_LAUNCHER_END' || exit 1\n");
	strbuf_adds(sb, "# dispatch's launcher: the job's process group leader on a plain host "
		    "(lib/sched/plain/plainjob.h)\n");
	/* lease_fns.sh and launcher.sh, of this folder, and a run's dispatch_notify
	 * (jobs/run_notify.sh; shfiles.h) */
	strbuf_adds(sb, shfile_sched_plain_lease_fns);
	strbuf_adds(sb, shfile_jobs_run_notify);
	strbuf_adds(sb, shfile_sched_plain_launcher);
	strbuf_adds(sb, "DISPATCH_LAUNCHER_END\n");
}

static void set_dirs(struct strbuf *sb, const char *stage_dir, const char *workdir)
{
	strbuf_adds(sb, "d=");
	sh_quote(sb, stage_dir);
	strbuf_adds(sb, "\nw=");
	sh_quote(sb, workdir);
	strbuf_adds(sb, "\numask 077\ncd -- \"$w\" || exit 1\n");
}

void plainjob_launch_command(struct strbuf *sb, const char *stage_dir, const char *workdir,
			     const char *log_path, const char *job_id,
			     const struct plainjob_lease *lease)
{
	static const struct plainjob_lease none = { 0 };
	if (!lease)
		lease = &none;
	set_dirs(sb, stage_dir, workdir);
	strbuf_adds(sb, "pwd >\"$d/workdir\" || exit 1\n");
	launcher_file(sb);
	/* launch.sh, written whole as one quoted word (no here-document a value could end) */
	_cleanup_strbuf_ struct strbuf launch = STRBUF_INIT;
	launch_script(&launch, stage_dir, workdir, log_path, job_id, lease);
	strbuf_adds(sb, "printf %s ");
	sh_quote(sb, launch.buf);
	strbuf_adds(sb, " >\"$d/launch.sh\" || exit 1\nsh \"$d/launch.sh\" 0\n");
	/* Until the launcher has started the job, queued it or given up (a lock
	 * directory refused, too many GPUs asked for): the last is the submission's
	 * error. */
	strbuf_adds(sb,
		"i=0\n"
		"until [ -s \"$d/pid\" ] && { [ -f \"$d/lease\" ] || [ -f \"$d/pending\" ] ||\n"
		"\t[ -f \"$d/exit_status\" ]; } || [ \"$i\" -ge 100 ]; do\n"
		"\tsleep 0.1 2>/dev/null || sleep 1\n"
		"\ti=$((i + 1))\n"
		"done\n"
		"if [ ! -s \"$d/pid\" ]; then\n"
		"\techo \"dispatch: the job did not start: no $d/pid after 10 s\" >&2\n"
		"\texit 1\n"
		"fi\n"
		"if [ -f \"$d/failed\" ]; then\n"
		"\tsed 's/^/dispatch: /' \"$d/failed\" >&2\n"
		"\texit 1\n"
		"fi\n");
	marker_print(sb, MARK_PID, "\"$(cut -d ' ' -f 1 \"$d/pid\")\"");
}

/* The task's stage dir: next to the sweep's. Caller frees. */
static char *task_dir(const char *sweep_stage_dir, const char *id)
{
	const char *slash = strrchr(sweep_stage_dir, '/');
	size_t n = slash ? (size_t)(slash - sweep_stage_dir) : 0;
	return xasprintf("%.*s/%s", (int)n, sweep_stage_dir, id);
}

void plainjob_launch_tasks_command(struct strbuf *sb, struct strbuf *in,
				   const char *sweep_stage_dir, const char *workdir,
				   const struct plainjob_task *tasks, size_t n,
				   const struct plainjob_lease *lease)
{
	static const struct plainjob_lease none = { 0 };
	if (!lease)
		lease = &none;
	/* the command: the program (in) saved as $d/start.sh and run there; as one
	 * command it would outgrow what one SSH packet holds with a few tasks */
	set_dirs(sb, sweep_stage_dir, workdir);
	strbuf_adds(sb, "if [ ! -f \"$d/bootstrap.sh\" ]; then\n"
			"\techo \"dispatch: no $d/bootstrap.sh: cannot start the sweep's tasks\" >&2\n"
			"\texit 1\n"
			"fi\n"
			"cat >\"$d/start.sh\" || exit 1\n"
			". \"$d/start.sh\"\n");
	/* the program is one function, called on its last line: a program cut short (the
	 * connection lost while it was sent) is a syntax error and runs nothing */
	strbuf_adds(in, "dispatch_start() {\n");
	launcher_file(in);
	strbuf_adds(in, shfile_sched_plain_tasks); /* tasks.sh: dispatch_task, dispatch_tasks_wait */
	strbuf_adds(in, "echo " MARK_TASKS_BEGIN "\n");
	for (size_t i = 0; i < n; i++) {
		_cleanup_free_ char *dir = task_dir(sweep_stage_dir, tasks[i].id);
		_cleanup_strbuf_ struct strbuf launch = STRBUF_INIT;
		launch_script(&launch, dir, workdir, tasks[i].log_path, tasks[i].id, lease);
		strbuf_adds(in, "dispatch_task ");
		sh_quote(in, tasks[i].id);
		strbuf_addch(in, ' ');
		sh_quote(in, launch.buf);
		strbuf_addch(in, '\n');
	}
	strbuf_adds(in, "dispatch_tasks_wait");
	for (size_t i = 0; i < n; i++) {
		strbuf_addch(in, ' ');
		sh_quote(in, tasks[i].id);
	}
	strbuf_adds(in, "\n}\ndispatch_start\n");
}

void plainjob_retry_command(struct strbuf *sb, const char *const *ids,
			    const char *const *stages, size_t n)
{
	strbuf_adds(sb, shfile_sched_plain_retry); /* dispatch_retry ID STAGE */
	for (size_t i = 0; i < n; i++) {
		strbuf_adds(sb, "dispatch_retry ");
		sh_quote(sb, ids[i]);
		strbuf_addch(sb, ' ');
		sh_quote(sb, stages[i]);
		strbuf_addch(sb, '\n');
	}
	strbuf_adds(sb, "true\n");
}

void plainjob_task_pids_command(struct strbuf *sb, const char *sweep_stage_dir,
				const struct plainjob_task *tasks, size_t n)
{
	_cleanup_free_ char *any = task_dir(sweep_stage_dir, "");
	strbuf_adds(sb, "s=");
	sh_quote(sb, any);
	strbuf_adds(sb, "\nfor t in");
	for (size_t i = 0; i < n; i++) {
		strbuf_addch(sb, ' ');
		sh_quote(sb, tasks[i].id);
	}
	strbuf_adds(sb, "; do\n"
			"\tp=$(cut -d ' ' -f 1 \"$s$t/pid\" 2>/dev/null) || continue\n"
			"\t[ -n \"$p\" ] || continue\n");
	strbuf_addf(sb, "\tprintf '%s %%s started %%s\\n' \"$t\" \"$p\"\n"
			"done\ntrue\n", MARK_TASK);
}

long plainjob_parse_task_pid(const char *out, const char *id, bool *failed)
{
	struct line_iter it = LINE_ITER_INIT(out);
	long pid = -1;
	size_t n = strlen(id);
	*failed = false;
	for (char *line; (line = line_next(&it));) {
		const char *v = marker_value(line, MARK_TASK);
		if (!v || strncmp(v, id, n) != 0 || v[n] != ' ')
			continue;
		v += n + 1;
		long p;
		const char *sp = strchr(v, ' ');
		if (startswith(v, "none")) {
			*failed = true;
			pid = 0;
		} else if (sp && parse_long(sp + 1, 2, 0x7fffffff, &p)) {
			*failed = startswith(v, "failed ");
			pid = p;
		}
	}
	line_iter_release(&it);
	return pid;
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
	strbuf_addf(sb, " %ld%s\n", j->pgid > 1 ? j->pgid : 0, j->restart ? " restart" : "");
}

void plainjob_status_command(struct strbuf *sb, const struct plainjob_ref *jobs, size_t n)
{
	bool restart = false;
	for (size_t i = 0; i < n; i++)
		restart |= jobs[i].restart;
	marker_print(sb, MARK_NOW, "\"$(date +%s)\"");
	strbuf_adds(sb, shfile_sched_plain_alive);  /* alive.sh: dispatch_pg, dispatch_alive */
	strbuf_adds(sb, shfile_sched_plain_status); /* status.sh: dispatch_q ID STAGE PGID */
	if (restart) /* a run given up after LOST tells its webhook */
		strbuf_adds(sb, shfile_jobs_run_notify);
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
		/* ID|START|cancelled or timeout|pending, running, exited STATUS END or gone|GPUS|REASON
		 * (START: the bootstrap's start once the lease file is there) */
		char *f[6], *s = line + (v - line);
		size_t k = 0;
		for (; k < 5; k++) {
			char *bar = strchr(s, '|');
			if (!bar)
				break;
			*bar = '\0';
			f[k] = s;
			s = bar + 1;
		}
		if (k < 3 || !f[0][0])
			continue;
		if (k == 3) { /* the four fields of a launcher without leases */
			f[3] = s;
			f[4] = (char *)"-";
			f[5] = (char *)"";
		} else if (k == 4) {
			f[4] = s;
			f[5] = (char *)"";
		} else {
			f[5] = s;
		}
		struct plainjob_status st = { .exit_code = -1, .exit_signal = -1, .elapsed = -1 };
		long start = -1, status, end;
		if (!parse_long(f[1], 0, 0x7fffffffffffL, &start))
			start = -1;
		bool cancelled = streq(f[2], "cancelled"), timeout = streq(f[2], "timeout");
		char word[16];
		if (streq(f[3], "running")) {
			st.state = "RUNNING";
			if (start >= 0 && now >= start)
				st.elapsed = now - start;
		} else if (streq(f[3], "pending")) {
			st.state = "PENDING";
			st.elapsed = 0;
		} else if (sscanf(f[3], "exited %ld %ld", &status, &end) == 2 && status >= 0 &&
			   status <= 255) {
			set_exit(&st, status);
			st.state = cancelled ? "CANCELLED" : timeout ? "TIMEOUT"
				 : status == 0 ? "COMPLETED" : "FAILED";
			if (start >= 0 && end >= start)
				st.elapsed = end - start;
		} else if (sscanf(f[3], "%15s", word) == 1 && streq(word, "gone")) {
			st.state = cancelled ? "CANCELLED" : timeout ? "TIMEOUT" : "LOST";
		} else {
			continue;
		}
		st.gpus = xstrdup(streq(f[4], "-") ? "" : f[4]);
		st.reason = xstrdup(f[5]);
		st.id = xstrdup(f[0]);
		*res = xrealloc(*res, (n + 1) * sizeof(**res));
		(*res)[n++] = st;
	}
	line_iter_release(&it);
	return n;
}

void plainjob_status_free(struct plainjob_status *res, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(res[i].id);
		free(res[i].gpus);
		free(res[i].reason);
	}
	free(res);
}

void plainjob_cancel_command(struct strbuf *sb, const struct plainjob_ref *jobs, size_t n)
{
	strbuf_adds(sb, shfile_sched_plain_alive);  /* alive.sh: dispatch_pg, dispatch_alive */
	strbuf_adds(sb, shfile_sched_plain_cancel); /* cancel.sh: dispatch_c ID STAGE PGID */
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

void plainjob_queue_command(struct strbuf *sb, const char *lock_dir)
{
	_cleanup_strbuf_ struct strbuf script = STRBUF_INIT;
	/* lease_fns.sh and queue.sh: the listing, in bash under timeout */
	strbuf_adds(&script, shfile_sched_plain_lease_fns);
	strbuf_adds(&script, shfile_sched_plain_queue);
	strbuf_adds(sb, "L=");
	sh_quote(sb, lock_dir && *lock_dir ? lock_dir : PLAINJOB_LOCK_DIR);
	strbuf_adds(sb, "\n");
	marker_print(sb, MARK_USER, "\"$(id -un)\"");
	marker_print(sb, MARK_NOW, "\"$(date +%s)\"");
	/* bounded as a whole (a listing never hangs on what another user left there) */
	strbuf_adds(sb,
		"if [ -d \"$L\" ] && [ ! -L \"$L\" ] && { [ -e \"$L/.lock\" ] || [ -L \"$L/.lock\" ]; }; then\n"
		"\tfor c in flock timeout bash; do\n"
		"\t\tif ! command -v $c >/dev/null 2>&1; then\n"
		"\t\t\techo \"dispatch: $c not found on $(hostname)\" >&2\n"
		"\t\t\texit 1\n"
		"\t\tfi\n"
		"\tdone\n");
	strbuf_addf(sb, "\ttimeout -k 1 %d bash -c ", 2 * PLAINJOB_LOCK_WAIT + 5);
	sh_quote(sb, script.buf);
	strbuf_addf(sb, " dispatch-queue \"$L\" %d\n", PLAINJOB_LOCK_WAIT);
	strbuf_adds(sb,
		"\ts=$?\n"
		"\tif [ $s = 124 ] || [ $s = 137 ]; then\n");
	strbuf_addf(sb, "\t\techo \"dispatch: listing the jobs in $L took over %d s: a record there may not be a regular file\" >&2\n",
		    2 * PLAINJOB_LOCK_WAIT + 5);
	strbuf_adds(sb,
		"\tfi\n"
		"\t[ $s = 0 ] || exit 1\n"
		"fi\n");
	marker_print(sb, MARK_END, "0");
}

/* "NAME-YYYYMMDD-HHMMSS-NONCE" (jobscript_stage_name), and a sweep's task's, that and
 * "-K": NAME */
static char *name_of(const char *id)
{
	char *name = xstrdup(id);
	size_t stage;
	if (jobspec_plain_task_id(name, &stage))
		name[stage] = '\0';
	for (int k = 0; k < 3; k++) {
		char *dash = strrchr(name, '-');
		if (!dash)
			break;
		*dash = '\0';
	}
	return name;
}

int plainjob_parse_queue(const char *out, const struct slurm_queue_filter *f,
			 struct slurm_queue *q, struct dp_error *err)
{
	memset(q, 0, sizeof(*q));
	long now = -1, t;
	bool end = false;
	struct line_iter it = LINE_ITER_INIT(out);
	for (char *line; (line = line_next(&it));) {
		const char *v;
		if ((v = marker_value(line, MARK_NOW))) {
			if (parse_long(v, 0, 0x7fffffffffffL, &t))
				now = t;
			continue;
		}
		if ((v = marker_value(line, MARK_USER))) {
			free(q->user);
			q->user = xstrdup(v);
			continue;
		}
		if (marker_value(line, MARK_END)) {
			end = true;
			continue;
		}
		if (!(v = marker_value(line, MARK_QJOB)) || !*v)
			continue;
		/* ID|OWNER|USER|STATE|NGPUS|GPUS|SINCE|REASON (OWNER: the record file's) */
		char *fl[8], *s = line + (v - line);
		size_t k = 0;
		for (; k < 7; k++) {
			char *bar = strchr(s, '|');
			if (!bar)
				break;
			*bar = '\0';
			fl[k] = s;
			s = bar + 1;
		}
		if (k < 7 || !fl[0][0] || !fl[1][0])
			continue;
		fl[7] = s;
		bool running = streq(fl[3], "running");
		if (!running && !streq(fl[3], "pending") && !streq(fl[3], "held"))
			continue; /* held: waiting for its dependencies, PENDING with the reason */
		long since = -1;
		if (!parse_long(fl[6], 0, 0x7fffffffffffL, &since))
			since = -1;
		/* A record that names another user than its owner: shown as what it is (the
		 * launchers ignore it), under its owner's name. */
		bool forged = !streq(fl[1], fl[2]);
		struct slurm_qjob j = {
			.id = xstrdup(fl[0]),
			.partition = xstrdup(""),
			.user = xstrdup(fl[1]),
			.name = name_of(fl[0]),
			.state = xstrdup(forged ? "IGNORED" : running ? "RUNNING" : "PENDING"),
			.elapsed = slurm_format_seconds(running && !forged && since >= 0 && now >= since
							? now - since : 0),
			.node_count = 1,
			.nodes = xstrdup(""),
			.reason = forged ? xasprintf("a record of %s's that claims to be %s's: ignored",
						     fl[1], fl[2])
				: xstrdup(running ? "None" : fl[7]),
			.gpus = xstrdup(forged ? "" : fl[5]),
			.restarts = -1,
		};
		struct slurm_queue_filter g = *f;
		if (forged && !g.states)
			g.states = "all"; /* shown unless the states asked leave it out */
		if (!slurm_queue_wanted(&g, q, &j)) {
			slurm_qjob_release(&j);
			continue;
		}
		q->jobs = xrealloc(q->jobs, (q->n + 1) * sizeof(*q->jobs));
		q->jobs[q->n++] = j;
	}
	line_iter_release(&it);
	q->format = xstrdup("plain");
	q->squeue_status = end ? 0 : -1;
	if (!end)
		return dp_err(err, DPE_FAIL, "the host did not list its queue to the end");
	return 0;
}
