/* SPDX-License-Identifier: MIT */
/*
 * ssh_config_aliases(): the concrete Host names of an OpenSSH client config, for
 * `dispatch hosts` and shell completion. Only Host and Include matter here; full
 * resolution of a host is ssh_config.c's business.
 */
#include <errno.h>
#include <glob.h>
#include <pwd.h>
#include <strings.h>
#include <sys/stat.h>

#include "ssh_config.h"
#include "strbuf.h"

#define MAX_INCLUDE_DEPTH 16            /* as ssh's READCONF_MAX_DEPTH */
#define MAX_CONFIG_SIZE (4 << 20)

static const char *home_dir(void)
{
	const char *home = getenv("HOME");
	if (home && *home)
		return home;
	struct passwd *pw = getpwuid(getuid());
	return pw && pw->pw_dir ? pw->pw_dir : "/";
}

/* Split off the next word (double quotes group, as ssh's argv_split); NULL at the end.
 * A keyword also ends at '=' ("Host=name"). */
static char *next_word(char **s, bool keyword)
{
	char *p = *s;
	while (*p == ' ' || *p == '\t' || *p == '=')
		p++;
	if (!*p)
		return NULL;
	char *start = p, *out = p;
	bool quoted = false;
	for (; *p; p++) {
		if (*p == '"') {
			quoted = !quoted;
			continue;
		}
		if (!quoted && (*p == ' ' || *p == '\t' || (keyword && *p == '=')))
			break;
		*out++ = *p;
	}
	if (*p)
		p++;
	*out = '\0';
	*s = p;
	return start;
}

static bool is_pattern(const char *s)
{
	return !*s || strpbrk(s, "*?!") != NULL;
}

static int read_config(const char *path, bool must_exist, int depth, char ***aliases,
		       struct dp_error *err);

static int include(const char *arg, int depth, char ***aliases, struct dp_error *err)
{
	_cleanup_free_ char *pattern = NULL;
	if (arg[0] == '~' && (arg[1] == '/' || !arg[1]))
		pattern = xasprintf("%s%s", home_dir(), arg + 1);
	else if (arg[0] == '/')
		pattern = xstrdup(arg);
	else
		pattern = xasprintf("%s/.ssh/%s", home_dir(), arg);
	glob_t g;
	int r = glob(pattern, 0, NULL, &g);
	if (r == GLOB_NOMATCH)
		return 0;
	if (r != 0)
		return 0;       /* as ssh: an unreadable Include is not an error */
	for (size_t i = 0; i < g.gl_pathc; i++)
		if (read_config(g.gl_pathv[i], false, depth + 1, aliases, err) < 0) {
			globfree(&g);
			return -1;
		}
	globfree(&g);
	return 0;
}

static int read_config(const char *path, bool must_exist, int depth, char ***aliases,
		       struct dp_error *err)
{
	if (depth > MAX_INCLUDE_DEPTH)
		return dp_err(err, DPE_INPUT, "%s: Include nested too deeply (more than %d levels)",
			      path, MAX_INCLUDE_DEPTH);
	struct stat st;
	if (stat(path, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > MAX_CONFIG_SIZE) {
		if (!must_exist)
			return 0;
		if (errno == ENOENT)
			return dp_err(err, DPE_INPUT, "cannot read ssh config '%s': %s", path,
				      strerror(errno));
		return dp_err(err, DPE_INPUT, "cannot read ssh config '%s': not a regular file of "
			      "sane size", path);
	}
	_cleanup_free_ char *buf = read_file(path, NULL);
	if (!buf) {
		if (!must_exist)
			return 0;
		return dp_err(err, DPE_INPUT, "cannot read ssh config '%s': %s", path, strerror(errno));
	}
	char *line = buf;
	while (line && *line) {
		char *nl = strchr(line, '\n'), *s = line;
		if (nl)
			*nl = '\0';
		line = nl ? nl + 1 : NULL;
		char *cr = strchr(s, '\r');
		if (cr)
			*cr = '\0';
		char *kw = next_word(&s, true);
		if (!kw || kw[0] == '#')
			continue;
		bool host = strcasecmp(kw, "Host") == 0;
		if (!host && strcasecmp(kw, "Include") != 0)
			continue;
		for (char *w; (w = next_word(&s, false));) {
			if (w[0] == '#')
				break;
			if (!host) {
				if (include(w, depth, aliases, err) < 0)
					return -1;
			} else if (!is_pattern(w) && !strv_contains(*aliases, w)) {
				strv_add(aliases, w);
			}
		}
	}
	return 0;
}

int ssh_config_aliases(const char *path, char ***aliases, struct dp_error *err)
{
	*aliases = NULL;
	int r;
	if (path) {
		r = read_config(path, true, 0, aliases, err);
	} else {
		_cleanup_free_ char *def = xasprintf("%s/.ssh/config", home_dir());
		r = read_config(def, false, 0, aliases, err);
	}
	if (r < 0) {
		strv_free(*aliases);
		*aliases = NULL;
	}
	return r;
}
