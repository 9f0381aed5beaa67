/* SPDX-License-Identifier: MIT */
/* The queue of one host through its backend: lib/queue.h. */
#include "queue.h"

#include "ledger.h"
#include "sched/plain/plainjob.h"

/* Why the pending jobs wait, in one more command over ss for all of them. */
static void fetch_pending(struct ssh_session *ss, struct queue_host *a)
{
	_cleanup_strv_free_ char **ids = NULL;
	bool limits = false;
	for (size_t i = 0; i < a->q.n; i++) {
		const struct slurm_qjob *j = &a->q.jobs[i];
		if (!streq(j->state, "PENDING") || strv_contains(ids, j->id))
			continue;
		strv_add(&ids, j->id);
		limits = limits || slurm_pending_wants_limits(j->reason);
	}
	struct dp_error err = { 0 };
	if (slurm_pending_fetch(ss, ids, limits, &a->pending, &a->npending, &err) < 0)
		a->pending_error = xstrdup(err.msg);
}

int queue_ask(const struct ssh_ctx *sc, const struct inventory *inv, const char *host,
	      const struct slurm_queue_filter *f, enum slurm_queue_format fmt,
	      struct queue_host *a, struct dp_error *err)
{
	_cleanup_strbuf_ struct strbuf cmd = STRBUF_INIT, out = STRBUF_INIT;
	_cleanup_free_ char *eor = ledger_new_token();
	const struct inv_host *ih = inv ? inventory_host(inv, host) : NULL;
	bool plain = ih && ih->type == INV_HOST_PLAIN;
	a->host = host;
	a->errout = (struct strbuf)STRBUF_INIT;
	if (plain)
		plainjob_queue_command(&cmd, ih->gpu_lock_dir);
	else
		slurm_queue_command(&cmd, f, fmt, eor);
	int status;
	_cleanup_ssh_session_ struct ssh_session *ss = NULL;
	if (ssh_session_open(sc, inventory_ssh_destination(inv, host), &ss, err) < 0 ||
	    ssh_exec_capture(ss, cmd.buf, NULL, &out, &a->errout, &status, err) < 0) {
		a->error = xstrdup(err->msg);
		return -1;
	}
	a->ran = true;
	if (plain ? plainjob_parse_queue(out.buf, f, &a->q, err) < 0
		  : slurm_parse_queue(out.buf, f, eor, &a->q, err) < 0) {
		a->error = xstrdup(err->msg);
		return -1;
	}
	if (a->q.squeue_status != 0) {
		dp_err(err, DPE_FAIL, "squeue failed (exit status %d)", a->q.squeue_status);
		a->error = xstrdup(err->msg);
		return -1;
	}
	a->ok = true;
	if (!plain)
		fetch_pending(ss, a);
	return 0;
}

void queue_host_release(struct queue_host *a)
{
	slurm_queue_release(&a->q);
	slurm_pending_free(a->pending, a->npending);
	free(a->error);
	free(a->pending_error);
	strbuf_release(&a->errout);
}
