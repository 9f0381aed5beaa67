/* SPDX-License-Identifier: MIT */
/*
 * A sweep (dispatch-submit(1) SWEEPS), a job option: one job run once per combination of
 * parameter values, from --sweep NAME=V1,V2,... and --sweep NAME=A..B[:STEP]
 * (repeatable: the product of them all, the last parameter varying fastest, as
 * nested loops in the order given), or from a sweep file (--sweep-file): its grid:
 * the same product, or its list: the tasks one by one, each with its own values.
 *
 *	struct sweep sw = SWEEP_INIT;
 *	if (sweep_add(&sw, "lr=0.1,0.01", &err) < 0 || sweep_add(&sw, "seed=1..3", &err) < 0)
 *		...                                     // err says what and how to fix it
 *	sw.ntasks                                       // 6
 *	sweep_value(&sw, 4, 1)                          // "2": task 4 is lr=0.01, seed=2
 *	char *cmd = sweep_command(&sw, "python train.py --lr {lr} --seed {seed}");
 *	        // "python train.py --lr \"${DISPATCH_PARAM_LR}\" --seed \"${DISPATCH_PARAM_SEED}\""
 *	sweep_release(&sw);
 *
 * Each task of the job sees DISPATCH_SWEEP_ID, DISPATCH_SWEEP_INDEX, DISPATCH_SWEEP_SIZE
 * and DISPATCH_PARAM_<NAME> (upper-cased); lib/jobs/jobscript.c writes the table (sweep_script).
 */
#ifndef DISPATCH_SWEEP_H
#define DISPATCH_SWEEP_H

#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"
#include "base/strbuf.h"

/* At most this many tasks in one sweep, and values of one parameter. */
#define SWEEP_MAX_TASKS 100000
#define SWEEP_MAX_VALUES 10000
/* and at most this many bytes of a sweep file */
#define SWEEP_FILE_MAX (16 << 20)

struct sweep_param {
	char *name;             /* as given: lr */
	char *env;              /* DISPATCH_PARAM_LR */
	char **values;          /* strv */
	size_t n;
};

struct sweep {
	struct sweep_param *params;
	size_t nparams;
	size_t ntasks;          /* grid: the product of the counts; list: the tasks; 0: none */
	bool list;              /* a list (a sweep file's list:): every parameter has ntasks
				   values, task i takes values[i] of each; else a grid */
};
#define SWEEP_INIT { .params = NULL, .nparams = 0, .ntasks = 0, .list = false }

/* Adds one parameter from "NAME=V1,V2,..." or "NAME=A..B[:STEP]" (integers, A <= B,
 * STEP > 0). NAME: letters, digits and '_', not first a digit; each name once. 0, or
 * -1 with err (DPE_INPUT) saying what is wrong with spec, sw as it was (a list sweep
 * takes no more parameters). */
int sweep_add(struct sweep *sw, const char *spec, struct dp_error *err);
/* Whether spec alone is a valid --sweep value (for the job options' check). */
bool sweep_spec_valid(const char *spec);

/* A sweep file (YAML; name is what messages call it), into sw (empty, SWEEP_INIT):
 *
 *	grid:                   # the product, nested loops in the order written
 *	  lr: [0.1, 0.01]
 *	  seed: "1..3"          # a scalar A..B[:STEP]: integers, as --sweep's range
 *	list:                   # or: one task per entry, in order, the same names each
 *	  - {lr: 0.1, seed: 1}
 *
 * Exactly one of grid: and list:. Names as sweep_add's; values are scalars kept as
 * written ("0.10", the text inside quotes), each at least a quoted "" (an empty plain
 * one is refused); at most SWEEP_MAX_VALUES values a grid parameter and
 * SWEEP_MAX_TASKS tasks. 0, or -1 with err (DPE_INPUT) "NAME:LINE:COL: what is wrong
 * (how to fix it)", sw as it was. */
int sweep_parse_yaml(struct sweep *sw, const char *name, const char *buf, size_t len,
		     struct dp_error *err);
/* The same from a local file (DPE_INPUT too when it cannot be read or is larger than
 * SWEEP_FILE_MAX). */
int sweep_load_file(struct sweep *sw, const char *path, struct dp_error *err);

/* The value of parameter p in task i (0 <= i < ntasks), grid or list. */
const char *sweep_value(const struct sweep *sw, size_t i, size_t p);

/* command (shell text) with each {NAME} of a parameter (not ${NAME}: the shell's own)
 * and {index} replaced by a reference to the task's variable (DISPATCH_PARAM_NAME,
 * DISPATCH_SWEEP_INDEX), quoted for where it stands: bare ("${V}"), in single quotes
 * ('"${V}"') or in double quotes (${V}), so it is that value as part of its word
 * (--lr {lr}, 'run-{lr}', "--name={lr}"). The value itself never enters the shell
 * text: in quotes this reading gets wrong (nested in $(...)), it is still only a
 * variable's expansion, never run. Other braces stay as they are. Caller frees. */
char *sweep_command(const struct sweep *sw, const char *command);

/* The bootstrap's part that sets task $DISPATCH_SWEEP_INDEX's variables, every value
 * quoted (a case over the task index), then the command (dispatch_command, from
 * sweep_command: the same text for every task). */
void sweep_script(struct strbuf *sb, const struct sweep *sw, const char *command);

/* The sweep as JSON, for the ledger (caller frees):
 *	{"grid":[{"name":"lr","values":["0.1","0.01"]},...]}
 *	{"list":{"names":["lr","seed"],"tasks":[["0.1","1"],["0.01","7"]]}}
 * and a sweep (sw empty) read back from that, or from the form of the ledgers before
 * sweep files, a JSON array of --sweep values (["lr=0.1,0.01","seed=1..3"]): 0, or -1
 * with err (DPE_INPUT) when it is neither or a name or value is refused. */
char *sweep_json(const struct sweep *sw);
int sweep_from_json(struct sweep *sw, const char *json, struct dp_error *err);

/* Which task of a sweep submitted as job array job_id the row row_id ("ID_K") is:
 * true with *index K (K < ntasks), else false. */
bool sweep_task_of(const struct sweep *sw, const char *job_id, const char *row_id,
		   size_t *index);
/* "lr=0.1 seed=1": task i's values, each NAME=VALUE, control characters escaped
 * (printable()). Caller frees. */
char *sweep_task_text(const struct sweep *sw, size_t i);

void sweep_release(struct sweep *sw);

#endif
