/* SPDX-License-Identifier: MIT */
/*
 * Parallel gzip (see pgzip.h). The caller's thread fills blocks and writes finished
 * ones out in order; worker threads compress. Blocks live in a ring of 2 * threads + 2
 * slots; a slot is reused only after its output was written, so memory is bounded.
 *
 * Each block is deflated on its own by libdeflate (about twice zlib's speed at the
 * same level, with a slightly better ratio; it has no preset dictionary, so a block
 * starts afresh, which costs well under 1% at this block size). libdeflate always
 * ends its output with a final block, so every block but the last is then made
 * "not final": a walk over its Huffman codes (deflate_walk.h; no inflating) says
 * where the final block's header starts, its BFINAL bit is cleared, and an
 * empty stored block (what a sync flush writes) brings the end to a byte boundary.
 * Concatenated, the blocks are one deflate stream: one gzip member, whose CRC is
 * combined from the blocks' CRCs.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>
#include <libdeflate.h>
#include <zlib.h>

#include "code/deflate_walk.h"
#include "code/pgzip.h"
#include "base/util.h"

enum slot_state { SLOT_FREE, SLOT_FILLING, SLOT_QUEUED, SLOT_DONE };

struct slot {
	enum slot_state state;
	unsigned char *in;
	size_t in_len;
	bool last;
	unsigned char *out;
	size_t out_len, out_cap;
	uLong crc;
	int zerr;               /* Z_OK, or what went wrong (a zlib code) */
};

/* What a thread compresses with: libdeflate's compressor, and the walker that finds
 * where libdeflate's final block starts. */
struct deflater {
	struct libdeflate_compressor *c;
	struct deflate_walk *walk;
	bool ok;
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
	struct deflater helper;
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

static bool deflater_init(struct deflater *d, int level)
{
	memset(d, 0, sizeof(*d));
	d->c = libdeflate_alloc_compressor(level);
	d->walk = deflate_walk_new();
	d->ok = d->c != NULL;
	return d->ok;
}

static void deflater_release(struct deflater *d)
{
	if (d->c)
		libdeflate_free_compressor(d->c);
	deflate_walk_free(d->walk);
}

/* Makes the deflate data in b->out (ended by a final block) end with a non-final
 * block on a byte boundary, so that more blocks may follow. */
static int unfinal(struct deflater *d, struct slot *b)
{
	uint64_t header, end;   /* bit offsets of the final block's header and end */
	if (deflate_walk_final(d->walk, b->out, b->out_len, &header, &end) < 0 ||
	    (end + 7) / 8 != b->out_len)
		return Z_DATA_ERROR;
	unsigned unused = (unsigned)(b->out_len * 8 - end);    /* padding bits */
	b->out[header / 8] &= (unsigned char)~(1u << (header % 8));
	b->out[b->out_len - 1] &= (unsigned char)(0xffu >> unused);   /* padding: zeros */
	if (unused < 3)         /* the stored block's 3 header bits need a byte */
		b->out[b->out_len++] = 0;
	static const unsigned char empty_stored[4] = { 0, 0, 0xff, 0xff };
	memcpy(b->out + b->out_len, empty_stored, 4);
	b->out_len += 4;
	return Z_OK;
}

static void compress_slot(struct deflater *d, struct slot *b)
{
	if (!d->ok) {
		b->zerr = Z_MEM_ERROR;
		return;
	}
	b->crc = libdeflate_crc32(0, b->in, b->in_len);
	b->out_len = libdeflate_deflate_compress(d->c, b->in, b->in_len, b->out, b->out_cap - 5);
	if (b->out_len == 0) {
		b->zerr = Z_BUF_ERROR;  /* cannot happen: out_cap is the bound */
		return;
	}
	b->zerr = b->last ? Z_OK : unfinal(d, b);
}

static void *worker(void *arg)
{
	struct pgzip *z = arg;
	struct deflater d;
	deflater_init(&d, z->level);

	pthread_mutex_lock(&z->lock);
	for (;;) {
		while (!z->quit && !(z->seq_taken < z->seq_fill &&
				     slot_of(z, z->seq_taken)->state == SLOT_QUEUED))
			pthread_cond_wait(&z->work, &z->lock);
		if (z->quit)
			break;
		struct slot *b = slot_of(z, z->seq_taken++);
		pthread_mutex_unlock(&z->lock);
		compress_slot(&d, b);
		pthread_mutex_lock(&z->lock);
		b->state = SLOT_DONE;
		pthread_cond_broadcast(&z->done);
	}
	pthread_mutex_unlock(&z->lock);
	deflater_release(&d);
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
	if (z->helper_state != 0)
		deflater_release(&z->helper);
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
		z->helper_state = deflater_init(&z->helper, z->level) ? 1 : -1;
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
			return dp_err(err, DPE_FAIL, "cannot compress the snapshot: deflate error %d", b->zerr);
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
		/* libdeflate's bound for any compressor (NULL), and the 5 bytes of unfinal() */
		b->out_cap = libdeflate_deflate_compress_bound(NULL, PGZIP_BLOCK) + 5;
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
