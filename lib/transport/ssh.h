/* SPDX-License-Identifier: MIT */
/*
 * The SSH transport, in-process over libssh2 (never an ssh or scp subprocess).
 *
 * A session is one authenticated connection to one host, resolved through the
 * OpenSSH client config as `ssh -G` would (lib/transport/ssh_config.h), reached directly, through
 * ProxyJump hops (each hop a libssh2 session whose direct-tcpip channel carries the
 * next one, all on the one TCP socket, no thread) or through the user's ProxyCommand.
 * Host keys are checked against known_hosts (lib/transport/known_hosts.h), ED25519 host
 * certificates against its @cert-authority lines (lib/transport/sshcert.h);
 * authentication tries certificates, the agent, the identity files, then
 * keyboard-interactive (ssh_auth.c).
 *
 * Typical internal use (submit, status, wait, logs, ship):
 *
 *	struct ssh_ctx sc;
 *	cmd_ssh_ctx(ctx, &sc);                  // cmd/ fills prompts, logging, inventory
 *	_cleanup_ssh_session_ struct ssh_session *s = NULL;
 *	if (ssh_session_open(&sc, "hpc", &s, &err) < 0)
 *		return report_error(&err);      // kind DPE_CONNECT: exit 255
 *	if (ssh_exec_capture(s, "squeue --me -h", NULL, &out, &errout, &status, &err) < 0)
 *		...
 *
 * When the host's ControlPath (ssh_config) names a live OpenSSH master that the user
 * owns, the session goes through it (lib/transport/mux.h: no handshake, no login, and
 * any server ssh reaches); otherwise dispatch connects itself. Everything below works
 * alike over both; -v says which one a host got.
 *
 * A session runs commands one after another, each on its own channel. Functions are
 * not thread-safe per session; different sessions may live in different threads.
 */
#ifndef DISPATCH_SSH_H
#define DISPATCH_SSH_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"
#include "base/strbuf.h"

struct ssh_session;

/* Asks the user for a secret (echo false) or an answer (echo true). Returns 0 and a
 * NUL-terminated answer in buf, or -1 when it cannot ask (no terminal) or the user
 * gave up. Called from any thread; the callee serializes. */
typedef int (*ssh_prompt_fn)(void *data, const char *prompt, bool echo, char *buf, size_t size);
typedef void (*ssh_log_fn)(void *data, const char *msg);

struct ssh_ctx {
	const char *config_path;        /* -F; NULL: ~/.ssh/config then /etc/ssh/ssh_config */
	const char *home;               /* ~ and %d in the config, where ~/.ssh/config is;
					   NULL: ssh_user_home(), the passwd entry's, as ssh */
	/* Where a name goes (inventory host names to their ssh field); NULL: as given.
	 * The session keeps the name it was opened with for messages. */
	const char *(*destination)(void *data, const char *name);
	void *destination_data;
	ssh_prompt_fn prompt;           /* NULL: never prompt (no terminal) */
	void *prompt_data;
	ssh_log_fn log;                 /* progress for -v; may be NULL */
	void *log_data;
	bool batch_mode;                /* never prompt, whatever the config says */
	int connect_timeout;            /* seconds; > 0 overrides ConnectTimeout */
	int attempts;                   /* connection attempts before giving up; 0: 3 */
	double deadline;                /* monotonic_seconds(); > 0: connecting, retries
					   and every hop included, ends by then (a timeout) */
};

/* Connect, verify the host key and log in to host: an inventory host name, an ssh
 * alias, or [user@]host[:port]. On failure *out stays NULL and err->kind is
 * DPE_CONNECT (could not connect, authenticate or verify the host key: exit 255) or
 * DPE_INPUT (bad config). Transient failures (refused, reset, timeout, key exchange)
 * are retried with backoff before any command runs. */
int ssh_session_open(const struct ssh_ctx *ctx, const char *host, struct ssh_session **out,
		     struct dp_error *err);

/* What stopped ssh_session_open, for callers that tell the cases apart (hosts --check).
 * Through ProxyJump it is the failing hop's. */
enum ssh_failure {
	SSH_FAILED_NOT = 0,
	SSH_FAILED_CONFIG,      /* the destination did not resolve (bad config, hop loop) */
	SSH_FAILED_CONNECT,     /* no connection: refused, unreachable, unknown name */
	SSH_FAILED_TIMEOUT,     /* no answer in time, connecting or at any later step */
	SSH_FAILED_HANDSHAKE,   /* banner or key exchange failed */
	SSH_FAILED_HOSTKEY,     /* host key unknown or changed */
	SSH_FAILED_AUTH,        /* no method logged in */
};
/* ssh_session_open, saying in *why (which may be NULL) what failed. */
int ssh_session_open_why(const struct ssh_ctx *ctx, const char *host, struct ssh_session **out,
			 enum ssh_failure *why, struct dp_error *err);
void ssh_session_free(struct ssh_session *s);
static inline void ssh_session_freep(struct ssh_session **s) { ssh_session_free(*s); }
#define _cleanup_ssh_session_ _cleanup_(ssh_session_freep)

/* The name the session was opened with, and where it went ("user@hostname:port"). */
const char *ssh_session_name(const struct ssh_session *s);
const char *ssh_session_target(const struct ssh_session *s);
/* "master" when the session goes through the user's OpenSSH master (ControlPath),
 * "direct" when dispatch connected itself. */
const char *ssh_session_via(const struct ssh_session *s);
/* Time the connection took (TCP through authentication), in seconds. */
double ssh_session_connect_seconds(const struct ssh_session *s);

/* One remote command. The command is a /bin/sh script, run in the user's login
 * environment (profiles set up PATH, modules, conda: see sh_login_script), whatever
 * the user's login shell is. With user_shell, it is text for the user's own login
 * shell instead, as ssh's command line is (dispatch run): that shell reads it, as a
 * login shell. With raw, the server's default shell gets it as it is. */
struct ssh_exec {
	const char *command;
	bool user_shell;
	bool raw;
	bool pty;                       /* allocate a terminal (ssh -t) */
	const char *term;               /* with pty: TERM; NULL: "xterm" */
	int cols, rows;                 /* with pty: window size; 0: 80x24. Through a
					   master none is sent (the mux protocol takes it
					   from the terminal handed over, see interactive;
					   pipes have none: 0x0) */
	int in_fd;                      /* stdin from this fd until EOF; -1: none */
	const void *in_buf;             /* or from memory (when in_fd < 0) */
	size_t in_len;
	/* Output as it arrives; a non-zero return stops the command (error). */
	int (*on_stdout)(void *data, const char *buf, size_t len);
	int (*on_stderr)(void *data, const char *buf, size_t len);
	void *data;
	double timeout;                 /* seconds; 0: none. Expiry kills the remote side */
	/* When set (by a signal handler, or another thread), the command is stopped as a
	 * timeout stops it, within a second, and the call fails with DPE_FAIL
	 * "interrupted". NULL: never. */
	const volatile sig_atomic_t *cancel;
	/* An interactive session on the user's terminal (ssh -t at a terminal), with pty:
	 * in_fd is the terminal, output goes to out_fd and err_fd as it comes (on_stdout
	 * and on_stderr are not called), and the remote pty gets in_fd's window size
	 * (cols and rows are not used). Through a master the three descriptors are
	 * handed over, as ssh's own mux client does: the master reads and writes them
	 * and takes the window size from in_fd itself. */
	bool interactive;
	int out_fd, err_fd;
	/* With interactive: -1, or a descriptor that turns readable when the terminal's
	 * size changed (the self-pipe of the caller's SIGWINCH handler). Its bytes are
	 * read and the new size goes to the remote pty: a window-change request direct;
	 * through a master, SIGWINCH to the master process (its pid from the alive
	 * check), which reads the size from the terminal it was handed, as ssh's mux
	 * client relays the signal. */
	int resize_fd;
	/* With interactive: called once the remote side holds the terminal, before any
	 * output. The caller puts its terminal into raw mode here, not earlier: a master
	 * copies the terminal's modes at the request into the remote pty. May be NULL. */
	void (*on_started)(void *data);
};

/* Run x on the session. *status gets the exit status, or 128+N when the remote
 * command died of signal N. Returns -1 with DPE_TIMEOUT when x->timeout ran out (the
 * remote side was sent TERM, or ^C with a PTY, and the channel closed), DPE_CONNECT
 * when the connection broke, DPE_FAIL when a callback stopped it. The command is
 * sent once and never again. */
int ssh_exec(struct ssh_session *s, const struct ssh_exec *x, int *status, struct dp_error *err);

/* A command whose stdin the caller writes as it produces it, from its own loop or a
 * write callback (a snapshot streamed into `tar -x`, an upload), with no thread, pipe
 * or temporary file: ssh_exec_start runs x (x->in_fd and x->in_buf are ignored; the
 * callbacks and the timeout apply), each ssh_exec_write sends bytes to the command's
 * stdin (handing its output to x's callbacks meanwhile), and ssh_exec_finish closes
 * the command's stdin, waits for it to end and frees the channel, as ssh_exec ends.
 *
 * ssh_exec_write returns once libssh2 took all of buf; -1 with DPE_FAIL when the
 * command ended before reading it all (ssh_exec_finish then gives its status), or
 * DPE_CONNECT, DPE_TIMEOUT, DPE_FAIL (a callback) as ssh_exec: the channel is then
 * broken and ssh_exec_finish only frees it, returning the same error. Always call
 * ssh_exec_finish once after a successful ssh_exec_start. */
struct ssh_channel;
int ssh_exec_start(struct ssh_session *s, const struct ssh_exec *x, struct ssh_channel **out,
		   struct dp_error *err);
int ssh_exec_write(struct ssh_channel *c, const void *buf, size_t len, struct dp_error *err);
int ssh_exec_finish(struct ssh_channel *c, int *status, struct dp_error *err);

/* ssh_exec with stdin from memory (NULL: none) and output gathered into out and
 * errout (either may be NULL to drop it). */
int ssh_exec_capture(struct ssh_session *s, const char *command, const struct strbuf *in,
		     struct strbuf *out, struct strbuf *errout, int *status, struct dp_error *err);

/* The exit status a shell reports for a remote "exit-signal" name ("TERM" -> 143);
 * -1 for a name this system does not know. */
int ssh_signal_status(const char *name);

/* The text sent for a login-shell command: sh_login_script behind sh_any_command, so
 * that every login shell reads it alike (exposed for tests). */
void ssh_login_command(struct strbuf *sb, const char *command, bool user_shell);

/* The libssh2 loaded at run time ("1.11.1") and the one dispatch was built against.
 * ssh_session_open refuses to run on one older than 1.11.1 (DPE_CONNECT). */
const char *ssh_library_version(void);
const char *ssh_library_build_version(void);
/* The same for OpenSSL's libcrypto, which libssh2 and the certificate checks use. */
const char *ssh_crypto_version(void);
const char *ssh_crypto_build_version(void);

#endif
