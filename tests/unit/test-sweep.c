/* SPDX-License-Identifier: MIT */
/* A sweep (lib/inventory/sweep.h): --sweep values and ranges, their product (the last
 * parameter fastest), what is refused and how it is said, and the commands: hostile
 * values reach the command as one word each, through bash, never run. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "base/util.h"
#include "inventory/sweep.h"
#include "unit.h"

static void test_product(void)
{
	struct sweep sw = SWEEP_INIT;
	struct dp_error err = { 0 };
	CHECK_INT(sweep_add(&sw, "lr=0.1,0.01", &err), 0);
	CHECK_INT(sweep_add(&sw, "seed=1..5:2", &err), 0);
	CHECK_INT(sw.ntasks, 6);
	CHECK_STR(sw.params[1].env, "DISPATCH_PARAM_SEED");
	static const char *const want[6][2] = { { "0.1", "1" }, { "0.1", "3" }, { "0.1", "5" },
						{ "0.01", "1" }, { "0.01", "3" }, { "0.01", "5" } };
	for (size_t i = 0; i < 6; i++) {
		CHECK_STR(sweep_value(&sw, i, 0), want[i][0]);
		CHECK_STR(sweep_value(&sw, i, 1), want[i][1]);
	}
	CHECK_INT(sweep_add(&sw, "n=-2..-1", &err), 0);
	CHECK_INT(sw.ntasks, 12);
	CHECK_STR(sweep_value(&sw, 11, 2), "-1");
	CHECK_STR(sweep_value(&sw, 11, 0), "0.01");
	sweep_release(&sw);
	CHECK_INT(sw.ntasks, 0);
}

static void refused(const char *first, const char *spec, const char *says)
{
	struct sweep sw = SWEEP_INIT;
	struct dp_error err = { 0 };
	if (first)
		CHECK_INT(sweep_add(&sw, first, &err), 0);
	CHECK_INT(sweep_add(&sw, spec, &err), -1);
	CHECK_INT(err.kind, DPE_INPUT);
	CHECK_CONTAINS(err.msg, says);
	CHECK(!sweep_spec_valid(spec) || first);
	sweep_release(&sw);
}

static void test_refused(void)
{
	refused(NULL, "lr", "expected NAME=V1,V2,... or NAME=A..B[:STEP]");
	refused(NULL, "1lr=1,2", "not a parameter name");
	refused(NULL, "l-r=1,2", "not a parameter name");
	refused(NULL, "=1,2", "not a parameter name");
	refused(NULL, "index=1,2", "'index' is the task's own number");
	refused(NULL, "lr=1,,2", "an empty value");
	refused(NULL, "lr=", "an empty value");
	refused(NULL, "n=5..1", "the range goes down (write 1..5)");
	refused(NULL, "n=1..5:0", "the step must be 1 or more");
	refused(NULL, "n=0..10000000", "more than 10000");
	refused("lr=1,2", "LR=3", "'LR' is given twice (as 'lr' and 'LR': both would be DISPATCH_PARAM_LR)");
	refused("a=1..1000", "b=1..1000", "1000000 tasks, more than 100000");
	/* not integers: a list of one value, as written */
	struct sweep sw = SWEEP_INIT;
	CHECK_INT(sweep_add(&sw, "v=a..b", NULL), 0);
	CHECK_INT(sw.ntasks, 1);
	CHECK_STR(sweep_value(&sw, 0, 0), "a..b");
	sweep_release(&sw);
}

/* bash -c 'SCRIPT; eval "$dispatch_command"' for task i, its output. */
static char *run_task(const char *script, size_t i)
{
	_cleanup_free_ char *path = xasprintf("/tmp/test-sweep-%d.sh", (int)getpid());
	FILE *fp = fopen(path, "w");
	if (!fp)
		abort();
	fprintf(fp, "set -eu\nDISPATCH_SWEEP_INDEX=%zu\n%s\neval \"$dispatch_command\"\n", i, script);
	fclose(fp);
	_cleanup_free_ char *cmd = xasprintf("bash %s 2>&1", path);
	int st;
	char *out = unit_output(cmd, &st);
	unlink(path);
	if (st == 0)
		return out;
	char *with = xasprintf("%s[exit %d]", out, st);
	free(out);
	return with;
}

static void test_commands(void)
{
	struct sweep sw = SWEEP_INIT;
	struct dp_error err = { 0 };
	CHECK_INT(sweep_add(&sw, "v=it's,$(touch /tmp/test-sweep-pwned),a b,\"q\",`id`,\xc3\xa9\n2", &err), 0);
	CHECK_INT(sweep_add(&sw, "k=7..8", &err), 0);
	CHECK_INT(sw.ntasks, 12);
	_cleanup_free_ char *c = sweep_command(&sw, "printf '<%s>' {v} {k} {index} ${k:-x} {other} {v");
	CHECK_STR(c, "printf '<%s>' \"${DISPATCH_PARAM_V}\" \"${DISPATCH_PARAM_K}\" "
		     "\"${DISPATCH_SWEEP_INDEX}\" ${k:-x} {other} {v");
	/* in quotes, as the words of `-- cmd ARGS` are: the value is part of its word */
	_cleanup_free_ char *q = sweep_command(&sw, "'x{v}y' \"k={k}\" \\{k} '\\' {k}");
	CHECK_STR(q, "'x'\"${DISPATCH_PARAM_V}\"'y' \"k=${DISPATCH_PARAM_K}\" \\{k} '\\' "
		     "\"${DISPATCH_PARAM_K}\"");
	struct strbuf sb = STRBUF_INIT;
	sweep_script(&sb, &sw, "printf '<%s>' '{v}' {index} \"$DISPATCH_PARAM_V\" \"$DISPATCH_PARAM_K\"");
	unlink("/tmp/test-sweep-pwned");
	static const char *const want[] = {
		"<it's><0><it's><7>", "<it's><1><it's><8>",
		"<$(touch /tmp/test-sweep-pwned)><2><$(touch /tmp/test-sweep-pwned)><7>",
		"<$(touch /tmp/test-sweep-pwned)><3><$(touch /tmp/test-sweep-pwned)><8>",
		"<a b><4><a b><7>", "<a b><5><a b><8>", "<\"q\"><6><\"q\"><7>", "<\"q\"><7><\"q\"><8>",
		"<`id`><8><`id`><7>", "<`id`><9><`id`><8>", "<\xc3\xa9\n2><10><\xc3\xa9\n2><7>",
		"<\xc3\xa9\n2><11><\xc3\xa9\n2><8>",
	};
	for (size_t i = 0; i < 12; i++) {
		_cleanup_free_ char *out = run_task(sb.buf, i);
		CHECK_STR(out, want[i]);
	}
	strbuf_reset(&sb);
	sweep_script(&sb, &sw, "printf '<%s>' 'v={v}!' \"k={k}\"");
	_cleanup_free_ char *w = run_task(sb.buf, 2);
	CHECK_STR(w, "<v=$(touch /tmp/test-sweep-pwned)!><k=7>");
	_cleanup_free_ char *w2 = run_task(sb.buf, 10);
	CHECK_STR(w2, "<v=\xc3\xa9\n2!><k=7>");
	CHECK(access("/tmp/test-sweep-pwned", F_OK) != 0);
	_cleanup_free_ char *bad = run_task(sb.buf, 12);
	CHECK_CONTAINS(bad, "dispatch: task 12 is not one of this sweep's 12 (0-11)");
	CHECK_CONTAINS(bad, "[exit 1]");
	/* quotes nested in $(...) and backquotes: the value whole */
	strbuf_reset(&sb);
	sweep_script(&sb, &sw, "printf '<%s>' \"$(printf %s \"{v}\")\" \"`echo '{v}'`\"");
	_cleanup_free_ char *nested = run_task(sb.buf, 2);
	CHECK_STR(nested, "<$(touch /tmp/test-sweep-pwned)><$(touch /tmp/test-sweep-pwned)>");
	_cleanup_free_ char *spaced = run_task(sb.buf, 4);
	CHECK_STR(spaced, "<a b><a b>");
	/* a case pattern's ')' is misread as the end of the $(: the value is split into
	 * words there, and still never runs */
	strbuf_reset(&sb);
	sweep_script(&sb, &sw, "printf '<%s>' \"$(case a in a) echo \"{v}\";; esac)\"");
	_cleanup_free_ char *misread = run_task(sb.buf, 3);
	CHECK_STR(misread, "<$(touch /tmp/test-sweep-pwned)>");
	CHECK(access("/tmp/test-sweep-pwned", F_OK) != 0);
	/* the command is written once, for every task */
	strbuf_reset(&sb);
	sweep_script(&sb, &sw, "echo {k}");
	CHECK(strstr(sb.buf, "dispatch_command=") == strrchr(sb.buf, '\n') - strlen("dispatch_command='echo \"${DISPATCH_PARAM_K}\"'"));
	_cleanup_free_ char *once = run_task(sb.buf, 5);
	CHECK_STR(once, "8\n");
	strbuf_release(&sb);
	sweep_release(&sw);
}

/* What the ledger keeps, read back; which task a row of the array is; its values. */
static void test_ledger_form(void)
{
	char *specs[] = { "lr=0.1,a\nb", "seed=1..2", NULL };
	_cleanup_free_ char *json = sweep_specs_json(specs);
	CHECK_STR(json, "[\"lr=0.1,a\\nb\",\"seed=1..2\"]");
	struct sweep sw = SWEEP_INIT;
	struct dp_error err = { 0 };
	CHECK_INT(sweep_from_json(&sw, json, &err), 0);
	CHECK_INT(sw.ntasks, 4);
	size_t k = 99;
	CHECK(sweep_task_of(&sw, "42", "42_3", &k) && k == 3);
	CHECK(!sweep_task_of(&sw, "42", "42_4", &k));
	CHECK(!sweep_task_of(&sw, "42", "420_1", &k));
	CHECK(!sweep_task_of(&sw, "42", "42", &k));
	CHECK(!sweep_task_of(&sw, "42", "42_[1-3%2]", &k));
	_cleanup_free_ char *text = sweep_task_text(&sw, 3);
	CHECK_STR(text, "lr=a\\nb seed=2");
	sweep_release(&sw);
	CHECK_INT(sweep_from_json(&sw, "{\"lr\": 1}", &err), -1);
	CHECK_CONTAINS(err.msg, "not a JSON array");
	sweep_release(&sw);
	CHECK_INT(sweep_from_json(&sw, "[\"1lr=2\"]", &err), -1);
	CHECK_CONTAINS(err.msg, "not a parameter name");
	sweep_release(&sw);
}

int main(void)
{
	test_ledger_form();
	test_product();
	test_refused();
	test_commands();
	return unit_done();
}
