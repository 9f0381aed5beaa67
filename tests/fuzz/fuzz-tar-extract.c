/* SPDX-License-Identifier: MIT */
/*
 * A download's tar stream from a hostile host (tar_extract_fd), aborting on a broken
 * property: whatever the stream holds, nothing is written outside the directory it
 * is extracted into (the root around it holds that directory and the input only),
 * and every entry kept is under its t.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/util.h"
#include "transport/tarcopy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 1 << 20)
		return 0;
	char root[] = "/tmp/fuzz-tar-extract.XXXXXX";
	if (!mkdtemp(root))
		abort();
	char *in = xasprintf("%s/in.tar", root), *dir = xasprintf("%s/x", root);
	int fd = open(in, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, data, size) != (ssize_t)size || lseek(fd, 0, SEEK_SET) != 0 ||
	    mkdir(dir, 0700) < 0)
		abort();
	struct dp_error err = { 0 };
	tar_extract_fd(fd, "dir", dir, &err);
	close(fd);
	/* the root holds x and in.tar, x holds t at most */
	DIR *d = opendir(root);
	for (struct dirent *de; d && (de = readdir(d));)
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..") &&
		    strcmp(de->d_name, "x") && strcmp(de->d_name, "in.tar"))
			abort();
	closedir(d);
	d = opendir(dir);
	for (struct dirent *de; d && (de = readdir(d));)
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..") && strcmp(de->d_name, "t"))
			abort();
	closedir(d);
	char *rm = xasprintf("chmod -R u+rwx '%s' 2>/dev/null; rm -rf '%s'", root, root);
	if (system(rm) != 0)
		abort();
	free(rm);
	free(in);
	free(dir);
	return 0;
}
