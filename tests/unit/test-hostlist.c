/* SPDX-License-Identifier: MIT */
/*
 * Hostlist expand and fold: golden files captured from a real scontrol
 * (tests/unit/data/hostlist, see capture.sh there), round trips, the places where
 * dispatch deliberately differs from SLURM, malformed input and the caps.
 */
#include <stdint.h>

#include "sched/slurm/hostlist.h"
#include "base/strbuf.h"
#include "unit.h"

/* The hosts of expr, one a line, or "error: MESSAGE". */
static char *expand_text(const char *expr)
{
	struct dp_error err = { 0 };
	char **hosts;
	struct strbuf sb = STRBUF_INIT;
	if (hostlist_expand(expr, &hosts, &err) < 0) {
		strbuf_addf(&sb, "error: %s", err.msg);
		return strbuf_detach(&sb);
	}
	for (size_t i = 0; hosts[i]; i++)
		strbuf_addf(&sb, "%s%s", i ? "\n" : "", hosts[i]);
	strv_free(hosts);
	return strbuf_detach(&sb);
}

/* The folded hosts of expr (expanded first), or "error: MESSAGE". */
static char *fold_text(const char *expr)
{
	struct dp_error err = { 0 };
	char **hosts, *out;
	if (hostlist_expand(expr, &hosts, &err) < 0)
		return xasprintf("error: %s", err.msg);
	int r = hostlist_fold(hosts, &out, &err);
	strv_free(hosts);
	return r < 0 ? xasprintf("error: %s", err.msg) : out;
}

#define CHECK_EXPAND(expr, want)                   \
	do {                                       \
		char *got_ = expand_text(expr);    \
		CHECK_STR(got_, want);             \
		free(got_);                        \
	} while (0)

#define CHECK_FOLD(expr, want)                     \
	do {                                       \
		char *got_ = fold_text(expr);      \
		CHECK_STR(got_, want);             \
		free(got_);                        \
	} while (0)

/* expand(fold(expand(expr))) is expand(expr), host for host. */
static int round_trips(const char *expr)
{
	struct dp_error err = { 0 };
	char **a = NULL, **b = NULL, *folded = NULL;
	int ok = hostlist_expand(expr, &a, &err) == 0 && hostlist_fold(a, &folded, &err) == 0 &&
		 hostlist_expand(folded, &b, &err) == 0 && strv_len(a) == strv_len(b);
	for (size_t i = 0; ok && a[i]; i++)
		ok = streq(a[i], b[i]);
	if (!ok)
		printf("# '%s' folded to '%s' (%s)\n", expr, folded ? folded : "?", err.msg);
	strv_free(a);
	strv_free(b);
	free(folded);
	return ok;
}

/* An error naming the expression and the column at fault. */
static void check_error(const char *expr, const char *column, const char *cause)
{
	struct dp_error err = { 0 };
	char **hosts = NULL;
	char *first = NULL;
	CHECK(hostlist_expand(expr, &hosts, &err) == -1);
	CHECK(hosts == NULL);
	CHECK_INT(err.kind, DPE_INPUT);
	char *quoted = xasprintf("invalid hostlist '%s'", expr);
	CHECK_CONTAINS(err.msg, quoted);
	if (column)
		CHECK_CONTAINS(err.msg, column);
	CHECK_CONTAINS(err.msg, cause);
	free(quoted);
	/* hostlist_first checks the whole expression the same way. */
	struct dp_error err2 = { 0 };
	CHECK(hostlist_first(expr, &first, &err2) == -1);
	CHECK(first == NULL);
	CHECK_STR(err2.msg, err.msg);
}

/* The golden files: "> INPUT" then the lines scontrol printed for it. */
static void check_golden(const char *file, bool fold)
{
	char *path = xasprintf("%s/hostlist/%s", unit_data(), file);
	char *text = read_file(path, NULL);
	CHECK(text != NULL);
	if (!text) {
		printf("# cannot read %s\n", path);
		free(path);
		return;
	}
	int records = 0;
	char *p = text;
	while (*p) {
		char *nl = strchr(p, '\n');
		if (nl)
			*nl = '\0';
		if (p[0] != '>') {
			p = nl ? nl + 1 : p + strlen(p);
			continue;
		}
		char *input = p[1] == ' ' ? p + 2 : p + 1;
		struct strbuf want = STRBUF_INIT;
		p = nl ? nl + 1 : p + strlen(p);
		while (*p && *p != '>') {
			nl = strchr(p, '\n');
			if (nl)
				*nl = '\0';
			if (p[0] != '#')
				strbuf_addf(&want, "%s%s", want.len ? "\n" : "", p);
			p = nl ? nl + 1 : p + strlen(p);
		}
		char *got = fold ? fold_text(input) : expand_text(input);
		unit_report(streq(got, want.buf), file, 0, input);
		if (!streq(got, want.buf))
			printf("#   got  \"%s\"\n#   want \"%s\"\n", got, want.buf);
		if (!fold)
			CHECK(round_trips(input));
		free(got);
		strbuf_release(&want);
		records++;
	}
	printf("# %d records in %s\n", records, file);
	CHECK(records >= 20);
	free(text);
	free(path);
}

static void test_expand(void)
{
	/* The brief's cases, and SLURM's order: leftmost group slowest, duplicates kept. */
	CHECK_EXPAND("rack[1-2]-n[01-02]", "rack1-n01\nrack1-n02\nrack2-n01\nrack2-n02");
	CHECK_EXPAND("n[08-10]", "n08\nn09\nn10");
	CHECK_EXPAND("n[1,3-5]", "n1\nn3\nn4\nn5");
	CHECK_EXPAND("a1,b[2-3],c", "a1\nb2\nb3\nc");
	CHECK_EXPAND("n[3,1-2,2]", "n3\nn1\nn2\nn2");
	CHECK_EXPAND("n[8-10]", "n8\nn9\nn10");
	CHECK_EXPAND("n[1-010]", "n1\nn2\nn3\nn4\nn5\nn6\nn7\nn8\nn9\nn10");
	CHECK_EXPAND("n[0-1][0-1]", "n00\nn01\nn10\nn11");
	/* Three groups and more: SLURM's order (see the golden file for four). */
	CHECK_EXPAND("n[0-1][0-1][0-1]", "n000\nn001\nn100\nn101\nn010\nn011\nn110\nn111");
	CHECK_EXPAND("gpu", "gpu");
	CHECK_EXPAND("login.example.org", "login.example.org");
	CHECK_EXPAND("a\tb\nc", "a\nb\nc");
	/* Empty lists. */
	CHECK_EXPAND("", "");
	CHECK_EXPAND(" ,, ", "");
	CHECK_EXPAND("(null)", "");
	CHECK_EXPAND("a,(null)", "a");
	CHECK_EXPAND("(null)x", "(null)x");
	CHECK_EXPAND(NULL, "");
	char **hosts = NULL;
	struct dp_error err = { 0 };
	CHECK(hostlist_expand("", &hosts, &err) == 0);
	CHECK(hosts != NULL && hosts[0] == NULL);
	strv_free(hosts);
	/* Beyond SLURM: text after the last bracket (SLURM 22.05 says "Invalid hostlist"). */
	CHECK_EXPAND("n[1-2]-ib", "n1-ib\nn2-ib");
	CHECK_EXPAND("gpu-[01-02].cluster", "gpu-01.cluster\ngpu-02.cluster");
	/* The largest numbers: 19 digits. */
	CHECK_EXPAND("n[9999999999999999998-9999999999999999999]",
		     "n9999999999999999998\nn9999999999999999999");
	CHECK_EXPAND("n[0000000000000000001-2]", "n0000000000000000001\nn0000000000000000002");
}

static void test_errors(void)
{
	check_error("n[1-2", "column 2", "never closed");
	check_error("n[", "column 2", "never closed");
	check_error("n[1,", "column 2", "never closed");
	check_error("n1-2]", "column 5", "no matching '['");
	check_error("]", "column 1", "no matching '['");
	check_error("n[5-3]", "column 3", "goes backwards (did you mean '3-5'?)");
	check_error("n[010-9]", "column 3", "did you mean '9-010'?");
	check_error("n[a-b]", "column 3", "unexpected 'a'");
	check_error("n[1-b]", "column 5", "unexpected 'b'");
	check_error("n[1x]", "column 4", "unexpected 'x'");
	check_error("n[1-2-3]", "column 6", "unexpected '-'");
	check_error("n[-1]", "column 3", "unexpected '-'");
	check_error("n[+1]", "column 3", "unexpected '+'");
	check_error("n[1 ,2]", "column 4", "unexpected ' '");
	check_error("n[\001]", "column 3", "byte 0x01");
	check_error("n[]", "column 3", "empty range");
	check_error("n[1,,2]", "column 5", "empty range");
	check_error("n[,1]", "column 3", "empty range");
	check_error("n[1,]", "column 5", "empty range");
	check_error("n[1-]", "column 3", "range '1-' at column 3 has no end");
	check_error("n[1[2]]", "column 4", "brackets do not nest");
	check_error("n[1][", "column 5", "never closed");
	check_error("ok,n[2-1],ok", "column 6", "goes backwards");
	check_error("n[99999999999999999999]", "column 3", "too long");

	/* Long expressions are shortened in the message but the column still says where. */
	struct strbuf sb = STRBUF_INIT;
	for (int i = 0; i < 50; i++)
		strbuf_addf(&sb, "host%d,", i);
	strbuf_adds(&sb, "n[2-1]");
	struct dp_error err = { 0 };
	char **hosts;
	CHECK(hostlist_expand(sb.buf, &hosts, &err) == -1);
	CHECK_CONTAINS(err.msg, "invalid hostlist 'host0,host1,");
	CHECK_CONTAINS(err.msg, "...'");
	char *col = xasprintf("column %zu", sb.len - 3);
	CHECK_CONTAINS(err.msg, col);
	free(col);
	strbuf_release(&sb);
}

static void test_caps(void)
{
	struct dp_error err = { 0 };
	char **hosts = NULL;

	/* Exactly the cap is fine. */
	CHECK(hostlist_expand("n[1-1000000]", &hosts, &err) == 0);
	CHECK_INT(strv_len(hosts), 1000000);
	CHECK_STR(hosts[0], "n1");
	CHECK_STR(hosts[999999], "n1000000");
	strv_free(hosts);

	/* One more is not, whether in one range, in a product, or over several names. */
	const char *over[] = {
		"n[1-1000001]",
		"n[0-999]x[0-1000]",
		"n[1-600000],m[1-400001]",
		"a[1-1000],b[1-999001]",
		"n[0-9999999999999999999]",
		"n[0-9999999999999999999][0-9999999999999999999]",
		"n[0-4294967295][0-4294967295][0-4294967295]",
	};
	for (size_t i = 0; i < ARRAY_SIZE(over); i++) {
		hosts = NULL;
		CHECK(hostlist_expand(over[i], &hosts, &err) == -1);
		CHECK(hosts == NULL);
		CHECK_INT(err.kind, DPE_INPUT);
		CHECK_CONTAINS(err.msg, "expands to more than 1000000 hosts (the limit)");
	}
	CHECK(hostlist_expand("n[1-600000],m[1-400001]", &hosts, &err) == -1);
	CHECK_CONTAINS(err.msg, "reached with 'm[1-400001]' at column 13");

	/* Bytes: 100000 names of 1000 characters are 100 MB. */
	struct strbuf sb = STRBUF_INIT;
	for (int i = 0; i < 1000; i++)
		strbuf_addch(&sb, 'x');
	strbuf_adds(&sb, "[1-100000]");
	CHECK(hostlist_expand(sb.buf, &hosts, &err) == -1);
	CHECK_CONTAINS(err.msg, "more than 64 MiB of host names");
	strbuf_reset(&sb);
	for (int i = 0; i < 1000; i++)
		strbuf_addch(&sb, 'x');
	strbuf_adds(&sb, "[1-60000]"); /* 60 MB: under the cap */
	CHECK(hostlist_expand(sb.buf, &hosts, &err) == 0);
	CHECK_INT(strv_len(hosts), 60000);
	strv_free(hosts);
	strbuf_release(&sb);

	/* A lower cap. */
	CHECK(hostlist_expand_max("n[1-10]", 10, &hosts, &err) == 0);
	CHECK_INT(strv_len(hosts), 10);
	strv_free(hosts);
	CHECK(hostlist_expand_max("n[1-10],x", 10, &hosts, &err) == -1);
	CHECK_CONTAINS(err.msg, "more than 10 hosts");
	/* ... never above the default one. */
	CHECK(hostlist_expand_max("n[1-1000001]", SIZE_MAX, &hosts, &err) == -1);
}

static void test_first(void)
{
	struct dp_error err = { 0 };
	char *first = (char *)"unset";
	CHECK(hostlist_first("", &first, &err) == 0);
	CHECK(first == NULL);
	CHECK(hostlist_first("(null)", &first, &err) == 0);
	CHECK(first == NULL);
	CHECK(hostlist_first(NULL, &first, &err) == 0);
	CHECK(first == NULL);
	const char *cases[][2] = {
		{ "node[3-4,1]", "node3" },
		{ "a[2-3]b[5,1]", "a2b5" },
		{ "login,n[1-2]", "login" },
		{ " ,(null),gpu[07-08]", "gpu07" },
		{ "n[0-999999]", "n0" },
		{ "n[1-2]-ib", "n1-ib" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		first = NULL;
		CHECK(hostlist_first(cases[i][0], &first, &err) == 0);
		CHECK_STR(first, cases[i][1]);
		free(first);
	}
	/* The same checks as expand: a bad name later on, or too many hosts, fail. */
	CHECK(hostlist_first("n1,n[2", &first, &err) == -1);
	CHECK(hostlist_first("n[1-1000001]", &first, &err) == -1);
}

static void test_fold(void)
{
	CHECK_FOLD("n01,n02,n03", "n[01-03]");
	CHECK_FOLD("n1,n2,n10", "n[1-2,10]");
	CHECK_FOLD("login", "login");
	CHECK_FOLD("n3,n1,n2", "n[3,1-2]");
	CHECK_FOLD("n[1-5],n[7-9]", "n[1-5,7-9]");
	CHECK_FOLD("n[1-3],login,n[4-5]", "n[1-3],login,n[4-5]");
	CHECK_FOLD("a,a,a", "a,a,a");
	CHECK_FOLD("n9,n10,n11", "n[9-11]");
	CHECK_FOLD("n098,n099,n100,n101", "n[098-101]");
	CHECK_FOLD("n0998,n0999,n1000", "n[0998-1000]");
	CHECK_FOLD("n08,n9", "n[08,9]");
	CHECK_FOLD("n1-ib,n2-ib", "n1-ib,n2-ib");
	CHECK_FOLD("", "");
	CHECK_FOLD("(null)", "");
	CHECK_FOLD("n9999999999999999998,n9999999999999999999",
		   "n[9999999999999999998-9999999999999999999]");
	/* 20 digits is no number: the names stay whole. */
	CHECK_FOLD("n[1-2]12345678901234567890", "n112345678901234567890,n212345678901234567890");

	char *out = (char *)"unset";
	struct dp_error err = { 0 };
	CHECK(hostlist_fold(NULL, &out, &err) == 0);
	CHECK_STR(out, "");
	free(out);

	/* Names that a hostlist cannot hold. */
	const char *bad[][2] = {
		{ "a,b", "',', hostlist syntax" },
		{ "n[1]", "'[', hostlist syntax" },
		{ "n]", "']', hostlist syntax" },
		{ "a b", "' ', hostlist syntax" },
		{ "a\tb", "byte 0x09" },
		{ "", "empty host name" },
		{ "(null)", "means no host" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		char *hosts[] = { "ok1", (char *)bad[i][0], NULL };
		out = NULL;
		CHECK(hostlist_fold(hosts, &out, &err) == -1);
		CHECK(out == NULL);
		CHECK_INT(err.kind, DPE_INPUT);
		CHECK_CONTAINS(err.msg, bad[i][1]);
	}
}

static void test_round_trips(void)
{
	const char *exprs[] = {
		"n[1-3,2]", "n[3,1-2,2]", "n[9-11,08-10,100]", "n[0,00,000]", "a[1-2]b[3-4]",
		"n[1-2]-ib", "rack[1-3]-n[01-04,07]", "x,y[1],z[001-003]", "n[5-1000]",
		"[0-3]", "a1b[2-3],a1b4", "n[1-3],n[1-3],n[1-3]", "n[1-2][1-2][1-2]",
	};
	for (size_t i = 0; i < ARRAY_SIZE(exprs); i++)
		CHECK(round_trips(exprs[i]));
}

int main(void)
{
	check_golden("scontrol-hostnames.txt", false);
	check_golden("scontrol-hostlist.txt", true);
	test_expand();
	test_errors();
	test_caps();
	test_first();
	test_fold();
	test_round_trips();
	return unit_done();
}
