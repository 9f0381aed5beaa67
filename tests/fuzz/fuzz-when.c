/* SPDX-License-Identifier: MIT */
/*
 * when_parse (jobs --since), aborting on a broken property: an age is never after
 * now; a date that parses gives back its own fields through localtime; a failure
 * is DPE_INPUT with a message and leaves *out alone.
 */
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "base/util.h"
#include "base/when.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 64)
		return 0;
	char *text = xstrndup((const char *)data, size);
	const int64_t now = 1795000000;
	int64_t out = -42;
	struct dp_error err = { 0 };
	if (when_parse(text, now, &out, &err) < 0) {
		if (out != -42 || err.kind != DPE_INPUT || !err.msg[0])
			abort();
	} else if (strlen(text) > 4 && text[4] == '-') {
		time_t t = (time_t)out;
		struct tm tm;
		char back[48];
		if (!localtime_r(&t, &tm))
			abort();
		snprintf(back, sizeof(back), "%04d-%02d-%02d", tm.tm_year + 1900, tm.tm_mon + 1,
			 tm.tm_mday);
		if (strncmp(back, text, 10) != 0)
			abort();
	} else if (out > now) {
		abort();
	}
	free(text);
	return 0;
}
