/* SPDX-License-Identifier: MIT */
/* lib/transport/sftp.c: how cp operands split into HOST and PATH (scp's rules); what
 * a copy takes of a directory listing (sftp_listing_check) and how the names it
 * refuses are shown (term_escape). */
#include "transport/sftp.h"
#include "transport/sftp_fs.h"
#include "unit.h"
#include "base/termesc.h"
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

static void esc(const char *s, size_t len, const char *want)
{
	char *got = term_escape(s, len);
	CHECK_STR(got, want);
	free(got);
}

static struct sftp_dirent ent(const char *name, size_t len, int type)
{
	struct sftp_dirent e = { .len = len, .has_st = type >= 0 };
	e.name = xmalloc(len + 1);
	memcpy(e.name, name, len + 1);
	e.st.type = type == 1 ? T_DIR : T_FILE;
	return e;
}

static void listing(void)
{
	struct sftp_dirent e[] = {
		ent("b", 1, 0), ent(".", 1, 0), ent(".", 1, 1), ent("..", 2, 1), ent("../x", 4, 0),
		ent("", 0, 0), ent("a\0b", 3, 0), ent("b", 1, 1), ent("a", 1, 1), ent("/abs", 4, 0),
		ent("..", 2, 1), ent("\033[31m", 5, 0),
	};
	char **names = NULL, **refused = NULL;
	struct fstat_ *sts = NULL;
	sftp_listing_check("h", "d", e, ARRAY_SIZE(e), &names, &sts, &refused);
	CHECK_INT(strv_len(names), 3);
	CHECK_STR(names[0], "\033[31m");
	CHECK_STR(names[1], "a");
	CHECK_STR(names[2], "b");
	CHECK(sts && sts[1].type == T_DIR && sts[2].type == T_FILE);  /* the first "b" listed */
	CHECK_INT(strv_len(refused), 7);
	const char *want[] = {
		"skipping the name '' that 'h' listed in 'd': it is empty",
		"skipping the name '.' that 'h' listed in 'd': it names the directory itself",
		"skipping the name '..' that 'h' listed in 'd': it names the directory above",
		"skipping the name '../x' that 'h' listed in 'd': it holds a '/'",
		"skipping the name '/abs' that 'h' listed in 'd': it holds a '/'",
		"skipping the name 'a\\x00b' that 'h' listed in 'd': it holds a NUL byte",
		"skipping the name 'b' that 'h' listed in 'd': it was listed before",
	};
	for (size_t i = 0; i < ARRAY_SIZE(want) && refused && refused[i]; i++) {
		printf("# %s\n", refused[i]);
		CHECK(startswith(refused[i], want[i]));
	}
	strv_free(names);
	strv_free(refused);
	free(sts);
}

int main(void)
{
	esc("plain/ü", 8, "plain/ü");
	esc("a\0b", 3, "a\\x00b");
	esc("\033]0;x\007", 6, "\\e]0;x\\x07");
	esc("\\\n\t\x7f", 4, "\\\\\\n\\t\\x7f");
	esc("\xc2\x9b" "1m", 4, "\\xc2\\x9b1m");     /* C1 CSI in UTF-8 */
	esc("\xff\xc3", 2, "\\xff\\xc3");           /* not UTF-8 */
	listing();
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
