/* SPDX-License-Identifier: MIT */
/*
 * Containers as the inventory and the job options name them: the runtimes a host may
 * have (container_runtime) and the mount lists of container_mounts and
 * --container-mounts, "SRC:DST[:ro][,SRC:DST[:ro]...]" as Pyxis takes them.
 */
#ifndef DISPATCH_CONTAINER_H
#define DISPATCH_CONTAINER_H

#include "base/error.h"

enum container_runtime {
	CONTAINER_NONE,
	CONTAINER_PYXIS,        /* srun --container-image (Pyxis/Enroot) */
	CONTAINER_APPTAINER,
	CONTAINER_SINGULARITY,
	CONTAINER_CHARLIECLOUD, /* ch-run */
	CONTAINER_PODMAN_HPC,
	CONTAINER_PODMAN,
	CONTAINER_DOCKER,
};

/* "none", "pyxis", ..., as the inventory spells them. */
const char *container_runtime_name(enum container_runtime r);
/* The runtime of that name; -1 when there is none. */
int container_runtime_from_name(const char *name);
/* The runtimes' names, ", "-separated, for messages. */
const char *container_runtime_names(void);
/* Runs through srun's own options or needs SLURM around it: pyxis, podman-hpc. */
bool container_runtime_slurm_only(enum container_runtime r);
/* A plain host's runtime (podman, docker): not under srun. */
bool container_runtime_plain_only(enum container_runtime r);

struct container_mount {
	char *src, *dst;
	bool ro;
};

/* Appends the mounts of one list (all of them, or none on an error) ("SRC:DST[:ro]" items joined by ','; SRC and DST
 * absolute paths, or starting with ~/ or $VAR, without ',' or ':'; the flag "ro" or
 * "rw") to *mounts. -1 with a DPE_INPUT error saying which item is wrong and why
 * (what is what the message calls the list, e.g. "--container-mounts"). */
int container_mounts_parse(const char *s, const char *what, struct container_mount **mounts,
			   size_t *n, struct dp_error *err);
/* A list container_mounts_parse accepts. */
bool container_mounts_valid(const char *s);
void container_mounts_free(struct container_mount *mounts, size_t n);

#endif
