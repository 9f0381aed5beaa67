/* SPDX-License-Identifier: MIT */
/*
 * A YAML document as a small tree (maps, sequences, scalars), every node keeping the
 * line and column it came from, so that the inventory and job-file readers can name
 * file:line:col in their errors. Built on libyaml's event parser.
 */
#ifndef DISPATCH_YAML_TREE_H
#define DISPATCH_YAML_TREE_H

#include "base/error.h"

enum ynode_kind { YN_SCALAR, YN_SEQ, YN_MAP };

struct ynode {
	enum ynode_kind kind;
	int line, col;          /* 1-based, where the node starts */
	char *value;            /* scalars: the text; NULL otherwise */
	bool quoted;            /* scalars: written in quotes (so never null/bool) */
	size_t n;               /* sequences and maps: number of items */
	size_t cap;             /* room in items (and keys) */
	struct ynode **items;   /* sequence items, or map values */
	struct ynode **keys;    /* maps: keys (always scalars), parallel to items */
};

/* Parse the first document of buf. name is what errors call the file. An empty
 * document gives *root == NULL and returns 0. Aliases are expanded (bounded);
 * duplicate keys, non-scalar keys, nesting deeper than 64 and more than 200000 nodes
 * are errors. */
int yaml_parse(const char *name, const char *buf, size_t len, struct ynode **root,
	       struct dp_error *err);
int yaml_parse_file(const char *path, struct ynode **root, struct dp_error *err);
void ynode_free(struct ynode *n);
static inline void ynode_freep(struct ynode **n) { ynode_free(*n); }
#define _cleanup_ynode_ _cleanup_(ynode_freep)

/* The value under key in a map, or NULL. */
const struct ynode *ynode_get(const struct ynode *map, const char *key);
/* A plain scalar that YAML reads as null: empty, ~, null, Null, NULL. */
bool ynode_is_null(const struct ynode *n);
/* Kind names for messages: "a mapping", "a list", "a string". */
const char *ynode_kind_name(const struct ynode *n);

#endif
