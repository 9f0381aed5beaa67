/* SPDX-License-Identifier: MIT */
#include "base/base64.h"

static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

void base64_encode(struct strbuf *sb, const void *data, size_t len, bool pad)
{
	const unsigned char *p = data;
	size_t i;

	for (i = 0; i + 2 < len; i += 3) {
		unsigned v = (unsigned)p[i] << 16 | (unsigned)p[i + 1] << 8 | p[i + 2];
		strbuf_addch(sb, alphabet[v >> 18 & 63]);
		strbuf_addch(sb, alphabet[v >> 12 & 63]);
		strbuf_addch(sb, alphabet[v >> 6 & 63]);
		strbuf_addch(sb, alphabet[v & 63]);
	}
	if (i < len) {
		unsigned v = (unsigned)p[i] << 16 | (i + 1 < len ? (unsigned)p[i + 1] << 8 : 0);
		strbuf_addch(sb, alphabet[v >> 18 & 63]);
		strbuf_addch(sb, alphabet[v >> 12 & 63]);
		if (i + 1 < len)
			strbuf_addch(sb, alphabet[v >> 6 & 63]);
		else if (pad)
			strbuf_addch(sb, '=');
		if (pad)
			strbuf_addch(sb, '=');
	}
}

/* By ranges, not strchr over the alphabet: known_hosts checking decodes tens of
 * thousands of characters per connection. */
static int value_of(char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	return c == '+' ? 62 : c == '/' ? 63 : -1;
}

int base64_decode(struct strbuf *sb, const char *text, size_t len)
{
	unsigned v = 0;
	int bits = 0;
	bool padding = false;

	for (size_t i = 0; i < len; i++) {
		char c = text[i];
		if (c == ' ' || c == '\n' || c == '\r' || c == '\t')
			continue;
		if (c == '=') {
			padding = true;
			continue;
		}
		int d = value_of(c);
		if (d < 0 || padding)
			return -1;
		v = v << 6 | (unsigned)d;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			strbuf_addch(sb, (char)(v >> bits & 0xff));
		}
	}
	return bits >= 6 ? -1 : 0;
}
