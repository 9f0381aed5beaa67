/* SPDX-License-Identifier: MIT */
/*
 * A point in time as a user writes it on the command line (jobs --since): an age
 * ("90s", "30m", "12h", "2d", "1w": that long before now) or a local date and time
 * ("2026-11-24", "2026-11-24 13:05", "2026-11-24T13:05:30").
 */
#ifndef DISPATCH_WHEN_H
#define DISPATCH_WHEN_H

#include <stdint.h>

#include "base/error.h"

/* *out: unix seconds. DPE_INPUT for anything else, with a message that names text. */
int when_parse(const char *text, int64_t now, int64_t *out, struct dp_error *err);
/* t (unix seconds) in ISO 8601, UTC, into buf: "2026-12-01T21:03:12Z"; "" when t < 0
 * or cannot be written (--json's times). */
void when_iso(int64_t t, char buf[32]);

#endif
