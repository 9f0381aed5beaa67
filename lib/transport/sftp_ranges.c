/* SPDX-License-Identifier: MIT */
/*
 * One large regular file over several SSH connections at once (cp --connections).
 * libssh2 does a connection's crypto in the thread that calls it, so one connection
 * keeps one core busy at most; K connections, each in a thread of its own, use K.
 * Each connection moves a contiguous range of the file, SFTP reads or writes at
 * offsets. The file is not cut up front: the copy's own connection starts with all
 * of it, and a connection that comes up (or runs out of work) takes the back half of
 * the largest range left. A connection that never comes up costs nothing, and a slow
 * one ends up with less to do.
 *
 * The disk is never on a connection's thread: each connection has a disk thread
 * that writes what it received (download) or reads ahead what it will send
 * (upload), through CHUNKS buffers. Memory is bounded: CHUNKS chunks, and for an
 * upload a send window, per connection.
 *
 * Every connection works on an SFTP channel of its own, the copy's own connection
 * too: the channel the copy opened the file on stays as it was, whatever happens
 * here, for what the copy does next (close, rename, or remove the temporary file).
 *
 * A failure anywhere (a connection lost, the disk full) or an interrupt stops every
 * thread; an upload still writes what libssh2 was given (see up_net), and the
 * caller removes the temporary file as after any failed copy.
 */
#include <errno.h>
#include <pthread.h>
#include <unistd.h>

#include "transport/sftp_fs.h"
#include "transport/ssh.h"
#include "transport/ssh_internal.h"

#define CHUNK (2u << 20)        /* read or written on the disk at once, at least (download)
				   or at most (upload) */
#define CHUNK_MAX (2 * CHUNK)   /* a chunk's buffer */
#define CHUNKS 4                /* per connection, between its two threads */
#define WINDOW (4u << 20)       /* an upload's send buffer: at least half of it is kept in
				   write requests, more than the server's channel window */
#define TAKE_MIN (8u << 20)     /* a range is halved only when that leaves each this much */
#define MAX_CONNECTIONS 16
#define WAIT_MS 200

struct chunk {
	char *buf;
	uint64_t off;
	size_t len;
};

struct run;

struct conn {
	struct run *run;
	struct ssh_session *s;          /* the copy's own (conn[0]) or opened here */
	struct fs fs;                   /* its SFTP channel (on the copy's session, or its own) */
	char *own_name;
	LIBSSH2_SFTP_HANDLE *h;
	int idle_ms;
	/* Under run->lock. The range [pos, end) is this connection's; pos is the next
	 * byte taken on: asked of the server (download) or read from the disk (upload). */
	uint64_t pos, end;
	struct chunk full[CHUNKS];      /* filled, in order: a ring from full_head */
	int full_head, nfull;
	char *spare[CHUNKS];            /* empty */
	int nspare;
	bool producer_done;             /* no more full chunks will come */
	uint64_t moved;                 /* bytes this connection moved (under run->lock) */
	pthread_t thread, disk;
	bool has_thread, has_disk;
};

struct run {
	const struct sftp_ranges *r;
	pthread_mutex_t lock;
	pthread_cond_t cond;            /* anything changed: a chunk moved, a thread ended */
	struct conn conn[MAX_CONNECTIONS];
	int n;
	int running;                    /* threads not yet over */
	int first;                      /* conn[0]: 0 opening, 1 open, -1 it could not open
					   (then no other connection takes a range) */
	double open_deadline;           /* for the connections opened here */
	uint64_t done;                  /* bytes on the far side: written to the disk
					   (download), acknowledged by the server (upload) */
	uint64_t eof;                   /* where the source ends: its size, unless it shrank */
	bool stop;                      /* a failure or an interrupt: every thread ends */
	bool failed;
	struct dp_error err;            /* the first failure */
};

static void lock(struct run *run) { pthread_mutex_lock(&run->lock); }
static void unlock(struct run *run) { pthread_mutex_unlock(&run->lock); }

static bool stopped(struct run *run)
{
	lock(run);
	bool s = run->stop;
	unlock(run);
	return s;
}

static void fail(struct run *run, const struct dp_error *e)
{
	lock(run);
	if (!run->failed) {
		run->failed = true;
		run->err = *e;
	}
	run->stop = true;
	pthread_cond_broadcast(&run->cond);
	unlock(run);
}

/* Under the lock: for c, whose range is over, the back half of the largest range
 * left; false when none is worth halving. */
static bool take_range(struct run *run, struct conn *c)
{
	struct conn *v = NULL;
	uint64_t left = 0;
	for (int i = 0; i < run->n; i++) {
		struct conn *o = &run->conn[i];
		if (o != c && o->end > o->pos && o->end - o->pos > left) {
			left = o->end - o->pos;
			v = o;
		}
	}
	if (!v || left < 2 * (uint64_t)TAKE_MIN)
		return false;
	uint64_t mid = (v->pos + left / 2 + CHUNK - 1) / CHUNK * CHUNK;
	c->pos = mid;
	c->end = v->end;
	v->end = mid;
	return true;
}

/* The next piece of c's range, [*off, *off + *len) with *len at most max, and an
 * empty chunk for it (waiting for one); NULL when the range is over and none can be
 * taken, or the copy stopped. */
static char *next_piece(struct run *run, struct conn *c, size_t max, uint64_t *off, size_t *len)
{
	char *buf = NULL;
	lock(run);
	if (c->pos < c->end || take_range(run, c)) {
		while (!c->nspare && !run->stop)
			pthread_cond_wait(&run->cond, &run->lock);
		if (!run->stop) {
			*off = c->pos;
			*len = c->end - c->pos < max ? (size_t)(c->end - c->pos) : max;
			c->pos += *len;
			buf = c->spare[--c->nspare];
		}
	}
	unlock(run);
	return buf;
}

/* Under the lock: a piece done, handed to the other thread (or an empty one back). */
static void piece_done(struct run *run, struct conn *c, char *buf, uint64_t off, size_t len)
{
	if (len) {
		c->full[(c->full_head + c->nfull++) % CHUNKS] = (struct chunk){ buf, off, len };
	} else {
		c->spare[c->nspare++] = buf;
	}
	pthread_cond_broadcast(&run->cond);
}

/* Under the lock: the oldest full chunk, waiting for one; false at the end. */
static bool take_full(struct run *run, struct conn *c, struct chunk *ch)
{
	while (!c->nfull && !c->producer_done && !run->stop)
		pthread_cond_wait(&run->cond, &run->lock);
	if (run->stop || !c->nfull)
		return false;
	*ch = c->full[c->full_head];
	c->full_head = (c->full_head + 1) % CHUNKS;
	c->nfull--;
	return true;
}

static void spare_back(struct run *run, struct conn *c, char *buf)
{
	c->spare[c->nspare++] = buf;
	pthread_cond_broadcast(&run->cond);
}

/* The source ended at off (it shrank since it was looked at): the copy ends there. */
static void source_ended(struct run *run, uint64_t off)
{
	lock(run);
	if (off < run->eof)
		run->eof = off;
	for (int i = 0; i < run->n; i++)
		if (run->conn[i].end > off)
			run->conn[i].end = off;
	unlock(run);
}

static void producer_over(struct run *run, struct conn *c)
{
	lock(run);
	c->producer_done = true;
	pthread_cond_broadcast(&run->cond);
	unlock(run);
}

/* The server made c wait: 0 to try again, -1 when the copy stopped (or, cleaning
 * up, when until passed), -2 when the connection is lost (nothing for
 * SFTP_TIMEOUT_S, or closed). until 0: working, the copy's stop ends the wait. */
static int conn_wait_until(struct conn *c, double until)
{
	if (until ? monotonic_seconds() > until :
	    stopped(c->run) || (c->run->r->cancel && *c->run->r->cancel))
		return -1;
	int q = ssh_session_pump(c->s);
	if (q > 0)
		return 0;
	if (q == 0 && !ssh_session_closed(c->s)) {
		int w = ssh_session_wait(c->s, WAIT_MS);
		if (w > 0) {
			c->idle_ms = 0;
			return 0;
		}
		if (w == 0 && (c->idle_ms += WAIT_MS) < SFTP_TIMEOUT_MS)
			return 0;
	}
	return -2;
}

static int conn_wait(struct conn *c)
{
	return conn_wait_until(c, 0);
}

/* A libssh2 call on c failed (rc, or EAGAIN with the wait's verdict w): the copy
 * fails with what the server or the connection said, unless it stopped already. */
static void conn_failed(struct conn *c, int w, const char *what)
{
	struct dp_error e = { 0 };
	if (w == -1)
		return;
	sftp_remote_err(&c->fs, &e, what, c->run->r->path);
	fail(c->run, &e);
}

static int local_failed(struct run *run, const char *what)
{
	struct dp_error e = { 0 };
	dp_err(&e, DPE_FAIL, "cannot %s '%s': %s", what, run->r->local, strerror(errno));
	fail(run, &e);
	return -1;
}

/* ---- download: the connection reads, the disk thread writes ---- */

/* libssh2 keeps four times the length a read asks for in read requests in flight:
 * a read never asks for less than CHUNK (unless the range ends first), into a buffer
 * of twice that, and the piece ends once it holds CHUNK; the rest of what was taken
 * goes back to the range. */
static void down_net(struct conn *c)
{
	struct run *run = c->run;
	uint64_t at = 0;        /* where the handle reads next */
	for (;;) {
		uint64_t off;
		size_t len, got = 0;
		char *buf = next_piece(run, c, CHUNK_MAX, &off, &len);
		if (!buf)
			break;
		if (off != at)
			libssh2_sftp_seek64(c->h, off);
		int w = 0;
		while (got < len && got < CHUNK) {
			ssize_t n = libssh2_sftp_read(c->h, buf + got, len - got);
			if (n == LIBSSH2_ERROR_EAGAIN && (w = conn_wait(c)) == 0)
				continue;
			if (n < 0)
				break;
			if (n == 0) {
				source_ended(run, off + got);
				break;
			}
			got += (size_t)n;
		}
		at = off + got;
		lock(run);
		piece_done(run, c, buf, off, got);
		bool shrunk = at == run->eof, short_read = got < len && got < CHUNK;
		if (got < len && !shrunk)
			c->pos = at;    /* (only this thread moves pos; a range taken from
					   this one starts after the whole piece) */
		unlock(run);
		if (short_read && !shrunk) {
			conn_failed(c, w, "read");
			break;
		}
	}
	producer_over(run, c);
}

static void *down_disk(void *arg)
{
	struct conn *c = arg;
	struct run *run = c->run;
	struct chunk ch;
	lock(run);
	while (take_full(run, c, &ch)) {
		unlock(run);
		for (size_t at = 0; at < ch.len;) {
			ssize_t n = pwrite(c->run->r->fd, ch.buf + at, ch.len - at, (off_t)(ch.off + at));
			if (n < 0 && errno != EINTR) {
				local_failed(run, "write");
				break;
			}
			at += n > 0 ? (size_t)n : 0;
		}
		lock(run);
		spare_back(run, c, ch.buf);
		run->done += ch.len;
		c->moved += ch.len;
	}
	unlock(run);
	return NULL;
}

/* ---- upload: the disk thread reads ahead, the connection writes ---- */

static void *up_disk(void *arg)
{
	struct conn *c = arg;
	struct run *run = c->run;
	for (;;) {
		uint64_t off;
		size_t len, got = 0;
		char *buf = next_piece(run, c, CHUNK, &off, &len);
		if (!buf)
			break;
		while (got < len) {
			ssize_t n = pread(run->r->fd, buf + got, len - got, (off_t)(off + got));
			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0) {
				lock(run);
				spare_back(run, c, buf);
				unlock(run);
				local_failed(run, "read");
				goto out;
			}
			if (n == 0) {
				source_ended(run, off + got);
				break;
			}
			got += (size_t)n;
		}
		lock(run);
		piece_done(run, c, buf, off, got);
		unlock(run);
	}
out:
	producer_over(run, c);
	return NULL;
}

/* The window holds win[woff, woff + have), the bytes up to wnext; libssh2 has sent
 * them (or is sending), and takes more appended at the end as it goes (sftp.c's
 * copy_step). A chunk of another range waits until the window is empty: then the
 * handle moves to its offset.
 *
 * Once the copy stopped, what the window holds is still written (drained), unless
 * this connection is lost: libssh2 sends a request in pieces as the channel's window
 * allows, and any request sent before the rest of it (the file's close) would be
 * read by the server as part of it, never to be answered. */
static void up_net(struct conn *c)
{
	struct run *run = c->run;
	char *win = xmalloc(WINDOW);
	size_t woff = 0, have = 0;
	uint64_t wnext = 0;
	double drain_until = 0;
	for (;;) {
		bool seek = false, end = false;
		lock(run);
		while (!have && !c->nfull && !c->producer_done && !run->stop)
			pthread_cond_wait(&run->cond, &run->lock);
		while (have <= WINDOW / 2 && c->nfull && !run->stop) {
			struct chunk *ch = &c->full[c->full_head];
			if (ch->off != wnext && have)
				break;
			seek |= ch->off != wnext;
			if (woff) {
				memmove(win, win + woff, have);
				woff = 0;
			}
			memcpy(win + have, ch->buf, ch->len);
			have += ch->len;
			wnext = ch->off + ch->len;
			c->full_head = (c->full_head + 1) % CHUNKS;
			c->nfull--;
			spare_back(run, c, ch->buf);
		}
		end = !have && (run->stop || (c->producer_done && !c->nfull));
		if (run->stop && !drain_until)
			drain_until = monotonic_seconds() + SFTP_TIMEOUT_S;
		unlock(run);
		if (end)
			break;
		if (seek)
			libssh2_sftp_seek64(c->h, wnext - have);
		ssize_t n = libssh2_sftp_write(c->h, win + woff, have);
		int w = 0;
		if (n == LIBSSH2_ERROR_EAGAIN) {
			w = conn_wait_until(c, drain_until);
			if (w == -1 && !drain_until) {  /* it stopped meanwhile */
				drain_until = monotonic_seconds() + SFTP_TIMEOUT_S;
				continue;
			}
			if (w == 0)
				continue;
		}
		if (n < 0) {
			conn_failed(c, w, "write");
			break;
		}
		woff += (size_t)n;
		have -= (size_t)n;
		lock(run);
		run->done += (uint64_t)n;
		c->moved += (uint64_t)n;
		unlock(run);
	}
	free(win);
}

/* ---- the connections ---- */

static void conn_run(struct conn *c)
{
	struct run *run = c->run;
	void *(*disk)(void *) = run->r->upload ? up_disk : down_disk;
	c->has_disk = pthread_create(&c->disk, NULL, disk, c) == 0;
	if (!c->has_disk) {
		struct dp_error e = { 0 };
		dp_err(&e, DPE_FAIL, "cannot start a thread: %s", strerror(errno));
		fail(run, &e);
		return;
	}
	if (run->r->upload)
		up_net(c);
	else
		down_net(c);
	pthread_join(c->disk, NULL);
	c->has_disk = false;
}

/* conn[0] works on the copy's own connection, the others on connections like it
 * opened here, in batch mode (never a prompt); each on an SFTP channel of its own
 * (the copy's stays as it was, for what it does next), with the file open on it: 0,
 * or -1 when any of that failed (the copy goes on without this connection). */
static int conn_open(struct conn *c)
{
	struct run *run = c->run;
	const struct sftp_ranges *r = run->r;
	if (c == run->conn) {
		c->s = r->remote->s;
	} else {
		struct ssh_ctx ctx = *r->ssh;
		struct dp_error e = { 0 };
		ctx.batch_mode = true;
		ctx.prompt = NULL;
		ctx.attempts = 1;
		ctx.deadline = run->open_deadline;
		if (ssh_session_open(&ctx, ssh_session_name(r->remote->s), &c->s, &e) < 0)
			return -1;
	}
	LIBSSH2_SESSION *ls = ssh_session_libssh2(c->s);
	libssh2_session_set_blocking(ls, 0);
	c->own_name = xasprintf("%s:", ssh_session_name(c->s));
	c->fs = (struct fs){ .name = c->own_name, .s = c->s, .ls = ls };
	do
		c->fs.sftp = libssh2_sftp_init(ls);
	while (!c->fs.sftp && libssh2_session_last_errno(ls) == LIBSSH2_ERROR_EAGAIN && conn_wait(c) == 0);
	if (!c->fs.sftp)
		return -1;
	unsigned long flags = r->upload ? LIBSSH2_FXF_WRITE : LIBSSH2_FXF_READ;
	do
		c->h = libssh2_sftp_open_ex(c->fs.sftp, r->path, (unsigned)strlen(r->path), flags, 0,
					    LIBSSH2_SFTP_OPENFILE);
	while (!c->h && libssh2_session_last_errno(ls) == LIBSSH2_ERROR_EAGAIN && conn_wait(c) == 0);
	return c->h ? 0 : -1;
}

/* Ends what conn_open opened: the file closed (an upload's by its server before the
 * copy renames it), the SFTP channel, the connection. Bounded, as every wait. */
static void conn_close(struct conn *c)
{
	double until = monotonic_seconds() + (c->fs.dead ? 1 : 10);
	if (c->h)
		while (libssh2_sftp_close_handle(c->h) == LIBSSH2_ERROR_EAGAIN && conn_wait_until(c, until) == 0)
			;
	if (c->fs.sftp)
		while (libssh2_sftp_shutdown(c->fs.sftp) == LIBSSH2_ERROR_EAGAIN && conn_wait_until(c, until) == 0)
			;
	if (c->fs.dead && c == c->run->conn)
		c->run->r->remote->dead = true; /* the copy's own connection is lost */
	if (c != c->run->conn)
		ssh_session_free(c->s);
	free(c->own_name);
}

static void thread_over(struct run *run)
{
	lock(run);
	run->running--;
	pthread_cond_broadcast(&run->cond);
	unlock(run);
}

static void first_is(struct run *run, int state)
{
	lock(run);
	run->first = state;
	pthread_cond_broadcast(&run->cond);
	unlock(run);
}

/* The others take their ranges from conn[0]'s: they wait until it is open. */
static bool first_open(struct run *run)
{
	lock(run);
	while (!run->first && !run->stop)
		pthread_cond_wait(&run->cond, &run->lock);
	bool open = run->first > 0 && !run->stop;
	unlock(run);
	return open;
}

static void *conn_thread(void *arg)
{
	struct conn *c = arg;
	struct run *run = c->run;
	int r = conn_open(c);
	if (c == run->conn)
		first_is(run, r == 0 ? 1 : -1);
	if (r == 0 && first_open(run))
		conn_run(c);
	conn_close(c);
	thread_over(run);
	return NULL;
}

/* Every thread is over; progress told as it goes, an interrupt seen within 0.1 s. */
static void watch(struct run *run)
{
	const struct sftp_ranges *r = run->r;
	uint64_t told = UINT64_MAX;
	lock(run);
	while (run->running) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 100 * 1000 * 1000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		pthread_cond_timedwait(&run->cond, &run->lock, &ts);
		if (r->cancel && *r->cancel && !run->stop) {
			run->stop = true;
			pthread_cond_broadcast(&run->cond);
		}
		uint64_t done = run->done;
		if (r->progress && done != told && !run->stop) {
			told = done;
			unlock(run);
			r->progress(r->data, done);
			lock(run);
		}
	}
	unlock(run);
}

/* A source that shrank: the copy is cut where it ended (a download's file here, an
 * upload's on the server through the copy's own handle). */
static int cut_at_eof(struct run *run)
{
	const struct sftp_ranges *r = run->r;
	if (!r->upload)
		return ftruncate(r->fd, (off_t)run->eof) < 0 ? local_failed(run, "write") : 0;
	LIBSSH2_SFTP_ATTRIBUTES a = { .flags = LIBSSH2_SFTP_ATTR_SIZE, .filesize = run->eof };
	int rc, w = 0;
	while ((rc = libssh2_sftp_fstat_ex(r->h, &a, 1)) == LIBSSH2_ERROR_EAGAIN &&
	       (w = conn_wait(&run->conn[0])) == 0)
		;
	if (rc < 0)
		conn_failed(&run->conn[0], w, "write");
	return rc < 0 ? -1 : 0;
}

static int connections(const struct sftp_ranges *r)
{
	if (!r->ssh || !ssh_session_unattended(r->remote->s) || r->connections < 1)
		return 1;
	return r->connections < MAX_CONNECTIONS ? r->connections : MAX_CONNECTIONS;
}

int sftp_ranges_copy(const struct sftp_ranges *r, uint64_t *copied, int *used, struct dp_error *err)
{
	struct run *run = xcalloc(1, sizeof(*run));
	pthread_mutex_init(&run->lock, NULL);
	pthread_cond_init(&run->cond, NULL);
	run->r = r;
	run->eof = r->size;
	run->n = connections(r);
	run->open_deadline = monotonic_seconds() + 2 + 4 * ssh_session_connect_seconds(r->remote->s);
	for (int i = 0; i < run->n; i++) {
		struct conn *c = &run->conn[i];
		c->run = run;
		for (c->nspare = 0; c->nspare < CHUNKS; c->nspare++)
			c->spare[c->nspare] = xmalloc(CHUNK_MAX);
	}
	run->conn[0].end = r->size;
	for (int i = 0; i < run->n; i++) {
		struct conn *c = &run->conn[i];
		run->running++;
		c->has_thread = pthread_create(&c->thread, NULL, conn_thread, c) == 0;
		if (!c->has_thread) {
			run->running--;
			if (i == 0) {
				dp_err(&run->err, DPE_FAIL, "cannot start a thread: %s", strerror(errno));
				run->failed = true;
				break;
			}
		}
	}
	watch(run);
	for (int i = 0; i < run->n; i++)
		if (run->conn[i].has_thread)
			pthread_join(run->conn[i].thread, NULL);
	if (!run->failed && r->cancel && *r->cancel) {
		dp_err(&run->err, DPE_FAIL, "interrupted");
		run->failed = true;
	}
	if (!run->failed && run->eof < r->size)
		cut_at_eof(run);
	int rc = run->failed ? -1 : run->first < 0 ? 1 : 0;
	if (rc < 0)
		*err = run->err;
	*copied = run->eof;
	*used = 0;
	for (int i = 0; i < run->n; i++)
		*used += run->conn[i].moved > 0;
	for (int i = 0; i < run->n; i++) {
		struct conn *c = &run->conn[i];
		for (int k = 0; k < c->nspare; k++)
			free(c->spare[k]);
		for (int k = 0; k < c->nfull; k++)
			free(c->full[(c->full_head + k) % CHUNKS].buf);
	}
	pthread_cond_destroy(&run->cond);
	pthread_mutex_destroy(&run->lock);
	free(run);
	return rc;
}
