/* SPDX-License-Identifier: MIT */
#include "jobs/top.h"

#include <string.h>

#include "base/util.h"

const char *top_node_flag(const struct gpu_node *n, size_t nrows, double now, double interval)
{
	if (n->state == GPU_NODE_NO_SMI)
		return "no-nvidia-smi";
	if (gpu_node_stale(n, now, interval))
		return "stale";
	if (n->allocated > 0 && nrows == 0 &&
	    (n->state == GPU_NODE_OK || (n->state == GPU_NODE_FAILED && n->message &&
					 strstr(n->message, "No devices were found"))))
		return "no-gpus-visible";
	if (n->state == GPU_NODE_FAILED)
		return "nvidia-smi-failed";
	if (n->state == GPU_NODE_ENDED)
		return "ended";
	if (n->state == GPU_NODE_WAITING)
		return n->seen > 0 ? "starting" : "waiting";
	if (n->allocated == 0)
		return "no-gpus-allocated";
	return NULL;
}

const struct plain_top *top_node_procs(const struct top_session *s, size_t i)
{
	if (s->plain)
		return i == 0 ? s->plain : NULL;
	return s->nodeprocs ? slurm_procs_node(s->nodeprocs, i) : NULL;
}

bool top_has_procs(const struct top_session *s)
{
	return s->plain || s->nodeprocs;
}

const char *top_node_procs_how(const struct top_session *s, size_t i)
{
	return s->nodeprocs ? s->nodeprocs->how[i] : NULL;
}

size_t top_gpu_procs(const struct plain_top *p, const char *uuid, const struct top_app ***out)
{
	return plain_top_gpu_procs(p, uuid, out);
}

const struct top_proc *top_proc_of(const struct plain_top *p, long pid)
{
	return plain_top_proc(p, pid);
}

bool top_on_shown_gpu(const struct plain_top *p, long pid, const struct gpu_row **rows, size_t nr)
{
	for (size_t a = 0; a < p->napps; a++)
		for (size_t k = 0; p->apps[a].pid == pid && k < nr; k++)
			if (rows[k]->uuid && streq(rows[k]->uuid, p->apps[a].uuid))
				return true;
	return false;
}

int top_run(struct ssh_session *ss, const struct sched_ops *sched, const struct sched_job *job,
	    struct top_session *s, struct dp_error *err)
{
	s->partial = (struct strbuf)STRBUF_INIT;
	s->err = (struct strbuf)STRBUF_INIT;
	return sched->top(ss, job, s, err);
}

void top_session_release(struct top_session *s)
{
	if (s->plain) {
		plain_top_release(s->plain);
		free(s->plain);
	}
	if (s->nodeprocs) {
		slurm_procs_release(s->nodeprocs);
		free(s->nodeprocs);
	}
	gpu_top_release(&s->top);
	strbuf_release(&s->partial);
	strbuf_release(&s->err);
	free(s->end_note);
	s->plain = NULL;
	s->nodeprocs = NULL;
	s->end_note = NULL;
}
