/* SPDX-License-Identifier: MIT */
#include "jobs/top.h"

#include <string.h>
#include <time.h>

#include "base/util.h"
#include "gpu/node_health.h"
#include "sched/plain/plainjob_ask.h"
#include "sched/slurm/hostlist.h"
#include "sched/slurm/slurm_top.h"
#include "transport/ssh.h"

const char *top_node_flag(const struct gpu_node *n, size_t nrows, double now, double interval)
{
	if (n->state == GPU_NODE_NO_SMI)
		return "no-nvidia-smi";
	if (gpu_node_stale(n, now, interval))
		return "stale";
	if (n->allocated > 0 && nrows == 0 &&
	    (n->state == GPU_NODE_OK || (n->state == GPU_NODE_FAILED && n->message &&
					 strstr(n->message, "No devices were found"))))
		return "no-gpus-visible";
	if (n->state == GPU_NODE_FAILED)
		return "nvidia-smi-failed";
	if (n->state == GPU_NODE_ENDED)
		return "ended";
	if (n->state == GPU_NODE_WAITING)
		return n->seen > 0 ? "starting" : "waiting";
	if (n->allocated == 0)
		return "no-gpus-allocated";
	return NULL;
}

const struct plain_top *top_node_procs(const struct top_session *s, size_t i)
{
	if (s->plain)
		return i == 0 ? s->plain : NULL;
	return s->nodeprocs ? slurm_procs_node(s->nodeprocs, i) : NULL;
}

bool top_has_procs(const struct top_session *s)
{
	return s->plain || s->nodeprocs;
}

const char *top_node_procs_how(const struct top_session *s, size_t i)
{
	return s->nodeprocs ? s->nodeprocs->how[i] : NULL;
}

size_t top_gpu_procs(const struct plain_top *p, const char *uuid, const struct top_app ***out)
{
	return plain_top_gpu_procs(p, uuid, out);
}

const struct top_proc *top_proc_of(const struct plain_top *p, long pid)
{
	return plain_top_proc(p, pid);
}

bool top_on_shown_gpu(const struct plain_top *p, long pid, const struct gpu_row **rows, size_t nr)
{
	for (size_t a = 0; a < p->napps; a++)
		for (size_t k = 0; p->apps[a].pid == pid && k < nr; k++)
			if (rows[k]->uuid && streq(rows[k]->uuid, p->apps[a].uuid))
				return true;
	return false;
}

/* Each line of the sampling script's output: fed to the samples; a tick shows one. */
static int on_stdout(void *data, const char *buf, size_t len)
{
	struct top_session *s = data;
	strbuf_add(&s->partial, buf, len);
	char *start = s->partial.buf, *nl;
	while ((nl = memchr(start, '\n', (size_t)(s->partial.buf + s->partial.len - start)))) {
		*nl = 0;
		bool tick = gpu_top_feed(&s->top, start, monotonic_seconds());
		if (s->plain)
			plain_top_feed(s->plain, start);
		if (s->nodeprocs)
			slurm_procs_feed(s->nodeprocs, &s->top, start);
		if (tick) {
			if (s->plain)
				plain_top_settle(s->plain, &s->top);
			s->samples++;
			s->show(s, s->data);
			if (s->count > 0 && s->samples >= s->count) {
				s->stopped = true;
				return 1;
			}
		}
		start = nl + 1;
	}
	size_t rest = (size_t)(s->partial.buf + s->partial.len - start);
	memmove(s->partial.buf, start, rest);
	s->partial.len = rest;
	s->partial.buf[rest] = 0;
	return 0;
}

static int on_stderr(void *data, const char *buf, size_t len)
{
	struct top_session *s = data;
	if (s->err.len < 65536)
		strbuf_add(&s->err, buf, len);
	return 0;
}

/* Keeps the nodes of j in the hostlist expr: 0, or -1 (a usage error). */
static int keep_nodes(struct top_session *s, struct gpu_top_job *j, const char *expr,
		      struct dp_error *err)
{
	_cleanup_strv_free_ char **want = NULL;
	struct dp_error why = { 0 };
	if (hostlist_expand(expr, &want, &why) < 0)
		return s->usage = true, dp_err(err, DPE_INPUT, "--node: %s", why.msg);
	size_t k = 0;
	for (size_t i = 0; i < j->n; i++) {
		if (strv_contains(want, j->alloc[i].node))
			j->alloc[k++] = j->alloc[i];
		else
			free(j->alloc[i].node);
	}
	j->n = k;
	if (k == 0)
		return s->usage = true, dp_err(err, DPE_INPUT, "--node '%s': the job runs on %s", expr, j->nodes);
	return 0;
}

static void sleep_s(double sec)
{
	struct timespec ts = { .tv_sec = (time_t)sec,
			       .tv_nsec = (long)((sec - (double)(time_t)sec) * 1e9) };
	while (nanosleep(&ts, &ts) < 0)
		;
}

static int exec_lines(struct ssh_session *ss, struct top_session *s, const char *cmd,
		      struct dp_error *err)
{
	struct ssh_exec x = { .command = cmd, .in_fd = -1, .on_stdout = on_stdout,
			      .on_stderr = on_stderr, .data = s };
	int status;
	return ssh_exec(ss, &x, &status, err) < 0 && !s->stopped ? -1 : 0;
}

static char *first_line(struct strbuf *sb)
{
	return strtok(sb->buf, "\n");
}

/* Whether the plain job of s runs: 0, or -1 and err. */
static int plain_running(struct ssh_session *ss, const struct top_session *s, struct dp_error *err)
{
	_cleanup_strbuf_ struct strbuf errout = STRBUF_INIT;
	struct plainjob_ref pj = { .id = s->id, .stage_dir = s->stage_dir, .pgid = s->pgid };
	struct plainjob_status *ps;
	size_t nps;
	int status;
	if (plainjob_ask_one(ss, &pj, &ps, &nps, &errout, &status, err) < 0)
		return -1;
	int ret = 0;
	if (nps == 0)
		ret = dp_err(err, DPE_NOTFOUND, "job '%s' not found on '%s': no answer for its stage dir",
			     s->arg, s->host);
	else if (!streq(ps[0].state, "RUNNING"))
		ret = dp_err(err, DPE_FAIL, "job '%s' is %s%s%s%s: dispatch top shows running jobs", s->arg,
			     ps[0].state, ps[0].reason && *ps[0].reason ? " (" : "",
			     ps[0].reason ? ps[0].reason : "", ps[0].reason && *ps[0].reason ? ")" : "");
	plainjob_status_free(ps, nps);
	return ret;
}

/* A plain host's job: one script per refresh (lib/sched/plain/plain_top.h). */
static int top_plain(struct ssh_session *ss, struct top_session *s, struct dp_error *err)
{
	if (s->nodes)
		return s->usage = true, dp_err(err, DPE_INPUT, "--node: job '%s' runs on one plain host, '%s'",
					       s->arg, s->host);
	if (!s->stage_dir)
		return dp_err(err, DPE_NOTFOUND, "job '%s' not found on '%s': dispatch did not submit it",
			      s->arg, s->host);
	if (plain_running(ss, s, err) < 0)
		return -1;
	struct gpu_top_alloc one = { .node = (char *)s->host, .gpus = 0 };
	struct gpu_top_job j = { .n = 1, .alloc = &one };
	s->one_host = true;
	s->plain = xmalloc(sizeof(*s->plain));
	plain_top_init(s->plain, s->pgid);
	gpu_top_init(&s->top, &j);
	_cleanup_strbuf_ struct strbuf cmd = STRBUF_INIT;
	int status;
	if (s->health) {
		/* once per session, over the same connection */
		_cleanup_strbuf_ struct strbuf out = STRBUF_INIT, errout = STRBUF_INIT;
		gpu_health_command(&cmd);
		if (ssh_exec_capture(ss, cmd.buf, NULL, &out, &errout, &status, err) < 0)
			return -1;
		s->top.nodes[0].health = strbuf_detach(&out);
		strbuf_reset(&cmd);
	}
	plain_top_command(&cmd, s->host, s->stage_dir, s->pgid);
	for (;;) {
		plain_top_reset(s->plain);
		long before = s->samples;
		if (exec_lines(ss, s, cmd.buf, err) < 0)
			return -1;
		if (s->stopped)
			return 0;
		if (s->samples == before)
			return dp_err(err, DPE_FAIL, "cannot sample job '%s' on '%s'%s%s", s->arg, s->host,
				      s->err.len ? ": " : "", s->err.len ? first_line(&s->err) : "");
		if (s->plain->ended || s->plain->njob == 0) {
			s->end_note = xasprintf("job '%s' ended", s->arg);
			return 0;
		}
		sleep_s((double)s->interval);
	}
}

/* A SLURM job: one overlap step per group of nodes, for the whole session
 * (lib/sched/slurm/slurm_top.h). */
static int top_slurm(struct ssh_session *ss, struct top_session *s, struct dp_error *err)
{
	_cleanup_(gpu_top_job_release) struct gpu_top_job j = { 0 };
	if (slurm_top_job_fetch(ss, s->id, s->arg, s->host, &j, err) < 0)
		return -1;
	if (!j.state || !streq(j.state, "RUNNING"))
		return dp_err(err, DPE_FAIL, "job '%s' is %s (reason: %s): dispatch top shows running jobs",
			      s->arg, j.state ? j.state : "in an unknown state",
			      j.reason ? j.reason : "none given");
	if (s->nodes && keep_nodes(s, &j, s->nodes, err) < 0)
		return -1;
	/* a step outlives nothing: the tick loop ends it when the connection goes, and
	 * with a count it is bounded besides */
	long minutes = s->count ? (s->count * s->interval + 59) / 60 + 1 : 0;
	_cleanup_strbuf_ struct strbuf cmd = STRBUF_INIT;
	gpu_top_slurm_command(&cmd, s->id, &j, s->interval, minutes, s->health, s->procs);
	gpu_top_init(&s->top, &j);
	if (s->procs) {
		s->nodeprocs = xmalloc(sizeof(*s->nodeprocs));
		slurm_procs_init(s->nodeprocs, &s->top);
	}
	if (exec_lines(ss, s, cmd.buf, err) < 0)
		return -1;
	if (s->stopped)
		return 0;
	if (s->samples == 0)
		return dp_err(err, DPE_FAIL, "cannot sample job '%s' on '%s'%s%s", s->arg, s->host,
			      s->err.len ? ": " : " (the steps ended at once)",
			      s->err.len ? first_line(&s->err) : "");
	s->end_note = xasprintf("the steps of job '%s' ended (the job may have ended)", s->arg);
	return 0;
}

int top_run(struct ssh_session *ss, bool plain, struct top_session *s, struct dp_error *err)
{
	s->partial = (struct strbuf)STRBUF_INIT;
	s->err = (struct strbuf)STRBUF_INIT;
	return plain ? top_plain(ss, s, err) : top_slurm(ss, s, err);
}

void top_session_release(struct top_session *s)
{
	if (s->plain) {
		plain_top_release(s->plain);
		free(s->plain);
	}
	if (s->nodeprocs) {
		slurm_procs_release(s->nodeprocs);
		free(s->nodeprocs);
	}
	gpu_top_release(&s->top);
	strbuf_release(&s->partial);
	strbuf_release(&s->err);
	free(s->end_note);
	s->plain = NULL;
	s->nodeprocs = NULL;
	s->end_note = NULL;
}
