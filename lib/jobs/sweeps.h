/* SPDX-License-Identifier: MIT */
/*
 * A sweep as one object (dispatch-submit(1) SWEEPS): the rows the ledger holds of it
 * (one SLURM job array, several when it was split or retried, or a plain host's run
 * per task), and which of its tasks each row of a query's answer is, so that status,
 * wait, cancel and logs take the sweep's id as they take a job's.
 *
 *	char *id;
 *	sweeps_resolve(l, "sweep-3f2a", &id, &err);     // the one sweep the prefix names
 *	ledger_find_sweep(l, id, &rows, &n, &err);
 *	...                                             // query each row's job (jobs_query)
 *	struct sweep_task *tasks = xcalloc(size, ...);
 *	sweeps_take(&rows[k], answer_row, tasks, size); // for every row of the answers
 */
#ifndef DISPATCH_SWEEPS_H
#define DISPATCH_SWEEPS_H

#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"
#include "jobs/job_state.h"
#include "ledger.h"

/* Whether arg has the shape of a sweep's id or a prefix of one ("sweep-" and hex). */
bool sweeps_is_ref(const char *arg);
/* The id of the one sweep in the ledger that arg is, or starts: 0 with *id (caller
 * frees); -1 with err: DPE_NOTFOUND (none), DPE_INPUT (several: it lists them). */
int sweeps_resolve(struct ledger *l, const char *arg, char **id, struct dp_error *err);

/* The indexes spec names ("0-9", "3,7", "0-5%2", SLURM's array syntax; "[...]"
 * around it taken off) into set[0..size) (true for each); false when spec is not
 * such a list or names an index >= size. */
bool sweeps_parse_tasks(const char *spec, bool *set, size_t size);

/* One task of a sweep as the answers showed it: the row that ran it last (a retry's
 * over the first run's) and its state. */
struct sweep_task {
	const struct ledger_job *rec;   /* NULL: no answer named it */
	const struct job_state *st;
	char *job;                      /* "4242_3", a plain run's stage name */
};

/* Which tasks of the sweep of rec (size tasks) the answer row st is, each into
 * tasks[] unless a newer ledger row holds it already: an array's task ("ID_K": index
 * K + rec's sweep_first), its pending rest ("ID_[4-9%2]"), a plain run. Returns how
 * many tasks it took. */
size_t sweeps_take(const struct ledger_job *rec, const struct job_state *st,
		   struct sweep_task *tasks, size_t size);
void sweep_tasks_free(struct sweep_task *tasks, size_t size);

/* The newest of rows[0..n) (a sweep's, oldest first) that runs task k; NULL: none. */
const struct ledger_job *sweeps_row_of(const struct ledger_job *rows, size_t n, size_t k);

/* The job a task is, "4242_3" or a stage name, for rec's row (task: its index). */
char *sweeps_task_job(const struct ledger_job *rec, size_t task);

#endif
