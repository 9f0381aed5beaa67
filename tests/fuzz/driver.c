/* SPDX-License-Identifier: MIT */
/*
 * Runs a fuzz target over files (the corpus) without libFuzzer, so that every build,
 * the sanitize one included, replays the corpus as a regression test. With clang the
 * same targets also build against libFuzzer (see tests/meson.build).
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		perror(path);
		return 1;
	}
	size_t cap = 1 << 16, n = 0;
	uint8_t *buf = malloc(cap);
	size_t r;
	while (buf && (r = fread(buf + n, 1, cap - n, f)) > 0) {
		n += r;
		if (n == cap)
			buf = realloc(buf, cap *= 2);
	}
	fclose(f);
	if (!buf)
		return 1;
	/* Exact-size copy so that ASan sees reads past the end. */
	uint8_t *exact = malloc(n ? n : 1);
	memcpy(exact, buf, n);
	free(buf);
	LLVMFuzzerTestOneInput(exact, n);
	free(exact);
	return 0;
}

int main(int argc, char **argv)
{
	int files = 0, bad = 0;
	for (int i = 1; i < argc; i++) {
		struct stat st;
		if (stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode)) {
			DIR *d = opendir(argv[i]);
			struct dirent *e;
			while (d && (e = readdir(d))) {
				if (e->d_name[0] == '.')
					continue;
				char path[4096];
				snprintf(path, sizeof(path), "%s/%s", argv[i], e->d_name);
				bad += run_file(path);
				files++;
			}
			if (d)
				closedir(d);
		} else {
			bad += run_file(argv[i]);
			files++;
		}
	}
	printf("1..1\n%s 1 - %d corpus inputs replayed\n", bad || !files ? "not ok" : "ok", files);
	return bad || !files;
}
