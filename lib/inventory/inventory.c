/* SPDX-License-Identifier: MIT */
/*
 * The inventory loader: YAML (through yaml_tree) into struct inventory, validating
 * every key and value on the way. The first problem found is the error; it names
 * file:line:col, the dotted path of the key (hosts.gpu1.chips.h100) and, for unknown
 * keys and names, the closest valid one.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <sys/stat.h>

#include "inventory/chips.h"
#include "inventory/inventory.h"
#include "base/strbuf.h"
#include "inventory/yaml_tree.h"

struct loader {
	const char *file;
	struct dp_error *err;
	struct inventory *inv;
};

static int fail(struct loader *l, const struct ynode *at, const char *fmt, ...) _printf_(3, 4);
static int fail(struct loader *l, const struct ynode *at, const char *fmt, ...)
{
	char msg[900];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	/* Keys and values are quoted into the message: no terminal escapes from the file. */
	for (char *p = msg; *p; p++)
		if (iscntrl((unsigned char)*p))
			*p = '?';
	if (at)
		return dp_err(l->err, DPE_INPUT, "%s:%d:%d: %s", l->file, at->line, at->col, msg);
	return dp_err(l->err, DPE_INPUT, "%s: %s", l->file, msg);
}

/* A value quoted into a message, shortened so a message never drowns in it. */
static const char *shown(const struct ynode *n, char *buf, size_t size)
{
	if (!n || n->kind != YN_SCALAR)
		return ynode_kind_name(n);
	size_t len = strlen(n->value);
	if (len > 40)
		snprintf(buf, size, "'%.37s...'", n->value);
	else
		snprintf(buf, size, "'%s'", n->value);
	return buf;
}

static int check_keys(struct loader *l, const struct ynode *map, const char *path,
		      const char *const *allowed, size_t nallowed)
{
	for (size_t i = 0; i < map->n; i++) {
		const char *key = map->keys[i]->value;
		bool ok = false;
		for (size_t j = 0; j < nallowed && !ok; j++)
			ok = streq(key, allowed[j]);
		if (ok)
			continue;
		const char *guess = suggest_word(key, allowed, nallowed);
		char where[300] = "";
		if (path)
			snprintf(where, sizeof(where), " in %s", path);
		if (guess)
			return fail(l, map->keys[i], "unknown key '%s'%s (did you mean '%s'?)", key, where,
				    guess);
		return fail(l, map->keys[i], "unknown key '%s'%s", key, where);
	}
	return 0;
}

static int expect_map(struct loader *l, const struct ynode *n, const char *path)
{
	if (n->kind == YN_MAP)
		return 0;
	return fail(l, n, "%s: expected a mapping, got %s", path, ynode_kind_name(n));
}

/* A string value: NULL (unset) for YAML null; lists and mappings are errors. */
/* Any string: free text (annotations) may hold newlines. */
static int get_text(struct loader *l, const struct ynode *n, const char *path, char **out)
{
	*out = NULL;
	if (!n || ynode_is_null(n))
		return 0;
	if (n->kind != YN_SCALAR)
		return fail(l, n, "%s: expected a string, got %s", path, ynode_kind_name(n));
	*out = xstrdup(n->value);
	return 0;
}

/* A string on one line: these become #SBATCH values, paths and commands in scripts,
 * where a newline would start a line of its own. */
static int get_string(struct loader *l, const struct ynode *n, const char *path, char **out)
{
	if (get_text(l, n, path, out) < 0)
		return -1;
	for (const char *p = *out; p && *p; p++)
		if (iscntrl((unsigned char)*p) && *p != '\t') {
			free(*out);
			*out = NULL;
			return fail(l, n, "%s: the value holds a newline or another control "
				    "character: give it on one line", path);
		}
	return 0;
}

static bool is_word(const char *s, const char *extra)
{
	if (!*s || *s == '-')
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && !strchr(extra, *s))
			return false;
	return true;
}

/* A string without spaces or control characters, not starting with '-' (so it can
 * never read as an option to ssh or sbatch). */
static int get_token(struct loader *l, const struct ynode *n, const char *path, char **out)
{
	if (get_string(l, n, path, out) < 0)
		return -1;
	if (!*out)
		return 0;
	char buf[64];
	bool ok = **out && **out != '-';
	for (const char *p = *out; ok && *p; p++)
		ok = !isspace((unsigned char)*p) && !iscntrl((unsigned char)*p);
	if (ok)
		return 0;
	free(*out);
	*out = NULL;
	return fail(l, n, "%s: expected a single word not starting with '-', got %s", path,
		    shown(n, buf, sizeof(buf)));
}

static int get_required(struct loader *l, const struct ynode *map, const char *key,
			const char *path, char **out)
{
	const struct ynode *n = ynode_get(map, key);
	_cleanup_free_ char *kpath = xasprintf("%s.%s", path, key);
	if (get_string(l, n, kpath, out) < 0)
		return -1;
	if (!*out)
		return fail(l, n ? n : map, "%s: '%s' is required", path, key);
	if (!**out)
		return fail(l, n, "%s: must not be empty", kpath);
	return 0;
}

static int get_string_list(struct loader *l, const struct ynode *n, const char *path, char ***out)
{
	*out = NULL;
	if (!n || ynode_is_null(n))
		return 0;
	if (n->kind != YN_SEQ) {
		if (n->kind == YN_SCALAR)
			return fail(l, n, "%s: expected a list, got a string (write [%s])", path, n->value);
		return fail(l, n, "%s: expected a list, got %s", path, ynode_kind_name(n));
	}
	for (size_t i = 0; i < n->n; i++) {
		const struct ynode *it = n->items[i];
		char buf[64];
		if (it->kind != YN_SCALAR || ynode_is_null(it) ||
		    !is_word(it->value, "._-+@:%[],=/")) {
			strv_free(*out);
			*out = NULL;
			return fail(l, it, "%s[%zu]: expected a name, got %s", path, i,
				    shown(it, buf, sizeof(buf)));
		}
		strv_add(out, it->value);
	}
	return 0;
}

static int get_bool(struct loader *l, const struct ynode *n, const char *path, bool *out)
{
	if (!n || ynode_is_null(n))
		return 0;
	if (n->kind == YN_SCALAR && !n->quoted) {
		const char *v = n->value;
		if (streq(v, "true") || streq(v, "True") || streq(v, "TRUE")) {
			*out = true;
			return 0;
		}
		if (streq(v, "false") || streq(v, "False") || streq(v, "FALSE")) {
			*out = false;
			return 0;
		}
	}
	char buf[64];
	return fail(l, n, "%s: expected true or false, got %s", path, shown(n, buf, sizeof(buf)));
}

/* sbatch --mem syntax: a whole number with an optional K, M, G or T suffix. The
 * reference's "64GB" is read as 64G (the B is dropped in place). */
static bool valid_mem(char *s)
{
	size_t digits = strspn(s, "0123456789");
	if (digits == 0 || digits > 12)
		return false;
	s += digits;
	if (*s && strchr("KMGTkmgt", *s)) {
		s++;
		if ((*s == 'B' || *s == 'b') && s[1] == '\0')
			*s = '\0';
	}
	return *s == '\0';
}

static const char *chip_names_hint(void)
{
	return "'dispatch solve --chip' completes them; see dispatch-solve(1)";
}

/* A catalogue chip name as a key: the canonical spelling, or an error. */
static int get_chip_name(struct loader *l, const struct ynode *key, const char *path,
			 const char **out)
{
	const struct chip *c = chip_find(key->value);
	if (c) {
		*out = c->name;
		return 0;
	}
	if (chip_is_tpu(key->value))
		return fail(l, key, "%s: chip '%s' is a Cloud TPU: only 'type: tpu' hosts have TPUs "
			    "(and dispatch does not drive those)", path, key->value);
	const char *hint = chip_suggestion(key->value);
	if (*hint)
		return fail(l, key, "%s: unknown chip '%s'%s", path, key->value, hint);
	return fail(l, key, "%s: unknown chip '%s' (%s)", path, key->value, chip_names_hint());
}

/* ---- top level pieces ---- */

static int load_gres_mapping(struct loader *l, const struct ynode *n)
{
	if (!n || ynode_is_null(n))
		return 0;
	if (expect_map(l, n, "gres_mapping") < 0)
		return -1;
	struct inventory *inv = l->inv;
	inv->gres_mapping = xcalloc(n->n, sizeof(*inv->gres_mapping));
	for (size_t i = 0; i < n->n; i++) {
		_cleanup_free_ char *path = xasprintf("gres_mapping.%s", n->keys[i]->value);
		const char *chip = NULL;
		char *type = NULL;
		if (get_chip_name(l, n->keys[i], "gres_mapping", &chip) < 0)
			return -1;
		for (size_t j = 0; j < inv->ngres_mapping; j++)
			if (streq(inv->gres_mapping[j].key, chip))
				return fail(l, n->keys[i], "%s: chip '%s' is mapped twice", path, chip);
		if (get_token(l, n->items[i], path, &type) < 0)
			return -1;
		if (!type || strpbrk(type, ":,")) {
			char buf[64];
			free(type);
			return fail(l, n->items[i], "%s: expected a GRES type such as 'a100_80g', got %s",
				    path, shown(n->items[i], buf, sizeof(buf)));
		}
		inv->gres_mapping[inv->ngres_mapping].key = xstrdup(chip);
		inv->gres_mapping[inv->ngres_mapping].value = type;
		inv->ngres_mapping++;
	}
	return 0;
}

static const char *const cluster_keys[] = {
	"root", "work", "log", "share", "mount", "cache_size", "cache_dir", "all_squash",
	"data", "checkpoints", "results", "status", "uv_dir",
	"wandb", "wandb_entity", "wandb_project", "hf_token", "notify_url",
};

static int load_cluster(struct loader *l, const char *name, const struct ynode *key,
			const struct ynode *n, struct inv_cluster *c)
{
	_cleanup_free_ char *path = xasprintf("clusters.%s", name);
	c->name = xstrdup(name);
	c->line = key->line;
	c->col = key->col;
	if (!is_word(name, "._-"))
		return fail(l, key, "%s: a cluster name is letters, digits, '.', '_' and '-'", path);
	if (ynode_is_null(n))
		return fail(l, key, "%s: needs at least 'root' and 'work'", path);
	if (expect_map(l, n, path) < 0 ||
	    check_keys(l, n, path, cluster_keys, ARRAY_SIZE(cluster_keys)) < 0)
		return -1;
	struct {
		const char *key;
		char **field;
	} fields[] = {
		{ "log", &c->log }, { "share", &c->share }, { "mount", &c->mount },
		{ "cache_size", &c->cache_size }, { "cache_dir", &c->cache_dir },
		{ "all_squash", &c->all_squash }, { "data", &c->data },
		{ "checkpoints", &c->checkpoints }, { "results", &c->results },
		{ "status", &c->status }, { "uv_dir", &c->uv_dir },
		/* Credentials: get_string never quotes the value into a message. */
		{ "wandb", &c->wandb }, { "wandb_entity", &c->wandb_entity },
		{ "wandb_project", &c->wandb_project }, { "hf_token", &c->hf_token },
		{ "notify_url", &c->notify_url },
	};
	if (get_required(l, n, "root", path, &c->root) < 0 ||
	    get_required(l, n, "work", path, &c->work) < 0)
		return -1;
	for (size_t i = 0; i < ARRAY_SIZE(fields); i++) {
		_cleanup_free_ char *p = xasprintf("%s.%s", path, fields[i].key);
		if (get_string(l, ynode_get(n, fields[i].key), p, fields[i].field) < 0)
			return -1;
	}
	if (c->all_squash) {
		size_t a = strspn(c->all_squash, "0123456789");
		if (a == 0 || c->all_squash[a] != ':' ||
		    strspn(c->all_squash + a + 1, "0123456789") != strlen(c->all_squash + a + 1) ||
		    !c->all_squash[a + 1]) {
			char buf[64];
			return fail(l, ynode_get(n, "all_squash"), "%s.all_squash: expected UID:GID "
				    "(as juicefs mount --all-squash takes it, e.g. \"1000:1000\"), got %s",
				    path, shown(ynode_get(n, "all_squash"), buf, sizeof(buf)));
		}
	}
	if (c->notify_url && !inv_notify_url_ok(c->notify_url))
		return fail(l, ynode_get(n, "notify_url"), "%s.notify_url: " INV_NOTIFY_URL_WANT, path);
	if (c->notify_url)
		l->inv->has_secrets = true;
	size_t i = 0;
	const char *secret_name, *secret_value;
	_cleanup_free_ char *password = NULL, *bare = NULL, *why = NULL;
	if (c->mount && inv_meta_url_split(c->mount, &bare, &password, &why) < 0) {
		/* never the URL itself: it holds the secret */
		l->inv->has_secrets = true;
		return fail(l, ynode_get(n, "mount"), "%s.mount: the JuiceFS metadata URL is "
			    "refused: %s", path, why);
	}
	if (inv_cluster_secret(c, &i, &secret_name, &secret_value) || (password && *password))
		l->inv->has_secrets = true;
	return 0;
}

static int load_clusters(struct loader *l, const struct ynode *n)
{
	if (!n || ynode_is_null(n))
		return 0;
	if (expect_map(l, n, "clusters") < 0)
		return -1;
	struct inventory *inv = l->inv;
	inv->clusters = xcalloc(n->n, sizeof(*inv->clusters));
	for (size_t i = 0; i < n->n; i++) {
		inv->nclusters++;
		if (load_cluster(l, n->keys[i]->value, n->keys[i], n->items[i], &inv->clusters[i]) < 0)
			return -1;
	}
	return 0;
}

/* ---- hosts ---- */

static const char *const host_keys[] = {
	"type", "ssh", "cluster", "chips", "uv_groups", "env", "login_shell", "gpu_lock_dir",
	"max_jobs", "container_runtime", "container_image", "container_mounts", "notify_url",
	"busy_gpu_memory", "partitions", "cpu_partitions", "partitions_cpu", "account", "qos", "mem", "exclude",
	"annotations",
};
static const size_t host_keys_common = 14; /* the first fourteen are for plain hosts too */

/* The reference's other host types, with their keys (theseus/dispatch/config.py). */
static const char *const tpu_keys[] = {
	"type", "cluster", "zone", "project", "accelerator_type", "version", "spot",
	"preemptible", "network", "subnetwork", "service_account", "internal_ip", "metadata",
	"uv_groups", "env",
};
/* what the reference's dataclasses default to empty: loaded without, listed as missing */
static const char *const tpu_required[] = { "zone", "accelerator_type", "version" };
static const char *const tpu_bools[] = { "spot", "preemptible", "internal_ip" };
static const char *const tpu_maps[] = { "metadata", "env" };

static const char *const volcano_keys[] = {
	"type", "cluster", "namespace", "queue", "image", "pvc_name", "pvc_mount_path",
	"service_account", "node_selector", "tolerations", "chips", "num_nodes",
	"gpus_per_node", "gpu_resource_key", "cpu", "memory", "cpu_cpu", "cpu_memory",
	"shm_size", "priority_class", "kubeconfig", "context", "rdma", "rdma_per_node",
	"labels", "env", "uv_groups", "helper_resources",
};
static const char *const volcano_required[] = { "image", "pvc_name" };
static const char *const volcano_bools[] = { "rdma" };
static const char *const volcano_ints[] = { "num_nodes", "gpus_per_node", "rdma_per_node" };
static const char *const volcano_maps[] = { "node_selector", "labels", "env", "helper_resources" };

static int load_chips(struct loader *l, const struct ynode *n, const char *hpath, struct inv_host *h)
{
	_cleanup_free_ char *path = xasprintf("%s.chips", hpath);
	if (!n || ynode_is_null(n))
		return 0;
	if (expect_map(l, n, path) < 0)
		return -1;
	h->chips_set = true;
	h->chips = xcalloc(n->n, sizeof(*h->chips));
	for (size_t i = 0; i < n->n; i++) {
		_cleanup_free_ char *cpath = xasprintf("%s.%s", path, n->keys[i]->value);
		const char *chip = NULL;
		long count;
		char buf[64];
		if (get_chip_name(l, n->keys[i], path, &chip) < 0)
			return -1;
		for (size_t j = 0; j < h->nchips; j++)
			if (streq(h->chips[j].chip, chip))
				return fail(l, n->keys[i], "%s: chip '%s' is listed twice", path, chip);
		const struct ynode *v = n->items[i];
		if (v->kind != YN_SCALAR || !parse_long(v->value, 1, 1000000, &count))
			return fail(l, v, "%s: expected a whole number > 0, got %s", cpath,
				    shown(v, buf, sizeof(buf)));
		h->chips[h->nchips].chip = xstrdup(chip);
		h->chips[h->nchips].count = (int)count;
		h->nchips++;
	}
	return 0;
}

/* gpu_lock_dir and max_jobs: the leases and the queue of a plain host
 * (lib/sched/plain/plainjob.h); a SLURM host has its scheduler and ignores them. */
static int load_plain_queue(struct loader *l, const struct ynode *n, const char *hpath,
			    struct inv_host *h)
{
	_cleanup_free_ char *gpath = xasprintf("%s.gpu_lock_dir", hpath);
	_cleanup_free_ char *mpath = xasprintf("%s.max_jobs", hpath);
	const struct ynode *g = ynode_get(n, "gpu_lock_dir"), *m = ynode_get(n, "max_jobs");
	char buf[64];
	if (get_string(l, g, gpath, &h->gpu_lock_dir) < 0)
		return -1;
	if (h->gpu_lock_dir && (h->gpu_lock_dir[0] != '/' || strchr(h->gpu_lock_dir, '\n')))
		return fail(l, g, "%s: expected an absolute path on the host, got %s", gpath,
			    shown(g, buf, sizeof(buf)));
	if (m && !ynode_is_null(m)) {
		long v;
		if (m->kind != YN_SCALAR || !parse_long(m->value, 1, 1000000, &v))
			return fail(l, m, "%s: expected a whole number > 0, got %s", mpath,
				    shown(m, buf, sizeof(buf)));
		h->max_jobs = v;
	}
	/* busy_gpu_memory: MiB (a bare number), or with M or G */
	const struct ynode *b = ynode_get(n, "busy_gpu_memory");
	if (b && !ynode_is_null(b)) {
		_cleanup_free_ char *bpath = xasprintf("%s.busy_gpu_memory", hpath);
		const char *t = b->kind == YN_SCALAR ? b->value : "";
		size_t len = strlen(t);
		long v, scale = len && (t[len - 1] == 'G' || t[len - 1] == 'g') ? 1024 : 1;
		_cleanup_free_ char *num = xstrndup(t, len && strchr("MmGg", t[len - 1]) ? len - 1 : len);
		if (!parse_long(num, 1, 1048576 / scale, &v))
			return fail(l, b, "%s: expected MiB (a whole number > 0) or a size with M or G "
				    "(512M, 2G), got %s", bpath, shown(b, buf, sizeof(buf)));
		h->busy_gpu_mib = v * scale;
	}
	return 0;
}

static const char *const partition_keys[] = { "name", "default", "constraint" };

static int load_partitions(struct loader *l, const struct ynode *n, const char *hpath,
			   struct inv_host *h)
{
	_cleanup_free_ char *path = xasprintf("%s.partitions", hpath);
	if (!n || ynode_is_null(n))
		return 0;
	if (n->kind != YN_SEQ)
		return fail(l, n, "%s: expected a list of partition names or {name, default, "
			    "constraint}, got %s", path, ynode_kind_name(n));
	h->partitions = xcalloc(n->n, sizeof(*h->partitions));
	for (size_t i = 0; i < n->n; i++) {
		_cleanup_free_ char *ipath = xasprintf("%s[%zu]", path, i);
		const struct ynode *it = n->items[i], *name_node = it;
		struct inv_partition *p = &h->partitions[h->npartitions++];
		char buf[64];
		if (it->kind == YN_MAP) {
			if (check_keys(l, it, ipath, partition_keys, ARRAY_SIZE(partition_keys)) < 0)
				return -1;
			name_node = ynode_get(it, "name");
			if (!name_node)
				return fail(l, it, "%s: 'name' is required", ipath);
			_cleanup_free_ char *dpath = xasprintf("%s.default", ipath);
			_cleanup_free_ char *cpath = xasprintf("%s.constraint", ipath);
			if (get_bool(l, ynode_get(it, "default"), dpath, &p->is_default) < 0 ||
			    get_string(l, ynode_get(it, "constraint"), cpath, &p->constraint) < 0)
				return -1;
		}
		if (name_node->kind != YN_SCALAR || ynode_is_null(name_node) ||
		    !is_word(name_node->value, "._-+"))
			return fail(l, name_node, "%s: expected a partition name, got %s", ipath,
				    shown(name_node, buf, sizeof(buf)));
		p->name = xstrdup(name_node->value);
		for (size_t j = 0; j + 1 < h->npartitions; j++)
			if (streq(h->partitions[j].name, p->name))
				return fail(l, name_node, "%s: partition '%s' is listed twice", ipath,
					    p->name);
	}
	return 0;
}

static int load_annotations(struct loader *l, const struct ynode *n, const char *hpath,
			    struct inv_host *h)
{
	_cleanup_free_ char *path = xasprintf("%s.annotations", hpath);
	if (!n || ynode_is_null(n))
		return 0;
	if (expect_map(l, n, path) < 0)
		return -1;
	h->annotations = xcalloc(n->n, sizeof(*h->annotations));
	for (size_t i = 0; i < n->n; i++) {
		_cleanup_free_ char *apath = xasprintf("%s.%s", path, n->keys[i]->value);
		char *value = NULL;
		if (get_text(l, n->items[i], apath, &value) < 0)
			return -1;
		h->annotations[h->nannotations].key = xstrdup(n->keys[i]->value);
		h->annotations[h->nannotations].value = value ? value : xstrdup("");
		h->nannotations++;
	}
	return 0;
}

/* env: NAME: value, NAME a shell variable name. */
static int load_env(struct loader *l, const struct ynode *n, const char *hpath, struct inv_host *h)
{
	_cleanup_free_ char *path = xasprintf("%s.env", hpath);
	if (!n || ynode_is_null(n))
		return 0;
	if (expect_map(l, n, path) < 0)
		return -1;
	h->env = xcalloc(n->n, sizeof(*h->env));
	for (size_t i = 0; i < n->n; i++) {
		const char *k = n->keys[i]->value;
		_cleanup_free_ char *epath = xasprintf("%s.%s", path, k);
		bool ok = (isalpha((unsigned char)*k) || *k == '_');
		for (const char *p = k; ok && *p; p++)
			ok = isalnum((unsigned char)*p) || *p == '_';
		if (!ok)
			return fail(l, n->keys[i], "%s: '%s' is not an environment variable name "
				    "(letters, digits and '_', not starting with a digit)", path, k);
		char *value = NULL;
		if (get_string(l, n->items[i], epath, &value) < 0)
			return -1;
		h->env[h->nenv].key = xstrdup(k);
		h->env[h->nenv].value = value ? value : xstrdup("");
		h->nenv++;
	}
	return 0;
}

/* A mapping of scalars (the reference's metadata, labels, node_selector, ...). */
static int check_scalar_map(struct loader *l, const struct ynode *n, const char *path)
{
	if (!n || ynode_is_null(n))
		return 0;
	if (expect_map(l, n, path) < 0)
		return -1;
	for (size_t i = 0; i < n->n; i++)
		if (n->items[i]->kind != YN_SCALAR)
			return fail(l, n->items[i], "%s.%s: expected a string, got %s", path,
				    n->keys[i]->value, ynode_kind_name(n->items[i]));
	return 0;
}

static bool in_list(const char *key, const char *const *list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (streq(key, list[i]))
			return true;
	return false;
}

/* tpu and volcano hosts: their keys checked as the reference reads them, kept only as
 * far as dispatch lists them (type, cluster, chips, uv_groups, env). */
static int load_foreign_host(struct loader *l, const struct ynode *n, const char *path,
			     struct inv_host *h)
{
	bool tpu = h->type == INV_HOST_TPU;
	const char *const *keys = tpu ? tpu_keys : volcano_keys;
	size_t nkeys = tpu ? ARRAY_SIZE(tpu_keys) : ARRAY_SIZE(volcano_keys);
	const char *const *req = tpu ? tpu_required : volcano_required;
	size_t nreq = tpu ? ARRAY_SIZE(tpu_required) : ARRAY_SIZE(volcano_required);
	if (check_keys(l, n, path, keys, nkeys) < 0)
		return -1;
	for (size_t i = 0; i < nreq; i++) {
		_cleanup_free_ char *v = NULL;
		_cleanup_free_ char *kpath = xasprintf("%s.%s", path, req[i]);
		if (get_string(l, ynode_get(n, req[i]), kpath, &v) < 0)
			return -1;
		if (!v || !*v)
			strv_add(&h->missing, req[i]);
	}
	for (size_t i = 0; i < n->n; i++) {
		const char *k = n->keys[i]->value;
		const struct ynode *v = n->items[i];
		_cleanup_free_ char *kpath = xasprintf("%s.%s", path, k);
		bool b;
		char buf[64];
		long num;
		if (in_list(k, tpu ? tpu_bools : volcano_bools,
			    tpu ? ARRAY_SIZE(tpu_bools) : ARRAY_SIZE(volcano_bools))) {
			if (get_bool(l, v, kpath, &b) < 0)
				return -1;
		} else if (!tpu && in_list(k, volcano_ints, ARRAY_SIZE(volcano_ints))) {
			if (!ynode_is_null(v) && (v->kind != YN_SCALAR || !parse_long(v->value, 0, 1000000, &num)))
				return fail(l, v, "%s: expected a whole number, got %s", kpath,
					    shown(v, buf, sizeof(buf)));
		} else if (in_list(k, tpu ? tpu_maps : volcano_maps,
				   tpu ? ARRAY_SIZE(tpu_maps) : ARRAY_SIZE(volcano_maps))) {
			if (streq(k, "env") ? load_env(l, v, path, h) < 0 : check_scalar_map(l, v, kpath) < 0)
				return -1;
		} else if (streq(k, "tolerations")) {
			if (!ynode_is_null(v) && v->kind != YN_SEQ)
				return fail(l, v, "%s: expected a list, got %s", kpath, ynode_kind_name(v));
			for (size_t j = 0; !ynode_is_null(v) && j < v->n; j++) {
				_cleanup_free_ char *tpath = xasprintf("%s[%zu]", kpath, j);
				if (v->items[j]->kind != YN_MAP)
					return fail(l, v->items[j], "%s: expected a mapping, got %s", tpath,
						    ynode_kind_name(v->items[j]));
				if (check_scalar_map(l, v->items[j], tpath) < 0)
					return -1;
			}
		} else if (streq(k, "chips") || streq(k, "uv_groups") || streq(k, "type") ||
			   streq(k, "cluster")) {
			continue; /* read as for every host */
		} else if (v->kind != YN_SCALAR) {
			return fail(l, v, "%s: expected a string, got %s", kpath, ynode_kind_name(v));
		}
	}
	return 0;
}

/* container_runtime, container_image, container_mounts (lib/container/container.h). */
static int load_container(struct loader *l, const struct ynode *n, const char *path,
			  struct inv_host *h)
{
	_cleanup_free_ char *rpath = xasprintf("%s.container_runtime", path);
	_cleanup_free_ char *ipath = xasprintf("%s.container_image", path);
	_cleanup_free_ char *mpath = xasprintf("%s.container_mounts", path);
	const struct ynode *rt = ynode_get(n, "container_runtime");
	_cleanup_free_ char *name = NULL;
	char buf[64];
	if (get_string(l, rt, rpath, &name) < 0 ||
	    get_token(l, ynode_get(n, "container_image"), ipath, &h->container_image) < 0)
		return -1;
	if (name) {
		int r = container_runtime_from_name(name);
		if (r < 0) {
			const char *const names[] = { "none", "pyxis", "apptainer", "singularity",
						      "charliecloud", "podman-hpc", "podman", "docker" };
			const char *guess = suggest_word(name, names, ARRAY_SIZE(names));
			if (guess)
				return fail(l, rt, "%s: unknown container runtime %s (did you mean "
					    "'%s'?)", rpath, shown(rt, buf, sizeof(buf)), guess);
			return fail(l, rt, "%s: unknown container runtime %s: use %s", rpath,
				    shown(rt, buf, sizeof(buf)), container_runtime_names());
		}
		h->container_runtime = (enum container_runtime)r;
	}
	if (container_runtime_slurm_only(h->container_runtime) && h->type != INV_HOST_SLURM)
		return fail(l, rt, "%s: '%s' runs jobs through srun and needs 'type: slurm'; a plain "
			    "host runs containers with podman or docker", rpath, name);
	if (container_runtime_plain_only(h->container_runtime) && h->type == INV_HOST_SLURM)
		return fail(l, rt, "%s: '%s' is for plain hosts; on a SLURM host use pyxis, "
			    "apptainer, singularity, charliecloud or podman-hpc", rpath, name);
	if (h->container_image && h->container_runtime == CONTAINER_NONE)
		return fail(l, ynode_get(n, "container_image"), "%s: a default image needs a "
			    "runtime: set container_runtime too", ipath);
	const struct ynode *m = ynode_get(n, "container_mounts");
	if (!m || ynode_is_null(m))
		return 0;
	if (m->kind != YN_SCALAR && m->kind != YN_SEQ)
		return fail(l, m, "%s: expected SRC:DST[:ro] or a list of them, got %s", mpath,
			    ynode_kind_name(m));
	size_t count = m->kind == YN_SEQ ? m->n : 1;
	for (size_t i = 0; i < count; i++) {
		const struct ynode *it = m->kind == YN_SEQ ? m->items[i] : m;
		struct container_mount *mounts = NULL;
		size_t nm = 0;
		struct dp_error e;
		if (it->kind != YN_SCALAR || ynode_is_null(it))
			return fail(l, it, "%s: expected SRC:DST[:ro], got %s", mpath,
				    ynode_kind_name(it));
		if (container_mounts_parse(it->value, mpath, &mounts, &nm, &e) < 0)
			return fail(l, it, "%s", e.msg);
		container_mounts_free(mounts, nm);
		strv_add(&h->container_mounts, it->value);
	}
	return 0;
}

static int load_host_type(struct loader *l, const struct ynode *n, const char *path,
			  struct inv_host *h)
{
	static const char *const types[] = { "plain", "slurm", "tpu", "volcano" };
	char *type = NULL;
	_cleanup_free_ char *tpath = xasprintf("%s.type", path);
	if (get_string(l, n, tpath, &type) < 0)
		return -1;
	_cleanup_free_ char *t = type;
	if (!t || streq(t, "plain")) {
		h->type = INV_HOST_PLAIN;
		return 0;
	}
	if (streq(t, "slurm")) {
		h->type = INV_HOST_SLURM;
		return 0;
	}
	if (streq(t, "tpu")) {
		h->type = INV_HOST_TPU;
		return 0;
	}
	if (streq(t, "volcano")) {
		h->type = INV_HOST_VOLCANO;
		return 0;
	}
	const char *guess = suggest_word(t, types, ARRAY_SIZE(types));
	char buf[64];
	if (guess)
		return fail(l, n, "%s: unknown host type %s (did you mean '%s'?)", tpath,
			    shown(n, buf, sizeof(buf)), guess);
	return fail(l, n, "%s: unknown host type %s: use 'plain', 'slurm', 'tpu' or 'volcano'", tpath,
		    shown(n, buf, sizeof(buf)));
}

static int load_host(struct loader *l, const struct ynode *key, const struct ynode *n,
		     struct inv_host *h)
{
	const char *name = key->value;
	_cleanup_free_ char *path = xasprintf("hosts.%s", name);
	h->name = xstrdup(name);
	h->line = key->line;
	h->col = key->col;
	if (!is_word(name, "._-"))
		return fail(l, key, "%s: a host name is letters, digits, '.', '_' and '-', and does "
			    "not start with '-'", path);
	if (ynode_is_null(n))
		return fail(l, key, "%s: needs at least 'cluster'", path);
	if (expect_map(l, n, path) < 0)
		return -1;
	if (load_host_type(l, ynode_get(n, "type"), path, h) < 0)
		return -1;
	if (!inv_host_type_reachable(h->type)) {
		if (load_foreign_host(l, n, path, h) < 0)
			return -1;
	} else if (h->type == INV_HOST_PLAIN) {
		/* Say that a slurm key is misplaced rather than unknown. */
		for (size_t i = 0; i < n->n; i++)
			for (size_t j = host_keys_common; j < ARRAY_SIZE(host_keys); j++)
				if (streq(n->keys[i]->value, host_keys[j]))
					return fail(l, n->keys[i], "%s.%s: only for slurm hosts (add "
						    "'type: slurm', or remove it)", path, host_keys[j]);
		if (check_keys(l, n, path, host_keys, host_keys_common) < 0)
			return -1;
	} else if (check_keys(l, n, path, host_keys, ARRAY_SIZE(host_keys)) < 0) {
		return -1;
	}

	_cleanup_free_ char *spath = xasprintf("%s.ssh", path);
	if (inv_host_type_reachable(h->type) &&
	    get_token(l, ynode_get(n, "ssh"), spath, &h->ssh) < 0)
		return -1;
	if (!h->ssh && inv_host_type_reachable(h->type))
		h->ssh = xstrdup(name); /* tpu and volcano hosts have none */

	if (get_required(l, n, "cluster", path, &h->cluster_name) < 0)
		return -1;
	h->cluster = inventory_cluster(l->inv, h->cluster_name);
	if (!h->cluster) {
		const struct ynode *at = ynode_get(n, "cluster");
		struct inventory *inv = l->inv;
		if (inv->nclusters == 0)
			return fail(l, at, "%s.cluster: no cluster '%s': the inventory defines no "
				    "clusters", path, h->cluster_name);
		const char **names = xcalloc(inv->nclusters, sizeof(*names));
		for (size_t i = 0; i < inv->nclusters; i++)
			names[i] = inv->clusters[i].name;
		const char *guess = suggest_word(h->cluster_name, names, inv->nclusters);
		struct strbuf all = STRBUF_INIT;
		for (size_t i = 0; i < inv->nclusters; i++)
			strbuf_addf(&all, "%s%s", i ? ", " : "", names[i]);
		if (guess)
			fail(l, at, "%s.cluster: no cluster '%s' (did you mean '%s'?)", path,
			     h->cluster_name, guess);
		else
			fail(l, at, "%s.cluster: no cluster '%s' (clusters: %s)", path, h->cluster_name,
			     all.buf);
		strbuf_release(&all);
		free(names);
		return -1;
	}

	_cleanup_free_ char *upath = xasprintf("%s.uv_groups", path);
	_cleanup_free_ char *lpath = xasprintf("%s.login_shell", path);
	bool login_shell = true;
	if (load_chips(l, ynode_get(n, "chips"), path, h) < 0 ||
	    get_string_list(l, ynode_get(n, "uv_groups"), upath, &h->uv_groups) < 0)
		return -1;
	if (!inv_host_type_reachable(h->type))
		return 0;
	if (load_env(l, ynode_get(n, "env"), path, h) < 0 ||
	    get_bool(l, ynode_get(n, "login_shell"), lpath, &login_shell) < 0)
		return -1;
	h->no_login_shell = !login_shell;
	_cleanup_free_ char *npath = xasprintf("%s.notify_url", path);
	if (get_string(l, ynode_get(n, "notify_url"), npath, &h->notify_url) < 0)
		return -1;
	if (h->notify_url && !inv_notify_url_ok(h->notify_url))
		return fail(l, ynode_get(n, "notify_url"), "%s: " INV_NOTIFY_URL_WANT, npath);
	if (h->notify_url)
		l->inv->has_secrets = true;
	if (load_plain_queue(l, n, path, h) < 0 || load_container(l, n, path, h) < 0)
		return -1;
	if (h->type == INV_HOST_PLAIN)
		return 0;

	const struct ynode *cpu = ynode_get(n, "cpu_partitions"), *cpu2 = ynode_get(n, "partitions_cpu");
	if (cpu && cpu2)
		return fail(l, cpu2, "%s.partitions_cpu: the same as cpu_partitions, which is also set; "
			    "keep one", path);
	_cleanup_free_ char *cpath = xasprintf("%s.%s", path, cpu2 ? "partitions_cpu" : "cpu_partitions");
	_cleanup_free_ char *epath = xasprintf("%s.exclude", path);
	_cleanup_free_ char *apath = xasprintf("%s.account", path);
	_cleanup_free_ char *qpath = xasprintf("%s.qos", path);
	_cleanup_free_ char *mpath = xasprintf("%s.mem", path);
	if (load_partitions(l, ynode_get(n, "partitions"), path, h) < 0 ||
	    get_string_list(l, cpu ? cpu : cpu2, cpath, &h->cpu_partitions) < 0 ||
	    get_token(l, ynode_get(n, "account"), apath, &h->account) < 0 ||
	    get_token(l, ynode_get(n, "qos"), qpath, &h->qos) < 0 ||
	    get_string(l, ynode_get(n, "mem"), mpath, &h->mem) < 0 ||
	    get_string_list(l, ynode_get(n, "exclude"), epath, &h->exclude) < 0 ||
	    load_annotations(l, ynode_get(n, "annotations"), path, h) < 0)
		return -1;
	if (h->mem && !valid_mem(h->mem)) {
		char buf[64];
		return fail(l, ynode_get(n, "mem"), "%s: expected a size as sbatch --mem takes it "
			    "(a number with K, M, G or T, e.g. 64G), got %s", mpath,
			    shown(ynode_get(n, "mem"), buf, sizeof(buf)));
	}
	return 0;
}

static int load_hosts(struct loader *l, const struct ynode *n)
{
	if (!n || ynode_is_null(n))
		return 0;
	if (expect_map(l, n, "hosts") < 0)
		return -1;
	struct inventory *inv = l->inv;
	inv->hosts = xcalloc(n->n, sizeof(*inv->hosts));
	for (size_t i = 0; i < n->n; i++) {
		inv->nhosts++;
		if (load_host(l, n->keys[i], n->items[i], &inv->hosts[i]) < 0)
			return -1;
	}
	return 0;
}

static int load_priority(struct loader *l, const struct ynode *n)
{
	struct inventory *inv = l->inv;
	if (!n || ynode_is_null(n))
		return 0;
	if (n->kind != YN_SEQ)
		return fail(l, n, "priority: expected a list of host names, got %s", ynode_kind_name(n));
	for (size_t i = 0; i < n->n; i++) {
		const struct ynode *it = n->items[i];
		char buf[64];
		if (it->kind != YN_SCALAR || ynode_is_null(it))
			return fail(l, it, "priority[%zu]: expected a host name, got %s", i,
				    shown(it, buf, sizeof(buf)));
		if (strv_contains(inv->priority, it->value))
			return fail(l, it, "priority[%zu]: host '%s' is listed twice", i, it->value);
		if (!inventory_host(inv, it->value)) {
			const char **names = xcalloc(inv->nhosts + 1, sizeof(*names));
			for (size_t j = 0; j < inv->nhosts; j++)
				names[j] = inv->hosts[j].name;
			const char *guess = suggest_word(it->value, names, inv->nhosts);
			if (guess)
				fail(l, it, "priority[%zu]: no host '%s' in hosts (did you mean '%s'?)", i,
				     it->value, guess);
			else
				fail(l, it, "priority[%zu]: no host '%s' in hosts", i, it->value);
			free(names);
			return -1;
		}
		strv_add(&inv->priority, it->value);
	}
	return 0;
}

static const char *const top_keys[] = {
	"mount", "proxy", "priority", "gres_mapping", "clusters", "hosts",
};

static int load(struct loader *l, const struct ynode *root)
{
	if (!root)
		return 0;       /* an empty file: an empty inventory */
	if (root->kind != YN_MAP)
		return fail(l, root, "expected a mapping with 'clusters' and 'hosts' at the top, got %s",
			    ynode_kind_name(root));
	if (check_keys(l, root, NULL, top_keys, ARRAY_SIZE(top_keys)) < 0)
		return -1;
	struct inventory *inv = l->inv;
	if (get_string(l, ynode_get(root, "mount"), "mount", &inv->mount) < 0 ||
	    get_string(l, ynode_get(root, "proxy"), "proxy", &inv->proxy) < 0)
		return -1;
	/* The reference's notebook sync: not used here, but a metadata URL with a
	 * password is a credential in the file all the same. */
	if (inv->mount && inv_meta_url_secret(inv->mount))
		inv->has_secrets = true;
	if (inv->mount && inv->proxy) {
		const struct ynode *m = ynode_get(root, "mount"), *p = ynode_get(root, "proxy");
		const struct ynode *later = m->line > p->line || (m->line == p->line && m->col > p->col) ? m : p;
		return fail(l, later, "'mount' and 'proxy' are both set: they are mutually exclusive "
			    "(keep one)");
	}
	return load_gres_mapping(l, ynode_get(root, "gres_mapping")) < 0 ||
	       load_clusters(l, ynode_get(root, "clusters")) < 0 ||
	       load_hosts(l, ynode_get(root, "hosts")) < 0 ||
	       load_priority(l, ynode_get(root, "priority")) < 0 ? -1 : 0;
}

/* ---- OmegaConf interpolation ---- */

/* The column of byte off of a scalar's text, when it can be told (the scalar is on one
 * line from its start to there); else the scalar's own column. */
static int interp_col(const struct ynode *n, size_t off)
{
	if (memchr(n->value, '\n', off))
		return n->col;
	return n->col + (int)off + (n->quoted ? 1 : 0);
}

static int interp_fail(struct loader *l, const struct ynode *n, size_t off, const char *fmt, ...)
	_printf_(4, 5);
static int interp_fail(struct loader *l, const struct ynode *n, size_t off, const char *fmt, ...)
{
	char msg[600];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	for (char *p = msg; *p; p++)
		if (iscntrl((unsigned char)*p))
			*p = '?';
	int line = n->line;
	for (size_t i = 0; i < off; i++)
		if (n->value[i] == '\n')
			line++;
	return dp_err(l->err, DPE_INPUT, "%s:%d:%d: %s", l->file, line, interp_col(n, off), msg);
}

/* One scalar: ${oc.env:NAME} and ${oc.env:NAME,default} from the local environment, as
 * OmegaConf resolves them when the reference loads the file; \${ is a literal ${. Any
 * other ${...} is an error (never left as literal text). */
static int interp_scalar(struct loader *l, struct ynode *n)
{
	if (!strchr(n->value, '$') || !strstr(n->value, "${"))
		return 0;
	struct strbuf out = STRBUF_INIT;
	const char *v = n->value;
	for (size_t i = 0; v[i];) {
		if (v[i] == '\\' && v[i + 1] == '$' && v[i + 2] == '{') {
			strbuf_adds(&out, "${");
			i += 3;
			continue;
		}
		if (v[i] != '$' || v[i + 1] != '{') {
			strbuf_addch(&out, v[i++]);
			continue;
		}
		const char *body = v + i + 2;
		const char *end = strchr(body, '}');
		if (!end) {
			strbuf_release(&out);
			return interp_fail(l, n, i, "unterminated '${': OmegaConf interpolation needs "
					   "a closing '}'");
		}
		static const char prefix[] = "oc.env:";
		if (strncmp(body, prefix, strlen(prefix)) != 0) {
			int len = (int)(end - body);
			strbuf_release(&out);
			return interp_fail(l, n, i, "unsupported interpolation '${%.*s}': dispatch "
					   "resolves ${oc.env:NAME} and ${oc.env:NAME,default} only",
					   len > 60 ? 60 : len, body);
		}
		const char *name = body + strlen(prefix), *comma = memchr(name, ',', (size_t)(end - name));
		const char *name_end = comma ? comma : end;
		while (name < name_end && *name == ' ')
			name++;
		while (name_end > name && name_end[-1] == ' ')
			name_end--;
		_cleanup_free_ char *var = xstrndup(name, (size_t)(name_end - name));
		bool ok = *var && (isalpha((unsigned char)*var) || *var == '_');
		for (const char *p = var; ok && *p; p++)
			ok = isalnum((unsigned char)*p) || *p == '_';
		if (!ok) {
			strbuf_release(&out);
			return interp_fail(l, n, i, "${oc.env:...}: '%s' is not an environment variable "
					   "name", var);
		}
		const char *val = getenv(var);
		if (val) {
			strbuf_adds(&out, val);
		} else if (comma) {
			const char *d = comma + 1, *dend = end;
			while (d < dend && *d == ' ')
				d++;
			while (dend > d && dend[-1] == ' ')
				dend--;
			if (dend - d >= 2 && (*d == '\'' || *d == '"') && dend[-1] == *d) {
				d++;
				dend--;
			}
			strbuf_add(&out, d, (size_t)(dend - d));
		} else {
			strbuf_release(&out);
			return interp_fail(l, n, i, "${oc.env:%s}: environment variable '%s' is not set "
					   "(set it, or give a default: ${oc.env:%s,DEFAULT})", var, var, var);
		}
		i = (size_t)(end - v) + 1;
	}
	free(n->value);
	n->value = strbuf_detach(&out);
	return 0;
}

static int interpolate(struct loader *l, struct ynode *n)
{
	if (!n)
		return 0;
	if (n->kind == YN_SCALAR)
		return n->value ? interp_scalar(l, n) : 0;
	for (size_t i = 0; i < n->n; i++)
		if (interpolate(l, n->items[i]) < 0)
			return -1;
	return 0;
}

int inventory_parse(const char *name, const char *buf, size_t len, struct inventory **out,
		    struct dp_error *err)
{
	_cleanup_ynode_ struct ynode *root = NULL;
	*out = NULL;
	if (yaml_parse(name, buf, len, &root, err) < 0)
		return -1;
	struct inventory *inv = xcalloc(1, sizeof(*inv));
	inv->path = xstrdup(name);
	struct loader l = { .file = name, .err = err, .inv = inv };
	if (interpolate(&l, root) < 0 || load(&l, root) < 0) {
		inventory_free(inv);
		return -1;
	}
	*out = inv;
	return 0;
}

int inventory_load(const char *path, struct inventory **out, struct dp_error *err)
{
	size_t len;
	*out = NULL;
	_cleanup_free_ char *buf = read_file(path, &len);
	if (!buf)
		return dp_err(err, errno == ENOENT ? DPE_NOTFOUND : DPE_INPUT,
			      "cannot read inventory '%s': %s", path, strerror(errno));
	struct stat st;
	if (inventory_parse(path, buf, len, out, err) < 0)
		return -1;
	if (stat(path, &st) == 0)
		(*out)->file_mode = st.st_mode & 07777;
	return 0;
}

static void host_release(struct inv_host *h)
{
	free(h->name);
	free(h->ssh);
	free(h->cluster_name);
	for (size_t i = 0; i < h->nchips; i++)
		free(h->chips[i].chip);
	free(h->chips);
	strv_free(h->uv_groups);
	for (size_t i = 0; i < h->npartitions; i++) {
		free(h->partitions[i].name);
		free(h->partitions[i].constraint);
	}
	free(h->partitions);
	strv_free(h->cpu_partitions);
	free(h->account);
	free(h->qos);
	free(h->mem);
	free(h->gpu_lock_dir);
	free(h->notify_url);
	free(h->container_image);
	strv_free(h->container_mounts);
	strv_free(h->exclude);
	strv_free(h->missing);
	for (size_t i = 0; i < h->nenv; i++) {
		free(h->env[i].key);
		free(h->env[i].value);
	}
	free(h->env);
	for (size_t i = 0; i < h->nannotations; i++) {
		free(h->annotations[i].key);
		free(h->annotations[i].value);
	}
	free(h->annotations);
}

void inventory_free(struct inventory *inv)
{
	if (!inv)
		return;
	free(inv->path);
	free(inv->mount);
	free(inv->proxy);
	strv_free(inv->priority);
	for (size_t i = 0; i < inv->ngres_mapping; i++) {
		free(inv->gres_mapping[i].key);
		free(inv->gres_mapping[i].value);
	}
	free(inv->gres_mapping);
	for (size_t i = 0; i < inv->nclusters; i++) {
		struct inv_cluster *c = &inv->clusters[i];
		free(c->name);
		free(c->root);
		free(c->work);
		free(c->log);
		free(c->share);
		free(c->mount);
		free(c->cache_size);
		free(c->cache_dir);
		free(c->all_squash);
		free(c->data);
		free(c->checkpoints);
		free(c->results);
		free(c->status);
		free(c->uv_dir);
		free(c->wandb);
		free(c->wandb_entity);
		free(c->wandb_project);
		free(c->hf_token);
		free(c->notify_url);
	}
	free(inv->clusters);
	for (size_t i = 0; i < inv->nhosts; i++)
		host_release(&inv->hosts[i]);
	free(inv->hosts);
	free(inv);
}

const struct inv_host *inventory_host(const struct inventory *inv, const char *name)
{
	for (size_t i = 0; inv && name && i < inv->nhosts; i++)
		if (inv->hosts[i].name && streq(inv->hosts[i].name, name))
			return &inv->hosts[i];
	return NULL;
}

const char *inventory_ssh_destination(const struct inventory *inv, const char *name)
{
	const struct inv_host *h = inv ? inventory_host(inv, name) : NULL;
	return h && h->ssh ? h->ssh : name;
}

const struct inv_cluster *inventory_cluster(const struct inventory *inv, const char *name)
{
	for (size_t i = 0; inv && name && i < inv->nclusters; i++)
		if (inv->clusters[i].name && streq(inv->clusters[i].name, name))
			return &inv->clusters[i];
	return NULL;
}

const char *inventory_gres_type(const struct inventory *inv, const char *chip)
{
	const struct chip *c = chip_find(chip);
	for (size_t i = 0; inv && c && i < inv->ngres_mapping; i++)
		if (streq(inv->gres_mapping[i].key, c->name))
			return inv->gres_mapping[i].value;
	return NULL;
}

const char *inv_host_type_name(enum inv_host_type t)
{
	switch (t) {
	case INV_HOST_SLURM: return "slurm";
	case INV_HOST_TPU: return "tpu";
	case INV_HOST_VOLCANO: return "volcano";
	case INV_HOST_PLAIN: break;
	}
	return "plain";
}

bool inv_host_type_reachable(enum inv_host_type t)
{
	return t == INV_HOST_PLAIN || t == INV_HOST_SLURM;
}

bool inv_cluster_secret(const struct inv_cluster *c, size_t *i, const char **name,
			const char **value)
{
	const struct {
		const char *name;
		const char *value;
	} all[] = {
		{ "WANDB_API_KEY", c ? c->wandb : NULL },
		{ "WANDB_ENTITY", c ? c->wandb_entity : NULL },
		{ "WANDB_PROJECT", c ? c->wandb_project : NULL },
		{ "HF_TOKEN", c ? c->hf_token : NULL },
	};
	for (; *i < ARRAY_SIZE(all); (*i)++)
		if (all[*i].value) {
			*name = all[*i].name;
			*value = all[*i].value;
			(*i)++;
			return true;
		}
	return false;
}

bool inv_notify_url_ok(const char *url)
{
	size_t n = strlen(url);
	if (strncmp(url, "https://", 8) != 0 && strncmp(url, "http://", 7) != 0)
		return false;
	if (n > 2048 || n < 9)
		return false;
	for (const char *p = url; *p; p++)
		if ((unsigned char)*p <= ' ' || (unsigned char)*p >= 0x7f || strchr("\"\\'`$<>", *p))
			return false;
	return true;
}

const char *inv_notify_url(const struct inv_host *h)
{
	if (h->notify_url)
		return h->notify_url;
	return h->cluster && h->cluster->notify_url ? h->cluster->notify_url : NULL;
}

char *inv_cluster_dir(const struct inv_cluster *c, const char *which)
{
	const char *set = streq(which, "data") ? c->data
			: streq(which, "checkpoints") ? c->checkpoints
			: streq(which, "results") ? c->results : c->status;
	return set ? xstrdup(set) : xasprintf("%s/%s", c->root, which);
}

static int hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0'
	     : c >= 'a' && c <= 'f' ? c - 'a' + 10
	     : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* s[0..n) with its %XX escapes decoded (as Go's url package reads a password);
 * NULL when a %00 would cut it short. */
static char *percent_decode(const char *s, size_t n)
{
	struct strbuf sb = STRBUF_INIT;
	strbuf_adds(&sb, "");
	for (size_t i = 0; i < n; i++) {
		int hi, lo;
		if (s[i] == '%' && i + 2 < n && (hi = hexval(s[i + 1])) >= 0 &&
		    (lo = hexval(s[i + 2])) >= 0) {
			if (hi == 0 && lo == 0) {
				strbuf_release(&sb);
				return NULL;
			}
			strbuf_addch(&sb, (char)(hi * 16 + lo));
			i += 2;
		} else {
			strbuf_addch(&sb, s[i]);
		}
	}
	return strbuf_detach(&sb);
}

/* A query parameter's name that may carry a credential (password=, token=,
 * secret_key=, ...); allowCleartextPasswords=true and the like (MySQL's switches)
 * do not. */
static bool secret_param(const char *name, size_t n)
{
	_cleanup_free_ char *raw = percent_decode(name, n);
	if (!raw)
		return true;
	for (char *p = raw; *p; p++)
		*p = (char)tolower((unsigned char)*p);
	if (startswith(raw, "allow"))
		return false;
	static const char *const parts[] = { "pass", "pwd", "secret", "token", "credential", "auth" };
	for (size_t i = 0; i < ARRAY_SIZE(parts); i++)
		if (strstr(raw, parts[i]))
			return true;
	static const char *const keys[] = { "key", "apikey", "api_key", "api-key", "access_key",
					    "access-key", "accesskey" };
	for (size_t i = 0; i < ARRAY_SIZE(keys); i++)
		if (streq(raw, keys[i]))
			return true;
	return false;
}

int inv_meta_url_split(const char *url, char **bare, char **password, char **why)
{
	*bare = *password = *why = NULL;
	const char *scheme_end = strstr(url, "://");
	const char *rest = scheme_end ? scheme_end + 3 : url; /* none: juicefs reads redis:// */
	/* The userinfo ends at the last '@' (a password may hold '@'), and holds no '/',
	 * '?' or '#': Go's URL parser (juicefs's) would end the host there, and the
	 * password would stay on the command line. */
	const char *at = strrchr(rest, '@');
	const char *after = rest;
	const char *user_end = rest;
	if (at) {
		size_t ulen = (size_t)(at - rest);
		if (strcspn(rest, "/?#") < ulen) {
			*why = xstrdup("it has an '@' after a '/', '?' or '#': dispatch cannot tell "
				       "the password from the rest, and would leave it on juicefs's "
				       "command line (percent-encode '@', '/', '?' and '#' in the user "
				       "and password: %40, %2F, %3F, %23)");
			return -1;
		}
		const char *colon = memchr(rest, ':', ulen);
		user_end = colon ? colon : at;
		if (colon && colon + 1 < at) {
			*password = percent_decode(colon + 1, (size_t)(at - colon - 1));
			if (!*password) {
				*why = xstrdup("its password holds %00, which no environment variable can "
					       "carry");
				return -1;
			}
		}
		after = at + 1;
	}
	/* The query: a parameter that can carry a credential cannot go to META_PASSWORD. */
	const char *q = strchr(after, '?');
	for (const char *p = q ? q + 1 : NULL; p && *p && *p != '#';) {
		size_t len = strcspn(p, "&;#");
		size_t nlen = strcspn(p, "=&;#");
		if (nlen > len)
			nlen = len;
		if (secret_param(p, nlen)) {
			free(*password);
			*password = NULL;
			char name[48];
			snprintf(name, sizeof(name), "%.*s", (int)(nlen < 40 ? nlen : 40), p);
			for (char *c = name; *c; c++)
				if (iscntrl((unsigned char)*c) || *c == '\'')
					*c = '?';
			*why = xasprintf("its query parameter '%s' may carry a secret, which dispatch "
					 "cannot keep off juicefs's command line: give the password in "
					 "the URL's user part instead (redis://:PASSWORD@host:6379/0), "
					 "which goes to juicefs in META_PASSWORD", name);
			return -1;
		}
		p += len;
		if (*p == '&' || *p == ';')
			p++;
	}
	struct strbuf sb = STRBUF_INIT;
	strbuf_add(&sb, url, (size_t)(rest - url));
	if (at && user_end > rest) {
		strbuf_add(&sb, rest, (size_t)(user_end - rest));
		strbuf_addch(&sb, '@');
	}
	strbuf_adds(&sb, after);
	*bare = strbuf_detach(&sb);
	return 0;
}

bool inv_meta_url_secret(const char *url)
{
	_cleanup_free_ char *bare = NULL, *password = NULL, *why = NULL;
	return inv_meta_url_split(url, &bare, &password, &why) < 0 || (password && *password);
}

bool inventory_secrets_exposed(const struct inventory *inv)
{
	return inv && inv->has_secrets && (inv->file_mode & 077);
}
