/* SPDX-License-Identifier: MIT */
/* The offline solver: rules in solver.h. Every host gets a verdict with its reason. */
#include "inventory/chips.h"
#include "sched/slurm/hostlist.h"
#include "solver.h"
#include "base/strbuf.h"

struct fit {
	bool fits;
	char *reason;
	const char *partition, *constraint, *chip, *gres_type;
	int free_gpus;          /* live: a plain host's free GPUs of the chip; -1 unknown */
	bool last;              /* a GPU box for a CPU job: taken when no other host fits */
};

static int check_clusters(const struct inventory *inv, char **names, const char *option,
			  struct dp_error *err)
{
	for (size_t i = 0; names && names[i]; i++) {
		if (inventory_cluster(inv, names[i]))
			continue;
		const char **all = xcalloc(inv->nclusters + 1, sizeof(*all));
		for (size_t j = 0; j < inv->nclusters; j++)
			all[j] = inv->clusters[j].name;
		const char *guess = suggest_word(names[i], all, inv->nclusters);
		if (guess)
			dp_err(err, DPE_INPUT, "%s: no cluster '%s' in the inventory (did you mean '%s'?)",
			       option, names[i], guess);
		else
			dp_err(err, DPE_INPUT, "%s: no cluster '%s' in the inventory", option, names[i]);
		free(all);
		return -1;
	}
	return 0;
}

static const struct inv_chip *host_chip(const struct inv_host *h, const char *chip)
{
	for (size_t i = 0; i < h->nchips; i++)
		if (streq(h->chips[i].chip, chip))
			return &h->chips[i];
	return NULL;
}

static void describe_chips(struct strbuf *sb, const struct inv_host *h)
{
	for (size_t i = 0; i < h->nchips; i++)
		strbuf_addf(sb, "%s%d %s", i ? ", " : "", h->chips[i].count, h->chips[i].chip);
}

/* GPU partition: named after the chip, its family or its GRES type; then the first
 * default one; then the first written. */
static const struct inv_partition *gpu_partition(const struct inv_host *h, const char *chip,
						 const char *gres)
{
	char family[64];
	if (chip)
		chip_family(chip, family, sizeof(family));
	for (size_t i = 0; chip && i < h->npartitions; i++) {
		const char *p = h->partitions[i].name;
		if (streq(p, chip) || streq(p, family) || (gres && streq(p, gres)))
			return &h->partitions[i];
	}
	for (size_t i = 0; i < h->npartitions; i++)
		if (h->partitions[i].is_default)
			return &h->partitions[i];
	return h->npartitions ? &h->partitions[0] : NULL;
}

static void fit_partition(struct fit *f, const struct inv_partition *p)
{
	f->partition = p ? p->name : NULL;
	f->constraint = p ? p->constraint : NULL;
}

static void fit_yes(struct fit *f, int n, const char *what)
{
	struct strbuf sb = STRBUF_INIT;
	if (n > 0)
		strbuf_addf(&sb, "fits: %d %s", n, what);
	else
		strbuf_addf(&sb, "fits: %s", what);
	if (f->partition)
		strbuf_addf(&sb, " on partition %s", f->partition);
	else
		strbuf_adds(&sb, " on the default partition");
	if (f->gres_type)
		strbuf_addf(&sb, " (gres %s)", f->gres_type);
	f->fits = true;
	f->reason = strbuf_detach(&sb);
}

static void eval_plain(const struct inv_host *h, const struct solve_request *req, struct fit *f)
{
	struct strbuf has = STRBUF_INIT;
	describe_chips(&has, h);
	if (req->chips == 0) {
		f->fits = true;
		if (h->nchips == 0) {
			f->reason = xstrdup("fits: a CPU-only host");
		} else {
			f->last = true; /* (its GPUs are for GPU jobs while another host fits) */
			f->reason = xasprintf("fits: a CPU job on a GPU box (%s), taken last", has.buf);
		}
	} else if (h->nchips == 0) {
		f->reason = xstrdup("has no GPUs");
	} else if (req->chip) {
		const struct inv_chip *c = host_chip(h, req->chip);
		if (!c)
			f->reason = xasprintf("has no %s (has %s)", req->chip, has.buf);
		else if (c->count < req->chips)
			f->reason = xasprintf("has %d %s, needs %d", c->count, c->chip, req->chips);
		else {
			f->fits = true;
			f->chip = c->chip;
			f->reason = xasprintf("fits: %d of its %d %s", req->chips, c->count, c->chip);
		}
	} else {
		for (size_t i = 0; i < h->nchips && !f->fits; i++)
			if (h->chips[i].count >= req->chips) {
				f->fits = true;
				f->chip = h->chips[i].chip;
				f->reason = xasprintf("fits: %d of its %d %s", req->chips, h->chips[i].count,
						      f->chip);
			}
		if (!f->fits)
			f->reason = xasprintf("has %s, needs %d of one kind", has.buf, req->chips);
	}
	strbuf_release(&has);
}

static void eval_slurm(const struct inventory *inv, const struct inv_host *h,
		       const struct solve_request *req, struct fit *f)
{
	if (req->chips == 0) {
		if (h->cpu_partitions) {
			f->partition = h->cpu_partitions[0];
		} else {
			const struct inv_partition *p = gpu_partition(h, NULL, NULL);
			fit_partition(f, p);
		}
		fit_yes(f, 0, "a CPU job");
		return;
	}
	if (h->npartitions == 0 && h->cpu_partitions) {
		f->reason = xstrdup("has only cpu_partitions, no GPU partitions");
		return;
	}
	if (req->chip) {
		const char *gres = inventory_gres_type(inv, req->chip);
		const struct inv_chip *c = h->chips_set ? host_chip(h, req->chip) : NULL;
		if (!gres) {
			f->reason = xasprintf("no gres_mapping for %s in the inventory", req->chip);
		} else if (h->chips_set && !c) {
			f->reason = xasprintf("its chips limit has no %s", req->chip);
		} else if (c && c->count < req->chips) {
			f->reason = xasprintf("its chips limit allows %d %s, needs %d", c->count, c->chip,
					      req->chips);
		} else {
			f->chip = chip_find(req->chip)->name;
			f->gres_type = gres;
			fit_partition(f, gpu_partition(h, f->chip, gres));
			fit_yes(f, req->chips, f->chip);
		}
		return;
	}
	if (!h->chips_set) {
		fit_partition(f, gpu_partition(h, NULL, NULL));
		fit_yes(f, req->chips, req->chips == 1 ? "GPU of any type" : "GPUs of any type");
		return;
	}
	for (size_t i = 0; i < h->nchips; i++) {
		const char *gres = inventory_gres_type(inv, h->chips[i].chip);
		if (h->chips[i].count < req->chips || !gres)
			continue;
		f->chip = h->chips[i].chip;
		f->gres_type = gres;
		fit_partition(f, gpu_partition(h, f->chip, gres));
		fit_yes(f, req->chips, f->chip);
		return;
	}
	struct strbuf has = STRBUF_INIT;
	describe_chips(&has, h);
	f->reason = xasprintf("its chips limit (%s) has no chip with a gres_mapping and %d devices",
			      h->nchips ? has.buf : "none", req->chips);
	strbuf_release(&has);
}

/* The most-capacity fallback: the SLURM host with the most of the chip asked for (any
 * mapped chip when none was), among those that have it at all. */
static int capacity(const struct inventory *inv, const struct inv_host *h,
		    const struct solve_request *req, const char **chip)
{
	int best = 0;
	*chip = NULL;
	if (h->type != INV_HOST_SLURM || (h->npartitions == 0 && h->cpu_partitions))
		return 0;
	for (size_t i = 0; i < h->nchips; i++) {
		const struct inv_chip *c = &h->chips[i];
		if ((req->chip && !streq(c->chip, req->chip)) || !inventory_gres_type(inv, c->chip))
			continue;
		if (c->count > best) {
			best = c->count;
			*chip = c->chip;
		}
	}
	return best;
}

/* ---- solve --check: the live facts ---- */

struct live_cap {               /* for the live fallback */
	int most;               /* GPUs of the type in the partition's usable nodes */
	const char *partition, *constraint;
};

static void refit(struct fit *f, bool fits, char *reason)
{
	free(f->reason);
	f->fits = fits;
	f->reason = reason;
}

static const struct solve_live *live_of(const struct solve_request *req, const struct inv_host *h)
{
	for (size_t i = 0; i < req->nlive; i++)
		if (streq(req->live[i].host, h->name))
			return &req->live[i];
	return NULL;
}

static bool gpu_counts_as(const struct nvidia_gpu *g, const struct inv_host *h, const char *chip)
{
	return g->chip ? streq(g->chip, chip) : h->nchips == 1;
}

static void live_plain(const struct inv_host *h, const struct solve_request *req,
		       const struct host_facts *hf, struct fit *f)
{
	if (req->chips == 0) {
		refit(f, true, xstrdup(h->nchips ? "fits now: it answered (a GPU box, taken last for a "
						   "CPU job)" : "fits now: a CPU-only host, and it answered"));
		return;
	}
	if (!hf->gpu_tool) {
		refit(f, false, xstrdup("no nvidia-smi on the host: nothing says its GPUs are free"));
		return;
	}
	struct strbuf why = STRBUF_INIT;
	for (size_t i = 0; i < h->nchips; i++) {
		const char *chip = h->chips[i].chip;
		if (req->chip && !streq(chip, req->chip))
			continue;
		int total = 0, nfree = 0;
		struct strbuf ids = STRBUF_INIT;
		for (size_t j = 0; j < hf->gpus.n; j++) {
			const struct nvidia_gpu *g = &hf->gpus.gpus[j];
			if (!gpu_counts_as(g, h, chip))
				continue;
			total++;
			if (!g->busy) {
				strbuf_addf(&ids, "%s%d", nfree ? "," : "", g->index);
				nfree++;
			}
		}
		if (nfree >= req->chips) {
			f->chip = chip;
			f->free_gpus = nfree;
			refit(f, true, xasprintf("fits now: %d of its %d %s free (GPU %s)", nfree, total,
						 chip, ids.buf));
			strbuf_release(&ids);
			strbuf_release(&why);
			return;
		}
		strbuf_addf(&why, "%s%d of %d %s free", why.len ? ", " : "", nfree, total, chip);
		strbuf_release(&ids);
	}
	_cleanup_free_ char *queue = hf->jobs_pending > 0
		? xasprintf(" (%ld dispatch job%s waiting there)", hf->jobs_pending,
			    hf->jobs_pending == 1 ? "" : "s")
		: xstrdup("");
	refit(f, false, xasprintf("busy now: %s, needs %d%s", why.len ? why.buf : "no GPU free",
				  req->chips, queue));
	strbuf_release(&why);
}

static const struct inv_partition *inv_part(const struct inv_host *h, const char *name)
{
	for (size_t i = 0; i < h->npartitions; i++)
		if (streq(h->partitions[i].name, name))
			return &h->partitions[i];
	return NULL;
}

/* The host's exclude list, hostlists expanded. */
static char **excluded_nodes(const struct inv_host *h)
{
	char **all = NULL;
	for (size_t i = 0; h->exclude && h->exclude[i]; i++) {
		char **some = NULL;
		struct dp_error e = { 0 };
		if (hostlist_expand(h->exclude[i], &some, &e) < 0) {
			strv_add(&all, h->exclude[i]);
			continue;
		}
		for (size_t j = 0; some[j]; j++)
			strv_add(&all, some[j]);
		strv_free(some);
	}
	return all;
}

/* Partitions to try, in order: the one the offline rules chose, then the rest the
 * host names (GPU jobs), or the cluster's default when it names none. */
static const char **live_partitions(const struct inv_host *h, const struct solve_request *req,
				    const struct fit *f, const struct slurm_facts *sl)
{
	const char **v = xcalloc(h->npartitions + 3, sizeof(*v));
	size_t n = 0;
	if (f->partition)
		v[n++] = f->partition;
	for (size_t i = 0; req->chips > 0 && i < h->npartitions; i++)
		if (!f->partition || !streq(h->partitions[i].name, f->partition))
			v[n++] = h->partitions[i].name;
	if (n == 0 && slurm_default_partition(sl))
		v[n++] = slurm_default_partition(sl)->name;
	return v;
}

static void live_slurm(const struct inv_host *h, const struct solve_request *req,
		       const struct host_facts *hf, struct fit *f, struct live_cap *cap)
{
	const struct slurm_facts *sl = &hf->sl;
	const char *type = f->gres_type;
	_cleanup_strv_free_ char **exclude = excluded_nodes(h);
	const char **parts = live_partitions(h, req, f, sl);
	struct strbuf why = STRBUF_INIT;
	char what[160];

	if (req->chips == 0)
		snprintf(what, sizeof(what), "a free CPU");
	else
		snprintf(what, sizeof(what), "%d free %s GPU%s", req->chips, type ? type : "(any type)",
			 req->chips == 1 ? "" : "s");
	if (!parts[0])
		strbuf_adds(&why, "the cluster has no default partition");
	for (size_t i = 0; parts[i]; i++) {
		const struct slurm_partition *p = slurm_partition_find(sl, parts[i]);
		if (!p) {
			strbuf_addf(&why, "%sno partition '%s' on the cluster", why.len ? "; " : "", parts[i]);
			continue;
		}
		if (!p->up) {
			strbuf_addf(&why, "%spartition %s is %s", why.len ? "; " : "", p->name, p->state);
			continue;
		}
		const struct slurm_node *best = NULL;
		int best_free = -1, biggest = 0, in_all = 0, usable = 0;
		for (size_t j = 0; j < sl->nnodes; j++) {
			const struct slurm_node *n = &sl->nodes[j];
			if (!slurm_node_in(n, p->name) || strv_contains(exclude, n->name) || !n->usable)
				continue;
			usable++;
			int nfree = req->chips == 0 ? (int)(n->cpus - n->cpus_alloc) : slurm_node_gpus_free(n, type);
			int total = slurm_node_gpus_total(n, type);
			in_all += total;
			if (total > biggest)
				biggest = total;
			if (nfree > best_free) {
				best_free = nfree;
				best = n;
			}
		}
		const struct inv_partition *ip = inv_part(h, p->name);
		if (req->chips > 0 && biggest >= req->chips && in_all > cap->most) {
			cap->most = in_all;
			cap->partition = ip ? ip->name : p->name;
			cap->constraint = ip ? ip->constraint : NULL;
		}
		int need = req->chips == 0 ? 1 : req->chips;
		if (best && best_free >= need) {
			f->partition = ip ? ip->name : p->name;
			f->constraint = ip ? ip->constraint : NULL;
			if (req->chips == 0)
				refit(f, true, xasprintf("fits now: %s has %d free CPU%s on partition %s",
							 best->name, best_free, best_free == 1 ? "" : "s", p->name));
			else
				refit(f, true, xasprintf("fits now: %s has %d free %s GPU%s on partition %s",
							 best->name, best_free, type ? type : "",
							 best_free == 1 ? "" : "s", p->name));
			strbuf_release(&why);
			free(parts);
			return;
		}
		if (!usable)
			strbuf_addf(&why, "%spartition %s has no node taking jobs", why.len ? "; " : "", p->name);
		else
			strbuf_addf(&why, "%spartition %s: at most %d on one node (%s)", why.len ? "; " : "",
				    p->name, best_free < 0 ? 0 : best_free, best ? best->name : "-");
	}
	refit(f, false, xasprintf("busy now: no node with %s (%s)", what, why.buf));
	strbuf_release(&why);
	free(parts);
}

static void live_check(const struct inv_host *h, const struct solve_request *req, struct fit *f,
		       struct live_cap *cap)
{
	const struct solve_live *l = live_of(req, h);
	if (!l || !l->facts) {
		refit(f, false, xasprintf("skipped: %s", l && l->note ? l->note : "not asked"));
		return;
	}
	if (h->type == INV_HOST_PLAIN)
		live_plain(h, req, l->facts, f);
	else
		live_slurm(h, req, l->facts, f, cap);
}

static bool in_cluster_list(char **list, const struct inv_host *h)
{
	return strv_contains(list, h->cluster_name);
}

int solve(const struct inventory *inv, const struct solve_request *req, struct solve_result *res,
	  struct dp_error *err)
{
	memset(res, 0, sizeof(*res));
	if (req->chips < 0)
		return dp_err(err, DPE_INPUT, "a job needs 0 or more chips, not %d", req->chips);
	if (req->chip && !chip_find(req->chip))
		return dp_err(err, DPE_INPUT, "unknown chip '%s'%s", req->chip,
			      chip_suggestion(req->chip));
	if (req->chip && req->chips == 0)
		return dp_err(err, DPE_INPUT, "a CPU job (0 chips) cannot ask for chip '%s'", req->chip);
	if (check_clusters(inv, req->prefer, "--prefer", err) < 0 ||
	    check_clusters(inv, req->forbid, "--exclude-cluster", err) < 0 ||
	    check_clusters(inv, req->only, "--cluster", err) < 0)
		return -1;
	for (size_t i = 0; req->only && req->only[i]; i++)
		if (strv_contains(req->forbid, req->only[i]))
			return dp_err(err, DPE_INPUT, "cluster '%s' is both asked for (--cluster) and "
				      "excluded", req->only[i]);
	for (size_t i = 0; req->prefer && req->prefer[i]; i++)
		if (strv_contains(req->forbid, req->prefer[i]))
			return dp_err(err, DPE_INPUT, "cluster '%s' is both preferred and forbidden",
				      req->prefer[i]);

	struct solve_request r = *req;
	if (r.chip)
		r.chip = chip_find(r.chip)->name;

	/* The order: priority, then the rest as written; preferred clusters first. */
	size_t n = 0;
	const struct inv_host **order = xcalloc(inv->nhosts + 1, sizeof(*order));
	for (size_t i = 0; inv->priority && inv->priority[i]; i++)
		order[n++] = inventory_host(inv, inv->priority[i]);
	for (size_t i = 0; i < inv->nhosts; i++)
		if (!strv_contains(inv->priority, inv->hosts[i].name))
			order[n++] = &inv->hosts[i];
	const struct inv_host **sorted = xcalloc(n + 1, sizeof(*sorted));
	size_t m = 0;
	for (size_t i = 0; i < n; i++)
		if (in_cluster_list(r.prefer, order[i]))
			sorted[m++] = order[i];
	for (size_t i = 0; i < n; i++)
		if (!in_cluster_list(r.prefer, order[i]))
			sorted[m++] = order[i];
	free(order);

	res->verdicts = xcalloc(n + 1, sizeof(*res->verdicts));
	struct live_cap *caps = xcalloc(n + 1, sizeof(*caps));
	struct fit *paper = xcalloc(n + 1, sizeof(*paper));
	const struct fit *last_fit = NULL;
	const struct inv_host *last_host = NULL;
	for (size_t i = 0; i < n; i++) {
		const struct inv_host *h = sorted[i];
		struct fit f = { .free_gpus = -1 };
		if (!inv_host_type_reachable(h->type))
			f.reason = xasprintf("a %s host: dispatch drives SSH and SLURM hosts only",
					     inv_host_type_name(h->type));
		else if (in_cluster_list(r.forbid, h))
			f.reason = xasprintf("cluster '%s' is excluded", h->cluster_name);
		else if (r.only && !in_cluster_list(r.only, h))
			f.reason = xasprintf("cluster '%s' is not one of --cluster", h->cluster_name);
		else if (r.container && h->container_runtime == CONTAINER_NONE)
			f.reason = xstrdup("no container_runtime: the job runs in an image");
		else if (h->type == INV_HOST_PLAIN)
			eval_plain(h, &r, &f);
		else
			eval_slurm(inv, h, &r, &f);
		paper[i] = f;
		paper[i].reason = NULL;
		if (r.check && f.fits)
			live_check(h, &r, &f, &caps[i]);
		res->verdicts[i] = (struct solve_verdict){ .host = h, .fits = f.fits, .reason = f.reason,
							   .free_gpus = f.free_gpus };
		res->nverdicts++;
		if (f.fits && f.last && !last_fit)
			last_fit = &paper[i], last_host = h;
		if (f.fits && !f.last && !res->host) {
			res->host = h;
			res->partition = f.partition;
			res->constraint = f.constraint;
			res->chip = f.chip;
			res->gres_type = f.gres_type;
			res->chips = r.chips;
		}
	}

	if (!res->host && last_fit) { /* a CPU job: a GPU box, as nothing else fits */
		res->host = last_host;
		res->chips = 0;
	}
	if (!res->host && r.chips > 0 && r.check) {
		size_t best = n;
		for (size_t i = 0; i < n; i++)
			if (caps[i].most > 0 && (best == n || caps[i].most > caps[best].most))
				best = i;
		if (best < n) {
			res->host = sorted[best];
			res->partition = caps[best].partition;
			res->constraint = caps[best].constraint;
			res->chip = paper[best].chip;
			res->gres_type = paper[best].gres_type;
			res->chips = r.chips;
			res->fallback = true;
		}
	} else if (!res->host && r.chips > 0) {
		const struct inv_host *best = NULL;
		const char *best_chip = NULL;
		int most = 0;
		for (size_t i = 0; i < n; i++) {
			const char *chip = NULL;
			int c = in_cluster_list(r.forbid, sorted[i]) || (r.only && !in_cluster_list(r.only, sorted[i])) ||
				!inv_host_type_reachable(sorted[i]->type) ||
				(r.container && sorted[i]->container_runtime == CONTAINER_NONE)
				? 0 : capacity(inv, sorted[i], &r, &chip);
			if (c > most) {
				most = c;
				best = sorted[i];
				best_chip = chip;
			}
		}
		if (best) {
			const char *gres = inventory_gres_type(inv, best_chip);
			const struct inv_partition *p = gpu_partition(best, best_chip, gres);
			res->host = best;
			res->partition = p ? p->name : NULL;
			res->constraint = p ? p->constraint : NULL;
			res->chip = best_chip;
			res->gres_type = gres;
			res->chips = r.chips;
			res->fallback = true;
		}
	}
	free(sorted);
	free(caps);
	free(paper);
	return 0;
}

size_t solve_plain_hosts(const struct solve_result *res, const struct inv_host ***hosts)
{
	*hosts = NULL;
	size_t n = 0;
	for (size_t i = 0; i < res->nverdicts; i++)
		if (res->verdicts[i].fits && res->verdicts[i].host->type == INV_HOST_PLAIN)
			n++;
	if (!n && res->host && res->host->type == INV_HOST_PLAIN) {
		*hosts = xcalloc(1, sizeof(**hosts));
		(*hosts)[0] = res->host;
		return 1;
	}
	if (!n)
		return 0;
	const struct solve_verdict **v = xcalloc(n, sizeof(*v));
	size_t m = 0;
	for (size_t i = 0; i < res->nverdicts; i++)
		if (res->verdicts[i].fits && res->verdicts[i].host->type == INV_HOST_PLAIN)
			v[m++] = &res->verdicts[i];
	/* the most free GPUs first, ties as considered (an insertion sort: stable) */
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && v[j]->free_gpus > v[j - 1]->free_gpus; j--) {
			const struct solve_verdict *t = v[j];
			v[j] = v[j - 1];
			v[j - 1] = t;
		}
	*hosts = xcalloc(n, sizeof(**hosts));
	for (size_t i = 0; i < n; i++)
		(*hosts)[i] = v[i]->host;
	free(v);
	return n;
}

void solve_result_release(struct solve_result *res)
{
	for (size_t i = 0; i < res->nverdicts; i++)
		free(res->verdicts[i].reason);
	free(res->verdicts);
	memset(res, 0, sizeof(*res));
}
