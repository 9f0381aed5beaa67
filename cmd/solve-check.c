/* SPDX-License-Identifier: MIT */
/*
 * solve --check (and submit --solve --check): lib/solve_check.h asks the hosts that
 * fit on paper; here, what is said about it.
 */
#include "dispatch.h"
#include "solve_check.h"
#include "transport/ssh.h"

static void asking(void *data, size_t n)
{
	info_msg(data, "check: asking %zu host%s", n, n == 1 ? "" : "s");
}

static void skipped(void *data, const char *host, const char *why)
{
	const struct dp_ctx *ctx = data;
	if (ctx->verbosity >= 0)
		warning_msg("skipping '%s': %s", host, why);
}

int solve_checked(const struct dp_ctx *ctx, const struct solve_request *req,
		  struct solve_result *res, void **keep)
{
	struct dp_error err = { 0 };
	struct ssh_ctx sc;
	cmd_ssh_ctx(ctx, &sc);
	struct solve_check_hooks hooks = { .asking = asking, .skipped = skipped, .data = (void *)ctx };
	if (solve_check(ctx->inv, req, &sc, &hooks, res, keep, &err) < 0)
		return report_error(&err);
	return 0;
}

void solve_checked_free(void *keep)
{
	solve_check_free(keep);
}
