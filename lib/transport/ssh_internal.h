/* SPDX-License-Identifier: MIT */
/* What the transport's modules (ssh.c, ssh_connect.c, ssh_auth.c, sftp.c, forward.c)
 * share; not an API: nothing outside lib/transport/ includes it. */
#ifndef DISPATCH_SSH_INTERNAL_H
#define DISPATCH_SSH_INTERNAL_H

#include <libssh2.h>
#include <sys/types.h>

#include "transport/mux.h"
#include "transport/ssh.h"
#include "transport/ssh_config.h"
#include "base/strbuf.h"

struct ssh_session {
	char *name;                     /* as asked: "box1", "inner", "me@host:2222" */
	char *target;                   /* "user@hostname:port" */
	struct ssh_host_config cfg;
	const struct ssh_ctx *ctx;      /* valid while opening only */
	LIBSSH2_SESSION *ls;
	int fd;                         /* to poll: the TCP socket or ProxyCommand socketpair,
					   shared by every session of a ProxyJump chain */
	bool own_fd;                    /* the outermost session closes it */
	bool out_blocked;               /* the last send on fd would have blocked */
	long timeout_ms;                /* for blocking calls (channel setup) */
	pid_t proxy_pid;                /* ProxyCommand child, 0 when none */
	struct ssh_session *via;        /* ProxyJump: the hop whose channel carries us */
	LIBSSH2_CHANNEL *via_chan;
	struct strbuf hop_out;          /* our packets not yet taken by via_chan (bounded by
					   this session's own SSH windows) */
	double connect_seconds;
	bool kbd_gave_up;               /* ssh_auth.c: a keyboard-interactive prompt got no answer */
	bool prompted;                  /* ssh_auth.c: logging in asked the user something */
	char *offer[SSH_ALGS_NKINDS];   /* what was offered (ssh_algs.h kinds), for messages */
	struct mux *mux;                /* through the user's OpenSSH master (ssh_mux.c): then
					   there is no libssh2 session (ls NULL, fd -1) */
	struct mux_forward *via_mux;    /* ProxyJump: the hop's master carries us (fd is its
					   stdio forward's socket) */
	char *pubkey_algs;              /* PubkeyAcceptedAlgorithms resolved (before libssh2's
					   share of it was taken): which keys may be tried */
};

/* ssh.c: for -v, the names (never the values) of the variables that SendEnv and
 * SetEnv make s's commands carry. */
void ssh_log_env(const struct ssh_ctx *ctx, const struct ssh_session *s);

/* ssh_connect.c: a connected descriptor for cfg (TCP with ConnectTimeout, or the
 * ProxyCommand over a socketpair). *retry says whether trying again may help, *why
 * whether it timed out (SSH_FAILED_TIMEOUT) or not (SSH_FAILED_CONNECT). */
int ssh_connect_fd(const struct ssh_host_config *cfg, int timeout_s, int *fd, pid_t *pid,
		   bool *retry, enum ssh_failure *why, struct dp_error *err);

/* ssh_connect.c: the server's SSH_MSG_KEXINIT name-lists, read on a connection of its
 * own (a banner sent, the server's banner and first packet read, closed): what the
 * server offers, for the message of a key exchange that failed. ssh_kexinit_probe
 * connects as cfg says (TCP or ProxyCommand); ssh_kexinit_exchange talks over io (a
 * ProxyJump hop's channel): read returns bytes read (> 0), 0 at the end or -1, write
 * 0 once all is written or -1, both giving up at deadline. */
struct ssh_probe_io {
	ssize_t (*read)(void *data, void *buf, size_t n, double deadline);
	int (*write)(void *data, const void *buf, size_t n, double deadline);
	void *data;
};
int ssh_kexinit_exchange(const struct ssh_probe_io *io, double deadline,
			 char *lists[SSH_KEXINIT_NLISTS], const char *what, struct dp_error *err);
int ssh_kexinit_probe(const struct ssh_host_config *cfg, int timeout_s,
		      char *lists[SSH_KEXINIT_NLISTS], struct dp_error *err);

/* ssh_auth.c: log in, trying the agent, the identity files, keyboard-interactive and
 * password in that order; the message of a failure names each method and its fate. */
int ssh_auth(struct ssh_session *s, struct dp_error *err);
/* Whether a private key file's text is encrypted (OpenSSH or PEM format). */
bool ssh_key_is_encrypted(const char *text, size_t len);

/* For the transport's modules that open their own channels (SFTP, forwarding): the libssh2 session
 * and the descriptor to poll for it. */
LIBSSH2_SESSION *ssh_session_libssh2(struct ssh_session *s);
int ssh_session_fd(const struct ssh_session *s);
/* Wait (up to ms milliseconds, -1 forever) until the session can make progress in
 * the direction libssh2 last blocked on. Returns 1 when it can, 0 when the time ran
 * out (or a signal came), -1 on a poll error. */
int ssh_session_wait(struct ssh_session *s, int ms);
/* For a poll loop over a non-blocking session: push what ProxyJump hops have queued
 * towards the server. Returns 1 when a hop already holds data read off the socket
 * (poll would not wake up for it: go round again at once), 0 when not, -1 when a hop
 * failed (the connection is lost). */
int ssh_session_pump(struct ssh_session *s);
/* Whether another connection like s can be opened without asking the user anything:
 * s is direct (not through a master) and it logged in, and every ProxyJump hop
 * before it, without a prompt (a key or the agent). A second connection opened in
 * batch mode never prompts; this says it would not need to. */
bool ssh_session_unattended(const struct ssh_session *s);
/* Whether the server (or a ProxyJump hop) closed the connection and everything it
 * sent was read: its socket (or the hop's channel) is at its end, or reset. A poll
 * loop that sees nothing move while this is true will never see anything move: the
 * socket stays readable (at its end), so a wait on it never blocks again. */
bool ssh_session_closed(struct ssh_session *s);

/* ssh_mux.c: the session through host's OpenSSH master (ControlPath) when one
 * answers and is trusted: 1 with *out; 0 (and -v says why) to connect directly. */
int ssh_mux_open(const struct ssh_ctx *ctx, const char *host, const char *dest,
		 struct ssh_session **out);
/* ssh_mux.c: when ProxyJump's last hop has a master, a stdio forward through it to
 * cfg's hostname and port (the master carries the earlier hops): 1 with *out, whose
 * socket the session then speaks SSH over; 0 to open the hop with libssh2. */
int ssh_mux_hop(const struct ssh_ctx *ctx, const char *name, const char *hop,
		const struct ssh_host_config *cfg, struct mux_forward **out);
/* The master of a session opened through one, else NULL. */
struct mux *ssh_session_mux(const struct ssh_session *s);
/* ssh_exec and friends through the master. */
struct ssh_mux_channel;
/* Whether a command of len bytes, as sent, fits what the server hands its login shell
 * as one argument (`$SHELL -c TEXT`): Linux's MAX_ARG_STRLEN, 128 KiB with the NUL.
 * -1 with DPE_INPUT and a message naming host when it does not. */
#define SSH_COMMAND_MAX (128 * 1024 - 1)
int ssh_command_fits(const char *host, size_t len, struct dp_error *err);

int ssh_mux_exec(struct ssh_session *s, const struct ssh_exec *x, int *status, struct dp_error *err);
int ssh_mux_exec_start(struct ssh_session *s, const struct ssh_exec *x,
		       struct ssh_mux_channel **out, struct dp_error *err);
int ssh_mux_exec_write(struct ssh_mux_channel *c, const void *buf, size_t len, struct dp_error *err);
int ssh_mux_exec_finish(struct ssh_mux_channel *c, int *status, struct dp_error *err);
/* ssh.c: an interactive session's terminal: its size (left alone when fd has none),
 * and a resize_fd emptied. */
void ssh_tty_size(int fd, int *cols, int *rows);
void ssh_drain_resize(int fd);
/* forward_mux.c: forward_run through the master. */
struct forward;
int forward_run_mux(struct ssh_session *s, const struct forward *f, struct dp_error *err);

/* -v progress through a log callback (NULL: nothing), formatted as printf. */
void ssh_logf(ssh_log_fn log, void *data, const char *fmt, ...) _printf_(3, 4);

#endif
