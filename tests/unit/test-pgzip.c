/* SPDX-License-Identifier: MIT */
/* The parallel gzip: round trips through zlib's gzip reader at sizes around the
 * block size, the trailer's CRC and size, identical bytes whatever the thread
 * count, the ratio of one libdeflate pass, a failing writer, and a worker thread that
 * cannot be started. */
#include <errno.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <libdeflate.h>
#include <zlib.h>

#include "code/pgzip.h"
#include "base/strbuf.h"
#include "../helpers/test-data.h"
#include "unit.h"

static int sink(void *arg, const void *buf, size_t len)
{
	strbuf_add(arg, buf, len);
	return 0;
}

static int failing_sink(void *arg, const void *buf, size_t len)
{
	int *calls = arg;
	if (++*calls > 2) {
		errno = ENOSPC;
		return -1;
	}
	return 0;
}

static unsigned char *make_input(size_t n, bool noise)
{
	return test_data(n, noise ? DATA_NOISE : DATA_TEXT);
}

static void compress_with(struct strbuf *out, const unsigned char *in, size_t n, int threads,
			  size_t chunk)
{
	struct dp_error err = { 0 };
	struct pgzip *z = pgzip_new(6, threads, sink, out, &err);
	CHECK(z != NULL);
	int r = 0;
	for (size_t off = 0; off < n && r == 0; off += chunk)
		r = pgzip_write(z, in + off, n - off < chunk ? n - off : chunk, &err);
	if (r == 0)
		r = pgzip_finish(z, &err);
	CHECK_INT(r, 0);
	CHECK_INT(pgzip_bytes_in(z), n);
	CHECK_INT(pgzip_bytes_out(z), out->len);
	pgzip_free(z);
}

/* Inflates a gzip stream with zlib's own gzip reader (which checks CRC and length);
 * returns the output, or NULL when zlib refuses it. */
static unsigned char *gunzip(const struct strbuf *gz, size_t *n)
{
	z_stream s = { 0 };
	if (inflateInit2(&s, 16 + 15) != Z_OK)
		return NULL;
	size_t cap = 1 << 16, len = 0;
	unsigned char *out = xmalloc(cap);
	s.next_in = (unsigned char *)gz->buf;
	s.avail_in = (uInt)gz->len;
	int r;
	do {
		if (cap - len < 4096) {
			cap *= 2;
			out = xrealloc(out, cap);
		}
		s.next_out = out + len;
		s.avail_out = (uInt)(cap - len);
		r = inflate(&s, Z_NO_FLUSH);
		len = cap - s.avail_out;
	} while (r == Z_OK);
	bool ok = r == Z_STREAM_END && s.avail_in == 0;
	inflateEnd(&s);
	if (!ok) {
		free(out);
		return NULL;
	}
	*n = len;
	return out;
}

static uint32_t le32(const char *p)
{
	const unsigned char *u = (const unsigned char *)p;
	return (uint32_t)u[0] | (uint32_t)u[1] << 8 | (uint32_t)u[2] << 16 | (uint32_t)u[3] << 24;
}

static void round_trip(size_t n, bool noise)
{
	unsigned char *in = make_input(n, noise);
	struct strbuf gz = STRBUF_INIT, gz1 = STRBUF_INIT;
	printf("# size %zu%s\n", n, noise ? " (noise)" : "");
	compress_with(&gz, in, n, 3, 10240);
	size_t m = 0;
	unsigned char *back = gunzip(&gz, &m);
	CHECK(back != NULL);
	CHECK_INT(m, n);
	CHECK(back && m == n && memcmp(back, in, n) == 0);

	/* Header: magic, deflate, no flags, no mtime, OS Unix. Trailer: CRC, size. */
	CHECK(gz.len >= 18 && memcmp(gz.buf, "\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03", 10) == 0);
	CHECK_INT(le32(gz.buf + gz.len - 8), crc32(crc32(0, NULL, 0), in, (uInt)n));
	CHECK_INT(le32(gz.buf + gz.len - 4), (uint32_t)n);

	/* The same bytes with one worker and another chunking. */
	compress_with(&gz1, in, n, 1, 777);
	CHECK(gz.len == gz1.len && memcmp(gz.buf, gz1.buf, gz.len) == 0);

	free(back);
	free(in);
	strbuf_release(&gz);
	strbuf_release(&gz1);
}

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#endif

/* No room for a thread's stack (address space capped a little above what is mapped
 * now): pgzip_new says why instead of aborting. In a child, so the cap stays there;
 * not under ASan, whose shadow memory needs the address space. */
static void thread_cannot_start(void)
{
#if defined(__linux__) && !defined(UNDER_ASAN)
	pid_t pid = fork();
	if (pid == 0) {
		long pages = 0;
		FILE *f = fopen("/proc/self/statm", "r");
		if (!f || fscanf(f, "%ld", &pages) != 1)
			_exit(3);
		fclose(f);
		rlim_t cap = (rlim_t)pages * (rlim_t)sysconf(_SC_PAGESIZE) + (2 << 20);
		struct rlimit rl = { cap, cap };
		if (setrlimit(RLIMIT_AS, &rl) < 0)
			_exit(3);
		struct strbuf gz = STRBUF_INIT;
		struct dp_error err = { 0 };
		struct pgzip *z = pgzip_new(6, 2, sink, &gz, &err);
		if (z)
			_exit(1);
		_exit(strstr(err.msg, "cannot start a compression thread: ") ? 0 : 2);
	}
	int status = -1;
	CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status));
	CHECK_INT(WEXITSTATUS(status), 0);
#else
	printf("# skipped: the thread that cannot start (not Linux, or under ASan)\n");
#endif
}

int main(void)
{
	const size_t B = PGZIP_BLOCK;
	/* first: glibc keeps the stacks of joined threads for new ones, also in a child */
	thread_cannot_start();
	size_t sizes[] = { 0, 1, 100, B - 1, B, B + 1, 2 * B, 3 * B - 7, 7 * B + 12345 };
	for (size_t i = 0; i < ARRAY_SIZE(sizes); i++)
		round_trip(sizes[i], false);
	round_trip(B + 1, true);
	round_trip(5 * B + 3, true);

	/* Compression ratio: cutting into blocks costs under 1% against one libdeflate
	 * pass over the whole input at the same level, on 4 MiB of text. (libdeflate
	 * against zlib depends on the data: on source trees the size is git archive's,
	 * bench/README.md; on this ten-word text zlib does 10% better.) */
	{
		size_t n = 4 << 20;
		unsigned char *in = make_input(n, false);
		struct strbuf gz = STRBUF_INIT;
		compress_with(&gz, in, n, 2, 65536);
		struct libdeflate_compressor *c = libdeflate_alloc_compressor(6);
		CHECK(c != NULL);
		size_t cap = libdeflate_gzip_compress_bound(c, n);
		unsigned char *whole = xmalloc(cap);
		size_t wn = libdeflate_gzip_compress(c, in, n, whole, cap);
		CHECK(wn > 0);
		printf("# pgzip %zu bytes, libdeflate in one pass %zu bytes\n", gz.len, wn);
		CHECK(gz.len <= wn + wn / 100);
		libdeflate_free_compressor(c);
		free(whole);
		free(in);
		strbuf_release(&gz);
	}

	/* A writer that fails: the error says why, and later calls fail too. */
	{
		int calls = 0;
		struct dp_error err = { 0 };
		unsigned char *in = make_input(10 * B, true);
		struct pgzip *z = pgzip_new(6, 2, failing_sink, &calls, &err);
		int r = pgzip_write(z, in, 10 * B, &err);
		if (r == 0)
			r = pgzip_finish(z, &err);
		CHECK_INT(r, -1);
		CHECK_CONTAINS(err.msg, "cannot write the compressed snapshot");
		CHECK_CONTAINS(err.msg, strerror(ENOSPC));
		CHECK_INT(pgzip_finish(z, &err), -1);
		pgzip_free(z);
		free(in);
	}

	/* Freed without finishing, with blocks in flight: no leak, no hang. */
	{
		struct strbuf gz = STRBUF_INIT;
		struct dp_error err = { 0 };
		unsigned char *in = make_input(9 * B, false);
		struct pgzip *z = pgzip_new(6, 4, sink, &gz, &err);
		CHECK_INT(pgzip_write(z, in, 9 * B, &err), 0);
		pgzip_free(z);
		free(in);
		strbuf_release(&gz);
	}
	return unit_done();
}
