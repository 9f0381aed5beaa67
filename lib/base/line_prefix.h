/* SPDX-License-Identifier: MIT */
/*
 * Output of many hosts, line by line: "host: line". Bytes arrive in arbitrary pieces;
 * whole lines come out, each with its prefix, so that lines of different hosts never
 * mix within a line. A line longer than the cap is cut (and continued under a new
 * prefix) so memory stays bounded; the partial last line is completed at the end.
 */
#ifndef DISPATCH_LINE_PREFIX_H
#define DISPATCH_LINE_PREFIX_H

#include "base/strbuf.h"

#define LINE_PREFIX_MAX_LINE 65536

struct line_prefix {
	const char *prefix;             /* "box1", borrowed */
	struct strbuf partial;          /* the unfinished line */
};

#define LINE_PREFIX_INIT(p) { .prefix = (p), .partial = STRBUF_INIT }

/* Append to out the prefixed complete lines that buf finishes. */
void line_prefix_feed(struct line_prefix *lp, const char *buf, size_t len, struct strbuf *out);
/* Append the unfinished line, if any, with a newline; then release lp's memory. */
void line_prefix_finish(struct line_prefix *lp, struct strbuf *out);

#endif
