/* SPDX-License-Identifier: MIT */
/*
 * The one way a user string reaches a shell. Every piece of shell text that carries
 * something the user gave (env values, commands, paths, names) goes through here.
 */
#ifndef DISPATCH_SHQUOTE_H
#define DISPATCH_SHQUOTE_H

#include "base/strbuf.h"

/* Append s as one POSIX shell word: 'single quoted', with ' written as '\''.
 * Any bytes survive (spaces, quotes, $, backticks, newlines, non-ASCII). */
void sh_quote(struct strbuf *sb, const char *s);

/* Append argv as words separated by spaces, each quoted. */
void sh_quote_argv(struct strbuf *sb, char *const *argv);

/* The shells a server may hand a command to: sshd runs the user's login shell as
 * `$SHELL -c TEXT`, and that shell may be sh, bash, dash, zsh, ksh/mksh, tcsh/csh or
 * fish, which read quotes, newlines, `$`, `!`, `=word` and backslashes each their own
 * way. What they all read alike: letters, digits, the characters of SH_ANY_PLAIN, and
 * a backslash before any other printable ASCII character (punctuation only: fish
 * reads \e, \x41 or \101 as escapes), words apart by spaces. */
#define SH_ANY_PLAIN "/._-+,:"

/* Append s as one word in that form. Returns -1 (and appends nothing) when s holds a
 * byte no such word can carry: a control character, a newline, or a non-ASCII byte. */
int sh_any_word(struct strbuf *sb, const char *s);

/* Append the text that makes any of those shells run script with /bin/sh: `exec
 * /bin/sh -c DECODER sh CHUNK...`, the script base64-encoded in words of at most
 * SH_ANY_CHUNK characters (csh refuses a word over 8 KiB) that DECODER joins, decodes
 * (base64 -d) and evals, with no positional parameters. Every character is one that
 * sh_any_word writes. The result is about 4/3 of the script plus some 200 bytes; the
 * server must fit it in one argument (Linux: 128 KiB, MAX_ARG_STRLEN). */
#define SH_ANY_CHUNK 4096
void sh_any_command(struct strbuf *sb, const char *script);

/* Append sh code that execs the user's login shell ($SHELL, else /bin/sh) on text
 * (its -c command) as a login shell, whatever its family: `-l -c` for sh, bash, dash,
 * zsh, ksh, mksh and fish; csh and tcsh refuse -l with -c, so they get `-c` (which
 * reads /etc/csh.cshrc and ~/.tcshrc or ~/.cshrc) with text behind `source` of
 * /etc/csh.login and ~/.login where they exist, as a login shell reads them. */
void sh_login_exec(struct strbuf *sb, const char *text);

/* Append the sh script that runs command in the user's login environment: command is
 * a /bin/sh script, or with user_shell text for the login shell itself (as ssh's
 * command line is). The login shell starts as sh_login_exec starts it and either reads
 * command itself (user_shell) or execs /bin/sh on it, the command carried in the
 * environment variable DISPATCH_SH (unset before it runs), which every shell passes on
 * byte for byte. */
void sh_login_script(struct strbuf *sb, const char *command, bool user_shell);

/* True when s is a valid shell variable name ([A-Za-z_][A-Za-z0-9_]*). */
bool sh_is_name(const char *s);

#endif
