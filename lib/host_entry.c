/* SPDX-License-Identifier: MIT */
/* An inventory entry for a host from its facts, as YAML and as fields (host_entry.h). */
#include "host_entry.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <stdlib.h>

#include "base/json.h"
#include "inventory/chips.h"
#include "inventory/inventory.h"

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

/* The host's cluster in the inventory, else the only cluster there is, else NULL. */
static char *cluster_for(const struct inventory *inv, const char *host)
{
	const struct inv_host *h = inv ? inventory_host(inv, host) : NULL;
	if (h)
		return xstrdup(h->cluster_name);
	if (inv && inv->nclusters == 1)
		return xstrdup(inv->clusters[0].name);
	return NULL;
}

static void entry_head(struct host_entry *e)
{
	struct strbuf *y = &e->yaml;
	yaml_scalar(y, e->name);
	strbuf_adds(y, ":\n  ssh: ");
	yaml_scalar(y, e->ssh);
	strbuf_adds(y, "\n  cluster: ");
	yaml_scalar(y, e->cluster ? e->cluster : "CLUSTER");
	strbuf_adds(y, e->cluster ? "\n" : "    # the name of its entry under clusters:\n");
	strbuf_addf(y, "  type: %s\n", e->type);
}

static void add_chip(struct host_entry *e, const char *chip, int count)
{
	e->chips = xrealloc(e->chips, (e->nchips + 1) * sizeof(*e->chips));
	e->chips[e->nchips++] = (struct host_entry_chip){ .chip = xstrdup(chip), .count = count };
}

static void add_unmapped(struct host_entry *e, const char *gres_type, const char *name,
			 long memory_mib, int count)
{
	e->unmapped = xrealloc(e->unmapped, (e->nunmapped + 1) * sizeof(*e->unmapped));
	e->unmapped[e->nunmapped++] = (struct host_entry_unmapped){
		.gres_type = gres_type ? xstrdup(gres_type) : NULL,
		.name = name ? xstrdup(name) : NULL,
		.memory_mib = memory_mib,
		.count = count,
	};
}

static void add_partition(struct host_entry *e, const struct slurm_partition *p,
			  const struct slurm_partition_gpus *g, size_t ng)
{
	e->partitions = xrealloc(e->partitions, (e->npartitions + 1) * sizeof(*e->partitions));
	struct host_entry_partition *hp = &e->partitions[e->npartitions++];
	*hp = (struct host_entry_partition){ .name = xstrdup(p->name), .is_default = p->is_default,
					     .gpus = xcalloc(ng ? ng : 1, sizeof(*hp->gpus)),
					     .ngpus = ng };
	for (size_t k = 0; k < ng; k++)
		hp->gpus[k] = (struct host_entry_gpus){ .type = g[k].type ? xstrdup(g[k].type) : NULL,
							.total = g[k].total };
}

static void entry_slurm(const struct inventory *inv, const struct slurm_facts *sl,
			struct host_entry *e)
{
	struct strbuf *y = &e->yaml;
	strbuf_addf(y, "# dispatch hosts discover %s: SLURM %s, %zu partitions, %zu nodes\n", e->ssh,
		    sl->version ? sl->version : "(version unknown)", sl->npartitions, sl->nnodes);
	entry_head(e);

	struct strbuf cpus = STRBUF_INIT;
	for (size_t i = 0; i < sl->npartitions; i++) {
		const struct slurm_partition *p = &sl->partitions[i];
		struct slurm_partition_gpus *g;
		size_t ng;
		slurm_partition_gpus(sl, p->name, &g, &ng);
		int total = 0;
		for (size_t k = 0; k < ng; k++)
			total += g[k].total;
		if (total == 0) {
			strbuf_adds(&cpus, cpus.len ? ", " : "");
			yaml_scalar(&cpus, p->name);
			strv_add(&e->cpu_partitions, p->name);
			slurm_partition_gpus_free(g, ng);
			continue;
		}
		if (!e->npartitions)
			strbuf_adds(y, "  partitions:\n");
		add_partition(e, p, g, ng);
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
	if (cpus.len)
		strbuf_addf(y, "  cpu_partitions: [%s]    # no GPUs\n", cpus.buf);
	strbuf_release(&cpus);

	/* The cluster's GPUs by type, all nodes. */
	struct slurm_partition_gpus *all;
	size_t nall;
	slurm_partition_gpus(sl, NULL, &all, &nall);
	struct strbuf notes = STRBUF_INIT;
	for (size_t j = 0; j < nall; j++) {
		const char *chip = chip_of_gres(inv, all[j].type);
		if (chip) {
			if (!e->nchips)
				strbuf_adds(y, "  chips:    # the cluster's GPUs: a limit, lower it to cap your use\n");
			strbuf_addf(y, "    %s: %d    # gres type %s\n", chip, all[j].total, all[j].type);
			add_chip(e, chip, all[j].total);
			continue;
		}
		add_unmapped(e, all[j].type, NULL, -1, all[j].total);
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
	if (!e->npartitions && !e->cpu_partitions)
		strbuf_adds(y, "  # no partitions\n");
}

/* Two GPUs count as one kind: the same catalogue chip, or (outside it) the same name. */
static bool same_kind(const struct nvidia_gpu *a, const struct nvidia_gpu *b)
{
	return a->chip ? streq_ptr(b->chip, a->chip) : (!b->chip && streq(b->name, a->name));
}

static void entry_plain(const struct host_facts *f, struct host_entry *e)
{
	struct strbuf *y = &e->yaml;
	if (f->gpu_tool)
		strbuf_addf(y, "# dispatch hosts discover %s: nvidia-smi, %zu GPU%s\n", e->ssh, f->gpus.n,
			    f->gpus.n == 1 ? "" : "s");
	else
		strbuf_addf(y, "# dispatch hosts discover %s: no nvidia-smi, no SLURM%s%s\n", e->ssh,
			    f->slurm_error ? " (sbatch is installed, but " : "",
			    f->slurm_error ? "scontrol fails)" : "");
	entry_head(e);
	struct strbuf notes = STRBUF_INIT;
	/* count per kind, in the order first seen */
	for (size_t i = 0; i < f->gpus.n; i++) {
		const struct nvidia_gpu *g = &f->gpus.gpus[i];
		bool seen = false;
		for (size_t k = 0; k < i; k++)
			if (same_kind(g, &f->gpus.gpus[k]))
				seen = true;
		if (seen)
			continue;
		int count = 0;
		for (size_t k = i; k < f->gpus.n; k++)
			if (same_kind(g, &f->gpus.gpus[k]))
				count++;
		if (g->chip) {
			if (!e->nchips)
				strbuf_adds(y, "  chips:\n");
			strbuf_addf(y, "    %s: %d    # %s, %ld MiB\n", g->chip, count, g->name, g->memory_mib);
			add_chip(e, g->chip, count);
		} else {
			strbuf_addf(&notes, "  # %d x '%s' (%ld MiB): not in the chip catalogue\n", count,
				    g->name, g->memory_mib);
			add_unmapped(e, NULL, g->name, g->memory_mib, count);
		}
	}
	if (!e->nchips)
		strbuf_addf(y, "  chips: {}%s\n", f->gpu_tool ? "" : "    # no nvidia-smi on the host: a CPU-only host");
	strbuf_add(y, notes.buf, notes.len);
	strbuf_release(&notes);
}

void host_entry_make(const struct inventory *inv, const char *host, const struct host_facts *f,
		     struct host_entry *e)
{
	*e = (struct host_entry){ .name = entry_name(host), .ssh = xstrdup(host),
				  .type = f->slurm ? "slurm" : "plain", .cluster = cluster_for(inv, host),
				  .yaml = STRBUF_INIT };
	if (f->slurm)
		entry_slurm(inv, &f->sl, e);
	else
		entry_plain(f, e);
}

void host_entry_release(struct host_entry *e)
{
	free(e->name);
	free(e->ssh);
	free(e->cluster);
	for (size_t i = 0; i < e->npartitions; i++) {
		for (size_t k = 0; k < e->partitions[i].ngpus; k++)
			free(e->partitions[i].gpus[k].type);
		free(e->partitions[i].gpus);
		free(e->partitions[i].name);
	}
	free(e->partitions);
	strv_free(e->cpu_partitions);
	for (size_t i = 0; i < e->nchips; i++)
		free(e->chips[i].chip);
	free(e->chips);
	for (size_t i = 0; i < e->nunmapped; i++) {
		free(e->unmapped[i].gres_type);
		free(e->unmapped[i].name);
	}
	free(e->unmapped);
	strbuf_release(&e->yaml);
	memset(e, 0, sizeof(*e));
}

cJSON *host_entry_json(const struct host_entry *e)
{
	cJSON *j = cJSON_CreateObject();
	cJSON_AddStringToObject(j, "name", e->name);
	cJSON_AddStringToObject(j, "ssh", e->ssh);
	cJSON_AddStringToObject(j, "type", e->type);
	json_add_str_or_null(j, "cluster", e->cluster);
	bool slurm = streq(e->type, "slurm");
	cJSON *parts = NULL, *cpu = NULL;
	if (slurm) {
		parts = cJSON_AddArrayToObject(j, "partitions");
		cpu = cJSON_AddArrayToObject(j, "cpu_partitions");
	}
	cJSON *chips = cJSON_AddObjectToObject(j, "chips");
	cJSON *unmapped = cJSON_AddArrayToObject(j, "unmapped");
	if (!slurm) {
		parts = cJSON_AddArrayToObject(j, "partitions");
		cpu = cJSON_AddArrayToObject(j, "cpu_partitions");
	}
	for (size_t i = 0; i < e->npartitions; i++) {
		const struct host_entry_partition *p = &e->partitions[i];
		cJSON *pj = cJSON_CreateObject();
		cJSON_AddStringToObject(pj, "name", p->name);
		cJSON_AddBoolToObject(pj, "default", p->is_default);
		cJSON *gj = cJSON_AddObjectToObject(pj, "gpus");
		for (size_t k = 0; k < p->ngpus; k++)
			cJSON_AddNumberToObject(gj, p->gpus[k].type ? p->gpus[k].type : "", p->gpus[k].total);
		cJSON_AddItemToArray(parts, pj);
	}
	for (size_t i = 0; e->cpu_partitions && e->cpu_partitions[i]; i++)
		cJSON_AddItemToArray(cpu, cJSON_CreateString(e->cpu_partitions[i]));
	for (size_t i = 0; i < e->nchips; i++)
		cJSON_AddNumberToObject(chips, e->chips[i].chip, e->chips[i].count);
	for (size_t i = 0; i < e->nunmapped; i++) {
		const struct host_entry_unmapped *u = &e->unmapped[i];
		cJSON *uj = cJSON_CreateObject();
		if (slurm) {
			json_add_str_or_null(uj, "gres_type", u->gres_type);
		} else {
			cJSON_AddStringToObject(uj, "name", u->name);
			cJSON_AddNumberToObject(uj, "memory_mib", (double)u->memory_mib);
		}
		cJSON_AddNumberToObject(uj, "count", u->count);
		cJSON_AddItemToArray(unmapped, uj);
	}
	cJSON_AddStringToObject(j, "yaml", e->yaml.buf);
	return j;
}
