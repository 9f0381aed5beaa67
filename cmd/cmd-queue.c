/* SPDX-License-Identifier: MIT */
/*
 * dispatch queue: the jobs of SLURM hosts (and plain hosts named), one connection and
 * one command per host (lib/queue.h, through each host's backend), printed.
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>

#include "dispatch.h"
#include "inventory/inventory.h"
#include "jobs/run_attempts.h"
#include "queue.h"

static struct queue_filter opt_filter;
static char **opt_hosts;

static int check_states(const struct dp_ctx *ctx, const struct dp_option *o, const char *states);

static const struct dp_option queue_options[] = {
	OPT_HOSTLIST('H', "hosts", &opt_hosts, "HOSTS", "SLURM hosts, comma-separated, with hostlist ranges (default: every SLURM host of the inventory)"),
	OPT_BOOL(0, "me", &opt_filter.me, "only the jobs of the user dispatch logs in as"),
	OPT_STRING('u', "user", &opt_filter.user, "USER", "only the jobs of these users (comma-separated)", NULL),
	OPT_STRING('p', "partition", &opt_filter.partitions, "PARTITION", "only the jobs of these partitions (comma-separated)", NULL),
	OPT_CALLBACK('t', "states", &opt_filter.states, "STATES", "only jobs in these states, as squeue -t (PD,R,... or all; default: queued and running)", NULL, check_states),
	OPT_END,
};

static const struct dp_rule queue_rules[] = {
	{ DP_EXCLUDES, "--me", "-u", "--me and -u cannot go together" },
	{ 0 },
};

/* The host's queue (lib/queue.h), what failed said. */
static int ask_host(const struct dp_ctx *ctx, const char *host, const struct queue_filter *f,
		    const char *format, struct queue_host *a)
{
	struct dp_error err = { 0 };
	if (queue_ask(ctx->ssh, ctx->inv, host, f, format, a, &err) < 0) {
		if (!a->ran)
			return report_error(&err);
		print_remote_text(stderr, a->errout.buf); /* squeue's own words */
		error_msg("cannot list the queue of '%s': %s", host, err.msg);
		return DPE_FAIL;
	}
	if (a->pending_error)
		warning_msg("no detail on why the pending jobs wait: %s", a->pending_error);
	if (a->warning)
		warning_msg("%s", a->warning);
	return 0;
}

static const char *where(const struct job_state *j)
{
	return streq(j->state, "PENDING") || !j->nodes[0] ? NULL : j->nodes;
}

/* A pending job's (REASON), then why with the numbers where known. */
static char *reason_text(const struct job_state *j)
{
	_cleanup_free_ char *r = printable(j->reason);
	return j->pending_text ? xasprintf("(%s) %s", r, j->pending_text) : xasprintf("(%s)", r);
}

/* Columns as wide as their widest value; the last one is not padded. */
static void print_text(const struct queue_host *a, size_t n)
{
	/* ELAPSED and NODES right-aligned, as squeue */
	static const struct table_col cols[] = { [5] = { .right = true }, [6] = { .right = true },
						 [7] = { 0 } };
	struct table t = { .ncols = 8, .sep = " ", .cols = cols };
	table_row(&t, "JOBID", "PARTITION", "NAME", "USER", "STATE", "ELAPSED", "NODES",
		  "NODELIST(REASON)", NULL);
	for (size_t h = 0; h < n; h++) {
		for (size_t i = 0; a[h].ok && i < a[h].n; i++) {
			const struct job_state *j = &a[h].rows[i];
			_cleanup_free_ char *id = printable(j->id);
			_cleanup_free_ char *elapsed = job_state_elapsed_text(j);
			table_addf(&t, "%s@%s", id, a[h].host);
			table_take(&t, printable(j->partition));
			table_take(&t, printable(j->name));
			table_take(&t, printable(j->user));
			_cleanup_free_ char *state = job_state_state_text(j); /* a run's attempt */
			table_take(&t, printable(state));
			table_take(&t, printable(elapsed));
			if (j->node_count >= 0)
				table_addf(&t, "%ld", j->node_count);
			else
				table_add(&t, "-");
			if (j->gpus && streq(j->state, "RUNNING")) { /* a plain host's: its GPUs */
				_cleanup_free_ char *g = printable(j->gpus);
				table_addf(&t, "%s%s", g[0] ? "gpu:" : "", g[0] ? g : "-");
			}
			else if (where(j))
				table_take(&t, printable(where(j)));
			else
				table_take(&t, reason_text(j));
		}
	}
	table_print(&t);
}

static void print_json(const struct queue_host *a, size_t n)
{
	cJSON *doc = cJSON_CreateObject();
	cJSON *hosts = cJSON_AddArrayToObject(doc, "hosts");
	cJSON *jobs = cJSON_AddArrayToObject(doc, "jobs");
	for (size_t h = 0; h < n; h++) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "host", a[h].host);
		cJSON_AddBoolToObject(o, "ok", a[h].ok);
		json_add_str_or_null(o, "slurm_version", a[h].version);
		json_add_str_or_null(o, "format", a[h].format);
		json_add_str_or_null(o, "error", a[h].error);
		cJSON_AddItemToArray(hosts, o);
		for (size_t i = 0; a[h].ok && i < a[h].n; i++) {
			const struct job_state *j = &a[h].rows[i];
			cJSON *jo = cJSON_CreateObject();
			_cleanup_free_ char *job = job_state_name(j, a[h].host);
			_cleanup_free_ char *elapsed = job_state_elapsed_text(j);
			cJSON_AddStringToObject(jo, "job", job);
			cJSON_AddStringToObject(jo, "id", j->id);
			cJSON_AddStringToObject(jo, "host", a[h].host);
			cJSON_AddStringToObject(jo, "partition", j->partition);
			cJSON_AddStringToObject(jo, "name", j->name);
			cJSON_AddStringToObject(jo, "user", j->user);
			cJSON_AddStringToObject(jo, "state", j->state);
			cJSON_AddStringToObject(jo, "elapsed", elapsed);
			json_add_int_or_null(jo, "node_count", j->node_count);
			cJSON_AddStringToObject(jo, "nodes", j->nodes);
			cJSON_AddStringToObject(jo, "reason", j->reason);
			json_add_str_or_null(jo, "gpus", j->gpus);
			job_state_json_pending(jo, j);
			job_state_json_run(jo, j);
			cJSON_AddItemToArray(jobs, jo);
		}
	}
	json_print(doc);
}

/* -t: squeue's state names, or all. */
static int check_states(const struct dp_ctx *ctx, const struct dp_option *o, const char *states)
{
	_cleanup_free_ char *a = xstrdup(states);
	char *save = NULL;
	for (char *w = strtok_r(a, ",", &save); w; w = strtok_r(NULL, ",", &save))
		if (strcasecmp(w, "all") && !queue_state_known(w))
			return usage_error(ctx, "unknown job state '%s' in -t (squeue's names: PD, R, CG, CD, F, CA, TO, ... or all)", w);
	*(const char **)o->value = states;
	return 0;
}

static int cmd_queue(struct dp_ctx *ctx, const struct dp_args *args)
{
	struct queue_filter f = opt_filter;
	_cleanup_strv_free_ char **hosts = opt_hosts;
	opt_hosts = NULL; /* hosts owns them */
	if (!hosts) {
		for (size_t i = 0; ctx->inv && i < ctx->inv->nhosts; i++)
			if (ctx->inv->hosts[i].type == INV_HOST_SLURM)
				strv_add(&hosts, ctx->inv->hosts[i].name);
		if (!hosts)
			return usage_error(ctx, "no SLURM host in the inventory: name one with -H");
	}
	const char *format = getenv("DISPATCH_QUEUE_FORMAT");
	if (format && !streq(format, "json") && !streq(format, "text"))
		format = NULL;

	size_t n = strv_len(hosts);
	struct queue_host *a = xcalloc(n, sizeof(*a));
	int r = 0;
	for (size_t h = 0; h < n; h++) {
		int hr = ask_host(ctx, hosts[h], &f, format, &a[h]);
		if (hr == DPE_CONNECT || (r != DPE_CONNECT && hr > r))
			r = hr;
	}
	if (ctx->json)
		print_json(a, n);
	else
		print_text(a, n);
	for (size_t h = 0; h < n; h++)
		queue_host_release(&a[h]);
	free(a);
	return r;
}

const struct dispatch_cmd dispatch_cmd_queue = {
	.name = "queue",
	.summary = "list the jobs of SLURM hosts (squeue) and plain hosts, one call per host",
	.usage = "[-H HOSTS] [--me | -u USER] [-p PARTITION] [-t STATES]",
	.description =
		"Lists the jobs queued and running on each SLURM host (every SLURM host of the\n"
		"inventory when no -H), one connection and one squeue per host: squeue --json\n"
		"where SLURM has it (21.08 on), a '|'-separated format with the job name last\n"
		"otherwise, so no job name can shift the columns. A plain host named with -H\n"
		"lists every user's dispatch jobs there (its GPU lock directory): RUNNING with\n"
		"the GPUs they lease, PENDING with the reason. A pending SLURM job's reason is\n"
		"followed by why it waits with the numbers (one more command for all of them).",
	.opts = queue_options,
	.rules = queue_rules,
	.min_args = 0,
	.max_args = 0,
	.flags = CMD_WANTS_INVENTORY | CMD_NEEDS_SSH,
	.fn = cmd_queue,
};
