/* SPDX-License-Identifier: MIT */
#include "inventory/yaml_tree.h"

#include <errno.h>
#include <stdlib.h>
#include <yaml.h>

#define MAX_DEPTH 64
#define MAX_NODES 200000

struct anchor {
	char *name;
	struct ynode *node;
};

struct builder {
	const char *name;
	const char *buf;        /* the input, for the line and column of a byte */
	size_t len;
	yaml_parser_t parser;
	struct anchor *anchors;
	size_t nanchors;
	size_t nodes;
	struct dp_error *err;
};

static struct ynode *node_new(enum ynode_kind kind, const yaml_mark_t *mark)
{
	struct ynode *n = xcalloc(1, sizeof(*n));
	n->kind = kind;
	n->line = (int)mark->line + 1;
	n->col = (int)mark->column + 1;
	return n;
}

void ynode_free(struct ynode *n)
{
	if (!n)
		return;
	for (size_t i = 0; i < n->n; i++) {
		ynode_free(n->items[i]);
		if (n->keys)
			ynode_free(n->keys[i]);
	}
	free(n->items);
	free(n->keys);
	free(n->value);
	free(n);
}

static void node_append(struct ynode *parent, struct ynode *key, struct ynode *value)
{
	/* grown by doubling: a collection of n items costs n, not n^2, in copies */
	if (parent->n == parent->cap) {
		parent->cap = parent->cap ? 2 * parent->cap : 4;
		parent->items = xrealloc(parent->items, parent->cap * sizeof(*parent->items));
		if (parent->kind == YN_MAP)
			parent->keys = xrealloc(parent->keys, parent->cap * sizeof(*parent->keys));
	}
	if (parent->kind == YN_MAP)
		parent->keys[parent->n] = key;
	parent->items[parent->n++] = value;
}

static struct ynode *node_copy(struct builder *b, const struct ynode *src, int line, int col)
{
	if (++b->nodes > MAX_NODES)
		return NULL;
	struct ynode *n = xcalloc(1, sizeof(*n));
	n->kind = src->kind;
	n->line = line;
	n->col = col;
	n->quoted = src->quoted;
	n->value = src->value ? xstrdup(src->value) : NULL;
	for (size_t i = 0; i < src->n; i++) {
		struct ynode *k = src->keys ? node_copy(b, src->keys[i], line, col) : NULL;
		struct ynode *v = node_copy(b, src->items[i], line, col);
		if ((src->keys && !k) || !v) {
			ynode_free(k);
			ynode_free(v);
			ynode_free(n);
			return NULL;
		}
		node_append(n, k, v);
	}
	return n;
}

static int fail_at(struct builder *b, const yaml_mark_t *m, const char *what)
{
	return dp_err(b->err, DPE_INPUT, "%s:%zu:%zu: %s", b->name, m->line + 1, m->column + 1, what);
}

static int parser_fail(struct builder *b)
{
	yaml_parser_t *p = &b->parser;
	const yaml_mark_t *m = &p->problem_mark;
	if (p->error == YAML_MEMORY_ERROR)
		abort();
	if (p->error == YAML_READER_ERROR) {
		/* libyaml gives a byte offset only: count the lines up to it */
		size_t line = 1, col = 1;
		for (size_t i = 0; i < p->problem_offset && i < b->len; i++, col++)
			if (b->buf[i] == '\n')
				line++, col = 0;
		return dp_err(b->err, DPE_INPUT, "%s:%zu:%zu: malformed YAML: %s (byte %zu): the file "
			      "must be UTF-8", b->name, line, col,
			      p->problem ? p->problem : "unreadable input", p->problem_offset);
	}
	if (p->context)
		return dp_err(b->err, DPE_INPUT, "%s:%zu:%zu: malformed YAML: %s %s", b->name,
			      m->line + 1, m->column + 1, p->problem ? p->problem : "syntax error",
			      p->context);
	return dp_err(b->err, DPE_INPUT, "%s:%zu:%zu: malformed YAML: %s", b->name, m->line + 1,
		      m->column + 1, p->problem ? p->problem : "syntax error");
}

static void remember_anchor(struct builder *b, const yaml_char_t *anchor, struct ynode *n)
{
	if (!anchor)
		return;
	b->anchors = xrealloc(b->anchors, (b->nanchors + 1) * sizeof(*b->anchors));
	b->anchors[b->nanchors].name = xstrdup((const char *)anchor);
	b->anchors[b->nanchors].node = n;
	b->nanchors++;
}

/* Parse the node that begins with event ev (already taken from the parser). */
static int build_node(struct builder *b, yaml_event_t *ev, int depth, struct ynode **out);

static int next_event(struct builder *b, yaml_event_t *ev)
{
	if (!yaml_parser_parse(&b->parser, ev))
		return parser_fail(b);
	return 0;
}

/* Keys by text, then by place in the file. */
static int cmp_keys(const void *pa, const void *pb)
{
	const struct ynode *a = *(struct ynode *const *)pa, *b = *(struct ynode *const *)pb;
	int c = strcmp(a->value, b->value);
	if (c)
		return c;
	return a->line != b->line ? (a->line < b->line ? -1 : 1) : (a->col > b->col) - (a->col < b->col);
}

static bool before(const struct ynode *a, const struct ynode *b)
{
	return a->line < b->line || (a->line == b->line && a->col < b->col);
}

/* A key given twice: the first second occurrence in the file is the error. Sorted
 * once the map is complete, so that a map of many keys costs n log n, not n^2. */
static int check_duplicate_keys(struct builder *b, const struct ynode *map)
{
	if (map->n < 2)
		return 0;
	struct ynode **k = xmalloc(map->n * sizeof(*k));
	const struct ynode *dup = NULL;
	memcpy(k, map->keys, map->n * sizeof(*k));
	qsort(k, map->n, sizeof(*k), cmp_keys);
	for (size_t i = 1; i < map->n; i++)
		if (streq(k[i - 1]->value, k[i]->value) && (i < 2 || !streq(k[i - 2]->value, k[i]->value)) &&
		    (!dup || before(k[i], dup)))
			dup = k[i];
	free(k);
	if (!dup)
		return 0;
	return dp_err(b->err, DPE_INPUT, "%s:%d:%d: duplicate key '%s'", b->name, dup->line, dup->col,
		      dup->value);
}

static int build_collection(struct builder *b, struct ynode *n, int depth)
{
	for (;;) {
		yaml_event_t ev;
		if (next_event(b, &ev) < 0)
			return -1;
		if (ev.type == YAML_SEQUENCE_END_EVENT || ev.type == YAML_MAPPING_END_EVENT) {
			yaml_event_delete(&ev);
			return n->kind == YN_MAP ? check_duplicate_keys(b, n) : 0;
		}
		struct ynode *key = NULL, *value = NULL;
		if (build_node(b, &ev, depth + 1, n->kind == YN_MAP ? &key : &value) < 0)
			return -1;
		if (n->kind == YN_MAP) {
			if (key->kind != YN_SCALAR) {
				int line = key->line, col = key->col;
				ynode_free(key);
				return dp_err(b->err, DPE_INPUT, "%s:%d:%d: a mapping key must be a plain string",
					      b->name, line, col);
			}
			if (next_event(b, &ev) < 0 || build_node(b, &ev, depth + 1, &value) < 0) {
				ynode_free(key);
				return -1;
			}
		}
		node_append(n, key, value);
	}
}

static int build_node(struct builder *b, yaml_event_t *ev, int depth, struct ynode **out)
{
	int r = 0;
	struct ynode *n = NULL;

	*out = NULL;
	if (depth > MAX_DEPTH) {
		r = fail_at(b, &ev->start_mark, "nesting is too deep");
		goto done;
	}
	if (++b->nodes > MAX_NODES) {
		char what[128];
		snprintf(what, sizeof(what), "document is too large: more than %d nodes (keys, "
			 "values, lists and mappings; split the file)", MAX_NODES);
		r = fail_at(b, &ev->start_mark, what);
		goto done;
	}
	switch (ev->type) {
	case YAML_SCALAR_EVENT:
		n = node_new(YN_SCALAR, &ev->start_mark);
		n->value = xstrndup((const char *)ev->data.scalar.value, ev->data.scalar.length);
		n->quoted = ev->data.scalar.style != YAML_PLAIN_SCALAR_STYLE;
		remember_anchor(b, ev->data.scalar.anchor, n);
		break;
	case YAML_SEQUENCE_START_EVENT:
	case YAML_MAPPING_START_EVENT:
		n = node_new(ev->type == YAML_SEQUENCE_START_EVENT ? YN_SEQ : YN_MAP, &ev->start_mark);
		remember_anchor(b, ev->type == YAML_SEQUENCE_START_EVENT ? ev->data.sequence_start.anchor
									: ev->data.mapping_start.anchor,
				n);
		r = build_collection(b, n, depth);
		break;
	case YAML_ALIAS_EVENT: {
		const char *name = (const char *)ev->data.alias.anchor;
		const struct ynode *target = NULL;
		for (size_t i = b->nanchors; i-- > 0;)
			if (streq(b->anchors[i].name, name)) {
				target = b->anchors[i].node;
				break;
			}
		if (!target) {
			r = fail_at(b, &ev->start_mark, "unknown alias");
			break;
		}
		n = node_copy(b, target, (int)ev->start_mark.line + 1, (int)ev->start_mark.column + 1);
		if (!n)
			r = fail_at(b, &ev->start_mark, "document is too large (aliases expand too far)");
		break;
	}
	default:
		r = fail_at(b, &ev->start_mark, "malformed YAML: unexpected event");
		break;
	}
done:
	yaml_event_delete(ev);
	if (r < 0) {
		ynode_free(n);
		return -1;
	}
	*out = n;
	return 0;
}

int yaml_parse(const char *name, const char *buf, size_t len, struct ynode **root,
	       struct dp_error *err)
{
	struct builder b = { .name = name, .buf = buf, .len = len, .err = err };
	yaml_event_t ev;
	int r = -1;

	*root = NULL;
	if (!yaml_parser_initialize(&b.parser))
		abort();
	yaml_parser_set_input_string(&b.parser, (const unsigned char *)buf, len);
	/* STREAM-START, then DOCUMENT-START or STREAM-END */
	if (next_event(&b, &ev) < 0)
		goto out;
	yaml_event_delete(&ev);
	if (next_event(&b, &ev) < 0)
		goto out;
	if (ev.type == YAML_STREAM_END_EVENT) {
		yaml_event_delete(&ev);
		r = 0;
		goto out;
	}
	yaml_event_delete(&ev);
	if (next_event(&b, &ev) < 0)
		goto out;
	if (build_node(&b, &ev, 0, root) < 0)
		goto out;
	/* DOCUMENT-END; a second document is an error rather than silently ignored. */
	if (next_event(&b, &ev) < 0)
		goto out;
	yaml_event_delete(&ev);
	if (next_event(&b, &ev) < 0)
		goto out;
	if (ev.type != YAML_STREAM_END_EVENT) {
		fail_at(&b, &ev.start_mark, "only one YAML document is allowed");
		yaml_event_delete(&ev);
		goto out;
	}
	yaml_event_delete(&ev);
	r = 0;
out:
	if (r < 0) {
		ynode_free(*root);
		*root = NULL;
	} else if (*root && ynode_is_null(*root)) {
		ynode_free(*root);
		*root = NULL;
	}
	for (size_t i = 0; i < b.nanchors; i++)
		free(b.anchors[i].name);
	free(b.anchors);
	yaml_parser_delete(&b.parser);
	return r;
}

int yaml_parse_file(const char *path, struct ynode **root, struct dp_error *err)
{
	size_t len;
	_cleanup_free_ char *buf = read_file(path, &len);
	if (!buf)
		return dp_err(err, errno == ENOENT ? DPE_NOTFOUND : DPE_INPUT, "cannot read '%s': %s",
			      path, strerror(errno));
	return yaml_parse(path, buf, len, root, err);
}

const struct ynode *ynode_get(const struct ynode *map, const char *key)
{
	if (!map || map->kind != YN_MAP)
		return NULL;
	for (size_t i = 0; i < map->n; i++)
		if (streq(map->keys[i]->value, key))
			return map->items[i];
	return NULL;
}

bool ynode_is_null(const struct ynode *n)
{
	if (!n)
		return true;
	if (n->kind != YN_SCALAR || n->quoted)
		return false;
	const char *v = n->value;
	return !*v || streq(v, "~") || streq(v, "null") || streq(v, "Null") || streq(v, "NULL");
}

const char *ynode_kind_name(const struct ynode *n)
{
	if (ynode_is_null(n))
		return "empty";
	switch (n->kind) {
	case YN_MAP:
		return "a mapping";
	case YN_SEQ:
		return "a list";
	default:
		return "a string";
	}
}
