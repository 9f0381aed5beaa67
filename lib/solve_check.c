/* SPDX-License-Identifier: MIT */
#include <stdbool.h>
#include <stdlib.h>

#include "base/fanout.h"
#include "base/util.h"
#include "host_facts.h"
#include "inventory/inventory.h"
#include "solve_check.h"
#include "solver.h"
#include "transport/ssh.h"

#define CHECK_CONNECT_TIMEOUT 10
#define CHECK_EXEC_TIMEOUT 30
#define CHECK_FANOUT 16

struct asked {                  /* one ssh destination and what to ask it */
	const char *ssh;
	enum host_facts_ask ask;
	const char *lock_dir;           /* the host's GPU lock directory, NULL: default */
	long busy_mib;                  /* its busy_gpu_memory, 0: the default */
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
	nvidia_gpus_busy_at(&a->facts.gpus, a->busy_mib);
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
	st->asked[st->nasked] = (struct asked){ .ssh = h->ssh, .ask = ask, .lock_dir = h->gpu_lock_dir,
						.busy_mib = h->busy_gpu_mib };
	return st->nasked++;
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

int solve_check(const struct inventory *inv, const struct solve_request *req,
		const struct ssh_ctx *sc, const struct solve_check_hooks *hooks,
		struct solve_result *res, void **keep, struct dp_error *err)
{
	struct solve_request offline = *req;
	offline.check = false;
	*keep = NULL;
	if (solve(inv, &offline, res, err) < 0)
		return -1;

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

	if (hooks->asking)
		hooks->asking(hooks->data, st->nasked);
	struct ssh_ctx bsc = *sc;
	bsc.batch_mode = true;
	bsc.prompt = NULL;
	bsc.connect_timeout = CHECK_CONNECT_TIMEOUT;
	bsc.attempts = 1;
	st->sc = &bsc;
	fanout_run(st->nasked, CHECK_FANOUT, 0, ask_nth, st);
	st->sc = NULL;
	for (size_t i = 0; i < st->nlive; i++) {
		struct asked *a = &st->asked[which[i]];
		st->live[i].facts = a->ok ? &a->facts : NULL;
		st->live[i].note = a->note;
		if (!a->ok && hooks->skipped)
			hooks->skipped(hooks->data, st->live[i].host, a->note);
	}
	free(which);

	struct solve_request live = *req;
	live.check = true;
	live.live = st->live;
	live.nlive = st->nlive;
	if (solve(inv, &live, res, err) < 0) {
		state_free(st);
		return -1;
	}
	*keep = st;
	return 0;
}

void solve_check_free(void *keep)
{
	if (keep)
		state_free(keep);
}
