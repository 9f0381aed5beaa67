/* SPDX-License-Identifier: MIT */
/* A job in its image: container_run.h. */
#include "container/container_run.h"

#include "base/marker.h"
#include "base/shquote.h"
#include "jobs/jobscript.h"

const char *container_job_image(const struct jobspec *spec, const struct inv_host *host)
{
	if (spec->container_image)
		return spec->container_image;
	if (spec->no_container > 0)
		return NULL;
	return host->container_image;
}

static bool has_suffix(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n >= m && !strcmp(s + n - m, suffix);
}

/* An image named by its path on the host (/, ~/ or $VAR: the shell expands the last
 * two), not a registry or storage name. */
static bool image_is_file(enum container_runtime rt, const char *image)
{
	if (rt == CONTAINER_PODMAN || rt == CONTAINER_DOCKER || rt == CONTAINER_PODMAN_HPC)
		return false;
	return image[0] == '/' || startswith(image, "~/") || image[0] == '$';
}

/* A file Pyxis would take for a registry image: not absolute, and named as a file. */
static bool relative_image_file(const char *image)
{
	if (image_is_file(CONTAINER_PYXIS, image))
		return false;
	return startswith(image, "./") || startswith(image, "../") || startswith(image, "~") ||
	       has_suffix(image, ".sqsh") || has_suffix(image, ".sqfs") ||
	       has_suffix(image, ".squashfs");
}

int container_job_check(const struct jobspec *spec, const struct inv_host *host,
			struct dp_error *err)
{
	const char *image = container_job_image(spec, host);
	if (!image)
		return 0;
	if (host->container_runtime == CONTAINER_NONE)
		return dp_err(err, DPE_INPUT, "'%s' has no container_runtime: set one for it in the "
			      "inventory (%s), or run the job without --container-image", host->name,
			      container_runtime_names());
	if (spec->modules && spec->modules[0])
		return dp_err(err, DPE_INPUT, "--module '%s' and the container image '%s' exclude each "
			      "other: modules are the host's, the image brings its own software (put it "
			      "in the image, or add --no-container)", spec->modules[0], image);
	if (host->container_runtime == CONTAINER_PYXIS && relative_image_file(image))
		return dp_err(err, DPE_INPUT, "container image '%s' is a relative path: Pyxis would "
			      "read it as a registry image; give the file's absolute path", image);
	return 0;
}

char *container_image_ref(enum container_runtime rt, const char *image)
{
	if (rt != CONTAINER_PYXIS || image_is_file(rt, image) || strstr(image, "://") ||
	    strchr(image, '#'))
		return xstrdup(image);
	const char *slash = strchr(image, '/');
	if (!slash)
		return xstrdup(image);
	/* The first part names a registry when it looks like a host: a dot, a port, or
	 * localhost (as docker decides). */
	size_t n = (size_t)(slash - image);
	bool registry = memchr(image, '.', n) || memchr(image, ':', n) ||
			(n == 9 && !strncmp(image, "localhost", 9));
	if (!registry)
		return xstrdup(image);
	char *ref = xstrdup(image);
	ref[n] = '#';
	return ref;
}

/* ---- the mounts ---- */

static void add_same_path(struct container_mount **m, size_t *n, const char *path)
{
	if (!path)
		return;
	for (size_t i = 0; i < *n; i++)
		if (streq((*m)[i].src, path) && streq((*m)[i].dst, path))
			return;
	*m = xrealloc(*m, (*n + 1) * sizeof(**m));
	(*m)[(*n)++] = (struct container_mount){ xstrdup(path), xstrdup(path), false };
}

/* Every mount of the job, in order (container_run.h). */
static void job_mounts(const struct jobspec *spec, const struct inv_host *host,
		       const char *bootstrap_path, struct container_mount **m, size_t *n)
{
	const struct inv_cluster *c = host->cluster;
	*m = NULL;
	*n = 0;
	if (c) {
		_cleanup_free_ char *log = c->work || c->log ? jobscript_log_dir(c) : NULL;
		add_same_path(m, n, c->root);
		add_same_path(m, n, c->work);
		add_same_path(m, n, log);
	}
	_cleanup_free_ char *share = jobscript_share_dir(host);
	add_same_path(m, n, share);
	struct dp_error err;
	for (size_t i = 0; host->container_mounts && host->container_mounts[i]; i++)
		container_mounts_parse(host->container_mounts[i], "container_mounts", m, n, &err);
	for (size_t i = 0; spec->container_mounts && spec->container_mounts[i]; i++)
		container_mounts_parse(spec->container_mounts[i], "--container-mounts", m, n, &err);
	if (host->container_runtime == CONTAINER_PYXIS) {
		const char *end = strrchr(bootstrap_path, '/');
		char *stage = end && end != bootstrap_path
			? xstrndup(bootstrap_path, (size_t)(end - bootstrap_path)) : xstrdup("/");
		*m = xrealloc(*m, (*n + 1) * sizeof(**m));
		(*m)[(*n)++] = (struct container_mount){ stage, xstrdup(CONTAINER_MARKER), true };
	}
}

/* SRC:DST[:ro], each path as jobscript_quote_path writes it. */
static void mount_spec(struct strbuf *sb, const struct container_mount *m, bool flags)
{
	jobscript_quote_path(sb, m->src);
	strbuf_addch(sb, ':');
	jobscript_quote_path(sb, m->dst);
	if (flags && m->ro)
		strbuf_adds(sb, ":ro");
}

/* " OPT SPEC" per mount (sep NULL), or " OPT SPEC,SPEC,..." (sep ","). */
static void mount_words(struct strbuf *sb, const char *opt, const struct container_mount *m,
			size_t n, bool joined, bool flags)
{
	for (size_t i = 0; i < n; i++) {
		if (!joined || i == 0)
			strbuf_addf(sb, " %s", opt);
		else
			strbuf_addch(sb, ',');
		mount_spec(sb, &m[i], flags);
	}
}

static void workdir(struct strbuf *sb, const struct jobspec *spec)
{
	if (spec->container_workdir)
		jobscript_quote_path(sb, spec->container_workdir);
	else
		strbuf_adds(sb, "\"$PWD\"");
}

/* What the bootstrap needs from outside (podman passes no environment by default). */
static const char *const slurm_env[] = {
	"SLURM_JOB_ID", "SLURM_JOB_NAME", "SLURM_NODEID", "SLURM_PROCID", "SLURM_LOCALID",
	"SLURM_JOB_NUM_NODES", "SLURM_NNODES", "SLURM_NTASKS", "SLURM_JOB_NODELIST",
	"SLURM_GPUS_ON_NODE", "CUDA_VISIBLE_DEVICES", "DISPATCH_JOB_ID",
	/* a sweep's task (dispatch-submit(1) SWEEPS): its array task and offset */
	"SLURM_ARRAY_JOB_ID", "SLURM_ARRAY_TASK_ID", "DISPATCH_SWEEP_FIRST",
};
static const char *const plain_env[] = { "DISPATCH_JOB_ID", "CUDA_VISIBLE_DEVICES", "DISPATCH_GPUS" };

/* podman's and docker's " -v SRC:DST ... -w W -e NAME ... IMG bash ". */
static void oci_tail(struct strbuf *sb, const struct jobspec *spec,
		     const struct container_mount *m, size_t n, const char *const *env,
		     size_t nenv, const char *ref)
{
	mount_words(sb, "-v ", m, n, false, true);
	strbuf_adds(sb, " -w ");
	workdir(sb, spec);
	for (size_t i = 0; i < nenv; i++)
		strbuf_addf(sb, " -e %s", env[i]);
	strbuf_addch(sb, ' ');
	sh_quote(sb, ref);
	strbuf_adds(sb, " bash ");
}

void container_command(struct strbuf *sb, const struct jobspec *spec,
		       const struct inv_host *host, const char *bootstrap_path, bool gpus)
{
	enum container_runtime rt = host->container_runtime;
	const char *image = container_job_image(spec, host);
	_cleanup_free_ char *ref = container_image_ref(rt, image);
	struct container_mount *m;
	size_t n;
	job_mounts(spec, host, bootstrap_path, &m, &n);
	switch (rt) {
	case CONTAINER_PYXIS:
		strbuf_adds(sb, "--container-image=");
		if (image_is_file(rt, ref))
			jobscript_quote_path(sb, ref);
		else
			sh_quote(sb, ref);
		mount_words(sb, "--container-mounts=", m, n, true, true);
		strbuf_adds(sb, " --container-workdir=");
		workdir(sb, spec);
		strbuf_adds(sb, " --no-container-mount-home --no-container-remap-root /bin/bash ");
		break;
	case CONTAINER_APPTAINER:
	case CONTAINER_SINGULARITY:
		strbuf_adds(sb, rt == CONTAINER_APPTAINER ? "apptainer exec" : "singularity exec");
		if (gpus)
			strbuf_adds(sb, " --nv");
		strbuf_adds(sb, " --no-home");
		mount_words(sb, "--bind ", m, n, true, true);
		strbuf_adds(sb, " --pwd ");
		workdir(sb, spec);
		strbuf_addch(sb, ' ');
		jobscript_quote_path(sb, ref);
		strbuf_adds(sb, " bash ");
		break;
	case CONTAINER_CHARLIECLOUD:
		/* ch-run's binds have no read-only flag */
		strbuf_adds(sb, "ch-run");
		mount_words(sb, "-b ", m, n, false, false);
		strbuf_adds(sb, " -c ");
		workdir(sb, spec);
		strbuf_addch(sb, ' ');
		jobscript_quote_path(sb, ref);
		strbuf_adds(sb, " -- bash ");
		break;
	case CONTAINER_PODMAN_HPC:
		strbuf_adds(sb, "podman-hpc run --rm");
		if (gpus)
			strbuf_adds(sb, " --gpu");
		strbuf_adds(sb, " --network=host --ipc=host");
		oci_tail(sb, spec, m, n, slurm_env, ARRAY_SIZE(slurm_env), ref);
		break;
	case CONTAINER_PODMAN:
	case CONTAINER_DOCKER:
		strbuf_adds(sb, rt == CONTAINER_PODMAN ? "podman" : "docker");
		strbuf_adds(sb, " run --rm --name \"dispatch-$DISPATCH_JOB_ID\" --pull=never "
				"--network=host --ipc=host");
		if (gpus)
			strbuf_adds(sb, rt == CONTAINER_PODMAN ? " --device nvidia.com/gpu=all"
							       : " --gpus all");
		oci_tail(sb, spec, m, n, plain_env, ARRAY_SIZE(plain_env), ref);
		break;
	case CONTAINER_NONE:
		strbuf_adds(sb, "bash ");
		break;
	}
	jobscript_quote_path(sb, bootstrap_path);
	container_mounts_free(m, n);
}

/* A test that holds when the bootstrap is not inside the runtime's container. */
static const char *outside_test(enum container_runtime rt)
{
	switch (rt) {
	case CONTAINER_PYXIS:
		return "[ ! -d " CONTAINER_MARKER " ]";
	case CONTAINER_APPTAINER:
	case CONTAINER_SINGULARITY:
		return "[ -z \"${APPTAINER_CONTAINER:-}${SINGULARITY_CONTAINER:-}\" ]";
	case CONTAINER_CHARLIECLOUD:
		return "[ -z \"${CH_RUNNING:-}\" ]";
	case CONTAINER_PODMAN_HPC:
	case CONTAINER_PODMAN:
		return "[ ! -e /run/.containerenv ]";
	case CONTAINER_DOCKER:
		return "[ ! -e /.dockerenv ]";
	case CONTAINER_NONE:
		break;
	}
	return "false";
}

void container_inside_check(struct strbuf *sb, const struct jobspec *spec,
			    const struct inv_host *host)
{
	const char *image = container_job_image(spec, host);
	if (!image || host->container_runtime == CONTAINER_NONE)
		return;
	const char *rt = container_runtime_name(host->container_runtime);
	strbuf_adds(sb, "\n# The image: a node whose runtime did not take the job would run it on the\n"
			"# host, silently; its os-release once per node, for the log.\n"
			"dispatch_image=");
	sh_quote(sb, image);
	strbuf_addf(sb, "\nif %s; then\n"
			"\techo \"dispatch: $(hostname) is not inside container $dispatch_image: is %s "
			"installed there?\" >&2\n"
			"\texit 1\n"
			"fi\n", outside_test(host->container_runtime), rt);
	strbuf_adds(sb,
		"if [ \"${SLURM_LOCALID:-0}\" = 0 ]; then\n"
		"\t# shellcheck source=/dev/null\n"
		"\tdispatch_os=$({ . /etc/os-release || . /usr/lib/os-release; } 2>/dev/null\n"
		"\t\tprintf '%s' \"${PRETTY_NAME:-${NAME:-unknown}}\")\n"
		"\techo \"dispatch: $(hostname) runs in $dispatch_image: $dispatch_os\" >&2\n"
		"fi\n");
}

/* ---- before submitting ---- */

static const char *runtime_program(enum container_runtime rt)
{
	switch (rt) {
	case CONTAINER_PYXIS:
		return "srun";
	case CONTAINER_CHARLIECLOUD:
		return "ch-run";
	default:
		return container_runtime_name(rt);
	}
}

static void preflight_fail(struct strbuf *sb, const char *what)
{
	strbuf_adds(sb, "\t");
	marker_print(sb, MARK_PREFLIGHT, what);
	strbuf_adds(sb, "\texit 0\nfi\n");
}

void container_preflight_command(struct strbuf *sb, const struct jobspec *spec,
				 const struct inv_host *host)
{
	const char *image = container_job_image(spec, host);
	enum container_runtime rt = host->container_runtime;
	if (!image || rt == CONTAINER_NONE)
		return;
	strbuf_addf(sb, "if ! command -v %s >/dev/null 2>&1; then\n", runtime_program(rt));
	preflight_fail(sb, "no-runtime");
	if (rt == CONTAINER_PYXIS) {
		strbuf_adds(sb, "if ! srun --help 2>&1 | grep -q -e --container-image; then\n");
		preflight_fail(sb, "no-pyxis");
	}
	if (image_is_file(rt, image)) {
		strbuf_adds(sb, "if [ ! -e ");
		jobscript_quote_path(sb, image);
		strbuf_adds(sb, " ]; then\n");
		preflight_fail(sb, "no-image-file");
	}
	if (rt == CONTAINER_PODMAN || rt == CONTAINER_DOCKER) {
		strbuf_addf(sb, "if ! %s image inspect ", runtime_program(rt));
		sh_quote(sb, image);
		strbuf_adds(sb, " >/dev/null 2>&1; then\n");
		preflight_fail(sb, "no-image");
	}
}

int container_preflight_parse(const char *out, const struct jobspec *spec,
			      const struct inv_host *host, struct dp_error *err)
{
	_cleanup_free_ char *what = marker_find(out, MARK_PREFLIGHT);
	const char *image = container_job_image(spec, host);
	enum container_runtime rt = host->container_runtime;
	if (!what || !image)
		return 0;
	if (streq(what, "no-runtime"))
		return dp_err(err, DPE_NOTFOUND, "%s: %s not found (container_runtime: %s)",
			      host->name, runtime_program(rt), container_runtime_name(rt));
	if (streq(what, "no-pyxis"))
		return dp_err(err, DPE_FAIL, "%s: srun has no --container-image (Pyxis is not "
			      "installed)", host->name);
	if (streq(what, "no-image-file"))
		return dp_err(err, DPE_NOTFOUND, "container image '%s' not found on %s", image,
			      host->name);
	return dp_err(err, DPE_NOTFOUND, "%s: image '%s' not found; pull or load it there first",
		      host->name, image);
}
