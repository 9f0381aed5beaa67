/* SPDX-License-Identifier: MIT */
/*
 * The YAML inventory of clusters and hosts (format: ../shared/reference/inventory.yaml).
 * Loading validates everything; any problem is a DPE_INPUT error naming
 * file:line:col and the key. Lists keep file order.
 */
#ifndef DISPATCH_INVENTORY_H
#define DISPATCH_INVENTORY_H

#include "base/error.h"

struct inv_kv {
	char *key;
	char *value;
};

struct inv_chip {
	char *chip;             /* catalogue name, e.g. "h100" */
	int count;
};

struct inv_partition {
	char *name;
	bool is_default;
	char *constraint;       /* NULL when not set */
};

struct inv_cluster {
	char *name;
	char *root, *work;      /* required */
	char *log;              /* NULL: {work}/logs */
	char *share;            /* NULL: {work}/.dispatch */
	char *mount;            /* JuiceFS metadata URL, NULL when none */
	char *cache_size, *cache_dir;
	int line, col;
};

enum inv_host_type { INV_HOST_PLAIN, INV_HOST_SLURM };

struct inv_host {
	char *name;
	enum inv_host_type type;
	char *ssh;                      /* ssh alias or user@host[:port]; defaults to the name */
	char *cluster_name;
	const struct inv_cluster *cluster;
	struct inv_chip *chips;         /* plain: what the host has; slurm: limits */
	size_t nchips;
	bool chips_set;                 /* slurm: a chips map was given (it limits allocation) */
	char **uv_groups;               /* strv, may be NULL */
	char *gpu_lock_dir;             /* plain: where GPU leases are locked; NULL: default */
	long max_jobs;                  /* plain: dispatch jobs running at once; 0: no cap */
	/* slurm only */
	struct inv_partition *partitions;
	size_t npartitions;
	char **cpu_partitions;          /* strv (also spelled partitions_cpu) */
	char *account, *qos, *mem;
	char **exclude;                 /* strv */
	struct inv_kv *annotations;
	size_t nannotations;
	int line, col;
};

struct inventory {
	char *path;
	char *mount, *proxy;            /* top level, mutually exclusive */
	char **priority;                /* strv of host names */
	struct inv_kv *gres_mapping;    /* chip name -> GRES type */
	size_t ngres_mapping;
	struct inv_cluster *clusters;
	size_t nclusters;
	struct inv_host *hosts;
	size_t nhosts;
};

int inventory_load(const char *path, struct inventory **out, struct dp_error *err);
/* Parse from memory; name is what error messages call the file. */
int inventory_parse(const char *name, const char *buf, size_t len, struct inventory **out,
		    struct dp_error *err);
void inventory_free(struct inventory *inv);
static inline void inventory_freep(struct inventory **inv) { inventory_free(*inv); }
#define _cleanup_inventory_ _cleanup_(inventory_freep)

const struct inv_host *inventory_host(const struct inventory *inv, const char *name);
/* Where ssh goes for name: the inventory host's ssh field when it has one, else name
 * itself (an ssh alias or [user@]host[:port]). inv may be NULL. The one place that
 * maps inventory names to ssh destinations. */
const char *inventory_ssh_destination(const struct inventory *inv, const char *name);
const struct inv_cluster *inventory_cluster(const struct inventory *inv, const char *name);
/* The GRES type for a catalogue chip name, or NULL when gres_mapping has none. */
const char *inventory_gres_type(const struct inventory *inv, const char *chip);
const char *inv_host_type_name(enum inv_host_type t);

#endif
