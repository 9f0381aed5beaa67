/* SPDX-License-Identifier: MIT */
#include "base/strbuf.h"
#include "unit.h"
#include "inventory/yaml_tree.h"

static struct ynode *parse(const char *text, struct dp_error *err)
{
	struct ynode *root = NULL;
	dp_error_clear(err);
	if (yaml_parse("t.yaml", text, strlen(text), &root, err) < 0)
		return NULL;
	return root;
}

int main(void)
{
	struct dp_error err;
	struct ynode *r = parse("a: 1\nb:\n  - x\n  - 'y'\nc: {d: ~}\n", &err);
	CHECK(r && r->kind == YN_MAP && r->n == 3);
	CHECK_STR(ynode_get(r, "a")->value, "1");
	const struct ynode *b = ynode_get(r, "b");
	CHECK(b && b->kind == YN_SEQ && b->n == 2);
	CHECK_INT(b->line, 3);
	CHECK_INT(b->col, 3);
	CHECK(b->items[1]->quoted);
	CHECK(ynode_is_null(ynode_get(ynode_get(r, "c"), "d")));
	CHECK(ynode_get(r, "zz") == NULL);
	ynode_free(r);

	/* Quoted "null" is a string, not null. */
	r = parse("a: 'null'\nb: null\n", &err);
	CHECK(!ynode_is_null(ynode_get(r, "a")));
	CHECK(ynode_is_null(ynode_get(r, "b")));
	ynode_free(r);

	/* Errors name file:line:col. */
	CHECK(parse("a: 1\na: 2\n", &err) == NULL);
	CHECK_STR(err.msg, "t.yaml:2:1: duplicate key 'a'");
	CHECK_INT(err.kind, DPE_INPUT);
	/* the first key in the file that repeats an earlier one, however many repeat */
	CHECK(parse("b: 1\na: 1\nc: 1\na: 2\nb: 2\nb: 3\n", &err) == NULL);
	CHECK_STR(err.msg, "t.yaml:4:1: duplicate key 'a'");
	CHECK(parse("x:\n  k: {q: 1, p: 2, q: 3}\n", &err) == NULL);
	CHECK_STR(err.msg, "t.yaml:2:19: duplicate key 'q'");
	/* many keys: checked once the map is complete, in n log n */
	_cleanup_strbuf_ struct strbuf big = STRBUF_INIT;
	for (int i = 0; i < 50000; i++)
		strbuf_addf(&big, "k%d: %d\n", i, i);
	r = parse(big.buf, &err);
	CHECK(r != NULL && r->n == 50000);
	ynode_free(r);
	strbuf_addf(&big, "k49999: again\n");
	CHECK(parse(big.buf, &err) == NULL);
	CHECK_STR(err.msg, "t.yaml:50001:1: duplicate key 'k49999'");
	/* bytes that are not UTF-8: where they are, as line:col */
	CHECK(parse("a: 1\nb: caf\xe9\n", &err) == NULL);
	CHECK_STR(err.msg, "t.yaml:2:7: malformed YAML: incomplete UTF-8 octet sequence (byte 11): "
			   "the file must be UTF-8");
	CHECK(parse("a: [1, 2\n", &err) == NULL);
	CHECK_CONTAINS(err.msg, "t.yaml:2:1: malformed YAML");
	CHECK(parse("a:\n  b: 1\n c: 2\n", &err) == NULL);
	CHECK_CONTAINS(err.msg, "t.yaml:3:");
	CHECK(parse("? [a]\n: 1\n", &err) == NULL);
	CHECK_CONTAINS(err.msg, "key must be a plain string");
	CHECK(parse("a: 1\n---\nb: 2\n", &err) == NULL);
	CHECK_CONTAINS(err.msg, "only one YAML document");

	/* Aliases expand, and a billion-laughs document is refused, not expanded. */
	r = parse("base: &b {x: 1}\nother: *b\n", &err);
	CHECK(r && ynode_get(ynode_get(r, "other"), "x") != NULL);
	ynode_free(r);
	struct strbuf lol = STRBUF_INIT;
	strbuf_adds(&lol, "a: &a [x, x, x, x, x, x, x, x, x, x]\n");
	for (char c = 'b'; c <= 'j'; c++)
		strbuf_addf(&lol, "%c: &%c [*%c, *%c, *%c, *%c, *%c, *%c, *%c, *%c, *%c, *%c]\n", c, c,
			    c - 1, c - 1, c - 1, c - 1, c - 1, c - 1, c - 1, c - 1, c - 1, c - 1);
	CHECK(parse(lol.buf, &err) == NULL);
	CHECK_CONTAINS(err.msg, "too large");
	strbuf_release(&lol);

	/* Deep nesting is an error, not a stack overflow. */
	struct strbuf deep = STRBUF_INIT;
	for (int i = 0; i < 10000; i++)
		strbuf_addch(&deep, '[');
	CHECK(parse(deep.buf, &err) == NULL);
	strbuf_release(&deep);

	/* Empty document: no root, no error. */
	r = parse("", &err);
	CHECK(r == NULL && err.kind == DPE_OK);
	r = parse("# only a comment\n", &err);
	CHECK(r == NULL && err.kind == DPE_OK);
	return unit_done();
}
