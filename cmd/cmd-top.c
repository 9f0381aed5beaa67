/* SPDX-License-Identifier: MIT */
/*
 * dispatch top JOB: the GPUs of a running job, per node, sampled by the job's
 * backend (lib/jobs/top.h), with --procs the job's processes, over one connection:
 * a refreshing table on a TTY, else one sample per interval as lines, or one JSON
 * document (one line) per sample.
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "base/strbuf.h"
#include "dispatch.h"
#include "gpu/node_health.h"
#include "inventory/inventory.h"
#include "jobref.h"
#include "jobs/job_usage.h"
#include "jobs/jobs.h"
#include "jobs/top.h"
#include "top_json.h"
#include "transport/ssh.h"

static const char *opt_host, *opt_node;
static int opt_interval = 2, opt_count;
static bool opt_procs, opt_health;

static const struct dp_option top_options[] = {
	OPT_STRING('H', "host", &opt_host, "HOST", "the host of a job given by bare ID", "host"),
	OPT_INT(0, "interval", &opt_interval, "S", "seconds between samples (default 2)", 1, 3600),
	OPT_INT('n', "count", &opt_count, "N", "stop after N samples (default: until interrupted or the job ends)", 1, 1000000),
	OPT_STRING(0, "node", &opt_node, "NODES", "only these nodes of the job (hostlist)", NULL),
	OPT_BOOL(0, "procs", &opt_procs, "the job's processes on each node (CPU, memory, user) and the GPU each holds"),
	OPT_BOOL(0, "health", &opt_health, "GPU health (ECC, row remaps, recovery action) and XID errors of each node, asked once"),
	OPT_END,
};

struct view {
	const struct dp_ctx *ctx;
	const char *job, *host;
	bool tty, utf8;
	const struct job_usage *usage; /* the job's samples so far (HISTORY); NULL: none */
};

/* GPU uuid's utilisation over the job's life so far, as blocks; "-" when not sampled. */
static char *history(const struct view *v, const char *uuid)
{
	for (size_t i = 0; v->usage && uuid && i < v->usage->nnodes; i++)
		for (size_t k = 0; k < v->usage->nodes[i].ngpus; k++)
			if (streq(v->usage->nodes[i].gpus[k].uuid, uuid))
				return job_usage_spark(&v->usage->nodes[i].gpus[k], v->utf8);
	return xstrdup("-");
}

/* v rounded, then suffix; "-" for null. */
static void num(struct strbuf *sb, double v, const char *suffix)
{
	if (isnan(v))
		strbuf_adds(sb, "-");
	else
		strbuf_addf(sb, "%.0f%s", v, suffix);
}

static char *pair(double a, double b, const char *unit)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	num(&sb, a, "");
	strbuf_addch(&sb, '/');
	num(&sb, b, "");
	strbuf_adds(&sb, unit);
	return strbuf_detach(&sb);
}

static void proc_row(struct table *t, const char *node, const char *gpu, const struct top_proc *pr,
		     long pid, double mem_mib)
{
	_cleanup_strbuf_ struct strbuf m = STRBUF_INIT;
	num(&m, mem_mib, "");
	table_add(t, node);
	table_add(t, gpu);
	table_addf(t, "%ld", pid);
	table_add(t, m.buf);
	if (pr) {
		table_addf(t, "%.0f%%", pr->cpu);
		table_addf(t, "%.0f", (double)pr->rss_kib / 1024);
		if (pr->user)
			table_add(t, pr->user);
		else
			table_addf(t, "%ld", pr->uid);
	} else {
		table_add(t, "-");
		table_add(t, "-");
		table_add(t, "-");
	}
	table_add(t, pr ? pr->command : "?");
}

/* --procs: the job's processes on each GPU of each node, then those holding none. */
static void procs_text(const struct top_session *s)
{
	struct table t = { .ncols = 8, .trim = true };
	table_row(&t, "NODE", "GPU", "PID", "GPU-MEM(MiB)", "CPU", "RSS(MiB)", "USER", "COMMAND", NULL);
	for (size_t i = 0; i < s->top.nnodes; i++) {
		const struct gpu_node *n = &s->top.nodes[i];
		const struct plain_top *p = top_node_procs(s, i);
		if (!p)
			continue;
		const struct gpu_row **rows;
		size_t nr = gpu_top_node_rows(&s->top, n, &rows), held = 0;
		for (size_t k = 0; k < nr; k++) {
			const struct top_app **apps;
			size_t na = top_gpu_procs(p, rows[k]->uuid, &apps);
			for (size_t a = 0; a < na; a++)
				proc_row(&t, n->name, rows[k]->bus_id ? rows[k]->bus_id : rows[k]->key,
					 top_proc_of(p, apps[a]->pid), apps[a]->pid, apps[a]->mem_mib);
			held += na;
			free(apps);
		}
		for (size_t k = 0; k < p->njob; k++)
			if (!top_on_shown_gpu(p, p->job[k]->pid, rows, nr))
				proc_row(&t, n->name, "-", p->job[k], p->job[k]->pid, NAN);
		free(rows);
		if (nr > 0 && held == 0) /* GPUs shown (nvidia-smi answers), none held */
			printf("%s: none of the job's processes holds a GPU\n", n->name);
	}
	putchar('\n');
	table_print(&t);
}

static void show_json(struct top_session *s, const struct view *v, double now)
{
	cJSON *doc = top_sample_json(s, v->job, v->host, now);
	char *text = cJSON_PrintUnformatted(doc);
	if (!text)
		abort();
	puts(text);
	free(text);
	cJSON_Delete(doc);
}

static void show_text(struct top_session *s, const struct view *v, double now)
{
	struct table t = { .ncols = 9, .trim = true };
	if (v->tty) {
		char clock[16];
		time_t tt = time(NULL);
		strftime(clock, sizeof(clock), "%H:%M:%S", localtime(&tt));
		printf("\033[H\033[2Jdispatch top %s@%s  every %ds  %s\n\n", v->job, v->host,
		       s->interval, clock);
	} else if (s->samples > 1) {
		putchar('\n');
	}
	table_row(&t, "NODE", "GPU", "UTIL", "MEM(MiB)", "POWER(W)", "TEMP", "THROTTLE", "FLAGS",
		  "HISTORY", NULL);
	for (size_t i = 0; i < s->top.nnodes; i++) {
		const struct gpu_node *n = &s->top.nodes[i];
		const struct gpu_row **rows;
		size_t nr = gpu_top_node_rows(&s->top, n, &rows);
		const char *flag = top_node_flag(n, nr, now, s->interval);
		if (nr == 0)
			table_row(&t, n->name, "-", "-", "-", "-", "-", "-", flag ? flag : "-", "-", NULL);
		for (size_t k = 0; k < nr; k++) {
			const struct gpu_row *r = rows[k];
			_cleanup_strbuf_ struct strbuf u = STRBUF_INIT, tc = STRBUF_INIT;
			num(&u, r->util, "%");
			num(&tc, r->temp, "C");
			table_add(&t, n->name);
			table_add(&t, r->bus_id ? r->bus_id : r->key);
			table_add(&t, u.buf);
			table_take(&t, pair(r->mem_used, r->mem_total, ""));
			table_take(&t, pair(r->power, r->power_limit, ""));
			table_add(&t, tc.buf);
			table_add(&t, !r->throttle ? "-" : *r->throttle ? r->throttle : "none");
			table_add(&t, flag ? flag : r->shared ? "shared" : "-");
			table_take(&t, history(v, r->uuid));
		}
		free(rows);
	}
	table_print(&t);
	for (size_t i = 0; i < s->top.nnodes; i++) {
		const struct gpu_node *n = &s->top.nodes[i];
		const struct gpu_row **rows;
		size_t nr = gpu_top_node_rows(&s->top, n, &rows);
		free(rows);
		const char *flag = top_node_flag(n, nr, now, s->interval);
		if (n->state == GPU_NODE_FAILED && n->message)
			printf("%s: nvidia-smi: %s\n", n->name, n->message);
		else if (flag && streq(flag, "no-gpus-visible"))
			printf("%s: the job holds %d GPUs there but the step sees none: its GPUs are "
			       "asked for with --gpus; before SLURM 22.05 an --overlap step shares no "
			       "GRES (SLURM_STEP_GPUS='%s')\n", n->name, n->allocated,
			       n->step_gpus ? n->step_gpus : "");
		else if (flag && streq(flag, "no-gpus-allocated") && !top_has_procs(s))
			printf("%s: the job holds no GPUs there\n", n->name);
	}
	for (size_t i = 0; s->health && (v->tty || s->samples == 1) && i < s->top.nnodes; i++) {
		const struct gpu_node *n = &s->top.nodes[i];
		if (!n->health)
			continue;
		struct gpu_health_report hr;
		gpu_health_parse(n->health, &hr);
		printf("\n%s: GPU health\n", n->name);
		gpu_health_print(n->name, &hr);
		gpu_health_release(&hr);
	}
	for (size_t i = 0; top_has_procs(s) && i < s->top.nnodes; i++) {
		const struct gpu_node *n = &s->top.nodes[i];
		const struct plain_top *p = top_node_procs(s, i);
		if (!p)
			printf("%s: the job's processes: not reported yet\n", n->name);
		else
			printf("%s: %zu process%s of the job, CPU %.0f%%, RSS %.0f MiB%s\n", n->name,
			       p->njob, p->njob == 1 ? "" : "es", p->cpu, (double)p->rss_kib / 1024,
			       n->allocated == 0 ? " (the job holds no GPUs: its processes' CPU and memory only)"
						 : "");
	}
	if (s->procs)
		procs_text(s);
}

static void show(struct top_session *s, void *data)
{
	const struct view *v = data;
	double now = monotonic_seconds();
	if (v->ctx->json)
		show_json(s, v, now);
	else
		show_text(s, v, now);
	fflush(stdout);
}

/* The JOB operand, resolved before the dispatcher opens the session to its host. */
static struct job_set set;

static int top_host(struct dp_ctx *ctx, const struct dp_args *args, const char **host)
{
	int r = job_args_resolve(ctx, args->pos, 1, opt_host, &set);
	if (!r)
		*host = inventory_ssh_destination(ctx->inv, set.refs[0].host);
	return r;
}

static int cmd_top(struct dp_ctx *ctx, const struct dp_args *args)
{
	(void)args;
	struct top_session s = { .interval = opt_interval, .count = opt_count, .nodes = opt_node,
				 .procs = opt_procs, .health = opt_health };
	struct dp_error err = { 0 };
	int r = 0;
	const struct jobref *ref = &set.refs[0];
	struct ssh_session *ss = ctx->session;
	struct jobs_target t;
	_cleanup_free_ char *stage = NULL;
	jobs_target_of(ctx, ref, &t, &stage);
	struct view v = { .ctx = ctx, .job = ref->id, .host = ref->host,
			  .tty = stdout_is_tty() && !ctx->json, .utf8 = utf8_locale() };
	/* the samples so far, for HISTORY: one exchange before the sampling starts */
	_cleanup_(jobs_result_release) struct jobs_result hist = { 0 };
	struct jobs_host jh = jobs_host_of(ctx, ref->host);
	jh.ss = ss;
	if (!ctx->json && jobs_query(&jh, &t, 1, JOBS_WANT_USAGE, &hist) == 0 && hist.n &&
	    !hist.rows[0].not_found)
		v.usage = hist.rows[0].st.usage;
	s.show = show;
	s.data = &v;
	if (top_run(ss, t.sched, &t.job, &s, &err) < 0)
		r = s.usage ? usage_error(ctx, "%s", err.msg) : report_error(&err);
	else if (s.end_note)
		note_msg("%s", s.end_note);
	if (!r && s.end_note && s.count)
		r = DPE_FAIL;
	top_session_release(&s);
	job_set_release(&set);
	if (fflush(stdout) != 0)
		return DPE_FAIL;
	return r;
}

const struct dispatch_cmd dispatch_cmd_top = {
	.name = "top",
	.summary = "per-GPU utilisation, memory, power of a running job's nodes",
	.usage = "[-H HOST] [--interval S] [-n N] [--node NODES] [--procs] [--health] JOB",
	.description =
		"Samples the GPUs of a running SLURM job with nvidia-smi on each of its nodes,\n"
		"through one 'srun --overlap' step per session (per group of nodes holding the\n"
		"same number of GPUs), over one connection: a refreshing table on a terminal,\n"
		"else one sample per interval as lines, or one JSON document per line with\n"
		"--json. GPUs are those SLURM gave the job (SLURM_STEP_GPUS), keyed by bus id\n"
		"and UUID; values nvidia-smi cannot give are '-' (null in JSON). A node is\n"
		"flagged no-nvidia-smi, stale (silent past two intervals), no-gpus-visible or\n"
		"nvidia-smi-failed while the others keep updating. With --procs, the same step\n"
		"lists the job's processes on each node every interval (scontrol listpids, the\n"
		"top step's own left out): CPU, memory, user, and the GPU each holds. On a\n"
		"plain host, one script per refresh: the job's processes (its process group\n"
		"and their descendants), its GPUs (leased, or held by its processes; 'shared'\n"
		"when another user's process holds one too) and, with --procs, the processes.\n"
		"HISTORY is each GPU's utilisation over the job's life so far, from the samples\n"
		"the job records (submit --sample), read once as top starts.",
	.opts = top_options,
	.min_args = 1,
	.max_args = 1,
	.flags = CMD_WANTS_INVENTORY | CMD_NEEDS_SSH | CMD_NEEDS_SESSION,
	.session_host = top_host,
	.fn = cmd_top,
};
