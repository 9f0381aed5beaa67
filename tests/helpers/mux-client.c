/* SPDX-License-Identifier: MIT */
/*
 * Test helper: lib/transport/mux.c against a real OpenSSH master, for
 * tests/cli/t5700-mux.sh.
 *
 *   mux-client check SOCKET                 open (checks, hello, alive): "pid N"
 *   mux-client exec [-r] [-s] [-t] [-w] [-T S] [-i TEXT] SOCKET COMMAND
 *                                           run COMMAND (through mux_login_command,
 *                                           for the login shell as ssh hands it,
 *                                           unless -r), stdin from ours (or TEXT),
 *                                           output to ours, at most S seconds;
 *                                           exits with its status. mux_exec, or with
 *                                           -w mux_exec_start, mux_exec_write (4 KiB
 *                                           at a time) and mux_exec_wait; -s: COMMAND
 *                                           names a subsystem
 *   mux-client forward SOCKET HOST PORT     stdin to HOST:PORT and back to stdout
 *   mux-client forward-accept SOCKET HOST PORT LPORT
 *                                           accept one connection on 127.0.0.1:LPORT
 *                                           ("ready" once listening), hand it to the
 *                                           master (mux_stdio_forward_fd), "ended"
 *                                           when the master closes it
 *
 * Failures print "mux-client: MESSAGE (WHY)" on stderr, WHY being the mux_failure
 * name, and exit 255; a session that ended without an exit status exits 254.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "transport/mux.h"

static const char *why_name(enum mux_failure w)
{
	static const char *const names[] = {
		[MUX_FAILED_NOT] = "none", [MUX_FAILED_NO_SOCKET] = "no-socket",
		[MUX_FAILED_NOT_SOCKET] = "not-socket", [MUX_FAILED_OWNER] = "owner",
		[MUX_FAILED_STALE] = "stale", [MUX_FAILED_PEER] = "peer",
		[MUX_FAILED_PROTOCOL] = "protocol", [MUX_FAILED_TIMEOUT] = "timeout",
		[MUX_FAILED_REFUSED] = "refused", [MUX_FAILED_LOST] = "lost",
		[MUX_FAILED_OTHER] = "other",
	};
	return (size_t)w < ARRAY_SIZE(names) && names[w] ? names[w] : "?";
}

static int die(const struct dp_error *err, enum mux_failure why)
{
	fprintf(stderr, "mux-client: %s (%s, kind %d)\n", err->msg, why_name(why), err->kind);
	return 255;
}

static int to_stdout(void *data, const char *buf, size_t len)
{
	return write_all(1, buf, len);
}

static int to_stderr(void *data, const char *buf, size_t len)
{
	return write_all(2, buf, len);
}

static int usage(void)
{
	fprintf(stderr, "usage: mux-client check SOCKET\n"
			"       mux-client exec [-r] [-s] [-t] [-w] [-T SECONDS] [-i TEXT] SOCKET COMMAND\n"
			"       mux-client forward SOCKET HOST PORT\n"
			"       mux-client forward-accept SOCKET HOST PORT LPORT\n");
	return 2;
}

/* Relay stdin to fd and fd to stdout until fd ends. */
static int relay(int fd)
{
	bool in_open = true;
	char buf[16384];
	for (;;) {
		struct pollfd p[2] = { { .fd = fd, .events = POLLIN },
				       { .fd = in_open ? 0 : -1, .events = POLLIN } };
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (p[0].revents) {
			ssize_t n = read(fd, buf, sizeof(buf));
			if (n <= 0)
				return n < 0 ? -1 : 0;
			if (write_all(1, buf, (size_t)n) < 0)
				return -1;
		}
		if (in_open && p[1].revents) {
			ssize_t n = read(0, buf, sizeof(buf));
			if (n <= 0) {
				in_open = false;
				shutdown(fd, SHUT_WR);
			} else if (write_all(fd, buf, (size_t)n) < 0) {
				return -1;
			}
		}
	}
}

static int forward_accept(struct mux *m, const char *host, const char *port_s,
			  const char *lport_s)
{
	long port, lport;
	if (!parse_long(port_s, 1, 65535, &port) || !parse_long(lport_s, 1, 65535, &lport))
		return usage();
	int lfd = socket(AF_INET, SOCK_STREAM, 0);
	int one = 1;
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)lport),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	if (bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(lfd, 1) < 0) {
		perror("mux-client: listen");
		return 1;
	}
	printf("ready\n");
	fflush(stdout);
	int c = accept(lfd, NULL, NULL);
	close(lfd);
	if (c < 0)
		return 1;
	struct dp_error err;
	enum mux_failure why;
	_cleanup_mux_forward_ struct mux_forward *f = NULL;
	int r = mux_stdio_forward_fd(m, host, (int)port, c, &f, &why, &err);
	close(c); /* the master has its own copies */
	if (r < 0)
		return die(&err, why);
	printf("forwarding\n");
	fflush(stdout);
	for (;;) {
		struct pollfd p = { .fd = mux_forward_control_fd(f), .events = POLLIN };
		if (poll(&p, 1, -1) < 0 && errno != EINTR)
			return 1;
		if (mux_forward_ended(f)) {
			printf("ended\n");
			return 0;
		}
	}
}

int main(int argc, char **argv)
{
	signal(SIGPIPE, SIG_IGN);
	if (argc < 3)
		return usage();
	struct dp_error err = { 0 };
	enum mux_failure why = MUX_FAILED_NOT;
	const char *cmd = argv[1];
	int i = 2;
	bool raw = false, pty = false, by_writes = false, subsystem = false;
	double timeout = 0;
	const char *text = NULL;
	if (streq(cmd, "exec")) {
		for (; i < argc && argv[i][0] == '-'; i++) {
			if (streq(argv[i], "-r"))
				raw = true;
			else if (streq(argv[i], "-t"))
				pty = true;
			else if (streq(argv[i], "-w"))
				by_writes = true;
			else if (streq(argv[i], "-s"))
				subsystem = raw = true;
			else if (streq(argv[i], "-T") && i + 1 < argc)
				timeout = atof(argv[++i]);
			else if (streq(argv[i], "-i") && i + 1 < argc)
				text = argv[++i];
			else
				return usage();
		}
		if (argc - i != 2)
			return usage();
	} else if (streq(cmd, "check")) {
		if (argc - i != 1)
			return usage();
	} else if (streq(cmd, "forward")) {
		if (argc - i != 3)
			return usage();
	} else if (streq(cmd, "forward-accept")) {
		if (argc - i != 4)
			return usage();
	} else {
		return usage();
	}

	_cleanup_mux_ struct mux *m = NULL;
	if (mux_open(argv[i], 10000, &m, &why, &err) < 0)
		return die(&err, why);
	if (streq(cmd, "check")) {
		printf("pid %ld\n", (long)mux_master_pid(m));
		return 0;
	}
	if (streq(cmd, "forward-accept"))
		return forward_accept(m, argv[i + 1], argv[i + 2], argv[i + 3]);
	if (streq(cmd, "forward")) {
		long port;
		if (!parse_long(argv[i + 2], 1, 65535, &port))
			return usage();
		_cleanup_mux_forward_ struct mux_forward *f = NULL;
		if (mux_stdio_forward(m, argv[i + 1], (int)port, &f, &why, &err) < 0)
			return die(&err, why);
		return relay(mux_forward_fd(f)) < 0 ? 1 : 0;
	}
	_cleanup_strbuf_ struct strbuf command = STRBUF_INIT;
	if (raw)
		strbuf_adds(&command, argv[i + 1]);
	else
		mux_login_command(&command, argv[i + 1], true);
	struct mux_exec x = { .command = command.buf, .subsystem = subsystem, .pty = pty,
			      .in_fd = -1, .out_fd = -1, .err_fd = -1 };
	struct mux_run r = { .in_fd = text ? -1 : 0, .in_buf = text, .in_len = text ? strlen(text) : 0,
			     .on_stdout = to_stdout, .on_stderr = to_stderr, .timeout = timeout };
	int status;
	if (by_writes) {
		struct mux_session *s;
		if (mux_exec_start(m, &x, &s, &why, &err) < 0)
			return die(&err, why);
		char buf[4096];
		ssize_t n;
		while ((n = read(0, buf, sizeof(buf))) > 0) {
			if (mux_exec_write(s, &r, buf, (size_t)n, &err) < 0) {
				fprintf(stderr, "mux-client: write: %s (kind %d)\n", err.msg, err.kind);
				break;
			}
		}
		if (mux_exec_wait(s, &r, &status, &err) < 0)
			return die(&err, why);
	} else if (mux_exec(m, &x, &r, &status, &why, &err) < 0) {
		return die(&err, why);
	}
	if (status == MUX_NO_STATUS) {
		fprintf(stderr, "mux-client: the session ended without an exit status\n");
		return 254;
	}
	return status;
}
