/* SPDX-License-Identifier: MIT */
/*
 * A notebook's poll answer (lib/notebook.h), as SLURM's and as a plain host's,
 * aborting on a broken property: a ready answer has a node, an address and a port
 * from 1 to 65535; an exit status is -1 or 0..255; a parsed answer has a state.
 */
#include <stdint.h>

#include "notebook.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 8192)
		return 0;
	char *text = xstrndup((const char *)data, size);
	for (int plain = 0; plain < 2; plain++) {
		struct notebook_poll r;
		int ok = notebook_parse_poll(text, plain, &r);
		if (r.ready && (!r.node || !r.addr || r.port < 1 || r.port > 65535))
			abort();
		if (r.exit_status < -1 || r.exit_status > 255)
			abort();
		if (ok == 0 && !r.state)
			abort();
		notebook_state_alive(r.state);
		notebook_poll_release(&r);
	}
	free(text);
	return 0;
}
