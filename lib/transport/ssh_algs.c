/* SPDX-License-Identifier: MIT */
/*
 * Algorithm lists as OpenSSH's readconf.c and kex-names.c resolve them (checked
 * against `ssh -G` by tests/cli/t0400-ssh-config-vs-ssh-G.sh), and the words for a key
 * exchange that cannot agree.
 */
#include "transport/ssh_algs.h"

#include <string.h>

#include "base/util.h"

/* OpenSSH 9.2p1 (Debian 12): `ssh -G` with no config, and `ssh -Q kex|cipher|mac|key-alg`. */
static const struct {
	const char *keyword, *def, *all;
} kinds[SSH_ALGS_NKINDS] = {
	[SSH_ALGS_KEX] = { "KexAlgorithms",
		"sntrup761x25519-sha512,sntrup761x25519-sha512@openssh.com,curve25519-sha256,"
		"curve25519-sha256@libssh.org,ecdh-sha2-nistp256,ecdh-sha2-nistp384,"
		"ecdh-sha2-nistp521,diffie-hellman-group-exchange-sha256,"
		"diffie-hellman-group16-sha512,diffie-hellman-group18-sha512,"
		"diffie-hellman-group14-sha256",
		"diffie-hellman-group1-sha1,diffie-hellman-group14-sha1,"
		"diffie-hellman-group14-sha256,diffie-hellman-group16-sha512,"
		"diffie-hellman-group18-sha512,diffie-hellman-group-exchange-sha1,"
		"diffie-hellman-group-exchange-sha256,ecdh-sha2-nistp256,ecdh-sha2-nistp384,"
		"ecdh-sha2-nistp521,curve25519-sha256,curve25519-sha256@libssh.org,"
		"sntrup761x25519-sha512,sntrup761x25519-sha512@openssh.com,"
		/* OpenSSH 9.9 and later: known, so that a config written for them is not refused */
		"mlkem768x25519-sha256" },
	[SSH_ALGS_CIPHERS] = { "Ciphers",
		"chacha20-poly1305@openssh.com,aes128-ctr,aes192-ctr,aes256-ctr,"
		"aes128-gcm@openssh.com,aes256-gcm@openssh.com",
		"3des-cbc,aes128-cbc,aes192-cbc,aes256-cbc,aes128-ctr,aes192-ctr,aes256-ctr,"
		"aes128-gcm@openssh.com,aes256-gcm@openssh.com,chacha20-poly1305@openssh.com" },
	[SSH_ALGS_MACS] = { "MACs",
		"umac-64-etm@openssh.com,umac-128-etm@openssh.com,hmac-sha2-256-etm@openssh.com,"
		"hmac-sha2-512-etm@openssh.com,hmac-sha1-etm@openssh.com,umac-64@openssh.com,"
		"umac-128@openssh.com,hmac-sha2-256,hmac-sha2-512,hmac-sha1",
		"hmac-sha1,hmac-sha1-96,hmac-sha2-256,hmac-sha2-512,hmac-md5,hmac-md5-96,"
		"umac-64@openssh.com,umac-128@openssh.com,hmac-sha1-etm@openssh.com,"
		"hmac-sha1-96-etm@openssh.com,hmac-sha2-256-etm@openssh.com,"
		"hmac-sha2-512-etm@openssh.com,hmac-md5-etm@openssh.com,hmac-md5-96-etm@openssh.com,"
		"umac-64-etm@openssh.com,umac-128-etm@openssh.com" },
	[SSH_ALGS_HOSTKEY] = { "HostKeyAlgorithms",
		"ssh-ed25519-cert-v01@openssh.com,ecdsa-sha2-nistp256-cert-v01@openssh.com,"
		"ecdsa-sha2-nistp384-cert-v01@openssh.com,ecdsa-sha2-nistp521-cert-v01@openssh.com,"
		"sk-ssh-ed25519-cert-v01@openssh.com,sk-ecdsa-sha2-nistp256-cert-v01@openssh.com,"
		"rsa-sha2-512-cert-v01@openssh.com,rsa-sha2-256-cert-v01@openssh.com,ssh-ed25519,"
		"ecdsa-sha2-nistp256,ecdsa-sha2-nistp384,ecdsa-sha2-nistp521,"
		"sk-ssh-ed25519@openssh.com,sk-ecdsa-sha2-nistp256@openssh.com,rsa-sha2-512,"
		"rsa-sha2-256",
		NULL /* the key algorithms, below */ },
	[SSH_ALGS_PUBKEY] = { "PubkeyAcceptedAlgorithms", NULL, NULL },
};

static const char key_all[] =
	"ssh-ed25519,ssh-ed25519-cert-v01@openssh.com,sk-ssh-ed25519@openssh.com,"
	"sk-ssh-ed25519-cert-v01@openssh.com,ecdsa-sha2-nistp256,"
	"ecdsa-sha2-nistp256-cert-v01@openssh.com,ecdsa-sha2-nistp384,"
	"ecdsa-sha2-nistp384-cert-v01@openssh.com,ecdsa-sha2-nistp521,"
	"ecdsa-sha2-nistp521-cert-v01@openssh.com,sk-ecdsa-sha2-nistp256@openssh.com,"
	"sk-ecdsa-sha2-nistp256-cert-v01@openssh.com,webauthn-sk-ecdsa-sha2-nistp256@openssh.com,"
	"ssh-dss,ssh-dss-cert-v01@openssh.com,ssh-rsa,ssh-rsa-cert-v01@openssh.com,rsa-sha2-256,"
	"rsa-sha2-256-cert-v01@openssh.com,rsa-sha2-512,rsa-sha2-512-cert-v01@openssh.com";

static const char macs_default[] =
	"umac-64-etm@openssh.com,umac-128-etm@openssh.com,hmac-sha2-256-etm@openssh.com,"
	"hmac-sha2-512-etm@openssh.com,umac-64@openssh.com,umac-128@openssh.com,"
	"hmac-sha2-256,hmac-sha2-512";

const char *ssh_algs_keyword(enum ssh_algs_kind kind)
{
	return kinds[kind].keyword;
}

const char *ssh_algs_openssh_default(enum ssh_algs_kind kind)
{
	return kind == SSH_ALGS_PUBKEY ? kinds[SSH_ALGS_HOSTKEY].def : kinds[kind].def;
}

const char *ssh_algs_openssh_all(enum ssh_algs_kind kind)
{
	return kind == SSH_ALGS_HOSTKEY || kind == SSH_ALGS_PUBKEY ? key_all : kinds[kind].all;
}

const char *ssh_algs_default(enum ssh_algs_kind kind)
{
	return kind == SSH_ALGS_MACS ? macs_default : ssh_algs_openssh_default(kind);
}

/* ---- name lists ---- */

/* The next name of a comma-separated list: *len bytes at the returned pointer; NULL
 * at the end. As ssh's strsep loops, an empty name ends the list. */
static const char *next_name(const char **p, size_t *len)
{
	const char *s = *p;
	if (!s || !*s || *s == ',')
		return NULL;
	const char *comma = strchr(s, ',');
	*len = comma ? (size_t)(comma - s) : strlen(s);
	*p = comma ? comma + 1 : s + *len;
	return s;
}

static bool has_n(const char *list, const char *name, size_t n)
{
	size_t len;
	for (const char *p = list, *s; (s = next_name(&p, &len));)
		if (len == n && memcmp(s, name, n) == 0)
			return true;
	return false;
}

bool ssh_algs_has(const char *list, const char *name)
{
	return has_n(list, name, strlen(name));
}

/* ssh's match_pattern(): * and ?, case-sensitive, on counted strings. */
static bool match_n(const char *s, size_t sn, const char *pat, size_t pn)
{
	size_t i = 0, j = 0, star = (size_t)-1, resume = 0;
	while (i < sn) {
		if (j < pn && pat[j] == '*') {
			star = j++;
			resume = i;
		} else if (j < pn && (pat[j] == '?' || pat[j] == s[i])) {
			i++;
			j++;
		} else if (star != (size_t)-1) {
			j = star + 1;
			i = ++resume;
		} else {
			return false;
		}
	}
	while (j < pn && pat[j] == '*')
		j++;
	return j == pn;
}

/* ssh's match_pattern_list(name, patterns, 0) == 1: a pattern matches and no
 * negated one does. */
static bool match_list(const char *name, size_t n, const char *patterns)
{
	bool hit = false;
	size_t len;
	for (const char *p = patterns, *pat; (pat = next_name(&p, &len));) {
		bool neg = *pat == '!';
		if (match_n(name, n, pat + neg, len - neg)) {
			if (neg)
				return false;
			hit = true;
		}
	}
	return hit;
}

static void add_name(struct strbuf *sb, const char *s, size_t n)
{
	if (sb->len)
		strbuf_addch(sb, ',');
	strbuf_add(sb, s, n);
}

/* ssh's kex_names_cat(a, b): a, then the names of b not already there. */
static void names_cat(struct strbuf *sb, const char *a, const char *b)
{
	size_t len;
	strbuf_adds(sb, a ? a : "");
	for (const char *p = b, *s; (s = next_name(&p, &len));)
		if (!has_n(sb->buf, s, len))
			add_name(sb, s, len);
}

char *ssh_algs_filter(const char *list, const char *have)
{
	struct strbuf sb = STRBUF_INIT;
	size_t len;
	for (const char *p = list, *s; (s = next_name(&p, &len));)
		if (has_n(have, s, len) && !has_n(sb.buf, s, len))
			add_name(&sb, s, len);
	return strbuf_detach(&sb);
}

static bool has_wildcard(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] == '*' || s[i] == '?' || s[i] == '!')
			return true;
	return false;
}

bool ssh_algs_valid(enum ssh_algs_kind kind, const char *value, char **bad)
{
	const char *all = ssh_algs_openssh_all(kind);
	bool keys = kind == SSH_ALGS_HOSTKEY || kind == SSH_ALGS_PUBKEY;
	size_t len;
	*bad = NULL;
	if (*value == '-')
		return true;    /* ssh checks nothing in a list of names to remove */
	if (*value == '+' || *value == '^')
		value++;
	const char *p = value, *s;
	for (; (s = next_name(&p, &len));) {
		if (has_n(all, s, len))
			continue;
		/* sshkey_names_valid2 with wildcards: a pattern is fine when it matches (or,
		 * negated, excludes) some key algorithm */
		bool ok = false;
		if (keys && has_wildcard(s, len)) {
			_cleanup_free_ char *pat = xstrndup(s, len);
			size_t n;
			for (const char *q = all, *name; !ok && (name = next_name(&q, &n));)
				ok = match_n(name, n, pat + (*pat == '!'), len - (*pat == '!'));
		}
		if (!ok) {
			*bad = xstrndup(s, len);
			return false;
		}
	}
	if (!*value) {          /* ssh refuses an empty list after + or ^ */
		*bad = xstrdup(value);
		return false;
	}
	return true;         /* as ssh, names after an empty one are not looked at */
}

char *ssh_algs_assemble(enum ssh_algs_kind kind, const char *value, const char *def)
{
	const char *all = ssh_algs_openssh_all(kind);
	_cleanup_strbuf_ struct strbuf list = STRBUF_INIT;
	struct strbuf out = STRBUF_INIT;
	size_t len;

	if (!value || !*value)
		return xstrdup(def);
	if (*value == '-') {
		/* match_filter_denylist(def, patterns); ssh takes an empty result here */
		for (const char *p = def, *s; (s = next_name(&p, &len));)
			if (!match_list(s, len, value + 1))
				add_name(&out, s, len);
		return strbuf_detach(&out);
	} else {
		if (*value == '+')
			names_cat(&list, def, value + 1);
		else if (*value == '^')
			names_cat(&list, value + 1, def);
		else
			strbuf_adds(&list, value);
		/* each name a pattern: every matching known name, in the known order (an
		 * empty name matches nothing, and the names after it still count) */
		for (const char *pat = list.buf; pat; pat = strchr(pat, ',') ? strchr(pat, ',') + 1 : NULL) {
			len = strcspn(pat, ",");
			_cleanup_free_ char *one = xstrndup(pat, len);
			if (*one == '!') {
				strbuf_release(&out);
				return NULL;    /* negation is not taken here */
			}
			size_t n;
			for (const char *q = all, *s; (s = next_name(&q, &n));)
				if (match_n(s, n, one, len) && !has_n(out.buf, s, n))
					add_name(&out, s, n);
		}
	}
	if (!out.len) {
		strbuf_release(&out);
		return NULL;
	}
	return strbuf_detach(&out);
}

/* ---- KEXINIT ---- */

static bool get_u32(const unsigned char **p, const unsigned char *end, size_t *v)
{
	if (end - *p < 4)
		return false;
	*v = (size_t)(*p)[0] << 24 | (size_t)(*p)[1] << 16 | (size_t)(*p)[2] << 8 | (*p)[3];
	*p += 4;
	return true;
}

int ssh_kexinit_parse(const unsigned char *payload, size_t len, char *lists[SSH_KEXINIT_NLISTS])
{
	const unsigned char *p = payload, *end = payload + len;
	for (int i = 0; i < SSH_KEXINIT_NLISTS; i++)
		lists[i] = NULL;
	if (len < 17 || p[0] != 20)     /* SSH_MSG_KEXINIT, then a 16-byte cookie */
		return -1;
	p += 17;
	for (int i = 0; i < SSH_KEXINIT_NLISTS; i++) {
		size_t n;
		if (!get_u32(&p, end, &n) || n > (size_t)(end - p) || memchr(p, '\0', n))
			goto bad;
		lists[i] = xstrndup((const char *)p, n);
		p += n;
	}
	return 0;
bad:
	for (int i = 0; i < SSH_KEXINIT_NLISTS; i++) {
		free(lists[i]);
		lists[i] = NULL;
	}
	return -1;
}

/* The server's list as shown: its pseudo-algorithms (strict kex, ext-info) left out. */
static char *shown_list(const char *list)
{
	struct strbuf sb = STRBUF_INIT;
	size_t len;
	for (const char *p = list, *s; (s = next_name(&p, &len));) {
		_cleanup_free_ char *name = xstrndup(s, len);
		if (startswith(name, "kex-strict-") || startswith(name, "ext-info-"))
			continue;
		add_name(&sb, s, len);
	}
	return strbuf_detach(&sb);
}

static bool post_quantum(const char *name, size_t n)
{
	static const char *const pq[] = { "sntrup", "mlkem" };
	for (size_t i = 0; i < ARRAY_SIZE(pq); i++)
		if (n >= strlen(pq[i]) && memcmp(name, pq[i], strlen(pq[i])) == 0)
			return true;
	return false;
}

static void clause(struct strbuf *sb, const char *what, const char *server, const char *ours)
{
	_cleanup_free_ char *shown = shown_list(server);
	if (sb->len)
		strbuf_adds(sb, "; ");
	strbuf_addf(sb, "no common %s: server offers %s; dispatch has %s", what,
		    *shown ? shown : "nothing", *ours ? ours : "nothing");
}

/* Whether the first cipher both sides have carries its own integrity (no MAC is
 * negotiated with it). */
static bool aead_agreed(const char *ours, const char *server)
{
	size_t len;
	for (const char *p = ours, *s; (s = next_name(&p, &len));)
		if (has_n(server, s, len)) {
			_cleanup_free_ char *name = xstrndup(s, len);
			return startswith(name, "chacha20-poly1305") || strstr(name, "-gcm@");
		}
	return false;
}

int ssh_algs_mismatch(struct strbuf *sb, char *const server[SSH_KEXINIT_NLISTS],
		      const char *kex, const char *hostkey, const char *cipher, const char *mac)
{
	int n = 0;
	_cleanup_free_ char *k = ssh_algs_filter(kex, server[SSH_KEXINIT_KEX]);
	if (!*k) {
		_cleanup_free_ char *shown = shown_list(server[SSH_KEXINIT_KEX]);
		bool all_pq = *shown;
		size_t len;
		for (const char *p = shown, *s; all_pq && (s = next_name(&p, &len));)
			all_pq = post_quantum(s, len);
		if (sb->len)
			strbuf_adds(sb, "; ");
		if (all_pq)
			strbuf_addf(sb, "no common key exchange: server offers only post-quantum key "
				    "exchange (%s), which no released libssh2 implements; this server "
				    "needs OpenSSH's ssh (until dispatch can reuse an OpenSSH master "
				    "connection)", shown);
		else
			clause(sb, "key exchange", server[SSH_KEXINIT_KEX], kex);
		n++;
	}
	_cleanup_free_ char *h = ssh_algs_filter(hostkey, server[SSH_KEXINIT_HOSTKEY]);
	if (!*h) {
		clause(sb, "host key algorithm", server[SSH_KEXINIT_HOSTKEY], hostkey);
		n++;
	}
	bool aead = true;
	for (int d = 0; d < 2; d++) {
		const char *sc = server[d ? SSH_KEXINIT_CIPHER_SC : SSH_KEXINIT_CIPHER_CS];
		_cleanup_free_ char *c = ssh_algs_filter(cipher, sc);
		if (!*c) {
			/* one clause for both directions when the server's lists are the same */
			if (d == 0 || !streq(sc, server[SSH_KEXINIT_CIPHER_CS])) {
				clause(sb, d == 0 || *cipher == '\0' ? "cipher" : "cipher (server to client)",
				       sc, cipher);
				n++;
			}
			aead = false;   /* nothing agreed: a MAC may be needed once it is */
			continue;
		}
		aead = aead && aead_agreed(cipher, sc);
	}
	if (aead)
		return n;
	for (int d = 0; d < 2; d++) {
		const char *sm = server[d ? SSH_KEXINIT_MAC_SC : SSH_KEXINIT_MAC_CS];
		_cleanup_free_ char *m = ssh_algs_filter(mac, sm);
		if (!*m && (d == 0 || !streq(sm, server[SSH_KEXINIT_MAC_CS]))) {
			clause(sb, d == 0 ? "MAC" : "MAC (server to client)", sm, mac);
			n++;
		}
	}
	return n;
}
