/* SPDX-License-Identifier: MIT */
/*
 * The YAML inventory of clusters and hosts (format: ../shared/reference/inventory.yaml).
 * Loading validates everything; any problem is a DPE_INPUT error naming
 * file:line:col and the key. Lists keep file order.
 */
#ifndef DISPATCH_INVENTORY_H
#define DISPATCH_INVENTORY_H

#include "base/error.h"
#include "container/container.h"

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
	char *mount;            /* JuiceFS metadata URL, NULL when none (may hold a
				   password: see inv_cluster_secret) */
	char *cache_size, *cache_dir;
	char *all_squash;       /* JuiceFS --all-squash UID:GID, NULL when not set */
	/* The reference's data paths, NULL for its defaults {root}/data, ... (see
	 * inv_cluster_dir) */
	char *data, *checkpoints, *results, *status;
	char *uv_dir;           /* UV_CACHE_DIR on the cluster, NULL: a per-job one */
	/* Credentials, exported into every job as WANDB_API_KEY, WANDB_ENTITY,
	 * WANDB_PROJECT, HF_TOKEN; NULL when not set. Never printed: see
	 * inv_cluster_secret and jobscript's redaction. */
	char *wandb, *wandb_entity, *wandb_project, *hf_token;
	/* A webhook a run POSTs to when it ends for good (dispatch-submit(1) RUNS); a
	 * credential as the others, never printed. NULL when not set. */
	char *notify_url;
	int line, col;
};

/* The cluster's credentials as (environment name, value) pairs: index 0.. until it
 * returns false. Only set values are returned. */
bool inv_cluster_secret(const struct inv_cluster *c, size_t *i, const char **name,
			const char **value);
/* A JuiceFS metadata URL without its password, for juicefs mount with the password in
 * META_PASSWORD: scheme://user:PASSWORD@host... gives scheme://user@host...,
 * scheme://:PASSWORD@host... gives scheme://host... (the userinfo ends at the last '@';
 * its %XX escapes are decoded, as juicefs's URL parser would). 0 with *bare and
 * *password (NULL when the URL has none); -1 with *why (no URL text in it) for a URL
 * whose secret cannot be moved into META_PASSWORD: a query parameter that may carry
 * one (password=, token=, ...), an '@' after a '/', '?' or '#'. Caller frees all. */
int inv_meta_url_split(const char *url, char **bare, char **password, char **why);
/* Whether a metadata URL carries a credential (a password, or a refused form). */
bool inv_meta_url_secret(const char *url);

/* The cluster's data directories as the reference names them: which is "data",
 * "checkpoints", "results" or "status"; the configured path, else {root}/WHICH.
 * Caller frees. */
/* A webhook URL dispatch takes: http:// or https://, at most 2048 characters, no
 * space, control character, quote, backslash, '$', '<' or '>'. */
bool inv_notify_url_ok(const char *url);
#define INV_NOTIFY_URL_WANT "expected an http:// or https:// URL without spaces, quotes, " \
	"backslashes, '$', '<' or '>' (the value is not shown: it is a credential)"

char *inv_cluster_dir(const struct inv_cluster *c, const char *which);

/* plain and slurm hosts are dispatch's; tpu (Cloud TPU VMs through gcloud) and volcano
 * (Kubernetes Volcano jobs) are the reference's: they load, are listed, and are never
 * reached (dispatch drives SSH and SLURM hosts only). */
enum inv_host_type { INV_HOST_PLAIN, INV_HOST_SLURM, INV_HOST_TPU, INV_HOST_VOLCANO };

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
	struct inv_kv *env;             /* exported in every job here; wins over the
					   cluster's on a collision */
	size_t nenv;
	bool no_login_shell;            /* login_shell: false: the bootstrap runs in a plain
					   bash, not bash -l */
	char *gpu_lock_dir;             /* plain: where GPU leases are locked; NULL: default */
	char *notify_url;               /* a run's webhook (over the cluster's); NULL */
	long max_jobs;                  /* plain: dispatch jobs running at once; 0: no cap */
	long busy_gpu_mib;              /* plain: a GPU is busy when a process uses this much
					   (busy_gpu_memory); 0: NVIDIA_SMI_BUSY_MIB */
	enum container_runtime container_runtime;       /* CONTAINER_NONE: no containers */
	char *container_image;          /* the default image of container jobs, or NULL */
	char **container_mounts;        /* strv of "SRC:DST[:ro]", added to every container
					   job here */
	/* slurm only */
	struct inv_partition *partitions;
	size_t npartitions;
	char **cpu_partitions;          /* strv (also spelled partitions_cpu) */
	char *account, *qos, *mem;
	char **exclude;                 /* strv */
	struct inv_kv *annotations;
	size_t nannotations;
	/* tpu and volcano: the keys the reference needs to run one that the file leaves
	 * out (it loads them empty, as its dataclasses default them); strv, NULL none */
	char **missing;
	int line, col;
};

/* The webhook of h's runs: its own notify_url, else its cluster's; NULL. */
const char *inv_notify_url(const struct inv_host *h);

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
	bool has_secrets;               /* a cluster holds a credential */
	unsigned int file_mode;         /* the file's permission bits (inventory_load), 0
					   when parsed from memory */
};

/* The inventory holds credentials and its file is readable by group or others
 * (what dispatch warns about, as ssh does for private keys). */
bool inventory_secrets_exposed(const struct inventory *inv);
/* Whether dispatch can submit to and reach this type of host (plain and slurm). */
bool inv_host_type_reachable(enum inv_host_type t);

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
