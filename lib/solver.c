/* SPDX-License-Identifier: MIT */
/* The offline solver: rules in solver.h. Every host gets a verdict with its reason. */
#include "chips.h"
#include "solver.h"
#include "strbuf.h"

struct fit {
	bool fits;
	char *reason;
	const char *partition, *constraint, *chip, *gres_type;
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
		if (h->nchips == 0) {
			f->fits = true;
			f->reason = xstrdup("fits: a CPU-only host");
		} else {
			f->reason = xasprintf("has GPUs (%s); CPU jobs go to CPU-only hosts", has.buf);
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
	    check_clusters(inv, req->forbid, "--forbid", err) < 0)
		return -1;
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
	for (size_t i = 0; i < n; i++) {
		const struct inv_host *h = sorted[i];
		struct fit f = { 0 };
		if (in_cluster_list(r.forbid, h))
			f.reason = xasprintf("cluster '%s' is forbidden", h->cluster_name);
		else if (h->type == INV_HOST_PLAIN)
			eval_plain(h, &r, &f);
		else
			eval_slurm(inv, h, &r, &f);
		res->verdicts[i] = (struct solve_verdict){ .host = h, .fits = f.fits, .reason = f.reason };
		res->nverdicts++;
		if (f.fits && !res->host) {
			res->host = h;
			res->partition = f.partition;
			res->constraint = f.constraint;
			res->chip = f.chip;
			res->gres_type = f.gres_type;
			res->chips = r.chips;
		}
	}

	if (!res->host && r.chips > 0) {
		const struct inv_host *best = NULL;
		const char *best_chip = NULL;
		int most = 0;
		for (size_t i = 0; i < n; i++) {
			const char *chip = NULL;
			int c = in_cluster_list(r.forbid, sorted[i]) ? 0 : capacity(inv, sorted[i], &r, &chip);
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
	return 0;
}

void solve_result_release(struct solve_result *res)
{
	for (size_t i = 0; i < res->nverdicts; i++)
		free(res->verdicts[i].reason);
	free(res->verdicts);
	memset(res, 0, sizeof(*res));
}
