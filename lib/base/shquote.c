/* SPDX-License-Identifier: MIT */
#include "base/shquote.h"

#include <string.h>

#include "base/base64.h"

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

static bool any_plain(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       (c && strchr(SH_ANY_PLAIN, c));
}

int sh_any_word(struct strbuf *sb, const char *s)
{
	for (const char *p = s; *p; p++)
		if (*p < ' ' || *p > '~')
			return -1;
	for (; *s; s++) {
		if (!any_plain(*s))
			strbuf_addch(sb, '\\');
		strbuf_addch(sb, *s);
	}
	return 0;
}

/* Decodes the chunks and runs the script; a host without base64 says so and exits 127
 * rather than running nothing with status 0. */
static const char any_decoder[] =
	"s=$(printf %s \"$@\" | base64 -d) || { echo \"dispatch: cannot decode the command "
	"on $(hostname): base64 -d failed\" >&2; exit 127; }; set --; eval \"$s\"";

/* Chunks start at multiples of 4 of the padded encoding, so none starts with '=',
 * which zsh would expand (=word is a command's path there). */
_Static_assert(SH_ANY_CHUNK % 4 == 0, "SH_ANY_CHUNK must be a multiple of 4");

void sh_any_command(struct strbuf *sb, const char *script)
{
	_cleanup_strbuf_ struct strbuf b64 = STRBUF_INIT;
	base64_encode(&b64, script, strlen(script), true);
	strbuf_adds(sb, "exec /bin/sh -c ");
	sh_any_word(sb, any_decoder);
	strbuf_adds(sb, " sh");
	/* base64's alphabet is letters, digits, + and /, and = only at the end: plain */
	for (size_t i = 0; i < b64.len; i += SH_ANY_CHUNK) {
		size_t n = b64.len - i < SH_ANY_CHUNK ? b64.len - i : SH_ANY_CHUNK;
		strbuf_addch(sb, ' ');
		strbuf_add(sb, b64.buf + i, n);
	}
}

void sh_login_exec(struct strbuf *sb, const char *text)
{
	_cleanup_strbuf_ struct strbuf csh = STRBUF_INIT;
	strbuf_adds(&csh, "if ( -r /etc/csh.login ) source /etc/csh.login; "
			  "if ( -r ~/.login ) source ~/.login; ");
	strbuf_adds(&csh, text);
	strbuf_adds(sb, "case ${SHELL##*/} in\n*csh) exec \"$SHELL\" -c ");
	sh_quote(sb, csh.buf);
	strbuf_adds(sb, " ;;\n*) exec \"${SHELL:-/bin/sh}\" -l -c ");
	sh_quote(sb, text);
	strbuf_adds(sb, " ;;\nesac\n");
}

/* What the login shell runs when command is a /bin/sh script: sh, which takes the
 * command out of the environment first, so that the command's own environment is the
 * login shell's. In sh_any_word's form: every login shell reads it alike. */
static const char from_env[] = "s=$DISPATCH_SH; unset DISPATCH_SH; eval \"$s\"";

void sh_login_script(struct strbuf *sb, const char *command, bool user_shell)
{
	if (user_shell) {
		sh_login_exec(sb, command);
		return;
	}
	_cleanup_strbuf_ struct strbuf text = STRBUF_INIT;
	strbuf_adds(&text, "exec /bin/sh -c ");
	sh_any_word(&text, from_env);
	strbuf_adds(sb, "DISPATCH_SH=");
	sh_quote(sb, command);
	strbuf_adds(sb, "\nexport DISPATCH_SH\n");
	sh_login_exec(sb, text.buf);
}
