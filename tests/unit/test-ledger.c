/* SPDX-License-Identifier: MIT */
/* The ledger: the two-step record, lookups, and 20 processes writing at once. */
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#include <sqlite3.h>

#include "ledger.h"
#include "unit.h"

#define WRITERS 20

static void record(const char *dir, int i)
{
	struct ledger *l;
	struct dp_error err;
	if (ledger_open(dir, &l, &err) < 0) {
		fprintf(stderr, "child %d: %s\n", i, err.msg);
		_exit(1);
	}
	char *token = ledger_new_token();
	char host[32], id[32];
	snprintf(host, sizeof(host), "host%d", i % 3);
	snprintf(id, sizeof(id), "%d", 1000 + i);
	struct ledger_job job = { .host = host, .token = token, .name = "sweep" };
	int r = ledger_begin(l, &job, &err);
	if (r == 0)
		r = ledger_submitted(l, token, id, 0, &err);
	if (r < 0)
		fprintf(stderr, "child %d: %s\n", i, err.msg);
	free(token);
	ledger_close(l);
	_exit(r < 0);
}

/* A ledger written before the container and run columns: opening adds them, its rows
 * read without a container or run, new rows keep runtime, image, run id and restarts. */
static void test_older_ledger(const char *dir)
{
	char *sub = xasprintf("%s/old", dir);
	char *db = xasprintf("%s/ledger.db", sub);
	mkdir(sub, 0700);
	sqlite3 *h;
	CHECK(sqlite3_open(db, &h) == SQLITE_OK);
	CHECK(sqlite3_exec(h, "CREATE TABLE jobs (row INTEGER PRIMARY KEY AUTOINCREMENT, job_id TEXT,"
			   " host TEXT NOT NULL, cluster TEXT, name TEXT, token TEXT NOT NULL UNIQUE,"
			   " submitted_at INTEGER NOT NULL, commit_id TEXT, dirty INTEGER NOT NULL"
			   " DEFAULT 0, script_path TEXT, log_path TEXT, err_path TEXT, pid INTEGER"
			   " NOT NULL DEFAULT 0, state TEXT NOT NULL);"
			   "INSERT INTO jobs (job_id, host, token, submitted_at, state)"
			   " VALUES ('7', 'hpc', 'dsp-old', 1, 'submitted');", NULL, NULL, NULL) == SQLITE_OK);
	sqlite3_close(h);
	struct ledger *l;
	struct dp_error err;
	CHECK(ledger_open(sub, &l, &err) == 0);
	struct ledger_job got;
	CHECK(ledger_find_token(l, "dsp-old", &got, &err) == 0);
	CHECK_STR(got.job_id, "7");
	CHECK(got.container_runtime == NULL && got.container_image == NULL);
	CHECK(got.run_id == NULL && got.max_restarts == 0 && !got.wandb_run);
	CHECK(got.sweep_id == NULL && got.sweep_size == 0);
	ledger_job_release(&got);
	struct ledger_job job = { .host = "box1", .token = "dsp-new", .container_runtime = "podman",
				  .container_image = "localhost/train:1", .run_id = "run-1",
				  .max_restarts = 4, .wandb_run = true,
				  .sweep_id = "sweep-1", .sweep_size = 12,
				  .sweep_params = "{\"list\":{\"names\":[\"lr\"],\"tasks\":[[\"1\"],[\"2\"]]}}",
				  .sweep_first = 8,
				  .sweep_tasks = "8-11", .sweep_parallel = 3 };
	CHECK(ledger_begin(l, &job, &err) == 0);
	struct ledger_job part = { .host = "hpc", .token = "dsp-part", .sweep_id = "sweep-1",
				   .sweep_size = 12, .sweep_tasks = "0-7" };
	CHECK(ledger_begin(l, &part, &err) == 0);
	struct ledger_job *rows;
	size_t nrows;
	CHECK(ledger_find_sweep(l, "sweep-1", &rows, &nrows, &err) == 0);
	CHECK_INT(nrows, 2); /* oldest first */
	CHECK_STR(rows[0].token, "dsp-new");
	CHECK_INT(rows[0].sweep_first, 8);
	CHECK_STR(rows[0].sweep_tasks, "8-11");
	CHECK_INT(rows[0].sweep_parallel, 3);
	CHECK_STR(rows[1].sweep_tasks, "0-7");
	ledger_jobs_free(rows, nrows);
	CHECK(ledger_find_sweep(l, "sweep-2", &rows, &nrows, &err) == 0 && nrows == 0);
	CHECK(ledger_find_token(l, "dsp-new", &got, &err) == 0);
	CHECK_STR(got.container_runtime, "podman");
	CHECK_STR(got.container_image, "localhost/train:1");
	CHECK_STR(got.run_id, "run-1");
	CHECK_INT(got.max_restarts, 4);
	CHECK(got.wandb_run);
	CHECK_STR(got.sweep_id, "sweep-1");
	CHECK_INT(got.sweep_size, 12);
	CHECK_STR(got.sweep_params, "{\"list\":{\"names\":[\"lr\"],\"tasks\":[[\"1\"],[\"2\"]]}}");
	ledger_job_release(&got);
	ledger_close(l);
	/* and once more: the columns are there now */
	CHECK(ledger_open(sub, &l, &err) == 0);
	ledger_close(l);
	free(db);
	free(sub);
}

int main(void)
{
	char tmpl[] = "/tmp/dispatch-ledger-XXXXXX";
	char *dir = mkdtemp(tmpl);
	CHECK(dir != NULL);
	test_older_ledger(dir);
	char *sub = xasprintf("%s/a/b", dir);
	struct ledger *l;
	struct dp_error err;

	CHECK(ledger_open(sub, &l, &err) == 0);
	struct stat st;
	CHECK(stat(sub, &st) == 0 && (st.st_mode & 0777) == 0700);
	char *db = xasprintf("%s/ledger.db", sub);
	CHECK(stat(db, &st) == 0 && (st.st_mode & 077) == 0);

	char *t1 = ledger_new_token(), *t2 = ledger_new_token();
	CHECK(strlen(t1) == 36 && startswith(t1, "dsp-"));
	CHECK(!streq(t1, t2));
	struct ledger_job job = { .host = "hpc", .cluster = "testbed", .name = "train",
				  .token = t1, .commit = "abc123", .dirty = true,
				  .log_path = "/scratch/logs/train-%j.out" };
	CHECK(ledger_begin(l, &job, &err) == 0);
	/* The same token twice is refused: one token, one submission. */
	CHECK(ledger_begin(l, &job, &err) < 0);

	struct ledger_job got;
	CHECK(ledger_find_token(l, t1, &got, &err) == 0);
	CHECK_STR(got.state, "submitting");
	CHECK(got.job_id == NULL);
	CHECK(got.dirty);
	ledger_job_release(&got);

	CHECK(ledger_submitted(l, t1, "4242", 0, &err) == 0);
	struct ledger_job *jobs;
	size_t n;
	CHECK(ledger_find(l, "4242", NULL, &jobs, &n, &err) == 0);
	CHECK_INT(n, 1);
	CHECK_STR(jobs[0].state, "submitted");
	CHECK_STR(jobs[0].host, "hpc");
	CHECK_STR(jobs[0].log_path, "/scratch/logs/train-%j.out");
	ledger_jobs_free(jobs, n);
	CHECK(ledger_find(l, "4242", "other", &jobs, &n, &err) == 0);
	CHECK_INT(n, 0);
	ledger_jobs_free(jobs, n);

	/* The same id on another host: both found, the bare id is ambiguous to the caller. */
	struct ledger_job job2 = { .host = "box1", .token = t2 };
	CHECK(ledger_begin(l, &job2, &err) == 0);
	CHECK(ledger_submitted(l, t2, "4242", 777, &err) == 0);
	CHECK(ledger_find(l, "4242", NULL, &jobs, &n, &err) == 0);
	CHECK_INT(n, 2);
	CHECK_STR(jobs[0].host, "box1");
	CHECK_INT(jobs[0].pid, 777);
	ledger_jobs_free(jobs, n);

	/* The history, newest first, with filters; an end state stored back. */
	struct ledger_filter f = { 0 };
	CHECK(ledger_list(l, &f, &jobs, &n, &err) == 0);
	CHECK_INT(n, 2);
	CHECK_STR(jobs[0].host, "box1");
	CHECK_STR(jobs[1].name, "train");
	int64_t row1 = jobs[1].row;
	ledger_jobs_free(jobs, n);
	f = (struct ledger_filter){ .host = "hpc" };
	CHECK(ledger_list(l, &f, &jobs, &n, &err) == 0);
	CHECK_INT(n, 1);
	ledger_jobs_free(jobs, n);
	f = (struct ledger_filter){ .name_glob = "tr*" };
	CHECK(ledger_list(l, &f, &jobs, &n, &err) == 0);
	CHECK_INT(n, 1);
	CHECK_STR(jobs[0].name, "train");
	ledger_jobs_free(jobs, n);
	f = (struct ledger_filter){ .limit = 1 };
	CHECK(ledger_list(l, &f, &jobs, &n, &err) == 0);
	CHECK_INT(n, 1);
	CHECK_STR(jobs[0].host, "box1");
	ledger_jobs_free(jobs, n);
	f = (struct ledger_filter){ .since = (int64_t)time(NULL) + 3600 };
	CHECK(ledger_list(l, &f, &jobs, &n, &err) == 0);
	CHECK_INT(n, 0);
	ledger_jobs_free(jobs, n);
	CHECK(ledger_state_final("TIMEOUT"));
	CHECK(!ledger_state_final("RUNNING"));
	CHECK(!ledger_state_final("submitted"));
	CHECK(ledger_set_end_state(l, row1, "RUNNING", &err) < 0);
	CHECK_INT(err.kind, DPE_INPUT);
	CHECK(ledger_set_end_state(l, row1, "COMPLETED", &err) == 0);
	CHECK(ledger_find_token(l, t1, &got, &err) == 0);
	CHECK_STR(got.state, "COMPLETED");
	ledger_job_release(&got);

	CHECK(ledger_set_log_path(l, t2, "/w/logs/x-4242.out", &err) == 0);
	CHECK(ledger_find_token(l, t2, &got, &err) == 0);
	CHECK_STR(got.log_path, "/w/logs/x-4242.out");
	ledger_job_release(&got);
	CHECK(ledger_set_state(l, t2, "unknown", &err) == 0);
	CHECK(ledger_forget(l, t2, &err) == 0);
	CHECK(ledger_find_token(l, t2, &got, &err) < 0);
	CHECK_INT(err.kind, DPE_NOTFOUND);
	CHECK(ledger_submitted(l, "dsp-nope", "1", 0, &err) < 0);
	ledger_close(l);

	/* 20 processes at the same moment: every row lands, none is lost. */
	char *cdir = xasprintf("%s/concurrent", dir);
	pid_t pids[WRITERS];
	for (int i = 0; i < WRITERS; i++) {
		pids[i] = fork();
		if (pids[i] == 0)
			record(cdir, i);
	}
	int failures = 0;
	for (int i = 0; i < WRITERS; i++) {
		int status;
		waitpid(pids[i], &status, 0);
		failures += !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	}
	CHECK_INT(failures, 0);
	CHECK(ledger_open(cdir, &l, &err) == 0);
	size_t total = 0;
	for (int i = 0; i < WRITERS; i++) {
		char id[32];
		snprintf(id, sizeof(id), "%d", 1000 + i);
		CHECK(ledger_find(l, id, NULL, &jobs, &n, &err) == 0);
		total += n;
		ledger_jobs_free(jobs, n);
	}
	CHECK_INT(total, WRITERS);
	ledger_close(l);

	free(t1);
	free(t2);
	free(db);
	free(sub);
	free(cdir);
	char *rm = xasprintf("rm -rf '%s'", dir);
	CHECK(system(rm) == 0);
	free(rm);
	return unit_done();
}
