/* SPDX-License-Identifier: MIT */
#include <sys/stat.h>

#include "container/container_run.h"
#include "inventory/sweep.h"
#include "jobs/jobscript.h"
#include "unit.h"

static struct dp_error err;

static struct inv_cluster hpc = {
	.name = "hpc", .root = "/mnt/juicefs/theseus", .work = "/scratch/theseus",
	.log = "/scratch/theseus/logs", .share = "/scratch/theseus/.dispatch",
	.mount = "redis://:p@ss w0rd@redis:6379/0", .cache_size = "100G",
	.cache_dir = "/scratch/juicefs-cache",
};
static struct inv_cluster local = { .name = "local", .root = "/data", .work = "/tmp/theseus" };
static struct inv_partition parts[] = {
	{ .name = "gpu", .is_default = false },
	{ .name = "a100", .is_default = true, .constraint = "a100&nvlink" },
};
static char *host_exclude[] = { "node001", "node002", NULL };
static char *host_uv[] = { "cuda12", NULL };
static char *cpu_parts[] = { "cpu", NULL };

/* A SLURM login host as the inventory would give it, with no mem default. */
static struct inv_host slurm_host(void)
{
	struct inv_host h = { 0 };
	h.name = "hpc-login";
	h.type = INV_HOST_SLURM;
	h.ssh = "hpc";
	h.cluster = &hpc;
	h.partitions = parts;
	h.npartitions = ARRAY_SIZE(parts);
	h.account = "myproject";
	h.qos = "normal";
	h.exclude = host_exclude;
	h.uv_groups = host_uv;
	return h;
}

static struct inv_host plain_host(void)
{
	struct inv_host h = { 0 };
	h.name = "workstation";
	h.type = INV_HOST_PLAIN;
	h.ssh = "gpu-workstation";
	h.cluster = &local;
	h.uv_groups = host_uv;
	return h;
}

static void spec_cmd(struct jobspec *js, const char *cmd)
{
	js->command = xstrdup(cmd);
}

static void set(struct jobspec *js, const char *name, const char *value)
{
	if (jobspec_set(js, name, value, NULL, &err) < 0)
		printf("# set %s: %s\n", name, err.msg);
}

static int gen(const struct jobspec *js, const struct inv_host *h, struct jobscript *out)
{
	struct jobscript_target t = { .host = h, .bootstrap_path = "/scratch/theseus/.dispatch/x/bootstrap.sh" };
	dp_error_clear(&err);
	int r = jobscript_generate(js, &t, out, &err);
	if (r < 0)
		printf("# generate: %s\n", err.msg);
	return r;
}

static bool has_directive(const struct jobscript *s, const char *d)
{
	return strv_contains(s->directives, d);
}

static bool has_prefix_directive(const struct jobscript *s, const char *prefix)
{
	for (size_t i = 0; s->directives && s->directives[i]; i++)
		if (startswith(s->directives[i], prefix))
			return true;
	return false;
}

/* Reference defect: --nodes 2 kept --ntasks=1, so srun ran the bootstrap on one node. */
static void test_multinode_one_task_per_node(void)
{
	struct jobspec js = { 0 };
	struct jobscript s;
	struct inv_host h = slurm_host();
	spec_cmd(&js, "torchrun train.py");
	set(&js, "nodes", "2");
	CHECK(gen(&js, &h, &s) == 0);
	CHECK(has_directive(&s, "--nodes=2"));
	CHECK(has_directive(&s, "--ntasks-per-node=1"));
	CHECK(!has_prefix_directive(&s, "--ntasks="));
	CHECK_CONTAINS(s.sbatch, "#SBATCH --nodes=2\n");
	CHECK_CONTAINS(s.sbatch, "\nsrun --kill-on-bad-exit=1 bash '/scratch/theseus/.dispatch/x/bootstrap.sh' &\n");
	jobscript_release(&s);

	/* the user's own task layout is kept */
	set(&js, "ntasks-per-node", "4");
	CHECK(gen(&js, &h, &s) == 0);
	CHECK(has_directive(&s, "--ntasks-per-node=4"));
	jobscript_release(&s);
	js.ntasks_per_node = 0;
	set(&js, "ntasks", "8");
	CHECK(gen(&js, &h, &s) == 0);
	CHECK(has_directive(&s, "--ntasks=8"));
	CHECK(!has_prefix_directive(&s, "--ntasks-per-node"));
	jobscript_release(&s);
	jobspec_release(&js);
}

/* Reference defect: --cpus-per-task was never emitted (and 22.05's srun does not
 * inherit it, so the step needs it too). */
static void test_cpus_per_task(void)
{
	struct jobspec js = { 0 };
	struct jobscript s;
	struct inv_host h = slurm_host();
	spec_cmd(&js, "python train.py");
	set(&js, "cpus-per-task", "16");
	CHECK(gen(&js, &h, &s) == 0);
	CHECK(has_directive(&s, "--cpus-per-task=16"));
	CHECK_CONTAINS(s.sbatch, "srun --kill-on-bad-exit=1 --cpus-per-task=16 bash ");
	jobscript_release(&s);
	jobspec_release(&js);
}

/* Reference defect: a silent --mem=64G when the host set none. */
static void test_memory(void)
{
	struct jobspec js = { 0 };
	struct jobscript s;
	struct inv_host h = slurm_host();
	spec_cmd(&js, "true");
	CHECK(gen(&js, &h, &s) == 0);
	CHECK(!has_prefix_directive(&s, "--mem"));
	CHECK(strstr(s.sbatch, "--mem") == NULL);
	jobscript_release(&s);

	h.mem = "32G";
	CHECK(gen(&js, &h, &s) == 0);
	CHECK(has_directive(&s, "--mem=32G"));
	jobscript_release(&s);

	set(&js, "mem", "128G");
	CHECK(gen(&js, &h, &s) == 0);
	CHECK(has_directive(&s, "--mem=128G"));
	CHECK(!has_directive(&s, "--mem=32G"));
	jobscript_release(&s);

	free(js.mem);
	js.mem = NULL;
	set(&js, "mem-per-cpu", "4G");
	CHECK(gen(&js, &h, &s) == 0);
	CHECK(has_directive(&s, "--mem-per-cpu=4G"));
	CHECK(!has_prefix_directive(&s, "--mem="));
	jobscript_release(&s);
	jobspec_release(&js);
}

static void test_gpus(void)
{
	struct jobspec js = { 0 };
	struct jobscript s;
	struct inv_host h = slurm_host();
	struct jobscript_target t = { .host = &h, .bootstrap_path = "/b.sh", .gres_type = "h100_80gb" };
	spec_cmd(&js, "true");
	set(&js, "gpus-per-node", "4");
	set(&js, "chip", "h100");
	set(&js, "nodes", "2");
	CHECK(jobscript_generate(&js, &t, &s, &err) == 0);
	CHECK(has_directive(&s, "--gres=gpu:h100_80gb:4"));
	CHECK_CONTAINS(s.bootstrap, "export DISPATCH_GPUS_PER_NODE=\"${SLURM_GPUS_ON_NODE:-4}\"\n");
	jobscript_release(&s);

	/* a total spreads evenly over the nodes, else it is --gpus */
	js.gpus_per_node = 0;
	set(&js, "gpus", "8");
	CHECK(jobscript_generate(&js, &t, &s, &err) == 0);
	CHECK(has_directive(&s, "--gres=gpu:h100_80gb:4"));
	jobscript_release(&s);
	set(&js, "gpus", "3");
	CHECK(jobscript_generate(&js, &t, &s, &err) == 0);
	CHECK(has_directive(&s, "--gpus=h100_80gb:3"));
	jobscript_release(&s);

	/* no gres_mapping entry: the chip name is the type; no chip: no type */
	t.gres_type = NULL;
	set(&js, "gpus", "2");
	CHECK(jobscript_generate(&js, &t, &s, &err) == 0);
	CHECK(has_directive(&s, "--gres=gpu:h100:1"));
	jobscript_release(&s);
	free(js.chip);
	js.chip = NULL;
	js.nodes = 0;
	CHECK(jobscript_generate(&js, &t, &s, &err) == 0);
	CHECK(has_directive(&s, "--gres=gpu:2"));
	jobscript_release(&s);
	jobspec_release(&js);
}

static void test_host_defaults(void)
{
	struct jobspec js = { 0 };
	struct jobscript s;
	struct inv_host h = slurm_host();
	spec_cmd(&js, "true");
	set(&js, "gpus", "1");
	set(&js, "exclude", "node009");
	set(&js, "exclude", "node001");
	CHECK(gen(&js, &h, &s) == 0);
	CHECK(has_directive(&s, "--partition=a100"));           /* the default partition */
	CHECK(has_directive(&s, "--constraint=a100&nvlink"));   /* and its constraint */
	CHECK(has_directive(&s, "--account=myproject"));
	CHECK(has_directive(&s, "--qos=normal"));
	CHECK(has_directive(&s, "--exclude=node001,node002,node009"));
	CHECK(has_directive(&s, "--output=/scratch/theseus/logs/%x-%j.out"));
	CHECK(has_directive(&s, "--job-name=dispatch"));
	CHECK_CONTAINS(s.bootstrap, "uv sync --group 'cuda12'\n");
	jobscript_release(&s);

	/* CPU jobs go to cpu_partitions; the solver's partition beats the default; the
	 * user's beats everything */
	js.gpus = 0;
	h.cpu_partitions = cpu_parts;
	CHECK(gen(&js, &h, &s) == 0);
	CHECK(has_directive(&s, "--partition=cpu"));
	CHECK(!has_prefix_directive(&s, "--constraint"));
	jobscript_release(&s);
	struct jobscript_target t = { .host = &h, .bootstrap_path = "/b", .partition = "gpu" };
	CHECK(jobscript_generate(&js, &t, &s, &err) == 0);
	CHECK(has_directive(&s, "--partition=gpu"));
	jobscript_release(&s);
	set(&js, "partition", "debug");
	set(&js, "account", "other");
	set(&js, "array", "0-7%2");
	set(&js, "uv-group", "dev");
	set(&js, "uv-group", "cuda12");
	CHECK(jobscript_generate(&js, &t, &s, &err) == 0);
	CHECK(has_directive(&s, "--partition=debug"));
	CHECK(has_directive(&s, "--account=other"));
	CHECK(has_directive(&s, "--output=/scratch/theseus/logs/%x-%A_%a.out"));
	CHECK_CONTAINS(s.bootstrap, "uv sync --group 'cuda12' --group 'dev'\n");
	jobscript_release(&s);
	jobspec_release(&js);
}

static void test_directive_quoting(void)
{
	struct jobspec js = { 0 };
	struct jobscript s;
	struct inv_host h = slurm_host();
	spec_cmd(&js, "true");
	set(&js, "job-name", "my \"big\" run #1 \\o/");
	set(&js, "time", "1-12:00:00");
	set(&js, "dependency", "afterok:12:13");
	set(&js, "signal", "B:USR1@120");
	set(&js, "exclusive", NULL);
	set(&js, "requeue", NULL);
	set(&js, "sbatch", "#SBATCH --mail-type=END");
	set(&js, "chdir", "$HOME/runs");
	CHECK(gen(&js, &h, &s) == 0);
	CHECK(has_directive(&s, "--job-name=\"my \\\"big\\\" run #1 \\\\o/\""));
	CHECK(has_directive(&s, "--time=1-12:00:00"));
	CHECK(has_directive(&s, "--dependency=afterok:12:13"));
	CHECK(has_directive(&s, "--signal=B:USR1@120"));
	CHECK(has_directive(&s, "--exclusive"));
	CHECK(has_directive(&s, "--requeue"));
	CHECK(has_directive(&s, "--mail-type=END"));
	CHECK(!has_prefix_directive(&s, "--chdir")); /* sbatch would not expand $HOME */
	CHECK_CONTAINS(s.bootstrap, "cd -- \"${HOME}\"'/runs'\n");
	CHECK_CONTAINS(s.bootstrap, "# bootstrap.sh for job 'my \"big\" run #1 \\o/', generated");
	jobscript_release(&s);

	/* A newline in a value from elsewhere (an inventory made by a program, say)
	 * would start a directive of its own: refused, whatever the loader let by. */
	struct inv_partition bad[] = { { .name = "gpu", .is_default = true,
					 .constraint = "a100\n#SBATCH --uid=0" } };
	h.partitions = bad;
	h.npartitions = 1;
	struct jobscript_target t = { .host = &h, .bootstrap_path = "/b" };
	CHECK(jobscript_generate(&js, &t, &s, &err) < 0);
	CHECK_STR(err.msg, "the value of #SBATCH --constraint holds a newline or another control character");
	CHECK(s.sbatch == NULL && s.directives == NULL);
	jobspec_release(&js);
}

static void test_bootstrap(void)
{
	struct jobspec js = { 0 };
	struct jobscript s;
	struct inv_host h = slurm_host();
	spec_cmd(&js, "python train.py --name 'a b'");
	set(&js, "env", "TOKEN=it's $secret `x`");
	set(&js, "module", "cuda/12.1");
	set(&js, "setup", "source .venv/bin/activate");
	CHECK(gen(&js, &h, &s) == 0);
	CHECK(startswith(s.bootstrap, "#!/bin/bash\n"));
	CHECK_CONTAINS(s.bootstrap, "\nset -euo pipefail\n");
	CHECK_CONTAINS(s.bootstrap, "export TOKEN='it'\\''s $secret `x`'\n");
	CHECK_CONTAINS(s.bootstrap, "module load 'cuda/12.1'\n");
	CHECK_CONTAINS(s.bootstrap, "eval 'source .venv/bin/activate'\n");
	CHECK_CONTAINS(s.bootstrap, "(\n\tset +euo pipefail\n\teval 'python train.py --name '\\''a b'\\'''\n) &\n");
	CHECK_CONTAINS(s.bootstrap, "export DISPATCH_NODE_RANK=\"${SLURM_NODEID:-0}\"\n");
	CHECK_CONTAINS(s.bootstrap, "DISPATCH_MASTER_ADDR=localhost\n");
	/* The metadata password in the mount's environment, not on its command line. */
	CHECK_CONTAINS(s.bootstrap, "META_PASSWORD='p@ss w0rd' juicefs mount --background "
				    "--cache-size '100G' --cache-dir '/scratch/juicefs-cache' "
				    "'redis://redis:6379/0' '/mnt/juicefs/theseus'");
	CHECK_CONTAINS(s.bootstrap, "trap 'dispatch_forward TERM 143' TERM\n");
	CHECK(strstr(s.sbatch, "TOKEN") == NULL); /* secrets stay in the bootstrap */
	/* no payload: nothing is extracted */
	CHECK(strstr(s.bootstrap, "DISPATCH_PAYLOAD") == NULL);
	jobscript_release(&s);
	jobspec_release(&js);
}

/* Reference defect: $SLURM_TMPDIR/code with SLURM_TMPDIR unset (plain SLURM). */
static void test_payload_fallback(void)
{
	struct jobspec js = { 0 };
	struct jobscript s;
	struct inv_host h = plain_host();
	const unsigned char gz[] = { 0x1f, 0x8b, 0x08, 0x00, 'a', 'b', 'c' };
	struct jobscript_target t = { .host = &h, .payload = gz, .payload_len = sizeof(gz) };
	spec_cmd(&js, "./run.sh");
	CHECK(jobscript_generate(&js, &t, &s, &err) == 0);
	CHECK_CONTAINS(s.bootstrap, "if [ -n \"${SLURM_TMPDIR:-}\" ]; then\n\tDISPATCH_CODE_DIR=$SLURM_TMPDIR/code\n");
	CHECK_CONTAINS(s.bootstrap, "dispatch_tmp=$(mktemp -d \"${TMPDIR:-/tmp}/dispatch-$DISPATCH_JOB_ID.XXXXXX\")");
	CHECK_CONTAINS(s.bootstrap, "rm -rf -- \"$dispatch_tmp\"");
	CHECK_CONTAINS(s.bootstrap, "<<'DISPATCH_PAYLOAD'");
	CHECK_CONTAINS(s.bootstrap, "\nH4sIAGFiYw==\nDISPATCH_PAYLOAD\n");
	CHECK(s.sbatch == NULL && s.directives == NULL);
	jobscript_release(&s);

	set(&js, "extract-to", "~/code dir");
	CHECK(jobscript_generate(&js, &t, &s, &err) == 0);
	CHECK_CONTAINS(s.bootstrap, "DISPATCH_CODE_DIR=\"$HOME\"'/code dir'\n");
	CHECK(strstr(s.bootstrap, "SLURM_TMPDIR") == NULL);
	jobscript_release(&s);

	const unsigned char notgz[] = { 'P', 'K', 3, 4 };
	t.payload = notgz;
	t.payload_len = sizeof(notgz);
	CHECK(jobscript_generate(&js, &t, &s, &err) < 0);
	CHECK_CONTAINS(err.msg, "not a gzip tarball");
	jobspec_release(&js);
}

static void test_plain_host(void)
{
	struct jobspec js = { 0 };
	struct jobscript s;
	struct inv_host h = plain_host();
	struct jobscript_target t = { .host = &h };
	spec_cmd(&js, "true");
	set(&js, "time", "10");
	set(&js, "partition", "gpu");
	set(&js, "gpus", "2");
	CHECK(jobscript_generate(&js, &t, &s, &err) == 0);
	CHECK(s.sbatch == NULL);
	/* the launcher enforces --time and --dependency (lib/sched/plain/launcher.sh) */
	CHECK(!strv_contains(s.ignored, "time") && strv_contains(s.ignored, "partition"));
	CHECK(!strv_contains(s.ignored, "gpus"));
	CHECK_CONTAINS(s.bootstrap, "${SLURM_GPUS_ON_NODE:-2}");
	CHECK(strstr(s.bootstrap, "juicefs") == NULL); /* the local cluster has no mount */
	jobscript_release(&s);

	/* SLURM needs to know where the bootstrap will be */
	h = slurm_host();
	t.bootstrap_path = NULL;
	CHECK(jobscript_generate(&js, &t, &s, &err) < 0);
	CHECK_CONTAINS(err.msg, "no path for the bootstrap");
	jobspec_release(&js);
}

static void test_paths(void)
{
	struct inv_host h = slurm_host();
	char *p = jobscript_share_dir(&h);
	CHECK_STR(p, "/scratch/theseus/.dispatch");
	free(p);
	h.cluster = &local;
	p = jobscript_share_dir(&h);
	CHECK_STR(p, "/tmp/theseus/.dispatch");
	free(p);
	h.cluster = NULL;
	p = jobscript_share_dir(&h);
	CHECK_STR(p, "~/.dispatch");
	free(p);
	p = jobscript_stage_name("my run/ü", 86400 + 3661, 0x1abcd);
	CHECK_STR(p, "my_run___-19700102-010101-abcd");
	free(p);
	p = jobscript_stage_name("..x", 0, 1);
	CHECK_STR(p, "_.x-19700101-000000-0001");
	free(p);

	/* the bootstrap path expands ~ and $VAR, nothing else */
	struct jobspec js = { 0 };
	struct jobscript s;
	spec_cmd(&js, "true");
	h = slurm_host();
	struct jobscript_target t = { .host = &h, .bootstrap_path = "~/.dispatch/$(x)/${USER}/b.sh" };
	CHECK(jobscript_generate(&js, &t, &s, &err) == 0);
	CHECK_CONTAINS(s.sbatch, " bash \"$HOME\"'/.dispatch/$(x)/'\"${USER}\"'/b.sh' &\n");
	jobscript_release(&s);
	jobspec_release(&js);
}

static void test_write_file(void)
{
	char dir[] = "/tmp/test-jobscript.XXXXXX";
	CHECK(mkdtemp(dir) != NULL);
	char *path = xasprintf("%s/f.sh", dir);
	struct stat st;

	mode_t old = umask(0);
	CHECK(jobscript_write_file(path, "secret\n", &err) == 0);
	CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0700);
	umask(old);
	CHECK(chmod(path, 0644) == 0);
	CHECK(jobscript_write_file(path, "again\n", &err) == 0);
	CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0700);
	size_t len;
	char *content = read_file(path, &len);
	CHECK_STR(content, "again\n");
	free(content);

	/* emit makes the directory, private */
	struct jobscript s = { .sbatch = "#!/bin/bash\n", .bootstrap = "#!/bin/bash\n" };
	char *sub = xasprintf("%s/out", dir);
	CHECK(jobscript_emit(&s, sub, &err) == 0);
	CHECK(stat(sub, &st) == 0 && (st.st_mode & 0777) == 0700);
	char *b = xasprintf("%s/bootstrap.sh", sub), *w = xasprintf("%s/sbatch.sh", sub);
	CHECK(stat(b, &st) == 0 && (st.st_mode & 0777) == 0700);
	CHECK(stat(w, &st) == 0 && (st.st_mode & 0777) == 0700);

	/* a symlink in place of the file is not followed */
	char *link = xasprintf("%s/link.sh", dir);
	CHECK(symlink(path, link) == 0);
	CHECK(jobscript_write_file(link, "x", &err) < 0);
	CHECK_CONTAINS(err.msg, "cannot write");

	unlink(b);
	unlink(w);
	rmdir(sub);
	unlink(link);
	unlink(path);
	rmdir(dir);
	free(b);
	free(w);
	free(sub);
	free(link);
	free(path);
}

/* The reference's cluster keys: paths, credentials (redacted when shown), host env
 * after the cluster's, UV_CACHE_DIR, all_squash, the login shell. */
static void test_reference_keys(void)
{
	struct inv_cluster c = {
		.name = "lab", .root = "~/theseus", .work = "/w", .checkpoints = "/ck",
		.mount = "redis://:pw-1@r:6379/0", .all_squash = "1000:1000", .uv_dir = "/uv",
		.wandb = "wk-secret", .wandb_entity = "ent", .wandb_project = "proj",
		.hf_token = "hf-secret",
	};
	struct inv_kv env[] = { { "NCCL_DEBUG", "WARN" }, { "HF_TOKEN", "host-wins" } };
	struct inv_host h = plain_host();
	h.cluster = &c;
	h.env = env;
	h.nenv = ARRAY_SIZE(env);
	struct jobspec js = { 0 };
	struct jobscript s;
	spec_cmd(&js, "python train.py");
	struct jobscript_target t = { .host = &h };
	CHECK_INT(jobscript_generate(&js, &t, &s, &err), 0);
	const char *b = s.bootstrap;
	CHECK_CONTAINS(b, "if [ -z \"${DISPATCH_LOGIN_DONE:-}\" ] && ! shopt -q login_shell; then\n");
	CHECK_CONTAINS(b, "\texec bash -l \"$0\" \"$@\"\nfi\nunset DISPATCH_LOGIN_DONE\n");
	CHECK_CONTAINS(b, "*csh) exec \"$SHELL\" -c 'if ( -r /etc/csh.login ) source /etc/csh.login; "
			  "if ( -r ~/.login ) source ~/.login; exec bash \"$DISPATCH_LOGIN_DONE\"' ;;\n");
	CHECK(strstr(b, "exec bash -l") < strstr(b, "set -euo pipefail"));
	CHECK_CONTAINS(b, "export DISPATCH_ROOT=\"$HOME\"'/theseus'\nexport THESEUS_ROOT=\"$DISPATCH_ROOT\"\n");
	CHECK_CONTAINS(b, "export DISPATCH_DATA_DIR=\"$HOME\"'/theseus/data'\n");
	CHECK_CONTAINS(b, "export DISPATCH_CHECKPOINTS_DIR='/ck'\n");
	CHECK_CONTAINS(b, "export WANDB_API_KEY='wk-secret'\nexport WANDB_ENTITY='ent'\n"
			  "export WANDB_PROJECT='proj'\nexport HF_TOKEN='hf-secret'\n");
	/* the host's env after the cluster's: it wins */
	CHECK(strstr(b, "export HF_TOKEN='host-wins'") > strstr(b, "export HF_TOKEN='hf-secret'"));
	CHECK(strstr(b, "export NCCL_DEBUG='WARN'") < strstr(b, "juicefs mount"));
	CHECK_CONTAINS(b, "META_PASSWORD='pw-1' juicefs mount --background --all-squash '1000:1000' "
			  "'redis://r:6379/0' \"$HOME\"'/theseus'");
	CHECK_CONTAINS(b, "if [ -f pyproject.toml ]; then\n");
	CHECK_CONTAINS(b, "dispatch: uv not found on $(hostname)");
	CHECK_CONTAINS(b, "export UV_CACHE_DIR='/uv'\n\tmkdir -p -- \"$UV_CACHE_DIR\"\n");
	CHECK_CONTAINS(b, "uv sync --frozen --group 'cuda12' || uv sync --group 'cuda12'\n");
	jobscript_release(&s);

	/* Shown (--dry-run, --emit): no credential, no password. */
	t.redact = true;
	CHECK_INT(jobscript_generate(&js, &t, &s, &err), 0);
	b = s.bootstrap;
	CHECK(!strstr(b, "wk-secret") && !strstr(b, "hf-secret") && !strstr(b, "pw-1") &&
	      !strstr(b, "'ent'") && !strstr(b, "'proj'"));
	CHECK_CONTAINS(b, "export WANDB_API_KEY='<redacted>'\n");
	CHECK_CONTAINS(b, "META_PASSWORD='<redacted>' juicefs mount");
	CHECK_CONTAINS(b, "export NCCL_DEBUG='WARN'\n"); /* not a credential */
	jobscript_release(&s);

	/* No uv_dir: a per-job cache, removed at exit; login_shell: false. */
	c.uv_dir = NULL;
	h.no_login_shell = true;
	t.redact = false;
	CHECK_INT(jobscript_generate(&js, &t, &s, &err), 0);
	b = s.bootstrap;
	CHECK(!strstr(b, "bash -l"));
	CHECK_CONTAINS(b, "\tdispatch_uv_tmp=$(mktemp -d \"${TMPDIR:-/tmp}/dispatch-uv-$DISPATCH_JOB_ID.XXXXXX\")\n"
			  "\texport UV_CACHE_DIR=\"$dispatch_uv_tmp\"\n");
	CHECK_CONTAINS(b, "\t\trm -rf -- \"$dispatch_uv_tmp\"\n");
	jobscript_release(&s);
	jobspec_release(&js);
}

/* ---- containers: golden scripts per runtime (tests/unit/data/containers/) ---- */

static struct inv_cluster ctr = { .name = "ctr", .root = "/data/root", .work = "/scratch/work",
				  .share = "~/.dispatch" };

/* The script with the version in its header replaced by VERSION. */
static char *unversioned(const char *script)
{
	struct strbuf sb = STRBUF_INIT;
	const char *tag = "generated by dispatch ";
	for (const char *p = script; *p;) {
		const char *at = strstr(p, tag);
		if (!at) {
			strbuf_adds(&sb, p);
			break;
		}
		strbuf_add(&sb, p, (size_t)(at - p) + strlen(tag));
		strbuf_adds(&sb, "VERSION");
		p = at + strlen(tag) + strcspn(at + strlen(tag), "\n");
		if (p > at && p[-1] == '.')
			p--;
	}
	return strbuf_detach(&sb);
}

/* got against the fixture containers/NAME (UPDATE_GOLDEN=1 writes it instead). */
static void check_golden(const char *name, const char *got)
{
	_cleanup_free_ char *text = unversioned(got);
	_cleanup_free_ char *path = xasprintf("%s/containers/%s", unit_data(), name);
	if (getenv("UPDATE_GOLDEN")) {
		struct dp_error e;
		CHECK(jobscript_write_file(path, text, &e) == 0);
		chmod(path, 0644);
	}
	_cleanup_free_ char *want = unit_fixture("containers", name);
	bool same = streq(text, want);
	unit_report(same, __FILE__, __LINE__, name);
	if (!same)
		printf("# %s differs from the generated script (UPDATE_GOLDEN=1 rewrites it):\n%s", path,
		       text);
}

struct golden_case {
	const char *name;               /* fixture: NAME.sbatch.sh or NAME.container.sh */
	enum inv_host_type type;
	enum container_runtime rt;
	const char *image;
	const char *outside;            /* the bootstrap's test that it is not inside */
	bool gpus;
};

static void test_container_goldens(void)
{
	static const struct golden_case cases[] = {
		{ "pyxis", INV_HOST_SLURM, CONTAINER_PYXIS, "nvcr.io/nvidia/pytorch:24.01-py3",
		  "if [ ! -d /run/dispatch-stage ]; then", true },
		{ "apptainer", INV_HOST_SLURM, CONTAINER_APPTAINER, "/images/train.sif",
		  "${APPTAINER_CONTAINER:-}${SINGULARITY_CONTAINER:-}", true },
		{ "singularity", INV_HOST_SLURM, CONTAINER_SINGULARITY, "docker://python:3.12",
		  "${APPTAINER_CONTAINER:-}${SINGULARITY_CONTAINER:-}", false },
		{ "charliecloud", INV_HOST_SLURM, CONTAINER_CHARLIECLOUD, "/images/train",
		  "if [ -z \"${CH_RUNNING:-}\" ]; then", false },
		{ "podman-hpc", INV_HOST_SLURM, CONTAINER_PODMAN_HPC, "registry.example.com/team/train:1",
		  "if [ ! -e /run/.containerenv ]; then", true },
		{ "podman", INV_HOST_PLAIN, CONTAINER_PODMAN, "localhost/train:latest",
		  "if [ ! -e /run/.containerenv ]; then", true },
		{ "docker", INV_HOST_PLAIN, CONTAINER_DOCKER, "train:latest",
		  "if [ ! -e /.dockerenv ]; then", true },
		{ "apptainer-plain", INV_HOST_PLAIN, CONTAINER_APPTAINER, "/images/train.sif",
		  "${APPTAINER_CONTAINER:-}", false },
	};
	char *host_mounts[] = { "/datasets:/datasets:ro", NULL };
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		const struct golden_case *c = &cases[i];
		struct inv_host h = { .name = "h", .type = c->type, .cluster = &ctr,
				      .container_runtime = c->rt, .container_image = (char *)c->image,
				      .container_mounts = host_mounts };
		struct jobspec js = { 0 };
		struct jobscript s;
		spec_cmd(&js, "python train.py");
		if (c->type == INV_HOST_SLURM)
			set(&js, "nodes", "2");
		if (c->gpus)
			set(&js, "gpus-per-node", "1");
		set(&js, "container-mounts", "~/cache:/cache,$SCRATCH/x:/x:ro");
		if (c->rt == CONTAINER_PYXIS)
			set(&js, "container-workdir", "/scratch/work/run");
		struct jobscript_target t = { .host = &h,
					      .bootstrap_path = "~/.dispatch/job-1/bootstrap.sh" };
		CHECK(jobscript_generate(&js, &t, &s, &err) == 0);
		if (!s.bootstrap) {
			printf("# %s: %s\n", c->name, err.msg);
			jobspec_release(&js);
			continue;
		}
		const char *script = c->type == INV_HOST_SLURM ? s.sbatch : s.container;
		_cleanup_free_ char *fixture = xasprintf("%s.%s", c->name,
			c->type == INV_HOST_SLURM ? "sbatch.sh" : "container.sh");
		check_golden(fixture, script);
		CHECK_SH_N(fixture, script);
		CHECK_SHELLCHECK(fixture, script);
		CHECK_SH_N("bootstrap", s.bootstrap);
		CHECK_SHELLCHECK("bootstrap", s.bootstrap);
		CHECK_CONTAINS(s.bootstrap, c->outside);
		CHECK_CONTAINS(s.bootstrap, "is not inside container $dispatch_image: is ");
		/* uv is looked for (in the image) before uv sync */
		CHECK_CONTAINS(s.bootstrap, "\tif ! command -v uv >/dev/null 2>&1; then\n\t\techo \"dispatch: uv "
					    "not found on $(hostname) (PATH=$PATH): the code has a "
					    "pyproject.toml: install uv in the image");
		CHECK(strstr(s.bootstrap, "command -v uv") < strstr(s.bootstrap, "uv sync --frozen"));
		CHECK(c->type == INV_HOST_SLURM ? s.container == NULL : s.sbatch == NULL);
		jobscript_release(&s);

		/* --no-container: the host's default image is not used, nothing wraps */
		set(&js, "no-container", NULL);
		CHECK(jobscript_generate(&js, &t, &s, &err) == 0);
		CHECK(s.container == NULL);
		CHECK(!s.sbatch || !strstr(s.sbatch, "container"));
		CHECK(strstr(s.bootstrap, "dispatch_image") == NULL);
		jobscript_release(&s);
		jobspec_release(&js);
	}
}

/* What a container job refuses, and where flags must not appear. */
static void test_container_refusals(void)
{
	struct inv_host h = { .name = "hpc", .type = INV_HOST_SLURM, .cluster = &ctr,
			      .container_runtime = CONTAINER_PYXIS };
	struct jobscript_target t = { .host = &h, .bootstrap_path = "/s/b.sh" };
	struct jobscript s;
	struct jobspec js = { 0 };
	spec_cmd(&js, "true");
	/* no image: not a word about containers on the srun line */
	CHECK(jobscript_generate(&js, &t, &s, &err) == 0);
	CHECK(strstr(s.sbatch, "--container") == NULL);
	CHECK_CONTAINS(s.sbatch, "srun --kill-on-bad-exit=1 bash '/s/b.sh' &");
	jobscript_release(&s);

	set(&js, "container-image", "images/x.sqsh");
	CHECK(jobscript_generate(&js, &t, &s, &err) < 0);
	CHECK_INT(err.kind, DPE_INPUT);
	CHECK_STR(err.msg, "container image 'images/x.sqsh' is a relative path: Pyxis would read it "
			   "as a registry image; give the file's absolute path");
	set(&js, "container-image", "/images/x.sqsh");
	set(&js, "module", "cuda/12");
	CHECK(jobscript_generate(&js, &t, &s, &err) < 0);
	CHECK_INT(err.kind, DPE_INPUT);
	CHECK_CONTAINS(err.msg, "--module 'cuda/12' and the container image '/images/x.sqsh' exclude "
				"each other");
	jobspec_release(&js);

	/* an image on a host without a runtime */
	h.container_runtime = CONTAINER_NONE;
	struct jobspec js2 = { 0 };
	spec_cmd(&js2, "true");
	set(&js2, "container-image", "/images/x.sqsh");
	CHECK(jobscript_generate(&js2, &t, &s, &err) < 0);
	CHECK_CONTAINS(err.msg, "'hpc' has no container_runtime: set one for it in the inventory");
	jobspec_release(&js2);

	char *r;
	CHECK_STR((r = container_image_ref(CONTAINER_PYXIS, "nvcr.io/nvidia/pytorch:24.01-py3")),
		  "nvcr.io#nvidia/pytorch:24.01-py3");
	free(r);
	CHECK_STR((r = container_image_ref(CONTAINER_PYXIS, "localhost:5000/a/b")), "localhost:5000#a/b");
	free(r);
	CHECK_STR((r = container_image_ref(CONTAINER_PYXIS, "ubuntu:22.04")), "ubuntu:22.04");
	free(r);
	CHECK_STR((r = container_image_ref(CONTAINER_PYXIS, "library/ubuntu")), "library/ubuntu");
	free(r);
	CHECK_STR((r = container_image_ref(CONTAINER_PYXIS, "/x/y.sqsh")), "/x/y.sqsh");
	free(r);
	CHECK_STR((r = container_image_ref(CONTAINER_PYXIS, "$SCRATCH/y.sqsh")), "$SCRATCH/y.sqsh");
	free(r);
	/* a file under $VAR or ~/ is not relative; the shell expands it on the srun line */
	struct jobspec js3 = { 0 };
	h.container_runtime = CONTAINER_PYXIS;
	spec_cmd(&js3, "true");
	set(&js3, "container-image", "$SCRATCH/images/x.sqsh");
	CHECK(jobscript_generate(&js3, &t, &s, &err) == 0);
	CHECK_CONTAINS(s.sbatch, " --container-image=\"${SCRATCH}\"'/images/x.sqsh' ");
	jobscript_release(&s);
	jobspec_release(&js3);
	CHECK_STR((r = container_image_ref(CONTAINER_PODMAN, "nvcr.io/a/b")), "nvcr.io/a/b");
	free(r);
}

static void put_file(const char *dir, const char *name, const char *text)
{
	char *path = xasprintf("%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
	free(path);
}

/* The bootstrap's login step, run for users of each shell family (where this machine
 * has the shell): the environment that family's login files set reaches the rest of
 * the bootstrap, which runs in bash, once (DISPATCH_LOGIN_DONE gone). */
static void test_login_families(void)
{
	struct inv_host h = plain_host();
	struct jobspec js = { 0 };
	struct jobscript s;
	spec_cmd(&js, "true");
	struct jobscript_target t = { .host = &h };
	CHECK_INT(jobscript_generate(&js, &t, &s, &err), 0);
	const char *end = strstr(s.bootstrap, "set -euo pipefail\n");
	CHECK(end != NULL);
	char tmpl[] = "/tmp/test-jobscript-login.XXXXXX";
	char *home = mkdtemp(tmpl);
	CHECK(home != NULL);
	if (!end || !home) {
		jobscript_release(&s);
		jobspec_release(&js);
		return;
	}
	struct strbuf boot = STRBUF_INIT;
	strbuf_add(&boot, s.bootstrap, (size_t)(end - s.bootstrap));
	strbuf_adds(&boot, "n=$(cat \"$HOME/runs\" 2>/dev/null || echo 0); echo $((n + 1)) >\"$HOME/runs\"\n"
			   "printf '%s|%s|' \"${DT_LOGIN-}\" \"${DISPATCH_LOGIN_DONE-unset}\"\n"
			   "shopt -q login_shell && echo login || echo plain\n");
	put_file(home, "boot.sh", boot.buf);
	put_file(home, ".profile", "DT_LOGIN=profile; export DT_LOGIN\n");
	put_file(home, ".zprofile", "export DT_LOGIN=zprofile\n");
	put_file(home, ".login", "setenv DT_LOGIN login\n");
	char *cfg = xasprintf("%s/.config", home), *fish = xasprintf("%s/.config/fish", home);
	mkdir(cfg, 0700);
	mkdir(fish, 0700);
	put_file(home, ".config/fish/config.fish", "if status is-login\n\tset -gx DT_LOGIN fish\nend\n");
	static const struct { const char *shell, *want; } cases[] = {
		{ "/bin/bash", "profile|unset|login\n" }, { "/bin/sh", "profile|unset|login\n" },
		{ "/usr/bin/tcsh", "login|unset|plain\n" }, { "/bin/csh", "login|unset|plain\n" },
		{ "/usr/bin/fish", "fish|unset|plain\n" }, { "/usr/bin/zsh", "zprofile|unset|plain\n" },
		{ "/bin/dash", "profile|unset|plain\n" }, { "/bin/mksh", "profile|unset|plain\n" },
		{ "/nonexistent/tcsh", "profile|unset|login\n" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		if (access(cases[i].shell, X_OK) != 0 && !strstr(cases[i].shell, "nonexistent"))
			continue;
		printf("# SHELL=%s\n", cases[i].shell);
		char *cmd = xasprintf("rm -f %s/runs; env -i HOME=%s SHELL=%s PATH=/usr/bin:/bin "
				      "bash %s/boot.sh </dev/null 2>/dev/null", home, home,
				      cases[i].shell, home);
		FILE *p = popen(cmd, "r");
		char buf[256] = "";
		size_t n = p ? fread(buf, 1, sizeof(buf) - 1, p) : 0;
		buf[n] = '\0';
		if (p)
			pclose(p);
		CHECK_STR(buf, cases[i].want);
		char *runs = xasprintf("%s/runs", home);
		FILE *f = fopen(runs, "r");
		int k = 0;
		CHECK(f && fscanf(f, "%d", &k) == 1 && k == 1);
		if (f)
			fclose(f);
		free(runs);
		free(cmd);
	}
	char *rm = xasprintf("rm -rf '%s'", home);
	CHECK_INT(system(rm), 0);
	free(rm);
	free(cfg);
	free(fish);
	strbuf_release(&boot);
	jobscript_release(&s);
	jobspec_release(&js);
}

/* A run: the wrapper gets the stop signal, requeues itself, appends to one log; the
 * bootstrap exports the run's id, attempt, checkpoint dir and stop signal; W&B
 * continues one run unless the user names it. Without a run id nothing of it. */
static void test_run(void)
{
	struct jobspec js = { 0 };
	struct jobscript s;
	struct inv_host h = slurm_host();
	hpc.wandb = "k";
	spec_cmd(&js, "python train.py");
	set(&js, "max-restarts", "3");
	set(&js, "restart-on", "timeout,error");
	set(&js, "grace", "30");
	struct jobscript_target t = { .host = &h, .run_id = "run-0123456789abcdef",
				      .bootstrap_path = "/scratch/theseus/.dispatch/x/bootstrap.sh" };
	CHECK(jobscript_generate(&js, &t, &s, &err) == 0);
	CHECK(has_directive(&s, "--signal=B:USR1@30"));
	CHECK(has_directive(&s, "--requeue"));
	CHECK(has_directive(&s, "--open-mode=append"));
	CHECK_CONTAINS(s.sbatch, "\ndispatch_run_id='run-0123456789abcdef'\ndispatch_max_restarts=3\n"
				 "dispatch_restart_on=' timeout error '\ndispatch_stop_signal=USR1\n"
				 "dispatch_grace=30\ndispatch_stage='/scratch/theseus/.dispatch/x/bootstrap.sh'\n");
	CHECK_CONTAINS(s.sbatch, "scontrol requeue \"$dispatch_job\"");
	CHECK_CONTAINS(s.sbatch, " &\ndispatch_child=$!\ndispatch_run_wait\n");
	/* the run's end for good goes to a webhook when the stage dir has one */
	CHECK_CONTAINS(s.sbatch, "\ndispatch_notify() {\n");
	CHECK_CONTAINS(s.sbatch, "\t\tdispatch_final COMPLETED \"\"\n");
	/* a job array's task (a sweep's) is a run of its own, -INDEX, as the wrapper says */
#define TASK "${SLURM_ARRAY_TASK_ID:+-$((10#$SLURM_ARRAY_TASK_ID + 10#${DISPATCH_SWEEP_FIRST:-0}))}"
	CHECK_CONTAINS(s.bootstrap, "export DISPATCH_RUN_ID='run-0123456789abcdef'" TASK "\n");
	CHECK_CONTAINS(s.bootstrap, "export DISPATCH_CHECKPOINT_DIR='/mnt/juicefs/theseus/checkpoints/"
				    "run-0123456789abcdef'" TASK "\n");
#undef TASK
	CHECK_CONTAINS(s.sbatch, "\tdispatch_attempts=$dispatch_stage/attempts.$dispatch_job\n");
	CHECK_CONTAINS(s.sbatch, "\tdispatch_run_id=$dispatch_run_id-$((10#$SLURM_ARRAY_TASK_ID + "
				 "10#${DISPATCH_SWEEP_FIRST:-0}))\n");
	CHECK_CONTAINS(s.bootstrap, "export DISPATCH_STOP_SIGNAL=USR1\nexport DISPATCH_STOP_GRACE=30\n");
	CHECK_CONTAINS(s.bootstrap, "(\n\tset +euo pipefail\n\ttrap : USR1\n\teval 'python train.py'\n) &\n");
	CHECK_CONTAINS(s.bootstrap, "export WANDB_RUN_ID=\"$DISPATCH_RUN_ID\"\nexport WANDB_RESUME=allow\n");
	CHECK(jobscript_sets_wandb_run(&js, &h));
	/* its W&B page, once the cluster names entity and project */
	CHECK(jobscript_wandb_url(&h, "run-0123456789abcdef") == NULL);
	hpc.wandb_entity = "lab";
	hpc.wandb_project = "llm";
	_cleanup_free_ char *url = jobscript_wandb_url(&h, "run-0123456789abcdef");
	CHECK_STR(url, "https://wandb.ai/lab/llm/runs/run-0123456789abcdef");
	hpc.wandb_entity = hpc.wandb_project = NULL;
	jobscript_release(&s);

	/* the user's WANDB_RESUME wins; a stop signal the bootstrap does not trap yet */
	set(&js, "env", "WANDB_RESUME=must");
	set(&js, "stop-signal", "SIGXCPU");
	CHECK(jobscript_generate(&js, &t, &s, &err) == 0);
	CHECK(strstr(s.bootstrap, "WANDB_RUN_ID") == NULL);
	CHECK(!jobscript_sets_wandb_run(&js, &h));
	CHECK_CONTAINS(s.bootstrap, "trap 'dispatch_forward XCPU 152' XCPU\n");
	CHECK(has_directive(&s, "--signal=B:XCPU@30"));
	jobscript_release(&s);
	hpc.wandb = NULL;

	/* no run id: the scripts as before */
	CHECK(gen(&js, &h, &s) == 0);
	CHECK(strstr(s.sbatch, "dispatch_run") == NULL && strstr(s.bootstrap, "DISPATCH_RUN_ID") == NULL);
	CHECK(!has_prefix_directive(&s, "--signal") && !has_directive(&s, "--requeue"));
	jobscript_release(&s);

	/* a cluster without a root: the checkpoints under its share dir */
	struct inv_host p = plain_host();
	local.root = NULL;
	t.host = &p;
	CHECK(jobscript_generate(&js, &t, &s, &err) == 0);
	CHECK_CONTAINS(s.bootstrap, "export DISPATCH_CHECKPOINT_DIR='/tmp/theseus/.dispatch/checkpoints/"
				    "run-0123456789abcdef'\n");
	local.root = "/data";
	jobscript_release(&s);
	jobspec_release(&js);
}

/* A sweep: no --array in the script (sbatch's command line has each array's, and one
 * sbatch.sh serves them all), its task 0's sweep index from the script's $1, one
 * output file per task, and the bootstrap's table, which bash and shellcheck read. */
static void test_sweep(void)
{
	struct jobspec js = { 0 };
	struct jobscript s;
	struct inv_host h = slurm_host();
	struct sweep sw = SWEEP_INIT;
	spec_cmd(&js, "python train.py --lr {lr} --name 'run-{lr}'");
	set(&js, "max-parallel", "2");
	CHECK_INT(sweep_add(&sw, "lr=0.1,it's", &err), 0);
	CHECK_INT(sweep_add(&sw, "seed=1..3", &err), 0);
	struct jobscript_target t = { .host = &h, .sweep = &sw, .sweep_id = "sweep-0123456789abcdef",
				      .bootstrap_path = "/scratch/theseus/.dispatch/x/bootstrap.sh" };
	CHECK(jobscript_generate(&js, &t, &s, &err) == 0);
	CHECK(!has_prefix_directive(&s, "--array"));
	CHECK(has_prefix_directive(&s, "--output=") && strstr(s.sbatch, "%x-%A_%a.out\n"));
	CHECK_CONTAINS(s.sbatch, "case ${1:-0} in\n*[!0-9]*)\n");
	CHECK_CONTAINS(s.sbatch, "export DISPATCH_SWEEP_FIRST=\"${1:-0}\"\n");
	CHECK_CONTAINS(s.bootstrap, "DISPATCH_SWEEP_INDEX=$((10#$DISPATCH_SWEEP_INDEX + "
				    "10#${DISPATCH_SWEEP_FIRST:-0}))\n");
	CHECK_SH_N("sweep wrapper", s.sbatch);
	CHECK_SHELLCHECK("sweep wrapper", s.sbatch);
	CHECK_CONTAINS(s.bootstrap, "DISPATCH_SWEEP_ID='sweep-0123456789abcdef'\nDISPATCH_SWEEP_SIZE=6\n");
	CHECK_CONTAINS(s.bootstrap, "\n4) export DISPATCH_PARAM_LR='it'\\''s' DISPATCH_PARAM_SEED='2' ;;\n");
	CHECK_CONTAINS(s.bootstrap, "\ndispatch_command='python train.py --lr \"${DISPATCH_PARAM_LR}\" --name "
		       "'\\''run-'\\''\"${DISPATCH_PARAM_LR}\"'\\'''\\'''\n");
	CHECK_CONTAINS(s.bootstrap, "\teval \"$dispatch_command\"\n");
	CHECK_SH_N("sweep bootstrap", s.bootstrap);
	CHECK_SHELLCHECK("sweep bootstrap", s.bootstrap);
	jobscript_release(&s);
	sweep_release(&sw);
	jobspec_release(&js);
}

/* A sweep on a plain host: each task a plain job whose id ends in its index (SWEEP-K);
 * a task that is a run has the run's id with -K, and so its checkpoints. */
static void test_sweep_plain(void)
{
	struct jobspec js = { 0 };
	struct jobscript s;
	struct inv_host h = plain_host();
	struct sweep sw = SWEEP_INIT;
	spec_cmd(&js, "python train.py --lr {lr}");
	set(&js, "max-restarts", "1");
	CHECK_INT(sweep_add(&sw, "lr=0.1,0.01", &err), 0);
	struct jobscript_target t = { .host = &h, .sweep = &sw, .sweep_id = "sweep-0123456789abcdef",
				      .run_id = "run-0123456789abcdef" };
	CHECK(jobscript_generate(&js, &t, &s, &err) == 0);
	CHECK(!s.sbatch);
	CHECK_CONTAINS(s.bootstrap, "DISPATCH_SWEEP_INDEX=${DISPATCH_JOB_ID##*-}\n");
	CHECK(!strstr(s.bootstrap, "SLURM_ARRAY_TASK_ID"));
	CHECK_CONTAINS(s.bootstrap, "export DISPATCH_RUN_ID='run-0123456789abcdef'-\"$DISPATCH_SWEEP_INDEX\"\n");
	CHECK_CONTAINS(s.bootstrap, "/run-0123456789abcdef'-\"$DISPATCH_SWEEP_INDEX\"\n");
	CHECK_SH_N("plain sweep bootstrap", s.bootstrap);
	CHECK_SHELLCHECK("plain sweep bootstrap", s.bootstrap);
	jobscript_release(&s);
	sweep_release(&sw);
	jobspec_release(&js);
}

/* --launch once: the wrapper runs the bootstrap as a prepare step on every node, then
 * once itself; the bootstrap ends there when prepared, makes DISPATCH_HOSTFILE and
 * extracts the code under the stage dir; no srun guard. Per-node: the guard, first on
 * the command's PATH. A plain host has no such mode (told), nor a guard; an image is
 * refused with once. */
static void test_launch(void)
{
	struct jobspec js = { 0 };
	struct jobscript s;
	struct inv_host h = slurm_host();
	spec_cmd(&js, "srun python train.py");
	set(&js, "nodes", "2");
	CHECK(gen(&js, &h, &s) == 0);
	CHECK_CONTAINS(s.bootstrap, "PATH=$dispatch_guard:$PATH\n");
	CHECK(strstr(s.bootstrap, "PATH=$dispatch_guard") < strstr(s.bootstrap, "eval 'srun python train.py'"));
	CHECK(!strstr(s.bootstrap, "DISPATCH_HOSTFILE"));
	CHECK_SHELLCHECK("per-node bootstrap", s.bootstrap);
	jobscript_release(&s);

	set(&js, "launch", "once");
	static const unsigned char gz[] = { 0x1f, 0x8b, 8, 0 };
	struct jobscript_target t = { .host = &h, .bootstrap_path = "/s/x/bootstrap.sh",
				      .payload = gz, .payload_len = sizeof(gz) };
	CHECK(jobscript_generate(&js, &t, &s, &err) == 0);
	CHECK_CONTAINS(s.sbatch, "srun --kill-on-bad-exit=1 -N \"$SLURM_JOB_NUM_NODES\" -n "
				 "\"$SLURM_JOB_NUM_NODES\" --ntasks-per-node=1 bash '/s/x/bootstrap.sh' "
				 "prepare || exit\nbash '/s/x/bootstrap.sh' &\ndispatch_child=$!\n");
	CHECK_CONTAINS(s.bootstrap, "if [ \"${1:-}\" = prepare ]; then\n\texit 0\nfi\n");
	CHECK_CONTAINS(s.bootstrap, "DISPATCH_CODE_DIR=$dispatch_tmp/code\n");
	CHECK(!strstr(s.bootstrap, "SLURM_TMPDIR"));
	CHECK(!strstr(s.bootstrap, "dispatch_guard"));
	CHECK_SH_N("once wrapper", s.sbatch);
	CHECK_SHELLCHECK("once wrapper", s.sbatch);
	CHECK_SHELLCHECK("once bootstrap", s.bootstrap);
	/* the hostfile's slots, from SLURM_TASKS_PER_NODE ("2(x3),1"), through awk */
	const char *a = strstr(s.bootstrap, "\tawk -v t="), *e = a ? strstr(a, " >\"$DISPATCH_HOSTFILE\"") : NULL;
	CHECK(a && e);
	if (a && e) {
		char *awk = xstrndup(a, (size_t)(e - a));
		char *cmd = xasprintf("SLURM_TASKS_PER_NODE='2(x3),1'; printf 'n1\\nn2\\nn3\\nn4\\n' | %s", awk);
		int st;
		char *out = unit_output(cmd, &st);
		CHECK_INT(st, 0);
		CHECK_STR(out, "n1 slots=2\nn2 slots=2\nn3 slots=2\nn4 slots=1\n");
		free(out);
		free(cmd);
		free(awk);
	}
	jobscript_release(&s);

	js.container_image = xstrdup("/images/x.sqsh");
	h.container_runtime = CONTAINER_PYXIS;
	CHECK(gen(&js, &h, &s) < 0);
	CHECK_CONTAINS(err.msg, "--launch once runs the command in the batch script");
	free(js.container_image);
	js.container_image = NULL;

	struct inv_host p = plain_host();
	CHECK(gen(&js, &p, &s) == 0);
	CHECK(s.ignored && strv_contains(s.ignored, "launch"));
	CHECK(!strstr(s.bootstrap, "dispatch_guard") && !strstr(s.bootstrap, "DISPATCH_HOSTFILE"));
	jobscript_release(&s);
	jobspec_release(&js);
}

/* --stage: the runner and its file next to the bootstrap, each stage quoted, the
 * command last; shellcheck reads it. */
static void test_stages(void)
{
	struct jobspec js = { 0 };
	struct jobscript s;
	struct inv_host h = slurm_host();
	set(&js, "stage", "python prep.py --in 'a b'");
	set(&js, "stage", "python train.py");
	spec_cmd(&js, "python eval.py");
	CHECK(gen(&js, &h, &s) == 0);
	CHECK_CONTAINS(s.bootstrap, "\tdispatch_stages \\\n\t\t'python prep.py --in '\\''a b'\\''' \\\n"
				    "\t\t'python train.py' \\\n\t\t'python eval.py'\n");
	CHECK_CONTAINS(s.bootstrap, "dispatch_stage_file=\"${BASH_SOURCE[0]%/*}/stages.${dispatch_stage_file:-$DISPATCH_JOB_ID}\"\n");
	CHECK_SHELLCHECK("stages bootstrap", s.bootstrap);
	jobscript_release(&s);
	jobspec_release(&js);
}

int main(void)
{
	test_sweep_plain();
	test_launch();
	test_stages();
	test_run();
	test_sweep();
	test_login_families();
	test_container_goldens();
	test_container_refusals();
	test_reference_keys();
	test_multinode_one_task_per_node();
	test_cpus_per_task();
	test_memory();
	test_gpus();
	test_host_defaults();
	test_directive_quoting();
	test_bootstrap();
	test_payload_fallback();
	test_plain_host();
	test_paths();
	test_write_file();
	return unit_done();
}
