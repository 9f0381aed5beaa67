/* SPDX-License-Identifier: MIT */
/*
 * dispatch hosts show HOST, dispatch hosts discover HOST: one SSH exec each
 * (lib/host_facts.h), then a report of partitions, nodes and free GPUs (show) or a
 * ready-to-paste inventory entry (discover).
 */
#include <cjson/cJSON.h>
#include <stdio.h>

#include "dispatch.h"
#include "host_entry.h"
#include "host_facts.h"
#include "host_report.h"
#include "inventory/inventory.h"
#include "gpu/node_health.h"
#include "base/strbuf.h"
#include "base/termesc.h"

#define FACTS_TIMEOUT 60

/* What to ask: an inventory host's type decides; anything else is found out. */
static enum host_facts_ask ask_for(const struct inv_host *h)
{
	if (!h)
		return HOST_FACTS_AUTO;
	return h->type == INV_HOST_SLURM ? HOST_FACTS_SLURM : HOST_FACTS_GPUS;
}

/* Over the session the dispatcher opened to the host. */
static int fetch(struct dp_ctx *ctx, const char *host, enum host_facts_ask ask, struct host_facts *f,
		 struct host_health *health)
{
	const struct inv_host *h = ctx->inv ? inventory_host(ctx->inv, host) : NULL;
	struct dp_error err = { 0 };
	struct ssh_session *s = ctx->session;

	if (host_facts_fetch_at(s, ask, h ? h->gpu_lock_dir : NULL, FACTS_TIMEOUT, f, &err) < 0) {
		error_msg("%s: %s", host, err.msg);
		return err.kind ? err.kind : DPE_FAIL;
	}
	nvidia_gpus_busy_at(&f->gpus, h ? h->busy_gpu_mib : 0);
	if (health && host_health_fetch(s, f->slurm, health, &err) < 0) {
		error_msg("%s: %s", host, err.msg);
		host_facts_release(f);
		return err.kind ? err.kind : DPE_FAIL;
	}
	return 0;
}

/* "a100 2/4, 4/8" style cells: per type, a/b (partitions: free/total, nodes:
 * used/total). */
static char *gpu_cell(const struct host_report_gpus *g, size_t n, bool used)
{
	struct strbuf sb = STRBUF_INIT;
	for (size_t i = 0; i < n; i++)
		strbuf_addf(&sb, "%s%s %d/%d", i ? ", " : "", g[i].type ? g[i].type : "gpu",
			    used ? g[i].used : g[i].free, g[i].total);
	if (!n)
		strbuf_adds(&sb, "-");
	return strbuf_detach(&sb);
}

static void show_scheduler_text(const char *host, const struct host_report *r)
{
	struct table t = { .ncols = 7, .trim = true };
	printf("%s: SLURM %s, %zu partition%s, %zu node%s, %d GPU%s (%d free now)\n\n", host,
	       r->version ? r->version : "(version unknown)", r->npartitions,
	       r->npartitions == 1 ? "" : "s", r->nnodes, r->nnodes == 1 ? "" : "s", r->gpus_total,
	       r->gpus_total == 1 ? "" : "s", r->gpus_free);

	table_row(&t, "PARTITION", "STATE", "NODES", "CPUS", "MAX TIME", "DEFAULT TIME",
			  "GPUS FREE/TOTAL", NULL);
	for (size_t i = 0; i < r->npartitions; i++) {
		const struct host_report_partition *p = &r->partitions[i];
		_cleanup_free_ char *name = xasprintf("%s%s", p->name, p->is_default ? "*" : "");
		_cleanup_free_ char *nodes = xasprintf("%ld", p->node_count);
		_cleanup_free_ char *cpus = xasprintf("%ld", p->cpus);
		_cleanup_free_ char *cell = gpu_cell(p->gpus, p->ngpus, false);
		table_row(&t, name, p->state, nodes, cpus, p->max_time, p->default_time, cell, NULL);
	}
	table_print(&t);
	putchar('\n');

	t.ncols = 6;
	table_row(&t, "NODE", "STATE", "CPUS ALLOC/TOTAL", "GPUS USED/TOTAL", "PARTITIONS",
			  "REASON", NULL);
	for (size_t i = 0; i < r->nnodes; i++) {
		const struct host_report_node *n = &r->nodes[i];
		_cleanup_free_ char *cpus = xasprintf("%ld/%ld", n->cpus_alloc, n->cpus);
		_cleanup_free_ char *cell = gpu_cell(n->gpus, n->ngpus, true);
		struct strbuf parts = STRBUF_INIT;
		for (size_t j = 0; n->partitions && n->partitions[j]; j++)
			strbuf_addf(&parts, "%s%s", j ? "," : "", n->partitions[j]);
		table_row(&t, n->name, n->state, cpus, cell, parts.len ? parts.buf : "-",
				  n->reason ? n->reason : "", NULL);
		strbuf_release(&parts);
	}
	table_print(&t);
}

static void show_gpus_text(const char *host, const struct host_facts *f)
{
	if (!f->gpu_tool) {
		printf("%s: no nvidia-smi on the host: no GPUs to show\n", host);
		if (f->slurm_error)
			printf("(sbatch is installed, but %s: not a SLURM login node)\n", f->slurm_error);
		return;
	}
	size_t nfree = 0;
	for (size_t i = 0; i < f->gpus.n; i++)
		nfree += !f->gpus.gpus[i].busy;
	printf("%s: nvidia-smi, %zu GPU%s (%zu free now)\n", host, f->gpus.n,
	       f->gpus.n == 1 ? "" : "s", nfree);
	if (f->jobs_running >= 0) {
		printf("dispatch jobs: %ld running, %ld pending (dispatch queue -H %s)\n",
		       f->jobs_running, f->jobs_pending, host);
	} else if (f->jobs_error) {
		_cleanup_free_ char *why = printable(f->jobs_error);
		printf("dispatch jobs: not known: %s\n", why);
	}
	printf("\n");
	struct table t = { .ncols = 7, .trim = true };
	table_row(&t, "GPU", "CHIP", "MEMORY", "PROCESSES", "USED", "STATE", "NAME", NULL);
	for (size_t i = 0; i < f->gpus.n; i++) {
		const struct nvidia_gpu *g = &f->gpus.gpus[i];
		_cleanup_free_ char *idx = xasprintf("%d", g->index);
		_cleanup_free_ char *mem = g->memory_mib >= 0 ? xasprintf("%ld MiB", g->memory_mib) : xstrdup("?");
		_cleanup_free_ char *procs = xasprintf("%d", g->processes);
		_cleanup_free_ char *used = g->used_mib >= 0 ? xasprintf("%ld MiB", g->used_mib) : xstrdup("?");
		table_row(&t, idx, g->chip ? g->chip : "(unknown)", mem, procs, used,
				  g->leased ? "leased" : g->busy ? "busy" : "free", g->name, NULL);
	}
	table_print(&t);
}

static void show_health_text(const char *host, const struct host_facts *f,
			     const struct host_report *r, const struct host_health *h)
{
	putchar('\n');
	if (f->slurm) {
		if (h->sinfo_error)
			printf("%s: no node health: %s\n", host, h->sinfo_error);
		struct table t = { .ncols = 6, .trim = true };
		table_row(&t, "NODE", "STATE", "GPUS USED/TOTAL", "SINCE", "BY", "REASON", NULL);
		for (size_t i = 0; i < h->nnodes; i++) {
			const struct node_health *n = &h->nodes[i];
			const struct host_report_node *rn = host_report_node(r, n->node);
			_cleanup_free_ char *cell = rn ? gpu_cell(rn->gpus, rn->ngpus, true) : xstrdup("?");
			table_row(&t, n->node, n->state, cell, n->since ? n->since : "-",
				  n->by ? n->by : "-", n->reason ? n->reason : "-", NULL);
		}
		table_print(&t);
		return;
	}
	gpu_health_print(host, &h->gpus);
}

void gpu_health_print(const char *host, const struct gpu_health_report *g)
{
	if (g->no_smi)
		printf("%s: no nvidia-smi on the host: no GPU health\n", host);
	else if (g->error)
		printf("%s: nvidia-smi: %s\n", host, g->error);
	if (g->ngpus) {
		struct table t = { .ncols = 7, .trim = true };
		table_row(&t, "GPU", "ECC-UNCORRECTED", "RETIRE-PENDING", "REMAP-PENDING",
			  "REMAP-FAILED", "RECOVERY", "HEALTH", NULL);
		for (size_t i = 0; i < g->ngpus; i++) {
			char *const *v = g->gpus[i].v;
			table_row(&t, v[GH_BUS_ID] ? v[GH_BUS_ID] : v[GH_UUID],
				  v[GH_ECC_VOLATILE] ? v[GH_ECC_VOLATILE] : "-",
				  v[GH_RETIRED_PENDING] ? v[GH_RETIRED_PENDING] : "-",
				  v[GH_REMAP_PENDING] ? v[GH_REMAP_PENDING] : "-",
				  v[GH_REMAP_FAILURE] ? v[GH_REMAP_FAILURE] : "-",
				  v[GH_RECOVERY] ? v[GH_RECOVERY] : "-",
				  g->gpus[i].unhealthy ? "unhealthy" : "ok", NULL);
		}
		table_print(&t);
	}
	const char *src = g->xid_source ? g->xid_source : "unavailable";
	if (streq(src, "unavailable"))
		printf("XID errors: unavailable (the kernel log is not readable as this user: "
		       "journalctl -k and dmesg refused)\n");
	else
		printf("XID errors (%s): %zu line%s\n", src, strv_len(g->xid),
		       strv_len(g->xid) == 1 ? "" : "s");
	for (size_t i = 0; g->xid && g->xid[i]; i++)
		printf("  %s\n", g->xid[i]);
}

static int hosts_show(struct dp_ctx *ctx, const char *host, bool health)
{
	const struct inv_host *h = ctx->inv ? inventory_host(ctx->inv, host) : NULL;
	struct host_facts f;
	struct host_health hl = { 0 };
	int r = fetch(ctx, host, ask_for(h), &f, health ? &hl : NULL);
	if (r)
		return r;
	struct host_report rep;
	host_report_make(&f, &rep);
	if (rep.newer_than)
		warning_msg("'%s' runs SLURM %s, newer than any release dispatch knows (up to %s): "
			    "its answers are read as %s's", host, rep.version, rep.newer_than,
			    rep.newer_than);
	if (ctx->json) {
		cJSON *doc = host_report_json(host, &f, &rep);
		if (health)
			cJSON_AddItemToObject(doc, "health", host_health_json(&f, &hl));
		if (rep.scheduler)
			r = hosts_idle_gpus(ctx, host, doc);
		json_print(doc);
	} else {
		if (rep.scheduler) {
			show_scheduler_text(host, &rep);
			r = hosts_idle_gpus(ctx, host, NULL);
		} else {
			show_gpus_text(host, &f);
		}
		if (health)
			show_health_text(host, &f, &rep, &hl);
	}
	host_report_release(&rep);
	host_health_release(&hl);
	host_facts_release(&f);
	return r;
}

/* ---- discover: the entry is lib/host_entry.h's ---- */

static int hosts_discover(struct dp_ctx *ctx, const char *host)
{
	struct host_facts f;
	int r = fetch(ctx, host, HOST_FACTS_AUTO, &f, NULL);
	if (r)
		return r;
	struct host_entry e;
	host_entry_make(ctx->inv, host, &f, &e);
	if (ctx->json)
		json_print(host_entry_json(&e));
	else
		fputs(e.yaml.buf, stdout);
	host_entry_release(&e);
	host_facts_release(&f);
	return 0;
}

static bool opt_health;

static const struct dp_option show_options[] = {
	OPT_BOOL(0, "health", &opt_health, "node states with who drained them when and why (SLURM), GPU health and XID errors (plain hosts)"),
	OPT_END,
};

static int host_operand(struct dp_ctx *ctx, const struct dp_args *args, const char **host)
{
	(void)ctx;
	*host = args->pos[0];
	return 0;
}

static int cmd_hosts_show(struct dp_ctx *ctx, const struct dp_args *args)
{
	return hosts_show(ctx, args->pos[0], opt_health);
}

static int cmd_hosts_discover(struct dp_ctx *ctx, const struct dp_args *args)
{
	return hosts_discover(ctx, args->pos[0]);
}

static const struct dp_option no_options[] = { OPT_END };

/* Subcommands of hosts (cmd/cmd-hosts.c lists them): -h, the man page and the
 * completions are those of hosts. */
const struct dispatch_cmd dispatch_cmd_hosts_show = {
	.name = "hosts show",
	.summary = "a host's partitions, nodes and free GPUs",
	.usage = "[--health] HOST",
	.opts = show_options,
	.min_args = 1,
	.max_args = 1,
	.flags = CMD_WANTS_INVENTORY | CMD_NEEDS_SSH | CMD_NEEDS_SESSION,
	.session_host = host_operand,
	.fn = cmd_hosts_show,
};

const struct dispatch_cmd dispatch_cmd_hosts_discover = {
	.name = "hosts discover",
	.summary = "an inventory entry for a host, from sinfo or nvidia-smi",
	.usage = "HOST",
	.opts = no_options,
	.min_args = 1,
	.max_args = 1,
	.flags = CMD_WANTS_INVENTORY | CMD_NEEDS_SSH | CMD_NEEDS_SESSION,
	.session_host = host_operand,
	.fn = cmd_hosts_discover,
};
