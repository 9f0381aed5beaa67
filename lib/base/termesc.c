/* SPDX-License-Identifier: MIT */
#include <string.h>

#include "base/termesc.h"
#include "base/strbuf.h"
#include "base/util.h"

/* The length of the UTF-8 sequence at p (at most n bytes), 0 when it is not one or
 * when it encodes a C1 control character (U+0080 to U+009F). */
static size_t utf8_len(const unsigned char *p, size_t n)
{
	size_t len = p[0] >= 0xf0 && p[0] <= 0xf4 ? 4 : p[0] >= 0xe0 ? 3 : p[0] >= 0xc2 ? 2 : 0;
	if (!len || len > n)
		return 0;
	for (size_t i = 1; i < len; i++)
		if ((p[i] & 0xc0) != 0x80)
			return 0;
	if (len == 2 && p[0] == 0xc2 && p[1] < 0xa0)
		return 0;               /* C1 */
	if (len == 3 && ((p[0] == 0xe0 && p[1] < 0xa0) || (p[0] == 0xed && p[1] >= 0xa0)))
		return 0;               /* overlong, or a UTF-16 surrogate */
	if (len == 4 && ((p[0] == 0xf0 && p[1] < 0x90) || (p[0] == 0xf4 && p[1] >= 0x90)))
		return 0;               /* overlong, or past U+10FFFF */
	return len;
}

void strbuf_add_escaped(struct strbuf *out, const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	struct strbuf sb = STRBUF_INIT;
	for (size_t i = 0; i < len;) {
		unsigned char c = p[i];
		size_t u = c >= 0x80 ? utf8_len(p + i, len - i) : 0;
		if (u) {
			strbuf_add(&sb, s + i, u);
			i += u;
			continue;
		}
		switch (c) {
		case '\\': strbuf_adds(&sb, "\\\\"); break;
		case '\n': strbuf_adds(&sb, "\\n"); break;
		case '\t': strbuf_adds(&sb, "\\t"); break;
		case '\r': strbuf_adds(&sb, "\\r"); break;
		case 033: strbuf_adds(&sb, "\\e"); break;
		default:
			if (c < 0x20 || c >= 0x7f)
				strbuf_addf(&sb, "\\x%02x", c);
			else
				strbuf_add(&sb, s + i, 1);
		}
		i++;
	}
	strbuf_add(out, sb.buf ? sb.buf : "", sb.len);
	strbuf_release(&sb);
}

char *term_escape(const char *s, size_t len)
{
	struct strbuf sb = STRBUF_INIT;
	strbuf_adds(&sb, "");
	strbuf_add_escaped(&sb, s, len);
	return strbuf_detach(&sb);
}

char *printable(const char *s)
{
	return term_escape(s ? s : "", s ? strlen(s) : 0);
}

void strbuf_add_printable(struct strbuf *sb, const char *s)
{
	if (s)
		strbuf_add_escaped(sb, s, strlen(s));
}
