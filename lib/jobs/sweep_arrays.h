/* SPDX-License-Identifier: MIT */
/*
 * A sweep's tasks as SLURM job arrays (dispatch-submit(1) SWEEPS): SLURM refuses an
 * array task id at or above the cluster's MaxArraySize (scontrol show config; 1001
 * by default), so a sweep with more tasks goes as several arrays. Array k runs the
 * sweep indexes in [first, first + max) that are asked for, as the task ids
 * index - first; each task finds its index as SLURM_ARRAY_TASK_ID + first.
 *
 *	struct sweep_array *a;
 *	size_t n = sweep_arrays(NULL, 10, 4, &a);       // all of a 10-task sweep
 *	// n == 3: {0, "0-3", "0-3"}, {4, "4-7", "0-3"}, {8, "8-9", "0-1"}
 *	size_t idx[] = { 3, 7, 12 };
 *	n = sweep_arrays(idx, 3, 5, &a);                // a retry of tasks 3, 7 and 12
 *	// n == 2: {3, "3,7", "0,4"}, {12, "12", "0"}
 *	sweep_arrays_free(a, n);
 *
 * The partition is greedy from the smallest index: each array starts at the first
 * index the arrays before it left and takes every asked index below first + max,
 * which makes as few arrays as any partition can.
 */
#ifndef DISPATCH_SWEEP_ARRAYS_H
#define DISPATCH_SWEEP_ARRAYS_H

#include <stddef.h>

#include "base/strbuf.h"

/* SLURM's default MaxArraySize, assumed when the cluster's is not known. */
#define SWEEP_ARRAY_DEFAULT_MAX 1001

struct sweep_array {
	size_t first;   /* the sweep index of the array's task 0 */
	size_t ntasks;  /* how many tasks it runs */
	char *tasks;    /* the sweep indexes it runs, as array spec text: "4-7", "3,7" */
	char *ids;      /* its task ids (index - first), the same form: sbatch's --array */
};

/* The arrays for the sweep indexes idx[0..n) (ascending, each once), or with idx
 * NULL for every index 0..n-1, with every task id below max (max 0: 1). Returns how
 * many arrays, 0 when n is 0. Free with sweep_arrays_free. */
size_t sweep_arrays(const size_t *idx, size_t n, size_t max, struct sweep_array **out);
void sweep_arrays_free(struct sweep_array *a, size_t n);

/* Array spec text for ascending indexes (a run of two or more written A-B): appended
 * to sb, each minus base. */
void sweep_array_spec(struct strbuf *sb, const size_t *idx, size_t n, size_t base);

#endif
