/* SPDX-License-Identifier: MIT */
/*
 * known_hosts checking, line by line, so that a changed key is reported with its
 * file:line as ssh does. Plain lines are matched here (patterns with * ? and !
 * negation, which libssh2's own checking does not know, 1.11.1 included), and so are
 * hashed ones (|1|salt|hash: an HMAC-SHA1 of the name).
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <libssh2.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/sha.h>
#include <pthread.h>
#include <sys/stat.h>
#include <time.h>

#include "base/base64.h"
#include "transport/known_hosts.h"
#include "transport/sshcert.h"

static pthread_mutex_t add_lock = PTHREAD_MUTEX_INITIALIZER;

char *kh_host_name(const char *host, int port)
{
	if (port == 22 || port <= 0)
		return xstrdup(host);
	return xasprintf("[%s]:%d", host, port);
}

static const struct {
	int type;
	int mask;
	const char *name, *short_name;
} key_types[] = {
	{ LIBSSH2_HOSTKEY_TYPE_RSA, LIBSSH2_KNOWNHOST_KEY_SSHRSA, "ssh-rsa", "RSA" },
	{ LIBSSH2_HOSTKEY_TYPE_DSS, LIBSSH2_KNOWNHOST_KEY_SSHDSS, "ssh-dss", "DSA" },
	{ LIBSSH2_HOSTKEY_TYPE_ECDSA_256, LIBSSH2_KNOWNHOST_KEY_ECDSA_256, "ecdsa-sha2-nistp256", "ECDSA" },
	{ LIBSSH2_HOSTKEY_TYPE_ECDSA_384, LIBSSH2_KNOWNHOST_KEY_ECDSA_384, "ecdsa-sha2-nistp384", "ECDSA" },
	{ LIBSSH2_HOSTKEY_TYPE_ECDSA_521, LIBSSH2_KNOWNHOST_KEY_ECDSA_521, "ecdsa-sha2-nistp521", "ECDSA" },
	{ LIBSSH2_HOSTKEY_TYPE_ED25519, LIBSSH2_KNOWNHOST_KEY_ED25519, "ssh-ed25519", "ED25519" },
};

static int key_index(int type)
{
	for (size_t i = 0; i < ARRAY_SIZE(key_types); i++)
		if (key_types[i].type == type)
			return (int)i;
	return -1;
}

const char *kh_key_type_name(int type)
{
	int i = key_index(type);
	return i < 0 ? NULL : key_types[i].name;
}

const char *kh_key_short_name(int type)
{
	int i = key_index(type);
	return i < 0 ? "unknown" : key_types[i].short_name;
}

char *kh_fingerprint(const unsigned char sha256[32])
{
	struct strbuf sb = STRBUF_INIT;
	strbuf_adds(&sb, "SHA256:");
	base64_encode(&sb, sha256, 32, false);
	return strbuf_detach(&sb);
}

void kh_format_line(struct strbuf *sb, const char *name, const struct kh_key *key)
{
	const char *type = kh_key_type_name(key->type);
	strbuf_addf(sb, "%s %s ", name, type ? type : "unknown");
	base64_encode(sb, key->blob, key->len, true);
	strbuf_addch(sb, '\n');
}

/* ssh's match_pattern: '*' and '?', case-insensitive. */
static bool glob_match(const char *pat, size_t plen, const char *s)
{
	while (plen) {
		if (*pat == '*') {
			for (;; s++) {
				if (glob_match(pat + 1, plen - 1, s))
					return true;
				if (!*s)
					return false;
			}
		}
		if (!*s || (*pat != '?' && tolower((unsigned char)*pat) != tolower((unsigned char)*s)))
			return false;
		pat++, plen--, s++;
	}
	return !*s;
}

/* A comma-separated list of patterns, '!' negating (a negated match wins). */
static bool hosts_match(const char *list, size_t len, const char *name)
{
	bool matched = false;
	while (len) {
		const char *comma = memchr(list, ',', len);
		size_t n = comma ? (size_t)(comma - list) : len;
		bool neg = n && list[0] == '!';
		if (glob_match(list + neg, n - neg, name)) {
			if (neg)
				return false;
			matched = true;
		}
		list += n + (comma ? 1 : 0);
		len -= n + (comma ? 1 : 0);
	}
	return matched;
}

/* SHA-1, fetched once: OpenSSL 3's one-shot HMAC() looks the digest up on every call,
 * which cost as much as the rest of a connection's CPU time with 3,000 of them. */
static EVP_MD *sha1_md;
static pthread_once_t sha1_once = PTHREAD_ONCE_INIT;

static void sha1_fetch(void)
{
	sha1_md = EVP_MD_fetch(NULL, "SHA1", NULL);
}

/* One line of a known_hosts file, blanks and the @revoked or @cert-authority marker
 * taken off; host says whether its host field names the host looked up. */
struct kh_line {
	const char *file;
	int lineno;
	const char *s;
	size_t n;
	bool revoked;
	bool ca;                /* @cert-authority: the key is a CA's, for host certificates */
	bool host;
};

/* ---- the files, read once per process ----
 *
 * A fan-out checks every host against the same files, two or three times per
 * connection (host key order, the key, a certificate's CA). Each file is read and
 * split once, its hashed fields (|1|salt|hash) decoded once, and which of them name a
 * host is worked out once per host: one HMAC-SHA1 per hashed line and host, as ssh
 * does it, where reading and decoding the file per check cost as much again. A file
 * is read again when it changes (stat: device, inode, size, mtime, ctime), e.g. after
 * kh_add; the versions read stay reachable until the process ends, since another
 * thread may still be reading one. */

struct kh_cline {
	struct kh_line l;
	int hashed;                     /* index into the file's salts, or -1 */
};

struct kh_salt {
	unsigned char salt[64], hash[SHA_DIGEST_LENGTH];
	size_t salt_len;
};

/* Which hashed lines name one host (a bit per hashed line). */
struct kh_memo {
	char *name;
	unsigned char *bits;
	struct kh_memo *next;
};

struct kh_file {
	char *path;
	struct stat st;
	char *buf;
	struct kh_cline *lines;
	size_t n;
	struct kh_salt *salts;
	size_t nsalts;
	struct kh_memo *memos;
	struct kh_file *next;
};

static pthread_mutex_t files_lock = PTHREAD_MUTEX_INITIALIZER;
static struct kh_file *files_read;

static bool same_file(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
	       a->st_mtime == b->st_mtime && a->st_ctime == b->st_ctime;
}

/* A hashed host field's salt and HMAC, decoded; false when it is not one. */
static bool decode_hashed(const char *field, size_t len, struct kh_salt *out)
{
	const char *end = field + len, *salt = field + 3;
	if (len < 3 || memcmp(field, "|1|", 3) != 0)
		return false;
	const char *bar = memchr(salt, '|', (size_t)(end - salt));
	if (!bar)
		return false;
	_cleanup_strbuf_ struct strbuf key = STRBUF_INIT, hash = STRBUF_INIT;
	if (base64_decode(&key, salt, (size_t)(bar - salt)) < 0 || key.len > sizeof(out->salt) ||
	    base64_decode(&hash, bar + 1, (size_t)(end - bar - 1)) < 0 || hash.len != SHA_DIGEST_LENGTH)
		return false;
	memcpy(out->salt, key.buf, key.len);
	out->salt_len = key.len;
	memcpy(out->hash, hash.buf, SHA_DIGEST_LENGTH);
	return true;
}

/* Whether s (n bytes) starts with the marker, then a blank; if so, skip both. */
static bool take_marker(const char **s, size_t *n, const char *marker)
{
	size_t m = strlen(marker);
	if (*n <= m || strncmp(*s, marker, m) != 0 || ((*s)[m] != ' ' && (*s)[m] != '\t'))
		return false;
	*s += m, *n -= m;
	while (*n && (**s == ' ' || **s == '\t'))
		(*s)++, (*n)--;
	return true;
}

/* Splits buf into host lines (comments, blank lines and unknown markers skipped). */
static void split_lines(struct kh_file *f, size_t len)
{
	size_t cap = 0;
	int lineno = 0;
	for (char *p = f->buf; p < f->buf + len;) {
		char *nl = memchr(p, '\n', (size_t)(f->buf + len - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(f->buf + len - p);
		const char *s = p;
		struct kh_line l = { .file = f->path, .lineno = ++lineno };
		p += n + 1;
		while (n && (*s == ' ' || *s == '\t'))
			s++, n--;
		l.revoked = take_marker(&s, &n, "@revoked");
		l.ca = !l.revoked && take_marker(&s, &n, "@cert-authority");
		if (!n || *s == '#' || *s == '@')
			continue;
		l.s = s;
		l.n = n;
		if (f->n == cap) {
			cap = cap ? 2 * cap : 64;
			f->lines = xrealloc(f->lines, cap * sizeof(*f->lines));
		}
		struct kh_cline *c = &f->lines[f->n++];
		c->l = l;
		c->hashed = -1;
		if (s[0] != '|')
			continue;
		size_t field = 0;
		while (field < n && s[field] != ' ' && s[field] != '\t')
			field++;
		f->salts = xrealloc(f->salts, (f->nsalts + 1) * sizeof(*f->salts));
		if (decode_hashed(s, field, &f->salts[f->nsalts]))
			c->hashed = (int)f->nsalts++;
	}
}

/* The file as it is now, read when it was not yet or has changed since; NULL with
 * errno set when it cannot be read (ENOENT: there is none). */
static struct kh_file *file_get(const char *path)
{
	struct stat st;
	if (stat(path, &st) < 0)
		return NULL;
	pthread_mutex_lock(&files_lock);
	struct kh_file *f = files_read;
	for (; f; f = f->next)
		if (streq(f->path, path) && same_file(&f->st, &st))
			break;
	if (!f) {
		size_t len;
		char *buf = read_file(path, &len);
		int e = errno;
		/* The stat of what was read: the file may have changed since the first. */
		if (buf && stat(path, &st) == 0) {
			f = xcalloc(1, sizeof(*f));
			f->path = xstrdup(path);
			f->st = st;
			f->buf = buf;
			split_lines(f, len);
			f->next = files_read;
			files_read = f;
		} else {
			free(buf);
			errno = buf ? errno : e;
		}
	}
	pthread_mutex_unlock(&files_lock);
	return f;
}

/* HMAC-SHA1 (RFC 2104) of the NUL-terminated msg with key (at most one block), ctx
 * reused between calls. */
static int hmac_sha1(EVP_MD_CTX *ctx, const unsigned char *key, size_t klen, const char *msg,
		     unsigned char out[SHA_DIGEST_LENGTH])
{
	enum { BLOCK = 64 };
	unsigned char ipad[BLOCK], opad[BLOCK], inner[SHA_DIGEST_LENGTH];
	if (!sha1_md || klen > BLOCK)
		return -1;
	memset(ipad, 0x36, BLOCK);
	memset(opad, 0x5c, BLOCK);
	for (size_t i = 0; i < klen; i++) {
		ipad[i] ^= key[i];
		opad[i] ^= key[i];
	}
	int ok = EVP_DigestInit_ex(ctx, sha1_md, NULL) && EVP_DigestUpdate(ctx, ipad, BLOCK) &&
		 EVP_DigestUpdate(ctx, msg, strlen(msg)) && EVP_DigestFinal_ex(ctx, inner, NULL) &&
		 EVP_DigestInit_ex(ctx, sha1_md, NULL) && EVP_DigestUpdate(ctx, opad, BLOCK) &&
		 EVP_DigestUpdate(ctx, inner, sizeof(inner)) && EVP_DigestFinal_ex(ctx, out, NULL);
	return ok ? 0 : -1;
}

/* Which of f's hashed lines name name: worked out once per file and name (the
 * HMACs outside the lock; two threads on one name may both work, one memo is kept). */
static const unsigned char *hashed_matches(struct kh_file *f, const char *name)
{
	pthread_mutex_lock(&files_lock);
	struct kh_memo *m = f->memos;
	while (m && !streq(m->name, name))
		m = m->next;
	pthread_mutex_unlock(&files_lock);
	if (m)
		return m->bits;

	pthread_once(&sha1_once, sha1_fetch);
	unsigned char *bits = xcalloc(f->nsalts / 8 + 1, 1);
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	for (size_t i = 0; ctx && i < f->nsalts; i++) {
		unsigned char mac[SHA_DIGEST_LENGTH];
		const struct kh_salt *s = &f->salts[i];
		if (hmac_sha1(ctx, s->salt, s->salt_len, name, mac) == 0 &&
		    CRYPTO_memcmp(mac, s->hash, SHA_DIGEST_LENGTH) == 0)
			bits[i / 8] |= (unsigned char)(1u << (i % 8));
	}
	EVP_MD_CTX_free(ctx);
	m = xcalloc(1, sizeof(*m));
	m->name = xstrdup(name);
	m->bits = bits;
	pthread_mutex_lock(&files_lock);
	m->next = f->memos;
	f->memos = m;
	pthread_mutex_unlock(&files_lock);
	return bits;
}

/* Calls fn for every host line of files, with l->host set for name, until it
 * returns true (missing files skipped). Returns -1 only when a file exists but
 * cannot be read. */
static int each_line(char *const *files, const char *name,
		     bool (*fn)(const struct kh_line *l, void *data), void *data, struct dp_error *err)
{
	for (; files && *files; files++) {
		struct kh_file *f = file_get(*files);
		if (!f) {
			if (errno == ENOENT || errno == ENOTDIR)
				continue;
			return dp_err(err, DPE_CONNECT, "cannot read known hosts file '%s': %s", *files,
				      strerror(errno));
		}
		const unsigned char *bits = f->nsalts ? hashed_matches(f, name) : NULL;
		for (size_t i = 0; i < f->n; i++) {
			const struct kh_cline *c = &f->lines[i];
			struct kh_line l = c->l;
			if (c->hashed >= 0)
				l.host = bits[c->hashed / 8] & (1u << (c->hashed % 8));
			else if (l.s[0] != '|') {
				size_t field = 0;
				while (field < l.n && l.s[field] != ' ' && l.s[field] != '\t')
					field++;
				l.host = hosts_match(l.s, field, name);
			}
			if (fn(&l, data))
				return 0;
		}
	}
	return 0;
}

/* A line for the host against the key: MATCH, CHANGED (same type, other key), or
 * UNKNOWN (not the host's, another key type). */
static enum kh_result check_line(const struct kh_line *l, const struct kh_key *key, int index)
{
	if (!l->host)
		return KH_UNKNOWN;
	const char *end = l->s + l->n, *p = l->s;
	while (p < end && *p != ' ' && *p != '\t')
		p++;
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	const char *type = p;
	while (p < end && *p != ' ' && *p != '\t')
		p++;
	size_t tlen = (size_t)(p - type);
	const char *want = key_types[index].name;
	if (tlen != strlen(want) || strncmp(type, want, tlen) != 0)
		return KH_UNKNOWN;      /* another key type: not a change (as ssh) */
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	const char *b64 = p;
	while (p < end && *p != ' ' && *p != '\t' && *p != '\r')
		p++;
	_cleanup_strbuf_ struct strbuf blob = STRBUF_INIT;
	if (base64_decode(&blob, b64, (size_t)(p - b64)) < 0)
		return KH_UNKNOWN;
	if (blob.len == key->len && memcmp(blob.buf, key->blob, key->len) == 0)
		return KH_MATCH;
	return KH_CHANGED;
}

struct check {
	const char *name;
	const struct kh_key *key;
	int index;
	bool matched;
	enum kh_result *result;
	char **file;
	int *line;
};

static bool check_one(const struct kh_line *l, void *data)
{
	struct check *c = data;
	if (l->ca)
		return false;
	enum kh_result r = check_line(l, c->key, c->index);
	if (l->revoked) {
		if (r != KH_MATCH)
			return false;   /* another key revoked: nothing to say of this one */
		free(*c->file);
		*c->file = xstrdup(l->file);
		*c->line = l->lineno;
		*c->result = KH_REVOKED;
		return true;
	}
	if (r == KH_MATCH)
		c->matched = true;      /* the rest is read still, for @revoked lines */
	if (r == KH_CHANGED && *c->result != KH_CHANGED) {
		*c->result = KH_CHANGED;
		*c->file = xstrdup(l->file);
		*c->line = l->lineno;
	}
	return false;
}

int kh_check(char *const *files, const char *name, const struct kh_key *key,
	     enum kh_result *result, char **file, int *line, struct dp_error *err)
{
	struct check c = { .name = name, .key = key, .index = key_index(key->type),
			   .result = result, .file = file, .line = line };

	*result = KH_UNKNOWN;
	*file = NULL;
	*line = 0;
	if (c.index < 0)
		return 0;
	if (each_line(files, name, check_one, &c, err) < 0)
		return -1;
	if (c.matched && *result != KH_REVOKED) {
		free(*file);
		*file = NULL;
		*line = 0;
		*result = KH_MATCH;
	}
	return 0;
}

static int mkdir_parent(const char *file)
{
	_cleanup_free_ char *dir = xstrdup(file);
	char *slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		return 0;
	*slash = '\0';
	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		return -1;
	return 0;
}

int kh_add(const char *file, const char *name, const struct kh_key *key, struct dp_error *err)
{
	_cleanup_strbuf_ struct strbuf line = STRBUF_INIT;
	int r = 0;

	kh_format_line(&line, name, key);
	pthread_mutex_lock(&add_lock);
	int fd = -1;
	if (mkdir_parent(file) == 0)
		fd = open(file, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, line.buf, line.len) != (ssize_t)line.len)
		r = dp_err(err, DPE_CONNECT, "cannot record the host key of '%s' in '%s': %s", name,
			   file, strerror(errno));
	if (fd >= 0 && close(fd) < 0 && r == 0)
		r = dp_err(err, DPE_CONNECT, "cannot record the host key of '%s' in '%s': %s", name,
			   file, strerror(errno));
	pthread_mutex_unlock(&add_lock);
	return r;
}

/* The name a host is looked up by: as ssh, HostKeyAlias when set (as it is, port or
 * not), else "host" or "[host]:port". */
static char *lookup_name(const struct ssh_host_config *cfg)
{
	return cfg->host_key_alias ? xstrdup(cfg->host_key_alias) :
	       kh_host_name(cfg->hostname, cfg->port);
}

/* UserKnownHostsFile then GlobalKnownHostsFile. */
static char **lookup_files(const struct ssh_host_config *cfg)
{
	char **files = strv_copy(cfg->user_known_hosts_files);
	for (char *const *g = cfg->global_known_hosts_files; g && *g; g++)
		strv_add(&files, *g);
	return files;
}

int kh_verify(const struct ssh_host_config *cfg, const char *what, const struct kh_key *key,
	      struct dp_error *err)
{
	_cleanup_free_ char *name = lookup_name(cfg);
	_cleanup_free_ char *fp = kh_fingerprint(key->sha256);
	_cleanup_free_ char *file = NULL;
	_cleanup_strv_free_ char **files = lookup_files(cfg);
	enum kh_result r;
	int line;

	if (kh_check(files, name, key, &r, &file, &line, err) < 0)
		return -1;
	if (r == KH_MATCH)
		return 0;
	if (r == KH_REVOKED)
		return dp_err(err, DPE_CONNECT,
			      "host key for '%s' (%s) is REVOKED: the server sent %s key %s, which "
			      "%s:%d marks @revoked; do not connect until the host has a new key",
			      what, name, kh_key_short_name(key->type), fp, file, line);
	if (r == KH_CHANGED)
		return dp_err(err, DPE_CONNECT,
			      "host key for '%s' (%s) has CHANGED: the server sent %s key %s, which "
			      "does not match %s:%d; someone may be intercepting the connection, or "
			      "the host was reinstalled; if you trust the new key, remove the old one "
			      "with: ssh-keygen -R '%s' -f '%s'",
			      what, name, kh_key_short_name(key->type), fp, file, line, name, file);
	if (cfg->strict_host_key_checking == SSH_STRICT_ACCEPT_NEW ||
	    cfg->strict_host_key_checking == SSH_STRICT_NO) {
		if (!cfg->user_known_hosts_files || !cfg->user_known_hosts_files[0])
			return 0;
		return kh_add(cfg->user_known_hosts_files[0], name, key, err);
	}
	char port[32] = "";
	if (cfg->port != 22)
		snprintf(port, sizeof(port), " -p %d", cfg->port);
	return dp_err(err, DPE_CONNECT,
		      "host key for '%s' (%s) is not known: the server sent %s key %s; check it, "
		      "then add it to %s (ssh-keyscan%s %s), or set StrictHostKeyChecking "
		      "accept-new for this host",
		      what, name, kh_key_short_name(key->type), fp,
		      cfg->user_known_hosts_files && cfg->user_known_hosts_files[0] ?
			      cfg->user_known_hosts_files[0] : "~/.ssh/known_hosts",
		      port, cfg->hostname);
}

/* OpenSSH's default HostKeyAlgorithms order (certificates aside), with the key type
 * each algorithm verifies. */
static const struct {
	const char *method;
	int type;
} hostkey_methods[] = {
	{ "ssh-ed25519", LIBSSH2_HOSTKEY_TYPE_ED25519 },
	{ "ecdsa-sha2-nistp256", LIBSSH2_HOSTKEY_TYPE_ECDSA_256 },
	{ "ecdsa-sha2-nistp384", LIBSSH2_HOSTKEY_TYPE_ECDSA_384 },
	{ "ecdsa-sha2-nistp521", LIBSSH2_HOSTKEY_TYPE_ECDSA_521 },
	{ "rsa-sha2-512", LIBSSH2_HOSTKEY_TYPE_RSA },
	{ "rsa-sha2-256", LIBSSH2_HOSTKEY_TYPE_RSA },
	{ "ssh-rsa", LIBSSH2_HOSTKEY_TYPE_RSA },
	{ "ssh-dss", LIBSSH2_HOSTKEY_TYPE_DSS },
};

struct known_types {
	const char *name;
	bool known[ARRAY_SIZE(key_types)];
};

/* The line's key type (its second field), when the line is for the host. */
static bool note_type(const struct kh_line *l, void *data)
{
	struct known_types *k = data;
	const char *p = l->s, *end = l->s + l->n;
	if (l->ca && !k->known[key_index(LIBSSH2_HOSTKEY_TYPE_ED25519)]) {
		/* A CA for the host: its certificate is checked over the plain ED25519 key
		 * (see ssh.c's fetch_host_cert), so that key comes first. */
		struct kh_key probe = { .type = LIBSSH2_HOSTKEY_TYPE_ED25519,
					.blob = (const unsigned char *)"", .len = 1 };
		for (size_t i = 0; i < ARRAY_SIZE(key_types); i++) {
			probe.type = key_types[i].type;
			if (check_line(l, &probe, (int)i) != KH_UNKNOWN)
				k->known[key_index(LIBSSH2_HOSTKEY_TYPE_ED25519)] = true;
		}
	}
	if (l->revoked || l->ca)
		return false;
	while (p < end && *p != ' ' && *p != '\t')
		p++;
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	size_t tlen = 0;
	while (p + tlen < end && p[tlen] != ' ' && p[tlen] != '\t')
		tlen++;
	for (size_t i = 0; i < ARRAY_SIZE(key_types); i++) {
		if (k->known[i] || strlen(key_types[i].name) != tlen ||
		    strncmp(p, key_types[i].name, tlen) != 0)
			continue;
		/* A one-byte key, which no line holds: the host's line reads as changed. */
		struct kh_key probe = { .type = key_types[i].type,
					.blob = (const unsigned char *)"", .len = 1 };
		k->known[i] = check_line(l, &probe, (int)i) != KH_UNKNOWN;
	}
	return false;
}

char *kh_hostkey_order(const struct ssh_host_config *cfg, const char *algs)
{
	_cleanup_free_ char *name = lookup_name(cfg);
	_cleanup_strv_free_ char **files = lookup_files(cfg);
	struct known_types k = { .name = name };
	struct strbuf sb = STRBUF_INIT;

	/* One pass over the files; one that cannot be read counts as holding nothing
	 * here (kh_verify reports it). */
	each_line(files, name, note_type, &k, NULL);
	for (int pass = 0; pass < 2; pass++) {
		_cleanup_free_ char *copy = xstrdup(algs);
		char *save = NULL;
		for (char *a = strtok_r(copy, ",", &save); a; a = strtok_r(NULL, ",", &save)) {
			int type = -1;
			for (size_t m = 0; m < ARRAY_SIZE(hostkey_methods) && type < 0; m++)
				if (streq(hostkey_methods[m].method, a))
					type = hostkey_methods[m].type;
			bool known = type >= 0 && key_index(type) >= 0 && k.known[key_index(type)];
			if (known != (pass == 0))
				continue;
			if (sb.len)
				strbuf_addch(&sb, ',');
			strbuf_adds(&sb, a);
		}
	}
	return strbuf_detach(&sb);
}

/* ---- host certificates (@cert-authority) ---- */

static int type_of_name(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(key_types); i++)
		if (streq(key_types[i].name, name))
			return key_types[i].type;
	return -1;
}

struct ca_find {
	const char *name;
	const struct kh_key *ca;        /* NULL: any @cert-authority line for the host */
	int index;
	bool found, revoked;
	char *file;
	int line;
};

static void ca_note(struct ca_find *f, const struct kh_line *l)
{
	free(f->file);
	f->file = xstrdup(l->file);
	f->line = l->lineno;
}

static bool find_ca(const struct kh_line *l, void *data)
{
	struct ca_find *f = data;
	if (!f->ca) {
		if (!l->ca)
			return false;
		for (size_t i = 0; i < ARRAY_SIZE(key_types); i++) {
			/* A one-byte key, which no line holds: a line for the host reads as changed. */
			struct kh_key probe = { .type = key_types[i].type,
						.blob = (const unsigned char *)"", .len = 1 };
			if (check_line(l, &probe, (int)i) != KH_UNKNOWN) {
				f->found = true;
				ca_note(f, l);
				return true;
			}
		}
		return false;
	}
	if (!l->ca && !l->revoked)
		return false;
	if (check_line(l, f->ca, f->index) != KH_MATCH)
		return false;
	if (l->revoked) {
		f->revoked = true;
		ca_note(f, l);
		return true;
	}
	if (!f->found) {
		f->found = true;
		ca_note(f, l);
	}
	return false;   /* read on, for @revoked lines */
}

bool kh_cert_authority(const struct ssh_host_config *cfg, char **where)
{
	_cleanup_free_ char *name = lookup_name(cfg);
	_cleanup_strv_free_ char **files = lookup_files(cfg);
	struct ca_find f = { .name = name };

	each_line(files, name, find_ca, &f, NULL);
	if (f.found && where)
		*where = xasprintf("%s:%d", f.file, f.line);
	free(f.file);
	return f.found;
}

/* Whether the certificate is good for the host, as ssh's check_host_key judges it:
 * signed by a CA an @cert-authority line names for the host (and no @revoked line),
 * the signature verifies, a host certificate, valid now, for name. 1: good; 0: not,
 * why says it; -1: refused for good (a revoked CA), why says it; -2: a known_hosts file
 * cannot be read (err). */
static int cert_good(char *const *files, const char *name,
		     const char *principal, const struct sshcert *c, struct dp_error *why,
		     struct dp_error *err)
{
	_cleanup_strbuf_ struct strbuf d = STRBUF_INIT;
	_cleanup_free_ char *fp = sshcert_fingerprint(c->ca_key, c->ca_key_len);
	sshcert_describe(c, &d);
	int type = type_of_name(c->ca_type);
	if (type < 0) {
		dp_err(why, DPE_CONNECT, "%s: the CA's key type %s is not one dispatch knows", d.buf,
		       c->ca_type);
		return 0;
	}
	struct kh_key ca = { .type = type, .blob = c->ca_key, .len = c->ca_key_len };
	struct ca_find f = { .name = name, .ca = &ca, .index = key_index(type) };
	if (each_line(files, name, find_ca, &f, err) < 0) {
		free(f.file);
		return -2;
	}
	if (f.revoked) {
		dp_err(why, DPE_CONNECT, "%s: the CA key %s is REVOKED by %s:%d", d.buf, fp, f.file,
		       f.line);
		free(f.file);
		return -1;
	}
	free(f.file);
	if (!f.found) {
		dp_err(why, DPE_CONNECT, "%s: no @cert-authority line for '%s' names that CA", d.buf,
		       name);
		return 0;
	}
	if (sshcert_verify_signature(c, why) < 0 ||
	    sshcert_check(c, SSHCERT_HOST, principal, false, (uint64_t)time(NULL), why) < 0) {
		why->kind = DPE_CONNECT;
		return 0;
	}
	return 1;
}

int kh_verify_cert(const struct ssh_host_config *cfg, const char *what, const unsigned char *cert,
		   size_t cert_len, const struct kh_key *key, struct dp_error *err)
{
	_cleanup_free_ char *name = lookup_name(cfg);
	_cleanup_free_ char *fp = kh_fingerprint(key->sha256);
	_cleanup_free_ char *file = NULL;
	_cleanup_strv_free_ char **files = lookup_files(cfg);
	const char *principal = cfg->host_key_alias ? cfg->host_key_alias : cfg->hostname;
	struct dp_error why = { 0 };
	struct sshcert c;
	enum kh_result r;
	int line, good = 0;

	/* The key itself may be revoked, whatever its certificate says. */
	if (kh_check(files, name, key, &r, &file, &line, err) < 0)
		return -1;
	if (r == KH_REVOKED)
		return kh_verify(cfg, what, key, err);
	if (sshcert_parse(cert, cert_len, &c, &why) == 0) {
		if (c.key_len != key->len || memcmp(c.key, key->blob, key->len) != 0)
			dp_err(&why, DPE_CONNECT, "the server's certificate is for another key than "
			       "the %s key %s it proved to hold", kh_key_short_name(key->type), fp);
		else
			good = cert_good(files, name, principal, &c, &why, err);
		sshcert_release(&c);
	}
	if (good == -2)
		return -1;
	if (good == -1)
		return dp_err(err, DPE_CONNECT, "host certificate for '%s' (%s) refused: %s", what,
			      name, why.msg);
	if (good)
		return 0;
	/* As ssh: a certificate that fails is taken as the plain key it holds, which
	 * known_hosts may list (or StrictHostKeyChecking accept-new record). */
	if (r == KH_MATCH || r == KH_CHANGED ||
	    cfg->strict_host_key_checking == SSH_STRICT_ACCEPT_NEW ||
	    cfg->strict_host_key_checking == SSH_STRICT_NO)
		return kh_verify(cfg, what, key, err);
	return dp_err(err, DPE_CONNECT, "host certificate for '%s' (%s) refused: %s; and the %s "
		      "key %s it holds is not in known_hosts either", what, name, why.msg,
		      kh_key_short_name(key->type), fp);
}
