/* SPDX-License-Identifier: MIT */
/* dispatch solve: which host (and partition) a job fits, from the inventory alone. */
#include <cjson/cJSON.h>
#include <stdio.h>

#include "inventory/chips.h"
#include "dispatch.h"
#include "inventory/inventory.h"
#include "solver.h"

static struct solve_request opt_req; /* --chip, --check */
static int chips = -1; /* -1: not given */
static bool cpu;
static char **prefer, **forbid, **only;

static const struct dp_option solve_options[] = {
	OPT_STRING(0, "chip", &opt_req.chip, "NAME", "the chip (catalogue name); any GPU when omitted", chip_complete_words),
	{ .long_name = "chips", .argname = "N", .help = "how many chips (default 1; 0 is a CPU job)",
	  .kind = DP_OPT_INT, .value = &chips, .min = 0, .max = 100000,
	  .bad = "--chips: expected a whole number >= 0, got '%s'" },
	OPT_BOOL(0, "cpu", &cpu, "a CPU job (the same as --chips 0)"),
	OPT_CALLBACK(0, "prefer", &prefer, "CLUSTER", "try hosts of CLUSTER first (repeatable, or comma-separated)", NULL, option_add_words),
	OPT_CALLBACK(0, "cluster", &only, "CLUSTER", "only hosts of CLUSTER (repeatable, or comma-separated)", NULL, option_add_words),
	OPT_CALLBACK(0, "exclude-cluster", &forbid, "CLUSTER", "never hosts of CLUSTER (repeatable, or comma-separated)", NULL, option_add_words),
	OPT_CALLBACK(0, "forbid", &forbid, "CLUSTER", "the same as --exclude-cluster", NULL, option_add_words),
	OPT_BOOL(0, "check", &opt_req.check, "ask the hosts what is free now (one SSH command each, in parallel)"),
	OPT_END,
};

static void describe_request(char *buf, size_t n, const struct solve_request *req)
{
	if (req->chips == 0)
		snprintf(buf, n, "a CPU job");
	else
		snprintf(buf, n, "%d %s", req->chips, req->chip ? req->chip : (req->chips == 1 ? "GPU" : "GPUs"));
}

static void print_json(const struct solve_result *res, bool check)
{
	const struct inv_host *h = res->host;
	cJSON *doc = cJSON_CreateObject();
	json_add_str_or_null(doc, "host", h ? h->name : NULL);
	json_add_str_or_null(doc, "type", h ? inv_host_type_name(h->type) : NULL);
	json_add_str_or_null(doc, "ssh", h ? h->ssh : NULL);
	json_add_str_or_null(doc, "cluster", h ? h->cluster_name : NULL);
	json_add_str_or_null(doc, "partition", res->partition);
	json_add_str_or_null(doc, "constraint", res->constraint);
	json_add_str_or_null(doc, "chip", res->chip);
	json_add_str_or_null(doc, "gres_type", res->gres_type);
	if (h)
		cJSON_AddNumberToObject(doc, "chips", res->chips);
	else
		cJSON_AddNullToObject(doc, "chips");
	cJSON_AddBoolToObject(doc, "fallback", res->fallback);
	cJSON_AddBoolToObject(doc, "checked", check);
	cJSON *arr = cJSON_AddArrayToObject(doc, "considered");
	for (size_t i = 0; i < res->nverdicts; i++) {
		cJSON *v = cJSON_CreateObject();
		cJSON_AddStringToObject(v, "host", res->verdicts[i].host->name);
		cJSON_AddBoolToObject(v, "fits", res->verdicts[i].fits);
		cJSON_AddStringToObject(v, "reason", res->verdicts[i].reason);
		cJSON_AddItemToArray(arr, v);
	}
	json_print(doc);
}

static void print_text(const struct solve_result *res)
{
	const struct inv_host *h = res->host;
	printf("host:       %s\n", h->name);
	printf("type:       %s\n", inv_host_type_name(h->type));
	printf("ssh:        %s\n", h->ssh);
	printf("cluster:    %s\n", h->cluster_name);
	if (h->type == INV_HOST_SLURM)
		printf("partition:  %s\n", res->partition ? res->partition : "(the cluster's default)");
	if (res->constraint)
		printf("constraint: %s\n", res->constraint);
	if (res->chips == 0)
		printf("chips:      none (a CPU job)\n");
	else if (res->gres_type)
		printf("chips:      %d %s (gres %s:%s:%d)\n", res->chips, res->chip, "gpu", res->gres_type,
		       res->chips);
	else if (res->chip)
		printf("chips:      %d %s\n", res->chips, res->chip);
	else
		printf("chips:      %d GPU%s of any type (gres gpu:%d)\n", res->chips,
		       res->chips == 1 ? "" : "s", res->chips);
}

static int cmd_solve(struct dp_ctx *ctx, const struct dp_args *args)
{
	struct solve_request req = opt_req;
	req.chips = chips < 0 ? 1 : chips;
	if (cpu) {
		if (chips > 0)
			return usage_error(ctx, "--cpu is a job without chips; drop --chips %d", req.chips);
		if (req.chip)
			return usage_error(ctx, "--cpu is a job without chips; drop --chip %s", req.chip);
		req.chips = 0;
	}
	req.prefer = prefer;
	req.forbid = forbid;
	req.only = only;

	struct solve_result res;
	struct dp_error err = { 0 };
	void *live = NULL;
	if (req.check) {
		int r = solve_checked(ctx, &req, &res, &live);
		if (r)
			return r;
	} else if (solve(ctx->inv, &req, &res, &err) < 0) {
		return report_error(&err);
	}

	char what[128];
	describe_request(what, sizeof(what), &req);
	if (ctx->verbosity > 0)
		for (size_t i = 0; i < res.nverdicts; i++)
			info_msg(ctx, "%s %s: %s", res.verdicts[i].host == res.host ? "*" : " ",
				 res.verdicts[i].host->name, res.verdicts[i].reason);
	if (res.fallback && ctx->verbosity >= 0)
		warning_msg("nothing %s %s; '%s' has the most %s, so the job would wait there",
			    req.check ? "is free now for" : "fits", what, res.host->name,
			    res.chip ? res.chip : "GPUs");

	int status = 0;
	if (ctx->json)
		print_json(&res, req.check);
	else if (res.host)
		print_text(&res);
	if (!res.host) {
		if (ctx->inv->nhosts == 0)
			error_msg("nothing fits %s: the inventory '%s' has no hosts", what,
				  ctx->inventory_path);
		else if (ctx->verbosity > 0)
			error_msg("nothing fits %s", what);
		else
			error_msg("nothing fits %s on %zu host%s (-v says why for each)", what,
				  res.nverdicts, res.nverdicts == 1 ? "" : "s");
		status = DPE_FAIL;
	}
	solve_result_release(&res);
	solve_checked_free(live);
	return status;
}

const struct dispatch_cmd dispatch_cmd_solve = {
	.name = "solve",
	.summary = "find the host (and partition) a job fits",
	.usage = "[--chip NAME] [--chips N] [--cpu] [--prefer CLUSTER] [--cluster CLUSTER] [--exclude-cluster CLUSTER] [--check]",
	.description = "Picks the first host, in the inventory's priority order, where a job of N chips\n"
		       "fits, from the inventory alone (solve's default; submit --solve and notebook\n"
		       "--solve ask the hosts unless --no-check), and prints it with the partition and\n"
		       "GRES. --check also asks the hosts what is free now. -v gives the verdict for\n"
		       "every host.",
	.opts = solve_options,
	.min_args = 0,
	.max_args = 0,
	.flags = CMD_NEEDS_INVENTORY | CMD_NEEDS_SSH,
	.fn = cmd_solve,
};
