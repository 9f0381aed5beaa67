/* SPDX-License-Identifier: MIT */
/*
 * Parallel gzip, pigz-style: the input is cut into 1 MiB blocks, each block is
 * deflated on its own by libdeflate in a worker thread and made to end, not final,
 * on a byte boundary, and the blocks are written in order as one ordinary gzip
 * member whose CRC is combined from the blocks' CRCs. Any gzip reader reads it
 * (also those that read only a file's first member); the bytes depend only on the
 * input and the level, not on the number of threads. (Independent blocks of 1 MiB
 * compress within 0.4% of git archive's gzip on SLURM's source tree, 0.03% on the
 * Linux headers; 512 KiB cost 0.9% and 0.3%, 128 KiB 2%: bench/README.md.)
 *
 * The output goes through a write callback, always called from the thread that calls
 * pgzip_write()/pgzip_finish(), in order, so it may write to a file, a buffer or an
 * SSH channel. Memory stays bounded: at most a few blocks per thread are in flight.
 */
#ifndef DISPATCH_PGZIP_H
#define DISPATCH_PGZIP_H

#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

/* Where bytes go: return 0 when all len bytes were taken, -1 (errno set) to stop. */
typedef int (*dp_write_fn)(void *arg, const void *buf, size_t len);

#define PGZIP_BLOCK (1024 * 1024)

struct pgzip;

/* level 1..9 (0 means 6, as gzip); threads 0 means one worker per online CPU but
 * one (the caller's thread compresses too), and at least one. NULL, with err set,
 * when a worker thread cannot be started. */
struct pgzip *pgzip_new(int level, int threads, dp_write_fn write, void *arg,
			struct dp_error *err);
int pgzip_write(struct pgzip *z, const void *buf, size_t len, struct dp_error *err);
/* Compresses what is left and writes the gzip trailer. */
int pgzip_finish(struct pgzip *z, struct dp_error *err);
/* Stops the workers and frees everything, finished or not. NULL is fine. */
void pgzip_free(struct pgzip *z);
static inline void pgzip_freep(struct pgzip **z) { pgzip_free(*z); }
#define _cleanup_pgzip_ _cleanup_(pgzip_freep)

uint64_t pgzip_bytes_in(const struct pgzip *z);
uint64_t pgzip_bytes_out(const struct pgzip *z);

/* Online CPUs (at least 1). */
int pgzip_ncpus(void);

#endif
