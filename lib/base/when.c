/* SPDX-License-Identifier: MIT */
#include "base/when.h"

#include <limits.h>
#include <time.h>

#include "base/util.h"

static int bad(const char *text, struct dp_error *err)
{
	return dp_err(err, DPE_INPUT,
		      "'%s' is not a time: give an age (30m, 12h, 2d, 1w) or a date "
		      "(YYYY-MM-DD [HH:MM[:SS]])", text);
}

/* n digits exactly at *p; advances. */
static bool digits(const char **p, int n, int *v)
{
	*v = 0;
	for (int i = 0; i < n; i++) {
		if ((*p)[i] < '0' || (*p)[i] > '9')
			return false;
		*v = *v * 10 + ((*p)[i] - '0');
	}
	*p += n;
	return true;
}

static int parse_age(const char *text, int64_t now, int64_t *out, struct dp_error *err)
{
	const char *p = text;
	int64_t n = 0;
	if (*p < '0' || *p > '9')
		return bad(text, err);
	for (; *p >= '0' && *p <= '9'; p++) {
		if (n > INT64_MAX / 10 / 604800)
			return bad(text, err);
		n = n * 10 + (*p - '0');
	}
	int64_t unit;
	switch (*p) {
	case 's': unit = 1; break;
	case 'm': unit = 60; break;
	case 'h': unit = 3600; break;
	case 'd': unit = 86400; break;
	case 'w': unit = 604800; break;
	default: return bad(text, err);
	}
	if (p[1] != '\0')
		return bad(text, err);
	*out = now - n * unit;
	return 0;
}

int when_parse(const char *text, int64_t now, int64_t *out, struct dp_error *err)
{
	const char *p = text;
	int y, mo, d, h = 0, mi = 0, s = 0;
	if (!digits(&p, 4, &y) || *p != '-')
		return parse_age(text, now, out, err);
	p++;
	if (!digits(&p, 2, &mo) || *p++ != '-' || !digits(&p, 2, &d))
		return bad(text, err);
	if (*p == ' ' || *p == 'T') {
		p++;
		if (!digits(&p, 2, &h) || *p++ != ':' || !digits(&p, 2, &mi))
			return bad(text, err);
		if (*p == ':' && (p++, !digits(&p, 2, &s)))
			return bad(text, err);
	}
	if (*p != '\0' || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 60)
		return bad(text, err);
	struct tm tm = { .tm_year = y - 1900, .tm_mon = mo - 1, .tm_mday = d, .tm_hour = h,
			 .tm_min = mi, .tm_sec = s, .tm_isdst = -1 };
	time_t t = mktime(&tm);
	/* mktime normalises 2026-02-31 to March: a day the month lacks is an error. */
	if (t == (time_t)-1 || tm.tm_mday != d || tm.tm_mon != mo - 1)
		return bad(text, err);
	*out = (int64_t)t;
	return 0;
}

void when_iso(int64_t t, char buf[32])
{
	time_t tt = (time_t)t;
	struct tm tm;
	buf[0] = '\0';
	if (t < 0 || (int64_t)tt != t || !gmtime_r(&tt, &tm) ||
	    !strftime(buf, 32, "%Y-%m-%dT%H:%M:%SZ", &tm))
		buf[0] = '\0';
}
