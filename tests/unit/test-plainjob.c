/* SPDX-License-Identifier: MIT */
/* lib/plainjob: the launch, status and cancel commands run for real in a local sh
 * (as the plain host's shell would run them): the job outlives the launching shell
 * in a process group of its own, status reads RUNNING then COMPLETED or FAILED with
 * the exit code, cancel gives CANCELLED (143, signal 15); the launcher records the
 * directory the job starts in (STAGE/workdir); GPU leases with a fake nvidia-smi. */
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "sched/plain/plainjob.h"
#include "sched/slurm/slurm_queue.h"
#include "base/shquote.h"
#include "unit.h"

static char *run_sh(const char *script, int *status)
{
	char path[] = "/tmp/dispatch-test-plainjob-sh.XXXXXX";
	int fd = mkstemp(path);
	if (fd < 0 || write(fd, script, strlen(script)) != (ssize_t)strlen(script))
		exit(1);
	close(fd);
	char *cmd = xasprintf("sh %s", path);
	char *out = unit_output(cmd, status);
	unlink(path);
	free(cmd);
	return out;
}

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	fputs(text, f);
	fclose(f);
}

/* Launches a job with this command, asking for gpus GPUs; returns its group id. */
static long launch_gpus(const char *dir, const char *id, const char *command, long gpus)
{
	char *stage = xasprintf("%s/%s", dir, id);
	mkdir(stage, 0700);
	char *boot = xasprintf("%s/bootstrap.sh", stage);
	write_text(boot, command);
	char *log = xasprintf("%s/%s.out", dir, id);
	struct strbuf sb = STRBUF_INIT;
	char *locks = xasprintf("%s/locks", dir);
	struct plainjob_lease lease = { .lock_dir = locks, .gpus = gpus };
	plainjob_launch_command(&sb, stage, dir, log, id, &lease);
	free(locks);
	int st;
	char *out = run_sh(sb.buf, &st);
	CHECK_INT(st, 0);
	long pid = plainjob_parse_pid(out);
	CHECK(pid > 1);
	free(out);
	/* the directory it started in, for dispatch shell */
	char *rec = xasprintf("%s/workdir", stage);
	size_t len;
	char *wd = read_file(rec, &len);
	char *want = xasprintf("%s\n", dir);
	CHECK_STR(wd, want);
	free(want);
	free(wd);
	free(rec);
	strbuf_release(&sb);
	free(stage);
	free(boot);
	free(log);
	return pid;
}

static long launch(const char *dir, const char *id, const char *command)
{
	return launch_gpus(dir, id, command, 0);
}

/* What job id wrote to its log (caller frees). */
static char *job_log(const char *dir, const char *id)
{
	char *path = xasprintf("%s/%s.out", dir, id);
	size_t len;
	char *text = read_file(path, &len);
	free(path);
	return text;
}

static struct plainjob_status *query(const char *dir, const char *id, long pid)
{
	char *stage = xasprintf("%s/%s", dir, id);
	struct plainjob_ref ref = { .id = id, .stage_dir = stage, .pgid = pid };
	struct strbuf sb = STRBUF_INIT;
	plainjob_status_command(&sb, &ref, 1);
	int st;
	char *out = run_sh(sb.buf, &st);
	struct plainjob_status *res = NULL;
	size_t n = plainjob_parse_status(out, &res);
	CHECK_INT(n, 1);
	CHECK(n == 1 && streq(res[0].id, id));
	if (n != 1) { /* the callers read res[0]: say what the status script printed, stop */
		printf("# status of %s: %s\n", id, out);
		fflush(stdout);
		exit(1);
	}
	free(out);
	free(stage);
	strbuf_release(&sb);
	return res;
}

/* Waits (bounded) until the job has an exit status file. */
static void wait_end(const char *dir, const char *id)
{
	char *p = xasprintf("%s/%s/exit_status", dir, id);
	struct stat stt;
	for (int i = 0; i < 300 && stat(p, &stt) != 0; i++)
		usleep(20000);
	free(p);
}

static void test_lifecycle(const char *dir)
{
	/* exits 3 once told to (a file appears) */
	char *gate = xasprintf("%s/gate", dir);
	char *cmd = xasprintf("while [ ! -f '%s' ]; do sleep 0.05; done\necho \"id=$DISPATCH_JOB_ID\"\nexit 3\n", gate);
	long pid = launch(dir, "j1", cmd);
	struct plainjob_status *s = query(dir, "j1", pid);
	CHECK_STR(s[0].state, "RUNNING");
	CHECK_INT(s[0].exit_code, -1);
	plainjob_status_free(s, 1);
	/* a job launched while another's record is live keeps its stderr in its log */
	long pid2 = launch(dir, "j1e", "echo to-stderr >&2\n");
	wait_end(dir, "j1e");
	s = query(dir, "j1e", pid2);
	CHECK_STR(s[0].state, "COMPLETED");
	plainjob_status_free(s, 1);
	char *elog = job_log(dir, "j1e");
	CHECK_STR(elog, "to-stderr\n");
	free(elog);
	write_text(gate, "");
	wait_end(dir, "j1");
	s = query(dir, "j1", pid);
	CHECK_STR(s[0].state, "FAILED");
	CHECK_INT(s[0].exit_code, 3);
	CHECK(s[0].elapsed >= 0);
	plainjob_status_free(s, 1);
	char *log = job_log(dir, "j1");
	CHECK_CONTAINS(log, "id=j1");
	free(log);
	free(cmd);
	free(gate);

	pid = launch(dir, "j2", "exit 0\n");
	wait_end(dir, "j2");
	s = query(dir, "j2", pid);
	CHECK_STR(s[0].state, "COMPLETED");
	CHECK_INT(s[0].exit_code, 0);
	plainjob_status_free(s, 1);
}

/* The file FILE of job id's stage dir, once it exists (bounded: 10 s), or NULL. */
static char *stage_file(const char *dir, const char *id, const char *file)
{
	char *p = xasprintf("%s/%s/%s", dir, id, file);
	struct stat st;
	for (int i = 0; i < 500 && stat(p, &st) != 0; i++)
		usleep(20000);
	size_t len;
	char *text = read_file(p, &len);
	free(p);
	return text;
}

/* The GPU leases, run for real with a fake nvidia-smi of 2 GPUs on PATH: two
 * --gpus 1 jobs get different GPUs, a third waits with the reason, then gets the
 * GPU of the job that ended. */
static void test_gpu_lock(const char *dir)
{
	char *bin = xasprintf("%s/bin", dir), *smi = xasprintf("%s/bin/nvidia-smi", dir);
	mkdir(bin, 0700);
	write_text(smi, "#!/bin/sh\ncase \"$*\" in *--query-gpu=*)\n"
			"\tprintf 'GPU-t0, Fake A100, 81920\\nGPU-t1, Fake A100, 81920\\n' ;;\nesac\n");
	chmod(smi, 0755);
	char *old_path = xstrdup(getenv("PATH"));
	char *path = xasprintf("%s:%s", bin, old_path);
	setenv("PATH", path, 1);

	const char *ids[] = { "ga", "gb", "gc" };
	long pids[3];
	for (int i = 0; i < 3; i++) {
		char *cmd = xasprintf("while [ ! -f '%s/go-%s' ]; do sleep 0.05; done\n"
				      "echo \"cvd=$CUDA_VISIBLE_DEVICES\"\n", dir, ids[i]);
		pids[i] = launch_gpus(dir, ids[i], cmd, 1);
		free(cmd);
	}
	char *la = stage_file(dir, "ga", "lease"), *lb = stage_file(dir, "gb", "lease");
	const char *ia = la ? strchr(la, ' ') : NULL, *ib = lb ? strchr(lb, ' ') : NULL;
	CHECK(ia && ib && ((streq(ia, " 0\n") && streq(ib, " 1\n")) ||
			   (streq(ia, " 1\n") && streq(ib, " 0\n"))));
	char *pc = stage_file(dir, "gc", "pending");
	CHECK_STR(pc, "waiting for 1 GPU: 2 of 2 held (by a job of yours and one of yours)\n");
	char *lease_c = xasprintf("%s/gc/lease", dir);
	CHECK(access(lease_c, F_OK) != 0);

	/* the first ends: the third gets its GPU */
	char *go = xasprintf("%s/go-ga", dir);
	write_text(go, "");
	wait_end(dir, "ga");
	char *lc = stage_file(dir, "gc", "lease");
	const char *ic = lc ? strchr(lc, ' ') : NULL;
	CHECK(ic && ia && streq(ic, ia));

	for (int i = 1; i < 3; i++) {
		free(go);
		go = xasprintf("%s/go-%s", dir, ids[i]);
		write_text(go, "");
		wait_end(dir, ids[i]);
	}
	for (int i = 0; i < 3; i++) {
		struct plainjob_status *s = query(dir, ids[i], pids[i]);
		CHECK_STR(s[0].state, "COMPLETED");
		plainjob_status_free(s, 1);
	}
	setenv("PATH", old_path, 1);
	free(go);
	free(lc);
	free(lease_c);
	free(pc);
	free(la);
	free(lb);
	free(path);
	free(old_path);
	free(smi);
	free(bin);
}

static void test_cancel(const char *dir)
{
	/* a TERM to the group: the job's shell dies of it, the leader records 143 */
	long pid = launch(dir, "j3", "sleep 30\n");
	char *stage = xasprintf("%s/j3", dir);
	struct plainjob_ref ref = { .id = "j3", .stage_dir = stage, .pgid = pid };
	struct strbuf sb = STRBUF_INIT;
	plainjob_cancel_command(&sb, &ref, 1);
	int st;
	char *out = run_sh(sb.buf, &st);
	CHECK_CONTAINS(out, "dispatch-cancel j3 signalled");
	free(out);
	wait_end(dir, "j3");
	struct plainjob_status *s = query(dir, "j3", pid);
	CHECK_STR(s[0].state, "CANCELLED");
	CHECK_INT(s[0].exit_code, 143);
	CHECK_INT(s[0].exit_signal, 15);
	plainjob_status_free(s, 1);
	/* again: it has ended */
	out = run_sh(sb.buf, &st);
	CHECK_CONTAINS(out, "dispatch-cancel j3 ended");
	free(out);
	strbuf_release(&sb);
	free(stage);
}

/* A stage dir with container.sh: the launcher runs it in place of the bootstrap (it
 * runs the bootstrap in the image), with DISPATCH_JOB_ID; its status is the job's. */
static void test_container_runner(const char *dir)
{
	char *stage = xasprintf("%s/j4", dir);
	mkdir(stage, 0700);
	char *runner = xasprintf("%s/container.sh", stage);
	write_text(runner, "echo \"runner $DISPATCH_JOB_ID\"\nexec bash \"$(dirname \"$0\")/bootstrap.sh\"\n");
	long pid = launch(dir, "j4", "echo boot; exit 5\n");
	wait_end(dir, "j4");
	struct plainjob_status *s = query(dir, "j4", pid);
	CHECK_STR(s[0].state, "FAILED");
	CHECK_INT(s[0].exit_code, 5);
	plainjob_status_free(s, 1);
	char *text = job_log(dir, "j4");
	CHECK_STR(text, "runner j4\nboot\n");
	free(text);
	free(runner);
	free(stage);
	/* cancel's removal of a podman or docker container is shell that parses */
	struct plainjob_ref ref = { .id = "j4", .stage_dir = "/nonexistent", .pgid = 0 };
	struct strbuf sb = STRBUF_INIT;
	plainjob_cancel_command(&sb, &ref, 1);
	CHECK_CONTAINS(sb.buf, "$rt stop -t 10 \"dispatch-$1\" >/dev/null 2>&1\n");
	CHECK_CONTAINS(sb.buf, "$rt rm -f \"dispatch-$1\" >/dev/null 2>&1\n");
	CHECK_SH_N("cancel command", sb.buf);
	strbuf_release(&sb);
}

/* Runs the launch command for a job with lease (its stage and bootstrap made here);
 * its output in *out (caller frees), its exit status returned. */
static int launch_with(const char *dir, const char *id, const char *command,
		       const struct plainjob_lease *lease, char **out)
{
	char *stage = xasprintf("%s/%s", dir, id);
	mkdir(stage, 0700);
	char *boot = xasprintf("%s/bootstrap.sh", stage);
	write_text(boot, command);
	char *log = xasprintf("%s/%s.out", dir, id);
	struct strbuf sb = STRBUF_INIT;
	strbuf_adds(&sb, "exec 2>&1\n"); /* its messages with its output */
	plainjob_launch_command(&sb, stage, dir, log, id, lease);
	int st;
	*out = run_sh(sb.buf, &st);
	strbuf_release(&sb);
	free(log);
	free(boot);
	free(stage);
	return st;
}

/* Starts "flock FILE sleep 60" in the background (the lock held by another
 * process); returns its pid once the lock is taken. */
static pid_t hold_lock(const char *file)
{
	char *ready = xasprintf("%s.held", file);
	unlink(ready);
	pid_t pid = fork();
	if (pid == 0) {
		setpgid(0, 0);
		execlp("flock", "flock", "-o", file, "sh", "-c", "touch \"$0\"; exec sleep 60", ready,
		       (char *)NULL);
		_exit(127);
	}
	struct stat st;
	for (int i = 0; i < 500 && stat(ready, &st) != 0; i++)
		usleep(10000);
	unlink(ready);
	free(ready);
	return pid;
}

static void release_lock(pid_t pid)
{
	kill(-pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

/* The lock directory's lock held by another process for good: the launcher gives up
 * within its bounded wait, and says who holds it; a lock directory that belongs to
 * another user is refused; a record that claims another user than its owner counts
 * for nothing (here: a forged running job of ours would fill max_jobs 1). */
static void test_untrusted(const char *dir)
{
	char *locks = xasprintf("%s/ulocks", dir);
	char *lockf = xasprintf("%s/.lock", locks);
	CHECK_INT(mkdir(locks, 01777), 0);
	CHECK_INT(chmod(locks, 01777), 0);
	write_text(lockf, "");
	struct plainjob_lease lease = { .lock_dir = locks, .lock_wait = 1 };
	pid_t holder = hold_lock(lockf);
	double t0 = monotonic_seconds();
	char *out = NULL;
	CHECK_INT(launch_with(dir, "u1", "exit 0\n", &lease, &out), 1);
	CHECK(monotonic_seconds() - t0 < 8);
	char *want = xasprintf("the lock of the GPU lock directory, %s, is held for over 1 s by ", lockf);
	CHECK_CONTAINS(out, want);  /* (run_sh reads stdout: the launch command's failure) */
	free(want);
	free(out);
	char *failed = xasprintf("%s/u1/failed", dir);
	size_t len;
	char *why = read_file(failed, &len);
	char *who = xasprintf("'s process %ld (the file is ", (long)holder);
	CHECK(why && strstr(why, who));
	free(who);
	free(why);
	free(failed);
	release_lock(holder);

	if (geteuid() == 0) {
		/* another user's lock directory (here: nobody's) */
		char *other = xasprintf("%s/olocks", dir);
		CHECK_INT(mkdir(other, 01777), 0);
		CHECK_INT(chmod(other, 01777), 0);
		CHECK_INT(chown(other, 65534, 65534), 0);
		struct plainjob_lease ol = { .lock_dir = other, .lock_wait = 1 };
		CHECK_INT(launch_with(dir, "u2", "exit 0\n", &ol, &out), 1);
		char *w2 = xasprintf("the GPU lock directory %s is refused: %s belongs to ", other, other);
		CHECK_CONTAINS(out, w2);
		CHECK_CONTAINS(out, "not to root or you, so another user could swap the records there");
		free(w2);
		free(out);
		free(other);

		/* a forged record: nobody's file that names us, running, locked */
		char *forged = xasprintf("%s/job.0000000001.forged-20260101-000000-0000", locks);
		write_text(forged, "root|running|0||1|\n");
		CHECK_INT(chown(forged, 65534, 65534), 0);
		holder = hold_lock(forged);
		struct plainjob_lease mj = { .lock_dir = locks, .lock_wait = 1, .max_jobs = 1 };
		char *gate = xasprintf("%s/u3-gate", dir);
		char *cmd = xasprintf("while [ ! -f '%s' ]; do sleep 0.05; done\n", gate);
		CHECK_INT(launch_with(dir, "u3", cmd, &mj, &out), 0);
		long pid = plainjob_parse_pid(out);
		free(out);
		char *lease_file = xasprintf("%s/u3/lease", dir);
		struct stat stt;
		for (int i = 0; i < 250 && stat(lease_file, &stt) != 0; i++)
			usleep(20000);
		CHECK(stat(lease_file, &stt) == 0);   /* it started: the forged job is no job */
		/* queue shows the forged record for what it is */
		struct strbuf sb = STRBUF_INIT;
		plainjob_queue_command(&sb, locks);
		int st;
		out = run_sh(sb.buf, &st);
		CHECK_INT(st, 0);
		CHECK_CONTAINS(out, "dispatch-qjob forged-20260101-000000-0000|nobody|root|running|0||1|\n");
		CHECK_CONTAINS(out, "dispatch-qjob u3|root|root|running|0||");
		free(out);
		strbuf_release(&sb);
		write_text(gate, "");
		wait_end(dir, "u3");
		struct plainjob_status *s = query(dir, "u3", pid);
		CHECK_STR(s[0].state, "COMPLETED");
		plainjob_status_free(s, 1);
		release_lock(holder);
		free(lease_file);
		free(cmd);
		free(gate);
		free(forged);
	}
	free(lockf);
	free(locks);
}

static void test_parse(void)
{
	struct plainjob_status *res;
	size_t n = plainjob_parse_status("noise\ndispatch-now 1000\n"
					 "dispatch-job a|900||running\n"
					 "dispatch-job b|900||exited 0 950\n"
					 "dispatch-job c|||gone\n"
					 "dispatch-job d|900|cancelled|gone\n"
					 "dispatch-job e|900||exited 999 950\n"
					 "dispatch-job broken\n", &res);
	CHECK_INT(n, 4);
	CHECK_STR(res[0].state, "RUNNING");
	CHECK_INT(res[0].elapsed, 100);
	CHECK_STR(res[1].state, "COMPLETED");
	CHECK_INT(res[1].elapsed, 50);
	CHECK_STR(res[2].state, "LOST");
	CHECK_STR(res[3].state, "CANCELLED");
	plainjob_status_free(res, n);
	/* with the lease's fields: GPUs and the reason a job waits */
	n = plainjob_parse_status("dispatch-now 1000\n"
				  "dispatch-job p|900||pending|-|waiting for 1 GPU: 2 of 2 held (by a job of yours and one of bob's)\n"
				  "dispatch-job r|990||running|0,1|\n"
				  "dispatch-job f|900||exited 1 901|-|the GPU lock directory /x is a symbolic link: refusing it\n",
				  &res);
	CHECK_INT(n, 3);
	CHECK_STR(res[0].state, "PENDING");
	CHECK_INT(res[0].elapsed, 0);
	CHECK_STR(res[0].gpus, "");
	CHECK_STR(res[0].reason, "waiting for 1 GPU: 2 of 2 held (by a job of yours and one of bob's)");
	CHECK_STR(res[1].state, "RUNNING");
	CHECK_STR(res[1].gpus, "0,1");
	CHECK_INT(res[1].elapsed, 10);
	CHECK_STR(res[2].state, "FAILED");
	CHECK_CONTAINS(res[2].reason, "symbolic link");
	plainjob_status_free(res, n);
	CHECK_INT(plainjob_parse_pid("motd\ndispatch-pid 4242\n"), 4242);
	CHECK_INT(plainjob_parse_pid("dispatch-pid x\n"), -1);
	CHECK_INT(plainjob_parse_pid("dispatch-pid 1\n"), -1);
}

static void test_parse_queue(void)
{
	const char *out = "motd\ndispatch-user alice\ndispatch-now 1000\n"
			  "dispatch-qjob train-20261124-101010-00ff|alice|alice|running|1|1|940|\n"
			  "dispatch-qjob eval_2-20261124-101011-0100|bob|bob|pending|2||990|waiting for 2 GPUs: 1 of 2 held (by a job of alice's)\n"
			  "dispatch-qjob cpu-20261124-101012-0101|bob|bob|running|0||1000|\n"
			  /* a record of mallory's that claims to be alice's */
			  "dispatch-qjob x-20261124-101013-0102|mallory|alice|running|1|0|900|\n"
			  "dispatch-qjob junk|x\n"
			  "dispatch-end 0\n";
	struct slurm_queue_filter all = { 0 }, me = { .me = true }, pd = { .states = "PD" };
	struct slurm_queue q;
	struct dp_error err = { 0 };
	CHECK_INT(plainjob_parse_queue(out, &all, &q, &err), 0);
	CHECK_INT(q.n, 4);
	CHECK_STR(q.jobs[3].user, "mallory");
	CHECK_STR(q.jobs[3].state, "IGNORED");
	CHECK_STR(q.jobs[3].gpus, "");
	CHECK_STR(q.jobs[3].reason, "a record of mallory's that claims to be alice's: ignored");
	CHECK_STR(q.user, "alice");
	CHECK_STR(q.jobs[0].name, "train");
	CHECK_STR(q.jobs[0].state, "RUNNING");
	CHECK_STR(q.jobs[0].gpus, "1");
	CHECK_STR(q.jobs[0].elapsed, "1:00");
	CHECK_STR(q.jobs[0].reason, "None");
	CHECK_STR(q.jobs[1].name, "eval_2");
	CHECK_STR(q.jobs[1].state, "PENDING");
	CHECK_STR(q.jobs[1].elapsed, "0:00");
	CHECK_STR(q.jobs[1].reason, "waiting for 2 GPUs: 1 of 2 held (by a job of alice's)");
	CHECK_STR(q.jobs[2].gpus, "");
	slurm_queue_release(&q);
	CHECK_INT(plainjob_parse_queue(out, &me, &q, &err), 0);
	CHECK_INT(q.n, 1);
	slurm_queue_release(&q);
	CHECK_INT(plainjob_parse_queue(out, &pd, &q, &err), 0);
	CHECK_INT(q.n, 1);
	CHECK_STR(q.jobs[0].user, "bob");
	slurm_queue_release(&q);
	/* cut short: an error, not an empty queue */
	CHECK_INT(plainjob_parse_queue("dispatch-user alice\n", &all, &q, &err), -1);
	slurm_queue_release(&q);
}

/* A sweep's tasks, started in one command with its program on stdin: a stage dir of
 * their own each (the sweep's bootstrap linked), DISPATCH_JOB_ID SWEEP-K, and at most
 * sweep_max running at once: the third waits for a sweep slot, then runs once one
 * ended; the look after a lost connection finds their pids. */
static void test_sweep_tasks(const char *dir)
{
	char *sw = xasprintf("%s/sw", dir);
	mkdir(sw, 0700);
	char *boot = xasprintf("%s/bootstrap.sh", sw);
	/* (each task ends once told to, or once the test's directory is gone) */
	char *cmd = xasprintf("while [ ! -f \"%s/go-$DISPATCH_JOB_ID\" ] && [ -d \"%s\" ]; do "
			      "sleep 0.05; done\necho \"task=$DISPATCH_JOB_ID\"\n", dir, dir);
	write_text(boot, cmd);
	char *locks = xasprintf("%s/locks-sw", dir);
	char *logs[3];
	struct plainjob_task tasks[3];
	static const char *const ids[] = { "sw-0", "sw-1", "sw-2" };
	for (int i = 0; i < 3; i++) {
		logs[i] = xasprintf("%s/%s.out", dir, ids[i]);
		tasks[i] = (struct plainjob_task){ .id = ids[i], .log_path = logs[i] };
	}
	struct plainjob_lease lease = { .lock_dir = locks, .sweep = "sw", .sweep_max = 2 };
	struct strbuf sb = STRBUF_INIT, in = STRBUF_INIT;
	plainjob_launch_tasks_command(&sb, &in, sw, dir, tasks, 3, &lease);
	char *inpath = xasprintf("%s/sw-in", dir);
	write_text(inpath, in.buf);
	char *script = xasprintf("exec <'%s'\n%s", inpath, sb.buf);
	int st;
	char *out = run_sh(script, &st);
	CHECK_INT(st, 0);
	long pids[3];
	for (int i = 0; i < 3; i++) {
		bool failed = true;
		pids[i] = plainjob_parse_task_pid(out, ids[i], &failed);
		CHECK(pids[i] > 1 && !failed);
	}
	/* each task's stage dir links the sweep's bootstrap */
	char *link = xasprintf("%s/sw-1/bootstrap.sh", dir);
	struct stat lst;
	CHECK(lstat(link, &lst) == 0 && S_ISLNK(lst.st_mode));
	/* Two run, one waits for a sweep slot: which one is for the launchers, started
	 * at once, to settle. (A launcher looks again every 0.2 s: until it has seen the
	 * other two run.) */
	const char *want_pend = "waiting for a sweep slot: max-parallel 2 on this host, 2 running\n";
	int waiting = -1, nwaiting = 0;
	for (int i = 0; i < 150 && nwaiting != 1; i++) {
		nwaiting = 0;
		for (int k = 0; k < 3; k++) {
			char *p = xasprintf("%s/%s/pending", dir, ids[k]);
			size_t len;
			char *text = read_file(p, &len);
			char *lease_file = xasprintf("%s/%s/lease", dir, ids[k]);
			struct stat lst2;
			if (text && streq(text, want_pend) && stat(lease_file, &lst2) != 0) {
				waiting = k;
				nwaiting++;
			}
			free(text);
			free(p);
			free(lease_file);
		}
		if (nwaiting != 1)
			usleep(100000);
	}
	CHECK_INT(nwaiting, 1);
	/* the task the cap holds back holds back no other job: one under max_jobs 3
	 * (2 running) takes the free slot at once, ahead of it */
	struct plainjob_lease mj = { .lock_dir = locks, .max_jobs = 3 };
	char *oout;
	CHECK_INT(launch_with(dir, "other", "exit 0\n", &mj, &oout), 0);
	wait_end(dir, "other");
	struct plainjob_status *os = query(dir, "other", plainjob_parse_pid(oout));
	CHECK_STR(os[0].state, "COMPLETED");
	plainjob_status_free(os, 1);
	free(oout);
	if (waiting >= 0) {
		char *still = xasprintf("%s/%s/lease", dir, ids[waiting]);
		struct stat sst;
		CHECK(stat(still, &sst) != 0); /* (and the sweep's cap still holds) */
		free(still);
	}
	/* one that runs ends: the waiting one takes its slot */
	int first = waiting == 0 ? 1 : 0;
	char *go = xasprintf("%s/go-%s", dir, ids[first]);
	write_text(go, "");
	free(go);
	wait_end(dir, ids[first]);
	char *lease2 = waiting >= 0 ? stage_file(dir, ids[waiting], "lease") : NULL;
	CHECK(lease2 != NULL);
	for (int i = 0; i < 3; i++) {
		go = xasprintf("%s/go-%s", dir, ids[i]);
		write_text(go, "");
		free(go);
	}
	for (int i = 0; i < 3; i++) {
		wait_end(dir, ids[i]);
		struct plainjob_status *q = query(dir, ids[i], pids[i]);
		CHECK_STR(q[0].state, "COMPLETED");
		plainjob_status_free(q, 1);
		char *log = job_log(dir, ids[i]);
		char *want = xasprintf("task=%s\n", ids[i]);
		CHECK_STR(log, want);
		free(want);
		free(log);
	}
	/* the look after a lost connection */
	strbuf_reset(&sb);
	plainjob_task_pids_command(&sb, sw, tasks, 3);
	char *out2 = run_sh(sb.buf, &st);
	bool failed;
	CHECK_INT(plainjob_parse_task_pid(out2, "sw-1", &failed), pids[1]);
	CHECK_INT(plainjob_parse_task_pid(out2, "sw-9", &failed), -1);
	CHECK_INT(plainjob_parse_task_pid("dispatch-task sw-3 none\n", "sw-3", &failed), 0);
	CHECK(failed);
	free(out2);
	for (int i = 0; i < 3; i++)
		free(logs[i]);
	free(lease2);
	free(link);
	free(out);
	free(script);
	free(inpath);
	strbuf_release(&sb);
	strbuf_release(&in);
	free(locks);
	free(cmd);
	free(boot);
	free(sw);
}

int main(void)
{
	char tmpl[] = "/tmp/dispatch-test-plainjob.XXXXXX";
	char *dir = mkdtemp(tmpl);
	if (!dir)
		return 1;
	test_parse();
	test_parse_queue();
	test_lifecycle(dir);
	test_cancel(dir);
	test_gpu_lock(dir);
	test_container_runner(dir);
	test_untrusted(dir);
	test_sweep_tasks(dir);
	char *rm = xasprintf("rm -rf '%s'", dir);
	if (system(rm) != 0)
		return 1;
	free(rm);
	return unit_done();
}
