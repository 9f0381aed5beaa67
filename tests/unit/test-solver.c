/* SPDX-License-Identifier: MIT */
/* The solver, rule by rule, on small inventories and on the reference one. */
#include "inventory/inventory.h"
#include "solver.h"
#include "unit.h"

static struct inventory *load(const char *text)
{
	struct dp_error err;
	struct inventory *inv = NULL;
	if (inventory_parse("t.yaml", text, strlen(text), &inv, &err) < 0)
		printf("# %s\n", err.msg);
	return inv;
}

/* The chosen host's name ("-" for none), or "!error" for a refused request. */
static const char *pick(const struct inventory *inv, const char *chip, int chips, char **prefer,
			char **forbid, struct solve_result *res, struct dp_error *err)
{
	struct solve_request req = { .chip = chip, .chips = chips, .prefer = prefer, .forbid = forbid };
	dp_error_clear(err);
	if (solve(inv, &req, res, err) < 0)
		return "!error";
	return res->host ? res->host->name : "-";
}

static const char *reason_for(const struct solve_result *res, const char *host)
{
	for (size_t i = 0; i < res->nverdicts; i++)
		if (streq(res->verdicts[i].host->name, host))
			return res->verdicts[i].reason;
	return NULL;
}

#define CLUSTERS "clusters:\n  a: {root: /r, work: /w}\n  b: {root: /r, work: /w}\n"

static void test_reference(void)
{
	struct dp_error err;
	struct solve_result res;
	_cleanup_free_ char *path = xasprintf("%s/reference-inventory.yaml", unit_data());
	struct inventory *inv = NULL;
	CHECK_INT(inventory_load(path, &inv, &err), 0);
	if (!inv)
		return;

	/* Priority order first: workstation has 4 h100. */
	CHECK_STR(pick(inv, "h100", 4, NULL, NULL, &res, &err), "workstation");
	CHECK(res.partition == NULL && res.gres_type == NULL && !res.fallback);
	CHECK_STR(res.chip, "h100");
	CHECK_INT(res.nverdicts, 7);
	/* The order considered: priority, then the rest (hpc-limited) as written. */
	CHECK_STR(res.verdicts[0].host->name, "workstation");
	CHECK_STR(res.verdicts[1].host->name, "cpu-box");
	CHECK_STR(res.verdicts[6].host->name, "hpc-limited");
	solve_result_release(&res);

	/* Too many for the plain box: the first SLURM host in priority, through gres_mapping. */
	CHECK_STR(pick(inv, "h100", 8, NULL, NULL, &res, &err), "hpc-cpu");
	CHECK_STR(res.gres_type, "h100_80gb");
	CHECK_STR(res.partition, "gpu");
	CHECK_STR(reason_for(&res, "workstation"), "has 4 h100, needs 8");
	CHECK_STR(reason_for(&res, "devbox"), "has no h100 (has 8 a100-sxm4-80gb)");
	CHECK_STR(reason_for(&res, "cpu-box"), "has no GPUs");
	/* Named after the chip: cloud's h100 partition. */
	CHECK_STR(reason_for(&res, "cloud"), "fits: 8 h100 on partition h100 (gres h100_80gb)");
	solve_result_release(&res);

	/* The chips map of a SLURM host limits it. */
	CHECK_STR(pick(inv, "h100", 16, NULL, NULL, &res, &err), "hpc-cpu");
	CHECK_STR(reason_for(&res, "hpc-limited"), "its chips limit allows 8 h100, needs 16");
	solve_result_release(&res);

	/* A chip without a gres_mapping skips every SLURM host, with the reason. */
	CHECK_STR(pick(inv, "t4", 1, NULL, NULL, &res, &err), "-");
	CHECK_STR(reason_for(&res, "hpc-login"), "no gres_mapping for t4 in the inventory");
	solve_result_release(&res);

	/* CPU jobs: a CPU-only plain host before a GPU box, though the box comes first. */
	CHECK_STR(pick(inv, NULL, 0, NULL, NULL, &res, &err), "cpu-box");
	CHECK(res.chip == NULL && res.chips == 0);
	CHECK_STR(reason_for(&res, "workstation"), "fits: a CPU job on a GPU box (4 h100), taken last");
	/* ... and SLURM hosts through their cpu_partitions. */
	CHECK_STR(reason_for(&res, "hpc-login"), "fits: a CPU job on partition cpu");
	solve_result_release(&res);

	/* Forbid local: CPU jobs go to the SLURM CPU login, on its cpu partition. */
	char *local[] = { "local", NULL }, *hpc[] = { "hpc", NULL };
	CHECK_STR(pick(inv, NULL, 0, NULL, local, &res, &err), "hpc-cpu");
	CHECK_STR(res.partition, "cpu");
	CHECK_STR(reason_for(&res, "cpu-box"), "cluster 'local' is excluded");
	solve_result_release(&res);

	/* Prefer hpc: its hosts come first, in priority order. */
	CHECK_STR(pick(inv, "h100", 1, hpc, NULL, &res, &err), "hpc-cpu");
	CHECK_STR(res.verdicts[0].host->name, "hpc-cpu");
	CHECK_STR(res.verdicts[4].host->name, "workstation");
	solve_result_release(&res);

	/* Bad requests. */
	CHECK_STR(pick(inv, "h100", 1, hpc, hpc, &res, &err), "!error");
	CHECK_STR(err.msg, "cluster 'hpc' is both preferred and forbidden");
	CHECK_INT(err.kind, DPE_INPUT);
	CHECK_STR(pick(inv, "h1000", 1, NULL, NULL, &res, &err), "!error");
	CHECK_STR(err.msg, "unknown chip 'h1000' (did you mean 'h100'?)");
	CHECK_STR(pick(inv, "a100", 1, NULL, NULL, &res, &err), "!error");
	CHECK_CONTAINS(err.msg, "did you mean one of: a100-sxm4-80gb,");
	char *typo[] = { "hcp", NULL };
	CHECK_STR(pick(inv, NULL, 1, typo, NULL, &res, &err), "!error");
	CHECK_STR(err.msg, "--prefer: no cluster 'hcp' in the inventory (did you mean 'hpc'?)");
	CHECK_STR(pick(inv, NULL, 1, NULL, typo, &res, &err), "!error");
	CHECK_STR(err.msg, "--exclude-cluster: no cluster 'hcp' in the inventory (did you mean 'hpc'?)");
	CHECK_STR(pick(inv, "h100", 0, NULL, NULL, &res, &err), "!error");
	CHECK_STR(err.msg, "a CPU job (0 chips) cannot ask for chip 'h100'");
	CHECK_STR(pick(inv, NULL, -1, NULL, NULL, &res, &err), "!error");
	inventory_free(inv);
}

static void test_rules(void)
{
	struct dp_error err;
	struct solve_result res;

	/* Any GPU on a plain host: its first chip with enough; case-insensitive chip names. */
	struct inventory *inv = load(CLUSTERS "hosts:\n"
				     "  p: {cluster: a, chips: {t4: 1, l4: 4}}\n");
	CHECK_STR(pick(inv, NULL, 2, NULL, NULL, &res, &err), "p");
	CHECK_STR(res.chip, "l4");
	solve_result_release(&res);
	CHECK_STR(pick(inv, "L4", 4, NULL, NULL, &res, &err), "p");
	CHECK_STR(res.chip, "l4");
	solve_result_release(&res);
	CHECK_STR(pick(inv, NULL, 5, NULL, NULL, &res, &err), "-");
	CHECK_STR(reason_for(&res, "p"), "has 1 t4, 4 l4, needs 5 of one kind");
	solve_result_release(&res);
	inventory_free(inv);

	/* Partitions: named after the chip's family, else default, else first; constraint kept;
	 * cpu_partitions for CPU jobs; a SLURM host with only cpu_partitions takes no GPU job. */
	inv = load(CLUSTERS "gres_mapping: {a100-sxm4-80gb: a100_80g, h100: hh}\n"
		   "hosts:\n"
		   "  cpuonly: {type: slurm, cluster: a, cpu_partitions: [small]}\n"
		   "  s:\n    type: slurm\n    cluster: a\n"
		   "    partitions: [first, {name: main, default: true, constraint: ib}, a100, hh]\n"
		   "    cpu_partitions: [cpu]\n");
	CHECK_STR(pick(inv, "a100-sxm4-80gb", 2, NULL, NULL, &res, &err), "s");
	CHECK_STR(res.partition, "a100");
	CHECK_STR(res.gres_type, "a100_80g");
	CHECK_STR(reason_for(&res, "cpuonly"), "has only cpu_partitions, no GPU partitions");
	solve_result_release(&res);
	CHECK_STR(pick(inv, "h100", 2, NULL, NULL, &res, &err), "s");
	CHECK_STR(res.partition, "hh");         /* named after the GRES type */
	solve_result_release(&res);
	CHECK_STR(pick(inv, NULL, 2, NULL, NULL, &res, &err), "s");
	CHECK_STR(res.partition, "main");       /* the default */
	CHECK_STR(res.constraint, "ib");
	CHECK(res.chip == NULL && res.gres_type == NULL);   /* untyped gpu:N */
	solve_result_release(&res);
	CHECK_STR(pick(inv, NULL, 0, NULL, NULL, &res, &err), "cpuonly");
	CHECK_STR(res.partition, "small");
	solve_result_release(&res);
	inventory_free(inv);

	/* No default partition: the first written; no partitions at all: NULL (the cluster's). */
	inv = load(CLUSTERS "hosts:\n  s: {type: slurm, cluster: a, partitions: [x, y]}\n"
		   "  t: {type: slurm, cluster: b}\n");
	CHECK_STR(pick(inv, NULL, 1, NULL, NULL, &res, &err), "s");
	CHECK_STR(res.partition, "x");
	solve_result_release(&res);
	char *a[] = { "a", NULL };
	CHECK_STR(pick(inv, NULL, 1, NULL, a, &res, &err), "t");
	CHECK(res.partition == NULL);
	solve_result_release(&res);
	inventory_free(inv);

	/* Fallback: nothing fits 16 h100; the SLURM host with the most h100 is flagged. */
	inv = load(CLUSTERS "gres_mapping: {h100: h100, a10: a10}\n"
		   "hosts:\n"
		   "  small: {type: slurm, cluster: a, chips: {h100: 4}}\n"
		   "  big: {type: slurm, cluster: b, chips: {h100: 8, a10: 64}}\n"
		   "  box: {cluster: a, chips: {h100: 12}}\n");
	CHECK_STR(pick(inv, "h100", 16, NULL, NULL, &res, &err), "big");
	CHECK(res.fallback);
	CHECK_STR(res.chip, "h100");
	CHECK_INT(res.chips, 16);
	CHECK_STR(reason_for(&res, "big"), "its chips limit allows 8 h100, needs 16");
	solve_result_release(&res);
	/* Forbidden hosts are not fallbacks either. */
	char *b[] = { "b", NULL };
	CHECK_STR(pick(inv, "h100", 16, NULL, b, &res, &err), "small");
	CHECK(res.fallback);
	solve_result_release(&res);
	/* Any GPU: a SLURM host with a chips map uses its first mapped chip with enough. */
	CHECK_STR(pick(inv, "h100", 12, NULL, NULL, &res, &err), "box");
	CHECK(!res.fallback);
	solve_result_release(&res);
	CHECK_STR(pick(inv, NULL, 20, NULL, NULL, &res, &err), "big");
	CHECK(!res.fallback);
	CHECK_STR(res.chip, "a10");
	CHECK_STR(res.gres_type, "a10");
	solve_result_release(&res);
	/* No fallback for a chip nobody has. */
	CHECK_STR(pick(inv, "l4", 1, NULL, NULL, &res, &err), "-");
	CHECK(!res.fallback);
	solve_result_release(&res);
	inventory_free(inv);

	/* An empty inventory: nothing fits, no verdicts. */
	inv = load("");
	CHECK_STR(pick(inv, NULL, 1, NULL, NULL, &res, &err), "-");
	CHECK_INT(res.nverdicts, 0);
	solve_result_release(&res);
	inventory_free(inv);
}

/* A job with an image: hosts without a container_runtime do not fit, and say why. */
/* A CPU job goes to a GPU box when nothing else fits (as in the reference); --cluster
 * keeps the hosts of those clusters only. */
static void test_cpu_and_clusters(void)
{
	struct dp_error err;
	struct solve_result res;
	struct inventory *inv = load(CLUSTERS "hosts:\n"
				     "  gbox: {cluster: a, chips: {h100: 2}}\n"
				     "  s: {type: slurm, cluster: b, cpu_partitions: [cpu]}\n"
				     "  cbox: {cluster: b}\n");
	CHECK_STR(pick(inv, NULL, 0, NULL, NULL, &res, &err), "s"); /* not the GPU box, first */
	solve_result_release(&res);
	char *a[] = { "a", NULL }, *b[] = { "b", NULL };
	struct solve_request req = { .chips = 0, .only = a };
	CHECK_INT(solve(inv, &req, &res, &err), 0);
	CHECK(res.host && streq(res.host->name, "gbox"));
	CHECK_STR(reason_for(&res, "gbox"), "fits: a CPU job on a GPU box (2 h100), taken last");
	CHECK_STR(reason_for(&res, "s"), "cluster 'b' is not one of --cluster");
	solve_result_release(&res);
	req = (struct solve_request){ .chips = 1, .only = b };
	CHECK_INT(solve(inv, &req, &res, &err), 0);
	CHECK(!res.host || !streq(res.host->name, "gbox")); /* (the fallback keeps --cluster too) */
	solve_result_release(&res);
	req = (struct solve_request){ .chips = 1, .only = a, .forbid = a };
	CHECK_INT(solve(inv, &req, &res, &err), -1);
	CHECK_STR(err.msg, "cluster 'a' is both asked for (--cluster) and excluded");
	char *typo[] = { "c", NULL };
	req = (struct solve_request){ .chips = 1, .only = typo };
	CHECK_INT(solve(inv, &req, &res, &err), -1);
	CHECK_CONTAINS(err.msg, "--cluster: no cluster 'c' in the inventory");
	inventory_free(inv);
}

static void test_container(void)
{
	struct inventory *inv = load(CLUSTERS "hosts:\n"
		"  box1: {cluster: a, chips: {h100: 2}}\n"
		"  box2: {cluster: b, chips: {h100: 2}, container_runtime: podman}\n");
	struct dp_error err;
	struct solve_result res;
	struct solve_request req = { .chip = "h100", .chips = 1, .container = true };
	CHECK(solve(inv, &req, &res, &err) == 0);
	CHECK(res.host && streq(res.host->name, "box2"));
	CHECK_STR(reason_for(&res, "box1"), "no container_runtime: the job runs in an image");
	solve_result_release(&res);
	req.container = false;
	CHECK(solve(inv, &req, &res, &err) == 0);
	CHECK(res.host && streq(res.host->name, "box1"));
	solve_result_release(&res);
	/* the most-capacity fallback skips them too */
	req.container = true;
	req.chips = 3;
	CHECK(solve(inv, &req, &res, &err) == 0);
	CHECK(res.host == NULL || streq(res.host->name, "box2"));
	solve_result_release(&res);
	inventory_free(inv);
}

/* A sweep's hosts offline: the plain hosts that fit on paper, as considered
 * (priority first); never a SLURM host or one that does not fit. */
static void test_sweep_hosts(void)
{
	struct inventory *inv = load(CLUSTERS "priority: [box3]\nhosts:\n"
		"  hpc: {cluster: a, type: slurm, partitions: [{name: gpu}]}\n"
		"  box1: {cluster: a, chips: {h100: 2}}\n"
		"  small: {cluster: b, chips: {h100: 1}}\n"
		"  box3: {cluster: b, chips: {h100: 4}}\n");
	struct dp_error err;
	struct solve_result res;
	const struct inv_host **hosts;
	CHECK_STR(pick(inv, "h100", 2, NULL, NULL, &res, &err), "box3");
	CHECK_INT(solve_plain_hosts(&res, &hosts), 2);
	CHECK_STR(hosts[0]->name, "box3");
	CHECK_STR(hosts[1]->name, "box1");
	free(hosts);
	solve_result_release(&res);
	CHECK_STR(pick(inv, "h100", 8, NULL, NULL, &res, &err), "-"); /* none fits */
	CHECK_INT(solve_plain_hosts(&res, &hosts), 0);
	CHECK(hosts == NULL);
	solve_result_release(&res);
	inventory_free(inv);
}

int main(void)
{
	test_cpu_and_clusters();
	test_container();
	test_sweep_hosts();
	test_reference();
	test_rules();
	return unit_done();
}
