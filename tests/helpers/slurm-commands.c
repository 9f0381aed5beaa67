/* SPDX-License-Identifier: MIT */
/*
 * Test helper: prints the remote shell command dispatch runs for one SLURM query, as
 * lib/ builds it, so that tests/unit/data/slurm/capture can run exactly that command
 * on a test cluster (dispatch run -H hpc) and store what SLURM answers:
 *
 *   slurm-commands probe                 hosts show / discover (scontrol sections)
 *   slurm-commands status ID...          status (squeue, then sacct)
 *   slurm-commands squeue ID...          wait's squeue half
 *   slurm-commands sacct ID...           wait's sacct half
 *   slurm-commands queue json|text [EOR] dispatch queue -t all
 *   slurm-commands paths ID              logs (scontrol show job)
 *   slurm-commands pending [--limits] ID...  why pending jobs wait (status, queue)
 *   slurm-commands end ID... [-- UID... [-- NODES...]]
 *                                        how failed jobs ended (steps, cancellers,
 *                                        NODE_FAIL jobs' nodes)
 */
#include <stdio.h>
#include <string.h>

#include "host_facts.h"
#include "sched/slurm/slurm.h"
#include "sched/slurm/slurm_end.h"
#include "sched/slurm/slurm_pending.h"
#include "sched/slurm/slurm_queue.h"

int main(int argc, char **argv)
{
	struct strbuf sb = STRBUF_INIT;
	const char *what = argc > 1 ? argv[1] : "";
	if (!strcmp(what, "probe")) {
		host_facts_command(&sb, HOST_FACTS_SLURM);
	} else if (!strcmp(what, "status") && argc > 2) {
		slurm_status_command(&sb, argv + 2);
	} else if (!strcmp(what, "squeue") && argc > 2) {
		slurm_squeue_command(&sb, argv + 2);
	} else if (!strcmp(what, "sacct") && argc > 2) {
		slurm_sacct_command(&sb, argv + 2);
	} else if (!strcmp(what, "queue") && argc > 2) {
		struct slurm_queue_filter f = { .states = "all" };
		slurm_queue_command(&sb, &f, !strcmp(argv[2], "json") ? SLURM_QUEUE_JSON : SLURM_QUEUE_TEXT,
				    argc > 3 ? argv[3] : NULL);
	} else if (!strcmp(what, "paths") && argc == 3) {
		slurm_job_paths_command(&sb, argv[2]);
	} else if (!strcmp(what, "end") && argc > 2) {
		/* ID... [-- UID... [-- NODES...]]: each "--" ends the list before it */
		char **lists[3] = { argv + 2, NULL, NULL };
		for (int i = 2, k = 0; i < argc && k < 2; i++) {
			if (strcmp(argv[i], "--"))
				continue;
			argv[i] = NULL;
			lists[++k] = argv + i + 1;
		}
		slurm_end_command(&sb, lists[0], lists[1], lists[2]);
	} else if (!strcmp(what, "pending") && argc > 2) {
		bool limits = !strcmp(argv[2], "--limits");
		slurm_pending_command(&sb, argv + 2 + limits, limits);
	} else {
		fprintf(stderr, "usage: slurm-commands probe | status|squeue|sacct ID... | "
				"queue json|text [EOR] | paths ID | pending [--limits] ID... | "
				"end ID... [-- UID... [-- NODES...]]\n");
		return 2;
	}
	fputs(sb.buf ? sb.buf : "", stdout);
	strbuf_release(&sb);
	return ferror(stdout) || fflush(stdout) ? 1 : 0;
}
