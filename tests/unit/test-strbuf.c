/* SPDX-License-Identifier: MIT */
#include "base/strbuf.h"
#include "unit.h"

int main(void)
{
	struct strbuf sb = STRBUF_INIT;
	CHECK_STR(sb.buf, "");
	strbuf_adds(&sb, "abc");
	strbuf_addch(&sb, '-');
	strbuf_addf(&sb, "%d/%s", 42, "x");
	CHECK_STR(sb.buf, "abc-42/x");
	CHECK_INT(sb.len, 8);
	for (int i = 0; i < 1000; i++)
		strbuf_adds(&sb, "0123456789");
	CHECK_INT(sb.len, 10008);
	CHECK(sb.buf[sb.len] == '\0');
	strbuf_reset(&sb);
	CHECK_STR(sb.buf, "");
	strbuf_add(&sb, "a\0b", 3);
	CHECK_INT(sb.len, 3);
	char *d = strbuf_detach(&sb);
	CHECK(memcmp(d, "a\0b", 4) == 0);
	CHECK_STR(sb.buf, "");
	free(d);
	strbuf_release(&sb);

	char **v = NULL;
	strv_add(&v, "one");
	strv_add(&v, "two");
	CHECK_INT(strv_len(v), 2);
	CHECK(strv_contains(v, "two"));
	CHECK(!strv_contains(v, "three"));
	strv_free(v);

	char b[32];
	format_bytes(b, sizeof(b), 0);
	CHECK_STR(b, "0 B");
	format_bytes(b, sizeof(b), 1023);
	CHECK_STR(b, "1023 B");
	format_bytes(b, sizeof(b), 1024);
	CHECK_STR(b, "1.0 KiB");
	format_bytes(b, sizeof(b), 12.3 * 1024 * 1024);
	CHECK_STR(b, "12.3 MiB");
	format_bytes(b, sizeof(b), 3.0 * 1024 * 1024 * 1024 * 1024 * 1024);
	CHECK_STR(b, "3072.0 TiB");
	double t0 = monotonic_seconds(), t1 = monotonic_seconds();
	CHECK(t0 > 0 && t1 >= t0);

	long n;
	CHECK(parse_long("42", 0, 100, &n) && n == 42);
	CHECK(!parse_long("42x", 0, 100, &n));
	CHECK(!parse_long("", 0, 100, &n));
	CHECK(!parse_long("101", 0, 100, &n));
	CHECK(!parse_long("99999999999999999999999", 0, 100, &n));

	const char *words[] = { "partitions", "partition_cpu", "account" };
	CHECK_STR(suggest_word("partiton", words, 3), "partitions");
	CHECK(suggest_word("zzzzzz", words, 3) == NULL);
	return unit_done();
}
