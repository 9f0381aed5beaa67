/* SPDX-License-Identifier: MIT */
/*
 * Parallel gzip (see pgzip.h). The caller's thread fills blocks and writes finished
 * ones out in order; worker threads compress. Blocks live in a ring of 2 * threads + 2
 * slots; a slot is reused only after its output was written, so memory is bounded.
 *
 * Each block but the last is raw deflate ended by Z_SYNC_FLUSH (byte-aligned, not
 * final); the last ends with Z_FINISH. Concatenated, they are one deflate stream.
 * A block's dictionary is the last 32 KiB of the block before it, copied into the
 * slot when the block is started, so the compression ratio stays gzip's.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "code/pgzip.h"
#include "base/util.h"

#define DICT (32 * 1024)

enum slot_state { SLOT_FREE, SLOT_FILLING, SLOT_QUEUED, SLOT_DONE };

struct slot {
	enum slot_state state;
	unsigned char *in;
	size_t in_len;
	unsigned char dict[DICT];
	size_t dict_len;
	bool last;
	unsigned char *out;
	size_t out_len, out_cap;
	uLong crc;
	int zerr;               /* Z_OK, or what deflate said */
};

struct pgzip {
	int level;
	dp_write_fn write;
	void *arg;

	pthread_mutex_t lock;
	pthread_cond_t work;    /* workers: a block was queued, or quit */
	pthread_cond_t done;    /* caller: a block was compressed */
	pthread_t *threads;
	int nthreads;
	bool quit;

	struct slot *slots;
	size_t nslots;
	uint64_t seq_fill;      /* the block being filled */
	uint64_t seq_taken;     /* next block a worker takes */
	uint64_t seq_write;     /* next block to write out */

	uLong crc;
	uint64_t bytes_in, bytes_out;
	bool header_written, failed;

	/* The caller's thread compresses queued blocks itself rather than wait idle. */
	z_stream helper;
	int helper_state;       /* 0 not set up, 1 ready, -1 failed */
};

int pgzip_ncpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n < 1 ? 1 : n > 64 ? 64 : (int)n;
}

static struct slot *slot_of(struct pgzip *z, uint64_t seq)
{
	return &z->slots[seq % z->nslots];
}

static void compress_slot(z_stream *s, struct slot *b)
{
	b->crc = crc32(0L, b->in, (uInt)b->in_len);
	if (deflateReset(s) != Z_OK) {
		b->zerr = Z_STREAM_ERROR;
		return;
	}
	if (b->dict_len && deflateSetDictionary(s, b->dict, (uInt)b->dict_len) != Z_OK) {
		b->zerr = Z_STREAM_ERROR;
		return;
	}
	s->next_in = b->in;
	s->avail_in = (uInt)b->in_len;
	b->out_len = 0;
	int flush = b->last ? Z_FINISH : Z_SYNC_FLUSH;
	for (;;) {
		if (b->out_cap - b->out_len < 64) {
			b->out_cap *= 2;
			b->out = xrealloc(b->out, b->out_cap);
		}
		s->next_out = b->out + b->out_len;
		s->avail_out = (uInt)(b->out_cap - b->out_len);
		int r = deflate(s, flush);
		b->out_len = b->out_cap - s->avail_out;
		if (r == Z_STREAM_END)
			break;
		if (r != Z_OK && r != Z_BUF_ERROR) {
			b->zerr = r;
			return;
		}
		/* Done with a sync flush when deflate had room to spare. */
		if (flush == Z_SYNC_FLUSH && s->avail_in == 0 && s->avail_out > 0)
			break;
	}
	b->zerr = Z_OK;
}

static void *worker(void *arg)
{
	struct pgzip *z = arg;
	z_stream s = { 0 };
	bool ok = deflateInit2(&s, z->level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) == Z_OK;

	pthread_mutex_lock(&z->lock);
	for (;;) {
		while (!z->quit && !(z->seq_taken < z->seq_fill &&
				     slot_of(z, z->seq_taken)->state == SLOT_QUEUED))
			pthread_cond_wait(&z->work, &z->lock);
		if (z->quit)
			break;
		struct slot *b = slot_of(z, z->seq_taken++);
		pthread_mutex_unlock(&z->lock);
		if (ok)
			compress_slot(&s, b);
		else
			b->zerr = Z_MEM_ERROR;
		pthread_mutex_lock(&z->lock);
		b->state = SLOT_DONE;
		pthread_cond_broadcast(&z->done);
	}
	pthread_mutex_unlock(&z->lock);
	if (ok)
		deflateEnd(&s);
	return NULL;
}

struct pgzip *pgzip_new(int level, int threads, dp_write_fn write, void *arg,
			struct dp_error *err)
{
	struct pgzip *z = xcalloc(1, sizeof(*z));
	z->level = level >= 1 && level <= 9 ? level : 6;
	z->write = write;
	z->arg = arg;
	/* The caller's thread reads the input and compresses too (help): one worker per
	 * other CPU. One per CPU on top of it was slower: on 2 cores, 1.26 s against
	 * 1.01 s and 13% more CPU time for bench/snapshot.sh's tree. */
	z->nthreads = threads > 0 ? threads : pgzip_ncpus() > 1 ? pgzip_ncpus() - 1 : 1;
	z->nslots = 2 * (size_t)z->nthreads + 2;
	z->slots = xcalloc(z->nslots, sizeof(*z->slots));
	z->crc = crc32(0L, Z_NULL, 0);
	pthread_mutex_init(&z->lock, NULL);
	pthread_cond_init(&z->work, NULL);
	pthread_cond_init(&z->done, NULL);
	z->threads = xcalloc(z->nthreads, sizeof(*z->threads));
	for (int i = 0; i < z->nthreads; i++) {
		int r = pthread_create(&z->threads[i], NULL, worker, z);
		if (r != 0) {
			z->nthreads = i; /* pgzip_free joins the ones started */
			pgzip_free(z);
			dp_err(err, DPE_FAIL, "cannot start a compression thread: %s", strerror(r));
			return NULL;
		}
	}
	struct slot *b = slot_of(z, 0);
	b->in = xmalloc(PGZIP_BLOCK);
	b->state = SLOT_FILLING;
	return z;
}

void pgzip_free(struct pgzip *z)
{
	if (!z)
		return;
	pthread_mutex_lock(&z->lock);
	z->quit = true;
	pthread_cond_broadcast(&z->work);
	pthread_mutex_unlock(&z->lock);
	for (int i = 0; i < z->nthreads; i++)
		pthread_join(z->threads[i], NULL);
	for (size_t i = 0; i < z->nslots; i++) {
		free(z->slots[i].in);
		free(z->slots[i].out);
	}
	if (z->helper_state > 0)
		deflateEnd(&z->helper);
	pthread_cond_destroy(&z->done);
	pthread_cond_destroy(&z->work);
	pthread_mutex_destroy(&z->lock);
	free(z->slots);
	free(z->threads);
	free(z);
}

uint64_t pgzip_bytes_in(const struct pgzip *z)
{
	return z->bytes_in;
}

uint64_t pgzip_bytes_out(const struct pgzip *z)
{
	return z->bytes_out;
}

static int emit(struct pgzip *z, const void *buf, size_t len, struct dp_error *err)
{
	if (len == 0)
		return 0;
	errno = 0;
	if (z->write(z->arg, buf, len) < 0) {
		z->failed = true;
		return dp_err(err, DPE_FAIL, "cannot write the compressed snapshot: %s",
			      strerror(errno ? errno : EIO));
	}
	z->bytes_out += len;
	return 0;
}

/* Compresses a queued block in the caller's thread, if there is one no worker took
 * yet. Called with the lock held; returns it held. */
static bool help(struct pgzip *z)
{
	if (z->seq_taken >= z->seq_fill || z->helper_state < 0)
		return false;
	if (z->helper_state == 0)
		z->helper_state = deflateInit2(&z->helper, z->level, Z_DEFLATED, -15, 8,
					       Z_DEFAULT_STRATEGY) == Z_OK ? 1 : -1;
	if (z->helper_state < 0)
		return false;
	struct slot *b = slot_of(z, z->seq_taken++);
	pthread_mutex_unlock(&z->lock);
	compress_slot(&z->helper, b);
	pthread_mutex_lock(&z->lock);
	b->state = SLOT_DONE;
	return true;
}

/* Writes out every finished block at the head of the ring; waits (helping with the
 * compression) until block `until` (exclusive) has been written. Called with the
 * lock not held. */
static int drain(struct pgzip *z, uint64_t until, struct dp_error *err)
{
	pthread_mutex_lock(&z->lock);
	while (z->seq_write < z->seq_fill) {
		struct slot *b = slot_of(z, z->seq_write);
		if (b->state != SLOT_DONE) {
			if (z->seq_write >= until)
				break;
			if (!help(z))
				pthread_cond_wait(&z->done, &z->lock);
			continue;
		}
		pthread_mutex_unlock(&z->lock);
		if (b->zerr != Z_OK) {
			z->failed = true;
			return dp_err(err, DPE_FAIL, "cannot compress the snapshot: zlib error %d", b->zerr);
		}
		if (emit(z, b->out, b->out_len, err) < 0)
			return -1;
		z->crc = crc32_combine(z->crc, b->crc, (z_off_t)b->in_len);
		pthread_mutex_lock(&z->lock);
		b->state = SLOT_FREE;
		z->seq_write++;
	}
	pthread_mutex_unlock(&z->lock);
	return 0;
}

/* Queues the block being filled and starts the next one (waiting for its slot). */
static int submit(struct pgzip *z, bool last, struct dp_error *err)
{
	struct slot *b = slot_of(z, z->seq_fill);
	b->last = last;
	if (!b->out) {
		b->out_cap = compressBound(PGZIP_BLOCK) + 1024;
		b->out = xmalloc(b->out_cap);
	}
	pthread_mutex_lock(&z->lock);
	b->state = SLOT_QUEUED;
	z->seq_fill++;
	pthread_cond_signal(&z->work);
	pthread_mutex_unlock(&z->lock);
	if (last)
		return drain(z, z->seq_fill, err);

	/* The next slot must have been written out before it is refilled. */
	if (drain(z, z->seq_fill + 1 > z->nslots ? z->seq_fill + 1 - z->nslots : 0, err) < 0)
		return -1;
	struct slot *n = slot_of(z, z->seq_fill);
	if (!n->in)
		n->in = xmalloc(PGZIP_BLOCK);
	n->in_len = 0;
	n->dict_len = b->in_len < DICT ? b->in_len : DICT;
	memcpy(n->dict, b->in + b->in_len - n->dict_len, n->dict_len);
	n->state = SLOT_FILLING;
	return 0;
}

static int write_header(struct pgzip *z, struct dp_error *err)
{
	/* No name, no mtime (deterministic), OS "Unix" whatever the platform. */
	unsigned char h[10] = { 0x1f, 0x8b, 8, 0, 0, 0, 0, 0,
				z->level == 9 ? 2 : z->level == 1 ? 4 : 0, 3 };
	z->header_written = true;
	return emit(z, h, sizeof(h), err);
}

int pgzip_write(struct pgzip *z, const void *buf, size_t len, struct dp_error *err)
{
	const unsigned char *p = buf;
	if (z->failed)
		return dp_err(err, DPE_FAIL, "cannot write the compressed snapshot: an earlier write failed");
	if (!z->header_written && write_header(z, err) < 0)
		return -1;
	z->bytes_in += len;
	while (len > 0) {
		struct slot *b = slot_of(z, z->seq_fill);
		size_t n = PGZIP_BLOCK - b->in_len;
		if (n > len)
			n = len;
		memcpy(b->in + b->in_len, p, n);
		b->in_len += n;
		p += n;
		len -= n;
		if (b->in_len == PGZIP_BLOCK && submit(z, false, err) < 0)
			return -1;
	}
	return 0;
}

int pgzip_finish(struct pgzip *z, struct dp_error *err)
{
	if (z->failed)
		return dp_err(err, DPE_FAIL, "cannot write the compressed snapshot: an earlier write failed");
	if (!z->header_written && write_header(z, err) < 0)
		return -1;
	if (submit(z, true, err) < 0)
		return -1;
	unsigned char t[8];
	uint32_t crc = (uint32_t)z->crc, size = (uint32_t)z->bytes_in;
	for (int i = 0; i < 4; i++) {
		t[i] = (unsigned char)(crc >> (8 * i));
		t[4 + i] = (unsigned char)(size >> (8 * i));
	}
	return emit(z, t, sizeof(t), err);
}
