/* SPDX-License-Identifier: MIT */
/*
 * solve --check (and submit --solve --check): the offline solver first, then every
 * host that fits on paper is asked what it has free now, all at once (a thread per
 * ssh destination, one SSH exec each, BatchMode, bounded time), and the solver runs
 * again with the answers (solver.h). Inventory entries that share an ssh destination
 * and type share one answer.
 */
#ifndef DISPATCH_SOLVE_CHECK_H
#define DISPATCH_SOLVE_CHECK_H

#include <stddef.h>

#include "base/error.h"

struct inventory;
struct solve_request;
struct solve_result;
struct ssh_ctx;

struct solve_check_hooks {
	/* before the hosts are asked: how many ssh destinations (may be NULL) */
	void (*asking)(void *data, size_t n);
	/* after: a host that fits on paper but could not be asked, and why (may be NULL) */
	void (*skipped)(void *data, const char *host, const char *why);
	void *data;
};

/* The checked verdicts into res. sc: how to connect (copied; asked in batch mode,
 * no prompts, one attempt, 10 s to connect, 30 s to answer). res points into *keep:
 * free it with solve_check_free after solve_result_release. 0, or -1 (err: the
 * solver's, as solve()). */
int solve_check(const struct inventory *inv, const struct solve_request *req,
		const struct ssh_ctx *sc, const struct solve_check_hooks *hooks,
		struct solve_result *res, void **keep, struct dp_error *err);
void solve_check_free(void *keep);

#endif
