/* SPDX-License-Identifier: MIT */
/*
 * Host-key checking against OpenSSH known_hosts files, as ssh does it: plain and
 * hashed (|1|salt|hash) entries, "[host]:port" for ports other than 22, patterns; a key
 * of the same type that differs is a changed key (always refused), a host known only
 * with other key types is unknown. New keys are appended the way ssh appends them.
 */
#ifndef DISPATCH_KNOWN_HOSTS_H
#define DISPATCH_KNOWN_HOSTS_H

#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"
#include "transport/ssh_config.h"
#include "base/strbuf.h"

enum kh_result {
	KH_MATCH,
	KH_UNKNOWN,
	KH_CHANGED,
	KH_REVOKED,     /* an @revoked line for the host holds this very key */
};

struct kh_key {
	int type;                       /* LIBSSH2_HOSTKEY_TYPE_* */
	const unsigned char *blob;      /* the key as the server sent it */
	size_t len;
	unsigned char sha256[32];       /* its SHA-256 (libssh2_hostkey_hash) */
};

/* The name known_hosts files use: "host" on port 22, else "[host]:port". */
char *kh_host_name(const char *host, int port);
/* "ssh-ed25519", "ecdsa-sha2-nistp256", ...; NULL for an unknown type. */
const char *kh_key_type_name(int type);
/* "ED25519", "ECDSA", "RSA", "DSA", as ssh names a key in messages. */
const char *kh_key_short_name(int type);
/* "SHA256:" + unpadded base64 of the key's SHA-256, as ssh and ssh-keygen -l print it. */
char *kh_fingerprint(const unsigned char sha256[32]);
/* The line ssh appends for a new key: "name keytype base64\n". */
void kh_format_line(struct strbuf *sb, const char *name, const struct kh_key *key);

/* Look name up in files (a strv; missing files are skipped). On KH_CHANGED and
 * KH_REVOKED, *file and *line say where the offending line is (caller frees *file). A
 * revoked key is refused whatever else matches. Returns -1 only when a file exists but
 * cannot be read. */
int kh_check(char *const *files, const char *name, const struct kh_key *key,
	     enum kh_result *result, char **file, int *line, struct dp_error *err);

/* Append the key for name to file (creating it, and its directory with mode 700).
 * Serialized within the process. */
int kh_add(const char *file, const char *name, const struct kh_key *key, struct dp_error *err);

/* The whole policy for one host: check cfg's UserKnownHostsFile then
 * GlobalKnownHostsFile; accept a match, record an unknown key when
 * StrictHostKeyChecking allows it, refuse the rest with a message (DPE_CONNECT) that
 * names the fingerprint and, for a changed key, the file:line to remove. what names
 * the host in messages ("box1"). */
int kh_verify(const struct ssh_host_config *cfg, const char *what, const struct kh_key *key,
	      struct dp_error *err);

/* The host key algorithms algs (comma-separated, in preference order) as ssh orders
 * them when HostKeyAlgorithms is not set: first those of the key types cfg's
 * known_hosts files hold for the host, then the rest, each group in algs' order. A
 * server with several host keys then shows the one the user already knows; libssh2's
 * own order (ECDSA first) would read as an unknown host where ssh connects. Free it. */
char *kh_hostkey_order(const struct ssh_host_config *cfg, const char *algs);

/* Host certificates. Whether an @cert-authority line in cfg's known_hosts files names
 * the host (any CA key); *where (if not NULL) gets its "file:line" to free. */
bool kh_cert_authority(const struct ssh_host_config *cfg, char **where);

/* The policy for a host that showed the certificate cert (its blob) for key, the plain
 * key the connection proved the server holds: as ssh, accepted when the certificate
 * holds that key, is signed by a CA an @cert-authority line names for the host, and is
 * a host certificate, valid now, whose principals include HostKeyAlias or the host
 * name (any name when it lists none); a revoked key or CA is refused. A certificate
 * that fails is taken as its plain key (kh_verify), and when that is not known either
 * the message (DPE_CONNECT) says why the certificate was not accepted. */
int kh_verify_cert(const struct ssh_host_config *cfg, const char *what, const unsigned char *cert,
		   size_t cert_len, const struct kh_key *key, struct dp_error *err);

#endif
