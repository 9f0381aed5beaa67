/* SPDX-License-Identifier: MIT */
/*
 * What a SLURM cluster has and has free, from `scontrol -o show partition` and
 * `scontrol -o -d show node` (one line per partition or node, fields Key=Value).
 *
 * These formats have stayed put for many releases (unlike --json and sinfo -O,
 * whose columns run together when a value is wider than its column). The parsing:
 *  - A line is split at blanks; a word that starts like a key (a letter, then
 *    letters, digits or '_', then '=') starts a new field, any other word belongs to
 *    the value before it: values with spaces (OS=Linux 6.1 #1 SMP, Reason=maint
 *    test [root@2024-...]) come out whole. The first field of a name wins, so a
 *    free-text value that contains "State=x" cannot override the real one.
 *  - GRES (Gres=, GresUsed=): comma-separated entries name[:type][:count][(...)],
 *    commas inside the parentheses (IDX:0,2) not splitting; "(null)", "N/A" and
 *    "" are none; a type "(null)" is untyped; only name "gpu" counts as GPUs.
 *  - GPUs used on a node: GresUsed= (scontrol -d: per type, exact) when present,
 *    else AllocTRES= (gres/gpu:TYPE=N per type, gres/gpu=N in all). With only the
 *    total and several types on a node, each type counts as using
 *    min(its total, the node's total used): free GPUs are never over-counted.
 *  - A node takes new jobs ("usable") unless its state has DOWN, DRAIN (drained,
 *    draining), FAIL, MAINT, RESERVED, FUTURE, INVAL, UNKNOWN, NOT_RESPONDING or a
 *    '*' (not responding), REBOOT_ISSUED, POWERING_DOWN, BLOCKED. Free GPUs count
 *    only usable nodes, and only partitions whose State is UP.
 *  - A node's partitions come from its Partitions= field; when a version does not
 *    print it, from the partitions' Nodes= hostlists.
 */
#ifndef DISPATCH_SLURM_NODES_H
#define DISPATCH_SLURM_NODES_H

#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"

/* One field of a scontrol -o line. */
struct scontrol_field {
	char *key, *value;
};

/* Splits one line into fields (rules above); *out is an array of *n fields. */
void scontrol_fields(const char *line, struct scontrol_field **out, size_t *n);
void scontrol_fields_free(struct scontrol_field *f, size_t n);
/* The first field named key, or NULL. */
const char *scontrol_get(const struct scontrol_field *f, size_t n, const char *key);

struct slurm_gres {             /* one entry: gpu:a100:4(S:0-1) */
	char *name;             /* "gpu", "shard", ... */
	char *type;             /* "a100"; NULL when untyped */
	long count;
};

/* Parses a GRES string into *out (*n entries; none for "", "(null)", "N/A").
 * -1 with DPE_INPUT for a malformed entry (the message quotes it). */
int slurm_gres_parse(const char *s, struct slurm_gres **out, size_t *n, struct dp_error *err);
void slurm_gres_free(struct slurm_gres *g, size_t n);

struct slurm_gpus {             /* GPUs of one type on a node */
	char *type;             /* GRES type; NULL: untyped (gpu:N) */
	int total, used;
};

struct slurm_node {
	char *name;
	char *state;            /* as SLURM prints it: "IDLE", "MIXED+DRAIN", "DOWN*" */
	bool usable;            /* takes new jobs (rules above) */
	char **partitions;      /* strv, may be NULL */
	long cpus, cpus_alloc;
	char *reason;           /* NULL when none */
	struct slurm_gpus *gpus;
	size_t ngpus;
};

struct slurm_partition {
	char *name;
	bool is_default;
	char *state;            /* "UP", "DOWN", "DRAIN", "INACTIVE" */
	bool up;
	char *nodes;            /* hostlist expression, "" when none */
	long total_nodes, total_cpus;
	char *max_time;         /* "UNLIMITED", "2-00:00:00" */
	char *default_time;     /* "NONE", "01:00:00" */
};

struct slurm_facts {
	char *version;          /* from the nodes' Version=, or NULL */
	struct slurm_partition *partitions;
	size_t npartitions;
	struct slurm_node *nodes;
	size_t nnodes;
};

/* Parses the output of `scontrol -o show partition` and of `scontrol -o [-d] show
 * node` (either may be NULL) into f (zeroed first). Blank lines and lines that are
 * not partition or node records are skipped. -1 with DPE_INPUT when a GRES field is
 * malformed (the message names the node). */
int slurm_facts_parse(const char *partitions, const char *nodes, struct slurm_facts *f,
		      struct dp_error *err);
void slurm_facts_release(struct slurm_facts *f);

const struct slurm_partition *slurm_partition_find(const struct slurm_facts *f, const char *name);
const struct slurm_partition *slurm_default_partition(const struct slurm_facts *f);
bool slurm_node_in(const struct slurm_node *n, const char *partition);

/* GPUs of a node: of GRES type `type` (NULL: every type, typed or not). */
int slurm_node_gpus_total(const struct slurm_node *n, const char *type);
/* Free GPUs of that type on the node: 0 unless the node is usable. */
int slurm_node_gpus_free(const struct slurm_node *n, const char *type);

/* The GPU types of a partition (NULL: of the whole cluster), each with totals over
 * its nodes (all nodes for total and used, usable ones for free) in *out (free with
 * slurm_gpus_free; type NULL for untyped), in the order first seen. free_max is the
 * most free on one node (a one-node job of that many can start now). */
struct slurm_partition_gpus {
	char *type;
	int total, used, free, free_max;
};
void slurm_partition_gpus(const struct slurm_facts *f, const char *partition,
			  struct slurm_partition_gpus **out, size_t *n);
void slurm_partition_gpus_free(struct slurm_partition_gpus *g, size_t n);

/* Whether a node state (as printed) lets the node take new jobs. */
bool slurm_state_usable(const char *state);

#endif
