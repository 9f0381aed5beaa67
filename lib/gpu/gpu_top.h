/* SPDX-License-Identifier: MIT */
/*
 * `dispatch top`'s samples: the line protocol every backend's sampling script
 * prints ("dispatch-top NODE KIND REST", then a tick line each interval) and the
 * state it builds, node by node and GPU by GPU. Who runs the script is the
 * backend's business: a SLURM job's overlap steps (lib/sched/slurm/slurm_top.h),
 * a plain host's refresh script (lib/sched/plain/plain_top.h).
 *
 * Every node probes `nvidia-smi --help-query-gpu` once for the fields that exist
 * (clocks_event_reasons since driver 535, clocks_throttle_reasons before:
 * nvidia-smi fails a whole query on one unknown field), and then prints
 * `nvidia-smi --query-gpu=... --format=csv,noheader,nounits` rows.
 *
 * GPUs are keyed by UUID (else PCI bus id), never by index: a step with device
 * constraints sees its GPUs renumbered from 0, one without sees all of the node's
 * GPUs, and is filtered to SLURM_STEP_GPUS by minor number (the /dev/nvidiaN that
 * gres.conf names). "[N/A]", "[Not Supported]" and other bracketed answers are
 * null (NAN), never 0: MIG GPUs report no utilisation.
 */
#ifndef DISPATCH_GPU_TOP_H
#define DISPATCH_GPU_TOP_H

#include <stdbool.h>
#include <stddef.h>

#include "base/strbuf.h"

/* --- the job: its nodes and the GPUs it holds on each (its backend asks) ------- */

struct gpu_top_alloc {
	char *node;
	int gpus;               /* GPUs the job holds on it */
};

struct gpu_top_job {
	bool found;             /* scontrol printed a record */
	char *state, *reason;   /* "RUNNING", "None" */
	char *nodes;            /* NodeList, hostlist form */
	struct gpu_top_alloc *alloc; /* one per node, in NodeList order */
	size_t n;
};

void gpu_top_job_release(struct gpu_top_job *j);

/* --- the session ---------------------------------------------------------------- */

/* Shell text that sets q to the fields of gpu_field_name nvidia-smi has here
 * (--help-query-gpu) and prints "fields Q" through p (p KIND ARGS prints one line
 * "dispatch-top NODE KIND ARGS"); an nvidia-smi that fails prints "failed MSG" and
 * exits 0. */
void gpu_top_probe_script(struct strbuf *sb);

/* The fields asked of nvidia-smi (when the node has them), in order. */
enum gpu_field {
	GF_UUID, GF_BUS_ID, GF_INDEX, GF_MINOR, GF_NAME, GF_UTIL, GF_MEM_USED, GF_MEM_TOTAL,
	GF_POWER, GF_POWER_LIMIT, GF_TEMP, GF_THROTTLE, GF_N
};
/* nvidia-smi's name of a field ("clocks_event_reasons.active" for GF_THROTTLE; the
 * node script falls back to "clocks_throttle_reasons.active"). */
const char *gpu_field_name(enum gpu_field f);
/* The field of an nvidia-smi name (old and new throttle names), or -1. */
int gpu_field_of(const char *name);

enum gpu_node_state {
	GPU_NODE_WAITING,       /* nothing heard yet */
	GPU_NODE_OK,
	GPU_NODE_NO_SMI,        /* no nvidia-smi on the node */
	GPU_NODE_FAILED,        /* nvidia-smi failed or printed something else (message) */
	GPU_NODE_ENDED,         /* the step on it ended */
};

struct gpu_row {
	char *node;
	char *key;              /* uuid, else bus id */
	char *uuid, *bus_id, *name;
	long index, minor;      /* -1 when not known */
	double util, mem_used, mem_total, power, power_limit, temp; /* NAN: null */
	char *throttle;         /* decoded reasons ("sw_power_cap,hw_slowdown"), "" none,
				   NULL not known */
	bool in_step;           /* one of the step's GPUs (plain hosts: the job's) */
	bool shared;            /* plain hosts: another user's process uses it too */
	double seen;
};

struct gpu_node {
	char *name;
	int allocated;          /* GPUs the job holds there */
	enum gpu_node_state state;
	char *message;          /* GPU_NODE_FAILED: what nvidia-smi said */
	char *step_gpus, *cuda; /* as the step saw them; NULL until said */
	char *health;           /* the node's health lines (gpu_health_parse reads them) */
	char *minors;           /* "BUS MINOR" lines from the driver's /proc files, for a
				   driver without the minor_number field (580 and later) */
	int fields[GF_N];       /* column of each field in a row, -1 when not asked */
	int nfields;
	double seen;            /* last line from it; 0 never */
};

struct gpu_top {
	struct gpu_node *nodes;
	size_t nnodes;
	struct gpu_row *rows;
	size_t nrows;
	size_t ticks;           /* tick lines seen */
};

void gpu_top_init(struct gpu_top *t, const struct gpu_top_job *j);
void gpu_top_release(struct gpu_top *t);
/* The node a line of the session's output is about (srun -l's "N: " prefix
 * allowed): its index in t->nodes, with *kind at what follows the node's name;
 * GPU_TOP_TICK for the tick line; -1 for any other line (or another node). */
#define GPU_TOP_TICK (-2L)
long gpu_top_line_node(const struct gpu_top *t, const char *line, const char **kind);
/* One line of the session's output (srun -l's "N: " prefix allowed), at time now.
 * Returns true for a tick line (time to show a sample). Other lines are ignored. */
bool gpu_top_feed(struct gpu_top *t, const char *line, double now);

/* A node silent for more than two intervals while it should be sampling. */
bool gpu_node_stale(const struct gpu_node *n, double now, double interval);
/* The rows of node that belong to the step, sorted by bus id, into *out (allocated);
 * none on a node where the job holds no GPUs (the others' GPUs are not its own). */
size_t gpu_top_node_rows(const struct gpu_top *t, const struct gpu_node *n,
			 const struct gpu_row ***out);

/* "0x0000000000000004" as reason words ("sw_power_cap"); "" for none, NULL when
 * not a hex number. Caller frees. */
char *gpu_throttle_words(const char *hex);

#endif
