/* SPDX-License-Identifier: MIT */
/*
 * `dispatch hosts show HOST --health`: is a node or GPU fit to run jobs, and if not,
 * who said so and when.
 *
 * SLURM: `sinfo -N -h -o '%N|%T|%H|%u|%E'`: per node its state, when the reason
 * was set (%H, "Unknown" when none), by whom (%u) and the reason itself (%E, last:
 * free text that may hold '|'; `sinfo -R` cuts it at 20 characters). sinfo -N prints
 * a node once per partition: the first line of each counts.
 *
 * Plain hosts: nvidia-smi's health fields (probed with --help-query-gpu: uncorrected
 * ECC errors, pending page retirement, pending and failed row remaps, the
 * gpu_recovery_action of recent drivers; [N/A] is unknown) and the XID lines of the
 * kernel log where this user may read it: `journalctl -k`, else `dmesg`, else
 * unavailable. Every line is "dispatch-health KIND REST".
 */
#ifndef DISPATCH_NODE_HEALTH_H
#define DISPATCH_NODE_HEALTH_H

#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"
#include "base/strbuf.h"

struct cJSON;
struct ssh_session;

/* sinfo's query, then "dispatch-sinfo-exit N". */
void node_health_command(struct strbuf *sb);

struct node_health {
	char *node, *state;
	char *since;            /* when the reason was set ("2026-11-24T20:52:48"); NULL none */
	char *by;               /* who set it; NULL none */
	char *reason;           /* NULL none */
};
/* One entry per node, in sinfo's order; lines that are not such rows are skipped. */
size_t node_health_parse(const char *out, struct node_health **nodes);
void node_health_free(struct node_health *n, size_t count);

/* The GPU health script for a plain host. */
void gpu_health_command(struct strbuf *sb);

/* nvidia-smi's health fields, in the order the script probes them. */
enum gpu_health_field {
	GH_UUID, GH_BUS_ID, GH_ECC_VOLATILE, GH_ECC_AGGREGATE, GH_RETIRED_PENDING,
	GH_REMAP_PENDING, GH_REMAP_FAILURE, GH_RECOVERY, GH_N
};
const char *gpu_health_field_name(enum gpu_health_field f);

struct gpu_health {
	char *v[GH_N];          /* as nvidia-smi gave them; NULL: not asked or [N/A] */
	bool unhealthy;         /* an uncorrected ECC error, a pending or failed remap or
				   retirement, a recovery action other than None */
};

struct gpu_health_report {
	bool no_smi;            /* no nvidia-smi on the host */
	char *error;            /* nvidia-smi's failure, NULL when it answered */
	struct gpu_health *gpus;
	size_t ngpus;
	char *xid_source;       /* "journalctl", "dmesg", "unavailable"; NULL not said */
	char **xid;             /* strv: the last XID lines of the kernel log */
};
void gpu_health_parse(const char *out, struct gpu_health_report *r);
void gpu_health_release(struct gpu_health_report *r);
/* The report as JSON (`hosts show --health --json`, `top --health --json`). */
struct cJSON *gpu_health_json(const struct gpu_health_report *g);

/* --- one host's health, asked over its connection ------------------------------ */

struct host_health {
	struct node_health *nodes;      /* SLURM: sinfo's */
	size_t nnodes;
	char *sinfo_error;              /* sinfo failed: its message */
	struct gpu_health_report gpus;  /* a plain host's */
};

/* Asks the host of ss for its nodes' health (slurm: sinfo's) or its GPUs' (a plain
 * host): 0, or -1 and err (the exchange failed; sinfo's own failure is h's
 * sinfo_error). host_health_release frees h either way. */
int host_health_fetch(struct ssh_session *ss, bool slurm, struct host_health *h,
		      struct dp_error *err);
void host_health_release(struct host_health *h);

#endif
