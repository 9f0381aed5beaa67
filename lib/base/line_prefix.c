/* SPDX-License-Identifier: MIT */
#include "base/line_prefix.h"

static void emit(struct line_prefix *lp, const char *line, size_t len, struct strbuf *out)
{
	strbuf_adds(out, lp->prefix);
	strbuf_adds(out, ": ");
	strbuf_add(out, lp->partial.buf, lp->partial.len);
	strbuf_add(out, line, len);
	strbuf_addch(out, '\n');
	strbuf_reset(&lp->partial);
}

void line_prefix_feed(struct line_prefix *lp, const char *buf, size_t len, struct strbuf *out)
{
	while (len) {
		const char *nl = memchr(buf, '\n', len);
		size_t n = nl ? (size_t)(nl - buf) : len;
		if (lp->partial.len + n > LINE_PREFIX_MAX_LINE) {
			size_t room = LINE_PREFIX_MAX_LINE - lp->partial.len;
			emit(lp, buf, room, out);
			buf += room;
			len -= room;
			continue;
		}
		if (!nl) {
			strbuf_add(&lp->partial, buf, n);
			return;
		}
		emit(lp, buf, n, out);
		buf += n + 1;
		len -= n + 1;
	}
}

void line_prefix_finish(struct line_prefix *lp, struct strbuf *out)
{
	if (lp->partial.len)
		emit(lp, "", 0, out);
	strbuf_release(&lp->partial);
}
