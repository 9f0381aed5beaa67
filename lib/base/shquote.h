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

/* True when s is a valid shell variable name ([A-Za-z_][A-Za-z0-9_]*). */
bool sh_is_name(const char *s);

#endif
