/* SPDX-License-Identifier: MIT */
/* A sweep (lib/inventory/sweep.h): --sweep values and ranges, their product (the last
 * parameter fastest), sweep files (grid: and list:, every refusal with its line and
 * column), the ledger's JSON both ways (and the old array of --sweep values), what is
 * refused and how it is said, and the commands: hostile values reach the command as
 * one word each, through bash, never run. */
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
	struct sweep sw = SWEEP_INIT;
	struct dp_error err = { 0 };
	/* the form of the ledgers before sweep files: the --sweep values */
	CHECK_INT(sweep_from_json(&sw, "[\"lr=0.1,a\\nb\",\"seed=1..2\"]", &err), 0);
	CHECK_INT(sw.ntasks, 4);
	CHECK(!sw.list);
	size_t k = 99;
	CHECK(sweep_task_of(&sw, "42", "42_3", &k) && k == 3);
	CHECK(!sweep_task_of(&sw, "42", "42_4", &k));
	CHECK(!sweep_task_of(&sw, "42", "420_1", &k));
	CHECK(!sweep_task_of(&sw, "42", "42", &k));
	CHECK(!sweep_task_of(&sw, "42", "42_[1-3%2]", &k));
	_cleanup_free_ char *text = sweep_task_text(&sw, 3);
	CHECK_STR(text, "lr=a\\nb seed=2");
	/* written again, in the new form */
	_cleanup_free_ char *json = sweep_json(&sw);
	CHECK_STR(json, "{\"grid\":[{\"name\":\"lr\",\"values\":[\"0.1\",\"a\\nb\"]},"
		  "{\"name\":\"seed\",\"values\":[\"1\",\"2\"]}]}");
	sweep_release(&sw);
	CHECK_INT(sweep_from_json(&sw, json, &err), 0);
	CHECK_INT(sw.ntasks, 4);
	CHECK_STR(sweep_value(&sw, 2, 0), "a\nb");
	CHECK_STR(sweep_value(&sw, 2, 1), "1");
	sweep_release(&sw);
	static const char *const bad[][2] = {
		{ "{\"lr\": 1}", "none of the forms dispatch writes" },
		{ "nope", "none of the forms dispatch writes" },
		{ "[\"1lr=2\"]", "not a parameter name" },
		{ "[3]", "a non-string" },
		{ "{\"grid\":[]}", "not a list of parameters" },
		{ "{\"grid\":[{\"name\":\"a\",\"values\":[]}]}", "values of 'a' are not 1 to" },
		{ "{\"grid\":[{\"name\":\"a\",\"values\":[1]}]}", "values of 'a' are not 1 to" },
		{ "{\"grid\":[{\"name\":\"a b\",\"values\":[\"1\"]}]}", "not a parameter name" },
		{ "{\"grid\":[{\"name\":\"a\",\"values\":[\"1\"]},{\"name\":\"A\",\"values\":[\"1\"]}]}",
		  "'A' is given twice" },
		{ "{\"list\":{\"names\":[\"a\"],\"tasks\":[]}}", "not 1 to 100000 tasks" },
		{ "{\"list\":{\"names\":[],\"tasks\":[[\"1\"]]}}", "has no names" },
		{ "{\"list\":{\"names\":[\"a\",\"b\"],\"tasks\":[[\"1\",\"2\"],[\"1\"]]}}",
		  "task 1 is not 2 strings" },
		{ "{\"list\":{\"names\":[\"a\"],\"tasks\":[[\"1\",\"2\"]]}}", "task 0 is not 1 strings" },
		{ "{\"list\":{\"names\":[\"index\"],\"tasks\":[[\"1\"]]}}", "'index' is the task's own" },
		{ "{\"grid\":[],\"list\":{}}", "none of the forms" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		CHECK_INT(sweep_from_json(&sw, bad[i][0], &err), -1);
		CHECK_INT(err.kind, DPE_INPUT);
		CHECK_CONTAINS(err.msg, bad[i][1]);
		CHECK_INT(sw.nparams, 0);
	}
}

static int parse(struct sweep *sw, const char *yaml, struct dp_error *err)
{
	return sweep_parse_yaml(sw, "sw.yaml", yaml, strlen(yaml), err);
}

/* grid: the product, values as written, ranges as --sweep's. */
static void test_file_grid(void)
{
	struct sweep sw = SWEEP_INIT;
	struct dp_error err = { 0 };
	CHECK_INT(parse(&sw, "grid:\n  lr: [0.10, \"1e-3\", 'it''s']\n  seed: [1, 2]\n"
			"  model: \"1..5:2\"\n  n: 7..8\n", &err), 0);
	CHECK(!sw.list);
	CHECK_INT(sw.nparams, 4);
	CHECK_INT(sw.ntasks, 36);
	CHECK_STR(sw.params[3].env, "DISPATCH_PARAM_N");
	CHECK_STR(sweep_value(&sw, 0, 0), "0.10");
	CHECK_STR(sweep_value(&sw, 35, 0), "it's");
	CHECK_STR(sweep_value(&sw, 12, 1), "1");
	CHECK_STR(sweep_value(&sw, 13, 2), "1");  /* the last fastest: n, then model */
	CHECK_STR(sweep_value(&sw, 13, 3), "8");
	CHECK_STR(sweep_value(&sw, 14, 2), "3");
	CHECK_STR(sweep_value(&sw, 35, 1), "2");
	CHECK_STR(sweep_value(&sw, 35, 2), "5");
	_cleanup_free_ char *t = sweep_task_text(&sw, 13);
	CHECK_STR(t, "lr=1e-3 seed=1 model=1 n=8");
	/* block lists, null and booleans as written, an empty quoted string */
	CHECK_INT(parse(&sw, "grid:\n  a:\n    - true\n    - ~\n    - \"\"\n    - 007\n", &err), 0);
	CHECK_INT(sw.ntasks, 4);
	CHECK_STR(sweep_value(&sw, 0, 0), "true");
	CHECK_STR(sweep_value(&sw, 1, 0), "~");
	CHECK_STR(sweep_value(&sw, 2, 0), "");
	CHECK_STR(sweep_value(&sw, 3, 0), "007");
	sweep_release(&sw);
}

/* list: a task per entry, each with its own values; names in any order. */
static void test_file_list(void)
{
	struct sweep sw = SWEEP_INIT;
	struct dp_error err = { 0 };
	CHECK_INT(parse(&sw, "list:\n  - {lr: 0.1, seed: 1}\n  - {seed: 7, lr: 0.010}\n"
			"  - lr: x\n    seed: \"\"\n", &err), 0);
	CHECK(sw.list);
	CHECK_INT(sw.ntasks, 3);
	CHECK_INT(sw.nparams, 2);
	CHECK_INT(sw.params[0].n, 3);
	CHECK_STR(sw.params[0].name, "lr");
	CHECK_STR(sw.params[1].env, "DISPATCH_PARAM_SEED");
	CHECK_STR(sweep_value(&sw, 0, 0), "0.1");
	CHECK_STR(sweep_value(&sw, 0, 1), "1");
	CHECK_STR(sweep_value(&sw, 1, 0), "0.010");
	CHECK_STR(sweep_value(&sw, 1, 1), "7");
	CHECK_STR(sweep_value(&sw, 2, 0), "x");
	CHECK_STR(sweep_value(&sw, 2, 1), "");
	_cleanup_free_ char *t = sweep_task_text(&sw, 1);
	CHECK_STR(t, "lr=0.010 seed=7");
	struct strbuf sb = STRBUF_INIT;
	sweep_script(&sb, &sw, "printf '<%s>' --lr {lr} --seed={seed} {index}");
	_cleanup_free_ char *out = run_task(sb.buf, 1);
	CHECK_STR(out, "<--lr><0.010><--seed=7><1>");
	strbuf_release(&sb);
	size_t k;
	CHECK(sweep_task_of(&sw, "9", "9_2", &k) && k == 2);
	CHECK(!sweep_task_of(&sw, "9", "9_3", &k));
	/* a list takes no --sweep on top */
	CHECK_INT(sweep_add(&sw, "b=1,2", &err), -1);
	CHECK_CONTAINS(err.msg, "a sweep file's list: takes no more parameters");
	CHECK_INT(sw.ntasks, 3);
	/* round trip through the ledger's form */
	_cleanup_free_ char *json = sweep_json(&sw);
	CHECK_STR(json, "{\"list\":{\"names\":[\"lr\",\"seed\"],\"tasks\":[[\"0.1\",\"1\"],"
		  "[\"0.010\",\"7\"],[\"x\",\"\"]]}}");
	struct sweep back = SWEEP_INIT;
	CHECK_INT(sweep_from_json(&back, json, &err), 0);
	CHECK(back.list);
	CHECK_INT(back.ntasks, 3);
	for (size_t i = 0; i < 3; i++)
		for (size_t p = 0; p < 2; p++)
			CHECK_STR(sweep_value(&back, i, p), sweep_value(&sw, i, p));
	_cleanup_free_ char *again = sweep_json(&back);
	CHECK_STR(again, json);
	sweep_release(&back);
	sweep_release(&sw);
}

/* Each refusal: DPE_INPUT, the file's line and column, what and how to fix; the sweep
 * as it was. */
static void file_refused(const char *yaml, const char *says)
{
	struct sweep sw = SWEEP_INIT;
	struct dp_error err = { 0 };
	CHECK_INT(sweep_add(&sw, "keep=1,2", &err), 0);
	CHECK_INT(parse(&sw, yaml, &err), -1);
	CHECK_INT(err.kind, DPE_INPUT);
	CHECK_CONTAINS(err.msg, says);
	CHECK_INT(sw.nparams, 1);
	CHECK_INT(sw.ntasks, 2);
	sweep_release(&sw);
}

static void test_file_refused(void)
{
	file_refused("", "sw.yaml:1:1: the sweep file is empty: give 'grid:'");
	file_refused("- 1\n", "sw.yaml:1:1: a sweep file is a mapping with 'grid:' or 'list:', not a list");
	file_refused("grid: {a: [1]}\nlist: [{a: 1}]\n", "sw.yaml:2:1: both 'grid' and 'list': a sweep file gives one");
	file_refused("gird:\n  a: [1]\n", "sw.yaml:1:1: unknown key 'gird' (did you mean 'grid'?)");
	file_refused("tasks: 1\n", "sw.yaml:1:1: unknown key 'tasks': a sweep file has 'grid:'");
	file_refused("{}\n", "sw.yaml:1:1: no 'grid:' or 'list:': give one");
	file_refused("grid: [1, 2]\n", "sw.yaml:1:7: 'grid' must be a mapping of parameters to their values (lr: [0.1, 0.01]), not a list");
	file_refused("grid:\n", "sw.yaml:1:1: 'grid' has no parameters: give each with its values");
	file_refused("grid: {}\n", "sw.yaml:1:7: 'grid' has no parameters");
	file_refused("grid:\n  1lr: [1]\n", "sw.yaml:2:3: '1lr' is not a parameter name (letters, digits and _");
	file_refused("grid:\n  l-r: [1]\n", "sw.yaml:2:3: 'l-r' is not a parameter name");
	file_refused("grid:\n  index: [1]\n", "sw.yaml:2:3: 'index' is the task's own number ({index}): name the parameter otherwise");
	file_refused("grid:\n  lr: [1]\n  LR: [2]\n", "sw.yaml:3:3: 'LR' is given twice (as 'lr' and 'LR': both would be DISPATCH_PARAM_LR)");
	file_refused("grid:\n  lr: [1]\n  lr: [2]\n", "sw.yaml:3:3: duplicate key 'lr'");
	file_refused("grid:\n  lr: []\n", "sw.yaml:2:7: 'lr' has no values: give one or more ([0.1, 0.01])");
	file_refused("grid:\n  lr:\n", "sw.yaml:2:3: 'lr' has no values: give a list ([0.1, 0.01]) or a range of integers (\"1..4\")");
	file_refused("grid:\n  lr: 0.1\n", "sw.yaml:2:7: 'lr: 0.1' is neither a list nor a range of integers A..B[:STEP] (one value is a list of one: [0.1])");
	file_refused("grid:\n  lr: \"a..b\"\n", "sw.yaml:2:7: 'lr: a..b' is neither a list nor a range");
	file_refused("grid:\n  lr: {a: 1}\n", "sw.yaml:2:7: the values of 'lr' must be a list ([0.1, 0.01]) or a range of integers (\"1..4\"), not a mapping");
	file_refused("grid:\n  lr: [1, [2, 3]]\n", "sw.yaml:2:11: a value of 'lr' is a list: each value is one scalar");
	file_refused("grid:\n  lr: [1, {a: 2}]\n", "sw.yaml:2:11: a value of 'lr' is a mapping");
	file_refused("grid:\n  lr:\n    - 1\n    -\n", "sw.yaml:4:6: a value of 'lr' is empty: write \"\" for an empty string");
	file_refused("grid:\n  n: 5..1\n", "sw.yaml:2:6: 'n: 5..1': the range goes down (write 1..5)");
	file_refused("grid:\n  n: \"1..5:0\"\n", "sw.yaml:2:6: 'n: 1..5:0': the step must be 1 or more");
	file_refused("grid:\n  n: 0..10000000\n", "sw.yaml:2:6: 'n: 0..10000000': 10000001 values, more than 10000");
	file_refused("grid:\n  a: 1..1000\n  b: 1..1000\n", "sw.yaml:3:3: 1000000 tasks with 'b', more than 100000 in one sweep: split it");
	file_refused("list: {a: 1}\n", "sw.yaml:1:7: 'list' must be a list of tasks (- {lr: 0.1, seed: 1}), not a mapping");
	file_refused("list:\n", "sw.yaml:1:1: 'list' has no tasks: give one per entry");
	file_refused("list: []\n", "sw.yaml:1:7: 'list' has no tasks");
	file_refused("list:\n  - {a: 1}\n  - 2\n", "sw.yaml:3:5: task 1 of 'list' is a string: each task is a mapping of its parameters");
	file_refused("list:\n  - {}\n", "sw.yaml:2:5: task 0 of 'list' is an empty mapping");
	file_refused("list:\n  - {a: 1}\n  -\n", "sw.yaml:3:4: task 1 of 'list' is empty");
	file_refused("list:\n  - {lr: 0.1, seed: 1}\n  - {lr: 0.01}\n", "sw.yaml:3:5: task 1 has no 'seed': every task of 'list' gives the names of task 0 (line 2: lr, seed)");
	file_refused("list:\n  - {lr: 0.1, seed: 1}\n  - {lr: 0.01, sed: 2}\n", "sw.yaml:3:16: task 1 has 'sed', which task 0 (line 2) has not (did you mean 'seed'?)");
	file_refused("list:\n  - {lr: 0.1}\n  - {lr: 0.01, zzzzzz: 2}\n", "sw.yaml:3:16: task 1 has 'zzzzzz', which task 0 (line 2) has not: every task of 'list' gives the same names (lr)");
	file_refused("list:\n  - {lr: 0.1, 2x: 1}\n", "sw.yaml:2:15: '2x' is not a parameter name");
	file_refused("list:\n  - {lr: 0.1, LR: 1}\n", "sw.yaml:2:15: 'LR' is given twice (as 'lr' and 'LR'");
	file_refused("list:\n  - {lr: [1]}\n", "sw.yaml:2:10: a value of 'lr' is a list");
	file_refused("list:\n  - {lr: 1}\n  - {lr: }\n", "sw.yaml:3:10: a value of 'lr' is empty");
	file_refused("grid: [\n", "sw.yaml:2:1: malformed YAML");
	/* a hostile key is shown escaped and cut */
	file_refused("grid:\n  \"a\\e[31mb\": [1]\n", "sw.yaml:2:3: 'a\\e[31mb' is not a parameter name");
	file_refused("list:\n  - {a: 1}\n  - {a: 1, \"x\\ny\": 2}\n", "task 1 has 'x\\ny', which task 0");
	/* the limits: the YAML reader's 200000 nodes come first for a long list (a task
	 * of one parameter is three nodes) */
	struct strbuf sb = STRBUF_INIT;
	strbuf_adds(&sb, "list:\n");
	for (int i = 0; i <= SWEEP_MAX_TASKS; i++)
		strbuf_adds(&sb, "- {a: 1}\n");
	file_refused(sb.buf, "sw.yaml:66667:7: document is too large: more than "
		     "200000 nodes (keys, values, lists and mappings; split the file)");
	strbuf_reset(&sb);
	strbuf_adds(&sb, "grid:\n  a: [");
	for (int i = 0; i <= SWEEP_MAX_VALUES; i++)
		strbuf_addf(&sb, "%s%d", i ? "," : "", i);
	strbuf_adds(&sb, "]\n");
	file_refused(sb.buf, "sw.yaml:2:6: 'a' has 10001 values, more than 10000");
	strbuf_release(&sb);
}

/* Hostile values from a file: through the file, the ledger's JSON and back, into the
 * task's command and variables whole, never run. */
static void test_file_hostile(void)
{
	static const char *const yaml =
		"list:\n"
		"  - {v: \"it's\", w: '\"q\" `id`'}\n"
		"  - {v: \"$(touch /tmp/test-sweep-pwned)\", w: \"a\\nb\\tc\"}\n"
		"  - {v: \"\\u00e9\\u4e2d \\U0001F600\", w: '{v} ${v} \\'}\n"
		"  - v: |\n      two\n      lines\n    w: \"; rm -rf / #\"\n";
	static const char *const want[][2] = {
		{ "it's", "\"q\" `id`" },
		{ "$(touch /tmp/test-sweep-pwned)", "a\nb\tc" },
		{ "\xc3\xa9\xe4\xb8\xad \xf0\x9f\x98\x80", "{v} ${v} \\" },
		{ "two\nlines\n", "; rm -rf / #" },
	};
	struct sweep sw = SWEEP_INIT;
	struct dp_error err = { 0 };
	CHECK_INT(parse(&sw, yaml, &err), 0);
	CHECK_INT(sw.ntasks, 4);
	_cleanup_free_ char *json = sweep_json(&sw);
	struct sweep back = SWEEP_INIT;
	CHECK_INT(sweep_from_json(&back, json, &err), 0);
	for (size_t i = 0; i < 4; i++)
		for (size_t p = 0; p < 2; p++) {
			CHECK_STR(sweep_value(&sw, i, p), want[i][p]);
			CHECK_STR(sweep_value(&back, i, p), want[i][p]);
		}
	struct strbuf sb = STRBUF_INIT;
	sweep_script(&sb, &back, "printf '<%s>' {v} \"{w}\" \"$DISPATCH_PARAM_V\" \"$DISPATCH_PARAM_W\"");
	for (size_t i = 0; i < 4; i++) {
		_cleanup_free_ char *out = run_task(sb.buf, i);
		_cleanup_free_ char *w = xasprintf("<%s><%s><%s><%s>", want[i][0], want[i][1],
						   want[i][0], want[i][1]);
		CHECK_STR(out, w);
	}
	CHECK(access("/tmp/test-sweep-pwned", F_OK) != 0);
	_cleanup_free_ char *text = sweep_task_text(&back, 1);
	CHECK_STR(text, "v=$(touch /tmp/test-sweep-pwned) w=a\\nb\\tc");
	/* bytes that are not UTF-8 (a --sweep value) survive the ledger too */
	struct sweep raw = SWEEP_INIT;
	CHECK_INT(sweep_add(&raw, "x=\xff\xfe,\"'", &err), 0);
	_cleanup_free_ char *rj = sweep_json(&raw);
	struct sweep rb = SWEEP_INIT;
	CHECK_INT(sweep_from_json(&rb, rj, &err), 0);
	CHECK_STR(sweep_value(&rb, 0, 0), "\xff\xfe");
	CHECK_STR(sweep_value(&rb, 1, 0), "\"'");
	sweep_release(&rb);
	sweep_release(&raw);
	strbuf_release(&sb);
	sweep_release(&back);
	sweep_release(&sw);
}

/* A local file: read, or refused when it cannot be. */
static void test_load_file(void)
{
	struct sweep sw = SWEEP_INIT;
	struct dp_error err = { 0 };
	_cleanup_free_ char *path = xasprintf("/tmp/test-sweep-%d.yaml", (int)getpid());
	CHECK_INT(sweep_load_file(&sw, path, &err), -1);
	CHECK_INT(err.kind, DPE_INPUT);
	CHECK_CONTAINS(err.msg, "cannot read sweep file '");
	CHECK_CONTAINS(err.msg, "No such file or directory (--sweep-file takes a local YAML file");
	FILE *fp = fopen(path, "w");
	if (!fp)
		abort();
	fputs("grid:\n  a: [x, y]\n  b: \"lr\"\n", fp);
	fclose(fp);
	CHECK_INT(sweep_load_file(&sw, path, &err), -1);
	_cleanup_free_ char *where = xasprintf("%s:3:6: 'b: lr' is neither a list nor a range", path);
	CHECK_CONTAINS(err.msg, where);
	fp = fopen(path, "w");
	if (!fp)
		abort();
	fputs("grid:\n  a: [x, y]\n", fp);
	fclose(fp);
	CHECK_INT(sweep_load_file(&sw, path, &err), 0);
	CHECK_INT(sw.ntasks, 2);
	unlink(path);
	sweep_release(&sw);
}

int main(void)
{
	test_ledger_form();
	test_file_grid();
	test_file_list();
	test_file_refused();
	test_file_hostile();
	test_load_file();
	test_product();
	test_refused();
	test_commands();
	return unit_done();
}
