/* SPDX-License-Identifier: MIT */
/*
 * The GPUs of a plain host and which are busy, from
 *   nvidia-smi --query-gpu=uuid,name,memory.total --format=csv,noheader,nounits
 *   nvidia-smi --query-compute-apps=gpu_uuid,used_memory --format=csv,noheader,nounits
 * (fields separated by ", "; GPU names hold no commas). A GPU is busy when one of its
 * compute processes uses NVIDIA_SMI_BUSY_MIB or more (a host's busy_gpu_memory:
 * nvidia_gpus_busy_at), or an amount nvidia-smi cannot tell ("[N/A]", "[Not
 * Supported]"): per GPU, not all-or-nothing. (The reference counts a GPU busy at 10%
 * of its memory used by anyone; a process's own use tells a driver's or a monitor's
 * small allocation from a job, whatever the card's size.)
 *
 * nvidia_smi_chip maps a product name to the chip catalogue (lib/inventory/chips.h), by whole
 * words of the name (split at blanks and '-'), so L4, L40 and L40S, A10, A10G and
 * A100, H200 and GH200 cannot be taken for one another; the A100's form (PCIe, else
 * SXM4) comes from its name and its size (80 or 40 GB) from memory.total, a V100's
 * from memory.total. A "Ti" or "SUPER" after the model is another card (no match).
 */
#ifndef DISPATCH_NVIDIA_SMI_H
#define DISPATCH_NVIDIA_SMI_H

#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"

#define NVIDIA_SMI_BUSY_MIB 100

struct nvidia_gpu {
	int index;              /* line order, as nvidia-smi numbers them */
	char *uuid;
	char *name;             /* "NVIDIA A100-SXM4-80GB" */
	long memory_mib;        /* -1 when not a number */
	const char *chip;       /* catalogue name, or NULL when none matches */
	long used_mib;          /* by compute processes; -1 when nvidia-smi cannot tell */
	long max_proc_mib;      /* the most one of them uses; -1 when one cannot be told */
	int processes;
	bool busy;
	bool leased;            /* a dispatch job leases it (host_facts) */
};

struct nvidia_gpus {
	struct nvidia_gpu *gpus;
	size_t n;
};

/* Parses the --query-gpu lines (gpus) and the --query-compute-apps lines (apps, may
 * be NULL or empty) into out. -1 with DPE_INPUT when a --query-gpu line does not
 * have three fields (e.g. nvidia-smi printed an error instead: the message quotes
 * the line). Compute-app lines naming an unknown GPU are ignored. */
int nvidia_smi_parse(const char *gpus, const char *apps, struct nvidia_gpus *out,
		     struct dp_error *err);
void nvidia_gpus_release(struct nvidia_gpus *g);
/* busy again with a host's own threshold (its busy_gpu_memory, MiB; <= 0: the
 * default NVIDIA_SMI_BUSY_MIB): a process using that much or more, or an amount
 * that cannot be told, or a dispatch lease. */
void nvidia_gpus_busy_at(struct nvidia_gpus *g, long busy_mib);

/* The catalogue chip for a product name and its memory.total (MiB), or NULL. */
const char *nvidia_smi_chip(const char *name, long memory_mib);

#endif
