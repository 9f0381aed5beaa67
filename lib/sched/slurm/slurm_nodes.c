/* SPDX-License-Identifier: MIT */
/* scontrol -o show partition / show node parsing: rules in slurm_nodes.h. */
#include <ctype.h>
#include <strings.h>

#include "sched/slurm/hostlist.h"
#include "sched/slurm/slurm_nodes.h"
#include "base/strbuf.h"
#include "base/util.h"

/* Counts beyond this are nonsense; the cap keeps sums far from int overflow. */
#define GPUS_MAX 100000

/* A word that starts a field: [A-Za-z][A-Za-z0-9_]*= */
static size_t key_length(const char *w, size_t len)
{
	if (len == 0 || !isalpha((unsigned char)w[0]))
		return 0;
	for (size_t i = 1; i < len; i++) {
		if (w[i] == '=')
			return i;
		if (!isalnum((unsigned char)w[i]) && w[i] != '_')
			return 0;
	}
	return 0;
}

void scontrol_fields(const char *line, struct scontrol_field **out, size_t *n)
{
	struct scontrol_field *f = NULL;
	size_t nf = 0, cap = 0;
	struct strbuf val = STRBUF_INIT;
	const char *p = line;

	*out = NULL;
	*n = 0;
	for (;;) {
		while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
			p++;
		if (!*p)
			break;
		size_t len = strcspn(p, " \t\r\n");
		size_t klen = key_length(p, len);
		if (klen) {
			if (nf)
				f[nf - 1].value = strbuf_detach(&val);
			if (nf == cap) {
				cap = cap ? cap * 2 : 32;
				f = xrealloc(f, cap * sizeof(*f));
			}
			f[nf].key = xstrndup(p, klen);
			f[nf].value = NULL;
			nf++;
			strbuf_add(&val, p + klen + 1, len - klen - 1);
		} else if (nf) {
			strbuf_addch(&val, ' ');
			strbuf_add(&val, p, len);
		}
		p += len;
	}
	if (nf)
		f[nf - 1].value = strbuf_detach(&val);
	strbuf_release(&val);
	*out = f;
	*n = nf;
}

void scontrol_fields_free(struct scontrol_field *f, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(f[i].key);
		free(f[i].value);
	}
	free(f);
}

const char *scontrol_get(const struct scontrol_field *f, size_t n, const char *key)
{
	for (size_t i = 0; i < n; i++)
		if (streq(f[i].key, key))
			return f[i].value;
	return NULL;
}

static bool is_none(const char *s)
{
	return !s || !*s || streq(s, "(null)") || streq(s, "N/A") || streq(s, "none");
}

/* A count with an optional K/M/G suffix (SLURM prints 1K for 1024 shards). */
static bool parse_count(const char *s, size_t len, long *out)
{
	long v = 0, mult = 1;
	size_t i = 0;
	if (len == 0)
		return false;
	for (; i < len && isdigit((unsigned char)s[i]); i++) {
		if (v > 100000000)
			return false;
		v = v * 10 + (s[i] - '0');
	}
	if (i == 0)
		return false;
	if (i < len) {
		char c = (char)toupper((unsigned char)s[i]);
		mult = c == 'K' ? 1024 : c == 'M' ? 1024L * 1024 : c == 'G' ? 1024L * 1024 * 1024 : 0;
		if (!mult || i + 1 != len)
			return false;
	}
	*out = v * mult;
	return true;
}

static bool all_digits(const char *s, size_t len)
{
	if (!len)
		return false;
	for (size_t i = 0; i < len; i++)
		if (!isdigit((unsigned char)s[i]))
			return false;
	return true;
}

/* One entry without its parentheses: name, name:count, name:type, name:type:count. */
static int gres_entry(const char *s, size_t len, struct slurm_gres *g, struct dp_error *err)
{
	const char *c1 = memchr(s, ':', len);
	memset(g, 0, sizeof(*g));
	g->count = 1;
	if (!c1) {
		if (!len)
			return dp_err(err, DPE_INPUT, "empty GRES entry");
		g->name = xstrndup(s, len);
		return 0;
	}
	g->name = xstrndup(s, (size_t)(c1 - s));
	const char *rest = c1 + 1;
	size_t rlen = len - (size_t)(rest - s);
	const char *c2 = memchr(rest, ':', rlen);
	const char *type = NULL, *count = NULL;
	size_t tlen = 0, clen = 0;
	if (c2) {
		type = rest;
		tlen = (size_t)(c2 - rest);
		count = c2 + 1;
		clen = rlen - tlen - 1;
	} else if (rlen && isdigit((unsigned char)rest[0]) &&
		   (all_digits(rest, rlen) || parse_count(rest, rlen, &g->count))) {
		count = rest;
		clen = rlen;
	} else {
		type = rest;
		tlen = rlen;
	}
	if (count && !parse_count(count, clen, &g->count)) {
		dp_err(err, DPE_INPUT, "bad count in GRES entry '%.*s'", (int)len, s);
		free(g->name);
		return -1;
	}
	if (type && tlen && !(tlen == 6 && memcmp(type, "(null)", 6) == 0))
		g->type = xstrndup(type, tlen);
	if (!*g->name) {
		dp_err(err, DPE_INPUT, "GRES entry '%.*s' has no name", (int)len, s);
		free(g->name);
		free(g->type);
		return -1;
	}
	return 0;
}

int slurm_gres_parse(const char *s, struct slurm_gres **out, size_t *n, struct dp_error *err)
{
	struct slurm_gres *g = NULL;
	size_t ng = 0;
	*out = NULL;
	*n = 0;
	if (is_none(s))
		return 0;
	const char *p = s;
	while (*p) {
		/* the entry: up to a comma outside parentheses */
		const char *start = p, *paren = NULL;
		int depth = 0;
		for (; *p && (depth > 0 || *p != ','); p++) {
			if (*p == '(') {
				if (depth == 0 && !paren && !(p[1] == 'n' && startswith(p, "(null)")))
					paren = p;
				depth++;
			} else if (*p == ')' && depth > 0) {
				depth--;
			}
		}
		size_t len = (size_t)((paren ? paren : p) - start);
		if (depth != 0) {
			slurm_gres_free(g, ng);
			return dp_err(err, DPE_INPUT, "unbalanced parenthesis in GRES '%s'", s);
		}
		g = xrealloc(g, (ng + 1) * sizeof(*g));
		if (gres_entry(start, len, &g[ng], err) < 0) {
			slurm_gres_free(g, ng);
			return -1;
		}
		ng++;
		if (*p == ',')
			p++;
	}
	*out = g;
	*n = ng;
	return 0;
}

void slurm_gres_free(struct slurm_gres *g, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(g[i].name);
		free(g[i].type);
	}
	free(g);
}

bool slurm_state_usable(const char *state)
{
	static const char *const bad[] = {
		"DOWN", "DRAIN", "DRAINED", "DRAINING", "FAIL", "FAILING", "MAINT", "RESERVED",
		"FUTURE", "INVAL", "UNKNOWN", "NOT_RESPONDING", "REBOOT_ISSUED", "POWERING_DOWN",
		"POWER_DOWN", "BLOCKED", "NO_RESPOND",
	};
	if (!state || !*state || strchr(state, '*'))
		return false;
	const char *p = state;
	while (*p) {
		size_t len = strcspn(p, "+");
		for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
			if (strlen(bad[i]) == len && strncasecmp(p, bad[i], len) == 0)
				return false;
		p += len;
		if (*p == '+')
			p++;
	}
	return true;
}

static struct slurm_gpus *gpus_of(struct slurm_node *n, const char *type)
{
	for (size_t i = 0; i < n->ngpus; i++)
		if (streq_ptr(n->gpus[i].type, type))
			return &n->gpus[i];
	n->gpus = xrealloc(n->gpus, (n->ngpus + 1) * sizeof(*n->gpus));
	n->gpus[n->ngpus] = (struct slurm_gpus){ .type = type ? xstrdup(type) : NULL };
	return &n->gpus[n->ngpus++];
}

static int add_gres(struct slurm_node *n, const char *s, bool used, struct dp_error *err)
{
	struct slurm_gres *g;
	size_t ng;
	if (slurm_gres_parse(s, &g, &ng, err) < 0)
		return -1;
	for (size_t i = 0; i < ng; i++) {
		if (!streq(g[i].name, "gpu"))
			continue;
		struct slurm_gpus *x = gpus_of(n, g[i].type);
		int count = g[i].count > GPUS_MAX ? GPUS_MAX : (int)g[i].count;
		if (used)
			x->used = x->used > GPUS_MAX ? GPUS_MAX : x->used + count;
		else
			x->total = x->total > GPUS_MAX ? GPUS_MAX : x->total + count;
	}
	slurm_gres_free(g, ng);
	return 0;
}

/* AllocTRES=cpu=1,mem=500M,gres/gpu=2,gres/gpu:a100=2 */
static void add_alloc_tres(struct slurm_node *n, const char *tres)
{
	long all = 0, typed = 0;
	bool any_typed = false;
	const char *p = tres;
	while (p && *p) {
		size_t len = strcspn(p, ",");
		const char *eq = memchr(p, '=', len);
		if (eq && startswith(p, "gres/gpu")) {
			long v = 0;
			const char *num = eq + 1;
			if (parse_count(num, len - (size_t)(num - p), &v)) {
				v = v > GPUS_MAX ? GPUS_MAX : v;
				if (eq == p + 8) {
					all = v;
				} else if (p[8] == ':') {
					char *type = xstrndup(p + 9, (size_t)(eq - p - 9));
					gpus_of(n, type)->used += (int)v;
					typed += v;
					any_typed = true;
					free(type);
				}
			}
		}
		p += len;
		if (*p == ',')
			p++;
	}
	long rest = all - typed;
	if (rest <= 0)
		return;
	/* Used GPUs whose type AllocTRES does not say. */
	if (n->ngpus == 1) {
		n->gpus[0].used += (int)rest;
		return;
	}
	for (size_t i = 0; i < n->ngpus; i++) {
		int room = n->gpus[i].total - n->gpus[i].used;
		int add = rest < room ? (int)rest : room;
		if (!any_typed || !n->gpus[i].type)
			n->gpus[i].used += add > 0 ? add : 0;
	}
}

static long field_long(const struct scontrol_field *f, size_t n, const char *key)
{
	const char *v = scontrol_get(f, n, key);
	long x;
	return v && parse_long(v, 0, 1L << 40, &x) ? x : 0;
}

static char *field_dup(const struct scontrol_field *f, size_t n, const char *key, const char *dflt)
{
	const char *v = scontrol_get(f, n, key);
	return v ? xstrdup(v) : dflt ? xstrdup(dflt) : NULL;
}

static char **split_commas(const char *s)
{
	char **v = NULL;
	if (is_none(s))
		return NULL;
	while (*s) {
		size_t len = strcspn(s, ",");
		if (len)
			strv_push(&v, xstrndup(s, len));
		s += len;
		if (*s == ',')
			s++;
	}
	return v;
}

static int parse_node(const struct scontrol_field *f, size_t nf, struct slurm_facts *facts,
		      struct dp_error *err)
{
	struct slurm_node n = { 0 };
	n.name = xstrdup(scontrol_get(f, nf, "NodeName"));
	n.state = field_dup(f, nf, "State", "UNKNOWN");
	n.usable = slurm_state_usable(n.state);
	n.partitions = split_commas(scontrol_get(f, nf, "Partitions"));
	n.cpus = field_long(f, nf, "CPUTot");
	n.cpus_alloc = field_long(f, nf, "CPUAlloc");
	const char *reason = scontrol_get(f, nf, "Reason");
	n.reason = is_none(reason) ? NULL : xstrdup(reason);
	const char *used = scontrol_get(f, nf, "GresUsed");
	if (!facts->version && scontrol_get(f, nf, "Version"))
		facts->version = field_dup(f, nf, "Version", NULL);

	struct dp_error e = { 0 };
	if (add_gres(&n, scontrol_get(f, nf, "Gres"), false, &e) < 0 ||
	    (used && add_gres(&n, used, true, &e) < 0)) {
		dp_err(err, DPE_INPUT, "node '%s': %s", n.name, e.msg);
		n.usable = false;
	} else if (!used) {
		add_alloc_tres(&n, scontrol_get(f, nf, "AllocTRES"));
	}
	for (size_t i = 0; i < n.ngpus; i++)
		if (n.gpus[i].used > n.gpus[i].total)
			n.gpus[i].used = n.gpus[i].total;
	facts->nodes = xrealloc(facts->nodes, (facts->nnodes + 1) * sizeof(*facts->nodes));
	facts->nodes[facts->nnodes++] = n;
	return e.kind ? -1 : 0;
}

static void parse_partition(const struct scontrol_field *f, size_t nf, struct slurm_facts *facts)
{
	struct slurm_partition p = { 0 };
	p.name = xstrdup(scontrol_get(f, nf, "PartitionName"));
	const char *def = scontrol_get(f, nf, "Default");
	p.is_default = def && strcasecmp(def, "YES") == 0;
	p.state = field_dup(f, nf, "State", "UNKNOWN");
	p.up = strcasecmp(p.state, "UP") == 0;
	const char *nodes = scontrol_get(f, nf, "Nodes");
	p.nodes = xstrdup(is_none(nodes) ? "" : nodes);
	p.total_nodes = field_long(f, nf, "TotalNodes");
	p.total_cpus = field_long(f, nf, "TotalCPUs");
	p.max_time = field_dup(f, nf, "MaxTime", "UNLIMITED");
	p.default_time = field_dup(f, nf, "DefaultTime", "NONE");
	facts->partitions = xrealloc(facts->partitions,
				     (facts->npartitions + 1) * sizeof(*facts->partitions));
	facts->partitions[facts->npartitions++] = p;
}

typedef int (*record_fn)(const struct scontrol_field *f, size_t nf, struct slurm_facts *facts,
			 struct dp_error *err);

static int each_record(const char *text, const char *first_key, record_fn fn,
		       struct slurm_facts *facts, struct dp_error *err)
{
	int r = 0;
	const char *p = text;
	while (p && *p) {
		size_t len = strcspn(p, "\n");
		_cleanup_free_ char *line = xstrndup(p, len);
		struct scontrol_field *f;
		size_t nf;
		scontrol_fields(line, &f, &nf);
		if (nf && streq(f[0].key, first_key) && f[0].value && *f[0].value)
			if (fn(f, nf, facts, r < 0 ? NULL : err) < 0)
				r = -1;
		scontrol_fields_free(f, nf);
		p += len;
		if (*p == '\n')
			p++;
	}
	return r;
}

static int partition_record(const struct scontrol_field *f, size_t nf, struct slurm_facts *facts,
			    struct dp_error *err)
{
	(void)err;
	parse_partition(f, nf, facts);
	return 0;
}

/* Old versions print no Partitions= on nodes: take the partitions' hostlists. */
static void partitions_from_hostlists(struct slurm_facts *f)
{
	for (size_t i = 0; i < f->nnodes; i++)
		if (f->nodes[i].partitions)
			return;
	for (size_t i = 0; i < f->npartitions; i++) {
		char **hosts = NULL;
		struct dp_error e = { 0 };
		if (hostlist_expand(f->partitions[i].nodes, &hosts, &e) < 0)
			continue;
		for (size_t j = 0; j < f->nnodes; j++)
			if (strv_contains(hosts, f->nodes[j].name))
				strv_add(&f->nodes[j].partitions, f->partitions[i].name);
		strv_free(hosts);
	}
}

int slurm_facts_parse(const char *partitions, const char *nodes, struct slurm_facts *f,
		      struct dp_error *err)
{
	memset(f, 0, sizeof(*f));
	each_record(partitions, "PartitionName", partition_record, f, err);
	int r = each_record(nodes, "NodeName", parse_node, f, err);
	partitions_from_hostlists(f);
	return r;
}

void slurm_facts_release(struct slurm_facts *f)
{
	for (size_t i = 0; i < f->npartitions; i++) {
		struct slurm_partition *p = &f->partitions[i];
		free(p->name);
		free(p->state);
		free(p->nodes);
		free(p->max_time);
		free(p->default_time);
	}
	free(f->partitions);
	for (size_t i = 0; i < f->nnodes; i++) {
		struct slurm_node *n = &f->nodes[i];
		free(n->name);
		free(n->state);
		strv_free(n->partitions);
		free(n->reason);
		for (size_t j = 0; j < n->ngpus; j++)
			free(n->gpus[j].type);
		free(n->gpus);
	}
	free(f->nodes);
	free(f->version);
	memset(f, 0, sizeof(*f));
}

const struct slurm_partition *slurm_partition_find(const struct slurm_facts *f, const char *name)
{
	for (size_t i = 0; i < f->npartitions; i++)
		if (streq(f->partitions[i].name, name))
			return &f->partitions[i];
	return NULL;
}

const struct slurm_partition *slurm_default_partition(const struct slurm_facts *f)
{
	for (size_t i = 0; i < f->npartitions; i++)
		if (f->partitions[i].is_default)
			return &f->partitions[i];
	return NULL;
}

bool slurm_node_in(const struct slurm_node *n, const char *partition)
{
	return strv_contains(n->partitions, partition);
}

int slurm_node_gpus_total(const struct slurm_node *n, const char *type)
{
	int t = 0;
	for (size_t i = 0; i < n->ngpus; i++)
		if (!type || streq_ptr(n->gpus[i].type, type))
			t += n->gpus[i].total;
	return t;
}

int slurm_node_gpus_free(const struct slurm_node *n, const char *type)
{
	int t = 0;
	if (!n->usable)
		return 0;
	for (size_t i = 0; i < n->ngpus; i++)
		if (!type || streq_ptr(n->gpus[i].type, type))
			t += n->gpus[i].total - n->gpus[i].used;
	return t;
}

void slurm_partition_gpus(const struct slurm_facts *f, const char *partition,
			  struct slurm_partition_gpus **out, size_t *n)
{
	struct slurm_partition_gpus *g = NULL;
	size_t ng = 0;
	for (size_t i = 0; i < f->nnodes; i++) {
		const struct slurm_node *node = &f->nodes[i];
		if (partition && !slurm_node_in(node, partition))
			continue;
		for (size_t j = 0; j < node->ngpus; j++) {
			const struct slurm_gpus *x = &node->gpus[j];
			size_t k = 0;
			while (k < ng && !streq_ptr(g[k].type, x->type))
				k++;
			if (k == ng) {
				g = xrealloc(g, (ng + 1) * sizeof(*g));
				g[ng++] = (struct slurm_partition_gpus){ .type = x->type ? xstrdup(x->type) : NULL };
			}
			int free_here = node->usable ? x->total - x->used : 0;
			g[k].total += x->total;
			g[k].used += x->used;
			g[k].free += free_here;
			if (free_here > g[k].free_max)
				g[k].free_max = free_here;
		}
	}
	*out = g;
	*n = ng;
}

void slurm_partition_gpus_free(struct slurm_partition_gpus *g, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(g[i].type);
	free(g);
}
