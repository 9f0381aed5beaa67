/* SPDX-License-Identifier: MIT */
/*
 * An inventory entry for a host from what it has (lib/host_facts.h): what
 * `dispatch hosts discover` prints. A SLURM host gets its GPU partitions (the
 * default one marked), its CPU-only partitions, and a chips: limit of the cluster's
 * GPUs for each GRES type the inventory's gres_mapping names; a plain host gets its
 * GPUs counted per catalogue chip. What cannot go in the entry (a GRES type no
 * gres_mapping names, untyped GPUs, a GPU model not in the chip catalogue) is said
 * in YAML comments, and listed as unmapped.
 *
 * The YAML is ready to paste under hosts:, with comments; the fields are the same
 * facts for a program (the --json document).
 */
#ifndef DISPATCH_HOST_ENTRY_H
#define DISPATCH_HOST_ENTRY_H

#include <stdbool.h>
#include <stddef.h>

#include "base/strbuf.h"
#include "host_facts.h"

struct inventory;

struct host_entry_gpus {
	char *type;             /* GRES type, NULL when untyped */
	int total;
};

struct host_entry_partition {
	char *name;
	bool is_default;
	struct host_entry_gpus *gpus;   /* per GRES type, in the order SLURM lists them */
	size_t ngpus;
};

struct host_entry_chip {
	char *chip;             /* catalogue name */
	int count;
};

/* GPUs the entry cannot name: a SLURM GRES type without gres_mapping (gres_type,
 * NULL for untyped), or a plain host's model outside the catalogue (name, memory). */
struct host_entry_unmapped {
	char *gres_type;
	char *name;
	long memory_mib;
	int count;
};

struct host_entry {
	char *name;             /* the inventory key: "user@box:22" gives "box" */
	char *ssh;              /* the destination as given */
	const char *type;       /* "slurm" or "plain" */
	char *cluster;          /* the inventory's, or NULL when it cannot tell */
	struct host_entry_partition *partitions; /* SLURM: the partitions with GPUs */
	size_t npartitions;
	char **cpu_partitions;  /* strv: SLURM partitions without GPUs; may be NULL */
	struct host_entry_chip *chips;
	size_t nchips;
	struct host_entry_unmapped *unmapped;
	size_t nunmapped;
	struct strbuf yaml;     /* the entry, with comments */
};

/* The entry for host (a destination as the user gave it) from its facts; inv may be
 * NULL (then gres_mapping is empty and the cluster unknown). */
void host_entry_make(const struct inventory *inv, const char *host, const struct host_facts *f,
		     struct host_entry *e);
void host_entry_release(struct host_entry *e);

/* The entry as `hosts discover --json` gives it: the fields in the order of the
 * text (a SLURM entry's partitions first, a plain one's chips), then the YAML. */
struct cJSON *host_entry_json(const struct host_entry *e);

#endif
