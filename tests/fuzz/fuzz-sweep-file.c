/* SPDX-License-Identifier: MIT */
/*
 * sweep_parse_yaml (--sweep-file), aborting on a broken property: a refusal is
 * DPE_INPUT with a message that starts "fuzz.yaml:LINE:COL: " and leaves the sweep as
 * it was; an accepted file gives 1 to SWEEP_MAX_TASKS tasks, parameters with valid,
 * distinct variables and every value of every task (a list: ntasks values each; a
 * grid: the product of the counts), and the ledger's JSON (sweep_json) reads back
 * (sweep_from_json) to the same tasks; a command without braces comes back as it was.
 */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "base/util.h"
#include "inventory/sweep.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_refusal(const struct dp_error *err, const struct sweep *sw)
{
	int line = 0, col = 0, used = 0;
	if (err->kind != DPE_INPUT || sw->nparams != 1 || sw->ntasks != 2 ||
	    sscanf(err->msg, "fuzz.yaml:%d:%d: %n", &line, &col, &used) != 2 || line < 1 ||
	    col < 1 || !used || !err->msg[used])
		abort();
}

static void check_sweep(const struct sweep *sw)
{
	if (!sw->nparams || !sw->ntasks || sw->ntasks > SWEEP_MAX_TASKS)
		abort();
	size_t product = 1;
	for (size_t p = 0; p < sw->nparams; p++) {
		const struct sweep_param *q = &sw->params[p];
		if (!q->n || strv_len(q->values) != q->n || !startswith(q->env, "DISPATCH_PARAM_") ||
		    isdigit((unsigned char)q->name[0]) || streq(q->name, "index"))
			abort();
		for (const char *c = q->name; *c; c++)
			if (!isalnum((unsigned char)*c) && *c != '_')
				abort();
		for (size_t o = 0; o < p; o++)
			if (streq(sw->params[o].env, q->env))
				abort();
		if (sw->list ? q->n != sw->ntasks : q->n > SWEEP_MAX_VALUES)
			abort();
		product *= q->n;
	}
	if (!sw->list && product != sw->ntasks)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 65536)
		return 0;
	struct sweep sw = SWEEP_INIT;
	struct dp_error err = { 0 };
	sweep_add(&sw, "keep=1,2", NULL);
	if (sweep_parse_yaml(&sw, "fuzz.yaml", (const char *)data, size, &err) < 0) {
		check_refusal(&err, &sw);
		sweep_release(&sw);
		return 0;
	}
	check_sweep(&sw);
	char *json = sweep_json(&sw);
	struct sweep back = SWEEP_INIT;
	if (sweep_from_json(&back, json, &err) < 0 || back.list != sw.list ||
	    back.nparams != sw.nparams || back.ntasks != sw.ntasks)
		abort();
	for (size_t i = 0; i < sw.ntasks; i++)
		for (size_t p = 0; p < sw.nparams; p++)
			if (!streq(sweep_value(&sw, i, p), sweep_value(&back, i, p)))
				abort();
	char *cmd = sweep_command(&sw, "echo plain");
	if (!streq(cmd, "echo plain"))
		abort();
	free(cmd);
	char *text = sweep_task_text(&back, 0);
	free(text);
	free(json);
	sweep_release(&back);
	sweep_release(&sw);
	return 0;
}
