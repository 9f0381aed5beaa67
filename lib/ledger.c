/* SPDX-License-Identifier: MIT */
#include "ledger.h"

#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>

#include "base/strbuf.h"

struct ledger {
	sqlite3 *db;
	char *path;
};

static const char schema[] =
	"CREATE TABLE IF NOT EXISTS jobs ("
	" row INTEGER PRIMARY KEY AUTOINCREMENT,"
	" job_id TEXT,"
	" host TEXT NOT NULL,"
	" cluster TEXT,"
	" name TEXT,"
	" token TEXT NOT NULL UNIQUE,"
	" submitted_at INTEGER NOT NULL,"
	" commit_id TEXT,"
	" dirty INTEGER NOT NULL DEFAULT 0,"
	" script_path TEXT, log_path TEXT, err_path TEXT,"
	" pid INTEGER NOT NULL DEFAULT 0,"
	" state TEXT NOT NULL,"
	" container_runtime TEXT, container_image TEXT, run_id TEXT,"
	" max_restarts INTEGER NOT NULL DEFAULT 0, wandb_run INTEGER NOT NULL DEFAULT 0,"
	" sweep_id TEXT, sweep_size INTEGER NOT NULL DEFAULT 0, sweep_params TEXT,"
	" sweep_first INTEGER NOT NULL DEFAULT 0, sweep_tasks TEXT,"
	" sweep_parallel INTEGER NOT NULL DEFAULT 0);"
	"CREATE INDEX IF NOT EXISTS jobs_job_id ON jobs(job_id);";

/* Columns added since the first ledgers: added to an older one on opening (SQLite
 * says "duplicate column name" when it has them already). */
static const char *const added_columns[] = {
	"ALTER TABLE jobs ADD COLUMN container_runtime TEXT",
	"ALTER TABLE jobs ADD COLUMN container_image TEXT",
	"ALTER TABLE jobs ADD COLUMN run_id TEXT",
	"ALTER TABLE jobs ADD COLUMN max_restarts INTEGER NOT NULL DEFAULT 0",
	"ALTER TABLE jobs ADD COLUMN wandb_run INTEGER NOT NULL DEFAULT 0",
	"ALTER TABLE jobs ADD COLUMN sweep_id TEXT",
	"ALTER TABLE jobs ADD COLUMN sweep_size INTEGER NOT NULL DEFAULT 0",
	"ALTER TABLE jobs ADD COLUMN sweep_params TEXT",
	"ALTER TABLE jobs ADD COLUMN sweep_first INTEGER NOT NULL DEFAULT 0",
	"ALTER TABLE jobs ADD COLUMN sweep_tasks TEXT",
	"ALTER TABLE jobs ADD COLUMN sweep_parallel INTEGER NOT NULL DEFAULT 0",
};

char *ledger_state_dir(void)
{
	const char *d = getenv("DISPATCH_STATE_DIR");
	if (d && *d)
		return xstrdup(d);
	d = getenv("XDG_STATE_HOME");
	if (d && *d)
		return xasprintf("%s/dispatch", d);
	const char *home = getenv("HOME");
	return xasprintf("%s/.local/state/dispatch", home && *home ? home : ".");
}

/* mkdir -p with mode 0700 for the directories it creates. */
static int mkdir_p(const char *path)
{
	_cleanup_free_ char *p = xstrdup(path);
	for (char *s = p + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(p, 0700) < 0 && errno != EEXIST)
			return -1;
		*s = '/';
	}
	if (mkdir(p, 0700) < 0 && errno != EEXIST)
		return -1;
	return 0;
}

static int db_fail(struct ledger *l, struct dp_error *err, const char *what)
{
	return dp_err(err, DPE_FAIL, "job ledger '%s': %s: %s", l->path, what, sqlite3_errmsg(l->db));
}

/* Switching a new database to WAL takes an exclusive lock, and SQLite answers BUSY
 * there without calling the busy handler: processes opening a fresh ledger at the same
 * moment retry (bounded, about 30 s in all) instead of failing. */
static int setup_schema(struct ledger *l)
{
	const char *setup = "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;";
	int rc = SQLITE_BUSY;
	for (int attempt = 0; attempt < 600; attempt++) {
		rc = sqlite3_exec(l->db, setup, NULL, NULL, NULL);
		if (rc == SQLITE_OK)
			rc = sqlite3_exec(l->db, schema, NULL, NULL, NULL);
		for (size_t i = 0; rc == SQLITE_OK && i < ARRAY_SIZE(added_columns); i++) {
			char *msg = NULL;
			rc = sqlite3_exec(l->db, added_columns[i], NULL, NULL, &msg);
			if (rc == SQLITE_ERROR && msg && strstr(msg, "duplicate column"))
				rc = SQLITE_OK;
			sqlite3_free(msg);
		}
		if (rc != SQLITE_BUSY && rc != SQLITE_LOCKED)
			return rc;
		sqlite3_sleep(10 + attempt % 40);
	}
	return rc;
}

int ledger_open(const char *dir, struct ledger **out, struct dp_error *err)
{
	_cleanup_free_ char *owned = dir ? NULL : ledger_state_dir();
	if (!dir)
		dir = owned;
	*out = NULL;
	if (mkdir_p(dir) < 0)
		return dp_err(err, DPE_FAIL, "cannot create the state dir '%s': %s", dir, strerror(errno));

	struct ledger *l = xcalloc(1, sizeof(*l));
	l->path = xasprintf("%s/ledger.db", dir);
	/* The ledger names hosts and paths: keep it private like ~/.ssh. */
	mode_t old = umask(077);
	int rc = sqlite3_open_v2(l->path, &l->db,
				 SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX, NULL);
	umask(old);
	if (rc != SQLITE_OK) {
		dp_err(err, DPE_FAIL, "cannot open the job ledger '%s': %s", l->path,
		       l->db ? sqlite3_errmsg(l->db) : sqlite3_errstr(rc));
		ledger_close(l);
		return -1;
	}
	/* Concurrent dispatch processes wait for each other rather than fail. */
	sqlite3_busy_timeout(l->db, 30000);
	if (setup_schema(l) != SQLITE_OK) {
		db_fail(l, err, "cannot set up");
		ledger_close(l);
		return -1;
	}
	*out = l;
	return 0;
}

void ledger_close(struct ledger *l)
{
	if (!l)
		return;
	sqlite3_close(l->db);
	free(l->path);
	free(l);
}

char *ledger_new_token(void)
{
	unsigned char raw[16];
	int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
	ssize_t got = fd >= 0 ? read(fd, raw, sizeof(raw)) : -1;
	if (fd >= 0)
		close(fd);
	if (got != (ssize_t)sizeof(raw)) {
		/* No /dev/urandom: time, pid and address bits still make a collision unlikely. */
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		uint64_t a = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 20), b = (uint64_t)getpid();
		b ^= (uint64_t)(uintptr_t)&ts;
		memcpy(raw, &a, 8);
		memcpy(raw + 8, &b, 8);
	}
	struct strbuf sb = STRBUF_INIT;
	strbuf_adds(&sb, "dsp-");
	for (size_t i = 0; i < sizeof(raw); i++)
		strbuf_addf(&sb, "%02x", raw[i]);
	return strbuf_detach(&sb);
}

static void bind_text(sqlite3_stmt *st, int i, const char *s)
{
	if (s)
		sqlite3_bind_text(st, i, s, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, i);
}

static int exec_stmt(struct ledger *l, sqlite3_stmt *st, struct dp_error *err, const char *what)
{
	int rc = sqlite3_step(st);
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return db_fail(l, err, what);
	return 0;
}

int ledger_begin(struct ledger *l, const struct ledger_job *job, struct dp_error *err)
{
	sqlite3_stmt *st;
	const char *sql = "INSERT INTO jobs (job_id, host, cluster, name, token, submitted_at,"
			  " commit_id, dirty, script_path, log_path, err_path, pid, state,"
			  " container_runtime, container_image, run_id, max_restarts, wandb_run,"
			  " sweep_id, sweep_size, sweep_params, sweep_first, sweep_tasks, sweep_parallel)"
			  " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, 'submitting',"
			  " ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23)";
	if (sqlite3_prepare_v2(l->db, sql, -1, &st, NULL) != SQLITE_OK)
		return db_fail(l, err, "cannot record the submission");
	bind_text(st, 1, job->job_id);
	bind_text(st, 2, job->host);
	bind_text(st, 3, job->cluster);
	bind_text(st, 4, job->name);
	bind_text(st, 5, job->token);
	sqlite3_bind_int64(st, 6, job->submitted_at ? job->submitted_at : (int64_t)time(NULL));
	bind_text(st, 7, job->commit);
	sqlite3_bind_int(st, 8, job->dirty);
	bind_text(st, 9, job->script_path);
	bind_text(st, 10, job->log_path);
	bind_text(st, 11, job->err_path);
	sqlite3_bind_int64(st, 12, job->pid);
	bind_text(st, 13, job->container_runtime);
	bind_text(st, 14, job->container_image);
	bind_text(st, 15, job->run_id);
	sqlite3_bind_int(st, 16, job->max_restarts);
	sqlite3_bind_int(st, 17, job->wandb_run);
	bind_text(st, 18, job->sweep_id);
	sqlite3_bind_int64(st, 19, job->sweep_size);
	bind_text(st, 20, job->sweep_params);
	sqlite3_bind_int64(st, 21, job->sweep_first);
	bind_text(st, 22, job->sweep_tasks);
	sqlite3_bind_int64(st, 23, job->sweep_parallel);
	return exec_stmt(l, st, err, "cannot record the submission");
}

/* One statement keyed by token: ?1 token, ?2 text, ?3 number (those the SQL uses; binding
 * a parameter the statement lacks is a harmless SQLITE_RANGE). */
static int update_by_token(struct ledger *l, const char *sql, const char *token, const char *a,
			   long pid, struct dp_error *err)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(l->db, sql, -1, &st, NULL) != SQLITE_OK)
		return db_fail(l, err, "cannot update the submission");
	bind_text(st, 1, token);
	bind_text(st, 2, a);
	sqlite3_bind_int64(st, 3, pid);
	if (exec_stmt(l, st, err, "cannot update the submission") < 0)
		return -1;
	if (sqlite3_changes(l->db) == 0)
		return dp_err(err, DPE_NOTFOUND, "job ledger '%s': no submission with token '%s'",
			      l->path, token);
	return 0;
}

int ledger_submitted(struct ledger *l, const char *token, const char *job_id, long pid,
		     struct dp_error *err)
{
	return update_by_token(l,
			       "UPDATE jobs SET job_id = ?2, pid = ?3, state = 'submitted' WHERE token = ?1",
			       token, job_id, pid, err);
}

int ledger_set_state(struct ledger *l, const char *token, const char *state, struct dp_error *err)
{
	return update_by_token(l, "UPDATE jobs SET state = ?2 WHERE token = ?1", token,
			       state, 0, err);
}

int ledger_set_log_path(struct ledger *l, const char *token, const char *path, struct dp_error *err)
{
	return update_by_token(l, "UPDATE jobs SET log_path = ?2 WHERE token = ?1", token, path, 0,
			       err);
}

int ledger_forget(struct ledger *l, const char *token, struct dp_error *err)
{
	return update_by_token(l, "DELETE FROM jobs WHERE token = ?1", token,
			       NULL, 0, err);
}

static char *col_text(sqlite3_stmt *st, int i)
{
	const unsigned char *t = sqlite3_column_text(st, i);
	return t ? xstrdup((const char *)t) : NULL;
}

#define JOB_COLUMNS                                                                          \
	"row, job_id, host, cluster, name, token, submitted_at, commit_id, dirty, script_path," \
	" log_path, err_path, pid, state, container_runtime, container_image, run_id," \
	" max_restarts, wandb_run, sweep_id, sweep_size, sweep_params, sweep_first, sweep_tasks," \
	" sweep_parallel"

static void read_row(sqlite3_stmt *st, struct ledger_job *j)
{
	j->row = sqlite3_column_int64(st, 0);
	j->job_id = col_text(st, 1);
	j->host = col_text(st, 2);
	j->cluster = col_text(st, 3);
	j->name = col_text(st, 4);
	j->token = col_text(st, 5);
	j->submitted_at = sqlite3_column_int64(st, 6);
	j->commit = col_text(st, 7);
	j->dirty = sqlite3_column_int(st, 8) != 0;
	j->script_path = col_text(st, 9);
	j->log_path = col_text(st, 10);
	j->err_path = col_text(st, 11);
	j->pid = (long)sqlite3_column_int64(st, 12);
	j->state = col_text(st, 13);
	j->container_runtime = col_text(st, 14);
	j->container_image = col_text(st, 15);
	j->run_id = col_text(st, 16);
	j->max_restarts = sqlite3_column_int(st, 17);
	j->wandb_run = sqlite3_column_int(st, 18) != 0;
	j->sweep_id = col_text(st, 19);
	j->sweep_size = (long)sqlite3_column_int64(st, 20);
	j->sweep_params = col_text(st, 21);
	j->sweep_first = (long)sqlite3_column_int64(st, 22);
	j->sweep_tasks = col_text(st, 23);
	j->sweep_parallel = (long)sqlite3_column_int64(st, 24);
}

/* Every row st selects into jobs[0..n), and st finalized. */
static int read_rows(struct ledger *l, sqlite3_stmt *st, struct ledger_job **jobs, size_t *n,
		     struct dp_error *err)
{
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		*jobs = xrealloc(*jobs, (*n + 1) * sizeof(**jobs));
		memset(&(*jobs)[*n], 0, sizeof(**jobs));
		read_row(st, &(*jobs)[(*n)++]);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		ledger_jobs_free(*jobs, *n);
		*jobs = NULL;
		*n = 0;
		return db_fail(l, err, "cannot read");
	}
	return 0;
}

int ledger_find(struct ledger *l, const char *job_id, const char *host, struct ledger_job **jobs,
		size_t *n, struct dp_error *err)
{
	sqlite3_stmt *st;
	const char *sql = "SELECT " JOB_COLUMNS " FROM jobs"
			  " WHERE job_id = ?1 AND (?2 IS NULL OR host = ?2) ORDER BY row DESC";
	*jobs = NULL;
	*n = 0;
	if (sqlite3_prepare_v2(l->db, sql, -1, &st, NULL) != SQLITE_OK)
		return db_fail(l, err, "cannot read");
	bind_text(st, 1, job_id);
	bind_text(st, 2, host);
	return read_rows(l, st, jobs, n, err);
}

int ledger_find_sweep(struct ledger *l, const char *sweep_id, struct ledger_job **jobs, size_t *n,
		      struct dp_error *err)
{
	sqlite3_stmt *st;
	const char *sql = "SELECT " JOB_COLUMNS " FROM jobs WHERE sweep_id = ?1 ORDER BY row";
	*jobs = NULL;
	*n = 0;
	if (sqlite3_prepare_v2(l->db, sql, -1, &st, NULL) != SQLITE_OK)
		return db_fail(l, err, "cannot read");
	bind_text(st, 1, sweep_id);
	return read_rows(l, st, jobs, n, err);
}

int ledger_sweep_ids(struct ledger *l, const char *prefix, char ***ids, struct dp_error *err)
{
	sqlite3_stmt *st;
	const char *sql = "SELECT sweep_id FROM jobs WHERE sweep_id IS NOT NULL"
			  " AND substr(sweep_id, 1, length(?1)) = ?1 GROUP BY sweep_id ORDER BY min(row)";
	*ids = NULL;
	if (sqlite3_prepare_v2(l->db, sql, -1, &st, NULL) != SQLITE_OK)
		return db_fail(l, err, "cannot read");
	bind_text(st, 1, prefix);
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		strv_add(ids, (const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		strv_free(*ids);
		*ids = NULL;
		return db_fail(l, err, "cannot read");
	}
	return 0;
}

int ledger_find_token(struct ledger *l, const char *token, struct ledger_job *job,
		      struct dp_error *err)
{
	sqlite3_stmt *st;
	memset(job, 0, sizeof(*job));
	if (sqlite3_prepare_v2(l->db, "SELECT " JOB_COLUMNS " FROM jobs WHERE token = ?1", -1, &st,
			       NULL) != SQLITE_OK)
		return db_fail(l, err, "cannot read");
	bind_text(st, 1, token);
	int rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		read_row(st, job);
	sqlite3_finalize(st);
	if (rc == SQLITE_ROW)
		return 0;
	if (rc == SQLITE_DONE)
		return dp_err(err, DPE_NOTFOUND, "no submission with token '%s' in the job ledger", token);
	return db_fail(l, err, "cannot read");
}

int ledger_list(struct ledger *l, const struct ledger_filter *f, struct ledger_job **jobs,
		size_t *n, struct dp_error *err)
{
	sqlite3_stmt *st;
	const char *sql = "SELECT " JOB_COLUMNS " FROM jobs"
			  " WHERE (?1 IS NULL OR host = ?1) AND submitted_at >= ?2"
			  " AND (?3 IS NULL OR sweep_id = ?3) ORDER BY row DESC";
	*jobs = NULL;
	*n = 0;
	if (sqlite3_prepare_v2(l->db, sql, -1, &st, NULL) != SQLITE_OK)
		return db_fail(l, err, "cannot read");
	bind_text(st, 1, f ? f->host : NULL);
	sqlite3_bind_int64(st, 2, f ? f->since : 0);
	bind_text(st, 3, f ? f->sweep_id : NULL);
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (f && f->limit && *n >= f->limit)
			continue; /* read to the end: the statement finishes cleanly */
		if (f && f->name_glob) {
			const unsigned char *name = sqlite3_column_text(st, 4);
			if (fnmatch(f->name_glob, name ? (const char *)name : "", 0) != 0)
				continue;
		}
		*jobs = xrealloc(*jobs, (*n + 1) * sizeof(**jobs));
		memset(&(*jobs)[*n], 0, sizeof(**jobs));
		read_row(st, &(*jobs)[(*n)++]);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		ledger_jobs_free(*jobs, *n);
		*jobs = NULL;
		*n = 0;
		return db_fail(l, err, "cannot read");
	}
	return 0;
}

static const char *const final_states[] = {
	"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "OUT_OF_MEMORY", "NODE_FAIL",
	"PREEMPTED", "BOOT_FAIL", "DEADLINE", "REVOKED",
};

bool ledger_state_final(const char *state)
{
	for (size_t i = 0; state && i < ARRAY_SIZE(final_states); i++)
		if (streq(state, final_states[i]))
			return true;
	return false;
}

int ledger_set_end_state(struct ledger *l, int64_t row, const char *state, struct dp_error *err)
{
	if (!ledger_state_final(state))
		return dp_err(err, DPE_INPUT, "'%s' is not a state a job ends in", state ? state : "");
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(l->db, "UPDATE jobs SET state = ?2 WHERE row = ?1", -1, &st, NULL) !=
	    SQLITE_OK)
		return db_fail(l, err, "cannot update the submission");
	sqlite3_bind_int64(st, 1, row);
	bind_text(st, 2, state);
	return exec_stmt(l, st, err, "cannot update the submission");
}

void ledger_job_release(struct ledger_job *j)
{
	free(j->job_id);
	free(j->host);
	free(j->cluster);
	free(j->name);
	free(j->token);
	free(j->commit);
	free(j->script_path);
	free(j->log_path);
	free(j->err_path);
	free(j->container_runtime);
	free(j->container_image);
	free(j->run_id);
	free(j->sweep_id);
	free(j->sweep_params);
	free(j->sweep_tasks);
	free(j->state);
	memset(j, 0, sizeof(*j));
}

void ledger_jobs_free(struct ledger_job *jobs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		ledger_job_release(&jobs[i]);
	free(jobs);
}
