/* SPDX-License-Identifier: MIT */
/*
 * dispatch hosts: the inventory's hosts, then the ssh config aliases that are not
 * already an inventory host (by name or by ssh target). Offline, unless --check asks
 * to probe them (cmd/hosts-check.c).
 */
#include <cjson/cJSON.h>
#include <stdio.h>

#include "dispatch.h"
#include "inventory/inventory.h"
#include "transport/ssh_config.h"
#include "base/strbuf.h"

static bool names, check, hosts_given;
static char **only;
static double timeout = 10;
static int fanout = 32;

static int add_hosts(const struct dp_ctx *ctx, const struct dp_option *o, const char *arg)
{
	hosts_given = true;
	return opt_hostlist(ctx, o, arg);
}

static const struct dp_option hosts_options[] = {
	OPT_BOOL(0, "names", &names, "print only the names, one per line (for completion)"),
	OPT_BOOL(0, "check", &check, "connect to each host, log in and run true: status and latency"),
	OPT_CALLBACK('H', "hosts", &only, "HOSTS", "with --check: only these hosts (comma-separated, hostlist ranges)", "host", add_hosts),
	OPT_SECONDS(0, "timeout", &timeout, "S", "with --check: give up on a host after S seconds (default 10)",
		    .whole = true, .min = 1, .max = 86400),
	OPT_INT(0, "fanout", &fanout, "N", "with --check: at most N hosts at once (default 32)", 1, 4096),
	OPT_END,
};

static const struct dp_rule hosts_rules[] = {
	{ DP_REQUIRES, "-H --timeout --fanout", "--check", "%s goes with --check" },
	{ DP_EXCLUDES, "--check", "--names", "--names and --check do not go together" },
	{ 0 },
};

static bool known_to_inventory(const struct inventory *inv, const char *alias)
{
	for (size_t i = 0; inv && i < inv->nhosts; i++)
		if (streq(inv->hosts[i].name, alias) || (inv->hosts[i].ssh && streq(inv->hosts[i].ssh, alias)))
			return true;
	return false;
}

/* What a host offers, in one column: chips for plain hosts; partitions (default ones
 * starred, as sinfo does), CPU partitions and chip limits for SLURM hosts. */
static char *resources(const struct inv_host *h)
{
	struct strbuf sb = STRBUF_INIT;
	if (!inv_host_type_reachable(h->type)) {
		strbuf_addf(&sb, "not driven by dispatch (%s)",
			    h->type == INV_HOST_TPU ? "Cloud TPU, gcloud" : "Volcano, kubectl");
		for (size_t i = 0; h->missing && h->missing[i]; i++)
			strbuf_addf(&sb, "%s%s", i ? ", " : "; missing ", h->missing[i]);
		return strbuf_detach(&sb);
	}
	if (h->type == INV_HOST_PLAIN) {
		for (size_t i = 0; i < h->nchips; i++)
			strbuf_addf(&sb, "%s%d %s", i ? ", " : "", h->chips[i].count, h->chips[i].chip);
		if (!h->nchips)
			strbuf_adds(&sb, "CPU only");
		return strbuf_detach(&sb);
	}
	if (h->npartitions)
		strbuf_adds(&sb, "partitions ");
	for (size_t i = 0; i < h->npartitions; i++)
		strbuf_addf(&sb, "%s%s%s", i ? "," : "", h->partitions[i].name,
			    h->partitions[i].is_default ? "*" : "");
	for (size_t i = 0; h->cpu_partitions && h->cpu_partitions[i]; i++)
		strbuf_addf(&sb, "%s%s", i ? "," : (sb.len ? "; cpu " : "cpu "), h->cpu_partitions[i]);
	if (h->chips_set) {
		strbuf_adds(&sb, sb.len ? "; at most " : "at most ");
		for (size_t i = 0; i < h->nchips; i++)
			strbuf_addf(&sb, "%s%d %s", i ? ", " : "", h->chips[i].count, h->chips[i].chip);
		if (!h->nchips)
			strbuf_adds(&sb, "0 GPUs");
	}
	if (!sb.len)
		strbuf_adds(&sb, "default partition");
	return strbuf_detach(&sb);
}

static cJSON *host_json(const struct inv_host *h)
{
	cJSON *j = cJSON_CreateObject();
	cJSON_AddStringToObject(j, "name", h->name);
	cJSON_AddStringToObject(j, "type", inv_host_type_name(h->type));
	json_add_str_or_null(j, "ssh", h->ssh);
	cJSON_AddStringToObject(j, "cluster", h->cluster_name);
	if (h->type == INV_HOST_SLURM && !h->chips_set) {
		cJSON_AddNullToObject(j, "chips");
	} else {
		cJSON *chips = cJSON_AddObjectToObject(j, "chips");
		for (size_t i = 0; i < h->nchips; i++)
			cJSON_AddNumberToObject(chips, h->chips[i].chip, h->chips[i].count);
	}
	cJSON *parts = cJSON_AddArrayToObject(j, "partitions");
	for (size_t i = 0; i < h->npartitions; i++) {
		cJSON *p = cJSON_CreateObject();
		cJSON_AddStringToObject(p, "name", h->partitions[i].name);
		cJSON_AddBoolToObject(p, "default", h->partitions[i].is_default);
		json_add_str_or_null(p, "constraint", h->partitions[i].constraint);
		cJSON_AddItemToArray(parts, p);
	}
	cJSON *cpu = cJSON_AddArrayToObject(j, "cpu_partitions");
	for (size_t i = 0; h->cpu_partitions && h->cpu_partitions[i]; i++)
		cJSON_AddItemToArray(cpu, cJSON_CreateString(h->cpu_partitions[i]));
	cJSON *uv = cJSON_AddArrayToObject(j, "uv_groups");
	for (size_t i = 0; h->uv_groups && h->uv_groups[i]; i++)
		cJSON_AddItemToArray(uv, cJSON_CreateString(h->uv_groups[i]));
	cJSON *notes = cJSON_AddObjectToObject(j, "annotations");
	for (size_t i = 0; i < h->nannotations; i++)
		cJSON_AddStringToObject(notes, h->annotations[i].key, h->annotations[i].value);
	cJSON_AddStringToObject(j, "container_runtime", container_runtime_name(h->container_runtime));
	json_add_str_or_null(j, "container_image", h->container_image);
	if (!inv_host_type_reachable(h->type)) {
		cJSON *miss = cJSON_AddArrayToObject(j, "missing");
		for (size_t i = 0; h->missing && h->missing[i]; i++)
			cJSON_AddItemToArray(miss, cJSON_CreateString(h->missing[i]));
	}
	cJSON_AddStringToObject(j, "source", "inventory");
	return j;
}

static cJSON *alias_json(const char *alias)
{
	cJSON *j = cJSON_CreateObject();
	cJSON_AddStringToObject(j, "name", alias);
	cJSON_AddNullToObject(j, "type");
	cJSON_AddStringToObject(j, "ssh", alias);
	cJSON_AddNullToObject(j, "cluster");
	cJSON_AddObjectToObject(j, "chips");
	cJSON_AddArrayToObject(j, "partitions");
	cJSON_AddArrayToObject(j, "cpu_partitions");
	cJSON_AddArrayToObject(j, "uv_groups");
	cJSON_AddObjectToObject(j, "annotations");
	cJSON_AddStringToObject(j, "container_runtime", "none");
	cJSON_AddNullToObject(j, "container_image");
	cJSON_AddStringToObject(j, "source", "ssh_config");
	return j;
}

static void print_table(const struct inventory *inv, char **aliases)
{
	struct table t = { .ncols = 5 };
	size_t nhosts = inv ? inv->nhosts : 0;
	if (!nhosts && !aliases)
		return;
	table_row(&t, "NAME", "TYPE", "SSH", "CLUSTER", "RESOURCES", NULL);
	for (size_t i = 0; i < nhosts; i++) {
		const struct inv_host *h = &inv->hosts[i];
		table_row(&t, h->name, inv_host_type_name(h->type), h->ssh ? h->ssh : "-",
			  h->cluster_name, NULL);
		table_take(&t, resources(h));
	}
	for (size_t i = 0; aliases && aliases[i]; i++)
		table_row(&t, aliases[i], "-", aliases[i], "-", "(ssh config)", NULL);
	table_print(&t);
}

/* show, discover: cmd/hosts-show.c; resolve: cmd/hosts-resolve.c */
static const struct dispatch_cmd *const hosts_subcommands[] = {
	&dispatch_cmd_hosts_show,
	&dispatch_cmd_hosts_discover,
	&dispatch_cmd_hosts_resolve,
	NULL,
};

static int cmd_hosts(struct dp_ctx *ctx, const struct dp_args *args)
{
	if (hosts_given && !only)
		return usage_error(ctx, "-H names no hosts");
	if (only)
		return hosts_check(ctx, only, (int)timeout, fanout);

	struct dp_error err = { 0 };
	_cleanup_strv_free_ char **all = NULL;
	if (ssh_config_aliases(ctx->ssh_config_path, ctx->ssh_home, &all, &err) < 0)
		return report_error(&err);
	_cleanup_strv_free_ char **aliases = NULL;
	for (size_t i = 0; all && all[i]; i++)
		if (!known_to_inventory(ctx->inv, all[i]))
			strv_add(&aliases, all[i]);

	const struct inventory *inv = ctx->inv;
	size_t nhosts = inv ? inv->nhosts : 0;
	if (check) {
		_cleanup_strv_free_ char **every = NULL;
		for (size_t i = 0; i < nhosts; i++)
			if (inv_host_type_reachable(inv->hosts[i].type))
				strv_add(&every, inv->hosts[i].name);
			else
				info_msg(ctx, "not checking '%s': a %s host (dispatch drives SSH and SLURM "
					 "hosts only)", inv->hosts[i].name,
					 inv_host_type_name(inv->hosts[i].type));
		for (size_t i = 0; aliases && aliases[i]; i++)
			strv_add(&every, aliases[i]);
		if (!every)
			info_msg(ctx, "no hosts to check: %s, and the ssh config has no Host aliases",
				 inv ? "the inventory names none" : "no inventory");
		return hosts_check(ctx, every, (int)timeout, fanout);
	}
	if (ctx->json) {
		cJSON *doc = cJSON_CreateObject();
		cJSON *arr = cJSON_AddArrayToObject(doc, "hosts");
		for (size_t i = 0; i < nhosts; i++)
			cJSON_AddItemToArray(arr, host_json(&inv->hosts[i]));
		for (size_t i = 0; aliases && aliases[i]; i++)
			cJSON_AddItemToArray(arr, alias_json(aliases[i]));
		json_print(doc);
	} else if (names) {
		for (size_t i = 0; i < nhosts; i++)
			puts(inv->hosts[i].name);
		for (size_t i = 0; aliases && aliases[i]; i++)
			puts(aliases[i]);
	} else {
		print_table(inv, aliases);
	}
	if (!nhosts && !aliases)
		info_msg(ctx, "no hosts: %s, and the ssh config has no Host aliases",
			 inv ? "the inventory names none" : "no inventory");
	return 0;
}

const struct dispatch_cmd dispatch_cmd_hosts = {
	.name = "hosts",
	.summary = "list inventory hosts and ssh config aliases; --check probes them",
	.usage = "[--names]\n--check [-H HOSTS] [--timeout S] [--fanout N]",
	.description = "Lists the inventory's hosts (name, type, ssh target, cluster, chips or\n"
		       "partitions), then the Host aliases of the ssh config that the inventory\n"
		       "does not already name. Nothing is contacted, unless --check: then each\n"
		       "host is connected to, logged in to (never prompting) and runs true, all\n"
		       "at once; the exit status is 1 when any host failed.\n"
		       "'show HOST' prints a host's partitions, nodes and free GPUs; 'discover HOST'\n"
		       "prints an inventory entry for it (one SSH command each); 'resolve HOST'\n"
		       "prints the ssh settings dispatch uses for it, as 'ssh -G HOST' does.",
	.opts = hosts_options,
	.rules = hosts_rules,
	.min_args = 0,
	.max_args = 0,
	.flags = CMD_WANTS_INVENTORY | CMD_NEEDS_SSH,
	.fn = cmd_hosts,
	.subcommands = hosts_subcommands,
};
