/* SPDX-License-Identifier: MIT */
/* The inventory loader: the reference inventory's values, and every error's exact message. */
#include "inventory/chips.h"
#include "inventory/inventory.h"
#include "base/strbuf.h"
#include "unit.h"

static struct inventory *parse(const char *text, struct dp_error *err)
{
	struct inventory *inv = NULL;
	dp_error_clear(err);
	if (inventory_parse("inv.yaml", text, strlen(text), &inv, err) < 0)
		return NULL;
	return inv;
}

/* The message for a document that must fail. */
static const char *error_of(const char *text)
{
	static struct dp_error err;
	struct inventory *inv = parse(text, &err);
	if (inv) {
		inventory_free(inv);
		return "(loaded without error)";
	}
	return err.kind == DPE_INPUT ? err.msg : "(wrong error kind)";
}

#define BASE "clusters:\n  c1: {root: /r, work: /w}\n"

static void test_reference(void)
{
	struct dp_error err = { 0 };
	_cleanup_free_ char *path = xasprintf("%s/reference-inventory.yaml", unit_data());
	struct inventory *inv = NULL;
	CHECK_INT(inventory_load(path, &inv, &err), 0);
	if (!inv) {
		printf("# %s\n", err.msg);
		return;
	}
	CHECK_STR(inv->mount, "/mnt/juicefs-local");
	CHECK(inv->proxy == NULL);
	CHECK_INT(strv_len(inv->priority), 6);
	CHECK_STR(inv->priority[0], "workstation");
	CHECK_STR(inv->priority[5], "cloud");
	CHECK_INT(inv->ngres_mapping, 3);
	CHECK_STR(inventory_gres_type(inv, "h100"), "h100_80gb");
	CHECK_STR(inventory_gres_type(inv, "A100-SXM4-80GB"), "a100_80g");
	CHECK(inventory_gres_type(inv, "t4") == NULL);

	CHECK_INT(inv->nclusters, 2);
	const struct inv_cluster *local = inventory_cluster(inv, "local");
	CHECK(local && streq(local->root, "/data/theseus") && streq(local->work, "/tmp/theseus"));
	CHECK_STR(local->log, "/var/log/theseus");
	CHECK(local->share == NULL && local->mount == NULL);
	const struct inv_cluster *hpc = inventory_cluster(inv, "hpc");
	CHECK_STR(hpc->share, "/scratch/theseus/.dispatch");
	CHECK_STR(hpc->mount, "redis://:password@redis.example.com:6379/0");
	CHECK_STR(hpc->cache_size, "100G");
	CHECK_STR(hpc->cache_dir, "/scratch/juicefs-cache");

	CHECK_INT(inv->nhosts, 7);
	const struct inv_host *ws = inventory_host(inv, "workstation");
	CHECK(ws && ws->type == INV_HOST_PLAIN);
	CHECK_STR(ws->ssh, "gpu-workstation");
	CHECK(ws->cluster == local);
	CHECK_INT(ws->nchips, 1);
	CHECK_STR(ws->chips[0].chip, "h100");
	CHECK_INT(ws->chips[0].count, 4);
	CHECK_STR(ws->uv_groups[0], "cuda12");
	CHECK_INT(ws->line, 36);
	CHECK_INT(ws->col, 3);

	const struct inv_host *cpu = inventory_host(inv, "cpu-box");
	CHECK(cpu->nchips == 0 && cpu->chips_set);

	const struct inv_host *login = inventory_host(inv, "hpc-login");
	CHECK(login->type == INV_HOST_SLURM);
	CHECK_INT(login->npartitions, 2);
	CHECK_STR(login->partitions[1].name, "cpu");
	CHECK(!login->partitions[0].is_default && login->partitions[0].constraint == NULL);
	CHECK_STR(login->cpu_partitions[0], "cpu");
	CHECK_STR(login->account, "myproject");
	CHECK_STR(login->qos, "normal");
	CHECK_STR(login->mem, "64G");
	CHECK_INT(strv_len(login->exclude), 2);
	CHECK_STR(login->exclude[1], "node002");
	CHECK(!login->chips_set);

	const struct inv_host *lim = inventory_host(inv, "hpc-limited");
	CHECK(lim->chips_set && lim->nchips == 2);
	CHECK_STR(lim->chips[1].chip, "a100-sxm4-80gb");
	CHECK_INT(lim->chips[1].count, 16);
	CHECK(inventory_host(inv, "nope") == NULL);
	CHECK_STR(inventory_host(inv, "cloud")->uv_groups[0], "cuda11");
	inventory_free(inv);
}

static void test_values(void)
{
	struct dp_error err;
	struct inventory *inv = parse(BASE "hosts:\n"
				      "  s:\n    type: slurm\n    cluster: c1\n"
				      "    partitions:\n      - {name: gpu, default: true, constraint: a100}\n      - cpu\n"
				      "    partitions_cpu: [cpu]\n    annotations: {note: hi, n: 3}\n"
				      "    chips: {}\n"
				      "  p:\n    cluster: c1\n    chips: {H100: '2'}\n", &err);
	CHECK(inv != NULL);
	if (!inv) {
		printf("# %s\n", err.msg);
		return;
	}
	const struct inv_host *s = inventory_host(inv, "s");
	CHECK_STR(s->ssh, "s");                 /* ssh defaults to the name */
	CHECK(s->partitions[0].is_default);
	CHECK_STR(s->partitions[0].constraint, "a100");
	CHECK_STR(s->cpu_partitions[0], "cpu"); /* the partitions_cpu spelling */
	CHECK_INT(s->nannotations, 2);
	CHECK_STR(s->annotations[1].value, "3");
	CHECK(s->chips_set && s->nchips == 0);
	const struct inv_host *p = inventory_host(inv, "p");
	CHECK(p->type == INV_HOST_PLAIN);
	CHECK_STR(p->chips[0].chip, "h100");    /* canonical spelling */
	CHECK_INT(p->chips[0].count, 2);
	CHECK(p->gpu_lock_dir == NULL && p->max_jobs == 0);
	inventory_free(inv);

	/* A shared GPU box: its lock directory and job cap. */
	inv = parse(BASE "hosts:\n  b:\n    cluster: c1\n    gpu_lock_dir: /var/tmp/locks\n"
		    "    max_jobs: 3\n", &err);
	CHECK(inv != NULL);
	if (inv) {
		CHECK_STR(inv->hosts[0].gpu_lock_dir, "/var/tmp/locks");
		CHECK_INT(inv->hosts[0].max_jobs, 3);
	}
	inventory_free(inv);

	/* An empty document and a null chips map are fine. */
	inv = parse("", &err);
	CHECK(inv && inv->nhosts == 0 && inv->nclusters == 0);
	inventory_free(inv);
	inv = parse(BASE "hosts:\n  s:\n    type: slurm\n    cluster: c1\n    chips:\n", &err);
	CHECK(inv && !inv->hosts[0].chips_set);
	inventory_free(inv);
}

static void test_errors(void)
{
	struct dp_error err;
	struct inventory *inv;
	CHECK(parse("a: [1\n", &err) == NULL);
	CHECK_CONTAINS(err.msg, "inv.yaml:2:1: malformed YAML");

	CHECK_STR(error_of("- a\n"), "inv.yaml:1:1: expected a mapping with 'clusters' and 'hosts' at the top, got a list");
	CHECK_STR(error_of("hostz: {}\n"), "inv.yaml:1:1: unknown key 'hostz' (did you mean 'hosts'?)");
	CHECK_STR(error_of("zzzzzz: 1\n"), "inv.yaml:1:1: unknown key 'zzzzzz'");
	CHECK_STR(error_of("mount: /m\nproxy: a:/b\n"),
		  "inv.yaml:2:8: 'mount' and 'proxy' are both set: they are mutually exclusive (keep one)");
	CHECK_STR(error_of(BASE "hosts:\n  gpu1:\n    cluster: c1\n    chips:\n      h100: four\n"),
		  "inv.yaml:7:13: hosts.gpu1.chips.h100: expected a whole number > 0, got 'four'");
	CHECK_STR(error_of(BASE "hosts:\n  gpu1:\n    cluster: c1\n    chips: {h100: 0}\n"),
		  "inv.yaml:6:19: hosts.gpu1.chips.h100: expected a whole number > 0, got '0'");
	CHECK_STR(error_of(BASE "hosts:\n  gpu1:\n    cluster: c1\n    chips: {h10: 1}\n"),
		  "inv.yaml:6:13: hosts.gpu1.chips: unknown chip 'h10' (did you mean one of: h100, h100-pcie, h100-nvl?)");
	CHECK_STR(error_of(BASE "hosts:\n  gpu1:\n    cluster: c1\n    chips: {a100-sxm-80gb: 1}\n"),
		  "inv.yaml:6:13: hosts.gpu1.chips: unknown chip 'a100-sxm-80gb' (did you mean 'a100-sxm4-80gb'?)");
	CHECK_STR(error_of(BASE "hosts:\n  gpu1:\n    cluster: c1\n    chips: [h100]\n"),
		  "inv.yaml:6:12: hosts.gpu1.chips: expected a mapping, got a list");
	CHECK_STR(error_of(BASE "hosts:\n  h:\n    type: slurm\n    cluster: c1\n    partiton: [gpu]\n"),
		  "inv.yaml:7:5: unknown key 'partiton' in hosts.h (did you mean 'partitions'?)");
	CHECK_STR(error_of(BASE "hosts:\n  h:\n    cluster: c1\n    partitions: [gpu]\n"),
		  "inv.yaml:6:5: hosts.h.partitions: only for slurm hosts (add 'type: slurm', or remove it)");
	CHECK_STR(error_of(BASE "hosts:\n  h:\n    cluster: c1\n    max_jobs: 0\n"),
		  "inv.yaml:6:15: hosts.h.max_jobs: expected a whole number > 0, got '0'");
	CHECK_STR(error_of(BASE "hosts:\n  h:\n    cluster: c1\n    gpu_lock_dir: tmp/x\n"),
		  "inv.yaml:6:19: hosts.h.gpu_lock_dir: expected an absolute path on the host, got 'tmp/x'");
	CHECK_STR(error_of(BASE "hosts:\n  h:\n    type: slrum\n    cluster: c1\n"),
		  "inv.yaml:5:11: hosts.h.type: unknown host type 'slrum' (did you mean 'slurm'?)");
	CHECK_STR(error_of(BASE "hosts:\n  h:\n    cluster: c2\n"),
		  "inv.yaml:5:14: hosts.h.cluster: no cluster 'c2' (did you mean 'c1'?)");
	CHECK_STR(error_of(BASE "hosts:\n  h:\n    cluster: elsewhere\n"),
		  "inv.yaml:5:14: hosts.h.cluster: no cluster 'elsewhere' (clusters: c1)");
	CHECK_STR(error_of("hosts:\n  h:\n    cluster: c\n"),
		  "inv.yaml:3:14: hosts.h.cluster: no cluster 'c': the inventory defines no clusters");
	CHECK_STR(error_of(BASE "hosts:\n  h:\n    ssh: x\n"), "inv.yaml:5:5: hosts.h: 'cluster' is required");
	CHECK_STR(error_of(BASE "hosts:\n  h:\n"), "inv.yaml:4:3: hosts.h: needs at least 'cluster'");
	CHECK_STR(error_of(BASE "hosts:\n  h:\n    cluster: c1\n    ssh: -oProxyCommand=x\n"),
		  "inv.yaml:6:10: hosts.h.ssh: expected a single word not starting with '-', got '-oProxyCommand=x'");
	/* A newline would start an #SBATCH line of its own: refused, annotations aside. */
	CHECK_STR(error_of(BASE "hosts:\n  h:\n    type: slurm\n    cluster: c1\n"
			   "    partitions: [{name: gpu, constraint: \"a100\\n#SBATCH --uid=0\"}]\n"),
		  "inv.yaml:7:42: hosts.h.partitions[0].constraint: the value holds a newline or "
		  "another control character: give it on one line");
	CHECK_STR(error_of("clusters:\n  c1:\n    root: /r\n    work: /w\n    log: \"/l\\n#SBATCH -x\"\n"
			   "hosts: {}\n"),
		  "inv.yaml:5:10: clusters.c1.log: the value holds a newline or another control "
		  "character: give it on one line");
	inv = parse(BASE "hosts:\n  h:\n    type: slurm\n    cluster: c1\n    annotations: {note: \"two\\nlines\"}\n", &err);
	CHECK(inv != NULL);
	if (inv)
		CHECK_STR(inv->hosts[0].annotations[0].value, "two\nlines");
	inventory_free(inv);
	CHECK_STR(error_of(BASE "hosts:\n  'a b':\n    cluster: c1\n"),
		  "inv.yaml:4:3: hosts.a b: a host name is letters, digits, '.', '_' and '-', and does not start with '-'");
	CHECK_STR(error_of(BASE "hosts:\n  h:\n    type: slurm\n    cluster: c1\n    mem: 64 GB\n"),
		  "inv.yaml:7:10: hosts.h.mem: expected a size as sbatch --mem takes it (a number with K, M, G or T, e.g. 64G), got '64 GB'");
	CHECK_STR(error_of(BASE "hosts:\n  h:\n    type: slurm\n    cluster: c1\n    partitions: [{name: a, default: yes please}]\n"),
		  "inv.yaml:7:37: hosts.h.partitions[0].default: expected true or false, got 'yes please'");
	CHECK_STR(error_of(BASE "hosts:\n  h:\n    type: slurm\n    cluster: c1\n    partitions: [a, a]\n"),
		  "inv.yaml:7:21: hosts.h.partitions[1]: partition 'a' is listed twice");
	CHECK_STR(error_of(BASE "hosts:\n  h:\n    type: slurm\n    cluster: c1\n    partitions: [{default: true}]\n"),
		  "inv.yaml:7:18: hosts.h.partitions[0]: 'name' is required");
	CHECK_STR(error_of(BASE "hosts:\n  h:\n    type: slurm\n    cluster: c1\n    cpu_partitions: [a]\n    partitions_cpu: [a]\n"),
		  "inv.yaml:8:21: hosts.h.partitions_cpu: the same as cpu_partitions, which is also set; keep one");
	CHECK_STR(error_of(BASE "hosts:\n  h:\n    cluster: c1\n    uv_groups: cuda12\n"),
		  "inv.yaml:6:16: hosts.h.uv_groups: expected a list, got a string (write [cuda12])");
	CHECK_STR(error_of(BASE "hosts:\n  h:\n    type: slurm\n    cluster: c1\n    exclude: [[a]]\n"),
		  "inv.yaml:7:15: hosts.h.exclude[0]: expected a name, got a list");
	CHECK_STR(error_of(BASE "hosts:\n  h:\n    type: slurm\n    cluster: c1\n    annotations: {a: [1]}\n"),
		  "inv.yaml:7:22: hosts.h.annotations.a: expected a string, got a list");
	CHECK_STR(error_of(BASE "hosts:\n  h: {cluster: c1}\npriority: [h, g]\n"),
		  "inv.yaml:5:15: priority[1]: no host 'g' in hosts (did you mean 'h'?)");
	CHECK_STR(error_of(BASE "hosts:\n  h: {cluster: c1}\npriority: [h, h]\n"),
		  "inv.yaml:5:15: priority[1]: host 'h' is listed twice");
	CHECK_STR(error_of(BASE "priority: box\n"),
		  "inv.yaml:3:11: priority: expected a list of host names, got a string");
	CHECK_STR(error_of("clusters:\n  c1: {root: /r}\n"), "inv.yaml:2:7: clusters.c1: 'work' is required");
	CHECK_STR(error_of("clusters:\n  c1: {root: /r, work: ''}\n"),
		  "inv.yaml:2:24: clusters.c1.work: must not be empty");
	CHECK_STR(error_of("clusters:\n  c1: {root: /r, work: /w, logs: /l}\n"),
		  "inv.yaml:2:28: unknown key 'logs' in clusters.c1 (did you mean 'log'?)");
	CHECK_STR(error_of("clusters:\n  c1: {root: [/r], work: /w}\n"),
		  "inv.yaml:2:14: clusters.c1.root: expected a string, got a list");
	CHECK_STR(error_of("gres_mapping:\n  h100: 'h100 80'\n"),
		  "inv.yaml:2:9: gres_mapping.h100: expected a single word not starting with '-', got 'h100 80'");
	CHECK_STR(error_of("gres_mapping:\n  h100: a:b\n"),
		  "inv.yaml:2:9: gres_mapping.h100: expected a GRES type such as 'a100_80g', got 'a:b'");
	CHECK_STR(error_of("gres_mapping:\n  h100: a\n  H100: b\n"),
		  "inv.yaml:3:3: gres_mapping.H100: chip 'h100' is mapped twice");
	CHECK_STR(error_of("gres_mapping:\n  quantum: a\n"),
		  "inv.yaml:2:3: gres_mapping: unknown chip 'quantum' ('dispatch solve --chip' completes them; see dispatch-solve(1))");

	/* No terminal escapes from the file reach the message. */
	CHECK_STR(error_of(BASE "hosts:\n  h: {cluster: c1, \"\\e[31mx\": 1}\n"),
		  "inv.yaml:4:20: unknown key '?[31mx' in hosts.h");

	inv = NULL;
	CHECK_INT(inventory_load("/nonexistent/inv.yaml", &inv, &err), -1);
	CHECK_INT(err.kind, DPE_NOTFOUND);
	CHECK_STR(err.msg, "cannot read inventory '/nonexistent/inv.yaml': No such file or directory");
}

static void test_catalogue(void)
{
	/* The completion words list exactly the catalogue, in order. */
	struct strbuf sb = STRBUF_INIT;
	strbuf_adds(&sb, "words:");
	for (size_t i = 0; i < chip_catalogue_len; i++)
		strbuf_addf(&sb, "%s%s", i ? " " : "", chip_catalogue[i].name);
	CHECK_STR(chip_complete_words, sb.buf);
	strbuf_release(&sb);
	for (const char *req[] = { "h100", "a100-sxm4-80gb", "a100-pcie-40gb", "a100-sxm4-40gb",
				   "a100-pcie-80gb", "h200", "b200", "l40s", "l40", "a10g", "a10",
				   "l4", "t4", "v100-16gb", "v100-32gb", "rtx-4090", "rtx-a6000",
				   "mi300x", NULL }, **r = req; *r; r++)
		CHECK(chip_find(*r) != NULL);
	for (size_t i = 0; i < chip_catalogue_len; i++) {
		const struct chip *c = &chip_catalogue[i];
		CHECK(chip_find(c->name) == c && c->memory_gb > 0 && c->display[0]);
		for (const char *p = c->name; *p; p++)
			if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-'))
				CHECK(!"chip names are lower case, digits and '-'");
	}
	CHECK_STR(chip_find("H100")->name, "h100");
	CHECK_INT(chip_find("a100-pcie-40gb")->memory_gb, 40);
	CHECK_STR(chip_suggestion("rtx4090"), " (did you mean 'rtx-4090'?)");
	CHECK_STR(chip_suggestion("qqqqqqq"), "");
}

/* The reference's current format: every key loads, and each lands where dispatch
 * uses it. */
static void test_reference_current(void)
{
	struct dp_error err = { 0 };
	_cleanup_free_ char *path = xasprintf("%s/reference-inventory-current.yaml", unit_data());
	struct inventory *inv = NULL;
	unsetenv("DISPATCH_TEST_HOME");
	CHECK_INT(inventory_load(path, &inv, &err), 0);
	if (!inv) {
		printf("# %s\n", err.msg);
		return;
	}
	CHECK(inv->has_secrets);
	const struct inv_cluster *lab = inventory_cluster(inv, "lab");
	CHECK_STR(lab->root, "/home/tester/theseus"); /* ${oc.env:...,default} */
	CHECK_STR(lab->wandb, "wandb-secret-7f3a");
	CHECK_STR(lab->hf_token, "hf_secret_91c2");
	_cleanup_free_ char *data = inv_cluster_dir(lab, "data");
	_cleanup_free_ char *results = inv_cluster_dir(lab, "results");
	CHECK_STR(data, "/srv/lab/data");
	CHECK_STR(results, "/home/tester/theseus/results");
	size_t i = 0;
	const char *name, *value;
	CHECK(inv_cluster_secret(lab, &i, &name, &value) && streq(name, "WANDB_API_KEY") &&
	      streq(value, "wandb-secret-7f3a"));
	CHECK(inv_cluster_secret(lab, &i, &name, &value) && streq(name, "WANDB_ENTITY"));
	CHECK(inv_cluster_secret(lab, &i, &name, &value) && streq(name, "WANDB_PROJECT"));
	CHECK(inv_cluster_secret(lab, &i, &name, &value) && streq(name, "HF_TOKEN") &&
	      streq(value, "hf_secret_91c2"));
	CHECK(!inv_cluster_secret(lab, &i, &name, &value));
	const struct inv_cluster *hpc = inventory_cluster(inv, "hpc");
	CHECK_STR(hpc->all_squash, "1000:1000");
	CHECK_STR(hpc->uv_dir, "/scratch/uv-cache");
	const struct inv_host *ws = inventory_host(inv, "gpu-ws");
	CHECK(ws->nenv == 2 && streq(ws->env[0].key, "CUDA_VISIBLE_DEVICES") &&
	      streq(ws->env[0].value, "0,1"));
	CHECK_STR(ws->chips[0].chip, "rtx-5090"); /* the reference's rtx5090 */
	const struct inv_host *box = inventory_host(inv, "lab-box");
	CHECK_STR(box->chips[0].chip, "rtx-a6000");
	CHECK_STR(box->chips[1].chip, "rtx-6000-ada");
	CHECK_STR(inventory_host(inv, "slurm-login")->mem, "64G"); /* 64GB */
	const struct inv_host *tpu = inventory_host(inv, "tpu-pod");
	CHECK(tpu->type == INV_HOST_TPU && tpu->ssh == NULL && !inv_host_type_reachable(tpu->type));
	CHECK(tpu->nenv == 1 && streq(tpu->env[0].key, "JAX_PLATFORMS"));
	const struct inv_host *vk = inventory_host(inv, "k8s-gpus");
	CHECK(vk->type == INV_HOST_VOLCANO && vk->nchips == 1 && vk->chips[0].count == 8);
	CHECK_STR(inv_host_type_name(vk->type), "volcano");
	inventory_free(inv);

	setenv("DISPATCH_TEST_HOME", "/u/me", 1);
	CHECK_INT(inventory_load(path, &inv, &err), 0);
	CHECK_STR(inventory_cluster(inv, "lab")->root, "/u/me/theseus");
	inventory_free(inv);
	unsetenv("DISPATCH_TEST_HOME");
}

static void test_interpolation(void)
{
	setenv("DISPATCH_T_X", "ex", 1);
	unsetenv("DISPATCH_T_NONE");
	struct dp_error err = { 0 };
	struct inventory *inv = parse("clusters:\n  c: {root: '${oc.env:DISPATCH_T_X}/a', "
				      "work: \"${oc.env:DISPATCH_T_NONE, '/w x'}\", log: '\\${x}'}\n",
				      &err);
	CHECK(inv != NULL);
	if (inv) {
		CHECK_STR(inv->clusters[0].root, "ex/a");
		CHECK_STR(inv->clusters[0].work, "/w x");
		CHECK_STR(inv->clusters[0].log, "${x}");
	}
	inventory_free(inv);
	CHECK_STR(error_of("clusters:\n  c:\n    root: /r\n    work: /w/${oc.env:DISPATCH_T_NONE}\n"),
		  "inv.yaml:4:14: ${oc.env:DISPATCH_T_NONE}: environment variable 'DISPATCH_T_NONE' "
		  "is not set (set it, or give a default: ${oc.env:DISPATCH_T_NONE,DEFAULT})");
	CHECK_STR(error_of("clusters:\n  c:\n    root: /r/${env:HOME}\n    work: /w\n"),
		  "inv.yaml:3:14: unsupported interpolation '${env:HOME}': dispatch resolves "
		  "${oc.env:NAME} and ${oc.env:NAME,default} only");
	CHECK_STR(error_of("clusters:\n  c: {root: /r, work: /w}\nhosts:\n  h: {cluster: '${c'}\n"),
		  "inv.yaml:4:17: unterminated '${': OmegaConf interpolation needs a closing '}'");
}

/* JuiceFS metadata URLs: every form of password leaves the URL (META_PASSWORD) or is
 * refused; the refusal never quotes the URL. */
static void split_ok(const char *url, const char *bare, const char *password)
{
	char *b = NULL, *pw = NULL, *why = NULL;
	CHECK_INT(inv_meta_url_split(url, &b, &pw, &why), 0);
	CHECK_STR(b, bare);
	if (password)
		CHECK_STR(pw, password);
	else
		CHECK(pw == NULL);
	CHECK(why == NULL);
	free(b);
	free(pw);
	CHECK(inv_meta_url_secret(url) == (password != NULL));
}

static void split_refused(const char *url, const char *why_part)
{
	char *b = NULL, *pw = NULL, *why = NULL;
	CHECK_INT(inv_meta_url_split(url, &b, &pw, &why), -1);
	CHECK(b == NULL && pw == NULL);
	CHECK(why && strstr(why, why_part) && !strstr(why, "s3cret"));
	free(why);
	CHECK(inv_meta_url_secret(url));
}

static void test_meta_urls(void)
{
	split_ok("redis://:p@ss@h:6379/0", "redis://h:6379/0", "p@ss");
	split_ok("mysql://me:pw@(h:3306)/db", "mysql://me@(h:3306)/db", "pw");
	split_ok("redis://h:6379/0", "redis://h:6379/0", NULL);
	split_ok("redis://user@h:6379/0", "redis://user@h:6379/0", NULL);  /* a user is no secret */
	split_ok("redis://user:@h/0", "redis://user@h/0", NULL);
	/* percent-encoded '@', '/' and ':' in the password: decoded, as juicefs reads them */
	split_ok("redis://:p%40ss%2Fw%3Ad@h:6379/0", "redis://h:6379/0", "p@ss/w:d");
	split_ok("redis://u%40corp:s3cret@h/1", "redis://u%40corp@h/1", "s3cret");
	/* no scheme (juicefs reads redis://) */
	split_ok(":s3cret@h:6379", "h:6379", "s3cret");
	split_ok("postgres://me:s3cret@h:5432/db?sslmode=disable&search_path=x",
		 "postgres://me@h:5432/db?sslmode=disable&search_path=x", "s3cret");
	split_ok("mysql://me@(h)/db?allowCleartextPasswords=true&tls-key-file=/k",
		 "mysql://me@(h)/db?allowCleartextPasswords=true&tls-key-file=/k", NULL);
	split_ok("sqlite3:///var/jfs.db", "sqlite3:///var/jfs.db", NULL);
	/* secrets in the query, in any spelling */
	split_refused("postgres://h/db?password=s3cret", "query parameter 'password'");
	split_refused("postgres://me:pw@h/db?sslmode=disable&sslpassword=s3cret", "'sslpassword'");
	split_refused("redis://h/1?Auth_Token=s3cret", "'Auth_Token'");
	split_refused("redis://h/1?%70assword=s3cret", "'%70assword'");
	split_refused("tikv://h:2379/jfs?ca=/c&key=s3cret", "'key'");
	split_refused("redis://h/1?db=1;secret=s3cret", "'secret'");
	/* an '@' past the host: the password would stay in the path */
	split_refused("redis://:pa/ss3cret@h/1", "percent-encode");
	split_refused("redis://h/1?x=a@b", "percent-encode");
	split_refused("redis://:s3cret%00x@h/1", "%00");

	/* the loader: refused with the file, line and column; has_secrets */
	CHECK_STR(error_of("clusters:\n  c: {root: /r, work: /w, mount: 'redis://h/1?password=s3cret'}\n"),
		  "inv.yaml:2:34: clusters.c.mount: the JuiceFS metadata URL is refused: its query "
		  "parameter 'password' may carry a secret, which dispatch cannot keep off juicefs's "
		  "command line: give the password in the URL's user part instead "
		  "(redis://:PASSWORD@host:6379/0), which goes to juicefs in META_PASSWORD");
	struct dp_error err;
	struct inventory *inv = parse("mount: 'redis://:s3cret@h:6379/0'\n", &err);
	CHECK(inv && inv->has_secrets);
	inventory_free(inv);
	inv = parse("mount: /mnt/juicefs-local\n", &err);
	CHECK(inv && !inv->has_secrets);
	inventory_free(inv);
}

/* A run's webhook: the cluster's, a host's own over it, refused (with where, never
 * the value) when it is not an http(s) URL a shell and curl's config take as it is. */
static void test_notify_url(void)
{
	struct dp_error err;
	struct inventory *inv = parse("clusters:\n  c1: {root: /r, work: /w, notify_url: "
				      "'https://hooks.example.com/services/T0/B0/s3cret'}\n"
				      "  c2: {root: /r, work: /w}\n"
				      "hosts:\n  a: {cluster: c1}\n"
				      "  b: {cluster: c1, notify_url: 'http://10.0.0.1:8080/hook?k=v&x=1'}\n"
				      "  c: {cluster: c2}\n", &err);
	CHECK(inv && inv->has_secrets);
	if (inv) {
		CHECK_STR(inv_notify_url(inventory_host(inv, "a")),
			  "https://hooks.example.com/services/T0/B0/s3cret");
		CHECK_STR(inv_notify_url(inventory_host(inv, "b")), "http://10.0.0.1:8080/hook?k=v&x=1");
		CHECK(inv_notify_url(inventory_host(inv, "c")) == NULL);
	}
	inventory_free(inv);
	CHECK_STR(error_of(BASE "hosts:\n  a: {cluster: c1, notify_url: 'ftp://h/s3cret'}\n"),
		  "inv.yaml:4:32: hosts.a.notify_url: " INV_NOTIFY_URL_WANT);
	CHECK_STR(error_of("clusters:\n  c1: {root: /r, work: /w, notify_url: 'https://h/a b'}\n"),
		  "inv.yaml:2:40: clusters.c1.notify_url: " INV_NOTIFY_URL_WANT);
	static const char *const bad[] = {
		"https://h/\"x", "https://h/\\x", "https://h/$(id)", "https://h/`id`",
		"https://h/'x", "https://h/<x>", "https://", "http:/h/x", "https://h/\tx",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (inv_notify_url_ok(bad[i]))
			unit_report(false, __FILE__, __LINE__, bad[i]);
	CHECK(inv_notify_url_ok("https://hooks.slack.com/services/T00/B00/XXXX"));
}

static void test_busy_gpu_memory(void)
{
	static const struct {
		const char *v;
		long mib;
	} ok[] = { { "100", 100 }, { "512M", 512 }, { "2G", 2048 }, { "1g", 1024 } };
	for (size_t i = 0; i < ARRAY_SIZE(ok); i++) {
		struct inventory *inv = NULL;
		struct dp_error e = { 0 };
		char *doc = xasprintf(BASE "hosts:\n  p:\n    cluster: c1\n    busy_gpu_memory: %s\n", ok[i].v);
		CHECK_INT(inventory_parse("inv.yaml", doc, strlen(doc), &inv, &e), 0);
		CHECK(inv && inv->nhosts == 1 && inv->hosts[0].busy_gpu_mib == ok[i].mib);
		inventory_free(inv);
		free(doc);
	}
	CHECK_CONTAINS(error_of(BASE "hosts:\n  p:\n    cluster: c1\n    busy_gpu_memory: 10%\n"),
		       "hosts.p.busy_gpu_memory: expected MiB (a whole number > 0) or a size with M or G");
	CHECK_CONTAINS(error_of(BASE "hosts:\n  p:\n    cluster: c1\n    busy_gpu_memory: 0\n"),
		       "busy_gpu_memory: expected MiB");
}

static void test_reference_keys(void)
{
	/* loaded as the reference loads them (its dataclasses default the keys to empty),
	 * listed as missing */
	struct inventory *inv = NULL;
	struct dp_error e = { 0 };
	static const char doc[] = BASE "hosts:\n  t:\n    type: tpu\n    cluster: c1\n    zone: z\n"
				  "    accelerator_type: v4-8\n  v:\n    type: volcano\n    cluster: c1\n"
				  "    pvc_name: ''\n";
	CHECK_INT(inventory_parse("inv.yaml", doc, strlen(doc), &inv, &e), 0);
	CHECK(inv && inv->nhosts == 2);
	if (inv && inv->nhosts == 2) {
		CHECK(inv->hosts[0].missing && streq(inv->hosts[0].missing[0], "version") &&
		      !inv->hosts[0].missing[1]);
		CHECK(inv->hosts[1].missing && streq(inv->hosts[1].missing[0], "image") &&
		      streq(inv->hosts[1].missing[1], "pvc_name") && !inv->hosts[1].missing[2]);
	}
	inventory_free(inv);
	CHECK_STR(error_of(BASE "hosts:\n  t:\n    type: tpu\n    cluster: c1\n    zone: z\n"
			   "    accelerator_type: v4-8\n    version: v\n    spot: maybe\n"),
		  "inv.yaml:10:11: hosts.t.spot: expected true or false, got 'maybe'");
	CHECK_STR(error_of(BASE "hosts:\n  t:\n    type: tpu\n    cluster: c1\n    zone: z\n"
			   "    accelerator_type: v4-8\n    version: v\n    zonee: x\n"),
		  "inv.yaml:10:5: unknown key 'zonee' in hosts.t (did you mean 'zone'?)");
	CHECK_STR(error_of(BASE "hosts:\n  v:\n    type: volcano\n    cluster: c1\n    image: i\n"
			   "    pvc_name: p\n    num_nodes: two\n"),
		  "inv.yaml:9:16: hosts.v.num_nodes: expected a whole number, got 'two'");
	CHECK_STR(error_of(BASE "hosts:\n  h:\n    cluster: c1\n    chips: {tpu-v4: 8}\n"),
		  "inv.yaml:6:13: hosts.h.chips: chip 'tpu-v4' is a Cloud TPU: only 'type: tpu' hosts "
		  "have TPUs (and dispatch does not drive those)");
	CHECK_STR(error_of(BASE "hosts:\n  h:\n    cluster: c1\n    env: {1X: a}\n"),
		  "inv.yaml:6:11: hosts.h.env: '1X' is not an environment variable name (letters, "
		  "digits and '_', not starting with a digit)");
	CHECK_STR(error_of("clusters:\n  c: {root: /r, work: /w, all_squash: root}\n"),
		  "inv.yaml:2:39: clusters.c.all_squash: expected UID:GID (as juicefs mount "
		  "--all-squash takes it, e.g. \"1000:1000\"), got 'root'");
	CHECK_STR(error_of("clusters:\n  c: {root: /r, work: /w, wandbb: k}\n"),
		  "inv.yaml:2:27: unknown key 'wandbb' in clusters.c (did you mean 'wandb'?)");
	/* A credential's value is never quoted into a message. */
	CHECK_STR(error_of("clusters:\n  c: {root: /r, work: /w, hf_token: [tok-123]}\n"),
		  "inv.yaml:2:37: clusters.c.hf_token: expected a string, got a list");
	test_meta_urls();
	test_notify_url();
}

/* container_runtime, container_image, container_mounts. */
static void test_containers(void)
{
	struct dp_error err;
	struct inventory *inv = parse(BASE "hosts:\n"
		"  box1: {cluster: c1, container_runtime: podman, container_image: localhost/t,\n"
		"         container_mounts: ['/scratch:/scratch:ro', '/a:/b,/c:/d']}\n"
		"  hpc: {type: slurm, cluster: c1, container_runtime: pyxis}\n"
		"  box2: {cluster: c1}\n", &err);
	CHECK(inv != NULL);
	if (!inv) {
		printf("# %s\n", err.msg);
		return;
	}
	const struct inv_host *box1 = inventory_host(inv, "box1");
	CHECK_INT(box1->container_runtime, CONTAINER_PODMAN);
	CHECK_STR(box1->container_image, "localhost/t");
	CHECK_INT(strv_len(box1->container_mounts), 2);
	CHECK_STR(box1->container_mounts[1], "/a:/b,/c:/d");
	CHECK_INT(inventory_host(inv, "hpc")->container_runtime, CONTAINER_PYXIS);
	CHECK_INT(inventory_host(inv, "box2")->container_runtime, CONTAINER_NONE);
	CHECK(inventory_host(inv, "box2")->container_image == NULL);
	inventory_free(inv);

	CHECK_STR(error_of(BASE "hosts:\n  box1:\n    cluster: c1\n    container_runtime: pyxis\n"),
		  "inv.yaml:6:24: hosts.box1.container_runtime: 'pyxis' runs jobs through srun and "
		  "needs 'type: slurm'; a plain host runs containers with podman or docker");
	CHECK_STR(error_of(BASE "hosts:\n  box1:\n    cluster: c1\n    container_runtime: podman-hpc\n"),
		  "inv.yaml:6:24: hosts.box1.container_runtime: 'podman-hpc' runs jobs through srun and "
		  "needs 'type: slurm'; a plain host runs containers with podman or docker");
	CHECK_STR(error_of(BASE "hosts:\n  h:\n    type: slurm\n    cluster: c1\n    container_runtime: docker\n"),
		  "inv.yaml:7:24: hosts.h.container_runtime: 'docker' is for plain hosts; on a SLURM "
		  "host use pyxis, apptainer, singularity, charliecloud or podman-hpc");
	CHECK_STR(error_of(BASE "hosts:\n  box1: {cluster: c1, container_runtime: apptainr}\n"),
		  "inv.yaml:4:42: hosts.box1.container_runtime: unknown container runtime 'apptainr' "
		  "(did you mean 'apptainer'?)");
	CHECK_STR(error_of(BASE "hosts:\n  box1: {cluster: c1, container_image: x}\n"),
		  "inv.yaml:4:40: hosts.box1.container_image: a default image needs a runtime: set "
		  "container_runtime too");
	CHECK_STR(error_of(BASE "hosts:\n  box1: {cluster: c1, container_runtime: podman, "
			   "container_mounts: [/a:b]}\n"),
		  "inv.yaml:4:69: invalid hosts.box1.container_mounts item '/a:b': DST is not an "
		  "absolute path (start it with /, ~/ or $VAR) (expected SRC:DST or SRC:DST:ro, "
		  "absolute paths, items joined by ',')");
}

/* The mount lists of container_mounts and --container-mounts. */
static void test_container_mounts(void)
{
	struct container_mount *m = NULL;
	size_t n = 0;
	struct dp_error err;
	CHECK_INT(container_mounts_parse("/a:/b,~/c:$X/d:ro,/e:/f:rw", "x", &m, &n, &err), 0);
	CHECK_INT(n, 3);
	CHECK(n == 3 && streq(m[0].src, "/a") && streq(m[0].dst, "/b") && !m[0].ro);
	CHECK(n == 3 && streq(m[1].src, "~/c") && streq(m[1].dst, "$X/d") && m[1].ro);
	CHECK(n == 3 && !m[2].ro);
	container_mounts_free(m, n);
	const struct {
		const char *in, *msg;
	} bad[] = {
		{ "", "invalid x '': expected SRC:DST[:ro][,...]" },
		{ "/a", "invalid x item '/a': no ':' between SRC and DST" },
		{ "/a:/b,", "invalid x item '': no ':' between SRC and DST" },
		{ "/a:/b:rx", "invalid x item '/a:/b:rx': the only flags are 'ro' and 'rw'" },
		{ "a:/b", "invalid x item 'a:/b': SRC is not an absolute path" },
		{ "/a:", "invalid x item '/a:': DST is empty" },
		{ "/a:/b:ro:x", "invalid x item '/a:/b:ro:x': the only flags are 'ro' and 'rw'" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		m = NULL;
		n = 0;
		CHECK_INT(container_mounts_parse(bad[i].in, "x", &m, &n, &err), -1);
		CHECK_CONTAINS(err.msg, bad[i].msg);
		CHECK_INT(err.kind, DPE_INPUT);
		container_mounts_free(m, n);
		CHECK(!container_mounts_valid(bad[i].in));
	}
	CHECK(container_mounts_valid("/x:/y:ro"));
	CHECK_STR(container_runtime_name(CONTAINER_PODMAN_HPC), "podman-hpc");
	CHECK_INT(container_runtime_from_name("charliecloud"), CONTAINER_CHARLIECLOUD);
	CHECK_INT(container_runtime_from_name("lxc"), -1);
}

int main(void)
{
	test_containers();
	test_container_mounts();
	test_reference();
	test_reference_current();
	test_interpolation();
	test_reference_keys();
	test_busy_gpu_memory();
	test_values();
	test_errors();
	test_catalogue();
	return unit_done();
}
