/* SPDX-License-Identifier: MIT */
/* A tiny TAP harness for the C unit tests: CHECK* print "ok"/"not ok" per check. */
#ifndef DISPATCH_UNIT_H
#define DISPATCH_UNIT_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/strbuf.h"
#include "base/util.h"

static int unit_n, unit_failed;

static inline void unit_report(int ok, const char *file, int line, const char *what)
{
	unit_n++;
	printf("%s %d - %s:%d: %s\n", ok ? "ok" : "not ok", unit_n, file, line, what);
	if (!ok)
		unit_failed++;
}

#define CHECK(cond) unit_report(!!(cond), __FILE__, __LINE__, #cond)
#define CHECK_INT(a, b)                                                                       \
	do {                                                                                  \
		long long a_ = (a), b_ = (b);                                                 \
		unit_report(a_ == b_, __FILE__, __LINE__, #a " == " #b);                      \
		if (a_ != b_)                                                                 \
			printf("#   got %lld, want %lld\n", a_, b_);                              \
	} while (0)
#define CHECK_STR(a, b)                                                                       \
	do {                                                                                  \
		const char *a_ = (a), *b_ = (b);                                              \
		int ok_ = a_ && b_ && strcmp(a_, b_) == 0;                                    \
		unit_report(ok_, __FILE__, __LINE__, #a " == " #b);                           \
		if (!ok_)                                                                     \
			printf("#   got  \"%s\"\n#   want \"%s\"\n", a_ ? a_ : "(null)",       \
			       b_ ? b_ : "(null)");                                           \
	} while (0)
/* Substring check, for error messages. */
#define CHECK_CONTAINS(hay, needle)                                                           \
	do {                                                                                  \
		const char *h_ = (hay), *n_ = (needle);                                       \
		int ok_ = h_ && strstr(h_, n_) != NULL;                                       \
		unit_report(ok_, __FILE__, __LINE__, #hay " contains " #needle);              \
		if (!ok_)                                                                     \
			printf("#   \"%s\"\n#   does not contain \"%s\"\n", h_ ? h_ : "(null)", n_); \
	} while (0)

static inline int unit_done(void)
{
	printf("1..%d\n", unit_n);
	return unit_failed ? 1 : 0;
}

/* The directory of golden fixtures (tests/unit/data), from the environment meson sets. */
/* What a shell command printed on stdout (popen); *status its exit status (-1 when it
 * did not exit), when status is not NULL. Caller frees. */
static inline char *unit_output(const char *command, int *status)
{
	FILE *p = popen(command, "r");
	struct strbuf out = STRBUF_INIT;
	char buf[4096];
	size_t n;
	while (p && (n = fread(buf, 1, sizeof(buf), p)) > 0)
		strbuf_add(&out, buf, n);
	int st = p ? pclose(p) : -1;
	if (status)
		*status = st != -1 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	return strbuf_detach(&out);
}

static inline const char *unit_data(void)
{
	const char *d = getenv("UNIT_DATA");
	return d ? d : "tests/unit/data";
}

/* The fixture tests/unit/data/DIR/NAME, whole; a missing one ends the test. */
static inline char *unit_fixture(const char *dir, const char *name)
{
	char *path = xasprintf("%s/%s/%s", unit_data(), dir, name);
	size_t len;
	char *text = read_file(path, &len);
	if (!text) {
		printf("Bail out! cannot read %s\n", path);
		exit(1);
	}
	free(path);
	return text;
}

/* One check: "TOOL FILE" exits 0, FILE holding SCRIPT. */
static inline void unit_script_check(const char *file, int line, const char *what,
				     const char *tool, const char *script)
{
	char path[] = "/tmp/dispatch-unit-sh.XXXXXX";
	int fd = mkstemp(path);
	size_t n = strlen(script);
	int ok = fd >= 0 && write(fd, script, n) == (ssize_t)n;
	if (fd >= 0)
		close(fd);
	if (ok) {
		char *cmd = xasprintf("%s %s", tool, path);
		ok = system(cmd) == 0;
		free(cmd);
	}
	unit_report(ok, file, line, what);
	if (fd >= 0)
		unlink(path);
}

/* SCRIPT is valid sh (sh -n). */
#define CHECK_SH_N(what, script) unit_script_check(__FILE__, __LINE__, what, "sh -n", script)
/* SCRIPT passes shellcheck as bash, at every severity (its findings on stderr). */
#define CHECK_SHELLCHECK(what, script) \
	unit_script_check(__FILE__, __LINE__, what, "shellcheck -s bash >&2", script)

#endif
