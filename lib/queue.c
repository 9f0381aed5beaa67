/* SPDX-License-Identifier: MIT */
/* The queue of one host through its backend: lib/queue.h. */
#include "queue.h"

#include "ledger.h"
#include "sched/sched.h"

int queue_ask(const struct ssh_ctx *sc, const struct inventory *inv, const char *host,
	      const struct slurm_queue_filter *f, enum slurm_queue_format fmt,
	      struct queue_host *a, struct dp_error *err)
{
	_cleanup_strbuf_ struct strbuf cmd = STRBUF_INIT, out = STRBUF_INIT;
	_cleanup_free_ char *eor = ledger_new_token();
	const struct inv_host *ih = inv ? inventory_host(inv, host) : NULL;
	const struct sched_ops *s = sched_for(ih, 0);
	a->host = host;
	a->errout = (struct strbuf)STRBUF_INIT;
	s->queue_command(&cmd, ih, f, fmt, eor);
	int status;
	_cleanup_ssh_session_ struct ssh_session *ss = NULL;
	if (ssh_session_open(sc, inventory_ssh_destination(inv, host), &ss, err) < 0 ||
	    ssh_exec_capture(ss, cmd.buf, NULL, &out, &a->errout, &status, err) < 0) {
		a->error = xstrdup(err->msg);
		return -1;
	}
	a->ran = true;
	if (s->queue_parse(out.buf, f, eor, &a->q, err) < 0) {
		a->error = xstrdup(err->msg);
		return -1;
	}
	if (a->q.squeue_status != 0) {
		dp_err(err, DPE_FAIL, "squeue failed (exit status %d)", a->q.squeue_status);
		a->error = xstrdup(err->msg);
		return -1;
	}
	a->ok = true;
	struct dp_error perr = { 0 };
	if (s->queue_pending &&
	    s->queue_pending(ss, &a->q, &a->pending, &a->npending, &perr) < 0)
		a->pending_error = xstrdup(perr.msg);
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
