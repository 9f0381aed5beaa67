/* SPDX-License-Identifier: MIT */
/*
 * solve --check (and submit --solve --check): the offline solver first, then every
 * host that fits on paper is asked what it has free now, all at once (a thread per
 * ssh destination, one SSH exec each, BatchMode, bounded time), and the solver runs
 * again with the answers (lib/solver.h). Inventory entries that share an ssh
 * destination and type share one answer.
 */
#include <stdio.h>

#include "dispatch.h"
#include "base/fanout.h"
#include "host_facts.h"
#include "inventory/inventory.h"
#include "solver.h"
#include "transport/ssh.h"

#define CHECK_CONNECT_TIMEOUT 10
#define CHECK_EXEC_TIMEOUT 30
#define CHECK_FANOUT 16

struct asked {                  /* one ssh destination and what to ask it */
	const char *ssh;
	enum host_facts_ask ask;
	const char *lock_dir;           /* the host's GPU lock directory, NULL: default */
	struct host_facts facts;
	bool ok;
	char *note;
};

struct check_state {
	struct solve_live *live;
	size_t nlive;
	struct asked *asked;
	size_t nasked;
	const struct ssh_ctx *sc;
};

static void ask_one(const struct ssh_ctx *sc, struct asked *a)
{
	struct dp_error err = { 0 };
	_cleanup_ssh_session_ struct ssh_session *s = NULL;
	if (ssh_session_open(sc, a->ssh, &s, &err) < 0 ||
	    host_facts_fetch_at(s, a->ask, a->lock_dir, CHECK_EXEC_TIMEOUT, &a->facts, &err) < 0) {
		a->note = xstrdup(err.msg);
		return;
	}
	a->ok = true;
}

static void ask_nth(void *data, size_t i)
{
	struct check_state *st = data;
	ask_one(st->sc, &st->asked[i]);
}

static size_t asked_index(struct check_state *st, const struct inv_host *h)
{
	enum host_facts_ask ask = h->type == INV_HOST_SLURM ? HOST_FACTS_SLURM : HOST_FACTS_GPUS;
	for (size_t i = 0; i < st->nasked; i++)
		if (streq(st->asked[i].ssh, h->ssh) && st->asked[i].ask == ask)
			return i;
	st->asked = xrealloc(st->asked, (st->nasked + 1) * sizeof(*st->asked));
	st->asked[st->nasked] = (struct asked){ .ssh = h->ssh, .ask = ask, .lock_dir = h->gpu_lock_dir };
	return st->nasked++;
}

static void ask_all(const struct dp_ctx *ctx, struct check_state *st)
{
	struct ssh_ctx sc;
	cmd_ssh_ctx(ctx, &sc);
	sc.batch_mode = true;
	sc.prompt = NULL;
	sc.connect_timeout = CHECK_CONNECT_TIMEOUT;
	sc.attempts = 1;
	st->sc = &sc;
	fanout_run(st->nasked, CHECK_FANOUT, 0, ask_nth, st);
}

static void state_free(struct check_state *st)
{
	for (size_t i = 0; i < st->nasked; i++) {
		host_facts_release(&st->asked[i].facts);
		free(st->asked[i].note);
	}
	free(st->asked);
	free(st->live);
	free(st);
}

int solve_checked(const struct dp_ctx *ctx, const struct solve_request *req,
		  struct solve_result *res, void **keep)
{
	struct dp_error err = { 0 };
	struct solve_request offline = *req;
	offline.check = false;
	*keep = NULL;
	if (solve(ctx->inv, &offline, res, &err) < 0)
		return report_error(&err);

	struct check_state *st = xcalloc(1, sizeof(*st));
	st->live = xcalloc(res->nverdicts + 1, sizeof(*st->live));
	size_t *which = xcalloc(res->nverdicts + 1, sizeof(*which));
	for (size_t i = 0; i < res->nverdicts; i++) {
		if (!res->verdicts[i].fits)
			continue;
		which[st->nlive] = asked_index(st, res->verdicts[i].host);
		st->live[st->nlive++].host = res->verdicts[i].host->name;
	}
	solve_result_release(res);

	info_msg(ctx, "check: asking %zu host%s", st->nasked, st->nasked == 1 ? "" : "s");
	ask_all(ctx, st);
	for (size_t i = 0; i < st->nlive; i++) {
		struct asked *a = &st->asked[which[i]];
		st->live[i].facts = a->ok ? &a->facts : NULL;
		st->live[i].note = a->note;
		if (!a->ok && ctx->verbosity >= 0)
			warning_msg("skipping '%s': %s", st->live[i].host, a->note);
	}
	free(which);

	struct solve_request live = *req;
	live.check = true;
	live.live = st->live;
	live.nlive = st->nlive;
	if (solve(ctx->inv, &live, res, &err) < 0) {
		state_free(st);
		return report_error(&err);
	}
	*keep = st;
	return 0;
}

void solve_checked_free(void *keep)
{
	if (keep)
		state_free(keep);
}
