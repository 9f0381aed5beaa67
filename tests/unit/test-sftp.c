/* SPDX-License-Identifier: MIT */
/* lib/transport/sftp.c: how cp operands split into HOST and PATH (scp's rules). */
#include "transport/sftp.h"
#include "unit.h"
#include "base/util.h"

static void check(const char *arg, const char *host, const char *path)
{
	char *h = NULL, *p = NULL;
	bool remote = sftp_split_operand(arg, &h, &p);
	printf("# %s\n", arg);
	if (!host) {
		CHECK(!remote);
		CHECK(!h && !p);
	} else {
		CHECK(remote);
		CHECK_STR(h, host);
		CHECK_STR(p, path);
	}
	free(h);
	free(p);
}

int main(void)
{
	check("box1:data/x", "box1", "data/x");
	check("box1:", "box1", "");
	check("box1:~/x", "box1", "~/x");
	check("me@box1:/abs/path", "me@box1", "/abs/path");
	check("box1:a:b", "box1", "a:b");               /* the first colon splits */
	check("box1:2222:/x", "box1:2222", "/x");        /* host:PORT:path */
	check("me@box1:2222:", "me@box1:2222", "");
	check("box1:22x:/x", "box1", "22x:/x");          /* not a port */
	check("[::1]:path", "[::1]", "path");
	check("me@[fe80::1]:2222:p", "me@[fe80::1]:2222", "p");
	check("a:b", "a", "b");
	/* local */
	check("file", NULL, NULL);
	check("./a:b", NULL, NULL);
	check("../a:b", NULL, NULL);
	check("/x:y", NULL, NULL);
	check("dir/a:b", NULL, NULL);
	check(":x", NULL, NULL);
	check("[::1", NULL, NULL);
	check("", NULL, NULL);
	return unit_done();
}
