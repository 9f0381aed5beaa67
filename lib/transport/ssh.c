/* SPDX-License-Identifier: MIT */
/*
 * Sessions and channels. A session over ProxyJump hops is a chain: the hop's
 * direct-tcpip channel carries the next session through libssh2's send/recv
 * callbacks, so the whole chain runs on the one TCP socket, in the caller's thread,
 * and every wait is a poll on that socket.
 */
#include <errno.h>
#include <openssl/crypto.h>
#include <openssl/opensslv.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>

#include "base/fdpoll.h"
#include "transport/known_hosts.h"
#include "base/shquote.h"
#include "transport/ssh_internal.h"

#define DEFAULT_CONNECT_TIMEOUT 30      /* seconds, when ConnectTimeout is unset */
#define DEFAULT_ATTEMPTS 3
#define MAX_RETRY_WAIT 5.0              /* seconds of backoff in all, at most */
#define MAX_HOPS 8
#define IO_CHUNK 32768

#define EXEC_WINDOW (8u << 20)

static pthread_once_t init_once = PTHREAD_ONCE_INIT;

static void init_libssh2(void)
{
	libssh2_init(0);
}

#define logf_(ctx, ...) ssh_logf((ctx)->log, (ctx)->log_data, __VA_ARGS__)

void ssh_logf(ssh_log_fn log, void *data, const char *fmt, ...)
{
	if (!log)
		return;
	va_list ap;
	va_start(ap, fmt);
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	log(data, sb.buf);
}

static struct ssh_session *root_of(struct ssh_session *s)
{
	while (s->via)
		s = s->via;
	return s;
}

static const char *last_error(LIBSSH2_SESSION *ls)
{
	char *msg = NULL;
	libssh2_session_last_error(ls, &msg, NULL, 0);
	return msg && *msg ? msg : "unknown error";
}

/* Why a request on an open session failed: a connection the server (or a hop)
 * closed reads as end of file; libssh2 then says little ("Unexpected error"). */
static const char *session_error(const struct ssh_session *s)
{
	char c;
	ssize_t n = recv(s->fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);
	if (n == 0 || (n < 0 && (errno == ECONNRESET || errno == EPIPE)))
		return "the connection was closed by the server or the network";
	return last_error(s->ls);
}

static bool timed_out(LIBSSH2_SESSION *ls)
{
	return libssh2_session_last_errno(ls) == LIBSSH2_ERROR_TIMEOUT;
}

/* SendEnv and SetEnv, as ssh sends them before the command: one "env" request per
 * variable. A server that does not accept one (no AcceptEnv for it) refuses it and
 * the session goes on, as with ssh. Names are logged, never values. */
static int send_env(struct ssh_session *s, LIBSSH2_CHANNEL *ch, struct dp_error *err)
{
	_cleanup_strv_free_ char **env = ssh_host_config_env(&s->cfg);
	for (size_t i = 0; env && env[i]; i++) {
		const char *eq = strchr(env[i], '=');
		unsigned nlen = (unsigned)(eq - env[i]);
		int rc = libssh2_channel_setenv_ex(ch, env[i], nlen, eq + 1, (unsigned)strlen(eq + 1));
		if (rc != 0 && rc != LIBSSH2_ERROR_CHANNEL_REQUEST_DENIED)
			return dp_err(err, DPE_CONNECT, "cannot send environment variable %.*s to "
				      "'%s': %s", (int)nlen, env[i], s->name, session_error(s));
	}
	return 0;
}

/* For -v, once the session is open: the names of the variables its commands carry. */
void ssh_log_env(const struct ssh_ctx *ctx, const struct ssh_session *s)
{
	_cleanup_strv_free_ char **env = ssh_host_config_env(&s->cfg);
	if (!env)
		return;
	_cleanup_strbuf_ struct strbuf names = STRBUF_INIT;
	for (size_t i = 0; env[i]; i++)
		strbuf_addf(&names, "%s%.*s", i ? ", " : "", (int)strcspn(env[i], "="), env[i]);
	logf_(ctx, "%s: sending environment variables %s (SendEnv, SetEnv; the server "
	      "takes those its AcceptEnv names)", s->name, names.buf);
}

/* ---- destinations ---- */

static int resolve(const struct ssh_ctx *ctx, const char *dest, struct ssh_host_config *cfg,
		   struct dp_error *err)
{
	return ssh_config_resolve_dest(ctx->config_path, ctx->home, dest, cfg, err);
}

/* ---- I/O callbacks ---- */

static LIBSSH2_SEND_FUNC(fd_send)
{
	struct ssh_session *s = *abstract;
	int f = flags;
#ifdef MSG_NOSIGNAL
	f |= MSG_NOSIGNAL;
#endif
	ssize_t n = send(socket, buffer, length, f);
	if (n < 0) {
		if (errno == EAGAIN || errno == EWOULDBLOCK) {
			s->out_blocked = true;
			return -EAGAIN;
		}
		return -errno;
	}
	s->out_blocked = false;
	return n;
}

/* Push what the session queued into its hop channel, as far as the hop takes it.
 * The queue is what keeps libssh2 from ever seeing EAGAIN from hop_send: a session
 * whose send blocked halfway may send nothing else (LIBSSH2_ERROR_BAD_USE), a window
 * adjustment included, which can deadlock a chain. -1 when the hop failed. */
static int hop_flush(struct ssh_session *s)
{
	size_t off = 0;
	while (off < s->hop_out.len) {
		ssize_t n = libssh2_channel_write(s->via_chan, s->hop_out.buf + off, s->hop_out.len - off);
		if (n == LIBSSH2_ERROR_EAGAIN)
			break;
		if (n < 0)
			return -1;
		off += (size_t)n;
	}
	if (off) {
		memmove(s->hop_out.buf, s->hop_out.buf + off, s->hop_out.len - off);
		s->hop_out.len -= off;
		s->hop_out.buf[s->hop_out.len] = '\0';
	}
	return 0;
}

static LIBSSH2_RECV_FUNC(hop_recv)
{
	struct ssh_session *s = *abstract;
	(void)socket;
	(void)flags;
	if (hop_flush(s) < 0)
		return -ECONNRESET;
	ssize_t n = libssh2_channel_read(s->via_chan, buffer, length);
	if (n == LIBSSH2_ERROR_EAGAIN)
		return -EAGAIN;
	if (n < 0)
		return -ECONNRESET;
	if (n == 0 && !libssh2_channel_eof(s->via_chan))
		return -EAGAIN;
	return n;
}

static LIBSSH2_SEND_FUNC(hop_send)
{
	struct ssh_session *s = *abstract;
	(void)socket;
	(void)flags;
	strbuf_add(&s->hop_out, buffer, length);
	if (hop_flush(s) < 0)
		return -ECONNRESET;
	return (ssize_t)length;
}

/* Every hop's queue, innermost first (its data feeds the next). */
static int pump_hops(struct ssh_session *s)
{
	for (; s->via; s = s->via)
		if (hop_flush(s) < 0)
			return -1;
	return 0;
}

/* Only the innermost session of a chain ever blocks: a hop that blocked inside a
 * callback would wait on its own channel while the data it needs is for another. */
static void set_blocking(struct ssh_session *s, bool on)
{
	libssh2_session_set_blocking(s->ls, on);
}

int ssh_session_wait(struct ssh_session *s, int ms)
{
	struct ssh_session *root = root_of(s);
	struct pollfd p = { .fd = root->fd, .events = POLLIN };
	if (root->out_blocked)
		p.events |= POLLOUT;
	int r = poll(&p, 1, ms);
	if (r < 0)
		return errno == EINTR ? 0 : -1;
	return r;
}

int ssh_session_pump(struct ssh_session *s)
{
	if (pump_hops(s) < 0)
		return -1;
	for (; s->via; s = s->via) {
		unsigned long avail = 0;
		libssh2_channel_window_read_ex(s->via_chan, &avail, NULL);
		if (avail)
			return 1;
	}
	return 0;
}

bool ssh_session_unattended(const struct ssh_session *s)
{
	if (s->mux)
		return false;
	for (; s; s = s->via)
		if (s->prompted)
			return false;
	return true;
}

bool ssh_session_closed(struct ssh_session *s)
{
	for (struct ssh_session *h = s; h->via; h = h->via) {
		unsigned long avail = 0;
		libssh2_channel_window_read_ex(h->via_chan, &avail, NULL);
		if (!avail && libssh2_channel_eof(h->via_chan))
			return true;
	}
	struct ssh_session *root = root_of(s);
	char c;
	ssize_t n = recv(root->fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);
	if (n >= 0)
		return n == 0;
	if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
		return false;
	if (errno == ENOTSOCK) {        /* a ProxyCommand's pipe: ended when it hangs up empty */
		struct pollfd p = { .fd = root->fd, .events = POLLIN };
		return poll(&p, 1, 0) == 1 && !(p.revents & POLLIN) &&
		       (p.revents & (POLLHUP | POLLERR | POLLNVAL));
	}
	return true;                    /* ECONNRESET and the like */
}

/* ---- opening ---- */

/* Ends what a session holds of its connection: the libssh2 session, the hop channel
 * (not the hop), the socket it owns, the ProxyCommand. */
static void session_close(struct ssh_session *s)
{
	if (s->ls) {
		set_blocking(s, true);
		libssh2_session_set_timeout(s->ls, 2000);
		libssh2_session_disconnect(s->ls, "bye");
		libssh2_session_free(s->ls);
	}
	if (s->via_chan) {
		set_blocking(s->via, true);
		libssh2_session_set_timeout(s->via->ls, 2000);
		hop_flush(s);
		libssh2_session_set_timeout(s->via->ls, 2000);
		libssh2_channel_free(s->via_chan);
	}
	if (s->own_fd && s->fd >= 0)
		close(s->fd);
	if (s->proxy_pid > 0) {
		kill(s->proxy_pid, SIGHUP);
		while (waitpid(s->proxy_pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
}

void ssh_session_free(struct ssh_session *s)
{
	if (!s)
		return;
	session_close(s);
	mux_forward_close(s->via_mux);
	mux_close(s->mux);
	ssh_session_free(s->via);
	ssh_host_config_release(&s->cfg);
	for (int k = 0; k < SSH_ALGS_NKINDS; k++)
		free(s->offer[k]);
	free(s->pubkey_algs);
	strbuf_release(&s->hop_out);
	free(s->name);
	free(s->target);
	free(s);
}

/* The server's ED25519 host certificate, fetched over a connection of its own.
 *
 * libssh2 1.11.1 cannot verify a key exchange signed with a host certificate: its
 * ssh-ed25519-cert-v01@openssh.com method reads the certificate as a plain ssh-ed25519
 * key and fails (the ECDSA and RSA certificate methods have no verifier, so they are
 * never even agreed on). It fails after taking the server's host key blob, though,
 * which libssh2_session_hostkey then returns: that is the certificate. Nothing of this
 * connection is trusted but the certificate, which its CA's signature vouches for; the
 * session itself has verified the server's plain ED25519 key, and the certificate is
 * accepted only for that very key (kh_verify_cert). Leaves cert empty when the server
 * shows none. */
static void fetch_host_cert(struct ssh_session *s, struct strbuf *cert)
{
	struct ssh_session *p = xcalloc(1, sizeof(*p));
	struct dp_error err;
	enum ssh_failure why;
	bool retry;

	strbuf_init(&p->hop_out);
	p->name = s->name;                      /* borrowed, as cfg and via: not freed here */
	p->cfg = s->cfg;
	p->fd = -1;
	p->timeout_ms = s->timeout_ms;
	if (s->via) {
		set_blocking(s->via, true);
		p->via_chan = libssh2_channel_direct_tcpip_ex(s->via->ls, s->cfg.hostname,
							      s->cfg.port, "127.0.0.1", 22);
		set_blocking(s->via, false);
		if (!p->via_chan)
			goto out;
		p->via = s->via;
		p->fd = s->via->fd;
	} else {
		int timeout = (int)(s->timeout_ms / 1000);
		if (ssh_connect_fd(&p->cfg, timeout > 0 ? timeout : 1, &p->fd, &p->proxy_pid, &retry,
				   &why, &err) < 0)
			goto out;
		p->own_fd = true;
	}
	p->ls = libssh2_session_init_ex(NULL, NULL, NULL, p);
	if (!p->ls)
		abort();
	libssh2_session_callback_set2(p->ls, LIBSSH2_CALLBACK_SEND,
				      p->via ? (libssh2_cb_generic *)hop_send :
					       (libssh2_cb_generic *)fd_send);
	if (p->via)
		libssh2_session_callback_set2(p->ls, LIBSSH2_CALLBACK_RECV,
					      (libssh2_cb_generic *)hop_recv);
	libssh2_session_set_blocking(p->ls, 1);
	libssh2_session_set_timeout(p->ls, p->timeout_ms);
	/* the algorithms the session itself offered (set_algorithms), but for host keys */
	static const int methods[][2] = {
		[SSH_ALGS_KEX] = { LIBSSH2_METHOD_KEX, -1 },
		[SSH_ALGS_CIPHERS] = { LIBSSH2_METHOD_CRYPT_CS, LIBSSH2_METHOD_CRYPT_SC },
		[SSH_ALGS_MACS] = { LIBSSH2_METHOD_MAC_CS, LIBSSH2_METHOD_MAC_SC },
	};
	for (int k = SSH_ALGS_KEX; k <= SSH_ALGS_MACS; k++)
		for (int d = 0; d < 2 && methods[k][d] >= 0 && s->offer[k]; d++)
			(void)libssh2_session_method_pref(p->ls, methods[k][d], s->offer[k]);
	if (libssh2_session_method_pref(p->ls, LIBSSH2_METHOD_HOSTKEY,
					"ssh-ed25519-cert-v01@openssh.com") == 0) {
		(void)libssh2_session_handshake(p->ls, p->fd);  /* fails with 1.11.1: see above */
		size_t len = 0;
		const char *blob = libssh2_session_hostkey(p->ls, &len, NULL);
		static const char want[] = "\0\0\0\040ssh-ed25519-cert-v01@openssh.com";
		if (blob && len > sizeof(want) - 1 && memcmp(blob, want, sizeof(want) - 1) == 0)
			strbuf_add(cert, blob, len);
	}
out:
	session_close(p);
	if (s->via) {   /* as open_chain leaves a hop: only the innermost session blocks */
		libssh2_session_set_timeout(s->via->ls, s->via->timeout_ms);
		set_blocking(s->via, false);
	}
	strbuf_release(&p->hop_out);
	free(p);
}

static int verify_host_key(struct ssh_session *s, struct dp_error *err)
{
	size_t len = 0;
	int type = 0;
	const char *blob = libssh2_session_hostkey(s->ls, &len, &type);
	const char *hash = libssh2_hostkey_hash(s->ls, LIBSSH2_HOSTKEY_HASH_SHA256);
	if (!blob || !hash)
		return dp_err(err, DPE_CONNECT, "cannot get the host key of '%s': %s", s->name,
			      last_error(s->ls));
	struct kh_key key = { .type = type, .blob = (const unsigned char *)blob, .len = len };
	memcpy(key.sha256, hash, 32);
	_cleanup_free_ char *fp = kh_fingerprint(key.sha256);
	logf_(s->ctx, "%s: server host key: %s %s", s->name, kh_key_short_name(type), fp);
	_cleanup_free_ char *ca_line = NULL;
	if (!kh_cert_authority(&s->cfg, &ca_line))
		return kh_verify(&s->cfg, s->name, &key, err);

	/* A CA is known for the host, as @cert-authority: ask for its certificate. */
	_cleanup_strbuf_ struct strbuf cert = STRBUF_INIT;
	if (type == LIBSSH2_HOSTKEY_TYPE_ED25519)
		fetch_host_cert(s, &cert);
	if (cert.len) {
		logf_(s->ctx, "%s: server host certificate fetched (%zu bytes; %s names a CA for "
		      "the host)", s->name, cert.len, ca_line);
		return kh_verify_cert(&s->cfg, s->name, (const unsigned char *)cert.buf, cert.len,
				      &key, err);
	}
	if (kh_verify(&s->cfg, s->name, &key, err) == 0)
		return 0;
	size_t n = strlen(err->msg);
	snprintf(err->msg + n, sizeof(err->msg) - n, "; %s names a CA for this host, but the "
		 "server showed no ED25519 host certificate, the only kind dispatch can check "
		 "(libssh2 1.11.1 negotiates no ECDSA or RSA host certificate)", ca_line);
	return -1;
}

/* After a failed key exchange with a host whose CA known_hosts names: when the server
 * shows an ED25519 host certificate but no plain host key dispatch can take, say so
 * (sshd offers the plain keys too unless its HostKeyAlgorithms names only
 * certificates), and do not try again. */
static void host_cert_only(struct ssh_session *s, bool *retry, struct dp_error *err)
{
	_cleanup_free_ char *ca_line = NULL;
	_cleanup_strbuf_ struct strbuf cert = STRBUF_INIT;
	if (timed_out(s->ls) || !kh_cert_authority(&s->cfg, &ca_line))
		return;
	fetch_host_cert(s, &cert);
	if (!cert.len)
		return;
	*retry = false;
	size_t n = strlen(err->msg);
	snprintf(err->msg + n, sizeof(err->msg) - n, "; the server offers its host key only as a "
		 "certificate (%s names a CA for the host): libssh2 1.11.1 cannot verify a key "
		 "exchange signed with a certificate, so dispatch checks the certificate over a "
		 "second connection and needs the server to offer the plain ssh-ed25519 key on "
		 "this one (remove the -cert-v01 names from sshd's HostKeyAlgorithms, or add "
		 "ssh-ed25519)", ca_line);
}

/* What libssh2 signs with for a user key (LIBSSH2_METHOD_SIGN_ALGO has no list of
 * its own): the preference only picks among the RSA ones. */
static const char sign_algs[] = "ssh-ed25519,ecdsa-sha2-nistp256,ecdsa-sha2-nistp384,"
				"ecdsa-sha2-nistp521,rsa-sha2-512,rsa-sha2-256,ssh-rsa";

/* The names of a libssh2 method list. Host keys: no certificates, as libssh2 1.11.1
 * cannot complete a key exchange signed with one (host certificates are fetched and
 * checked apart: fetch_host_cert). */
static char *libssh2_has(LIBSSH2_SESSION *ls, int method)
{
	const char **algs = NULL;
	struct strbuf sb = STRBUF_INIT;
	if (method == LIBSSH2_METHOD_SIGN_ALGO) {
		strbuf_adds(&sb, sign_algs);
		return strbuf_detach(&sb);
	}
	int n = libssh2_session_supported_algs(ls, method, &algs);
	for (int i = 0; i < n; i++) {
		if (!algs[i] || (method == LIBSSH2_METHOD_HOSTKEY && strstr(algs[i], "-cert-v01@")))
			continue;
		if (sb.len)
			strbuf_addch(&sb, ',');
		strbuf_adds(&sb, algs[i]);
	}
	if (n > 0)
		libssh2_free(ls, algs);
	return strbuf_detach(&sb);
}

/* Offer the algorithms ssh would, as ssh_config says (ssh_algs.h), less what libssh2
 * lacks. Without HostKeyAlgorithms, the host key types known_hosts holds for the host
 * come first, as ssh does. libssh2 adds the strict key exchange marker
 * (kex-strict-c-v00@openssh.com, against Terrapin) and ext-info-c to every KEX list. */
static int set_algorithms(const struct ssh_ctx *ctx, struct ssh_session *s, struct dp_error *err)
{
	static const struct { int method[2]; const char *what; } m[SSH_ALGS_NKINDS] = {
		[SSH_ALGS_KEX] = { { LIBSSH2_METHOD_KEX, -1 }, "kex" },
		[SSH_ALGS_CIPHERS] = { { LIBSSH2_METHOD_CRYPT_CS, LIBSSH2_METHOD_CRYPT_SC }, "ciphers" },
		[SSH_ALGS_MACS] = { { LIBSSH2_METHOD_MAC_CS, LIBSSH2_METHOD_MAC_SC }, "MACs" },
		[SSH_ALGS_HOSTKEY] = { { LIBSSH2_METHOD_HOSTKEY, -1 }, "host keys" },
		[SSH_ALGS_PUBKEY] = { { LIBSSH2_METHOD_SIGN_ALGO, -1 }, "signatures" },
	};
	for (int k = 0; k < SSH_ALGS_NKINDS; k++) {
		_cleanup_free_ char *list = ssh_algs_assemble(k, s->cfg.algs[k], ssh_algs_default(k));
		_cleanup_free_ char *has = libssh2_has(s->ls, m[k].method[0]);
		if (list && k == SSH_ALGS_HOSTKEY && !s->cfg.algs[k]) {
			char *ordered = kh_hostkey_order(&s->cfg, list);
			free(list);
			list = ordered;
		}
		if (k == SSH_ALGS_PUBKEY)
			s->pubkey_algs = xstrdup(list ? list : "");
		s->offer[k] = list ? ssh_algs_filter(list, has) : xstrdup("");
		if (!*s->offer[k])
			return dp_err(err, DPE_CONNECT, "cannot connect to '%s': %s %s leaves nothing "
				      "that libssh2 %s implements (it has %s)", s->name,
				      ssh_algs_keyword(k), s->cfg.algs[k] ? s->cfg.algs[k] : "(default)",
				      libssh2_version(0), has);
		logf_(ctx, "%s: offering %s %s", s->name, m[k].what, s->offer[k]);
		for (int d = 0; d < 2 && m[k].method[d] >= 0; d++)
			if (libssh2_session_method_pref(s->ls, m[k].method[d], s->offer[k]) != 0)
				return dp_err(err, DPE_CONNECT, "cannot connect to '%s': libssh2 refuses "
					      "the %s %s: %s", s->name, m[k].what, s->offer[k],
					      last_error(s->ls));
	}
	return 0;
}

/* The KEXINIT probe through a ProxyJump hop: a direct-tcpip channel of the hop's
 * (non-blocking, as the chain is), waited on like every other channel. */
struct hop_probe {
	struct ssh_session *hop;
	LIBSSH2_CHANNEL *ch;
};

static bool hop_wait(struct ssh_session *hop, double deadline)
{
	int queued;
	if (monotonic_seconds() >= deadline || (queued = ssh_session_pump(hop)) < 0)
		return false;
	if (!queued)    /* else a hop holds data already read: no wakeup would come */
		ssh_session_wait(hop, 100);
	return true;
}

static ssize_t hop_probe_read(void *data, void *buf, size_t n, double deadline)
{
	struct hop_probe *h = data;
	for (;;) {
		ssize_t r = libssh2_channel_read(h->ch, buf, n);
		if (r > 0)
			return r;
		if (r == 0 && libssh2_channel_eof(h->ch))
			return 0;
		if ((r < 0 && r != LIBSSH2_ERROR_EAGAIN) || !hop_wait(h->hop, deadline))
			return -1;
	}
}

static int hop_probe_write(void *data, const void *buf, size_t n, double deadline)
{
	struct hop_probe *h = data;
	size_t off = 0;
	while (off < n) {
		ssize_t r = libssh2_channel_write(h->ch, (const char *)buf + off, n - off);
		if (r > 0)
			off += (size_t)r;
		else if ((r < 0 && r != LIBSSH2_ERROR_EAGAIN) || !hop_wait(h->hop, deadline))
			return -1;
	}
	return 0;
}

static int probe_via(struct ssh_session *s, int timeout, char *lists[SSH_KEXINIT_NLISTS],
		     struct dp_error *err)
{
	struct hop_probe h = { .hop = s->via };
	double deadline = monotonic_seconds() + timeout;
	_cleanup_free_ char *what = xasprintf("reading the key exchange offer of '%s' through '%s'",
					      s->name, s->via->name);
	while (!(h.ch = libssh2_channel_direct_tcpip_ex(s->via->ls, s->cfg.hostname, s->cfg.port,
							 "127.0.0.1", 22)))
		if (libssh2_session_last_errno(s->via->ls) != LIBSSH2_ERROR_EAGAIN ||
		    !hop_wait(s->via, deadline))
			return dp_err(err, DPE_CONNECT, "%s: %s", what, last_error(s->via->ls));
	struct ssh_probe_io io = { .read = hop_probe_read, .write = hop_probe_write, .data = &h };
	int r = ssh_kexinit_exchange(&io, deadline, lists, what, err);
	/* as ssh_session_free frees a hop's channel: blocking, bounded */
	set_blocking(s->via, true);
	libssh2_session_set_timeout(s->via->ls, 2000);
	libssh2_channel_free(h.ch);
	libssh2_session_set_timeout(s->via->ls, s->via->timeout_ms);
	set_blocking(s->via, false);
	return r;
}

/* After libssh2 found nothing in common with the server: read what the server offers
 * on a connection of our own (libssh2 keeps the lists of a failed exchange to itself),
 * through the same ProxyJump hop if there is one, and say, per category, what it
 * offers and what dispatch has. True when err now says so; false when the lists do
 * agree or cannot be read. */
static bool explain_kex_failure(const struct ssh_ctx *ctx, struct ssh_session *s, int timeout,
				struct dp_error *err)
{
	char *lists[SSH_KEXINIT_NLISTS];
	struct dp_error perr;
	if ((s->via ? probe_via(s, timeout, lists, &perr)
		    : ssh_kexinit_probe(&s->cfg, timeout, lists, &perr)) < 0) {
		logf_(ctx, "%s: %s", s->name, perr.msg);
		return false;
	}
	_cleanup_strbuf_ struct strbuf why = STRBUF_INIT;
	int n = ssh_algs_mismatch(&why, lists, s->offer[SSH_ALGS_KEX], s->offer[SSH_ALGS_HOSTKEY],
				  s->offer[SSH_ALGS_CIPHERS], s->offer[SSH_ALGS_MACS]);
	for (int i = 0; i < SSH_KEXINIT_NLISTS; i++)
		free(lists[i]);
	if (!n)
		return false;
	dp_err(err, DPE_CONNECT, "cannot connect to '%s' (%s port %d): %s", s->name,
	       s->cfg.hostname, s->cfg.port, why.buf);
	return true;
}

static int open_chain(const struct ssh_ctx *ctx, const char *name, char **jumps_override,
		      int depth, struct ssh_session **out, bool *retry, enum ssh_failure *why,
		      struct dp_error *err)
{
	struct ssh_session *s = xcalloc(1, sizeof(*s));
	double start = monotonic_seconds();
	strbuf_init(&s->hop_out);
	int timeout;

	*out = NULL;
	*retry = false;
	*why = SSH_FAILED_CONFIG;
	s->name = xstrdup(name);
	s->ctx = ctx;
	s->fd = -1;
	if (depth > MAX_HOPS) {
		dp_err(err, DPE_INPUT, "too many ProxyJump hops on the way to '%s' (a loop?)", name);
		goto fail;
	}
	if (resolve(ctx, name, &s->cfg, err) < 0)
		goto fail;
	s->target = xasprintf("%s@%s:%d", s->cfg.user, s->cfg.hostname, s->cfg.port);
	timeout = ctx->connect_timeout > 0 ? ctx->connect_timeout :
		  s->cfg.connect_timeout > 0 ? s->cfg.connect_timeout : DEFAULT_CONNECT_TIMEOUT;
	if (ctx->deadline > 0) {
		double left = ctx->deadline - monotonic_seconds();
		if (left <= 0) {
			*why = SSH_FAILED_TIMEOUT;
			dp_err(err, DPE_CONNECT, "cannot connect to '%s': out of time", name);
			goto fail;
		}
		if (left < timeout)
			timeout = (int)left + 1;
	}

	char **jumps = jumps_override ? jumps_override : s->cfg.proxy_jump;
	size_t njumps = strv_len(jumps);
	if (njumps && ssh_mux_hop(ctx, name, jumps[njumps - 1], &s->cfg, &s->via_mux) == 1) {
		s->fd = mux_forward_fd(s->via_mux);     /* the forward owns it */
	} else if (njumps) {
		/* As ssh -J a,b: b is reached through a; a through its own config. */
		_cleanup_strv_free_ char **before = NULL;
		for (size_t i = 0; i + 1 < njumps; i++)
			strv_add(&before, jumps[i]);
		if (open_chain(ctx, jumps[njumps - 1], before, depth + 1, &s->via, retry, why, err) < 0)
			goto fail;
		logf_(ctx, "%s: connecting to %s port %d through %s", name, s->cfg.hostname,
		      s->cfg.port, s->via->name);
		s->via_chan = libssh2_channel_direct_tcpip_ex(s->via->ls, s->cfg.hostname, s->cfg.port,
							      "127.0.0.1", 22);
		if (!s->via_chan) {
			*retry = true;
			*why = timed_out(s->via->ls) ? SSH_FAILED_TIMEOUT : SSH_FAILED_CONNECT;
			dp_err(err, DPE_CONNECT, "cannot reach %s port %d through '%s': %s",
			       s->cfg.hostname, s->cfg.port, s->via->name, last_error(s->via->ls));
			goto fail;
		}
		s->fd = s->via->fd;
		set_blocking(s->via, false);
	} else {
		logf_(ctx, "%s: connecting to %s port %d%s", name, s->cfg.hostname, s->cfg.port,
		      s->cfg.proxy_command ? " (ProxyCommand)" : "");
		if (ssh_connect_fd(&s->cfg, timeout, &s->fd, &s->proxy_pid, retry, why, err) < 0)
			goto fail;
		s->own_fd = true;
	}

	s->ls = libssh2_session_init_ex(NULL, NULL, NULL, s);
	if (!s->ls)
		abort();
	libssh2_session_callback_set2(s->ls, LIBSSH2_CALLBACK_SEND,
				      s->via ? (libssh2_cb_generic *)hop_send : (libssh2_cb_generic *)fd_send);
	if (s->via)
		libssh2_session_callback_set2(s->ls, LIBSSH2_CALLBACK_RECV, (libssh2_cb_generic *)hop_recv);
	libssh2_session_set_blocking(s->ls, 1);
	s->timeout_ms = (long)timeout * 1000;
	libssh2_session_set_timeout(s->ls, s->timeout_ms);
	if (set_algorithms(ctx, s, err) < 0)
		goto fail;
	if (libssh2_session_handshake(s->ls, s->fd) != 0) {
		*retry = true;
		*why = timed_out(s->ls) ? SSH_FAILED_TIMEOUT : SSH_FAILED_HANDSHAKE;
		if (libssh2_session_last_errno(s->ls) == LIBSSH2_ERROR_KEX_FAILURE &&
		    explain_kex_failure(ctx, s, timeout, err)) {
			*retry = false; /* the same lists will not agree next time either */
			host_cert_only(s, retry, err);
			goto fail;
		}
		dp_err(err, DPE_CONNECT, "cannot connect to '%s' (%s port %d): key exchange failed: %s",
		       name, s->cfg.hostname, s->cfg.port, last_error(s->ls));
		host_cert_only(s, retry, err);
		goto fail;
	}
	logf_(ctx, "%s: negotiated kex %s, host key %s, cipher %s, MAC %s", name,
	      libssh2_session_methods(s->ls, LIBSSH2_METHOD_KEX),
	      libssh2_session_methods(s->ls, LIBSSH2_METHOD_HOSTKEY),
	      libssh2_session_methods(s->ls, LIBSSH2_METHOD_CRYPT_CS),
	      libssh2_session_methods(s->ls, LIBSSH2_METHOD_MAC_CS));
	*why = SSH_FAILED_HOSTKEY;
	if (verify_host_key(s, err) < 0)
		goto fail;
	if (ssh_auth(s, err) < 0) {
		*why = timed_out(s->ls) ? SSH_FAILED_TIMEOUT : SSH_FAILED_AUTH;
		goto fail;
	}
	logf_(ctx, "%s: logged in as %s", name, s->cfg.user);
	ssh_log_env(ctx, s);
	s->connect_seconds = monotonic_seconds() - start;
	s->ctx = NULL;
	*why = SSH_FAILED_NOT;
	*out = s;
	return 0;
fail:
	ssh_session_free(s);
	return -1;
}

int ssh_session_open(const struct ssh_ctx *ctx, const char *host, struct ssh_session **out,
		     struct dp_error *err)
{
	return ssh_session_open_why(ctx, host, out, NULL, err);
}

int ssh_session_open_why(const struct ssh_ctx *ctx, const char *host, struct ssh_session **out,
			 enum ssh_failure *why, struct dp_error *err)
{
	enum ssh_failure ignored;
	const char *dest = host;
	int attempts = ctx->attempts > 0 ? ctx->attempts : DEFAULT_ATTEMPTS;
	double waited = 0;
	unsigned seed = (unsigned)(monotonic_seconds() * 1e6) ^ (unsigned)getpid();

	pthread_once(&init_once, init_libssh2);
	*out = NULL;
	if (!libssh2_version(0x010b01)) {
		if (why)
			*why = SSH_FAILED_CONFIG;
		return dp_err(err, DPE_CONNECT, "libssh2 %s was loaded, but dispatch needs 1.11.1 or "
			      "later (it was built against %s): check how it was linked (ldd)",
			      libssh2_version(0), LIBSSH2_VERSION);
	}
	if (ctx->destination)
		dest = ctx->destination(ctx->destination_data, host);
	if (ssh_mux_open(ctx, host, dest, out) == 1) {
		if (why)
			*why = SSH_FAILED_NOT;
		return 0;
	}
	for (int i = 0;; i++) {
		bool retry = false;
		if (open_chain(ctx, dest, NULL, 0, out, &retry, why ? why : &ignored, err) == 0) {
			if (dest != host) {
				free((*out)->name);
				(*out)->name = xstrdup(host);
			}
			(*out)->connect_seconds += waited;
			return 0;
		}
		if (!retry || i + 1 >= attempts || waited >= MAX_RETRY_WAIT)
			return -1;
		/* Exponential backoff with jitter: 0.25 s, 0.5 s, 1 s... times 0.5 to 1.5. */
		double wait = 0.25 * (double)(1 << i) * (0.5 + (double)rand_r(&seed) / RAND_MAX);
		if (waited + wait > MAX_RETRY_WAIT)
			wait = MAX_RETRY_WAIT - waited;
		if (ctx->deadline > 0 && monotonic_seconds() + wait >= ctx->deadline)
			return -1;
		logf_(ctx, "%s: %s; trying again in %.1f s", host, err->msg, wait);
		struct timespec ts = { (time_t)wait, (long)((wait - (double)(time_t)wait) * 1e9) };
		while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
			;
		waited += wait;
	}
}

const char *ssh_library_version(void)
{
	return libssh2_version(0);
}

const char *ssh_library_build_version(void)
{
	return LIBSSH2_VERSION;
}

const char *ssh_crypto_version(void)
{
	return OpenSSL_version(OPENSSL_VERSION_STRING);
}

const char *ssh_crypto_build_version(void)
{
	return OPENSSL_VERSION_STR;
}

const char *ssh_session_name(const struct ssh_session *s) { return s->name; }
const char *ssh_session_target(const struct ssh_session *s) { return s->target; }
double ssh_session_connect_seconds(const struct ssh_session *s) { return s->connect_seconds; }
LIBSSH2_SESSION *ssh_session_libssh2(struct ssh_session *s) { return s->ls; }
int ssh_session_fd(const struct ssh_session *s) { return s->fd; }

/* ---- commands ---- */

void ssh_login_command(struct strbuf *sb, const char *command, bool user_shell)
{
	/* The server hands the text to the login shell, which may be csh or fish: it gets
	 * only `exec /bin/sh -c DECODER sh BASE64...` in a form that every shell reads
	 * alike (sh_any_command); sh then starts the user's shell as a login shell
	 * (profiles, modules, conda) on the command. */
	_cleanup_strbuf_ struct strbuf script = STRBUF_INIT;
	sh_login_script(&script, command, user_shell);
	sh_any_command(sb, script.buf);
}

int ssh_command_fits(const char *host, size_t len, struct dp_error *err)
{
	if (len <= SSH_COMMAND_MAX)
		return 0;
	return dp_err(err, DPE_INPUT, "the command for '%s' is %zu bytes once encoded for its login "
		      "shell, more than the %d that one argument of the server's exec holds: "
		      "ask for less at once (fewer jobs)", host, len, SSH_COMMAND_MAX);
}

int ssh_signal_status(const char *name)
{
	static const struct { const char *name; int num; } sigs[] = {
		{ "HUP", SIGHUP }, { "INT", SIGINT }, { "QUIT", SIGQUIT }, { "ILL", SIGILL },
		{ "TRAP", SIGTRAP }, { "ABRT", SIGABRT }, { "BUS", SIGBUS }, { "FPE", SIGFPE },
		{ "KILL", SIGKILL }, { "USR1", SIGUSR1 }, { "SEGV", SIGSEGV }, { "USR2", SIGUSR2 },
		{ "PIPE", SIGPIPE }, { "ALRM", SIGALRM }, { "TERM", SIGTERM }, { "XCPU", SIGXCPU },
		{ "XFSZ", SIGXFSZ },
	};
	if (startswith(name, "SIG"))
		name += 3;
	for (size_t i = 0; i < ARRAY_SIZE(sigs); i++)
		if (streq(sigs[i].name, name))
			return 128 + sigs[i].num;
	return -1;
}

/* Call op until it stops saying EAGAIN, waiting on the socket in between (bounded by
 * deadline when > 0). */
#define RETRY_EAGAIN(s, rc, op, deadline)                                               \
	while (((rc) = (op)) == LIBSSH2_ERROR_EAGAIN) {                                 \
		if ((deadline) > 0 && monotonic_seconds() > (deadline))                           \
			break;                                                          \
		ssh_session_wait((s), 100);                                             \
	}

/* Kill the command of a channel that is still running: a "signal" request (TERM),
 * which OpenSSH's sshd (7.9 and later) delivers to the command's process group. The
 * request has no reply; a server that ignores it (older, or not OpenSSH) is caught by
 * waiting a moment for the channel to end, then by a second channel: sshd makes each
 * command the leader of its own process group, as a child of the connection's sshd
 * process, which is also the parent of the second channel's sh; so every other child
 * of that parent is the command, and its group gets TERM. With a PTY, ^C goes first,
 * as a user would type it. */
static const char kill_siblings[] =
	"me=$$; ps -e -o pid= -o ppid= | while read p pp; do "
	"if [ \"$pp\" = \"$PPID\" ] && [ \"$p\" != \"$me\" ]; then kill -TERM -\"$p\" 2>/dev/null "
	"|| kill -TERM \"$p\" 2>/dev/null; fi; done";

/* Whether the channel ended within wait seconds (its output is dropped). */
static bool channel_ends(struct ssh_session *s, LIBSSH2_CHANNEL *ch, double wait)
{
	double deadline = monotonic_seconds() + wait;
	char buf[IO_CHUNK];
	while (monotonic_seconds() < deadline) {
		ssize_t n = libssh2_channel_read_ex(ch, 0, buf, sizeof(buf));
		ssize_t m = libssh2_channel_read_ex(ch, 1, buf, sizeof(buf));
		if (libssh2_channel_eof(ch))
			return true;
		if ((n < 0 && n != LIBSSH2_ERROR_EAGAIN) || (m < 0 && m != LIBSSH2_ERROR_EAGAIN))
			return true;    /* the connection is gone: nothing more to do */
		if (n <= 0 && m <= 0)
			ssh_session_wait(s, 100);
	}
	return false;
}

static void stop_remote(struct ssh_session *s, LIBSSH2_CHANNEL *ch, bool pty)
{
	int rc;
	double deadline = monotonic_seconds() + 2;
	if (pty)
		RETRY_EAGAIN(s, rc, libssh2_channel_write(ch, "\003", 1), deadline);
	RETRY_EAGAIN(s, rc, libssh2_channel_signal_ex(ch, "TERM", 4), deadline);
	if (rc == 0 && channel_ends(s, ch, 2))
		return;
	set_blocking(s, true);
	libssh2_session_set_timeout(s->ls, 3000);
	LIBSSH2_CHANNEL *killer = libssh2_channel_open_session(s->ls);
	if (killer) {
		char buf[256];
		_cleanup_strbuf_ struct strbuf cmd = STRBUF_INIT;
		sh_any_command(&cmd, kill_siblings);
		if (libssh2_channel_exec(killer, cmd.buf) == 0)
			while (libssh2_channel_read(killer, buf, sizeof(buf)) > 0)
				;
		libssh2_channel_free(killer);
	}
	libssh2_session_set_timeout(s->ls, s->timeout_ms);
}

/* A running command: its channel and the state of the loop that moves data both ways
 * (stdin from x.in_fd, x.in_buf or ssh_exec_write; stdout and stderr to x's
 * callbacks). */
struct ssh_channel {
	struct ssh_mux_channel *mux;    /* through a master: nothing else is used */
	struct ssh_session *s;
	LIBSSH2_CHANNEL *ch;
	struct ssh_exec x;
	char inbuf[IO_CHUNK];
	const char *in;                 /* pending stdin */
	size_t in_left;
	bool in_eof, eof_sent;
	bool in_readable;
	bool send_stuck;                /* a packet is half sent: finish it before anything else */
	bool remote_eof;                /* the command closed its output: it ended */
	bool resized;                   /* x.resize_fd turned readable: send the new size */
	double deadline;                /* x.timeout's end; 0: none */
	double last_rx;
	int interval, countmax;         /* ServerAliveInterval, ServerAliveCountMax */
	struct dp_error broken;         /* kind != 0: the channel is unusable, and why */
};

static int feed_stdin(struct ssh_channel *p, struct dp_error *err)
{
	const struct ssh_exec *x = &p->x;
	if (!p->in_left && !p->in_eof && x->in_fd >= 0 && p->in_readable) {
		ssize_t n = read(x->in_fd, p->inbuf, sizeof(p->inbuf));
		if (n > 0) {
			p->in = p->inbuf;
			p->in_left = (size_t)n;
		} else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
			p->in_eof = true;
		}
		p->in_readable = false;
	}
	p->send_stuck = false;
	while (p->in_left) {
		ssize_t n = libssh2_channel_write(p->ch, p->in, p->in_left);
		if (n == LIBSSH2_ERROR_EAGAIN) {
			/* libssh2 refuses (LIBSSH2_ERROR_BAD_USE) any other packet, a window
			 * adjustment from a read included, until this one is out. */
			p->send_stuck = libssh2_session_block_directions(p->s->ls) &
					LIBSSH2_SESSION_BLOCK_OUTBOUND;
			return 0;
		}
		if (n < 0)
			return dp_err(err, DPE_CONNECT, "connection to '%s' lost while sending input: %s",
				      p->s->name, last_error(p->s->ls));
		p->in += n;
		p->in_left -= (size_t)n;
	}
	if (p->in_eof && !p->eof_sent) {
		int rc = libssh2_channel_send_eof(p->ch);
		if (rc == 0)
			p->eof_sent = true;
		else if (rc != LIBSSH2_ERROR_EAGAIN)
			p->eof_sent = true;     /* the remote side closed its input: nothing to do */
	}
	return 0;
}

/* Read one stream until it would block; 1 when something was read. */
static int drain(struct ssh_channel *p, int stream, int *got, struct dp_error *err)
{
	char buf[IO_CHUNK];
	int (*cb)(void *, const char *, size_t) = stream ? p->x.on_stderr : p->x.on_stdout;
	*got = 0;
	for (;;) {
		ssize_t n = libssh2_channel_read_ex(p->ch, stream, buf, sizeof(buf));
		if (n == LIBSSH2_ERROR_EAGAIN || n == 0)
			return 0;
		if (n < 0)
			return dp_err(err, DPE_CONNECT, "connection to '%s' lost: %s", p->s->name,
				      last_error(p->s->ls));
		*got = 1;
		if (cb && cb(p->x.data, buf, (size_t)n) != 0)
			return dp_err(err, DPE_FAIL, "stopped reading the output of '%s'", p->s->name);
	}
}

/* Data already taken off the socket and queued in libssh2, for the channel or for a
 * hop's channel on the way: poll would not wake up for it. */
static bool data_queued(struct ssh_session *s, LIBSSH2_CHANNEL *ch)
{
	unsigned long avail = 0;
	libssh2_channel_window_read_ex(ch, &avail, NULL);
	for (; !avail && s->via; s = s->via)
		libssh2_channel_window_read_ex(s->via_chan, &avail, NULL);
	return avail > 0;
}

static int exit_status_of(LIBSSH2_CHANNEL *ch)
{
	char *sig = NULL;
	size_t siglen = 0;
	if (libssh2_channel_get_exit_signal(ch, &sig, &siglen, NULL, NULL, NULL, NULL) == 0 && sig) {
		int st = ssh_signal_status(sig);
		free(sig);      /* allocated with the session's allocator: malloc */
		return st < 0 ? 255 : st;
	}
	return libssh2_channel_get_exit_status(ch);
}

void ssh_tty_size(int fd, int *cols, int *rows)
{
	struct winsize ws;
	if (ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col && ws.ws_row) {
		*cols = ws.ws_col;
		*rows = ws.ws_row;
	}
}

/* Empties a resize_fd (a self-pipe: more signals may have come than were read). */
void ssh_drain_resize(int fd)
{
	char buf[64];
	while (read(fd, buf, sizeof(buf)) > 0)
		;
}

/* The terminal's new size to the remote pty (a window-change request). */
static void send_window_size(struct ssh_channel *p)
{
	int cols = 0, rows = 0, rc;
	p->resized = false;
	ssh_drain_resize(p->x.resize_fd);
	ssh_tty_size(p->x.in_fd, &cols, &rows);
	if (cols > 0)
		RETRY_EAGAIN(p->s, rc, libssh2_channel_request_pty_size_ex(p->ch, cols, rows, 0, 0),
			     monotonic_seconds() + 5);
}

/* Move data both ways until the command closed its output (remote_eof) or, with
 * until_sent, until libssh2 took all pending input. A failure breaks the channel. */
static int pump_run(struct ssh_channel *p, bool until_sent, struct dp_error *err)
{
	struct ssh_session *s = p->s, *root = root_of(s);

	for (;;) {
		int got_out = 0, got_err = 0, next = 0;
		if (p->resized && !p->send_stuck)
			send_window_size(p);
		if (feed_stdin(p, err) < 0)
			goto broken;
		if (pump_hops(s) < 0) {
			dp_err(err, DPE_CONNECT, "connection to '%s' lost: a ProxyJump hop failed", s->name);
			goto broken;
		}
		if (!p->send_stuck) {
			if (p->interval > 0)
				libssh2_keepalive_send(s->ls, &next);
			if (drain(p, 0, &got_out, err) < 0 || drain(p, 1, &got_err, err) < 0)
				goto broken;
			if (libssh2_channel_eof(p->ch)) {
				p->remote_eof = true;
				return 0;
			}
		}
		if (until_sent && !p->in_left)
			return 0;

		double now = monotonic_seconds();
		if (p->x.cancel && *p->x.cancel) {
			stop_remote(s, p->ch, p->x.pty);
			dp_err(err, DPE_FAIL, "interrupted");
			goto broken;
		}
		if (p->deadline > 0 && now >= p->deadline) {
			stop_remote(s, p->ch, p->x.pty);
			dp_err(err, DPE_TIMEOUT, "command on '%s' timed out after %g s", s->name, p->x.timeout);
			goto broken;
		}
		if (p->interval > 0 && now - p->last_rx > (double)p->interval * (p->countmax + 1)) {
			dp_err(err, DPE_CONNECT, "connection to '%s' lost: no answer to %d keepalives "
			       "(ServerAliveInterval %d)", s->name, p->countmax, p->interval);
			goto broken;
		}
		int ms = 1000;
		if (!p->send_stuck && (got_out || got_err || data_queued(s, p->ch)))
			ms = 0;         /* read already, into libssh2's queues: no wakeup will come */
		if (!p->send_stuck && p->in_left && libssh2_channel_window_write_ex(p->ch, NULL) > 0)
			ms = 0;         /* a window adjustment came in with what drain read */
		if (p->deadline > 0 && (p->deadline - now) * 1000 < ms)
			ms = (int)((p->deadline - now) * 1000) + 1;
		if (next > 0 && next * 1000 < ms)
			ms = next * 1000;
		struct pollfd fds[3] = { { .fd = root->fd, .events = POLLIN }, { .fd = -1 },
					 { .fd = -1 } };
		if (root->out_blocked)
			fds[0].events |= POLLOUT;
		if (p->x.in_fd >= 0 && !p->in_eof && !p->in_left) {
			fds[1].fd = p->x.in_fd;
			fds[1].events = POLLIN;
		}
		if (p->x.interactive && p->x.resize_fd >= 0) {
			fds[2].fd = p->x.resize_fd;
			fds[2].events = POLLIN;
		}
		/* fds[1] is the caller's stdin, a terminal for run -t and shell */
		if (fd_poll(fds, 3, ms) < 0 && errno != EINTR) {
			dp_err(err, DPE_CONNECT, "poll: %s", strerror(errno));
			goto broken;
		}
		if (fds[0].revents)
			p->last_rx = monotonic_seconds();
		if (fds[1].revents)
			p->in_readable = true;
		if (fds[2].revents)
			p->resized = true;
	}
broken:
	p->broken = *err;
	return -1;
}

static void channel_free(struct ssh_channel *p)
{
	struct ssh_session *s = p->s;
	set_blocking(s, true);
	libssh2_session_set_timeout(s->ls, 2000);
	libssh2_channel_free(p->ch);
	libssh2_session_set_timeout(s->ls, s->timeout_ms);
	free(p);
}

int ssh_exec_start(struct ssh_session *s, const struct ssh_exec *x, struct ssh_channel **out,
		   struct dp_error *err)
{
	_cleanup_strbuf_ struct strbuf cmd = STRBUF_INIT;
	LIBSSH2_CHANNEL *ch;

	*out = NULL;
	if (s->mux) {
		struct ssh_mux_channel *mc;
		if (ssh_mux_exec_start(s, x, &mc, err) < 0)
			return -1;
		*out = xcalloc(1, sizeof(**out));
		(*out)->mux = mc;
		(*out)->s = s;
		return 0;
	}
	set_blocking(s, true);
	/* A window of 8 MiB (libssh2's default is 2): what the command prints may be a
	 * stream (cp -r's tar), which 150 ms away would get 13 MiB/s through 2 MiB in
	 * flight. The output is handed on as it comes, so little of it waits here. */
	ch = libssh2_channel_open_ex(s->ls, "session", sizeof("session") - 1, EXEC_WINDOW,
				     LIBSSH2_CHANNEL_PACKET_DEFAULT, NULL, 0);
	if (!ch)
		return dp_err(err, DPE_CONNECT, "cannot open a channel to '%s': %s", s->name,
			      session_error(s));
	struct ssh_channel *p = xcalloc(1, sizeof(*p));
	p->s = s;
	p->ch = ch;
	p->x = *x;
	p->x.in_fd = -1;
	p->x.in_buf = NULL;
	int cols = x->cols, rows = x->rows;
	if (x->interactive)
		ssh_tty_size(x->in_fd, &cols, &rows);
	if (x->pty && libssh2_channel_request_pty_ex(ch, x->term ? x->term : "xterm",
						     (unsigned)strlen(x->term ? x->term : "xterm"),
						     NULL, 0, cols > 0 ? cols : 80,
						     rows > 0 ? rows : 24, 0, 0) != 0) {
		dp_err(err, DPE_CONNECT, "cannot get a terminal on '%s': %s", s->name, last_error(s->ls));
		goto fail;
	}
	if (send_env(s, ch, err) < 0)
		goto fail;
	if (x->raw)
		strbuf_adds(&cmd, x->command);
	else
		ssh_login_command(&cmd, x->command, x->user_shell);
	if (ssh_command_fits(s->name, cmd.len, err) < 0)
		goto fail;
	if (libssh2_channel_exec(ch, cmd.buf) != 0) {
		dp_err(err, DPE_CONNECT, "cannot run a command on '%s': %s", s->name, last_error(s->ls));
		goto fail;
	}

	/* From here on the command runs: whatever happens, it is never sent again. */
	set_blocking(s, false);
	p->deadline = x->timeout > 0 ? monotonic_seconds() + x->timeout : 0;
	p->interval = s->cfg.server_alive_interval;
	p->countmax = s->cfg.server_alive_count_max > 0 ? s->cfg.server_alive_count_max : 3;
	p->last_rx = monotonic_seconds();
	if (p->interval > 0)
		libssh2_keepalive_config(s->ls, 1, (unsigned)p->interval);
	if (x->interactive && x->on_started)
		x->on_started(x->data);
	*out = p;
	return 0;
fail:
	channel_free(p);
	return -1;
}

int ssh_exec_write(struct ssh_channel *p, const void *buf, size_t len, struct dp_error *err)
{
	if (p->mux)
		return ssh_mux_exec_write(p->mux, buf, len, err);
	if (p->broken.kind) {
		*err = p->broken;
		return -1;
	}
	if (p->remote_eof)
		return dp_err(err, DPE_FAIL, "the command on '%s' ended before reading all its input",
			      p->s->name);
	p->in = buf;
	p->in_left = len;
	int r = pump_run(p, true, err);
	size_t left = p->in_left;
	p->in = NULL;
	p->in_left = 0;
	if (r < 0)
		return -1;
	if (left)
		return dp_err(err, DPE_FAIL, "the command on '%s' ended before reading all its input",
			      p->s->name);
	return 0;
}

/* Run until the command ended, take its status and free the channel. */
static int channel_end(struct ssh_channel *p, int *status, struct dp_error *err)
{
	struct ssh_session *s = p->s;
	int rc, r = -1;

	*status = -1;
	if (p->broken.kind)
		*err = p->broken;
	else if (pump_run(p, false, err) == 0) {
		RETRY_EAGAIN(s, rc, libssh2_channel_close(p->ch), 0);
		RETRY_EAGAIN(s, rc, libssh2_channel_wait_closed(p->ch), monotonic_seconds() + 5);
		*status = exit_status_of(p->ch);
		r = 0;
	}
	channel_free(p);
	return r;
}

int ssh_exec_finish(struct ssh_channel *p, int *status, struct dp_error *err)
{
	if (p->mux) {
		int r = ssh_mux_exec_finish(p->mux, status, err);
		free(p);
		return r;
	}
	p->in_eof = true;
	return channel_end(p, status, err);
}

/* An interactive session's output goes to its descriptors as it comes. */
static int to_out_fd(void *data, const char *buf, size_t len)
{
	struct ssh_channel *p = data;
	return write_all(p->x.out_fd, buf, len);
}

static int to_err_fd(void *data, const char *buf, size_t len)
{
	struct ssh_channel *p = data;
	return write_all(p->x.err_fd, buf, len);
}

int ssh_exec(struct ssh_session *s, const struct ssh_exec *x, int *status, struct dp_error *err)
{
	struct ssh_channel *p;

	*status = -1;
	if (s->mux)
		return ssh_mux_exec(s, x, status, err);
	if (ssh_exec_start(s, x, &p, err) < 0)
		return -1;
	p->x.in_fd = x->in_fd;
	if (x->interactive) {
		p->x.on_stdout = to_out_fd;
		p->x.on_stderr = to_err_fd;
		p->x.data = p;
	}
	if (x->in_fd < 0) {
		p->in = x->in_buf;
		p->in_left = x->in_buf ? x->in_len : 0;
		p->in_eof = true;
	}
	return channel_end(p, status, err);
}

static int add_to(void *data, const char *buf, size_t len)
{
	if (data)
		strbuf_add(data, buf, len);
	return 0;
}

struct capture {
	struct strbuf *out, *err;
};

static int cap_out(void *data, const char *buf, size_t len)
{
	return add_to(((struct capture *)data)->out, buf, len);
}

static int cap_err(void *data, const char *buf, size_t len)
{
	return add_to(((struct capture *)data)->err, buf, len);
}

int ssh_exec_capture(struct ssh_session *s, const char *command, const struct strbuf *in,
		     struct strbuf *out, struct strbuf *errout, int *status, struct dp_error *err)
{
	struct capture c = { out, errout };
	struct ssh_exec x = {
		.command = command,
		.in_fd = -1,
		.in_buf = in ? in->buf : NULL,
		.in_len = in ? in->len : 0,
		.on_stdout = cap_out,
		.on_stderr = cap_err,
		.data = &c,
	};
	return ssh_exec(s, &x, status, err);
}
