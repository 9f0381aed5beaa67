/* SPDX-License-Identifier: MIT */
#include <ctype.h>
#include <stdlib.h>

#include "base/shquote.h"
#include "base/util.h"
#include "gpu/gpu_top.h"
#include "jobs/jobshell.h"

static bool all_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return false;
	return true;
}

const char *jobshell_pick_node(const struct gpu_top_job *j, const char *want)
{
	if (!want)
		return j->n ? j->alloc[0].node : NULL;
	for (size_t i = 0; i < j->n; i++)
		if (streq(j->alloc[i].node, want))
			return j->alloc[i].node;
	if (all_digits(want) && strlen(want) < 9) {
		long k = strtol(want, NULL, 10);
		if (k >= 1 && (size_t)k <= j->n)
			return j->alloc[k - 1].node;
	}
	return NULL;
}

/* The shell, or argv's words. */
static void what_runs(struct strbuf *sb, char *const *argv)
{
	if (argv && argv[0])
		sh_quote_argv(sb, argv);
	else
		strbuf_adds(sb, "\"${SHELL:-/bin/sh}\" -l");
}

void jobshell_slurm_command(struct strbuf *sb, const char *id, const char *node, bool pty,
			    char *const *argv)
{
	strbuf_adds(sb, "exec srun --jobid=");
	sh_quote(sb, id);
	strbuf_adds(sb, " --overlap -N1 -n1 -w ");
	sh_quote(sb, node);
	strbuf_adds(sb, pty ? " --pty " : " ");
	what_runs(sb, argv);
}

void jobshell_plain_command(struct strbuf *sb, const char *id, const char *stage_dir,
			    char *const *argv)
{
	strbuf_adds(sb, "export DISPATCH_JOB_ID=");
	sh_quote(sb, id);
	strbuf_adds(sb, "\ns=");
	sh_quote(sb, stage_dir);
	strbuf_adds(sb,
		"\nif w=$(cat -- \"$s/workdir\" 2>/dev/null) && [ -n \"$w\" ]; then\n"
		"\tcd -- \"$w\" || exit 1\n"
		"else\n"
		"\techo \"dispatch: the job recorded no work dir ($s/workdir): starting in $PWD\" >&2\n"
		"fi\n"
		"exec ");
	what_runs(sb, argv);
}
