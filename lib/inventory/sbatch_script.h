/* SPDX-License-Identifier: MIT */
/*
 * An existing sbatch script as a job (dispatch-submit(1) --sbatch-script FILE): its
 * #SBATCH lines, read as sbatch reads them (up to the first line that is neither
 * blank nor a comment; several options a line; "# ..." after them a comment), set
 * the job options of the same meaning (--nodes, --time, -p, ...); any other, or one
 * whose value dispatch does not read (--gres=gpu:1, --nodes=2-4), is passed to sbatch
 * as written (--sbatch). The whole script is the command, run once in the batch
 * script (--launch once) so that its srun and mpirun lines get the allocation. A bash
 * or sh script only: the first line is its #!.
 */
#ifndef DISPATCH_SBATCH_SCRIPT_H
#define DISPATCH_SBATCH_SCRIPT_H

#include <stddef.h>

#include "base/error.h"

struct jobspec;

/* The script text[0..len) (name for messages: NAME:LINE:COL) into js: its
 * directives, command and --launch once. 0, or -1 with err (DPE_INPUT). */
int sbatch_script_parse(struct jobspec *js, const char *name, const char *text, size_t len,
			struct dp_error *err);
/* js's --sbatch-script, read and applied under js: what js sets already (the
 * command line, the job file) wins over the script's directives. 0 when js names
 * none; -1 with err (DPE_INPUT) when it cannot be read or parsed, or js has a
 * command of its own. */
int jobspec_apply_sbatch_script(struct jobspec *js, struct dp_error *err);

#endif
