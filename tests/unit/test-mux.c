/* SPDX-License-Identifier: MIT */
/*
 * lib/transport/mux.c without sshd: the encoders against the bytes OpenSSH 9.2's own
 * client sent to its master, the parser against what the master answered (both
 * captured with strace), and the client's decisions against fake masters forked here
 * (refusals, wrong versions, silence, a session that ends without an exit message
 * while the master lives, and one whose master is gone). t5700 runs it against real
 * masters.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>

#include "transport/mux.h"
#include "unit.h"

static size_t unhex(const char *hex, uint8_t *out)
{
	size_t n = 0;
	for (; hex[0] && hex[1]; hex += 2) {
		unsigned v;
		sscanf(hex, "%2x", &v);
		out[n++] = (uint8_t)v;
	}
	return n;
}

static bool same_bytes(const struct strbuf *sb, const char *hex)
{
	uint8_t want[1024];
	size_t n = unhex(hex, want);
	return sb->len == n && memcmp(sb->buf, want, n) == 0;
}

static void test_encoders(void)
{
	struct strbuf sb = STRBUF_INIT;
	/* ssh -e none HOST 'echo hi; exit 7' through a master (TERM=xterm, no tty) */
	mux_put_hello(&sb);
	mux_put_alive_check(&sb, 0);
	struct mux_exec x1 = { .command = "echo hi; exit 7", .term = "xterm" };
	mux_put_new_session(&sb, 1, &x1);
	CHECK(same_bytes(&sb, "00000008000000010000000400000008100000040000000000"
			      "00003c10000002000000010000000000000000000000000000000000000000ffffffff"
			      "00000005787465726d0000000f6563686f2068693b20657869742037"));
	strbuf_reset(&sb);
	/* ssh -W 127.0.0.1:31701 HOST: the port is a uint32, whatever PROTOCOL.mux says */
	mux_put_stdio_fwd(&sb, 1, "127.0.0.1", 31701);
	CHECK(same_bytes(&sb, "0000001d100000080000000100000000000000093132372e302e302e3100007bd5"));
	strbuf_reset(&sb);
	/* ssh -e -s HOST sftp (no TERM in the environment) */
	struct mux_exec x3 = { .command = "sftp", .subsystem = true };
	mux_put_new_session(&sb, 1, &x3);
	CHECK(same_bytes(&sb, "0000002c10000002000000010000000000000000000000000000000000000001ffffffff"
			      "000000000000000473667470"));
	strbuf_reset(&sb);
	/* a pty, TERM and the environment strings follow the command */
	const char *env[] = { "LANG=C", NULL };
	struct mux_exec x2 = { .command = "x", .pty = true, .term = "vt100", .env = env };
	mux_put_new_session(&sb, 9, &x2);
	CHECK(same_bytes(&sb, "0000003810000002000000090000000000000001000000000000000000000000ffffffff"
			      "0000000576743130300000000178000000064c414e473d43"));
	strbuf_release(&sb);
}

static void test_parser(void)
{
	uint8_t buf[512];
	struct mux_msg m;
	struct dp_error err;
	/* the master's answers to a session ending with 7 (captured) */
	size_t n = unhex("0000000800000001000000040000000c8000000600000001000000020000000c80000004"
			 "0000000200000007", buf);
	CHECK_INT(mux_parse(buf, n, &m, &err), 12);
	CHECK(m.type == MUX_MSG_HELLO && m.a == 4);
	CHECK_INT(mux_parse(buf + 12, n - 12, &m, &err), 16);
	CHECK(m.type == MUX_S_SESSION_OPENED && m.a == 1 && m.b == 2);
	CHECK_INT(mux_parse(buf + 28, n - 28, &m, &err), 16);
	CHECK(m.type == MUX_S_EXIT_MESSAGE && m.a == 2 && m.b == 7);
	/* every prefix of a message is "read more", never an error */
	bool partial_ok = true;
	for (size_t k = 0; k < 16; k++)
		partial_ok = partial_ok && mux_parse(buf + 28, k, &m, &err) == 0;
	CHECK(partial_ok);
	/* a refused stdio forward (captured): the reason */
	n = unhex("0000002880000003000000010000001c53657373696f6e206f70656e20726566757365642062"
		  "792070656572", buf);
	CHECK_INT(mux_parse(buf, n, &m, &err), 44);
	CHECK(m.type == MUX_S_FAILURE && m.a == 1);
	CHECK_STR(m.reason, "Session open refused by peer");
	/* alive: the pid */
	n = unhex("0000000c800000050000000100001e64", buf);
	CHECK_INT(mux_parse(buf, n, &m, &err), 16);
	CHECK(m.type == MUX_S_ALIVE && m.a == 1 && m.b == 0x1e64);
	/* a reason with control bytes and one too long to keep */
	n = unhex("0000001080000002000000050000000461" "1b" "0a" "62", buf);
	CHECK_INT(mux_parse(buf, n, &m, &err), 20);
	CHECK_STR(m.reason, "a??b");
	uint8_t big[8 + 4 + 4 + 400];
	memcpy(big, "\0\0\x01\x9c\x80\0\0\x03\0\0\0\x07\0\0\x01\x90", 16);
	memset(big + 16, 'r', 400);
	CHECK_INT(mux_parse(big, sizeof(big), &m, &err), (long long)sizeof(big));
	CHECK_INT(strlen(m.reason), 255);
	/* hello with extensions; unknown types parse with no fields */
	n = unhex("00000015000000010000000400000001780000000479797979", buf);
	CHECK_INT(mux_parse(buf, n, &m, &err), 25);
	CHECK(m.type == MUX_MSG_HELLO && m.a == 4);
	n = unhex("0000000412345678", buf);
	CHECK_INT(mux_parse(buf, n, &m, &err), 8);
	CHECK(m.type == 0x12345678u);
	/* malformed: short length, huge length, a string past the end, a missing field,
	 * an odd extension */
	n = unhex("0000000200000000", buf);
	CHECK_INT(mux_parse(buf, n, &m, &err), -1);
	CHECK_INT(err.kind, DPE_CONNECT);
	CHECK_CONTAINS(err.msg, "bad mux message length 2");
	n = unhex("0100000080000001", buf);
	CHECK_INT(mux_parse(buf, n, &m, &err), -1);
	n = unhex("0000000c8000000300000001000003e8", buf);
	CHECK_INT(mux_parse(buf, n, &m, &err), -1);
	CHECK_INT(err.kind, DPE_CONNECT);
	CHECK_CONTAINS(err.msg, "malformed mux message of type 0x80000003");
	n = unhex("000000088000000400000002", buf);
	CHECK_INT(mux_parse(buf, n, &m, &err), -1);
	n = unhex("0000000d00000001000000040000000178", buf);
	CHECK_INT(mux_parse(buf, n, &m, &err), -1);
}

static void test_login_command(void)
{
	struct strbuf sb = STRBUF_INIT;
	mux_login_command(&sb, "echo 'a b'; exit 3", false);
	CHECK(startswith(sb.buf, "exec /bin/sh -c s\\=\\$\\(printf\\ \\%s\\ "));
	CHECK(!strchr(sb.buf, '\n') && !strstr(sb.buf, " '"));
	strbuf_release(&sb);
	/* what sh makes of it: the status of a signal, the real stderr, no "Terminated" */
	static const struct { const char *cmd; int status; const char *err; } cases[] = {
		{ "exit 3", 3, "" },
		{ "kill -TERM $$", 143, "" },
		{ "echo oops >&2; kill -KILL $$", 137, "oops\n" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct strbuf cmd = STRBUF_INIT;
		mux_login_command(&cmd, cases[i].cmd, false);
		char errfile[] = "/tmp/test-mux-err.XXXXXX";
		int fd = mkstemp(errfile);
		pid_t pid = fork();
		if (pid == 0) {
			dup2(fd, 2);
			setenv("SHELL", "/bin/sh", 1);
			execl("/bin/sh", "sh", "-c", cmd.buf, (char *)NULL);
			_exit(127);
		}
		int st;
		waitpid(pid, &st, 0);
		CHECK(WIFEXITED(st));
		CHECK_INT(WEXITSTATUS(st), cases[i].status);
		char got[64] = "";
		ssize_t k = pread(fd, got, sizeof(got) - 1, 0);
		got[k > 0 ? k : 0] = '\0';
		CHECK_STR(got, cases[i].err);
		close(fd);
		unlink(errfile);
		strbuf_release(&cmd);
	}
}

/* ---- fake masters ------------------------------------------------------------- */

static char dir[] = "/tmp/test-mux.XXXXXX";

static char *sock_path(const char *name)
{
	return xasprintf("%s/%s", dir, name);
}

static int listen_at(const char *path)
{
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	unlink(path);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 8) < 0)
		abort();
	return fd;
}

static void put(int fd, const char *hex)
{
	uint8_t b[512];
	size_t n = unhex(hex, b);
	if (write(fd, b, n) != (ssize_t)n)
		_exit(3);
}

/* Read one client message (and the fds that follow a session or forward request). */
static uint32_t take(int fd)
{
	uint8_t h[4], body[4096];
	if (read(fd, h, 4) != 4)
		_exit(0);
	uint32_t n = (uint32_t)h[0] << 24 | (uint32_t)h[1] << 16 | (uint32_t)h[2] << 8 | h[3];
	size_t got = 0;
	while (got < n) {
		ssize_t r = read(fd, body + got, n - got);
		if (r <= 0)
			_exit(0);
		got += (size_t)r;
	}
	uint32_t type = (uint32_t)body[0] << 24 | (uint32_t)body[1] << 16 |
			(uint32_t)body[2] << 8 | body[3];
	int nfds = type == MUX_C_NEW_SESSION ? 3 : type == MUX_C_NEW_STDIO_FWD ? 2 : 0;
	for (int i = 0; i < nfds; i++) {
		char byte;
		union { struct cmsghdr h; char b[CMSG_SPACE(sizeof(int))]; } ctl;
		struct iovec iov = { &byte, 1 };
		struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.b,
				      .msg_controllen = sizeof(ctl.b) };
		if (recvmsg(fd, &msg, 0) != 1)
			_exit(4);
		int passed;
		memcpy(&passed, CMSG_DATA(CMSG_FIRSTHDR(&msg)), sizeof(int));
		if (i == 1 && type == MUX_C_NEW_SESSION && write(passed, "out\n", 4) != 4)
			_exit(5);
		close(passed);
	}
	return type;
}

#define HELLO "000000080000000100000004"
#define ALIVE "0000000c800000050000000100000063" /* request 1, pid 99 */

/* A fake master: behaviour per connection, in order; the last one repeats. */
enum fake { F_HELLO_V3, F_NOT_MASTER, F_SILENT, F_ALIVE, F_REFUSE_SESSION, F_OPEN_THEN_CLOSE,
	    F_OPEN_EXIT_5, F_OPEN_THEN_DIE };

static pid_t fake_master(const char *path, const enum fake *script, size_t n)
{
	int lfd = listen_at(path);
	pid_t pid = fork();
	if (pid != 0) {
		close(lfd);
		return pid;
	}
	for (size_t i = 0;; i++) {
		int c = accept(lfd, NULL, NULL);
		if (c < 0)
			_exit(1);
		enum fake f = script[i < n ? i : n - 1];
		switch (f) {
		case F_HELLO_V3:
			take(c);
			put(c, "000000080000000100000003");
			break;
		case F_NOT_MASTER:
			take(c);
			put(c, "000000088000000100000000");
			break;
		case F_SILENT:
			pause();
			break;
		case F_ALIVE:
			put(c, HELLO);
			take(c);
			take(c);
			put(c, ALIVE);
			break;
		case F_REFUSE_SESSION:
			put(c, HELLO);
			take(c);
			take(c);
			put(c, "000000148000000300000001000000086e6f7420746f6461");
			break;
		case F_OPEN_THEN_CLOSE:
		case F_OPEN_EXIT_5:
		case F_OPEN_THEN_DIE:
			put(c, HELLO);
			take(c);
			take(c);
			put(c, "0000000c800000060000000100000007");
			if (f == F_OPEN_EXIT_5)
				put(c, "0000000c800000040000000700000005");
			if (f == F_OPEN_THEN_DIE) {
				close(lfd);
				unlink(path);
				_exit(0);
			}
			break;
		}
		close(c);
	}
}

static void stop(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

static void test_open_failures(void)
{
	struct mux *m = NULL;
	enum mux_failure why;
	struct dp_error err;
	_cleanup_free_ char *none = sock_path("none"), *file = sock_path("file"),
			    *stale = sock_path("stale"), *v3 = sock_path("v3"),
			    *other = sock_path("other"), *silent = sock_path("silent");

	CHECK_INT(mux_open(none, 2000, &m, &why, &err), -1);
	CHECK(m == NULL && why == MUX_FAILED_NO_SOCKET);
	CHECK_INT(err.kind, DPE_CONNECT);
	CHECK_CONTAINS(err.msg, "no master at");

	close(open(file, O_CREAT | O_WRONLY, 0600));
	CHECK_INT(mux_open(file, 2000, &m, &why, &err), -1);
	CHECK(why == MUX_FAILED_NOT_SOCKET);
	CHECK_INT(err.kind, DPE_CONNECT);
	CHECK_CONTAINS(err.msg, "is not a socket");

	close(listen_at(stale)); /* the file stays, nothing listens */
	CHECK_INT(mux_open(stale, 2000, &m, &why, &err), -1);
	CHECK(why == MUX_FAILED_STALE);
	CHECK_INT(err.kind, DPE_CONNECT);
	CHECK_CONTAINS(err.msg, "is stale: nothing listens on it");

	enum fake s1[] = { F_HELLO_V3 };
	pid_t pid = fake_master(v3, s1, 1);
	CHECK_INT(mux_open(v3, 2000, &m, &why, &err), -1);
	CHECK(why == MUX_FAILED_PROTOCOL);
	CHECK_INT(err.kind, DPE_CONNECT);
	CHECK_CONTAINS(err.msg, "speaks mux protocol version 3, not 4");
	stop(pid);

	enum fake s2[] = { F_NOT_MASTER };
	pid = fake_master(other, s2, 1);
	CHECK_INT(mux_open(other, 2000, &m, &why, &err), -1);
	CHECK(why == MUX_FAILED_PROTOCOL);
	CHECK_INT(err.kind, DPE_CONNECT);
	CHECK_CONTAINS(err.msg, "is not an ssh master");
	stop(pid);

	enum fake s3[] = { F_SILENT };
	pid = fake_master(silent, s3, 1);
	CHECK_INT(mux_open(silent, 200, &m, &why, &err), -1);
	CHECK(why == MUX_FAILED_TIMEOUT);
	CHECK_INT(err.kind, DPE_CONNECT);
	CHECK_CONTAINS(err.msg, "did not answer within 200 ms");
	stop(pid);
}

static int gather(void *data, const char *buf, size_t len)
{
	strbuf_add(data, buf, len);
	return 0;
}

static int refuse(void *data, const char *buf, size_t len)
{
	return 1;
}

static void test_sessions(void)
{
	struct mux *m = NULL;
	struct mux_session *s = NULL;
	enum mux_failure why;
	struct dp_error err;
	int status = -5;
	struct mux_exec x = { .command = "true", .in_fd = -1, .out_fd = -1, .err_fd = -1 };
	_cleanup_free_ char *path = sock_path("master");

	/* refused: nothing started, nothing left open */
	enum fake s1[] = { F_ALIVE, F_REFUSE_SESSION };
	pid_t pid = fake_master(path, s1, 2);
	CHECK_INT(mux_open(path, 2000, &m, &why, &err), 0);
	CHECK_INT(mux_master_pid(m), 99);
	CHECK_INT(mux_exec_start(m, &x, &s, &why, &err), -1);
	CHECK(s == NULL && why == MUX_FAILED_REFUSED);
	CHECK_INT(err.kind, DPE_CONNECT);
	CHECK_CONTAINS(err.msg, "refused a new session: not toda");
	mux_close(m);
	stop(pid);

	/* an exit message: its value; output written by the master into our pipe */
	enum fake s2[] = { F_ALIVE, F_OPEN_EXIT_5 };
	pid = fake_master(path, s2, 2);
	CHECK_INT(mux_open(path, 2000, &m, &why, &err), 0);
	CHECK_INT(mux_exec_start(m, &x, &s, &why, &err), 0);
	char out[16] = "";
	for (size_t got = 0; got < 4;) {
		ssize_t r = read(mux_session_stdout(s), out + got, sizeof(out) - 1 - got);
		if (r > 0)
			got += (size_t)r;
		else if (r == 0 || errno != EAGAIN)
			break;
	}
	CHECK_STR(out, "out\n");
	CHECK_INT(mux_exec_finish(s, 5000, &status, &err), 0);
	CHECK_INT(status, 5);
	mux_close(m);
	stop(pid);

	/* mux_exec: output to a callback; a callback that says stop ends it (DPE_FAIL) */
	pid = fake_master(path, s2, 2);
	CHECK_INT(mux_open(path, 2000, &m, &why, &err), 0);
	struct strbuf got = STRBUF_INIT;
	struct mux_run r = { .in_fd = -1, .on_stdout = gather, .data = &got };
	CHECK_INT(mux_exec(m, &x, &r, &status, &why, &err), 0);
	CHECK_INT(status, 5);
	CHECK_STR(got.buf, "out\n");
	r.on_stdout = refuse;
	CHECK_INT(mux_exec(m, &x, &r, &status, &why, &err), -1);
	CHECK_INT(err.kind, DPE_FAIL);
	CHECK_CONTAINS(err.msg, "output handler stopped the command");
	strbuf_release(&got);
	mux_close(m);
	stop(pid);

	/* closed without an exit message, the master alive: no status */
	enum fake s3[] = { F_ALIVE, F_OPEN_THEN_CLOSE, F_ALIVE };
	pid = fake_master(path, s3, 3);
	CHECK_INT(mux_open(path, 2000, &m, &why, &err), 0);
	CHECK_INT(mux_exec_start(m, &x, &s, &why, &err), 0);
	CHECK_INT(mux_exec_finish(s, 5000, &status, &err), 0);
	CHECK_INT(status, MUX_NO_STATUS);
	mux_close(m);
	stop(pid);

	/* the master gone between mux_open and the request: nothing started, said so */
	enum fake s5[] = { F_ALIVE };
	pid = fake_master(path, s5, 1);
	CHECK_INT(mux_open(path, 2000, &m, &why, &err), 0);
	stop(pid);
	CHECK_INT(mux_exec_start(m, &x, &s, &why, &err), -1);
	CHECK(s == NULL && why == MUX_FAILED_STALE);
	struct mux_forward *f = NULL;
	CHECK_INT(mux_stdio_forward(m, "localhost", 22, &f, &why, &err), -1);
	CHECK(f == NULL && why == MUX_FAILED_STALE);
	CHECK_INT(mux_alive(m, &err), -1);
	unlink(path);
	CHECK_INT(mux_exec_start(m, &x, &s, &why, &err), -1);
	CHECK(why == MUX_FAILED_NO_SOCKET);
	mux_close(m);

	/* closed without an exit message, the master gone: the connection is lost */
	enum fake s4[] = { F_ALIVE, F_OPEN_THEN_DIE };
	pid = fake_master(path, s4, 2);
	CHECK_INT(mux_open(path, 2000, &m, &why, &err), 0);
	CHECK_INT(mux_exec_start(m, &x, &s, &why, &err), 0);
	CHECK_INT(mux_exec_finish(s, 5000, &status, &err), -1);
	CHECK_INT(err.kind, DPE_CONNECT);
	CHECK_CONTAINS(err.msg, "connection lost: the master on");
	mux_close(m);
	waitpid(pid, NULL, 0);
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	if (!mkdtemp(dir))
		return 1;
	test_encoders();
	test_parser();
	test_login_command();
	test_open_failures();
	test_sessions();
	_cleanup_free_ char *rm = xasprintf("rm -rf '%s'", dir);
	if (system(rm) != 0)
		return 1;
	return unit_done();
}
