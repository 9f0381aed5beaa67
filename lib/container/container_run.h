/* SPDX-License-Identifier: MIT */
/*
 * How a job runs in its image (lib/container/container.h names the runtimes): the
 * words that wrap the bootstrap, on the srun line of sbatch.sh or in a plain host's
 * container.sh, and the bootstrap's check that it really is inside.
 *
 *   pyxis         srun ... --container-image=IMG --container-mounts=M
 *                 --container-workdir=W --no-container-mount-home
 *                 --no-container-remap-root /bin/bash BOOTSTRAP
 *   apptainer     apptainer exec [--nv] --no-home --bind M --pwd W IMG bash BOOTSTRAP
 *   charliecloud  ch-run -b SRC:DST ... -c W IMG -- bash BOOTSTRAP
 *   podman-hpc    podman-hpc run --rm [--gpu] --network=host --ipc=host -v ... -w W
 *                 -e ... IMG bash BOOTSTRAP
 *   podman/docker run --rm --name dispatch-JOB --pull=never --network=host --ipc=host
 *                 [--device nvidia.com/gpu=all | --gpus all] -v ... -w W -e ... IMG
 *                 bash BOOTSTRAP
 *
 * M: the cluster's root, work, log and share directories at the same paths, then the
 * host's container_mounts, then the job's --container-mounts (and, for Pyxis, the
 * stage directory at CONTAINER_MARKER, which the bootstrap looks for).
 */
#ifndef DISPATCH_CONTAINER_RUN_H
#define DISPATCH_CONTAINER_RUN_H

#include "base/strbuf.h"
#include "inventory/inventory.h"
#include "inventory/jobspec.h"

/* Where Pyxis mounts the stage directory: the bootstrap is inside when it is there. */
#define CONTAINER_MARKER "/run/dispatch-stage"

/* The image the job runs in on host: --container-image, else the host's
 * container_image unless --no-container; NULL: none (the job runs on the host). */
const char *container_job_image(const struct jobspec *spec, const struct inv_host *host);

/* The checks that need spec and host together (DPE_INPUT): an image on a host without
 * a runtime, --module with an image, a relative image file for Pyxis. */
int container_job_check(const struct jobspec *spec, const struct inv_host *host,
			struct dp_error *err);

/* An image as the runtime takes it: for Pyxis, a registry reference
 * "registry.example.com/path:tag" becomes "registry.example.com#path:tag" (enroot's
 * form). Caller frees. */
char *container_image_ref(enum container_runtime rt, const char *image);

/* Appends the words that run bootstrap_path inside the image (no leading "srun"),
 * ending with the bootstrap's path and no newline. gpus: the job has GPUs. */
void container_command(struct strbuf *sb, const struct jobspec *spec,
		       const struct inv_host *host, const char *bootstrap_path, bool gpus);

/* The checks on the host before a container job is submitted (shell text, run in
 * the submission's first command): Pyxis in srun, the runtime on PATH, the image file
 * (or, for podman and docker, the image) there. Prints a MARK_PREFLIGHT line for the
 * first that fails; nothing when the job has no image. */
void container_preflight_command(struct strbuf *sb, const struct jobspec *spec,
				 const struct inv_host *host);
/* What that line means: -1 with the error (DPE_NOTFOUND: an image or the runtime is
 * missing; DPE_FAIL: srun has no --container-image), else 0. */
int container_preflight_parse(const char *out, const struct jobspec *spec,
			      const struct inv_host *host, struct dp_error *err);

/* The bootstrap's lines that fail when it is not inside the image, and log the
 * image's os-release once per node. */
void container_inside_check(struct strbuf *sb, const struct jobspec *spec,
			    const struct inv_host *host);

#endif
