/* SPDX-License-Identifier: MIT */
/* Quoting is checked by a real shell: each value, quoted, must come back byte for byte. */
#include <ctype.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>

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

/* The login shells of every family, where this machine has them (tests/install-deps
 * installs them all). */
static const char *const shells[] = {
	"/bin/sh", "/bin/bash", "/bin/dash", "/usr/bin/zsh", "/bin/mksh",
	"/usr/bin/tcsh", "/bin/csh", "/usr/bin/fish",
};

/* Whether text holds only what every shell reads alike: letters, digits,
 * SH_ANY_PLAIN, spaces between words, a backslash before punctuation (never before a
 * letter or digit: fish reads \x41, \101, \e as escapes), and = inside a word (base64's
 * padding; zsh expands =word at a word's start). */
static bool only_any_safe(const char *text)
{
	for (const char *p = text; *p; p++) {
		char c = *p;
		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		    strchr(SH_ANY_PLAIN, c) || (c == ' ' && p[1] != ' '))
			continue;
		if (c == '=' && p > text && p[-1] != ' ')
			continue;
		if (c == '\\' && p[1] > ' ' && p[1] <= '~' && !isalnum((unsigned char)p[1])) {
			p++;
			continue;
		}
		if (c == '\\' && p[1] == ' ') {
			p++;
			continue;
		}
		/* (the text on one line: a TAP comment that a newline would break) */
		printf("# unsafe character %d at %zu of \"", c, (size_t)(p - text));
		for (const char *q = text; *q && q - text < 80; q++)
			printf(*q == '\n' ? "\\n" : "%c", *q);
		printf("\"\n");
		return false;
	}
	return true;
}

/* Run `shell -c text` as sshd runs a command (argv, no shell in between), with HOME
 * and SHELL set; stdout and the exit status as "...[N]". */
static char *as_sshd(const char *shell, const char *text, const char *home)
{
	int fds[2];
	if (pipe(fds) < 0)
		return xstrdup("pipe failed");
	pid_t pid = fork();
	if (pid == 0) {
		dup2(fds[1], 1);
		close(fds[0]);
		close(fds[1]);
		int null = open("/dev/null", O_RDWR);
		dup2(null, 0);
		setenv("SHELL", shell, 1);
		if (home)
			setenv("HOME", home, 1);
		execl(shell, shell, "-c", text, (char *)NULL);
		_exit(126);
	}
	close(fds[1]);
	struct strbuf out = STRBUF_INIT;
	char buf[4096];
	ssize_t n;
	while ((n = read(fds[0], buf, sizeof(buf))) > 0)
		strbuf_add(&out, buf, (size_t)n);
	close(fds[0]);
	int st;
	waitpid(pid, &st, 0);
	strbuf_addf(&out, "[%d]", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	return strbuf_detach(&out);
}

static void test_any_word(void)
{
	struct strbuf sb = STRBUF_INIT;
	CHECK_INT(sh_any_word(&sb, "a b/c.d_e-f+g,h:i"), 0);
	CHECK_STR(sb.buf, "a\\ b/c.d_e-f+g,h:i");
	strbuf_reset(&sb);
	CHECK_INT(sh_any_word(&sb, "'\"$`\\!=~%#*?[]{}()<>|&;^@"), 0);
	CHECK_STR(sb.buf, "\\'\\\"\\$\\`\\\\\\!\\=\\~\\%\\#\\*\\?\\[\\]\\{\\}\\(\\)\\<\\>\\|\\&\\;\\^\\@");
	CHECK(only_any_safe(sb.buf));
	/* what no such word carries: nothing is appended */
	strbuf_reset(&sb);
	CHECK_INT(sh_any_word(&sb, "a\nb"), -1);
	CHECK_INT(sh_any_word(&sb, "tab\there"), -1);
	CHECK_INT(sh_any_word(&sb, "h\xc3\xa9"), -1);
	CHECK_INT(sh_any_word(&sb, "del\x7f"), -1);
	CHECK_INT((int)sb.len, 0);
	CHECK(!only_any_safe("a\\x41"));
	CHECK(!only_any_safe("=cmd"));
	CHECK(!only_any_safe("it's"));
	CHECK(!only_any_safe("a\nb"));
	strbuf_release(&sb);
}

/* Each printable ASCII character, escaped, comes back from every shell as itself. */
static void test_any_word_shells(void)
{
	struct strbuf all = STRBUF_INIT, text = STRBUF_INIT;
	for (int c = ' '; c <= '~'; c++)
		strbuf_addch(&all, (char)c);
	strbuf_adds(&text, "exec /bin/sh -c ");
	sh_any_word(&text, "printf \"[%s]\" \"$@\"");
	strbuf_adds(&text, " sh ");
	sh_any_word(&text, all.buf);
	strbuf_adds(&text, " a=x ");
	sh_any_word(&text, "=y");
	struct strbuf want = STRBUF_INIT;
	strbuf_addf(&want, "[%s][a=x][=y][0]", all.buf);
	for (size_t i = 0; i < ARRAY_SIZE(shells); i++) {
		if (access(shells[i], X_OK) != 0) {
			printf("# skip %s: not installed\n", shells[i]);
			continue;
		}
		char *got = as_sshd(shells[i], text.buf, NULL);
		printf("# %s\n", shells[i]);
		CHECK_STR(got, want.buf);
		free(got);
	}
	strbuf_release(&all);
	strbuf_release(&text);
	strbuf_release(&want);
}

/* A script with everything that broke a login shell (newlines, nested quotes, $, `,
 * backslashes, !, non-ASCII), and one near the size limit, run through every shell. */
static void test_any_command(void)
{
	const char *script =
		"printf '%s|' \"it's\" 'a\"b' '$HOME' \"`echo back`\" 'x\\ny' '!1' 'h\xc3\xa9'\n"
		"if [ \"$#\" = 0 ]; then echo no-args; fi\n"
		"echo \"$0\"\n"
		"exit 7\n";
	const char *want = "it's|a\"b|$HOME|back|x\\ny|!1|h\xc3\xa9|no-args\nsh\n[7]";
	struct strbuf big = STRBUF_INIT;
	strbuf_adds(&big, "cat <<'EOF' | wc -c\n");
	while (big.len < 90 * 1024)
		strbuf_adds(&big, "0123456789 'quoted' \"double\" $not \\back\n");
	strbuf_adds(&big, "EOF\n");
	_cleanup_free_ char *big_want = xasprintf("%zu\n[0]", big.len - strlen("cat <<'EOF' | wc -c\n") - 4);
	struct strbuf text = STRBUF_INIT, bigtext = STRBUF_INIT;
	sh_any_command(&text, script);
	sh_any_command(&bigtext, big.buf);
	CHECK(only_any_safe(text.buf));
	CHECK(only_any_safe(bigtext.buf));
	CHECK(bigtext.len < 128 * 1024);
	printf("# a %zu-byte script is sent as %zu bytes\n", big.len, bigtext.len);
	for (size_t i = 0; i < ARRAY_SIZE(shells); i++) {
		if (access(shells[i], X_OK) != 0)
			continue;
		printf("# %s\n", shells[i]);
		char *got = as_sshd(shells[i], text.buf, NULL);
		CHECK_STR(got, want);
		free(got);
		got = as_sshd(shells[i], bigtext.buf, NULL);
		char *p = got;
		while (*p == ' ')
			p++;
		CHECK_STR(p, big_want);
		free(got);
	}
	strbuf_release(&big);
	strbuf_release(&text);
	strbuf_release(&bigtext);
}

/* ssh_login_command's text (lib/transport/ssh.c): the login script behind the decoder. */
static void ssh_login_command_for_test(struct strbuf *sb, const char *command, bool user_shell)
{
	struct strbuf script = STRBUF_INIT;
	sh_login_script(&script, command, user_shell);
	sh_any_command(sb, script.buf);
	strbuf_release(&script);
}

static void write_file(const char *dir, const char *name, const char *text)
{
	_cleanup_free_ char *path = xasprintf("%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

/* The login environment, for each family: ~/.profile (sh, bash, dash, mksh),
 * ~/.zprofile (zsh), ~/.login (csh, tcsh, which refuse -l with -c), fish's config
 * when fish is a login shell. A /bin/sh script and a command for the user's shell
 * both see what it set; DISPATCH_SH does not reach the command. */
static void test_login_script(void)
{
	char tmpl[] = "/tmp/test-shquote.XXXXXX";
	char *home = mkdtemp(tmpl);
	CHECK(home != NULL);
	if (!home)
		return;
	_cleanup_free_ char *fish = xasprintf("%s/.config/fish", home);
	_cleanup_free_ char *config = xasprintf("%s/.config", home);
	mkdir(config, 0700);
	mkdir(fish, 0700);
	write_file(home, ".profile", "DT_LOGIN=profile; export DT_LOGIN\n");
	write_file(home, ".zprofile", "export DT_LOGIN=zprofile\n");
	write_file(home, ".login", "setenv DT_LOGIN login\n");
	write_file(home, ".config/fish/config.fish",
		   "if status is-login\n\tset -gx DT_LOGIN fish-login\nend\n");
	static const struct { const char *shell, *login; } cases[] = {
		{ "/bin/sh", "profile" }, { "/bin/bash", "profile" }, { "/bin/dash", "profile" },
		{ "/bin/mksh", "profile" }, { "/usr/bin/zsh", "zprofile" },
		{ "/usr/bin/tcsh", "login" }, { "/bin/csh", "login" },
		{ "/usr/bin/fish", "fish-login" },
	};
	const char *script = "printf '%s|%s|' \"$DT_LOGIN\" \"${DISPATCH_SH-unset}\"\n"
			     "case $- in *l*) ;; esac; echo 'two\nlines'; exit 5";
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		if (access(cases[i].shell, X_OK) != 0)
			continue;
		printf("# %s\n", cases[i].shell);
		struct strbuf text = STRBUF_INIT;
		ssh_login_command_for_test(&text, script, false);
		CHECK(only_any_safe(text.buf));
		char *got = as_sshd(cases[i].shell, text.buf, home);
		_cleanup_free_ char *want = xasprintf("%s|unset|two\nlines\n[5]", cases[i].login);
		CHECK_STR(got, want);
		free(got);
		/* for the user's own shell: a line every family reads alike */
		strbuf_reset(&text);
		ssh_login_command_for_test(&text, "echo $DT_LOGIN", true);
		CHECK(only_any_safe(text.buf));
		got = as_sshd(cases[i].shell, text.buf, home);
		free(want);
		want = xasprintf("%s\n[0]", cases[i].login);
		CHECK_STR(got, want);
		free(got);
		strbuf_release(&text);
	}
	_cleanup_free_ char *rm = xasprintf("rm -rf '%s'", home);
	CHECK_INT(system(rm), 0);
}

int main(void)
{
	test_any_word();
	test_any_word_shells();
	test_any_command();
	test_login_script();

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
