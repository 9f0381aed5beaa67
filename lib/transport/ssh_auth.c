/* SPDX-License-Identifier: MIT */
/*
 * Logging in, in ssh's order: the CertificateFile certificates (with the identity
 * file that holds their key, else the agent's), the agent (SSH_AUTH_SOCK or IdentityAgent; the
 * certificates it holds too), the identity files (asking for an encrypted key's
 * passphrase), each followed by its FILE-cert.pub when there is one and no
 * CertificateFile was given, keyboard-interactive, then password. Prompts go through the caller's callback; without one (no terminal)
 * or with BatchMode nothing is asked and the failure says what was tried and why each
 * method failed.
 */
#include <errno.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>

#include "base/base64.h"
#include "transport/ssh_internal.h"
#include "transport/sshcert.h"
#include "base/cloexec.h"

#define PROMPT_TRIES 3           /* as ssh's NumberOfPasswordPrompts */

/* memset that the compiler may not drop because the buffer dies right after. */
static void *(*const volatile wipe_)(void *, int, size_t) = memset;
static void wipe(void *p, size_t n)
{
	wipe_(p, 0, n);
}

struct auth {
	struct ssh_session *s;
	const char *user;
	const char *methods;            /* what the server offers, comma-separated */
	bool can_prompt;
	const char *why_not;            /* "BatchMode" or "no terminal" */
	struct strbuf tried;            /* "agent: no agent; key ~/.ssh/id_ed25519: ..." */
};

static void note(struct auth *a, const char *fmt, ...) _printf_(2, 3);
static void note(struct auth *a, const char *fmt, ...)
{
	va_list ap;
	if (a->tried.len)
		strbuf_adds(&a->tried, "; ");
	va_start(ap, fmt);
	strbuf_vaddf(&a->tried, fmt, ap);
	va_end(ap);
}

static bool offered(const struct auth *a, const char *method)
{
	size_t n = strlen(method);
	for (const char *p = a->methods; p && *p;) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);
		if (len == n && strncmp(p, method, n) == 0)
			return true;
		p = comma ? comma + 1 : p + len;
	}
	return false;
}

/* ~/x for paths under $HOME, as ssh shows them (sshconnect.c's try_tilde_unexpand(): for
 * display, ssh reads $HOME, not the passwd entry). */
static char *pretty_path(const char *path)
{
	const char *home = getenv("HOME");
	size_t n = home ? strlen(home) : 0;
	if (n > 1 && strncmp(path, home, n) == 0 && path[n] == '/')
		return xasprintf("~%s", path + n);
	return xstrdup(path);
}

bool ssh_key_is_encrypted(const char *text, size_t len)
{
	static const char openssh_begin[] = "-----BEGIN OPENSSH PRIVATE KEY-----";
	_cleanup_free_ char *copy = xstrndup(text, len);

	if (strstr(copy, "Proc-Type: 4,ENCRYPTED") || strstr(copy, "BEGIN ENCRYPTED PRIVATE KEY"))
		return true;
	char *b = strstr(copy, openssh_begin);
	if (!b)
		return false;
	b += sizeof(openssh_begin) - 1;
	char *e = strstr(b, "-----END");
	if (!e)
		return false;
	_cleanup_strbuf_ struct strbuf raw = STRBUF_INIT;
	if (base64_decode(&raw, b, (size_t)(e - b)) < 0)
		return false;
	/* "openssh-key-v1\0", then string ciphername (uint32 length, bytes). */
	static const char magic[] = "openssh-key-v1";
	if (raw.len < sizeof(magic) + 4 || memcmp(raw.buf, magic, sizeof(magic)) != 0)
		return false;
	const unsigned char *p = (const unsigned char *)raw.buf + sizeof(magic);
	size_t clen = (size_t)p[0] << 24 | (size_t)p[1] << 16 | (size_t)p[2] << 8 | p[3];
	if (clen > raw.len - sizeof(magic) - 4)
		return false;
	return !(clen == 4 && memcmp(p + 4, "none", 4) == 0);
}

/* Why libssh2 would not sign with an RSA key (LIBSSH2_ERROR_METHOD_NONE), shown being
 * "key FILE" or "certificate FILE": none of
 * the RSA signature algorithms dispatch may use (PubkeyAcceptedAlgorithms) is in the
 * server's server-sig-algs. */
static void note_no_signature(struct auth *a, const char *shown)
{
	_cleanup_free_ char *rsa = ssh_algs_filter(a->s->offer[SSH_ALGS_PUBKEY],
						   "rsa-sha2-512,rsa-sha2-256,ssh-rsa");
	_cleanup_free_ char *copy = xstrdup(rsa);
	char *comma = strchr(copy, ',');
	bool sha1 = ssh_algs_has(rsa, "ssh-rsa");
	if (!*rsa)
		note(a, "%s: PubkeyAcceptedAlgorithms allows no RSA signature algorithm", shown);
	else if (comma && !strchr(comma + 1, ',')) {
		*comma = '\0';
		note(a, "%s: the server accepts neither %s nor %s signatures%s", shown, copy,
		     comma + 1, sha1 ? "" : " (dispatch, as ssh, makes no SHA-1 ssh-rsa ones "
		     "unless PubkeyAcceptedAlgorithms adds ssh-rsa)");
	} else {
		note(a, "%s: the server accepts none of the signature algorithms %s", shown, rsa);
	}
}

/* The key blob of a public key (or certificate) file: "type base64 [comment]". */
static bool pub_file_blob(const char *path, struct strbuf *blob)
{
	_cleanup_free_ char *text = read_file(path, NULL);
	if (!text)
		return false;
	char *sp = strchr(text, ' ');
	if (!sp)
		return false;
	char *end = sp + 1;
	while (*end && *end != ' ' && *end != '\n')
		end++;
	return base64_decode(blob, sp + 1, (size_t)(end - sp - 1)) == 0;
}

/* Whether a public key blob is an RSA key (string "ssh-rsa" first). */
static bool is_rsa_blob(const unsigned char *blob, size_t len)
{
	return len > 11 && memcmp(blob, "\0\0\0\7ssh-rsa", 11) == 0;
}

/* The refusal of a key (shown: "key FILE", "certificate FILE"); for an RSA key, which signature it was and what would help:
 * libssh2 signs with the first of the RSA algorithms PubkeyAcceptedAlgorithms allows
 * that the server names in server-sig-algs (and OpenSSH names every one it has, not
 * only those it accepts), as ssh does. */
static void note_refused(struct auth *a, const char *shown, bool rsa)
{
	_cleanup_free_ char *algs = ssh_algs_filter(a->s->offer[SSH_ALGS_PUBKEY],
						    "rsa-sha2-512,rsa-sha2-256,ssh-rsa");
	if (!rsa || ssh_algs_has(algs, "ssh-rsa") || !*algs) {
		note(a, "%s: refused by the server", shown);
		return;
	}
	note(a, "%s: refused by the server (an RSA key, signed with the first of %s the "
	     "server names; a server that takes RSA keys only as SHA-1 ssh-rsa signatures "
	     "needs PubkeyAcceptedAlgorithms ssh-rsa, for ssh too)", shown, algs);
}

/* The key type a public key blob names ("ssh-ed25519"), or NULL. Free it. */
static char *blob_type(const unsigned char *blob, size_t len)
{
	if (len < 4)
		return NULL;
	size_t n = (size_t)blob[0] << 24 | (size_t)blob[1] << 16 | (size_t)blob[2] << 8 | blob[3];
	if (!n || n > len - 4 || n > 64 || memchr(blob + 4, '\0', n))
		return NULL;
	return xstrndup((const char *)blob + 4, n);
}

/* Whether PubkeyAcceptedAlgorithms lets a key of this type be tried, as ssh's
 * key_type_allowed_by_config: its own name, or for RSA keys (and certificates) an
 * rsa-sha2 signature of it. A blob whose type cannot be read is tried. */
static bool key_allowed(const struct auth *a, const unsigned char *blob, size_t len,
			char **type)
{
	const char *algs = a->s->pubkey_algs;
	*type = blob_type(blob, len);
	if (!*type || !algs || ssh_algs_has(algs, *type))
		return true;
	if (streq(*type, "ssh-rsa"))
		return ssh_algs_has(algs, "rsa-sha2-512") || ssh_algs_has(algs, "rsa-sha2-256");
	if (streq(*type, "ssh-rsa-cert-v01@openssh.com"))
		return ssh_algs_has(algs, "rsa-sha2-512-cert-v01@openssh.com") ||
		       ssh_algs_has(algs, "rsa-sha2-256-cert-v01@openssh.com");
	return false;
}

/* The public key blob of an identity file, from FILE.pub; false when there is none. */
static bool pub_blob(const char *file, struct strbuf *blob)
{
	_cleanup_free_ char *pub = xasprintf("%s.pub", file);
	return pub_file_blob(pub, blob);
}

/* Whether some identity file's FILE.pub holds this plain key blob. */
static const char *identity_with_key(const struct auth *a, const unsigned char *key, size_t len)
{
	for (char **f = a->s->cfg.identity_files; f && *f; f++) {
		_cleanup_strbuf_ struct strbuf blob = STRBUF_INIT;
		if (pub_blob(*f, &blob) && blob.len == len && memcmp(blob.buf, key, len) == 0)
			return *f;
	}
	return NULL;
}

static bool file_holds(const char *path, const unsigned char *blob, size_t len)
{
	_cleanup_strbuf_ struct strbuf b = STRBUF_INIT;
	return pub_file_blob(path, &b) && b.len == len && memcmp(b.buf, blob, len) == 0;
}

/* IdentitiesOnly, as ssh's pubkey_prepare: an agent key counts when an identity file
 * holds it (FILE.pub), an agent certificate when it is one of the certificates ssh
 * would load itself: a CertificateFile, or (without CertificateFile) an identity
 * file's FILE-cert.pub. */
static bool identity_listed(const struct auth *a, const struct libssh2_agent_publickey *id)
{
	if (identity_with_key(a, id->blob, id->blob_len))
		return true;
	const struct ssh_host_config *cfg = &a->s->cfg;
	for (char **f = cfg->certificate_files; f && *f; f++)
		if (file_holds(*f, id->blob, id->blob_len))
			return true;
	for (char **f = cfg->identity_files; !cfg->certificate_files && f && *f; f++) {
		_cleanup_free_ char *cert = xasprintf("%s-cert.pub", *f);
		if (file_holds(cert, id->blob, id->blob_len))
			return true;
	}
	return false;
}

/* Whether a key blob (string type, ...) is a certificate's. */
static bool blob_is_cert(const unsigned char *blob, size_t len)
{
	if (len < 4)
		return false;
	size_t n = (size_t)blob[0] << 24 | (size_t)blob[1] << 16 | (size_t)blob[2] << 8 | blob[3];
	return n <= len - 4 && sshcert_is_cert_type((const char *)blob + 4, n);
}

/* Why the server may have refused a user certificate, as far as it can be told here:
 * " (... has expired: ...)", or "" when the certificate looks fine for user. */
static void cert_hint(const char *user, const unsigned char *blob, size_t len, struct strbuf *hint)
{
	struct sshcert c;
	struct dp_error err;
	if (sshcert_parse(blob, len, &c, &err) < 0) {
		strbuf_addf(hint, " (%s)", err.msg);
		return;
	}
	if (sshcert_check(&c, SSHCERT_USER, user, false, (uint64_t)time(NULL), &err) < 0)
		strbuf_addf(hint, " (%s)", err.msg);
	sshcert_release(&c);
}

/* ---- RSA certificates through the agent ----
 * libssh2 1.11.1 asks the agent for an RSA certificate's signature without the
 * rsa-sha2 flag (agent.c sets it only when the method is exactly "rsa-sha2-512" or
 * "rsa-sha2-256", not "rsa-sha2-512-cert-v01@openssh.com"), gets an ssh-rsa (SHA-1)
 * signature back, and retries as ssh-rsa-cert-v01@openssh.com, which OpenSSH 8.8 and
 * later refuse. For RSA certificates dispatch asks the agent itself (the agent
 * protocol's SIGN_REQUEST), with the flag that fits the algorithm libssh2 put in the
 * request it signs; libssh2 still builds and sends that request. */

#define AGENTC_SIGN_REQUEST 13
#define AGENT_SIGN_RESPONSE 14
#define AGENT_RSA_SHA2_256 2
#define AGENT_RSA_SHA2_512 4
#define AGENT_MAX_REPLY (256 * 1024)

struct rd {
	const unsigned char *p;
	size_t n;
};

static bool rd_string(struct rd *r, const unsigned char **s, size_t *len)
{
	if (r->n < 4)
		return false;
	size_t n = (size_t)r->p[0] << 24 | (size_t)r->p[1] << 16 | (size_t)r->p[2] << 8 | r->p[3];
	if (n > r->n - 4)
		return false;
	*s = r->p + 4;
	*len = n;
	r->p += 4 + n;
	r->n -= 4 + n;
	return true;
}

static void put_u32(struct strbuf *sb, size_t v)
{
	unsigned char b[4] = { (unsigned char)(v >> 24), (unsigned char)(v >> 16),
			       (unsigned char)(v >> 8), (unsigned char)v };
	strbuf_add(sb, b, 4);
}

static void put_string(struct strbuf *sb, const void *s, size_t n)
{
	put_u32(sb, n);
	strbuf_add(sb, s, n);
}

static bool read_all(int fd, char *p, size_t n)
{
	while (n) {
		ssize_t r = read(fd, p, n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return false;
		p += r, n -= (size_t)r;
	}
	return true;
}

/* One request to the agent at sock, one reply (its body, without the length). */
static bool agent_request(const char *sock, const struct strbuf *req, struct strbuf *reply)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	if (strlen(sock) >= sizeof(sa.sun_path))
		return false;
	memcpy(sa.sun_path, sock, strlen(sock) + 1);
	_cleanup_close_ int fd = cloexec_socket(AF_UNIX, SOCK_STREAM, 0);
	if (fd < 0)
		return false;
	struct timeval tv = { .tv_sec = 30 };   /* an agent that asks for confirmation */
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return false;
	_cleanup_strbuf_ struct strbuf msg = STRBUF_INIT;
	put_string(&msg, req->buf, req->len);
	unsigned char len[4];
	if (write_all(fd, msg.buf, msg.len) < 0 || !read_all(fd, (char *)len, 4))
		return false;
	size_t n = (size_t)len[0] << 24 | (size_t)len[1] << 16 | (size_t)len[2] << 8 | len[3];
	if (n == 0 || n > AGENT_MAX_REPLY)
		return false;
	strbuf_grow(reply, n);
	if (!read_all(fd, reply->buf, n))
		return false;
	reply->len = n;
	reply->buf[n] = '\0';
	return true;
}

/* Signing with a key the agent holds, named by its blob (plain, or the certificate). */
struct agent_key {
	const char *sock;
	const unsigned char *blob;
	size_t len;
	bool no_key;                    /* the agent answered, without a signature */
};

static LIBSSH2_USERAUTH_PUBLICKEY_SIGN_FUNC(agent_sign)
{
	struct agent_key *ak = *abstract;
	(void)session;
	/* data: string session id, byte 50, string user, string service, string
	 * "publickey", bool TRUE, string algorithm, string key blob */
	struct rd r = { data, data_len };
	const unsigned char *f, *alg = NULL;
	size_t fn, alg_len = 0;
	if (!rd_string(&r, &f, &fn) || r.n < 1)
		return -1;
	r.p++, r.n--;
	for (int i = 0; i < 3; i++)
		if (!rd_string(&r, &f, &fn))
			return -1;
	if (r.n < 1)
		return -1;
	r.p++, r.n--;
	if (!rd_string(&r, &alg, &alg_len))
		return -1;
	/* The signature's algorithm: the request's, without -cert-v01@openssh.com. */
	static const char suffix[] = "-cert-v01@openssh.com";
	size_t slen = sizeof(suffix) - 1;
	if (alg_len > slen && memcmp(alg + alg_len - slen, suffix, slen) == 0)
		alg_len -= slen;
	_cleanup_free_ char *want = xstrndup((const char *)alg, alg_len);
	uint32_t flags = streq(want, "rsa-sha2-512") ? AGENT_RSA_SHA2_512 :
			 streq(want, "rsa-sha2-256") ? AGENT_RSA_SHA2_256 : 0;

	_cleanup_strbuf_ struct strbuf req = STRBUF_INIT, reply = STRBUF_INIT;
	strbuf_addch(&req, AGENTC_SIGN_REQUEST);
	put_string(&req, ak->blob, ak->len);
	put_string(&req, data, data_len);
	put_u32(&req, flags);
	if (!agent_request(ak->sock, &req, &reply) || reply.len < 1)
		return -1;
	if ((unsigned char)reply.buf[0] != AGENT_SIGN_RESPONSE) {
		ak->no_key = true;
		return -1;
	}
	struct rd rr = { (const unsigned char *)reply.buf + 1, reply.len - 1 };
	const unsigned char *blob, *name, *bytes;
	size_t blob_len, name_len, bytes_len;
	if (!rd_string(&rr, &blob, &blob_len))
		return -1;
	struct rd br = { blob, blob_len };
	if (!rd_string(&br, &name, &name_len) || !rd_string(&br, &bytes, &bytes_len) ||
	    name_len != strlen(want) || memcmp(name, want, name_len) != 0)
		return -1;
	*sig = malloc(bytes_len ? bytes_len : 1);       /* libssh2 frees it: free() */
	if (!*sig)
		return -1;
	memcpy(*sig, bytes, bytes_len);
	*sig_len = bytes_len;
	return 0;
}

static bool is_rsa_cert(const struct libssh2_agent_publickey *id)
{
	static const char t[] = "\0\0\0\034ssh-rsa-cert-v01@openssh.com";
	return id->blob_len > sizeof(t) - 1 && memcmp(id->blob, t, sizeof(t) - 1) == 0;
}

static int try_agent(struct auth *a)
{
	LIBSSH2_SESSION *ls = a->s->ls;
	const struct ssh_host_config *cfg = &a->s->cfg;

	if (cfg->identity_agent && streq(cfg->identity_agent, "none")) {
		note(a, "agent: disabled (IdentityAgent none)");
		return -1;
	}
	const char *sock = ssh_host_config_agent_socket(cfg);
	if (!sock) {
		note(a, "agent: no agent (SSH_AUTH_SOCK is not set)");
		return -1;
	}
	LIBSSH2_AGENT *agent = libssh2_agent_init(ls);
	if (!agent) {
		note(a, "agent: cannot start the agent client");
		return -1;
	}
	int r = -1, tried = 0;
	struct libssh2_agent_publickey *id = NULL, *prev = NULL;
	struct strbuf certs = STRBUF_INIT;      /* released at out: (gotos jump here) */
	libssh2_agent_set_identity_path(agent, sock);
	if (libssh2_agent_connect(agent) != 0) {
		note(a, "agent: cannot connect to %s", sock);
		goto out;
	}
	if (libssh2_agent_list_identities(agent) != 0) {
		note(a, "agent: cannot list its keys");
		goto disconnect;
	}
	int skipped = 0;
	while (libssh2_agent_get_identity(agent, &id, prev) == 0) {
		prev = id;
		if (cfg->identities_only && !identity_listed(a, id))
			continue;
		_cleanup_free_ char *type = NULL;
		if (!key_allowed(a, id->blob, id->blob_len, &type)) {
			skipped++;
			continue;
		}
		tried++;
		int rc;
		if (is_rsa_cert(id)) {
			struct agent_key ak = { .sock = sock, .blob = id->blob, .len = id->blob_len };
			void *abstract = &ak;
			rc = libssh2_userauth_publickey(ls, a->user, id->blob, id->blob_len,
							agent_sign, &abstract);
		} else {
			rc = libssh2_agent_userauth(agent, a->user, id);
		}
		if (rc == 0) {
			r = 0;
			break;
		}
		if (rc == LIBSSH2_ERROR_METHOD_NONE) {
			_cleanup_free_ char *what = xasprintf("key %s (agent)",
							      id->comment ? id->comment : "");
			note_no_signature(a, what);
		} else if (blob_is_cert(id->blob, id->blob_len)) {
			strbuf_addf(&certs, "; agent certificate '%s': refused by the server",
				    id->comment ? id->comment : "");
			cert_hint(a->user, id->blob, id->blob_len, &certs);
		}
	}
	if (r < 0 && tried)
		note(a, "agent: %d key%s refused%s", tried, tried == 1 ? "" : "s", certs.buf);
	else if (r < 0 && !skipped)
		note(a, "agent: no keys");
	if (r < 0 && skipped)
		note(a, "agent: %d key%s of a type PubkeyAcceptedAlgorithms leaves out", skipped,
		     skipped == 1 ? "" : "s");
disconnect:
	libssh2_agent_disconnect(agent);
out:
	libssh2_agent_free(agent);
	strbuf_release(&certs);
	return r;
}

static int ask(struct auth *a, const char *prompt, bool echo, char *buf, size_t size)
{
	const struct ssh_ctx *ctx = a->s->ctx;
	a->s->prompted = true;
	return ctx->prompt(ctx->prompt_data, prompt, echo, buf, size);
}

/* The signing callback of a probe: it runs only when the server would take the key. */
static LIBSSH2_USERAUTH_PUBLICKEY_SIGN_FUNC(probe_sign)
{
	bool *takes = *abstract;
	*takes = true;
	(void)session;
	(void)sig;
	(void)sig_len;
	(void)data;
	(void)data_len;
	return -1;
}

/* Whether the server would take the public key in pub (FILE.pub or a certificate) (1),
 * would not (0), or the question failed (-1, noted). As ssh: an encrypted key's
 * passphrase is asked only for a key the server takes. Without the file, 1: the key
 * must be opened to know. */
static int server_takes(struct auth *a, const char *pub, const char *shown)
{
	_cleanup_strbuf_ struct strbuf blob = STRBUF_INIT;
	bool takes = false;
	void *data = &takes;

	if (!pub_file_blob(pub, &blob))
		return 1;
	int r = libssh2_userauth_publickey(a->s->ls, a->user, (const unsigned char *)blob.buf,
					   blob.len, probe_sign, &data);
	if (takes || r == 0)
		return 1;
	/* AUTHENTICATION_FAILED (or PUBLICKEY_UNVERIFIED) when the server refuses the key */
	if (r == LIBSSH2_ERROR_AUTHENTICATION_FAILED || r == LIBSSH2_ERROR_PUBLICKEY_UNVERIFIED) {
		_cleanup_strbuf_ struct strbuf hint = STRBUF_INIT;
		if (blob_is_cert((const unsigned char *)blob.buf, blob.len)) {
			cert_hint(a->user, (const unsigned char *)blob.buf, blob.len, &hint);
			note(a, "%s: refused by the server%s", shown, hint.buf);
		} else {
			note_refused(a, shown, is_rsa_blob((const unsigned char *)blob.buf, blob.len));
		}
		return 0;
	}
	if (r == LIBSSH2_ERROR_METHOD_NONE) {
		note_no_signature(a, shown);
		return 0;
	}
	char *msg = NULL;
	libssh2_session_last_error(a->s->ls, &msg, NULL, 0);
	note(a, "%s: %s", shown, msg ? msg : "failed");
	return -1;
}

/* Log in with the private key in file, offering its public key, or the certificate
 * cert (a file holding "type base64") when not NULL. */
static int try_identity(struct auth *a, const char *file, const char *cert)
{
	LIBSSH2_SESSION *ls = a->s->ls;
	size_t len;
	_cleanup_free_ char *text = read_file(file, &len);
	_cleanup_free_ char *path = pretty_path(file);
	_cleanup_free_ char *cpath = cert ? pretty_path(cert) : NULL;
	_cleanup_free_ char *shown = cert ? xasprintf("certificate %s", cpath) :
					    xasprintf("key %s", path);
	_cleanup_free_ char *pub = xasprintf("%s.pub", file);

	if (!text) {
		if (errno != ENOENT || a->s->cfg.identity_files_set)
			note(a, "%s: %s", shown, strerror(errno));
		return -1;
	}
	bool encrypted = ssh_key_is_encrypted(text, len);
	wipe(text, len);
	{
		/* as ssh: a key (or certificate) whose type PubkeyAcceptedAlgorithms leaves
		 * out is not tried (known from FILE.pub; without it the key is tried) */
		_cleanup_strbuf_ struct strbuf blob = STRBUF_INIT;
		_cleanup_free_ char *type = NULL;
		if ((cert ? pub_file_blob(cert, &blob) : pub_blob(file, &blob)) &&
		    !key_allowed(a, (const unsigned char *)blob.buf, blob.len, &type)) {
			note(a, "%s: not tried, PubkeyAcceptedAlgorithms leaves out its type %s",
			     shown, type);
			return -1;
		}
	}
	/* For an encrypted key libssh2 derives the public key from the private one, so
	 * that a wrong passphrase fails there (LIBSSH2_ERROR_FILE) and not as a refusal.
	 * A certificate cannot be derived: it is always given. */
	const char *pubp = cert ? cert : !encrypted && access(pub, R_OK) == 0 ? pub : NULL;
	if (encrypted && server_takes(a, cert ? cert : pub, shown) <= 0)
		return -1;
	if (encrypted && !a->can_prompt) {
		note(a, "%s needs a passphrase (%s)", shown, a->why_not);
		return -1;
	}
	for (int i = 0; i < (encrypted ? PROMPT_TRIES : 1); i++) {
		char pass[1024] = "";
		if (encrypted) {
			_cleanup_free_ char *prompt = xasprintf("Enter passphrase for key '%s': ", path);
			if (ask(a, prompt, false, pass, sizeof(pass)) < 0 || !pass[0]) {
				/* as ssh: an empty answer skips the key */
				note(a, "%s needs a passphrase (none given)", shown);
				wipe(pass, sizeof(pass));
				return -1;
			}
		}
		int r = libssh2_userauth_publickey_fromfile_ex(ls, a->user, (unsigned)strlen(a->user),
							       pubp, file, pass);
		wipe(pass, sizeof(pass));
		if (r == 0)
			return 0;
		if (r == LIBSSH2_ERROR_FILE && encrypted)
			continue;       /* wrong passphrase: ask again, as ssh does */
		if (r == LIBSSH2_ERROR_FILE) {
			note(a, "%s: cannot load %s (format not supported)", shown,
			     cert ? "it or its key" : "it");
			return -1;
		}
		if (r == LIBSSH2_ERROR_PUBLICKEY_UNVERIFIED || r == LIBSSH2_ERROR_AUTHENTICATION_FAILED) {
			_cleanup_strbuf_ struct strbuf blob = STRBUF_INIT, hint = STRBUF_INIT;
			if (cert && pub_file_blob(cert, &blob)) {
				cert_hint(a->user, (const unsigned char *)blob.buf, blob.len, &hint);
				note(a, "%s: refused by the server%s", shown, hint.buf);
			} else {
				note_refused(a, shown, pub_blob(file, &blob) &&
					     is_rsa_blob((const unsigned char *)blob.buf, blob.len));
			}
			return -1;
		}
		if (r == LIBSSH2_ERROR_METHOD_NONE) {
			note_no_signature(a, shown);
			return -1;
		}
		char *msg = NULL;
		libssh2_session_last_error(ls, &msg, NULL, 0);
		note(a, "%s: %s", shown, msg ? msg : "failed");
		return -1;
	}
	note(a, "%s: wrong passphrase (%d tries)", shown, PROMPT_TRIES);
	return -1;
}

/* An identity file, then (as ssh, when no CertificateFile is given) the certificate
 * ssh-keygen -s writes beside it, FILE-cert.pub, if there is one. */
static int try_identity_and_cert(struct auth *a, const char *file)
{
	if (try_identity(a, file, NULL) == 0)
		return 0;
	if (a->s->cfg.certificate_files)
		return -1;
	_cleanup_free_ char *cert = xasprintf("%s-cert.pub", file);
	if (access(cert, F_OK) != 0 || access(file, F_OK) != 0)
		return -1;
	return try_identity(a, file, cert);
}

/* A certificate whose key only the agent holds: the agent signs for it (as ssh does). */
static int try_cert_with_agent(struct auth *a, const char *shown, const struct strbuf *cert,
			       const unsigned char *key, size_t key_len)
{
	const struct ssh_host_config *cfg = &a->s->cfg;
	const char *sock = cfg->identity_agent && streq(cfg->identity_agent, "none") ? NULL :
			   ssh_host_config_agent_socket(cfg);
	if (!sock) {
		note(a, "%s: no identity file holds its key (FILE.pub beside the private key), "
		     "and no agent is used", shown);
		return -1;
	}
	struct agent_key ak = { .sock = sock, .blob = key, .len = key_len };
	void *abstract = &ak;
	int rc = libssh2_userauth_publickey(a->s->ls, a->user, (const unsigned char *)cert->buf,
					    cert->len, agent_sign, &abstract);
	if (rc == 0)
		return 0;
	_cleanup_strbuf_ struct strbuf hint = STRBUF_INIT;
	if (ak.no_key)
		note(a, "%s: neither an identity file nor the agent holds its key", shown);
	else if (rc == LIBSSH2_ERROR_AUTHENTICATION_FAILED ||
		 rc == LIBSSH2_ERROR_PUBLICKEY_UNVERIFIED) {
		cert_hint(a->user, (const unsigned char *)cert->buf, cert->len, &hint);
		note(a, "%s (key in the agent): refused by the server%s", shown, hint.buf);
	} else {
		char *msg = NULL;
		libssh2_session_last_error(a->s->ls, &msg, NULL, 0);
		note(a, "%s (key in the agent): %s", shown, msg ? msg : "failed");
	}
	return -1;
}

/* CertificateFile: each certificate with the identity file whose FILE.pub is its key,
 * else with the agent's key. */
static int try_certificate_files(struct auth *a)
{
	for (char **c = a->s->cfg.certificate_files; c && *c; c++) {
		_cleanup_strbuf_ struct strbuf blob = STRBUF_INIT;
		_cleanup_free_ char *shown = pretty_path(*c);
		struct sshcert cert;
		struct dp_error err;
		if (access(*c, F_OK) != 0) {
			note(a, "certificate %s: %s", shown, strerror(errno));
			continue;
		}
		if (!pub_file_blob(*c, &blob)) {
			note(a, "certificate %s: cannot read it as 'type base64' text", shown);
			continue;
		}
		if (sshcert_parse(blob.buf, blob.len, &cert, &err) < 0) {
			note(a, "certificate %s: %s", shown, err.msg);
			continue;
		}
		const char *file = identity_with_key(a, cert.key, cert.key_len);
		_cleanup_free_ char *what = xasprintf("certificate %s", shown);
		int r = file ? try_identity(a, file, *c) :
			try_cert_with_agent(a, what, &blob, cert.key, cert.key_len);
		sshcert_release(&cert);
		if (r == 0)
			return 0;
	}
	return -1;
}

/* Server text for the terminal: control characters (escape sequences a hostile
 * server could send) shown as '?', except newlines and tabs. */
static void add_server_text(struct strbuf *sb, const char *text, int len)
{
	for (int i = 0; text && i < len; i++) {
		unsigned char c = (unsigned char)text[i];
		strbuf_addch(sb, (c < 0x20 && c != '\n' && c != '\t') || c == 0x7f ? '?' : (char)c);
	}
}

/* Asks the server's questions on the terminal, as ssh: its name and instruction
 * first (if any), each prompt after "(user@host) ". */
static LIBSSH2_USERAUTH_KBDINT_RESPONSE_FUNC(kbdint_cb)
{
	struct ssh_session *s = *abstract;
	const struct ssh_ctx *ctx = s->ctx;
	for (int i = 0; i < num_prompts; i++) {
		char answer[1024] = "";
		_cleanup_strbuf_ struct strbuf text = STRBUF_INIT;
		if (i == 0) {
			add_server_text(&text, name, name_len);
			if (name_len > 0)
				strbuf_addch(&text, '\n');
			add_server_text(&text, instruction, instruction_len);
			if (instruction_len > 0 && instruction[instruction_len - 1] != '\n')
				strbuf_addch(&text, '\n');
		}
		strbuf_addf(&text, "(%s@%s) ", s->cfg.user, s->name);
		s->prompted = true;
		add_server_text(&text, (const char *)prompts[i].text, (int)prompts[i].length);
		if (s->kbd_gave_up ||
		    ctx->prompt(ctx->prompt_data, text.buf, prompts[i].echo, answer, sizeof(answer)) < 0) {
			s->kbd_gave_up = true;
			answer[0] = '\0';
		}
		responses[i].text = strdup(answer);     /* libssh2 frees it with its allocator: free() */
		responses[i].length = responses[i].text ? (unsigned)strlen(answer) : 0;
		wipe(answer, sizeof(answer));
	}
}

static int try_kbdint(struct auth *a)
{
	if (!a->can_prompt) {
		note(a, "keyboard-interactive: needs a terminal (%s)", a->why_not);
		return -1;
	}
	/* As ssh: the server's questions up to PROMPT_TRIES times, unless the user gives
	 * up (end of input at a prompt). */
	a->s->kbd_gave_up = false;
	int i;
	for (i = 0; i < PROMPT_TRIES && !a->s->kbd_gave_up; i++) {
		int r = libssh2_userauth_keyboard_interactive_ex(a->s->ls, a->user,
								 (unsigned)strlen(a->user), kbdint_cb);
		if (r == 0)
			return 0;
		if (r != LIBSSH2_ERROR_AUTHENTICATION_FAILED) {
			char *msg = NULL;
			libssh2_session_last_error(a->s->ls, &msg, NULL, 0);
			note(a, "keyboard-interactive: %s", msg ? msg : "failed");
			return -1;
		}
	}
	if (a->s->kbd_gave_up)
		note(a, "keyboard-interactive: no answer given");
	else
		note(a, "keyboard-interactive: refused (%d tries)", i);
	return -1;
}

static int try_password(struct auth *a)
{
	if (!a->can_prompt) {
		note(a, "password: needs a terminal (%s)", a->why_not);
		return -1;
	}
	_cleanup_free_ char *prompt = xasprintf("%s@%s's password: ", a->user, a->s->cfg.hostname);
	for (int i = 0; i < PROMPT_TRIES; i++) {
		char pass[1024];
		if (ask(a, prompt, false, pass, sizeof(pass)) < 0)
			break;
		int r = libssh2_userauth_password_ex(a->s->ls, a->user, (unsigned)strlen(a->user), pass,
						     (unsigned)strlen(pass), NULL);
		wipe(pass, sizeof(pass));
		if (r == 0)
			return 0;
	}
	note(a, "password: refused");
	return -1;
}

int ssh_auth(struct ssh_session *s, struct dp_error *err)
{
	const struct ssh_ctx *ctx = s->ctx;
	struct auth a = { .s = s, .user = s->cfg.user, .tried = STRBUF_INIT };
	int r = -1;

	a.can_prompt = ctx->prompt && !ctx->batch_mode && !s->cfg.batch_mode;
	a.why_not = ctx->batch_mode || s->cfg.batch_mode ? "BatchMode" : "no terminal";

	char *methods = libssh2_userauth_list(s->ls, a.user, (unsigned)strlen(a.user));
	if (!methods) {
		if (libssh2_userauth_authenticated(s->ls))
			return 0;
		char *msg = NULL;
		libssh2_session_last_error(s->ls, &msg, NULL, 0);
		return dp_err(err, DPE_CONNECT, "cannot log in to '%s' as '%s': %s", s->name, a.user,
			      msg ? msg : "the server closed the connection");
	}
	a.methods = methods;
	if (offered(&a, "publickey")) {
		r = try_certificate_files(&a);
		if (r < 0)
			r = try_agent(&a);
		for (char **f = s->cfg.identity_files; r < 0 && f && *f; f++)
			r = try_identity_and_cert(&a, *f);
	}
	if (r < 0 && offered(&a, "keyboard-interactive"))
		r = try_kbdint(&a);
	if (r < 0 && offered(&a, "password"))
		r = try_password(&a);
	if (r < 0) {
		if (!a.tried.len)
			note(&a, "no method dispatch knows");
		dp_err(err, DPE_CONNECT, "cannot log in to '%s' as '%s' (the server offers %s): %s",
		       s->name, a.user, methods, a.tried.buf);
	}
	strbuf_release(&a.tried);
	return r;
}
