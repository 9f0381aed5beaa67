/* SPDX-License-Identifier: MIT */
/*
 * sweep_add (--sweep values) and sweep_command, aborting on a broken property: a
 * refusal is DPE_INPUT with a message and leaves the sweep as it was; an accepted
 * spec adds one parameter whose every value is non-empty, and the product stays
 * within SWEEP_MAX_TASKS; a command without braces comes back as it was.
 */
#include <stdint.h>
#include <string.h>

#include "base/util.h"
#include "inventory/sweep.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 512 || memchr(data, 0, size))
		return 0;
	char *text = xstrndup((const char *)data, size);
	struct sweep sw = SWEEP_INIT;
	struct dp_error err = { 0 };
	sweep_add(&sw, "a=1,2", NULL);
	if (sweep_add(&sw, text, &err) < 0) {
		if (err.kind != DPE_INPUT || !err.msg[0] || sw.nparams != 1 || sw.ntasks != 2)
			abort();
	} else {
		const struct sweep_param *p = &sw.params[1];
		if (sw.nparams != 2 || !p->n || sw.ntasks != 2 * p->n || sw.ntasks > SWEEP_MAX_TASKS)
			abort();
		for (size_t i = 0; i < p->n; i++)
			if (!p->values[i][0])
				abort();
		char *cmd = sweep_command(&sw, "echo plain");
		if (strcmp(cmd, "echo plain") != 0)
			abort();
		free(cmd);
		cmd = sweep_command(&sw, text);
		free(cmd);
	}
	sweep_release(&sw);
	free(text);
	return 0;
}
