/* SPDX-License-Identifier: MIT */
/*
 * An sbatch script read as a job (lib/inventory/sbatch_script.h), aborting on a broken
 * property: a script taken is the command as given, in --launch once, every directive
 * passed on is one line that starts with '-' (it becomes an #SBATCH line of its own),
 * a refusal says where (train.sbatch:LINE:COL) or why, never a crash.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "inventory/jobspec.h"
#include "inventory/sbatch_script.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 16384)
		return 0;
	char *text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	struct jobspec js = { 0 };
	struct dp_error err = { 0 };
	if (sbatch_script_parse(&js, "train.sbatch", text, size, &err) == 0) {
		if (!js.command || strlen(js.command) != size || memcmp(js.command, text, size) ||
		    !jobspec_launch_once(&js))
			abort();
		for (size_t i = 0; js.sbatch && js.sbatch[i]; i++)
			if (js.sbatch[i][0] != '-' || strchr(js.sbatch[i], '\n'))
				abort();
	} else if (!err.msg[0] || (strncmp(err.msg, "train.sbatch", 12) && !strstr(err.msg, "NUL"))) {
		abort();
	}
	jobspec_release(&js);
	free(text);
	return 0;
}
