/* SPDX-License-Identifier: MIT */
/*
 * dispatch hostlist (--expand | --fold) EXPR...: SLURM hostlist syntax on the command
 * line, as `scontrol show hostnames` and `scontrol show hostlist`, without SLURM.
 */
#include <cjson/cJSON.h>
#include <stdio.h>

#include "dispatch.h"
#include "sched/slurm/hostlist.h"

enum { EXPAND = 1, FOLD };
static int mode;

static const struct dp_option hostlist_options[] = {
	OPT_CMDMODE(0, "expand", &mode, EXPAND, "one host a line, as scontrol show hostnames"),
	OPT_CMDMODE(0, "fold", &mode, FOLD, "one hostlist for all the hosts, as scontrol show hostlist"),
	OPT_END,
};

#define ONE_MODE "'hostlist' needs exactly one of --expand and --fold"
static const struct dp_rule hostlist_rules[] = {
	{ DP_EXCLUDES, "--expand", "--fold", ONE_MODE },
	{ DP_NEEDS_ONE, "--expand --fold", NULL, ONE_MODE },
	{ 0 },
};

/* All the hosts of all the expressions, in order. */
static int expand_all(const struct dp_args *args, char ***all, struct dp_error *err)
{
	size_t n = 0;
	*all = xcalloc(1, sizeof(**all));
	for (int i = 0; i < args->npos; i++) {
		char **hosts;
		if (hostlist_expand(args->pos[i], &hosts, err) < 0)
			return -1;
		size_t m = strv_len(hosts);
		*all = xrealloc(*all, (n + m + 1) * sizeof(**all));
		memcpy(*all + n, hosts, m * sizeof(*hosts));
		n += m;
		(*all)[n] = NULL;
		free(hosts); /* the names now belong to *all */
	}
	return 0;
}

static int do_expand(struct dp_ctx *ctx, const struct dp_args *args)
{
	struct dp_error err = { 0 };
	if (!ctx->json) {
		/* Check them all first (cheap: nothing is expanded), so that a bad one prints
		 * nothing; then one expression at a time, so as to hold one in memory. */
		for (int i = 0; i < args->npos; i++) {
			_cleanup_free_ char *first = NULL;
			if (hostlist_first(args->pos[i], &first, &err) < 0)
				return report_error(&err);
		}
		for (int i = 0; i < args->npos; i++) {
			_cleanup_strv_free_ char **hosts = NULL;
			if (hostlist_expand(args->pos[i], &hosts, &err) < 0)
				return report_error(&err);
			for (size_t k = 0; hosts[k]; k++)
				printf("%s\n", hosts[k]);
		}
		return 0;
	}
	_cleanup_strv_free_ char **all = NULL;
	if (expand_all(args, &all, &err) < 0)
		return report_error(&err);
	cJSON *doc = cJSON_CreateObject();
	cJSON *arr = cJSON_AddArrayToObject(doc, "hosts");
	for (size_t k = 0; all[k]; k++)
		cJSON_AddItemToArray(arr, cJSON_CreateString(all[k]));
	json_print(doc);
	return 0;
}

static int do_fold(struct dp_ctx *ctx, const struct dp_args *args)
{
	struct dp_error err = { 0 };
	_cleanup_strv_free_ char **all = NULL;
	_cleanup_free_ char *folded = NULL;
	if (expand_all(args, &all, &err) < 0 || hostlist_fold(all, &folded, &err) < 0)
		return report_error(&err);
	if (ctx->json) {
		cJSON *doc = cJSON_CreateObject();
		cJSON_AddStringToObject(doc, "hostlist", folded);
		json_print(doc);
	} else {
		printf("%s\n", folded);
	}
	return 0;
}

static int cmd_hostlist(struct dp_ctx *ctx, const struct dp_args *args)
{
	return mode == EXPAND ? do_expand(ctx, args) : do_fold(ctx, args);
}

const struct dispatch_cmd dispatch_cmd_hostlist = {
	.name = "hostlist",
	.summary = "expand or fold SLURM hostlist expressions",
	.usage = "(--expand | --fold) EXPR...",
	.description = "Expands hostlist expressions such as 'gpu[01-04],login' into one host\n"
		       "a line, or folds host names back into one expression. Works offline.",
	.opts = hostlist_options,
	.rules = hostlist_rules,
	.min_args = 1,
	.max_args = -1,
	.fn = cmd_hostlist,
};
