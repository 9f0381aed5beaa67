/* SPDX-License-Identifier: MIT */
/*
 * SLURM hostlist expressions (see hostlist.h for the behaviour and where it follows
 * scontrol). Expansion first parses the whole expression into tokens (the names
 * between separators), each a run of literal text and bracket groups, and counts the
 * hosts and bytes it will give, so that a bad or huge expression fails before any
 * host is allocated. Then an odometer over the groups of each token writes the names.
 */
#include "sched/slurm/hostlist.h"

#include <stdarg.h>
#include <stdint.h>

#include "base/strbuf.h"

/* 10^19 - 1 and its successor fit in uint64_t (SLURM reads numbers as unsigned long). */
#define MAX_DIGITS 19

struct range {
	uint64_t lo, hi;
	int width; /* zero padding: the length of the first number as written */
};

/* A bracket group and the literal text before it. */
struct group {
	size_t lit, litlen;     /* offset and length in the expression */
	size_t r0, nr;          /* its ranges, in parsed.r */
	uint64_t count;         /* hosts the group gives, saturated at the cap + 1 */
	uint64_t digits;        /* characters of all its numbers together */
};

/* A name between separators: literal text and groups, then a literal tail. */
struct token {
	size_t off, len;
	size_t g0, ng;          /* its groups, in parsed.g */
	size_t tail, taillen;
};

struct parsed {
	const char *expr;
	size_t max_hosts;
	struct range *r;
	size_t nr, ar;
	struct group *g;
	size_t ng, ag;
	struct token *t;
	size_t nt, at;
	uint64_t hosts, bytes;
};

static void parsed_release(struct parsed *p)
{
	free(p->r);
	free(p->g);
	free(p->t);
}

/* Room for one more element in a growable array. */
static void *grow(void *v, size_t *alloc, size_t n, size_t size)
{
	if (n < *alloc)
		return v;
	*alloc = *alloc ? *alloc * 2 : 8;
	return xrealloc(v, *alloc * size);
}

static bool is_sep(char c)
{
	return c == ',' || c == ' ' || c == '\t' || c == '\n';
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* "invalid hostlist 'EXPR': DETAIL", the expression shortened when it is long. */
_printf_(3, 4) static int bad(const struct parsed *p, struct dp_error *err, const char *fmt, ...)
{
	char detail[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(detail, sizeof(detail), fmt, ap);
	va_end(ap);
	size_t len = strlen(p->expr);
	return dp_err(err, DPE_INPUT, "invalid hostlist '%.*s%s': %s", len > 80 ? 77 : (int)len,
		      p->expr, len > 80 ? "..." : "", detail);
}

/* A character for a message: 'x', or its byte value when it does not print. */
static const char *show_char(char c, char buf[16])
{
	unsigned char u = (unsigned char)c;
	if (u == '\0')
		snprintf(buf, 16, "end of text");
	else if (u >= ' ' && u < 127)
		snprintf(buf, 16, "'%c'", c);
	else
		snprintf(buf, 16, "byte 0x%02x", u);
	return buf;
}

static int unexpected(const struct parsed *p, size_t i, struct dp_error *err)
{
	char buf[16];
	return bad(p, err, "unexpected %s at column %zu (brackets hold numbers and ranges, "
		   "as in 'n[1-4,7]')", show_char(p->expr[i], buf), i + 1);
}

/* What is wrong at column j + 1 of the group opened at column open + 1. */
static int bad_in_group(const struct parsed *p, size_t open, size_t j, struct dp_error *err)
{
	char c = p->expr[j];
	if (!c)
		return bad(p, err, "'[' at column %zu is never closed", open + 1);
	if (c == '[')
		return bad(p, err, "'[' at column %zu inside brackets (brackets do not nest)",
			   j + 1);
	return unexpected(p, j, err);
}

/* The characters of the numbers lo..hi, each written at least width wide. */
static uint64_t range_digits(uint64_t lo, uint64_t hi, int width)
{
	uint64_t total = 0, band_lo = 0, band_hi = 9; /* the numbers of d digits */
	for (int d = 1; d <= MAX_DIGITS; d++) {
		uint64_t a = lo > band_lo ? lo : band_lo, b = hi < band_hi ? hi : band_hi;
		if (a <= b)
			total += (b - a + 1) * (uint64_t)(d > width ? d : width);
		if (hi <= band_hi)
			break;
		band_lo = band_hi + 1;
		band_hi = band_hi * 10 + 9;
	}
	return total;
}

/* A number at *i (at most MAX_DIGITS digits); *ndigits is 0 when there is none. */
static int parse_number(const struct parsed *p, size_t *i, uint64_t *v, int *ndigits,
			struct dp_error *err)
{
	const char *s = p->expr;
	size_t start = *i;
	*v = 0;
	while (is_digit(s[*i])) {
		if (*i - start == MAX_DIGITS)
			return bad(p, err, "number at column %zu is too long (at most %d digits)",
				   start + 1, MAX_DIGITS);
		*v = *v * 10 + (uint64_t)(s[*i] - '0');
		(*i)++;
	}
	*ndigits = (int)(*i - start);
	return 0;
}

/* The group whose '[' is at *i; on success *i is at its ']'. */
static int parse_group(struct parsed *p, size_t *i, struct group *g, struct dp_error *err)
{
	const char *s = p->expr;
	size_t open = *i, j = *i + 1;
	for (;;) {
		size_t start = j;
		uint64_t lo, hi;
		int width, nd;
		if (s[j] == ',' || s[j] == ']')
			return bad(p, err, "empty range at column %zu", j + 1);
		if (parse_number(p, &j, &lo, &width, err) < 0)
			return -1;
		if (!width)
			return bad_in_group(p, open, j, err);
		hi = lo;
		if (s[j] == '-') {
			j++;
			if (parse_number(p, &j, &hi, &nd, err) < 0)
				return -1;
			if (!nd) {
				if (s[j] == ',' || s[j] == ']')
					return bad(p, err, "range '%.*s' at column %zu has no end",
						   (int)(j - start), s + start, start + 1);
				return unexpected(p, j, err);
			}
			if (lo > hi)
				return bad(p, err,
					   "range '%.*s' at column %zu goes backwards "
					   "(did you mean '%.*s-%.*s'?)",
					   (int)(j - start), s + start, start + 1, nd, s + j - nd,
					   width, s + start);
		}
		p->r = grow(p->r, &p->ar, p->nr, sizeof(*p->r));
		p->r[p->nr++] = (struct range){ .lo = lo, .hi = hi, .width = width };
		g->nr++;
		if (g->count + (hi - lo + 1) > p->max_hosts) {
			g->count = p->max_hosts + 1; /* too many: the token reports it */
		} else {
			g->count += hi - lo + 1;
			g->digits += range_digits(lo, hi, width);
		}
		if (s[j] == ']') {
			*i = j;
			return 0;
		}
		if (s[j] != ',')
			return bad_in_group(p, open, j, err);
		j++;
	}
}

/* The token starting at *pos; *pos ends at the separator (or NUL) after it. */
static int parse_token(struct parsed *p, size_t *pos, struct dp_error *err)
{
	const char *s = p->expr;
	size_t i = *pos, lit = i;
	struct token t = { .off = i, .g0 = p->ng };
	uint64_t fixed = 0;

	for (; s[i] && !is_sep(s[i]); i++) {
		if (s[i] == ']')
			return bad(p, err, "']' at column %zu has no matching '['", i + 1);
		if (s[i] != '[')
			continue;
		struct group g = { .lit = lit, .litlen = i - lit, .r0 = p->nr };
		if (parse_group(p, &i, &g, err) < 0)
			return -1;
		fixed += g.litlen;
		p->g = grow(p->g, &p->ag, p->ng, sizeof(*p->g));
		p->g[p->ng++] = g;
		t.ng++;
		lit = i + 1;
	}
	t.tail = lit;
	t.taillen = i - lit;
	t.len = i - t.off;
	fixed += t.taillen;
	*pos = i;
	if (!t.ng && t.len == 6 && memcmp(s + t.off, "(null)", 6) == 0)
		return 0; /* scontrol's way of saying "no nodes" */

	/* Count before allocating anything: hosts, then the bytes of their names. */
	uint64_t n = 1, max = p->max_hosts;
	for (size_t k = 0; k < t.ng; k++) {
		uint64_t c = p->g[t.g0 + k].count;
		if (c > max || n > max / c) {
			n = max + 1;
			break;
		}
		n *= c;
	}
	if (n > max || p->hosts + n > max)
		return bad(p, err,
			   "expands to more than %zu hosts (the limit), reached with '%.*s%s' "
			   "at column %zu",
			   p->max_hosts, t.len > 60 ? 57 : (int)t.len, s + t.off,
			   t.len > 60 ? "..." : "", t.off + 1);
	uint64_t bytes = n * (fixed + 1);
	for (size_t k = 0; k < t.ng; k++) {
		const struct group *g = &p->g[t.g0 + k];
		bytes += g->digits * (n / g->count);
	}
	if (p->bytes + bytes > HOSTLIST_MAX_BYTES)
		return bad(p, err,
			   "expands to more than %zu MiB of host names (the limit), "
			   "reached with '%.*s%s' at column %zu",
			   HOSTLIST_MAX_BYTES >> 20,
			   t.len > 60 ? 57 : (int)t.len, s + t.off, t.len > 60 ? "..." : "",
			   t.off + 1);
	p->hosts += n;
	p->bytes += bytes;
	p->t = grow(p->t, &p->at, p->nt, sizeof(*p->t));
	p->t[p->nt++] = t;
	return 0;
}

static int parse(const char *expr, size_t max_hosts, struct parsed *p, struct dp_error *err)
{
	memset(p, 0, sizeof(*p));
	p->expr = expr ? expr : "";
	p->max_hosts = max_hosts < HOSTLIST_MAX_HOSTS ? max_hosts : HOSTLIST_MAX_HOSTS;
	size_t i = 0;
	for (;;) {
		while (is_sep(p->expr[i]))
			i++;
		if (!p->expr[i])
			return 0;
		if (parse_token(p, &i, err) < 0) {
			parsed_release(p);
			return -1;
		}
	}
}

static void add_number(struct strbuf *sb, uint64_t v, int width)
{
	strbuf_addf(sb, "%0*llu", width, (unsigned long long)v);
}

/* The name of token t where group k is at range ri[k], number v[k]. */
static void build(const struct parsed *p, const struct token *t, const size_t *ri,
		  const uint64_t *v, struct strbuf *sb)
{
	strbuf_reset(sb);
	for (size_t k = 0; k < t->ng; k++) {
		const struct group *g = &p->g[t->g0 + k];
		strbuf_add(sb, p->expr + g->lit, g->litlen);
		add_number(sb, v[k], p->r[g->r0 + ri[k]].width);
	}
	strbuf_add(sb, p->expr + t->tail, t->taillen);
}

/*
 * Moves the odometer on; false when it has gone round. The order is SLURM's: the last
 * group turns fastest, then the first, the second, ... and the one before the last
 * slowest (scontrol expands n[0-1][0-1][0-1] as n000 n001 n100 n101 n010 n011 ...),
 * which for two groups is the plain order, the first slowest.
 */
static bool advance(const struct parsed *p, const struct token *t, size_t *ri, uint64_t *v)
{
	for (size_t step = 0; step < t->ng; step++) {
		size_t k = step == 0 ? t->ng - 1 : step - 1;
		const struct group *g = &p->g[t->g0 + k];
		if (v[k] < p->r[g->r0 + ri[k]].hi) {
			v[k]++;
			return true;
		}
		if (ri[k] + 1 < g->nr) {
			ri[k]++;
			v[k] = p->r[g->r0 + ri[k]].lo;
			return true;
		}
		ri[k] = 0;
		v[k] = p->r[g->r0].lo;
	}
	return false;
}

static void odometer_start(const struct parsed *p, const struct token *t, size_t *ri, uint64_t *v)
{
	for (size_t k = 0; k < t->ng; k++) {
		ri[k] = 0;
		v[k] = p->r[p->g[t->g0 + k].r0].lo;
	}
}

int hostlist_expand_max(const char *expr, size_t max_hosts, char ***hosts, struct dp_error *err)
{
	struct parsed p;
	*hosts = NULL;
	if (parse(expr, max_hosts, &p, err) < 0)
		return -1;

	char **out = xcalloc((size_t)p.hosts + 1, sizeof(*out));
	size_t n = 0, maxg = 0;
	for (size_t i = 0; i < p.nt; i++)
		if (p.t[i].ng > maxg)
			maxg = p.t[i].ng;
	size_t *ri = xcalloc(maxg + 1, sizeof(*ri));
	uint64_t *v = xcalloc(maxg + 1, sizeof(*v));
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	for (size_t i = 0; i < p.nt; i++) {
		const struct token *t = &p.t[i];
		odometer_start(&p, t, ri, v);
		do {
			build(&p, t, ri, v, &sb);
			out[n++] = xstrndup(sb.buf, sb.len);
		} while (advance(&p, t, ri, v));
	}
	free(ri);
	free(v);
	parsed_release(&p);
	*hosts = out;
	return 0;
}

int hostlist_expand(const char *expr, char ***hosts, struct dp_error *err)
{
	return hostlist_expand_max(expr, HOSTLIST_MAX_HOSTS, hosts, err);
}

int hostlist_first(const char *expr, char **first, struct dp_error *err)
{
	struct parsed p;
	*first = NULL;
	if (parse(expr, HOSTLIST_MAX_HOSTS, &p, err) < 0)
		return -1;
	if (p.nt > 0) {
		const struct token *t = &p.t[0];
		size_t *ri = xcalloc(t->ng + 1, sizeof(*ri));
		uint64_t *v = xcalloc(t->ng + 1, sizeof(*v));
		struct strbuf sb = STRBUF_INIT;
		odometer_start(&p, t, ri, v);
		build(&p, t, ri, v, &sb);
		*first = strbuf_detach(&sb);
		free(ri);
		free(v);
	}
	parsed_release(&p);
	return 0;
}

/* ---- folding ---- */

/* Consecutive names PREFIX<number> with ascending numbers of one padding, or a
 * name without a trailing number (num false). */
struct run {
	const char *name;
	size_t plen;
	uint64_t lo, hi;
	int width;
	bool num;
};

static int ndigits(uint64_t v)
{
	int n = 1;
	while (v >= 10) {
		v /= 10;
		n++;
	}
	return n;
}

static int check_name(const char *h, struct dp_error *err)
{
	if (!*h)
		return dp_err(err, DPE_INPUT, "cannot fold an empty host name into a hostlist");
	if (streq(h, "(null)"))
		return dp_err(err, DPE_INPUT,
			      "cannot fold '(null)' into a hostlist: there it means no host");
	const char *c = strpbrk(h, ",[] \t\n");
	if (c) {
		char buf[16];
		return dp_err(err, DPE_INPUT,
			      "cannot fold '%s' into a hostlist: it holds %s, hostlist syntax",
			      h, show_char(*c, buf));
	}
	return 0;
}

static bool same_prefix(const struct run *a, const struct run *b)
{
	return a->plen == b->plen && memcmp(a->name, b->name, a->plen) == 0;
}

int hostlist_fold(char *const *hosts, char **out, struct dp_error *err)
{
	size_t n = strv_len(hosts), nruns = 0;
	struct run *runs = xcalloc(n + 1, sizeof(*runs));
	*out = NULL;

	for (size_t i = 0; i < n; i++) {
		const char *h = hosts[i];
		if (check_name(h, err) < 0) {
			free(runs);
			return -1;
		}
		size_t len = strlen(h), ds = len;
		while (ds > 0 && is_digit(h[ds - 1]))
			ds--;
		int nd = (int)(len - ds);
		if (nd == 0 || nd > MAX_DIGITS) {
			runs[nruns++] = (struct run){ .name = h };
			continue;
		}
		uint64_t v = 0;
		for (size_t k = ds; k < len; k++)
			v = v * 10 + (uint64_t)(h[k] - '0');
		struct run cur = { .name = h, .plen = ds, .lo = v, .hi = v, .num = true,
				   .width = nd > 1 && h[ds] == '0' ? nd : 1 };
		struct run *last = nruns ? &runs[nruns - 1] : NULL;
		/* Joins the run when the next number, written at the run's width, is this. */
		if (last && last->num && same_prefix(last, &cur) && v == last->hi + 1 &&
		    nd == (ndigits(v) > last->width ? ndigits(v) : last->width)) {
			last->hi = v;
			continue;
		}
		runs[nruns++] = cur;
	}

	struct strbuf sb = STRBUF_INIT;
	for (size_t i = 0; i < nruns; i++) {
		if (i)
			strbuf_addch(&sb, ',');
		if (!runs[i].num) {
			strbuf_adds(&sb, runs[i].name);
			continue;
		}
		size_t j = i;
		while (j + 1 < nruns && runs[j + 1].num && same_prefix(&runs[i], &runs[j + 1]))
			j++;
		strbuf_add(&sb, runs[i].name, runs[i].plen);
		if (i == j && runs[i].lo == runs[i].hi) {
			add_number(&sb, runs[i].lo, runs[i].width);
			continue;
		}
		strbuf_addch(&sb, '[');
		for (size_t k = i; k <= j; k++) {
			if (k > i)
				strbuf_addch(&sb, ',');
			add_number(&sb, runs[k].lo, runs[k].width);
			if (runs[k].hi > runs[k].lo) {
				strbuf_addch(&sb, '-');
				add_number(&sb, runs[k].hi, runs[k].width);
			}
		}
		strbuf_addch(&sb, ']');
		i = j;
	}
	free(runs);
	*out = strbuf_detach(&sb);
	return 0;
}
