/* SPDX-License-Identifier: MIT */
#include "sched/slurm/slurm_top.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "base/marker.h"
#include "base/shquote.h"
#include "gpu/node_health.h"
#include "sched/slurm/hostlist.h"
#include "sched/sched.h"
#include "sched/sched_top.h"
#include "sched/slurm/slurm_procs.h"
#include "transport/ssh.h"

void gpu_top_job_command(struct strbuf *sb, const char *id)
{
	strbuf_adds(sb, "scontrol -d show job ");
	sh_quote(sb, id);
}

/* The value of KEY= in a line of scontrol's "K=V K=V" form (up to the next blank). */
static char *kv(const char *line, const char *key)
{
	size_t kl = strlen(key);
	for (const char *p = line; (p = strstr(p, key)); p += kl) {
		if ((p == line || isspace((unsigned char)p[-1])) && p[kl] == '=') {
			const char *v = p + kl + 1, *e = v;
			while (*e && !isspace((unsigned char)*e))
				e++;
			return xstrndup(v, (size_t)(e - v));
		}
	}
	return NULL;
}

/* "gpu:a100:2(IDX:0-1)", "gpu:2", "gpu(IDX:0)" (one), "" -> GPUs; several GRES are
 * comma-separated outside the parentheses. */
static int gres_gpus(const char *gres)
{
	int total = 0;
	const char *p = gres;
	while (p && *p) {
		const char *end = p;
		int depth = 0;
		while (*end && (depth || *end != ',')) {
			if (*end == '(')
				depth++;
			else if (*end == ')' && depth)
				depth--;
			end++;
		}
		if (strncmp(p, "gpu", 3) == 0 && (p[3] == ':' || p[3] == '(' || p + 3 == end)) {
			const char *paren = memchr(p, '(', (size_t)(end - p));
			const char *stop = paren ? paren : end;
			const char *colon = NULL;
			for (const char *q = p; q < stop; q++)
				if (*q == ':')
					colon = q;
			long n = 1;
			if (colon) {
				char buf[32];
				size_t len = (size_t)(stop - colon - 1);
				if (len > 0 && len < sizeof(buf)) {
					memcpy(buf, colon + 1, len);
					buf[len] = 0;
					if (!parse_long(buf, 0, 1 << 20, &n))
						n = 1; /* "gpu:a100" */
				}
			}
			total += (int)n;
		}
		p = *end ? end + 1 : end;
	}
	return total;
}

int gpu_top_parse_job(const char *out, struct gpu_top_job *j)
{
	memset(j, 0, sizeof(*j));
	struct line_iter it = LINE_ITER_INIT(out);
	int ret = 0;
	bool in_record = false;
	for (char *line; (line = line_next(&it));) {
		const char *s = line;
		while (isspace((unsigned char)*s))
			s++;
		if (startswith(s, "JobId=")) {
			if (in_record)
				break; /* the first record only */
			in_record = true;
			j->found = true;
			continue;
		}
		if (!in_record)
			continue;
		char *v;
		if (!j->state && (v = kv(s, "JobState")))
			j->state = v;
		if (!j->reason && (v = kv(s, "Reason")))
			j->reason = v;
		if (!j->nodes && startswith(s, "NodeList=") && (v = kv(s, "NodeList"))) {
			j->nodes = v;
			char **hosts = NULL;
			if (!streq(v, "(null)") && *v &&
			    hostlist_expand_max(v, 100000, &hosts, NULL) < 0) {
				ret = -1;
				continue;
			}
			for (size_t i = 0; hosts && hosts[i]; i++) {
				j->alloc = xrealloc(j->alloc, (j->n + 1) * sizeof(*j->alloc));
				j->alloc[j->n++] = (struct gpu_top_alloc){ xstrdup(hosts[i]), 0 };
			}
			strv_free(hosts);
		}
		if (startswith(s, "Nodes=")) {
			_cleanup_free_ char *nodes = kv(s, "Nodes");
			_cleanup_free_ char *gres = kv(s, "GRES");
			char **hosts = NULL;
			if (!nodes || hostlist_expand_max(nodes, 100000, &hosts, NULL) < 0) {
				ret = -1;
				continue;
			}
			int k = gres ? gres_gpus(gres) : 0;
			for (size_t h = 0; hosts[h]; h++)
				for (size_t i = 0; i < j->n; i++)
					if (streq(j->alloc[i].node, hosts[h]))
						j->alloc[i].gpus = k;
			strv_free(hosts);
		}
	}
	line_iter_release(&it);
	return ret;
}

/* The script each step runs on its node (sh -c). */
static void node_script(struct strbuf *sb, int interval, bool health, bool procs)
{
	strbuf_adds(sb, "n=${SLURMD_NODENAME:-$(hostname)}\n"
			"p() { printf '" MARK_TOP " %s %s\\n' \"$n\" \"$*\"; }\n"
			"p step-gpus \"${SLURM_STEP_GPUS-}\"\n"
			"p cuda \"${CUDA_VISIBLE_DEVICES-}\"\n");
	if (health) {
		strbuf_adds(sb, "(\n");
		gpu_health_command(sb);
		strbuf_adds(sb, ") 2>/dev/null | while IFS= read -r l; do p health \"$l\"; done\n");
	}
	if (procs) {
		/* the processes every interval, beside nvidia-smi, whatever it does */
		slurm_procs_script(sb, interval);
		strbuf_adds(sb, "(\n");
	}
	strbuf_adds(sb, "command -v nvidia-smi >/dev/null 2>&1 || { p no-nvidia-smi; exit 0; }\n");
	/* Each GPU's minor number as the driver lists it: drivers from 580 on have no
	 * minor_number query field, and SLURM_STEP_GPUS names minor numbers. */
	strbuf_adds(sb, "for f in /proc/driver/nvidia/gpus/*/information; do\n"
			"\t[ -r \"$f\" ] || continue\n"
			"\tb=${f%/information}\n"
			"\tp minor \"${b##*/} $(sed -n 's/^Device Minor:[[:space:]]*//p' \"$f\")\"\n"
			"done\n");
	gpu_top_probe_script(sb);
	strbuf_addf(sb, "nvidia-smi --query-gpu=\"$q\" --format=csv,noheader,nounits -l %d 2>&1 | "
			"while IFS= read -r l; do p row \"$l\"; done\n"
			"p ended\n",
		    interval);
	if (procs)
		strbuf_adds(sb, ")\nwait\n");
}

void gpu_top_slurm_command(struct strbuf *sb, const char *id, const struct gpu_top_job *j,
			   int interval, long minutes, bool health, bool procs)
{
	_cleanup_strbuf_ struct strbuf script = STRBUF_INIT;
	node_script(&script, interval, health, procs);
	strbuf_adds(sb, "trap '' PIPE\npids=\n");
	bool *done = xcalloc(j->n ? j->n : 1, sizeof(bool));
	for (size_t i = 0; i < j->n; i++) {
		if (done[i])
			continue;
		int k = j->alloc[i].gpus;
		char **group = NULL;
		for (size_t m = i; m < j->n; m++)
			if (!done[m] && j->alloc[m].gpus == k) {
				strv_add(&group, j->alloc[m].node);
				done[m] = true;
			}
		_cleanup_free_ char *list = NULL;
		if (hostlist_fold(group, &list, NULL) < 0)
			list = NULL;
		strbuf_adds(sb, "srun --jobid=");
		sh_quote(sb, id);
		strbuf_addf(sb, " --overlap --nodes=%zu --ntasks-per-node=1 --nodelist=", strv_len(group));
		sh_quote(sb, list ? list : group[0]);
		if (k > 0)
			strbuf_addf(sb, " --gpus=%zu", (size_t)k * strv_len(group));
		else
			strbuf_adds(sb, " --gres=none");
		strbuf_adds(sb, " -l -u --input=none");
		if (minutes > 0)
			strbuf_addf(sb, " -t %ld", minutes);
		strbuf_adds(sb, " sh -c ");
		sh_quote(sb, script.buf);
		strbuf_adds(sb, " &\npids=\"$pids $!\"\n");
		strv_free(group);
	}
	free(done);
	strbuf_addf(sb, "while :; do\n"
			"\talive=\n"
			"\tfor p in $pids; do kill -0 \"$p\" 2>/dev/null && alive=1; done\n"
			"\t[ -n \"$alive\" ] || break\n"
			"\tsleep %d\n"
			"\techo " MARK_TOP_TICK " || break\n"
			"done\n"
			"kill $pids 2>/dev/null\n"
			"wait\n",
		    interval);
}

int slurm_top_job_fetch(struct ssh_session *ss, const char *id, const char *arg, const char *host,
			struct gpu_top_job *j, struct dp_error *err)
{
	_cleanup_strbuf_ struct strbuf q = STRBUF_INIT, out = STRBUF_INIT, errout = STRBUF_INIT;
	int status;

	gpu_top_job_command(&q, id);
	if (ssh_exec_capture(ss, q.buf, NULL, &out, &errout, &status, err) < 0)
		return -1;
	if (gpu_top_parse_job(out.buf, j) < 0)
		return dp_err(err, DPE_FAIL, "cannot read the nodes of job '%s' from scontrol on '%s'",
			      arg, host);
	if (!j->found)
		return dp_err(err, DPE_NOTFOUND, "job '%s' not found on '%s'%s%s", arg, host,
			      errout.len ? ": " : "", errout.len ? strtok(errout.buf, "\n") : "");
	return 0;
}

/* Keeps the nodes of j in the hostlist expr: 0, or -1 (a usage error). */
static int keep_nodes(struct top_session *s, struct gpu_top_job *j, const char *expr,
		      struct dp_error *err)
{
	_cleanup_strv_free_ char **want = NULL;
	struct dp_error why = { 0 };
	if (hostlist_expand(expr, &want, &why) < 0) {
		s->usage = true;
		return dp_err(err, DPE_INPUT, "--node: %s", why.msg);
	}
	size_t k = 0;
	for (size_t i = 0; i < j->n; i++) {
		if (strv_contains(want, j->alloc[i].node))
			j->alloc[k++] = j->alloc[i];
		else
			free(j->alloc[i].node);
	}
	j->n = k;
	if (k == 0) {
		s->usage = true;
		return dp_err(err, DPE_INPUT, "--node '%s': the job runs on %s", expr, j->nodes);
	}
	return 0;
}

/* A SLURM job: one overlap step per group of nodes, for the whole session
 * (lib/sched/slurm/slurm_top.h). */
int slurm_top_run(struct ssh_session *ss, const struct sched_job *job, struct top_session *s,
		  struct dp_error *err)
{
	_cleanup_(gpu_top_job_release) struct gpu_top_job j = { 0 };
	if (slurm_top_job_fetch(ss, job->id, job->arg, job->host, &j, err) < 0)
		return -1;
	if (!j.state || !streq(j.state, "RUNNING"))
		return dp_err(err, DPE_FAIL, "job '%s' is %s (reason: %s): dispatch top shows running jobs",
			      job->arg, j.state ? j.state : "in an unknown state",
			      j.reason ? j.reason : "none given");
	if (s->nodes && keep_nodes(s, &j, s->nodes, err) < 0)
		return -1;
	/* a step outlives nothing: the tick loop ends it when the connection goes, and
	 * with a count it is bounded besides */
	long minutes = s->count ? (s->count * s->interval + 59) / 60 + 1 : 0;
	_cleanup_strbuf_ struct strbuf cmd = STRBUF_INIT;
	gpu_top_slurm_command(&cmd, job->id, &j, s->interval, minutes, s->health, s->procs);
	gpu_top_init(&s->top, &j);
	if (s->procs) {
		s->nodeprocs = xmalloc(sizeof(*s->nodeprocs));
		slurm_procs_init(s->nodeprocs, &s->top);
	}
	if (sched_top_exec(ss, s, cmd.buf, err) < 0)
		return -1;
	if (s->stopped)
		return 0;
	if (s->samples == 0)
		return dp_err(err, DPE_FAIL, "cannot sample job '%s' on '%s'%s%s", job->arg, job->host,
			      s->err.len ? ": " : " (the steps ended at once)",
			      sched_top_stderr_line(s));
	s->end_note = xasprintf("the steps of job '%s' ended (the job may have ended)", job->arg);
	return 0;
}
