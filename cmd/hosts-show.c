/* SPDX-License-Identifier: MIT */
/*
 * dispatch hosts show HOST, dispatch hosts discover HOST: one SSH exec each
 * (lib/host_facts.h), then a report of partitions, nodes and free GPUs (show) or a
 * ready-to-paste inventory entry (discover).
 */
#include <cjson/cJSON.h>
#include <ctype.h>
#include <stdio.h>

#include "inventory/chips.h"
#include "dispatch.h"
#include "host_facts.h"
#include "inventory/inventory.h"
#include "transport/ssh.h"
#include "base/strbuf.h"

#define FACTS_TIMEOUT 60

/* What to ask: an inventory host's type decides; anything else is found out. */
static enum host_facts_ask ask_for(const struct inv_host *h)
{
	if (!h)
		return HOST_FACTS_AUTO;
	return h->type == INV_HOST_SLURM ? HOST_FACTS_SLURM : HOST_FACTS_GPUS;
}

static int fetch(struct dp_ctx *ctx, const char *host, enum host_facts_ask ask, struct host_facts *f)
{
	struct ssh_ctx sc;
	struct dp_error err = { 0 };
	_cleanup_ssh_session_ struct ssh_session *s = NULL;

	cmd_ssh_ctx(ctx, &sc);
	if (ssh_session_open(&sc, host, &s, &err) < 0)
		return report_error(&err);
	if (host_facts_fetch(s, ask, FACTS_TIMEOUT, f, &err) < 0) {
		error_msg("%s: %s", host, err.msg);
		return err.kind ? err.kind : DPE_FAIL;
	}
	return 0;
}

/* "a100 2/4, 4/8" style cells: per type, a/b. */
static char *gpu_cell_partition(const struct slurm_partition_gpus *g, size_t n)
{
	struct strbuf sb = STRBUF_INIT;
	for (size_t i = 0; i < n; i++)
		strbuf_addf(&sb, "%s%s %d/%d", i ? ", " : "", g[i].type ? g[i].type : "gpu", g[i].free,
			    g[i].total);
	if (!n)
		strbuf_adds(&sb, "-");
	return strbuf_detach(&sb);
}

static char *gpu_cell_node(const struct slurm_node *node)
{
	struct strbuf sb = STRBUF_INIT;
	for (size_t i = 0; i < node->ngpus; i++)
		strbuf_addf(&sb, "%s%s %d/%d", i ? ", " : "",
			    node->gpus[i].type ? node->gpus[i].type : "gpu", node->gpus[i].used,
			    node->gpus[i].total);
	if (!node->ngpus)
		strbuf_adds(&sb, "-");
	return strbuf_detach(&sb);
}

static void show_slurm_text(const char *host, const struct slurm_facts *sl)
{
	struct table t = { .ncols = 7, .trim = true };
	int gpus = 0, free_gpus = 0;
	for (size_t i = 0; i < sl->nnodes; i++) {
		gpus += slurm_node_gpus_total(&sl->nodes[i], NULL);
		free_gpus += slurm_node_gpus_free(&sl->nodes[i], NULL);
	}
	printf("%s: SLURM %s, %zu partition%s, %zu node%s, %d GPU%s (%d free now)\n\n", host,
	       sl->version ? sl->version : "(version unknown)", sl->npartitions,
	       sl->npartitions == 1 ? "" : "s", sl->nnodes, sl->nnodes == 1 ? "" : "s", gpus,
	       gpus == 1 ? "" : "s", free_gpus);

	table_row(&t, "PARTITION", "STATE", "NODES", "CPUS", "MAX TIME", "DEFAULT TIME",
			  "GPUS FREE/TOTAL", NULL);
	for (size_t i = 0; i < sl->npartitions; i++) {
		const struct slurm_partition *p = &sl->partitions[i];
		struct slurm_partition_gpus *g;
		size_t ng;
		slurm_partition_gpus(sl, p->name, &g, &ng);
		_cleanup_free_ char *name = xasprintf("%s%s", p->name, p->is_default ? "*" : "");
		_cleanup_free_ char *nodes = xasprintf("%ld", p->total_nodes);
		_cleanup_free_ char *cpus = xasprintf("%ld", p->total_cpus);
		_cleanup_free_ char *cell = gpu_cell_partition(g, ng);
		table_row(&t, name, p->state, nodes, cpus, p->max_time, p->default_time, cell, NULL);
		slurm_partition_gpus_free(g, ng);
	}
	table_print(&t);
	putchar('\n');

	t.ncols = 6;
	table_row(&t, "NODE", "STATE", "CPUS ALLOC/TOTAL", "GPUS USED/TOTAL", "PARTITIONS",
			  "REASON", NULL);
	for (size_t i = 0; i < sl->nnodes; i++) {
		const struct slurm_node *n = &sl->nodes[i];
		_cleanup_free_ char *cpus = xasprintf("%ld/%ld", n->cpus_alloc, n->cpus);
		_cleanup_free_ char *cell = gpu_cell_node(n);
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
	printf("%s: nvidia-smi, %zu GPU%s (%zu free now)\n\n", host, f->gpus.n,
	       f->gpus.n == 1 ? "" : "s", nfree);
	struct table t = { .ncols = 7, .trim = true };
	table_row(&t, "GPU", "CHIP", "MEMORY", "PROCESSES", "USED", "STATE", "NAME", NULL);
	for (size_t i = 0; i < f->gpus.n; i++) {
		const struct nvidia_gpu *g = &f->gpus.gpus[i];
		_cleanup_free_ char *idx = xasprintf("%d", g->index);
		_cleanup_free_ char *mem = g->memory_mib >= 0 ? xasprintf("%ld MiB", g->memory_mib) : xstrdup("?");
		_cleanup_free_ char *procs = xasprintf("%d", g->processes);
		_cleanup_free_ char *used = g->used_mib >= 0 ? xasprintf("%ld MiB", g->used_mib) : xstrdup("?");
		table_row(&t, idx, g->chip ? g->chip : "(unknown)", mem, procs, used,
				  g->busy ? "busy" : "free", g->name, NULL);
	}
	table_print(&t);
}

static cJSON *gpus_json(const struct host_facts *f)
{
	cJSON *arr = cJSON_CreateArray();
	for (size_t i = 0; i < f->gpus.n; i++) {
		const struct nvidia_gpu *g = &f->gpus.gpus[i];
		cJSON *j = cJSON_CreateObject();
		cJSON_AddNumberToObject(j, "index", g->index);
		cJSON_AddStringToObject(j, "uuid", g->uuid);
		cJSON_AddStringToObject(j, "name", g->name);
		json_add_str_or_null(j, "chip", g->chip);
		if (g->memory_mib >= 0)
			cJSON_AddNumberToObject(j, "memory_mib", (double)g->memory_mib);
		else
			cJSON_AddNullToObject(j, "memory_mib");
		cJSON_AddNumberToObject(j, "processes", g->processes);
		if (g->used_mib >= 0)
			cJSON_AddNumberToObject(j, "used_mib", (double)g->used_mib);
		else
			cJSON_AddNullToObject(j, "used_mib");
		cJSON_AddBoolToObject(j, "busy", g->busy);
		cJSON_AddItemToArray(arr, j);
	}
	return arr;
}

static cJSON *show_json(const char *host, const struct host_facts *f)
{
	const struct slurm_facts *sl = &f->sl;
	cJSON *doc = cJSON_CreateObject();
	cJSON_AddStringToObject(doc, "host", host);
	cJSON_AddStringToObject(doc, "kind", f->slurm ? "slurm" : "plain");
	json_add_str_or_null(doc, "slurm_version", sl->version);
	json_add_str_or_null(doc, "slurm_error", f->slurm_error);
	cJSON *parts = cJSON_AddArrayToObject(doc, "partitions");
	for (size_t i = 0; i < sl->npartitions; i++) {
		const struct slurm_partition *p = &sl->partitions[i];
		cJSON *j = cJSON_CreateObject();
		cJSON_AddStringToObject(j, "name", p->name);
		cJSON_AddBoolToObject(j, "default", p->is_default);
		cJSON_AddStringToObject(j, "state", p->state);
		cJSON_AddBoolToObject(j, "up", p->up);
		cJSON_AddStringToObject(j, "nodes", p->nodes);
		cJSON_AddNumberToObject(j, "node_count", (double)p->total_nodes);
		cJSON_AddNumberToObject(j, "cpus", (double)p->total_cpus);
		cJSON_AddStringToObject(j, "max_time", p->max_time);
		cJSON_AddStringToObject(j, "default_time", p->default_time);
		cJSON *ga = cJSON_AddArrayToObject(j, "gpus");
		struct slurm_partition_gpus *g;
		size_t ng;
		slurm_partition_gpus(sl, p->name, &g, &ng);
		for (size_t k = 0; k < ng; k++) {
			cJSON *x = cJSON_CreateObject();
			json_add_str_or_null(x, "type", g[k].type);
			cJSON_AddNumberToObject(x, "total", g[k].total);
			cJSON_AddNumberToObject(x, "used", g[k].used);
			cJSON_AddNumberToObject(x, "free", g[k].free);
			cJSON_AddNumberToObject(x, "free_max_node", g[k].free_max);
			cJSON_AddItemToArray(ga, x);
		}
		slurm_partition_gpus_free(g, ng);
		cJSON_AddItemToArray(parts, j);
	}
	cJSON *nodes = cJSON_AddArrayToObject(doc, "nodes");
	for (size_t i = 0; i < sl->nnodes; i++) {
		const struct slurm_node *n = &sl->nodes[i];
		cJSON *j = cJSON_CreateObject();
		cJSON_AddStringToObject(j, "name", n->name);
		cJSON_AddStringToObject(j, "state", n->state);
		cJSON_AddBoolToObject(j, "usable", n->usable);
		cJSON_AddNumberToObject(j, "cpus", (double)n->cpus);
		cJSON_AddNumberToObject(j, "cpus_alloc", (double)n->cpus_alloc);
		cJSON *pa = cJSON_AddArrayToObject(j, "partitions");
		for (size_t k = 0; n->partitions && n->partitions[k]; k++)
			cJSON_AddItemToArray(pa, cJSON_CreateString(n->partitions[k]));
		json_add_str_or_null(j, "reason", n->reason);
		cJSON *ga = cJSON_AddArrayToObject(j, "gpus");
		for (size_t k = 0; k < n->ngpus; k++) {
			cJSON *x = cJSON_CreateObject();
			json_add_str_or_null(x, "type", n->gpus[k].type);
			cJSON_AddNumberToObject(x, "total", n->gpus[k].total);
			cJSON_AddNumberToObject(x, "used", n->gpus[k].used);
			cJSON_AddNumberToObject(x, "free", n->usable ? n->gpus[k].total - n->gpus[k].used : 0);
			cJSON_AddItemToArray(ga, x);
		}
		cJSON_AddItemToArray(nodes, j);
	}
	if (f->gpu_tool)
		cJSON_AddStringToObject(doc, "gpu_tool", "nvidia-smi");
	else
		cJSON_AddNullToObject(doc, "gpu_tool");
	cJSON_AddItemToObject(doc, "gpus", gpus_json(f));
	return doc;
}

static int hosts_show(struct dp_ctx *ctx, const char *host)
{
	const struct inv_host *h = ctx->inv ? inventory_host(ctx->inv, host) : NULL;
	struct host_facts f;
	int r = fetch(ctx, host, ask_for(h), &f);
	if (r)
		return r;
	if (ctx->json)
		json_print(show_json(host, &f));
	else if (f.slurm)
		show_slurm_text(host, &f.sl);
	else
		show_gpus_text(host, &f);
	host_facts_release(&f);
	return 0;
}

/* ---- discover ---- */

/* The inventory chip whose gres_mapping is this GRES type, or NULL. */
static const char *chip_of_gres(const struct inventory *inv, const char *type)
{
	for (size_t i = 0; inv && type && i < inv->ngres_mapping; i++)
		if (streq(inv->gres_mapping[i].value, type))
			return inv->gres_mapping[i].key;
	return NULL;
}

/* YAML needs no quotes for plain host and partition names. */
static void yaml_scalar(struct strbuf *sb, const char *s)
{
	bool plain = *s && (isalnum((unsigned char)*s) || *s == '_');
	for (const char *p = s; *p && plain; p++)
		if (!isalnum((unsigned char)*p) && !strchr("._-/", *p))
			plain = false;
	if (plain && !streq(s, "true") && !streq(s, "false") && !streq(s, "null") && !streq(s, "yes") &&
	    !streq(s, "no")) {
		strbuf_adds(sb, s);
		return;
	}
	strbuf_addch(sb, '"');
	for (const char *p = s; *p; p++) {
		if (*p == '"' || *p == '\\')
			strbuf_addch(sb, '\\');
		strbuf_addch(sb, *p);
	}
	strbuf_addch(sb, '"');
}

/* The inventory key for a destination: user@host:port -> host. */
static char *entry_name(const char *host)
{
	const char *at = strrchr(host, '@');
	const char *s = at ? at + 1 : host;
	return xstrndup(s, strcspn(s, ":"));
}

struct discovered {
	char *name, *cluster;
	bool cluster_known;
	struct strbuf yaml;
	cJSON *json;
};

static void cluster_for(const struct dp_ctx *ctx, const char *host, struct discovered *d)
{
	const struct inventory *inv = ctx->inv;
	const struct inv_host *h = inv ? inventory_host(inv, host) : NULL;
	d->cluster_known = true;
	if (h)
		d->cluster = xstrdup(h->cluster_name);
	else if (inv && inv->nclusters == 1)
		d->cluster = xstrdup(inv->clusters[0].name);
	else {
		d->cluster = xstrdup("CLUSTER");
		d->cluster_known = false;
	}
}

static void entry_head(struct discovered *d, const char *host, const char *type)
{
	struct strbuf *y = &d->yaml;
	yaml_scalar(y, d->name);
	strbuf_adds(y, ":\n  ssh: ");
	yaml_scalar(y, host);
	strbuf_adds(y, "\n  cluster: ");
	yaml_scalar(y, d->cluster);
	strbuf_adds(y, d->cluster_known ? "\n" : "    # the name of its entry under clusters:\n");
	strbuf_addf(y, "  type: %s\n", type);
	cJSON_AddStringToObject(d->json, "name", d->name);
	cJSON_AddStringToObject(d->json, "ssh", host);
	cJSON_AddStringToObject(d->json, "type", type);
	if (d->cluster_known)
		cJSON_AddStringToObject(d->json, "cluster", d->cluster);
	else
		cJSON_AddNullToObject(d->json, "cluster");
}

static void discover_slurm(const struct dp_ctx *ctx, const char *host, const struct slurm_facts *sl,
			   struct discovered *d)
{
	struct strbuf *y = &d->yaml;
	const struct inventory *inv = ctx->inv;
	strbuf_addf(y, "# dispatch hosts discover %s: SLURM %s, %zu partitions, %zu nodes\n", host,
		    sl->version ? sl->version : "(version unknown)", sl->npartitions, sl->nnodes);
	entry_head(d, host, "slurm");

	cJSON *parts = cJSON_AddArrayToObject(d->json, "partitions");
	cJSON *cpu = cJSON_AddArrayToObject(d->json, "cpu_partitions");
	struct strbuf cpus = STRBUF_INIT;
	bool any_gpu_partition = false;
	for (size_t i = 0; i < sl->npartitions; i++) {
		const struct slurm_partition *p = &sl->partitions[i];
		struct slurm_partition_gpus *g;
		size_t ng;
		slurm_partition_gpus(sl, p->name, &g, &ng);
		int total = 0;
		for (size_t k = 0; k < ng; k++)
			total += g[k].total;
		cJSON *pj = cJSON_CreateObject();
		cJSON_AddStringToObject(pj, "name", p->name);
		cJSON_AddBoolToObject(pj, "default", p->is_default);
		cJSON *gj = cJSON_AddObjectToObject(pj, "gpus");
		for (size_t k = 0; k < ng; k++)
			cJSON_AddNumberToObject(gj, g[k].type ? g[k].type : "", g[k].total);
		if (total == 0) {
			strbuf_adds(&cpus, cpus.len ? ", " : "");
			yaml_scalar(&cpus, p->name);
			cJSON_AddItemToArray(cpu, cJSON_CreateString(p->name));
			cJSON_Delete(pj);
			slurm_partition_gpus_free(g, ng);
			continue;
		}
		cJSON_AddItemToArray(parts, pj);
		if (!any_gpu_partition)
			strbuf_adds(y, "  partitions:\n");
		any_gpu_partition = true;
		strbuf_adds(y, "    - ");
		if (p->is_default) {
			strbuf_adds(y, "{name: ");
			yaml_scalar(y, p->name);
			strbuf_adds(y, ", default: true}");
		} else {
			yaml_scalar(y, p->name);
		}
		strbuf_addf(y, "    # %ld node%s, GPUs:", p->total_nodes, p->total_nodes == 1 ? "" : "s");
		for (size_t k = 0; k < ng; k++)
			strbuf_addf(y, "%s %d %s", k ? "," : "", g[k].total, g[k].type ? g[k].type : "untyped");
		if (!p->up)
			strbuf_addf(y, " (state %s)", p->state);
		strbuf_addch(y, '\n');
		slurm_partition_gpus_free(g, ng);
	}
	bool any_cpu_partition = cpus.len > 0;
	if (any_cpu_partition)
		strbuf_addf(y, "  cpu_partitions: [%s]    # no GPUs\n", cpus.buf);
	strbuf_release(&cpus);

	/* The cluster's GPUs by type, all nodes. */
	struct slurm_partition_gpus *all = NULL;
	size_t nall = 0;
	for (size_t i = 0; i < sl->nnodes; i++)
		for (size_t k = 0; k < sl->nodes[i].ngpus; k++) {
			const struct slurm_gpus *x = &sl->nodes[i].gpus[k];
			size_t j = 0;
			while (j < nall && !streq_ptr(all[j].type, x->type))
				j++;
			if (j == nall) {
				all = xrealloc(all, (nall + 1) * sizeof(*all));
				all[nall++] = (struct slurm_partition_gpus){ .type = x->type ? xstrdup(x->type) : NULL };
			}
			all[j].total += x->total;
		}
	cJSON *chips = cJSON_AddObjectToObject(d->json, "chips");
	cJSON *unmapped = cJSON_AddArrayToObject(d->json, "unmapped");
	bool any_chip = false;
	struct strbuf notes = STRBUF_INIT;
	for (size_t j = 0; j < nall; j++) {
		const char *chip = chip_of_gres(inv, all[j].type);
		if (chip) {
			if (!any_chip)
				strbuf_adds(y, "  chips:    # the cluster's GPUs: a limit, lower it to cap your use\n");
			any_chip = true;
			strbuf_addf(y, "    %s: %d    # gres type %s\n", chip, all[j].total, all[j].type);
			cJSON_AddNumberToObject(chips, chip, all[j].total);
			continue;
		}
		cJSON *u = cJSON_CreateObject();
		json_add_str_or_null(u, "gres_type", all[j].type);
		cJSON_AddNumberToObject(u, "count", all[j].total);
		cJSON_AddItemToArray(unmapped, u);
		if (!all[j].type) {
			strbuf_addf(&notes, "  # %d untyped GPUs (gpu:N): only jobs for any GPU go there\n",
				    all[j].total);
			continue;
		}
		strbuf_addf(&notes, "  # gres type '%s' (%d GPUs) has no gres_mapping: add 'CHIP: %s' under "
			    "gres_mapping:%s\n", all[j].type, all[j].total, all[j].type,
			    chip_suggestion(all[j].type));
	}
	strbuf_add(y, notes.buf, notes.len);
	strbuf_release(&notes);
	slurm_partition_gpus_free(all, nall);
	if (!any_gpu_partition && !any_cpu_partition)
		strbuf_adds(y, "  # no partitions\n");
}

static void discover_plain(const char *host, const struct host_facts *f, struct discovered *d)
{
	struct strbuf *y = &d->yaml;
	if (f->gpu_tool)
		strbuf_addf(y, "# dispatch hosts discover %s: nvidia-smi, %zu GPU%s\n", host, f->gpus.n,
			    f->gpus.n == 1 ? "" : "s");
	else
		strbuf_addf(y, "# dispatch hosts discover %s: no nvidia-smi, no SLURM%s%s\n", host,
			    f->slurm_error ? " (sbatch is installed, but " : "",
			    f->slurm_error ? "scontrol fails)" : "");
	entry_head(d, host, "plain");
	cJSON *chips = cJSON_AddObjectToObject(d->json, "chips");
	cJSON *unmapped = cJSON_AddArrayToObject(d->json, "unmapped");
	cJSON_AddArrayToObject(d->json, "partitions");
	cJSON_AddArrayToObject(d->json, "cpu_partitions");
	struct strbuf notes = STRBUF_INIT;
	size_t nchips = 0;
	/* count per chip, in the order first seen */
	for (size_t i = 0; i < f->gpus.n; i++) {
		const struct nvidia_gpu *g = &f->gpus.gpus[i];
		bool seen = false;
		for (size_t k = 0; k < i; k++)
			if (g->chip ? streq_ptr(f->gpus.gpus[k].chip, g->chip)
				    : (!f->gpus.gpus[k].chip && streq(f->gpus.gpus[k].name, g->name)))
				seen = true;
		if (seen)
			continue;
		int count = 0;
		for (size_t k = i; k < f->gpus.n; k++)
			if (g->chip ? streq_ptr(f->gpus.gpus[k].chip, g->chip)
				    : (!f->gpus.gpus[k].chip && streq(f->gpus.gpus[k].name, g->name)))
				count++;
		if (g->chip) {
			if (!nchips++)
				strbuf_adds(y, "  chips:\n");
			strbuf_addf(y, "    %s: %d    # %s, %ld MiB\n", g->chip, count, g->name, g->memory_mib);
			cJSON_AddNumberToObject(chips, g->chip, count);
		} else {
			strbuf_addf(&notes, "  # %d x '%s' (%ld MiB): not in the chip catalogue\n", count,
				    g->name, g->memory_mib);
			cJSON *u = cJSON_CreateObject();
			cJSON_AddStringToObject(u, "name", g->name);
			cJSON_AddNumberToObject(u, "memory_mib", (double)g->memory_mib);
			cJSON_AddNumberToObject(u, "count", count);
			cJSON_AddItemToArray(unmapped, u);
		}
	}
	if (!nchips)
		strbuf_addf(y, "  chips: {}%s\n", f->gpu_tool ? "" : "    # no nvidia-smi on the host: a CPU-only host");
	strbuf_add(y, notes.buf, notes.len);
	strbuf_release(&notes);
}

static int hosts_discover(struct dp_ctx *ctx, const char *host)
{
	struct host_facts f;
	int r = fetch(ctx, host, HOST_FACTS_AUTO, &f);
	if (r)
		return r;
	struct discovered d = { .name = entry_name(host), .yaml = STRBUF_INIT, .json = cJSON_CreateObject() };
	cluster_for(ctx, host, &d);
	if (f.slurm)
		discover_slurm(ctx, host, &f.sl, &d);
	else
		discover_plain(host, &f, &d);
	if (ctx->json) {
		cJSON_AddStringToObject(d.json, "yaml", d.yaml.buf);
		json_print(d.json);
	} else {
		fputs(d.yaml.buf, stdout);
		cJSON_Delete(d.json);
	}
	strbuf_release(&d.yaml);
	free(d.name);
	free(d.cluster);
	host_facts_release(&f);
	return 0;
}

static int cmd_hosts_show(struct dp_ctx *ctx, const struct dp_args *args)
{
	return hosts_show(ctx, args->pos[0]);
}

static int cmd_hosts_discover(struct dp_ctx *ctx, const struct dp_args *args)
{
	return hosts_discover(ctx, args->pos[0]);
}

static const struct dp_option no_options[] = { { 0 } };

/* Subcommands of hosts (cmd/cmd-hosts.c lists them): -h, the man page and the
 * completions are those of hosts. */
const struct dispatch_cmd dispatch_cmd_hosts_show = {
	.name = "hosts show",
	.summary = "a host's partitions, nodes and free GPUs",
	.usage = "HOST",
	.opts = no_options,
	.min_args = 1,
	.max_args = 1,
	.flags = CMD_WANTS_INVENTORY,
	.fn = cmd_hosts_show,
};

const struct dispatch_cmd dispatch_cmd_hosts_discover = {
	.name = "hosts discover",
	.summary = "an inventory entry for a host, from sinfo or nvidia-smi",
	.usage = "HOST",
	.opts = no_options,
	.min_args = 1,
	.max_args = 1,
	.flags = CMD_WANTS_INVENTORY,
	.fn = cmd_hosts_discover,
};
