/* SPDX-License-Identifier: MIT */
/*
 * The export-subst attribute as git archive applies it: every "$Format:FMT$" in a
 * file is replaced by FMT expanded for the archived commit, as git log
 * --pretty=format:FMT would. This is how version tools (setuptools-scm's and
 * hatch-vcs's .git_archival.txt) know the commit of a tree that has no .git.
 *
 * Placeholders: %H %h %T %t %P %p; %an %ae %al %ad %aD %ai %aI %as %at and the same
 * with c (committer; %aN %aE %aL as %an %ae %al: no .mailmap); %s %b %B; %d %D (ref
 * names, in git's order); %n %% %xNN; %(describe[:tags[=bool],match=P,abbrev=N]),
 * expanded once per archive as git does (later ones stay as they are). Abbreviated
 * ids are as long as git's core.abbrev=auto makes them. Anything else is left as
 * written, as git leaves a placeholder it does not know (relative dates, %f, %G?,
 * %(trailers) among them).
 */
#ifndef DISPATCH_EXPORT_SUBST_H
#define DISPATCH_EXPORT_SUBST_H

#include <git2.h>
#include <stdbool.h>

#include "base/strbuf.h"

struct export_subst {
	git_repository *repo;
	const git_commit *commit;
	/* filled on first use */
	int abbrev;                     /* 0: not computed yet */
	bool describe_done;
	bool refs_done;
	struct strbuf refs;             /* %D */
};

#define EXPORT_SUBST_INIT(r, c) { .repo = (r), .commit = (c), .refs = STRBUF_INIT }

void export_subst_release(struct export_subst *xs);

/* Appends in[0, len) to out with every $Format:...$ expanded. */
void export_subst_apply(struct export_subst *xs, const char *in, size_t len, struct strbuf *out);

#endif
