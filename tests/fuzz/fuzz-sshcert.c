/* SPDX-License-Identifier: MIT */
/* The certificate parser on raw bytes (the wire form), then everything that reads a
 * parsed certificate: the CA signature check, the kind/validity/principal checks and
 * the description used in messages. The same bytes as base64 text go through
 * sshcert_parse_line too. */
#include <stdint.h>

#include "base/base64.h"
#include "transport/sshcert.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void use(const struct sshcert *c)
{
	struct dp_error err;
	struct strbuf sb = STRBUF_INIT;
	(void)sshcert_verify_signature(c, &err);
	(void)sshcert_check(c, SSHCERT_HOST, "box1", false, 1800000000, &err);
	(void)sshcert_check(c, SSHCERT_USER, "alice", true, 0, &err);
	sshcert_describe(c, &sb);
	strbuf_release(&sb);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sshcert c;
	struct dp_error err;
	if (sshcert_parse(data, size, &c, &err) == 0) {
		use(&c);
		/* the line form of the same certificate */
		struct strbuf line = STRBUF_INIT;
		strbuf_adds(&line, c.type);
		strbuf_addch(&line, ' ');
		base64_encode(&line, data, size, true);
		strbuf_adds(&line, " comment\n");
		struct sshcert again;
		if (sshcert_parse_line(line.buf, line.len, &again, &err) == 0)
			sshcert_release(&again);
		strbuf_release(&line);
		sshcert_release(&c);
	}
	if (sshcert_parse_line((const char *)data, size, &c, &err) == 0) {
		use(&c);
		sshcert_release(&c);
	}
	return 0;
}
