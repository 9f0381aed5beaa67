/* SPDX-License-Identifier: MIT */
/* when_parse: ages and local dates as jobs --since takes them. */
#include <stdlib.h>
#include <time.h>

#include "base/when.h"
#include "unit.h"

static int64_t local(int y, int mo, int d, int h, int mi, int s)
{
	struct tm tm = { .tm_year = y - 1900, .tm_mon = mo - 1, .tm_mday = d, .tm_hour = h,
			 .tm_min = mi, .tm_sec = s, .tm_isdst = -1 };
	return (int64_t)mktime(&tm);
}

int main(void)
{
	const int64_t now = 1795000000;
	int64_t t;
	struct dp_error err;
	char iso[32];
	when_iso(now, iso);
	CHECK_STR(iso, "2026-11-18T11:06:40Z");
	when_iso(-1, iso);
	CHECK_STR(iso, "");
	CHECK(when_parse("2d", now, &t, &err) == 0 && t == now - 2 * 86400);
	CHECK(when_parse("90s", now, &t, &err) == 0 && t == now - 90);
	CHECK(when_parse("30m", now, &t, &err) == 0 && t == now - 1800);
	CHECK(when_parse("12h", now, &t, &err) == 0 && t == now - 12 * 3600);
	CHECK(when_parse("1w", now, &t, &err) == 0 && t == now - 604800);
	CHECK(when_parse("2026-11-24", now, &t, &err) == 0);
	CHECK_INT(t, local(2026, 11, 24, 0, 0, 0));
	CHECK(when_parse("2026-11-24 13:05", now, &t, &err) == 0);
	CHECK_INT(t, local(2026, 11, 24, 13, 5, 0));
	CHECK(when_parse("2026-11-24T13:05:30", now, &t, &err) == 0);
	CHECK_INT(t, local(2026, 11, 24, 13, 5, 30));
	const char *bad[] = { "", "2", "d", "2x", "2dd", "-1d", "2026-11", "2026-13-01",
			      "2026-02-31", "2026-11-24 25:00", "2026-11-24T13", "2026-11-24 13:05x",
			      "99999999999999999999w" };
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		CHECK(when_parse(bad[i], now, &t, &err) < 0);
		CHECK_INT(err.kind, DPE_INPUT);
	}
	CHECK_CONTAINS(err.msg, "not a time");
	return unit_done();
}
