/* SPDX-License-Identifier: MIT */
/*
 * export-subst (see export_subst.h), after git's pretty.c, date.c and archive.c: the
 * same placeholders give the same bytes, which t0600 checks against git archive.
 */
#include <ctype.h>
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "code/export_subst.h"
#include "base/util.h"
#include "base/cloexec.h"

void export_subst_release(struct export_subst *xs)
{
	strbuf_release(&xs->refs);
}

/* ---- abbreviated ids ---- */

/* The objects in the repository's packs, as git's approximate_object_count: each
 * pack index's last fan-out entry. */
static unsigned long packed_objects(git_repository *repo)
{
	_cleanup_free_ char *dir = xasprintf("%sobjects/pack", git_repository_commondir(repo));
	DIR *d = opendir(dir);
	unsigned long count = 0;
	if (!d)
		return 0;
	for (struct dirent *de; (de = readdir(d));) {
		size_t n = strlen(de->d_name);
		if (n < 4 || strcmp(de->d_name + n - 4, ".idx") != 0)
			continue;
		_cleanup_free_ char *path = xasprintf("%s/%s", dir, de->d_name);
		FILE *f = cloexec_fopen_read(path);
		unsigned char head[8], last[4];
		if (!f)
			continue;
		/* version 2 starts with "\377tOc" and its version; version 1 with the fan-out */
		long at = fread(head, 1, 8, f) == 8 && memcmp(head, "\377tOc", 4) == 0 ? 8 : 0;
		if (fseek(f, at + 255 * 4, SEEK_SET) == 0 && fread(last, 1, 4, f) == 4)
			count += (unsigned long)last[0] << 24 | (unsigned long)last[1] << 16 |
				 (unsigned long)last[2] << 8 | last[3];
		fclose(f);
	}
	closedir(d);
	return count;
}

/* git's core.abbrev=auto: half the bits of the object count, rounded up, at least 7. */
static int auto_abbrev(struct export_subst *xs)
{
	if (!xs->abbrev) {
		unsigned long count = packed_objects(xs->repo);
		int msb = 0;
		while (count >>= 1)
			msb++;
		xs->abbrev = (msb + 2) / 2;
		if (xs->abbrev < 7)
			xs->abbrev = 7;
	}
	return xs->abbrev;
}

/* The shortest prefix of id, at least auto_abbrev long, that names one object. */
static void add_short_id(struct export_subst *xs, struct strbuf *sb, const git_oid *id)
{
	char hex[GIT_OID_HEXSZ + 1];
	git_odb *odb = NULL;
	size_t len = (size_t)auto_abbrev(xs);
	git_oid_tostr(hex, sizeof(hex), id);
	if (git_repository_odb(&odb, xs->repo) == 0) {
		while (len < GIT_OID_HEXSZ && git_odb_exists_prefix(NULL, odb, id, len) == GIT_EAMBIGUOUS)
			len++;
		git_odb_free(odb);
	}
	git_error_clear();
	strbuf_add(sb, hex, len);
}

static void add_id(struct export_subst *xs, struct strbuf *sb, const git_oid *id, bool abbrev)
{
	char hex[GIT_OID_HEXSZ + 1];
	if (abbrev) {
		add_short_id(xs, sb, id);
		return;
	}
	git_oid_tostr(hex, sizeof(hex), id);
	strbuf_adds(sb, hex);
}

/* ---- dates, as git's date.c writes them ---- */

static const char *const weekdays[] = { "Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat" };
static const char *const months[] = { "Jan", "Feb", "Mar", "Apr", "May", "Jun",
				      "Jul", "Aug", "Sep", "Oct", "Nov", "Dec" };

/* kind: d (git's default), D (RFC 2822), i (ISO-like), I (strict ISO 8601), s (short),
 * t (seconds since the epoch). Returns false for another kind. */
static bool add_date(struct strbuf *sb, const git_time *t, char kind)
{
	if (kind == 't') {
		strbuf_addf(sb, "%lld", (long long)t->time);
		return true;
	}
	time_t local = (time_t)(t->time + (git_time_t)t->offset * 60);
	struct tm tm;
	if (!gmtime_r(&local, &tm))
		return false;
	int off = t->offset < 0 ? -t->offset : t->offset;
	int tz = (off / 60 * 100 + off % 60) * (t->offset < 0 ? -1 : 1);
	switch (kind) {
	case 'd':
		strbuf_addf(sb, "%s %s %d %02d:%02d:%02d %d %+05d", weekdays[tm.tm_wday],
			    months[tm.tm_mon], tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
			    tm.tm_year + 1900, tz);
		return true;
	case 'D':
		strbuf_addf(sb, "%s, %d %s %d %02d:%02d:%02d %+05d", weekdays[tm.tm_wday], tm.tm_mday,
			    months[tm.tm_mon], tm.tm_year + 1900, tm.tm_hour, tm.tm_min, tm.tm_sec, tz);
		return true;
	case 'i':
		strbuf_addf(sb, "%04d-%02d-%02d %02d:%02d:%02d %+05d", tm.tm_year + 1900,
			    tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, tz);
		return true;
	case 'I':
		strbuf_addf(sb, "%04d-%02d-%02dT%02d:%02d:%02d%c%02d:%02d", tm.tm_year + 1900,
			    tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
			    t->offset < 0 ? '-' : '+', off / 60, off % 60);
		return true;
	case 's':
		strbuf_addf(sb, "%04d-%02d-%02d", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday);
		return true;
	}
	return false;
}

/* %aX / %cX. Returns false when X is not one this knows. */
static bool add_person(struct strbuf *sb, const git_signature *who, char x)
{
	const char *at;
	switch (x) {
	case 'n':
	case 'N':
		strbuf_adds(sb, who->name);
		return true;
	case 'e':
	case 'E':
		strbuf_adds(sb, who->email);
		return true;
	case 'l':
	case 'L':
		at = strchr(who->email, '@');
		strbuf_add(sb, who->email, at ? (size_t)(at - who->email) : strlen(who->email));
		return true;
	}
	return add_date(sb, &who->when, x);
}

/* ---- the message ---- */

/* A line's length without its trailing white space; 0 for a blank line. */
static size_t trimmed(const char *line, size_t len)
{
	while (len && isspace((unsigned char)line[len - 1]))
		len--;
	return len;
}

/* %s: the first paragraph, its lines joined by spaces; *body: where %b starts (after
 * the blank lines that follow). */
static void add_subject(struct strbuf *sb, const char *msg, const char **body)
{
	const char *p = msg;
	bool first = true;
	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		size_t keep = trimmed(p, len);
		if (!keep)
			break;
		if (sb) {
			if (!first)
				strbuf_addch(sb, ' ');
			strbuf_add(sb, p, keep);
		}
		first = false;
		p += len + (nl ? 1 : 0);
	}
	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		if (trimmed(p, len))
			break;
		p += len + (nl ? 1 : 0);
	}
	if (body)
		*body = p;
}

/* ---- ref names (%D) ---- */

static int collect_name(const char *name, void *payload)
{
	strv_add((char ***)payload, name);
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Does the reference name, followed through symbolic refs and tags, reach commit? */
static bool ref_is(git_repository *repo, const char *name, const git_oid *commit)
{
	git_reference *ref = NULL;
	git_object *obj = NULL;
	bool yes = false;
	if (git_reference_lookup(&ref, repo, name) == 0 &&
	    git_reference_peel(&obj, ref, GIT_OBJECT_COMMIT) == 0)
		yes = git_oid_equal(git_object_id(obj), commit);
	git_object_free(obj);
	git_reference_free(ref);
	git_error_clear();
	return yes;
}

static void add_ref_name(struct strbuf *sb, const char *name)
{
	const char *s;
	if (sb->len)
		strbuf_adds(sb, ", ");
	if ((s = after_prefix(name, "refs/heads/")) || (s = after_prefix(name, "refs/remotes/")))
		strbuf_adds(sb, s);
	else if ((s = after_prefix(name, "refs/tags/")))
		strbuf_addf(sb, "tag: %s", s);
	else
		strbuf_adds(sb, name);
}

/* git's order: HEAD first ("HEAD -> branch" when HEAD is that branch), then the other
 * refs by name, last first. */
static const char *ref_names(struct export_subst *xs)
{
	if (xs->refs_done)
		return xs->refs.buf ? xs->refs.buf : "";
	xs->refs_done = true;
	const git_oid *id = git_commit_id(xs->commit);
	_cleanup_strv_free_ char **names = NULL;
	char *branch = NULL;
	git_reference *head = NULL;

	if (git_reference_lookup(&head, xs->repo, "HEAD") == 0 && ref_is(xs->repo, "HEAD", id)) {
		strbuf_adds(&xs->refs, "HEAD");
		if (git_reference_type(head) == GIT_REFERENCE_SYMBOLIC) {
			branch = xstrdup(git_reference_symbolic_target(head));
			const char *s = after_prefix(branch, "refs/heads/");
			strbuf_addf(&xs->refs, " -> %s", s ? s : branch);
		}
	}
	git_reference_free(head);
	git_error_clear();
	git_reference_foreach_name(xs->repo, collect_name, &names);
	git_error_clear();
	size_t n = strv_len(names);
	if (n)
		qsort(names, n, sizeof(*names), cmp_str);
	for (size_t i = n; i-- > 0;)
		if (!(branch && streq(names[i], branch)) && ref_is(xs->repo, names[i], id))
			add_ref_name(&xs->refs, names[i]);
	free(branch);
	return xs->refs.buf ? xs->refs.buf : "";
}

/* ---- %(describe...) ---- */

/* Parses "(describe[:opt,...])" at p (git's parse_describe_args) and expands it.
 * Returns the length taken, or 0 to leave it as written (a second describe, an option
 * git does not know, or exclude=, which libgit2 cannot do). */
static size_t describe(struct export_subst *xs, struct strbuf *sb, const char *p)
{
	const char *start = p;
	_cleanup_free_ char *match = NULL;
	bool tags = false;
	long abbrev = -1;

	if (!(p = after_prefix(p, "(describe")))
		return 0;
	if (*p == ':') {
		p++;
		while (*p && *p != ')') {
			size_t n = strcspn(p, ",)");
			_cleanup_free_ char *opt = xstrndup(p, n);
			const char *v;
			if (streq(opt, "tags") || streq(opt, "tags=true"))
				tags = true;
			else if (streq(opt, "tags=false"))
				tags = false;
			else if ((v = after_prefix(opt, "match=")) && !match)
				match = xstrdup(v);
			else if ((v = after_prefix(opt, "abbrev=")) && *v && strspn(v, "0123456789") == strlen(v))
				abbrev = strtol(v, NULL, 10);
			else
				return 0;
			p += n;
			if (*p == ',')
				p++;
		}
	}
	if (*p != ')' || xs->describe_done)
		return 0;
	xs->describe_done = true;

	git_describe_options o;
	git_describe_format_options fo;
	git_describe_result *res = NULL;
	git_buf out = { 0 };
	git_describe_options_init(&o, GIT_DESCRIBE_OPTIONS_VERSION);
	git_describe_format_options_init(&fo, GIT_DESCRIBE_FORMAT_OPTIONS_VERSION);
	o.describe_strategy = tags ? GIT_DESCRIBE_TAGS : GIT_DESCRIBE_DEFAULT;
	o.pattern = match;
	fo.abbreviated_size = abbrev >= 0 ? (unsigned)abbrev : (unsigned)auto_abbrev(xs);
	/* git describe fails without a tag to name: the placeholder expands to nothing */
	if (git_describe_commit(&res, (git_object *)xs->commit, &o) == 0 &&
	    git_describe_format(&out, res, &fo) == 0)
		strbuf_add(sb, out.ptr, out.size);
	git_buf_dispose(&out);
	git_describe_result_free(res);
	git_error_clear();
	return (size_t)(p + 1 - start);
}

/* ---- one placeholder ---- */

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = (char)tolower((unsigned char)c);
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* Expands the placeholder at p (after its '%'). Returns the length taken, 0 when it
 * is not one: the '%' is then written as it is. */
static size_t placeholder(struct export_subst *xs, struct strbuf *sb, const char *p)
{
	const git_commit *c = xs->commit;
	const char *body;
	switch (p[0]) {
	case 'n':
		strbuf_addch(sb, '\n');
		return 1;
	case '%':
		strbuf_addch(sb, '%');
		return 1;
	case 'x':
		if (hexval(p[1]) < 0 || hexval(p[2]) < 0)
			return 0;
		strbuf_addch(sb, (char)(hexval(p[1]) << 4 | hexval(p[2])));
		return 3;
	case 'H':
	case 'h':
		add_id(xs, sb, git_commit_id(c), p[0] == 'h');
		return 1;
	case 'T':
	case 't':
		add_id(xs, sb, git_commit_tree_id(c), p[0] == 't');
		return 1;
	case 'P':
	case 'p':
		for (unsigned i = 0; i < git_commit_parentcount(c); i++) {
			if (i)
				strbuf_addch(sb, ' ');
			add_id(xs, sb, git_commit_parent_id(c, i), p[0] == 'p');
		}
		return 1;
	case 'a':
	case 'c':
		if (!p[1])
			return 0;
		return add_person(sb, p[0] == 'a' ? git_commit_author(c) : git_commit_committer(c),
				  p[1]) ? 2 : 0;
	case 's':
		add_subject(sb, git_commit_message(c), NULL);
		return 1;
	case 'b':
		add_subject(NULL, git_commit_message(c), &body);
		strbuf_adds(sb, body);
		return 1;
	case 'B':
		strbuf_adds(sb, git_commit_message_raw(c));
		return 1;
	case 'D':
		strbuf_adds(sb, ref_names(xs));
		return 1;
	case 'd':
		if (*ref_names(xs))
			strbuf_addf(sb, " (%s)", ref_names(xs));
		return 1;
	case '(':
		return describe(xs, sb, p);
	}
	return 0;
}

static void expand(struct export_subst *xs, struct strbuf *sb, const char *fmt)
{
	for (const char *p = fmt; *p;) {
		const char *pct = strchr(p, '%');
		if (!pct) {
			strbuf_adds(sb, p);
			return;
		}
		strbuf_add(sb, p, (size_t)(pct - p));
		size_t n = placeholder(xs, sb, pct + 1);
		if (!n)
			strbuf_addch(sb, '%');
		p = pct + 1 + n;
	}
}

/* memmem, which POSIX does not have */
static const char *find(const char *in, size_t len, const char *what, size_t n)
{
	for (const char *p = in; (size_t)(in + len - p) >= n; p++) {
		p = memchr(p, what[0], (size_t)(in + len - p) - n + 1);
		if (!p)
			return NULL;
		if (memcmp(p, what, n) == 0)
			return p;
	}
	return NULL;
}

void export_subst_apply(struct export_subst *xs, const char *in, size_t len, struct strbuf *out)
{
	static const char mark[] = "$Format:";
	const size_t mlen = sizeof(mark) - 1;
	while (len) {
		const char *b = find(in, len, mark, mlen);
		const char *e = b ? memchr(b + mlen, '$', len - (size_t)(b + mlen - in)) : NULL;
		if (!e)
			break;
		strbuf_add(out, in, (size_t)(b - in));
		_cleanup_free_ char *fmt = xstrndup(b + mlen, (size_t)(e - b - mlen));
		expand(xs, out, fmt);
		len -= (size_t)(e + 1 - in);
		in = e + 1;
	}
	strbuf_add(out, in, len);
}
