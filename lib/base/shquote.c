/* SPDX-License-Identifier: MIT */
#include "base/shquote.h"

void sh_quote(struct strbuf *sb, const char *s)
{
	strbuf_addch(sb, '\'');
	for (; *s; s++) {
		if (*s == '\'')
			strbuf_adds(sb, "'\\''");
		else
			strbuf_addch(sb, *s);
	}
	strbuf_addch(sb, '\'');
}

void sh_quote_argv(struct strbuf *sb, char *const *argv)
{
	for (size_t i = 0; argv && argv[i]; i++) {
		if (i)
			strbuf_addch(sb, ' ');
		sh_quote(sb, argv[i]);
	}
}

bool sh_is_name(const char *s)
{
	if (!s || !*s || !((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || *s == '_'))
		return false;
	for (s++; *s; s++)
		if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_'))
			return false;
	return true;
}
