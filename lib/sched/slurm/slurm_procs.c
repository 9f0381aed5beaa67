/* SPDX-License-Identifier: MIT */
#include "sched/slurm/slurm_procs.h"

#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "shfiles.h"

void slurm_procs_script(struct strbuf *sb, int interval)
{
	strbuf_adds(sb, shfile_sched_slurm_slurm_procs); /* slurm_procs.sh */
	strbuf_addf(sb, "while :; do P; sleep %d; done &\n", interval);
}

void slurm_procs_init(struct slurm_procs *sp, const struct gpu_top *t)
{
	size_t n = t->nnodes ? t->nnodes : 1;
	sp->n = t->nnodes;
	sp->cur = xcalloc(n, sizeof(*sp->cur));
	sp->next = xcalloc(n, sizeof(*sp->next));
	sp->ready = xcalloc(n, sizeof(bool));
	sp->open = xcalloc(n, sizeof(bool));
	sp->how = xcalloc(n, sizeof(char *));
	for (size_t i = 0; i < sp->n; i++) {
		plain_top_init(&sp->cur[i], 0);
		plain_top_init(&sp->next[i], 0);
		sp->cur[i].job_only = sp->next[i].job_only = true;
	}
}

void slurm_procs_release(struct slurm_procs *sp)
{
	for (size_t i = 0; i < sp->n; i++) {
		plain_top_release(&sp->cur[i]);
		plain_top_release(&sp->next[i]);
		free(sp->how[i]);
	}
	free(sp->cur);
	free(sp->next);
	free(sp->ready);
	free(sp->open);
	free(sp->how);
	memset(sp, 0, sizeof(*sp));
}

void slurm_procs_feed(struct slurm_procs *sp, const struct gpu_top *t, const char *line)
{
	const char *kind, *arg;
	long i = gpu_top_line_node(t, line, &kind);
	if (i < 0 || (size_t)i >= sp->n)
		return;
	if (streq(kind, "procs-begin")) {
		plain_top_reset(&sp->next[i]);
		sp->open[i] = true;
	} else if (!sp->open[i]) {
		return; /* a list begun before this session saw it */
	} else if ((arg = after_prefix(kind, "procs-end")) && (!*arg || *arg == ' ')) {
		plain_top_settle_procs(&sp->next[i]);
		struct plain_top done = sp->next[i];
		sp->next[i] = sp->cur[i];
		sp->cur[i] = done;
		free(sp->how[i]);
		sp->how[i] = xstrdup(*arg ? arg + 1 : "");
		sp->ready[i] = true;
		sp->open[i] = false;
	} else if (startswith(kind, "proc ") || startswith(kind, "app ")) {
		plain_top_feed_kind(&sp->next[i], kind);
	}
}

const struct plain_top *slurm_procs_node(const struct slurm_procs *sp, size_t i)
{
	return i < sp->n && sp->ready[i] ? &sp->cur[i] : NULL;
}
