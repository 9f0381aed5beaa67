/* SPDX-License-Identifier: MIT */
/*
 * dispatch top JOB: the GPUs of a running SLURM job, per node, sampled by
 * nvidia-smi through one overlap step per session (lib/gpu/gpu_top.h), with
 * --procs the job's processes from the same step (lib/sched/slurm/slurm_procs.h), over one
 * connection: a refreshing table on a TTY, else one sample per interval as lines,
 * or one JSON document (one line) per sample.
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "base/strbuf.h"
#include "dispatch.h"
#include "inventory/inventory.h"
#include "jobref.h"
#include "gpu/gpu_top.h"
#include "sched/slurm/hostlist.h"
#include "gpu/node_health.h"
#include "sched/plain/plain_top.h"
#include "sched/plain/plainjob.h"
#include "sched/slurm/slurm_procs.h"
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

struct session {
	const struct dp_ctx *ctx;
	const char *job, *host;
	struct gpu_top top;
	struct strbuf partial, err;
	int interval;
	long count, samples;
	bool tty, stopped, procs, health;
	struct plain_top *plain;        /* a plain host's job: its processes */
	struct slurm_procs *nodeprocs;  /* a SLURM job with --procs: each node's */
};

/* The job's processes on node i, when known. */
static const struct plain_top *node_procs(const struct session *s, size_t i)
{
	if (s->plain)
		return i == 0 ? s->plain : NULL;
	return s->nodeprocs ? slurm_procs_node(s->nodeprocs, i) : NULL;
}

static const char *node_flag(const struct gpu_node *n, size_t nrows, double now, double interval)
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

static void json_num(cJSON *o, const char *key, double v)
{
	if (isnan(v))
		cJSON_AddNullToObject(o, key);
	else
		cJSON_AddNumberToObject(o, key, v);
}

static cJSON *proc_json(const struct top_proc *pr, long pid, double mem_mib, bool gpu)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "pid", (double)pid);
	if (gpu)
		json_num(o, "memory_used_mib", mem_mib);
	json_add_str_or_null(o, "command", pr ? pr->command : NULL);
	json_add_str_or_null(o, "user", pr ? pr->user : NULL);
	json_num(o, "cpu_pct", pr ? pr->cpu : NAN);
	json_num(o, "rss_kib", pr ? (double)pr->rss_kib : NAN);
	return o;
}

/* --procs: the job's processes on GPU r. */
static void procs_json(const struct plain_top *p, const struct gpu_row *r, cJSON *arr)
{
	const struct top_app **apps;
	size_t na = plain_top_gpu_procs(p, r->uuid, &apps);
	for (size_t a = 0; a < na; a++)
		cJSON_AddItemToArray(arr, proc_json(plain_top_proc(p, apps[a]->pid), apps[a]->pid,
						    apps[a]->mem_mib, true));
	free(apps);
}

/* Whether the job's process pid holds one of the GPUs shown (rows). */
static bool on_shown_gpu(const struct plain_top *p, long pid, const struct gpu_row **rows, size_t nr)
{
	for (size_t a = 0; a < p->napps; a++)
		for (size_t k = 0; p->apps[a].pid == pid && k < nr; k++)
			if (rows[k]->uuid && streq(rows[k]->uuid, p->apps[a].uuid))
				return true;
	return false;
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
static void procs_text(const struct session *s)
{
	struct table t = { .ncols = 8, .trim = true };
	table_row(&t, "NODE", "GPU", "PID", "GPU-MEM(MiB)", "CPU", "RSS(MiB)", "USER", "COMMAND", NULL);
	for (size_t i = 0; i < s->top.nnodes; i++) {
		const struct gpu_node *n = &s->top.nodes[i];
		const struct plain_top *p = node_procs(s, i);
		if (!p)
			continue;
		const struct gpu_row **rows;
		size_t nr = gpu_top_node_rows(&s->top, n, &rows), held = 0;
		for (size_t k = 0; k < nr; k++) {
			const struct top_app **apps;
			size_t na = plain_top_gpu_procs(p, rows[k]->uuid, &apps);
			for (size_t a = 0; a < na; a++)
				proc_row(&t, n->name, rows[k]->bus_id ? rows[k]->bus_id : rows[k]->key,
					 plain_top_proc(p, apps[a]->pid), apps[a]->pid, apps[a]->mem_mib);
			held += na;
			free(apps);
		}
		for (size_t k = 0; k < p->njob; k++)
			if (!on_shown_gpu(p, p->job[k]->pid, rows, nr))
				proc_row(&t, n->name, "-", p->job[k], p->job[k]->pid, NAN);
		free(rows);
		if (nr > 0 && held == 0) /* GPUs shown (nvidia-smi answers), none held */
			printf("%s: none of the job's processes holds a GPU\n", n->name);
	}
	putchar('\n');
	table_print(&t);
}

static void show_json(struct session *s, double now)
{
	cJSON *doc = cJSON_CreateObject();
	cJSON_AddStringToObject(doc, "job", s->job);
	cJSON_AddStringToObject(doc, "host", s->host);
	cJSON_AddNumberToObject(doc, "sample", (double)s->samples);
	cJSON_AddNumberToObject(doc, "interval", s->interval);
	cJSON_AddNumberToObject(doc, "time", (double)time(NULL));
	cJSON *nodes = cJSON_AddArrayToObject(doc, "nodes");
	for (size_t i = 0; i < s->top.nnodes; i++) {
		const struct gpu_node *n = &s->top.nodes[i];
		const struct gpu_row **rows;
		size_t nr = gpu_top_node_rows(&s->top, n, &rows);
		const char *flag = node_flag(n, nr, now, s->interval);
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "node", n->name);
		cJSON_AddNumberToObject(o, "allocated_gpus", n->allocated);
		json_add_str_or_null(o, "flag", flag);
		json_add_str_or_null(o, "message", n->message);
		json_add_str_or_null(o, "step_gpus", n->step_gpus);
		cJSON *gpus = cJSON_AddArrayToObject(o, "gpus");
		for (size_t k = 0; k < nr; k++) {
			const struct gpu_row *r = rows[k];
			cJSON *g = cJSON_CreateObject();
			json_add_str_or_null(g, "uuid", r->uuid);
			json_add_str_or_null(g, "bus_id", r->bus_id);
			json_add_str_or_null(g, "name", r->name);
			json_add_int_or_null(g, "index", r->index);
			json_add_int_or_null(g, "minor_number", r->minor);
			json_num(g, "utilization_pct", r->util);
			json_num(g, "memory_used_mib", r->mem_used);
			json_num(g, "memory_total_mib", r->mem_total);
			json_num(g, "power_w", r->power);
			json_num(g, "power_limit_w", r->power_limit);
			json_num(g, "temperature_c", r->temp);
			json_add_str_or_null(g, "throttle_reasons", r->throttle);
			json_add_str_or_null(g, "flag", gpu_node_stale(n, now, s->interval) ? "stale"
							: r->shared ? "shared" : NULL);
			if (s->plain)
				cJSON_AddBoolToObject(g, "shared", r->shared);
			if (s->procs && node_procs(s, i))
				procs_json(node_procs(s, i), r, cJSON_AddArrayToObject(g, "processes"));
			cJSON_AddItemToArray(gpus, g);
		}
		if (s->health) {
			struct gpu_health_report hr;
			gpu_health_parse(n->health ? n->health : "", &hr);
			cJSON_AddItemToObject(o, "health", n->health ? gpu_health_json(&hr) : cJSON_CreateNull());
			gpu_health_release(&hr);
		}
		const struct plain_top *p = node_procs(s, i);
		if (p) {
			cJSON *pr = cJSON_AddObjectToObject(o, "processes");
			cJSON_AddNumberToObject(pr, "count", (double)p->njob);
			cJSON_AddNumberToObject(pr, "cpu_pct", p->cpu);
			cJSON_AddNumberToObject(pr, "rss_kib", (double)p->rss_kib);
			if (s->nodeprocs)
				cJSON_AddStringToObject(pr, "found_by", s->nodeprocs->how[i]);
			if (s->procs) {
				/* the job's processes holding none of the GPUs above */
				cJSON *none = cJSON_AddArrayToObject(pr, "without_gpu");
				for (size_t k = 0; k < p->njob; k++)
					if (!on_shown_gpu(p, p->job[k]->pid, rows, nr))
						cJSON_AddItemToArray(none, proc_json(p->job[k], p->job[k]->pid,
										     NAN, false));
			}
		} else if (s->nodeprocs) {
			cJSON_AddNullToObject(o, "processes"); /* not reported yet */
		}
		free(rows);
		cJSON_AddItemToArray(nodes, o);
	}
	char *text = cJSON_PrintUnformatted(doc);
	if (!text)
		abort();
	puts(text);
	free(text);
	cJSON_Delete(doc);
}

static void show_text(struct session *s, double now)
{
	struct table t = { .ncols = 8, .trim = true };
	if (s->tty) {
		char clock[16];
		time_t tt = time(NULL);
		strftime(clock, sizeof(clock), "%H:%M:%S", localtime(&tt));
		printf("\033[H\033[2Jdispatch top %s@%s  every %ds  %s\n\n", s->job, s->host,
		       s->interval, clock);
	} else if (s->samples > 1) {
		putchar('\n');
	}
	table_row(&t, "NODE", "GPU", "UTIL", "MEM(MiB)", "POWER(W)", "TEMP", "THROTTLE", "FLAGS", NULL);
	for (size_t i = 0; i < s->top.nnodes; i++) {
		const struct gpu_node *n = &s->top.nodes[i];
		const struct gpu_row **rows;
		size_t nr = gpu_top_node_rows(&s->top, n, &rows);
		const char *flag = node_flag(n, nr, now, s->interval);
		if (nr == 0)
			table_row(&t, n->name, "-", "-", "-", "-", "-", "-", flag ? flag : "-", NULL);
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
		}
		free(rows);
	}
	table_print(&t);
	for (size_t i = 0; i < s->top.nnodes; i++) {
		const struct gpu_node *n = &s->top.nodes[i];
		const struct gpu_row **rows;
		size_t nr = gpu_top_node_rows(&s->top, n, &rows);
		free(rows);
		const char *flag = node_flag(n, nr, now, s->interval);
		if (n->state == GPU_NODE_FAILED && n->message)
			printf("%s: nvidia-smi: %s\n", n->name, n->message);
		else if (flag && streq(flag, "no-gpus-visible"))
			printf("%s: the job holds %d GPUs there but the step sees none: its GPUs are "
			       "asked for with --gpus; before SLURM 22.05 an --overlap step shares no "
			       "GRES (SLURM_STEP_GPUS='%s')\n", n->name, n->allocated,
			       n->step_gpus ? n->step_gpus : "");
		else if (flag && streq(flag, "no-gpus-allocated") && !s->plain && !s->nodeprocs)
			printf("%s: the job holds no GPUs there\n", n->name);
	}
	for (size_t i = 0; s->health && (s->tty || s->samples == 1) && i < s->top.nnodes; i++) {
		const struct gpu_node *n = &s->top.nodes[i];
		if (!n->health)
			continue;
		struct gpu_health_report hr;
		gpu_health_parse(n->health, &hr);
		printf("\n%s: GPU health\n", n->name);
		gpu_health_print(n->name, &hr);
		gpu_health_release(&hr);
	}
	for (size_t i = 0; (s->plain || s->nodeprocs) && i < s->top.nnodes; i++) {
		const struct gpu_node *n = &s->top.nodes[i];
		const struct plain_top *p = node_procs(s, i);
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

static void show(struct session *s)
{
	double now = monotonic_seconds();
	s->samples++;
	if (s->ctx->json)
		show_json(s, now);
	else
		show_text(s, now);
	fflush(stdout);
}

static int on_stdout(void *data, const char *buf, size_t len)
{
	struct session *s = data;
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
			show(s);
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
	struct session *s = data;
	if (s->err.len < 65536)
		strbuf_add(&s->err, buf, len);
	return 0;
}

/* Keeps the nodes of j that are in the hostlist expr; 0, or an exit status. */
static int keep_nodes(const struct dp_ctx *ctx, struct gpu_top_job *j, const char *expr)
{
	struct dp_error err = { 0 };
	_cleanup_strv_free_ char **want = NULL;
	if (hostlist_expand(expr, &want, &err) < 0)
		return usage_error(ctx, "--node: %s", err.msg);
	size_t k = 0;
	for (size_t i = 0; i < j->n; i++) {
		if (strv_contains(want, j->alloc[i].node))
			j->alloc[k++] = j->alloc[i];
		else
			free(j->alloc[i].node);
	}
	j->n = k;
	if (k == 0)
		return usage_error(ctx, "--node '%s': the job runs on %s", expr, j->nodes);
	return 0;
}

static void sleep_s(double sec)
{
	struct timespec ts = { .tv_sec = (time_t)sec,
			       .tv_nsec = (long)((sec - (double)(time_t)sec) * 1e9) };
	while (nanosleep(&ts, &ts) < 0)
		;
}

/* A plain host's job: one script per refresh over ss (lib/sched/plain/plain_top.h). */
static int top_plain(const struct dp_ctx *ctx, struct ssh_session *ss, const struct jobref *ref,
		     long interval, long count, bool procs, bool health)
{
	struct dp_error err = { 0 };
	_cleanup_free_ char *stage = job_stage_dir(ref);
	if (!stage || !ref->in_ledger) {
		error_msg("job '%s' not found on '%s': dispatch did not submit it", ref->arg, ref->host);
		return DPE_NOTFOUND;
	}
	_cleanup_strbuf_ struct strbuf cmd = STRBUF_INIT, out = STRBUF_INIT, errout = STRBUF_INIT;
	struct plainjob_ref pj = { .id = ref->id, .stage_dir = stage, .pgid = ref->rec.pid };
	plainjob_status_command(&cmd, &pj, 1);
	int status;
	if (ssh_exec_capture(ss, cmd.buf, NULL, &out, &errout, &status, &err) < 0)
		return report_error(&err);
	struct plainjob_status *ps = NULL;
	size_t nps = plainjob_parse_status(out.buf, &ps);
	if (nps == 0) {
		plainjob_status_free(ps, nps);
		error_msg("job '%s' not found on '%s': no answer for its stage dir", ref->arg, ref->host);
		return DPE_NOTFOUND;
	}
	if (!streq(ps[0].state, "RUNNING")) {
		error_msg("job '%s' is %s%s%s%s: dispatch top shows running jobs", ref->arg, ps[0].state,
			  ps[0].reason && *ps[0].reason ? " (" : "", ps[0].reason ? ps[0].reason : "",
			  ps[0].reason && *ps[0].reason ? ")" : "");
		plainjob_status_free(ps, nps);
		return DPE_FAIL;
	}
	plainjob_status_free(ps, nps);

	struct gpu_top_alloc one = { .node = (char *)ref->host, .gpus = 0 };
	struct gpu_top_job j = { .n = 1, .alloc = &one };
	struct plain_top plain;
	plain_top_init(&plain, ref->rec.pid);
	struct session s = {
		.ctx = ctx, .job = ref->id, .host = ref->host,
		.partial = STRBUF_INIT, .err = STRBUF_INIT,
		.interval = (int)interval, .count = count, .procs = procs, .plain = &plain,
		.tty = stdout_is_tty() && !ctx->json,
	};
	gpu_top_init(&s.top, &j);
	if (health) {
		/* once per session, over the same connection */
		strbuf_reset(&cmd);
		strbuf_reset(&out);
		gpu_health_command(&cmd);
		if (ssh_exec_capture(ss, cmd.buf, NULL, &out, &errout, &status, &err) < 0) {
			gpu_top_release(&s.top);
			plain_top_release(&plain);
			return report_error(&err);
		}
		s.top.nodes[0].health = strbuf_detach(&out);
		s.health = true;
	}
	strbuf_reset(&cmd);
	plain_top_command(&cmd, ref->host, stage, ref->rec.pid);
	int ret = 0;
	for (;;) {
		plain_top_reset(&plain);
		long before = s.samples;
		struct ssh_exec x = { .command = cmd.buf, .in_fd = -1, .on_stdout = on_stdout,
				      .on_stderr = on_stderr, .data = &s };
		if (ssh_exec(ss, &x, &status, &err) < 0 && !s.stopped) {
			ret = report_error(&err);
			break;
		}
		if (s.stopped)
			break;
		if (s.samples == before) {
			error_msg("cannot sample job '%s' on '%s'%s%s", ref->arg, ref->host,
				  s.err.len ? ": " : "", s.err.len ? strtok(s.err.buf, "\n") : "");
			ret = DPE_FAIL;
			break;
		}
		if (plain.ended || plain.njob == 0) {
			note_msg("job '%s' ended", ref->arg);
			ret = count ? DPE_FAIL : 0;
			break;
		}
		sleep_s((double)interval);
	}
	gpu_top_release(&s.top);
	plain_top_release(&plain);
	strbuf_release(&s.partial);
	strbuf_release(&s.err);
	if (fflush(stdout) != 0)
		return DPE_FAIL;
	return ret;
}

static int cmd_top(struct dp_ctx *ctx, const struct dp_args *args)
{
	const char *host_opt = opt_host, *node_opt = opt_node;
	long interval = opt_interval, count = opt_count;
	bool procs = opt_procs, health = opt_health;
	struct dp_error err = { 0 };
	_cleanup_(job_set_release) struct job_set set = { 0 };
	int r = job_args_resolve(ctx, args->pos, 1, host_opt, &set);
	if (r)
		return r;
	const struct jobref *ref = &set.refs[0];

	struct ssh_ctx sc;
	cmd_ssh_ctx(ctx, &sc);
	_cleanup_ssh_session_ struct ssh_session *ss = NULL;
	if (ssh_session_open(&sc, inventory_ssh_destination(ctx->inv, ref->host), &ss, &err) < 0)
		return report_error(&err);
	if (job_is_plain(ctx, ref)) {
		if (node_opt)
			return usage_error(ctx, "--node: job '%s' runs on one plain host, '%s'", ref->arg,
					   ref->host);
		return top_plain(ctx, ss, ref, interval, count, procs, health);
	}
	_cleanup_strbuf_ struct strbuf cmd = STRBUF_INIT;
	int status;
	_cleanup_(gpu_top_job_release) struct gpu_top_job j = { 0 };
	r = job_nodes_fetch(ss, ref, &j);
	if (r)
		return r;
	if (!j.state || !streq(j.state, "RUNNING")) {
		error_msg("job '%s' is %s (reason: %s): dispatch top shows running jobs", ref->arg,
			  j.state ? j.state : "in an unknown state", j.reason ? j.reason : "none given");
		return DPE_FAIL;
	}
	if (node_opt && (r = keep_nodes(ctx, &j, node_opt)))
		return r;

	strbuf_reset(&cmd);
	/* a step outlives nothing: the tick loop ends it when the connection goes, and
	 * with --count it is bounded besides */
	long minutes = count ? (count * interval + 59) / 60 + 1 : 0;
	gpu_top_slurm_command(&cmd, ref->id, &j, (int)interval, minutes, health, procs);
	struct slurm_procs nodeprocs;
	struct session s = {
		.ctx = ctx, .job = ref->id, .host = ref->host,
		.partial = STRBUF_INIT, .err = STRBUF_INIT,
		.interval = (int)interval, .count = count, .health = health, .procs = procs,
		.nodeprocs = procs ? &nodeprocs : NULL,
		.tty = stdout_is_tty() && !ctx->json,
	};
	gpu_top_init(&s.top, &j);
	if (procs)
		slurm_procs_init(&nodeprocs, &s.top);
	struct ssh_exec x = {
		.command = cmd.buf,
		.in_fd = -1,
		.on_stdout = on_stdout,
		.on_stderr = on_stderr,
		.data = &s,
	};
	int ret = 0;
	if (ssh_exec(ss, &x, &status, &err) < 0 && !s.stopped)
		ret = report_error(&err);
	else if (!s.stopped && s.samples == 0) {
		error_msg("cannot sample job '%s' on '%s'%s%s", ref->arg, ref->host,
			  s.err.len ? ": " : " (the steps ended at once)",
			  s.err.len ? strtok(s.err.buf, "\n") : "");
		ret = DPE_FAIL;
	} else if (!s.stopped) {
		note_msg("the steps of job '%s' ended (the job may have ended)", ref->arg);
		ret = count ? DPE_FAIL : 0;
	}
	if (procs)
		slurm_procs_release(&nodeprocs);
	gpu_top_release(&s.top);
	strbuf_release(&s.partial);
	strbuf_release(&s.err);
	if (fflush(stdout) != 0)
		return DPE_FAIL;
	return ret;
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
		"when another user's process holds one too) and, with --procs, the processes.",
	.opts = top_options,
	.min_args = 1,
	.max_args = 1,
	.flags = CMD_WANTS_INVENTORY | CMD_NEEDS_SSH,
	.fn = cmd_top,
};
