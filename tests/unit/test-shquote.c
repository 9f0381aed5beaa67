/* SPDX-License-Identifier: MIT */
/* Quoting is checked by a real shell: each value, quoted, must come back byte for byte. */
#include <stdio.h>
#include <stdlib.h>

#include "base/shquote.h"
#include "unit.h"

static char *shell_roundtrip(const char *value)
{
	struct strbuf cmd = STRBUF_INIT, q = STRBUF_INIT;
	sh_quote(&q, value);
	strbuf_adds(&cmd, "printf '%s' ");
	strbuf_adds(&cmd, q.buf);
	FILE *p = popen(cmd.buf, "r");
	struct strbuf out = STRBUF_INIT;
	char buf[256];
	size_t n;
	while (p && (n = fread(buf, 1, sizeof(buf), p)) > 0)
		strbuf_add(&out, buf, n);
	if (p)
		pclose(p);
	strbuf_release(&cmd);
	strbuf_release(&q);
	return strbuf_detach(&out);
}

int main(void)
{
	const char *values[] = {
		"plain", "with space", "it's", "'", "''", "\"double\"", "$HOME", "${x:-y}",
		"`id`", "$(id)", "back\\slash", "new\nline", "tab\there", "*?[a]", "~root",
		"-n", "héllo wörld ✓", "a;b|c&d>e<f", "!bang", "",
	};
	for (size_t i = 0; i < ARRAY_SIZE(values); i++) {
		char *got = shell_roundtrip(values[i]);
		CHECK_STR(got, values[i]);
		free(got);
	}
	struct strbuf sb = STRBUF_INIT;
	sh_quote(&sb, "it's");
	CHECK_STR(sb.buf, "'it'\\''s'");
	strbuf_reset(&sb);
	char *argv[] = { "echo", "a b", NULL };
	sh_quote_argv(&sb, argv);
	CHECK_STR(sb.buf, "'echo' 'a b'");
	strbuf_release(&sb);
	CHECK(sh_is_name("FOO_1"));
	CHECK(sh_is_name("_x"));
	CHECK(!sh_is_name("1x"));
	CHECK(!sh_is_name("a-b"));
	CHECK(!sh_is_name(""));
	return unit_done();
}
