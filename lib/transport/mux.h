/* SPDX-License-Identifier: MIT */
/*
 * The user's OpenSSH master connection (ControlMaster), used in-process: the client
 * side of OpenSSH's multiplexing protocol (PROTOCOL.mux in OpenSSH's source, version
 * 4, unchanged since OpenSSH 5.x). dispatch never starts ssh itself; it only talks to
 * a master the user started (`ssh -fN HOST` with ControlMaster/ControlPath set).
 *
 *	_cleanup_mux_ struct mux *m = NULL;
 *	enum mux_failure why;
 *	if (mux_open(cfg.control_path, 5000, &m, &why, &err) < 0)
 *		...                             // fall back to libssh2; err.msg says why (-v)
 *	struct mux_exec x = { .command = cmd.buf, .in_fd = -1, .out_fd = -1, .err_fd = -1 };
 *	struct mux_session *s;
 *	if (mux_exec_start(m, &x, &s, &why, &err) < 0)
 *		...
 *	// poll mux_session_stdout/stderr until EOF, writing mux_session_stdin meanwhile,
 *	// and mux_session_fd: call mux_session_read when it is readable
 *	mux_exec_finish(s, -1, &status, &err);
 *
 * Every session and every stdio forward is a connection of its own to the master (the
 * master serves one per connection); each connection is checked as mux_open checks
 * the first. The master reads and writes the file descriptors passed to it directly:
 * no byte of a session goes through this process unless the caller lets it create
 * pipes. Failures are DPE_CONNECT unless said otherwise.
 *
 * Nothing here is thread-safe per object; different objects may live in different
 * threads. SIGPIPE must be ignored by the program (cmd/ does) or a write to a pipe
 * whose master died kills it; the control connection itself never raises it.
 */
#ifndef DISPATCH_MUX_H
#define DISPATCH_MUX_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/error.h"
#include "base/strbuf.h"

/* ---- the messages: pure functions over bytes, no I/O ------------------------ */

#define MUX_PROTOCOL_VERSION 4u
#define MUX_MAX_MESSAGE (256u * 1024u) /* a longer one is refused (as OpenSSH does) */

#define MUX_MSG_HELLO           0x00000001u
#define MUX_C_NEW_SESSION       0x10000002u
#define MUX_C_ALIVE_CHECK       0x10000004u
#define MUX_C_TERMINATE         0x10000005u
#define MUX_C_OPEN_FWD          0x10000006u
#define MUX_C_CLOSE_FWD         0x10000007u
#define MUX_C_NEW_STDIO_FWD     0x10000008u
#define MUX_C_STOP_LISTENING    0x10000009u
#define MUX_C_PROXY             0x1000000fu
#define MUX_S_OK                0x80000001u
#define MUX_S_PERMISSION_DENIED 0x80000002u
#define MUX_S_FAILURE           0x80000003u
#define MUX_S_EXIT_MESSAGE      0x80000004u
#define MUX_S_ALIVE             0x80000005u
#define MUX_S_SESSION_OPENED    0x80000006u
#define MUX_S_REMOTE_PORT       0x80000007u
#define MUX_S_TTY_ALLOC_FAIL    0x80000008u
#define MUX_S_PROXY             0x8000000fu

/* One message from a master, its fields by type:
 *   MUX_MSG_HELLO           a = protocol version (extensions are checked and skipped)
 *   MUX_S_OK, MUX_S_PROXY   a = request id
 *   MUX_S_PERMISSION_DENIED, MUX_S_FAILURE   a = request id, reason
 *   MUX_S_ALIVE             a = request id, b = the master's pid
 *   MUX_S_SESSION_OPENED    a = request id, b = session id
 *   MUX_S_REMOTE_PORT       a = request id, b = port
 *   MUX_S_EXIT_MESSAGE      a = session id, b = exit value
 *   MUX_S_TTY_ALLOC_FAIL    a = session id
 * Any other type parses with no fields: the caller decides (a client message type,
 * or one from a newer OpenSSH). */
struct mux_msg {
	uint32_t type;
	uint32_t a, b;
	char reason[256];       /* printable: other bytes become '?'; cut at 255 */
};

/* Parse the first message in buf[0..len). Returns its size in bytes (> 0), 0 when buf
 * holds only the start of one (read more), -1 (DPE_CONNECT) when it is malformed:
 * a length under 4 or over MUX_MAX_MESSAGE, or fields that do not fit the type. */
ssize_t mux_parse(const void *buf, size_t len, struct mux_msg *msg, struct dp_error *err);

struct mux_exec;
/* What a client sends, appended to sb with its length in front. A new session's flags
 * and escape character are as `ssh -e none` sends them (no X11, no agent, no escape);
 * its file descriptors (x->in_fd ...) are not part of the message. */
void mux_put_hello(struct strbuf *sb);
void mux_put_alive_check(struct strbuf *sb, uint32_t request_id);
void mux_put_new_session(struct strbuf *sb, uint32_t request_id, const struct mux_exec *x);
void mux_put_stdio_fwd(struct strbuf *sb, uint32_t request_id, const char *host, uint32_t port);

/* The command sent for a login-shell command through a master. As ssh_login_command
 * (lib/transport/ssh.h), except that sh waits for the login shell instead of exec'ing
 * it and exits with its status: a master relays "exit-status" but not "exit-signal"
 * (OpenSSH 9.2, and ssh itself then exits 255), so a command killed by signal N
 * must come back as the status 128+N that sh computes, as dispatch reports it direct.
 * mux_login_script is the sh script, before sh_any_command. */
void mux_login_script(struct strbuf *sb, const char *command, bool user_shell);
void mux_login_command(struct strbuf *sb, const char *command, bool user_shell);

/* ---- the master -------------------------------------------------------------- */

/* Why a master could not be used, for a caller that falls back and says so (-v). */
enum mux_failure {
	MUX_FAILED_NOT = 0,
	MUX_FAILED_NO_SOCKET,   /* nothing at the path: no master runs */
	MUX_FAILED_NOT_SOCKET,  /* something that is not a socket is at the path */
	MUX_FAILED_OWNER,       /* the socket belongs to another user: not connected to */
	MUX_FAILED_STALE,       /* nothing listens: a master that died left it behind */
	MUX_FAILED_PEER,        /* the process answering runs as another user */
	MUX_FAILED_PROTOCOL,    /* the answer is not OpenSSH's mux protocol version 4 */
	MUX_FAILED_TIMEOUT,     /* no answer in time */
	MUX_FAILED_REFUSED,     /* the master refused the request (MUX_S_FAILURE,
				   MUX_S_PERMISSION_DENIED): nothing was started */
	MUX_FAILED_LOST,        /* the master went away after the request was sent: a
				   command may have started; it must not be sent again */
	MUX_FAILED_OTHER,       /* any other error (permission on the path, no memory) */
};

struct mux;

/* Check path as ssh's client would trust it and more: lstat says a socket owned by
 * us (else not connected to at all), the peer's credentials (SO_PEERCRED or
 * getpeereid) say the process on the other end runs as us; then the hello exchange
 * and an alive check. timeout_ms (> 0) bounds each wait on this master, here and in
 * every later call. On failure *out is NULL and *why (when not NULL) says why. */
int mux_open(const char *path, int timeout_ms, struct mux **out, enum mux_failure *why,
	     struct dp_error *err);
void mux_close(struct mux *m);
static inline void mux_closep(struct mux **m) { mux_close(*m); }
#define _cleanup_mux_ _cleanup_(mux_closep)

const char *mux_path(const struct mux *m);
/* The master's pid, from its answer to the alive check. */
pid_t mux_master_pid(const struct mux *m);
/* A new alive check on a new connection: 0 when the master answers. */
int mux_alive(struct mux *m, struct dp_error *err);

/* ---- sessions ---------------------------------------------------------------- */

struct mux_exec {
	const char *command;    /* sent as it is: see mux_login_command; with subsystem,
				   the subsystem's name ("sftp") */
	bool subsystem;         /* start a subsystem (ssh -s) instead of a command */
	bool pty;               /* ask for a terminal (ssh -t) */
	const char *term;       /* TERM; NULL: "xterm" with pty, else none */
	const char *const *env; /* "NAME=value", NULL-terminated; the master passes on
				   only what its SendEnv allows. NULL: none */
	/* The session's stdin, stdout and stderr, handed to the master as they are (it
	 * sets O_NONBLOCK on them unless they are terminals, which the caller shares);
	 * -1: a pipe is made and its other end is the caller's (mux_session_stdin ...). */
	int in_fd, out_fd, err_fd;
};

struct mux_session;

/* Start x through the master. On failure nothing is left open; *why is
 * MUX_FAILED_LOST when the request went out (the command may run), otherwise
 * the command was not started. */
int mux_exec_start(struct mux *m, const struct mux_exec *x, struct mux_session **out,
		   enum mux_failure *why, struct dp_error *err);
/* The caller's ends of the pipes made for -1 in x (non-blocking), else -1. */
int mux_session_stdin(const struct mux_session *s);
int mux_session_stdout(const struct mux_session *s);
int mux_session_stderr(const struct mux_session *s);
/* Close the stdin pipe: the command reads EOF. */
void mux_session_close_stdin(struct mux_session *s);
/* The control connection, to poll for reading. Call mux_session_read before each
 * poll, not only when it polls readable: messages that came with the master's
 * answer to the request may already be read and waiting. */
int mux_session_fd(const struct mux_session *s);
/* Take what the master sent without waiting. 1 when the session has ended (its
 * status is known, or it ended without one), 0 when not yet, -1 with DPE_CONNECT
 * when the master went away (the connection to the host is lost). The master may
 * report the end before it has written all output into the pipes: read them to EOF. */
int mux_session_read(struct mux_session *s, struct dp_error *err);
/* The remote side could not allocate the terminal asked for (MUX_S_TTY_ALLOC_FAIL). */
bool mux_session_tty_failed(const struct mux_session *s);

#define MUX_NO_STATUS (-1)
/* Wait (up to timeout_ms; -1 forever) until the session ends and free it (always).
 * *status: the exit value, or MUX_NO_STATUS when the session ended without one
 * (killed by a signal: see mux_login_command). -1 with DPE_CONNECT when the master
 * went away, DPE_TIMEOUT when the time ran out (the session is abandoned: closing
 * the control connection makes the master close the channel). */
int mux_exec_finish(struct mux_session *s, int timeout_ms, int *status, struct dp_error *err);
/* Abandon a session (closes its connection and pipes); NULL is fine. */
void mux_session_free(struct mux_session *s);

/* Output to callbacks, as ssh_exec hands it out. r->in_* are mux_exec's only; the
 * timeout (0: none; DPE_TIMEOUT) counts from the first call given r, and a callback
 * returning non-zero stops the command (DPE_FAIL). */
struct mux_run {
	int in_fd;              /* mux_exec: stdin from in_fd until EOF, */
	const void *in_buf;     /* or from memory when in_fd < 0 */
	size_t in_len;
	int (*on_stdout)(void *data, const char *buf, size_t len);
	int (*on_stderr)(void *data, const char *buf, size_t len);
	void *data;
	double timeout;
	const volatile sig_atomic_t *cancel;    /* set: stop (DPE_FAIL "interrupted") */
};

/* For a session started with pipes (in_fd, out_fd, err_fd -1), as ssh_exec_start,
 * ssh_exec_write and ssh_exec_finish work: mux_exec_write sends buf to the command's
 * stdin, handing its output to r's callbacks meanwhile; mux_exec_wait closes stdin,
 * hands out the rest of the output, waits for the end and frees s (always), with
 * *status as mux_exec_finish gives it. mux_exec_write's DPE_FAIL "ended before
 * reading all its input" leaves the session whole (mux_exec_wait gives the status);
 * after any other error (DPE_CONNECT, DPE_TIMEOUT, a callback's DPE_FAIL) the session
 * is broken and mux_exec_wait only frees it, returning the same error. */
int mux_exec_write(struct mux_session *s, const struct mux_run *r, const void *buf, size_t len,
		   struct dp_error *err);
int mux_exec_wait(struct mux_session *s, const struct mux_run *r, int *status,
		  struct dp_error *err);

/* A whole command, as ssh_exec runs one: start, stdin from r->in_fd until EOF or
 * from memory, output to the callbacks, wait. x->in_fd/out_fd/err_fd are ignored:
 * the session gets pipes, so the caller's descriptors never turn non-blocking. A
 * command that ends without reading all its input is no error. *why as
 * mux_exec_start, and MUX_FAILED_LOST when the master went away later. */
int mux_exec(struct mux *m, const struct mux_exec *x, const struct mux_run *r, int *status,
	     enum mux_failure *why, struct dp_error *err);

/* ---- stdio forwarding (ssh -W) ----------------------------------------------- */

struct mux_forward;

/* A stream to host:port from the far side of the master's connection: *out holds a
 * connected socket (mux_forward_fd) whose bytes the master carries both ways. The
 * forward lasts until mux_forward_close (it holds the control connection: closing
 * that ends the forward). A host that refuses is MUX_FAILED_REFUSED with the
 * master's reason. */
int mux_stdio_forward(struct mux *m, const char *host, int port, struct mux_forward **out,
		      enum mux_failure *why, struct dp_error *err);
int mux_forward_fd(const struct mux_forward *f);
/* The same with the caller's own connected socket (an accepted connection, for
 * `forward`): the master reads and writes fd itself and nothing passes through this
 * process; the caller may close its copy of fd at once. mux_forward_fd is then -1.
 * The forward ends when its channel closes: the master then closes the control
 * connection, so poll mux_forward_control_fd for reading and ask mux_forward_ended
 * (1 ended, 0 not yet). */
int mux_stdio_forward_fd(struct mux *m, const char *host, int port, int fd,
			 struct mux_forward **out, enum mux_failure *why, struct dp_error *err);
int mux_forward_control_fd(const struct mux_forward *f);
int mux_forward_ended(struct mux_forward *f);
/* Ends the forward (the master closes the channel) and frees f; NULL is fine. */
void mux_forward_close(struct mux_forward *f);
static inline void mux_forward_closep(struct mux_forward **f) { mux_forward_close(*f); }
#define _cleanup_mux_forward_ _cleanup_(mux_forward_closep)

#endif
