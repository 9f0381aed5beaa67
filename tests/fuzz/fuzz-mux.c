/* SPDX-License-Identifier: MIT */
/* The mux message parser over a stream of master messages: every message in turn,
 * as the client reads them, with the sizes it returns checked against the input. The
 * corpus holds what OpenSSH 9.2's master sent (captured with strace from
 * tests/helpers/mux-client) and synthetic-* streams for the rarer messages. */
#include <stdint.h>

#include "transport/mux.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t off = 0;
	for (;;) {
		struct mux_msg msg;
		struct dp_error err;
		ssize_t n = mux_parse(data + off, size - off, &msg, &err);
		if (n <= 0)
			break;
		if ((size_t)n > size - off || n < 8 || strlen(msg.reason) >= sizeof(msg.reason))
			abort();
		off += (size_t)n;
	}
	/* A request carrying the input as its strings must parse back to its own size. */
	if (size > 4096)
		return 0;
	char *s = xstrndup((const char *)data, size);
	const char *env[] = { s, NULL };
	struct strbuf sb = STRBUF_INIT;
	struct mux_exec x = { .command = s, .subsystem = size & 2, .pty = size & 1, .term = s,
			      .env = env };
	mux_put_new_session(&sb, 1, &x);
	mux_put_stdio_fwd(&sb, 2, s, (uint32_t)size);
	struct mux_msg msg;
	ssize_t a = mux_parse(sb.buf, sb.len, &msg, NULL);
	if (a <= 0 || msg.type != MUX_C_NEW_SESSION ||
	    mux_parse(sb.buf + a, sb.len - (size_t)a, &msg, NULL) != (ssize_t)(sb.len - (size_t)a))
		abort();
	strbuf_release(&sb);
	free(s);
	return 0;
}
