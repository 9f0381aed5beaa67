/* SPDX-License-Identifier: MIT */
/*
 * Where submit, submit-packed and notebook send the job: -H HOST (an inventory host,
 * or an ssh alias taken for a SLURM login), a hostlist of plain hosts for a sweep,
 * or the solver's choice (--solve: asking the hosts what is free now unless
 * --no-check; --cluster and --exclude-cluster filter).
 */
#include <string.h>

#include "dispatch.h"
#include "inventory/inventory.h"
#include "sched/slurm/hostlist.h"
#include "solver.h"
#include "submit.h"

/* A sweep on plain hosts: -H HOST or a hostlist (box[1-2], box1,box2), each a plain
 * host of the inventory. */
static int pick_sweep_hosts(struct dp_ctx *ctx, struct submit *s)
{
	struct dp_error err = { 0 };
	_cleanup_strv_free_ char **names = NULL;
	if (hostlist_expand(s->o->host, &names, &err) < 0)
		return report_error(&err);
	size_t n = strv_len(names);
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < i; j++)
			if (streq(names[i], names[j]))
				return usage_error(ctx, "-H '%s' names '%s' twice", s->o->host, names[i]);
	s->hosts = xcalloc(n, sizeof(*s->hosts));
	for (size_t i = 0; i < n; i++) {
		const struct inv_host *h = ctx->inv ? inventory_host(ctx->inv, names[i]) : NULL;
		if (!h || h->type != INV_HOST_PLAIN) {
			error_msg("a sweep over several hosts runs on plain hosts of the inventory: '%s' "
				  "is %s (a sweep on a SLURM host is one job array: give that host "
				  "alone)", names[i], !h ? "not in the inventory"
				  : h->type == INV_HOST_SLURM ? "a SLURM host" : "not a plain host");
			return DPE_INPUT;
		}
		s->hosts[s->nhosts++] = h;
	}
	s->host = s->hosts[0];
	if (s->spec.chip)
		s->gres_type = inventory_gres_type(ctx->inv, s->spec.chip);
	return 0;
}

int submit_pick_host(struct dp_ctx *ctx, struct submit *s)
{
	struct dp_error err = { 0 };
	if (!s->o->solve && jobspec_is_sweep(&s->spec) && strpbrk(s->o->host, ",["))
		return pick_sweep_hosts(ctx, s);
	if (s->o->solve) {
		if (!ctx->inv) {
			error_msg("--solve needs an inventory: give -i FILE or set DISPATCH_INVENTORY");
			return DPE_INPUT;
		}
		/* what is free now, unless --no-check (dispatch solve: only with --check) */
		struct solve_request req = { .chip = s->spec.chip,
					     .chips = (int)jobspec_total_gpus(&s->spec),
					     .container = s->spec.container_image != NULL,
					     .only = s->o->clusters, .forbid = s->o->exclude_clusters,
					     .check = !s->o->no_check };
		if (req.check) {
			int r = solve_checked(ctx, &req, &s->solved, &s->live);
			if (r)
				return r;
		} else if (solve(ctx->inv, &req, &s->solved, &err) < 0) {
			return report_error(&err);
		}
		for (size_t i = 0; i < s->solved.nverdicts; i++)
			info_msg(ctx, "solve: %s: %s", s->solved.verdicts[i].host->name,
				 s->solved.verdicts[i].reason ? s->solved.verdicts[i].reason : "");
		if (!s->solved.host) {
			error_msg("no host in the inventory fits %d %s GPU%s (-v says why)", req.chips,
				  req.chip ? req.chip : "", req.chips == 1 ? "" : "s");
			return DPE_FAIL;
		}
		s->host = s->solved.host;
		if (jobspec_is_sweep(&s->spec) && s->host->type == INV_HOST_PLAIN) {
			/* spread over the plain hosts that fit, least loaded first */
			s->nhosts = solve_plain_hosts(&s->solved, &s->hosts);
			s->host = s->hosts[0];
		}
		s->partition = s->solved.partition;
		s->gres_type = s->solved.gres_type;
		if (!s->gres_type && s->spec.chip)
			s->gres_type = inventory_gres_type(ctx->inv, s->spec.chip);
		return 0;
	}
	s->host = ctx->inv ? inventory_host(ctx->inv, s->o->host) : NULL;
	if (s->host && !inv_host_type_reachable(s->host->type)) {
		error_msg("'%s' is a %s host (the reference drives it through %s): dispatch drives "
			  "SSH and SLURM hosts only (plain and slurm)", s->host->name,
			  inv_host_type_name(s->host->type),
			  s->host->type == INV_HOST_TPU ? "gcloud" : "kubectl");
		return DPE_INPUT;
	}
	if (s->host) {
		if (s->spec.chip)
			s->gres_type = inventory_gres_type(ctx->inv, s->spec.chip);
		if (s->spec.chip && !s->gres_type && s->host->type == INV_HOST_SLURM)
			warning_msg("the inventory's gres_mapping has no entry for chip '%s': asking "
				    "'%s' for GRES type '%s' (map it under gres_mapping if the cluster "
				    "names it otherwise)", s->spec.chip, s->host->name, s->spec.chip);
		if (jobspec_is_sweep(&s->spec) && s->host->type == INV_HOST_PLAIN) { /* a sweep's one host */
			s->hosts = xcalloc(1, sizeof(*s->hosts));
			s->hosts[s->nhosts++] = s->host;
		}
		return 0;
	}
	/* Not an inventory host: an ssh alias of a SLURM login, with no defaults. */
	s->adhoc.name = (char *)s->o->host;
	s->adhoc.ssh = (char *)s->o->host;
	s->adhoc.type = INV_HOST_SLURM;
	s->host = &s->adhoc;
	info_msg(ctx, "'%s' is not in the inventory: taking it for a SLURM login with no defaults",
		 s->o->host);
	return 0;
}
