/* SPDX-License-Identifier: MIT */
#include "base/strbuf.h"

#include <stdio.h>
#include <stdlib.h>

char strbuf_empty[1];

void strbuf_init(struct strbuf *sb)
{
	sb->buf = strbuf_empty;
	sb->len = 0;
	sb->alloc = 0;
}

void strbuf_release(struct strbuf *sb)
{
	if (sb->alloc)
		free(sb->buf);
	strbuf_init(sb);
}

char *strbuf_detach(struct strbuf *sb)
{
	char *p = sb->alloc ? sb->buf : xstrdup("");
	strbuf_init(sb);
	return p;
}

void strbuf_grow(struct strbuf *sb, size_t extra)
{
	if (sb->len + extra + 1 <= sb->alloc)
		return;
	size_t want = sb->alloc ? sb->alloc : 64;
	while (want < sb->len + extra + 1)
		want *= 2;
	if (sb->alloc) {
		sb->buf = xrealloc(sb->buf, want);
	} else {
		sb->buf = xmalloc(want);
		sb->buf[0] = '\0';
	}
	sb->alloc = want;
}

void strbuf_reset(struct strbuf *sb)
{
	sb->len = 0;
	if (sb->alloc)
		sb->buf[0] = '\0';
}

void strbuf_add(struct strbuf *sb, const void *data, size_t len)
{
	strbuf_grow(sb, len);
	memcpy(sb->buf + sb->len, data, len);
	sb->len += len;
	sb->buf[sb->len] = '\0';
}

void strbuf_adds(struct strbuf *sb, const char *s)
{
	strbuf_add(sb, s, strlen(s));
}

void strbuf_addch(struct strbuf *sb, char c)
{
	strbuf_add(sb, &c, 1);
}

void strbuf_vaddf(struct strbuf *sb, const char *fmt, va_list ap)
{
	va_list cp;
	va_copy(cp, ap);
	int n = vsnprintf(NULL, 0, fmt, cp);
	va_end(cp);
	if (n < 0)
		abort();
	strbuf_grow(sb, (size_t)n);
	vsnprintf(sb->buf + sb->len, (size_t)n + 1, fmt, ap);
	sb->len += (size_t)n;
}

void strbuf_addf(struct strbuf *sb, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	strbuf_vaddf(sb, fmt, ap);
	va_end(ap);
}

