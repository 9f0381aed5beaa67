/*
 * tests/testbed/spank/pyxis-standin.c: a test-only stand-in for NVIDIA's Pyxis, a
 * SPANK plugin of the test bed's own (Linux only, never part of dispatch). Debian
 * packages neither Pyxis nor enroot, so the test cluster loads this instead
 * (parts/40-containers builds it against libslurm-dev's spank.h; the cluster's
 * PlugStackConfig names it, see tests/testbed/README.md).
 *
 * It registers Pyxis's option names, so srun and sbatch accept them as with Pyxis
 * (and SLURM passes them from sbatch to the steps, and from srun to every node), and
 * in each task whose step has --container-image it enters the image the way enroot
 * does, in spirit:
 *
 *   - a mount namespace of the task's own (nothing leaks to the node);
 *   - the image: a squashfs file (loop-mounted, read-only) or a directory, under a
 *     tmpfs overlay, so the container's root is writable and private to the task;
 *   - /proc, /sys, /dev, /etc/hosts and /etc/resolv.conf from the node, the user's
 *     home with --container-mount-home, and each --container-mounts entry
 *     (SRC:DST[:FLAGS], FLAGS joined by '+', 'ro' honoured), DST created if missing;
 *   - the marker enroot leaves in every container: a file '/.lock' at the root
 *     (enroot's rootfs lock; 'enroot list' finds containers by /proc/PID/root/.lock);
 *   - chroot into it; the task then starts in --container-workdir (if given).
 *
 * Only the steps srun starts enter the image: options given to sbatch (or #SBATCH) are
 * accepted there and reach every srun of the job through the environment SLURM sets
 * (SLURM_SPANK__SLURM_SPANK_OPTION_pyxis_*); the batch script itself runs on the host.
 *
 * The task keeps the user's uid: --container-remap-root is accepted and ignored (as
 * are --container-name, --container-save, --container-env, --container-writable,
 * --container-readonly and --[no-]container-entrypoint).
 *
 * Switch for tests: a task on a node named in the job's environment variable
 * DISPATCH_TESTBED_PYXIS_OFF (node names separated by spaces or commas) is left on
 * the host, as on a node where Pyxis is not installed (the options are still accepted).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <slurm/slurm.h>
#include <slurm/spank.h>

SPANK_PLUGIN(pyxis, 1)

#define STAGE "/mnt"
#define MAX_MOUNTS 64

static char *image, *workdir;
static char *mounts[MAX_MOUNTS];
static int n_mounts, mount_home = -1, remap_root = -1;
static int entered; /* this task is inside the image */

static int opt_image(int val, const char *arg, int remote);
static int opt_mounts(int val, const char *arg, int remote);
static int opt_workdir(int val, const char *arg, int remote);
static int opt_ignored(int val, const char *arg, int remote);
static int opt_mount_home(int val, const char *arg, int remote);
static int opt_remap_root(int val, const char *arg, int remote);

/* Registered by slurm_spank_init: an exported spank_options table would not reach
 * sbatch and salloc (spank.h). */
static struct spank_option options[] = {
	{ "container-image", "[USER@][REGISTRY#]IMAGE[:TAG]|PATH",
	  "[pyxis] the image to use for the container filesystem (test bed stand-in: a squashfs file "
	  "or a directory)", 1, 0, opt_image },
	{ "container-mounts", "SRC:DST[:FLAGS][,SRC:DST...]",
	  "[pyxis] bind mount[s] inside the container. Mount flags are separated with \"+\", e.g. \"ro+rprivate\"",
	  1, 0, opt_mounts },
	{ "container-workdir", "PATH", "[pyxis] working directory inside the container", 1, 0, opt_workdir },
	{ "container-name", "NAME", "[pyxis] name to use for saving and loading the container (ignored)", 1, 0,
	  opt_ignored },
	{ "container-save", "PATH", "[pyxis] save the container state to a squashfs file (ignored)", 1, 0,
	  opt_ignored },
	{ "container-mount-home", NULL, "[pyxis] bind mount the user's home directory", 0, 1, opt_mount_home },
	{ "no-container-mount-home", NULL, "[pyxis] do not bind mount the user's home directory (default)", 0, 0,
	  opt_mount_home },
	{ "container-remap-root", NULL, "[pyxis] ask to be remapped to root inside the container (ignored)", 0, 1,
	  opt_remap_root },
	{ "no-container-remap-root", NULL, "[pyxis] do not remap to root inside the container", 0, 0,
	  opt_remap_root },
	{ "container-entrypoint", NULL, "[pyxis] execute the entrypoint from the container image (ignored)", 0, 1,
	  opt_ignored },
	{ "no-container-entrypoint", NULL, "[pyxis] do not execute the entrypoint from the container image", 0, 0,
	  opt_ignored },
	{ "container-env", "NAME[,NAME...]",
	  "[pyxis] names of environment variables to override with the host environment (ignored)", 1, 0,
	  opt_ignored },
	{ "container-writable", NULL, "[pyxis] make the container filesystem writable (default here)", 0, 1,
	  opt_ignored },
	{ "container-readonly", NULL, "[pyxis] make the container filesystem read-only (ignored)", 0, 0,
	  opt_ignored },
	SPANK_OPTIONS_TABLE_END
};

/* SLURM may call an option's callback twice with the same value. */
static int set_once(char **slot, const char *name, const char *arg)
{
	if (arg == NULL || *arg == '\0') {
		slurm_error("pyxis: --%s: argument required", name);
		return -1;
	}
	if (*slot != NULL) {
		if (strcmp(*slot, arg) == 0)
			return 0;
		slurm_error("pyxis: --%s specified multiple times", name);
		return -1;
	}
	*slot = strdup(arg);
	return *slot == NULL ? -1 : 0;
}

static int opt_image(int val, const char *arg, int remote)
{
	(void)val, (void)remote;
	return set_once(&image, "container-image", arg);
}

static int opt_workdir(int val, const char *arg, int remote)
{
	(void)val, (void)remote;
	if (set_once(&workdir, "container-workdir", arg) < 0)
		return -1;
	if (workdir[0] != '/') {
		slurm_error("pyxis: --container-workdir: '%s' is not an absolute path", workdir);
		return -1;
	}
	return 0;
}

static int opt_ignored(int val, const char *arg, int remote)
{
	(void)val, (void)arg, (void)remote;
	return 0;
}

static int opt_flag(int *slot, int val, const char *what)
{
	if (*slot != -1 && *slot != val) {
		slurm_error("pyxis: both --container-%s and --no-container-%s were specified", what, what);
		return -1;
	}
	*slot = val;
	return 0;
}

static int opt_mount_home(int val, const char *arg, int remote)
{
	(void)arg, (void)remote;
	return opt_flag(&mount_home, val, "mount-home");
}

static int opt_remap_root(int val, const char *arg, int remote)
{
	(void)arg, (void)remote;
	return opt_flag(&remap_root, val, "remap-root");
}

/* One entry SRC[:DST[:FLAGS]], checked as Pyxis does; kept whole, split when mounted. */
static int add_mount(const char *entry)
{
	const char *colon = strchr(entry, ':');

	if (entry[0] == '\0' || (colon != NULL && (colon == entry || colon[1] == '\0' || colon[1] == ':'))) {
		slurm_error("pyxis: --container-mounts: invalid format: %s", entry);
		return -1;
	}
	for (int i = 0; i < n_mounts; i++)
		if (strcmp(mounts[i], entry) == 0)
			return 0;
	if (n_mounts == MAX_MOUNTS) {
		slurm_error("pyxis: --container-mounts: more than %d entries", MAX_MOUNTS);
		return -1;
	}
	mounts[n_mounts] = strdup(entry);
	if (mounts[n_mounts] == NULL)
		return -1;
	n_mounts++;
	return 0;
}

static int opt_mounts(int val, const char *arg, int remote)
{
	char *copy, *rest, *entry;
	int rc = 0;

	(void)val, (void)remote;
	if (arg == NULL || *arg == '\0') {
		slurm_error("pyxis: --container-mounts: argument required");
		return -1;
	}
	copy = strdup(arg);
	if (copy == NULL)
		return -1;
	rest = copy;
	while (rc == 0 && (entry = strsep(&rest, ",")) != NULL)
		rc = add_mount(entry);
	free(copy);
	return rc;
}

/* mkdir -p PATH (a directory) or, with as_file, its parents and an empty file. */
static int make_path(const char *path, int as_file)
{
	char buf[4096];
	size_t len = strlen(path);
	int fd;

	if (len >= sizeof(buf))
		return -1;
	memcpy(buf, path, len + 1);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0755) < 0 && errno != EEXIST)
			return -1;
		*p = '/';
	}
	if (!as_file)
		return mkdir(buf, 0755) < 0 && errno != EEXIST ? -1 : 0;
	fd = open(buf, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return errno == EISDIR ? 0 : -1;
	close(fd);
	return 0;
}

/* SRC bound onto DST under the container's root, DST created like SRC (a file or a
 * directory); read-only when ro. */
static int bind_in(const char *src, const char *dst, int ro)
{
	char target[4096];
	struct stat st;

	if (stat(src, &st) < 0) {
		slurm_error("pyxis: mount source '%s': %s", src, strerror(errno));
		return -1;
	}
	if (snprintf(target, sizeof(target), STAGE "/root%s", dst) >= (int)sizeof(target))
		return -1;
	if (make_path(target, !S_ISDIR(st.st_mode)) < 0) {
		slurm_error("pyxis: cannot create mount point '%s' in the container: %s", dst, strerror(errno));
		return -1;
	}
	if (mount(src, target, NULL, MS_BIND | MS_REC, NULL) < 0) {
		slurm_error("pyxis: cannot mount '%s' on '%s': %s", src, dst, strerror(errno));
		return -1;
	}
	if (ro && mount(NULL, target, NULL, MS_BIND | MS_REMOUNT | MS_RDONLY, NULL) < 0) {
		slurm_error("pyxis: cannot make '%s' read-only: %s", dst, strerror(errno));
		return -1;
	}
	return 0;
}

static int bind_entry(const char *entry)
{
	char *copy = strdup(entry), *rest, *src, *dst, *flags;
	int ro = 0, rc;

	if (copy == NULL)
		return -1;
	rest = copy;
	src = strsep(&rest, ":");
	dst = rest != NULL ? strsep(&rest, ":") : src;
	flags = rest;
	for (char *f; flags != NULL && (f = strsep(&flags, "+")) != NULL;)
		ro |= strcmp(f, "ro") == 0;
	rc = bind_in(src, dst, ro);
	free(copy);
	return rc;
}

/* The image file loop-mounted read-only on DIR, by util-linux's mount (in this
 * mount namespace: the child inherits it). */
static int mount_squashfs(const char *file, const char *dir)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (pid == 0) {
		execl("/bin/mount", "mount", "-t", "squashfs", "-o", "loop,ro", file, dir, (char *)NULL);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		slurm_error("pyxis: cannot mount the image '%s' (squashfs, loop)", file);
		return -1;
	}
	return 0;
}

/* The off switch: this node is named in DISPATCH_TESTBED_PYXIS_OFF. */
static int switched_off(spank_t sp, const char *node)
{
	char val[1024], *rest = val, *name;

	if (spank_getenv(sp, "DISPATCH_TESTBED_PYXIS_OFF", val, sizeof(val)) != ESPANK_SUCCESS)
		return 0;
	while ((name = strsep(&rest, " ,")) != NULL)
		if (strcmp(name, node) == 0)
			return 1;
	return 0;
}

static int enter_image(spank_t sp)
{
	struct stat st;
	char home[4096];
	int fd;

	if (stat(image, &st) < 0) {
		slurm_error("pyxis: image '%s': %s (the stand-in takes a squashfs file or a directory)", image,
			    strerror(errno));
		return -1;
	}
	if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) {
		slurm_error("pyxis: cannot make a mount namespace: %s", strerror(errno));
		return -1;
	}
	if (mount("pyxis-standin", STAGE, "tmpfs", 0, "mode=755") < 0 || mkdir(STAGE "/lower", 0755) < 0 ||
	    mkdir(STAGE "/upper", 0755) < 0 || mkdir(STAGE "/work", 0755) < 0 || mkdir(STAGE "/root", 0755) < 0) {
		slurm_error("pyxis: cannot set up " STAGE ": %s", strerror(errno));
		return -1;
	}
	if (S_ISDIR(st.st_mode)) {
		if (mount(image, STAGE "/lower", NULL, MS_BIND | MS_REC, NULL) < 0) {
			slurm_error("pyxis: cannot mount the image '%s': %s", image, strerror(errno));
			return -1;
		}
	} else if (mount_squashfs(image, STAGE "/lower") < 0) {
		return -1;
	}
	if (mount("overlay", STAGE "/root", "overlay", 0,
		  "lowerdir=" STAGE "/lower,upperdir=" STAGE "/upper,workdir=" STAGE "/work") < 0) {
		slurm_error("pyxis: cannot mount the container's root: %s", strerror(errno));
		return -1;
	}
	fd = open(STAGE "/root/.lock", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (fd >= 0)
		close(fd);
	if (bind_in("/proc", "/proc", 0) < 0 || bind_in("/sys", "/sys", 0) < 0 || bind_in("/dev", "/dev", 0) < 0 ||
	    bind_in("/etc/hosts", "/etc/hosts", 1) < 0 || bind_in("/etc/resolv.conf", "/etc/resolv.conf", 1) < 0)
		return -1;
	if (mount_home == 1 && spank_getenv(sp, "HOME", home, sizeof(home)) == ESPANK_SUCCESS &&
	    bind_in(home, home, 0) < 0)
		return -1;
	for (int i = 0; i < n_mounts; i++)
		if (bind_entry(mounts[i]) < 0)
			return -1;
	if (chroot(STAGE "/root") < 0 || chdir("/") < 0) {
		slurm_error("pyxis: cannot enter the container: %s", strerror(errno));
		return -1;
	}
	return 0;
}

/* In every context (srun, sbatch and salloc, slurmstepd): the options. */
int slurm_spank_init(spank_t sp, int ac, char **av)
{
	spank_err_t rc;

	(void)ac, (void)av;
	for (int i = 0; options[i].name != NULL; i++) {
		rc = spank_option_register(sp, &options[i]);
		if (rc != ESPANK_SUCCESS) {
			slurm_error("pyxis: cannot register --%s: %s", options[i].name, spank_strerror(rc));
			return -1;
		}
	}
	return 0;
}

/* As root, in each task's process before it becomes the user: into the image. */
int slurm_spank_task_init_privileged(spank_t sp, int ac, char **av)
{
	char node[256];
	uint32_t step;

	(void)ac, (void)av;
	if (image == NULL)
		return 0;
	/* Only srun's steps: the batch script (options given to sbatch reach the job's
	 * sruns through the environment SLURM sets) and the extern step stay on the host. */
	if (spank_get_item(sp, S_JOB_STEPID, &step) != ESPANK_SUCCESS || step == SLURM_BATCH_SCRIPT ||
	    step == SLURM_EXTERN_CONT)
		return 0;
	if (gethostname(node, sizeof(node)) < 0)
		node[0] = '\0';
	node[sizeof(node) - 1] = '\0';
	if (switched_off(sp, node))
		return 0;
	if (enter_image(sp) < 0)
		return -1;
	entered = 1;
	return 0;
}

/* As the user, just before the task's program runs: its working directory. */
int slurm_spank_task_init(spank_t sp, int ac, char **av)
{
	(void)sp, (void)ac, (void)av;
	if (!entered || workdir == NULL)
		return 0;
	if (chdir(workdir) < 0) {
		slurm_error("pyxis: --container-workdir '%s': %s", workdir, strerror(errno));
		return -1;
	}
	return 0;
}

int slurm_spank_exit(spank_t sp, int ac, char **av)
{
	(void)sp, (void)ac, (void)av;
	free(image);
	free(workdir);
	for (int i = 0; i < n_mounts; i++)
		free(mounts[i]);
	image = workdir = NULL;
	n_mounts = 0;
	return 0;
}
