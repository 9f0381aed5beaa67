/* SPDX-License-Identifier: MIT */
/* Container runtimes and mount lists: container.h. */
#include "container/container.h"

static const char *const runtime_names[] = {
	[CONTAINER_NONE] = "none",
	[CONTAINER_PYXIS] = "pyxis",
	[CONTAINER_APPTAINER] = "apptainer",
	[CONTAINER_SINGULARITY] = "singularity",
	[CONTAINER_CHARLIECLOUD] = "charliecloud",
	[CONTAINER_PODMAN_HPC] = "podman-hpc",
	[CONTAINER_PODMAN] = "podman",
	[CONTAINER_DOCKER] = "docker",
};

const char *container_runtime_name(enum container_runtime r)
{
	return (size_t)r < ARRAY_SIZE(runtime_names) ? runtime_names[r] : "none";
}

int container_runtime_from_name(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(runtime_names); i++)
		if (streq(name, runtime_names[i]))
			return (int)i;
	return -1;
}

const char *container_runtime_names(void)
{
	return "none, pyxis, apptainer, singularity, charliecloud, podman-hpc, podman or docker";
}

bool container_runtime_slurm_only(enum container_runtime r)
{
	return r == CONTAINER_PYXIS || r == CONTAINER_PODMAN_HPC;
}

bool container_runtime_plain_only(enum container_runtime r)
{
	return r == CONTAINER_PODMAN || r == CONTAINER_DOCKER;
}

/* A path as a mount list holds it: absolute, ~/..., or $VAR/...; no ',' (the item
 * separator), ':' (the field separator) or control characters. */
static const char *bad_path(const char *p, size_t len)
{
	if (len == 0)
		return "is empty";
	if (p[0] != '/' && p[0] != '$' && !(p[0] == '~' && (len == 1 || p[1] == '/')))
		return "is not an absolute path (start it with /, ~/ or $VAR)";
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)p[i] < 0x20 || p[i] == 0x7f)
			return "holds a control character";
	return NULL;
}

static int bad_item(struct dp_error *err, const char *what, const char *item, size_t len,
		    const char *side, const char *why)
{
	char shown[96];
	size_t i = 0;
	for (; i < len && i + 4 < sizeof(shown); i++)
		shown[i] = ((unsigned char)item[i] < 0x20 || item[i] == 0x7f) ? '?' : item[i];
	if (i < len) {
		memcpy(shown + i, "...", 3);
		i += 3;
	}
	shown[i] = '\0';
	return dp_err(err, DPE_INPUT, "invalid %s item '%s': %s%s (expected SRC:DST or SRC:DST:ro, "
		      "absolute paths, items joined by ',')", what, shown, side, why);
}

/* One item "SRC:DST[:FLAG]" of len bytes at s, appended to *m. */
static int parse_item(const char *s, size_t len, const char *what, struct container_mount **m,
		      size_t *n, struct dp_error *err)
{
	const char *c1 = memchr(s, ':', len);
	if (!c1)
		return bad_item(err, what, s, len, "", "no ':' between SRC and DST");
	size_t slen = (size_t)(c1 - s);
	const char *d = c1 + 1;
	size_t rest = len - slen - 1;
	const char *c2 = memchr(d, ':', rest);
	size_t dlen = c2 ? (size_t)(c2 - d) : rest;
	bool ro = false;
	if (c2) {
		size_t flen = rest - dlen - 1;
		if (flen == 2 && !strncmp(c2 + 1, "ro", 2))
			ro = true;
		else if (!(flen == 2 && !strncmp(c2 + 1, "rw", 2)))
			return bad_item(err, what, s, len, "", "the only flags are 'ro' and 'rw'");
	}
	const char *why = bad_path(s, slen);
	if (why)
		return bad_item(err, what, s, len, "SRC ", why);
	if ((why = bad_path(d, dlen)))
		return bad_item(err, what, s, len, "DST ", why);
	*m = xrealloc(*m, (*n + 1) * sizeof(**m));
	(*m)[(*n)++] = (struct container_mount){ xstrndup(s, slen), xstrndup(d, dlen), ro };
	return 0;
}

int container_mounts_parse(const char *s, const char *what, struct container_mount **mounts,
			   size_t *n, struct dp_error *err)
{
	if (!*s)
		return dp_err(err, DPE_INPUT, "invalid %s '': expected SRC:DST[:ro][,...]", what);
	struct container_mount *m = NULL;
	size_t k = 0;
	for (;;) {
		size_t len = strcspn(s, ",");
		if (parse_item(s, len, what, &m, &k, err) < 0) {
			container_mounts_free(m, k);
			return -1;
		}
		if (s[len] == '\0')
			break;
		s += len + 1;
	}
	*mounts = xrealloc(*mounts, (*n + k) * sizeof(**mounts));
	memcpy(*mounts + *n, m, k * sizeof(*m));
	*n += k;
	free(m);
	return 0;
}

bool container_mounts_valid(const char *s)
{
	struct container_mount *m = NULL;
	size_t n = 0;
	struct dp_error err;
	int r = container_mounts_parse(s, "mounts", &m, &n, &err);
	container_mounts_free(m, n);
	return r == 0;
}

void container_mounts_free(struct container_mount *mounts, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(mounts[i].src);
		free(mounts[i].dst);
	}
	free(mounts);
}
