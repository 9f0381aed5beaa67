/* SPDX-License-Identifier: MIT */
#include "sched/plain/plain_top.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/marker.h"
#include "base/shquote.h"
#include "base/util.h"
#include "gpu/node_health.h"
#include "sched/plain/plainjob_ask.h"
#include "sched/sched.h"
#include "sched/sched_top.h"
#include "transport/ssh.h"

void plain_top_command(struct strbuf *sb, const char *node, const char *stage_dir, long pgid)
{
	strbuf_adds(sb, "n=");
	sh_quote(sb, node);
	strbuf_adds(sb, "\nd=");
	sh_quote(sb, stage_dir);
	strbuf_addf(sb, "\ng=%ld\n", pgid > 1 ? pgid : 0);
	strbuf_adds(sb,
		"p() { printf '" MARK_TOP " %s %s\\n' \"$n\" \"$*\"; }\n"
		"p me \"$(id -u)\"\n"
		"l=$(cut -d ' ' -f 2 \"$d/lease\" 2>/dev/null)\n"
		"p lease \"$l\"\n"
		"[ -f \"$d/exit_status\" ] && p ended\n"
		"ps -e -o pid= -o ppid= -o pgid= -o uid= -o pcpu= -o rss= -o comm= 2>/dev/null |\n"
		"\twhile IFS= read -r x; do p ps \"$x\"; done\n"
		"t() { echo " MARK_TOP_TICK "; }\n"
		"command -v nvidia-smi >/dev/null 2>&1 || { p no-nvidia-smi; t; exit 0; }\n"
		"a=$(nvidia-smi --query-compute-apps=pid,gpu_uuid,used_memory "
		"--format=csv,noheader,nounits 2>&1) || { p failed \"$(printf '%s\\n' \"$a\" | head -n 1)\"; t; exit 0; }\n"
		"printf '%s\\n' \"$a\" | while IFS= read -r x; do [ -n \"$x\" ] && p app \"$x\"; done\n"
		"{\n");
	gpu_top_probe_script(sb);
	strbuf_adds(sb,
		"nvidia-smi --query-gpu=\"$q\" --format=csv,noheader,nounits 2>&1 |\n"
		"\twhile IFS= read -r x; do p row \"$x\"; done\n"
		"}\n"
		"t\n");
}

void plain_top_init(struct plain_top *p, long pgid)
{
	memset(p, 0, sizeof(*p));
	p->pgid = pgid;
	p->me = -1;
}

void plain_top_reset(struct plain_top *p)
{
	for (size_t i = 0; i < p->nps; i++) {
		free(p->ps[i].command);
		free(p->ps[i].user);
	}
	free(p->ps);
	for (size_t i = 0; i < p->napps; i++)
		free(p->apps[i].uuid);
	free(p->apps);
	free(p->job);
	p->ps = NULL;
	p->apps = NULL;
	p->job = NULL;
	p->nps = p->napps = p->njob = 0;
	p->cpu = 0;
	p->rss_kib = 0;
}

void plain_top_release(struct plain_top *p)
{
	plain_top_reset(p);
	free(p->lease);
	memset(p, 0, sizeof(*p));
}

static bool whole_long(const char *s, long *v)
{
	char *end;
	if (!*s)
		return false;
	long x = strtol(s, &end, 10);
	if (*end || x < 0)
		return false;
	*v = x;
	return true;
}

/* "PID PPID PGID UID %CPU RSS COMMAND" (blanks between, the command may hold
 * some); with_user, "... COMMAND USER": the user is the last word. */
static void feed_ps(struct plain_top *p, const char *s, bool with_user)
{
	long v[4], rss;
	char *end;
	const char *q = s;
	for (int i = 0; i < 4; i++) {
		while (*q == ' ')
			q++;
		v[i] = strtol(q, &end, 10);
		if (end == q || *end != ' ' || v[i] < 0)
			return;
		q = end;
	}
	while (*q == ' ')
		q++;
	double cpu = strtod(q, &end);
	if (end == q || *end != ' ' || !isfinite(cpu) || cpu < 0)
		return;
	q = end;
	while (*q == ' ')
		q++;
	rss = strtol(q, &end, 10);
	if (end == q || (*end && *end != ' ') || rss < 0)
		return;
	q = end;
	while (*q == ' ')
		q++;
	size_t len = strlen(q);
	char *user = NULL;
	if (with_user) {
		while (len && q[len - 1] == ' ')
			len--;
		size_t u = len;
		while (u && q[u - 1] != ' ')
			u--;
		if (u == 0 || u == len)
			return; /* no user, or no command before it */
		user = xstrndup(q + u, len - u);
		len = u;
		while (len && q[len - 1] == ' ')
			len--;
	}
	p->ps = xrealloc(p->ps, (p->nps + 1) * sizeof(*p->ps));
	p->ps[p->nps++] = (struct top_proc){ .pid = v[0], .ppid = v[1], .pgid = v[2], .uid = v[3],
					     .cpu = cpu, .rss_kib = rss, .command = xstrndup(q, len),
					     .user = user };
}

/* "PID, UUID, MIB" ("[N/A]" for the memory under MIG or WSL) */
static void feed_app(struct plain_top *p, const char *s)
{
	const char *c1 = strstr(s, ", ");
	const char *c2 = c1 ? strstr(c1 + 2, ", ") : NULL;
	if (!c2)
		return;
	_cleanup_free_ char *pid = xstrndup(s, (size_t)(c1 - s));
	long v;
	if (!whole_long(pid, &v) || c2 == c1 + 2)
		return;
	char *end;
	double mem = strtod(c2 + 2, &end);
	if (end == c2 + 2 || *end || !isfinite(mem) || mem < 0)
		mem = NAN;
	p->apps = xrealloc(p->apps, (p->napps + 1) * sizeof(*p->apps));
	p->apps[p->napps++] = (struct top_app){ .pid = v, .uuid = xstrndup(c1 + 2, (size_t)(c2 - c1 - 2)),
						.mem_mib = mem };
}

bool plain_top_feed(struct plain_top *p, const char *line)
{
	if (marker_value(line, MARK_TOP_TICK))
		return true;
	const char *rest = marker_value(line, MARK_TOP);
	const char *sp = rest ? strchr(rest, ' ') : NULL;
	if (sp)
		plain_top_feed_kind(p, sp + 1);
	return false;
}

void plain_top_feed_kind(struct plain_top *p, const char *kind)
{
	const char *arg;
	long v;
	if ((arg = after_prefix(kind, "me ")) && whole_long(arg, &v)) {
		p->me = v;
	} else if ((arg = after_prefix(kind, "lease")) && (!*arg || *arg == ' ')) {
		free(p->lease);
		p->lease = xstrdup(*arg && !streq(arg + 1, "-") ? arg + 1 : "");
	} else if (streq(kind, "ended")) {
		p->ended = true;
	} else if ((arg = after_prefix(kind, "ps "))) {
		feed_ps(p, arg, false);
	} else if ((arg = after_prefix(kind, "proc "))) {
		feed_ps(p, arg, true);
	} else if ((arg = after_prefix(kind, "app "))) {
		feed_app(p, arg);
	}
}

const struct top_proc *plain_top_proc(const struct plain_top *p, long pid)
{
	for (size_t i = 0; i < p->njob; i++)
		if (p->job[i]->pid == pid)
			return p->job[i];
	return NULL;
}

static const struct top_proc *any_proc(const struct plain_top *p, long pid)
{
	for (size_t i = 0; i < p->nps; i++)
		if (p->ps[i].pid == pid)
			return &p->ps[i];
	return NULL;
}

/* Whether index (a number) is in the comma-separated list. */
static bool listed(const char *list, long index)
{
	for (const char *q = list; q && *q;) {
		char *end;
		long x = strtol(q, &end, 10);
		if (end != q && x == index && (*end == ',' || !*end))
			return true;
		q = strchr(q, ',');
		q = q ? q + 1 : NULL;
	}
	return false;
}

void plain_top_settle_procs(struct plain_top *p)
{
	/* the group, then descendants until nothing is added */
	bool *in = xcalloc(p->nps ? p->nps : 1, sizeof(bool));
	for (size_t i = 0; i < p->nps; i++)
		in[i] = p->job_only || (p->pgid > 1 && p->ps[i].pgid == p->pgid);
	for (bool more = !p->job_only; more;) {
		more = false;
		for (size_t i = 0; i < p->nps; i++) {
			if (in[i])
				continue;
			for (size_t k = 0; k < p->nps; k++)
				if (in[k] && p->ps[k].pid == p->ps[i].ppid && p->ps[i].ppid > 1) {
					in[i] = more = true;
					break;
				}
		}
	}
	free(p->job);
	p->job = xcalloc(p->nps ? p->nps : 1, sizeof(*p->job));
	p->njob = 0;
	p->cpu = 0;
	p->rss_kib = 0;
	for (size_t i = 0; i < p->nps; i++) {
		if (!in[i])
			continue;
		p->job[p->njob++] = &p->ps[i];
		p->cpu += p->ps[i].cpu;
		p->rss_kib += p->ps[i].rss_kib;
	}
	free(in);
}

void plain_top_settle(struct plain_top *p, struct gpu_top *t)
{
	plain_top_settle_procs(p);

	int count = 0;
	for (size_t r = 0; r < t->nrows; r++) {
		struct gpu_row *row = &t->rows[r];
		bool mine = row->index >= 0 && p->lease && listed(p->lease, row->index);
		bool other = false;
		for (size_t a = 0; a < p->napps; a++) {
			if (!row->uuid || !streq(p->apps[a].uuid, row->uuid))
				continue;
			if (plain_top_proc(p, p->apps[a].pid)) {
				mine = true;
			} else {
				const struct top_proc *o = any_proc(p, p->apps[a].pid);
				/* a process ps cannot see (another container) is someone else's */
				other = other || !o || o->uid != p->me;
			}
		}
		row->in_step = mine;
		row->shared = mine && other;
		count += mine;
	}
	if (t->nnodes)
		t->nodes[0].allocated = count;
}

size_t plain_top_gpu_procs(const struct plain_top *p, const char *uuid, const struct top_app ***out)
{
	size_t k = 0;
	*out = xcalloc(p->napps ? p->napps : 1, sizeof(**out));
	for (size_t a = 0; uuid && a < p->napps; a++)
		if (streq(p->apps[a].uuid, uuid) && plain_top_proc(p, p->apps[a].pid))
			(*out)[k++] = &p->apps[a];
	return k;
}

/* Whether the plain job of s runs: 0, or -1 and err. */
static int plain_running(struct ssh_session *ss, const struct sched_job *job, struct dp_error *err)
{
	_cleanup_strbuf_ struct strbuf errout = STRBUF_INIT;
	struct plainjob_ref pj = { .id = job->id, .stage_dir = job->stage_dir, .pgid = job->pgid };
	struct plainjob_status *ps;
	size_t nps;
	int status;
	if (plainjob_ask_one(ss, &pj, &ps, &nps, &errout, &status, err) < 0)
		return -1;
	int ret = 0;
	if (nps == 0)
		ret = dp_err(err, DPE_NOTFOUND, "job '%s' not found on '%s': no answer for its stage dir",
			     job->arg, job->host);
	else if (!streq(ps[0].state, "RUNNING"))
		ret = dp_err(err, DPE_FAIL, "job '%s' is %s%s%s%s: dispatch top shows running jobs", job->arg,
			     ps[0].state, ps[0].reason && *ps[0].reason ? " (" : "",
			     ps[0].reason ? ps[0].reason : "", ps[0].reason && *ps[0].reason ? ")" : "");
	plainjob_status_free(ps, nps);
	return ret;
}

/* A plain host's job: one script per refresh (lib/sched/plain/plain_top.h). */
int plain_top_run(struct ssh_session *ss, const struct sched_job *job, struct top_session *s,
		  struct dp_error *err)
{
	if (s->nodes) {
		s->usage = true;
		return dp_err(err, DPE_INPUT, "--node: job '%s' runs on one plain host, '%s'",
			      job->arg, job->host);
	}
	if (!job->stage_dir)
		return dp_err(err, DPE_NOTFOUND, "job '%s' not found on '%s': dispatch did not submit it",
			      job->arg, job->host);
	if (plain_running(ss, job, err) < 0)
		return -1;
	struct gpu_top_alloc one = { .node = (char *)job->host, .gpus = 0 };
	struct gpu_top_job j = { .n = 1, .alloc = &one };
	s->one_host = true;
	s->plain = xmalloc(sizeof(*s->plain));
	plain_top_init(s->plain, job->pgid);
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
	plain_top_command(&cmd, job->host, job->stage_dir, job->pgid);
	for (;;) {
		plain_top_reset(s->plain);
		long before = s->samples;
		if (sched_top_exec(ss, s, cmd.buf, err) < 0)
			return -1;
		if (s->stopped)
			return 0;
		if (s->samples == before)
			return dp_err(err, DPE_FAIL, "cannot sample job '%s' on '%s'%s%s", job->arg, job->host,
				      s->err.len ? ": " : "", sched_top_stderr_line(s));
		if (s->plain->ended || s->plain->njob == 0) {
			s->end_note = xasprintf("job '%s' ended", job->arg);
			return 0;
		}
		sched_top_sleep((double)s->interval);
	}
}
