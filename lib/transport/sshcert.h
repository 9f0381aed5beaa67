/* SPDX-License-Identifier: MIT */
/*
 * OpenSSH certificates (PROTOCOL.certkeys): ssh-ed25519-cert-v01@openssh.com,
 * ecdsa-sha2-nistp{256,384,521}-cert-v01@openssh.com and ssh-rsa-cert-v01@openssh.com.
 * The parser takes any bytes (every length is checked against what is left); the
 * verifier checks the CA's signature over the certificate with libcrypto (ED25519,
 * ECDSA P-256/384/521, RSA with rsa-sha2-256 or rsa-sha2-512; ssh-rsa SHA-1 signatures
 * are refused as OpenSSH's default CASignatureAlgorithms refuses them), then the type
 * (user or host), the validity window and the principals, as ssh and sshd check them.
 */
#ifndef DISPATCH_SSHCERT_H
#define DISPATCH_SSHCERT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "base/strbuf.h"

enum sshcert_kind {
	SSHCERT_USER = 1,
	SSHCERT_HOST = 2,
};

#define SSHCERT_FOREVER UINT64_MAX      /* valid_before of a certificate that never expires */

struct sshcert {
	char *type;                     /* "ssh-ed25519-cert-v01@openssh.com" */
	const char *key_type;           /* the certified key's type: "ssh-ed25519", ... */
	unsigned char *key;             /* the certified key as a plain public key blob */
	size_t key_len;
	uint64_t serial;
	uint32_t kind;                  /* SSHCERT_USER or SSHCERT_HOST (other values refused) */
	char *key_id;
	char **principals;              /* strv; NULL when empty (valid for any name) */
	uint64_t valid_after, valid_before;
	char **critical_options;        /* names only; strv, NULL when none */
	char **extensions;              /* names only; strv, NULL when none */
	char *ca_type;                  /* the signing key's type */
	unsigned char *ca_key;          /* the signing key's blob, as known_hosts lines hold it */
	size_t ca_key_len;
	char *sig_alg;                  /* "ssh-ed25519", "rsa-sha2-512", ... */
	/* What the signature covers and the signature itself (parts of blob). */
	unsigned char *blob;
	size_t len, signed_len;
	const unsigned char *sig;       /* the signature bytes, inside blob */
	size_t sig_len;
};

/* Whether a key type names a certificate ("...-cert-v01@openssh.com"). */
bool sshcert_is_cert_type(const char *type, size_t len);

/* Parse a certificate blob (the wire form: string type, string nonce, ...). Nothing is
 * verified but the format: every field present, in bounds, and nothing after the
 * signature. DPE_INPUT with the reason on failure; *c is then empty. */
int sshcert_parse(const void *blob, size_t len, struct sshcert *c, struct dp_error *err);
/* The same from a public key line, as ssh-keygen writes ID-cert.pub: "type base64 [comment]". */
int sshcert_parse_line(const char *line, size_t len, struct sshcert *c, struct dp_error *err);
void sshcert_release(struct sshcert *c);

/* Check the CA's signature over the certificate (DPE_FAIL when it does not verify or the
 * algorithm is not one that is accepted, with the reason). */
int sshcert_verify_signature(const struct sshcert *c, struct dp_error *err);

/* The rest of what ssh checks of a certificate presented for name: kind, the validity
 * window at now (seconds since the epoch), and that name is among the principals
 * (an empty list is valid for any name unless require_principal). A host certificate
 * with critical options is refused, as ssh refuses it. DPE_FAIL with the reason. */
int sshcert_check(const struct sshcert *c, enum sshcert_kind kind, const char *name,
		  bool require_principal, uint64_t now, struct dp_error *err);

/* "SHA256:..." of a key blob, as ssh-keygen -l prints it. */
char *sshcert_fingerprint(const unsigned char *blob, size_t len);
/* "2026-11-24T16:05:00Z" (UTC), or "forever"/"the epoch" at the ends. */
void sshcert_format_time(uint64_t t, char buf[32]);
/* A one-line description for messages: "ED25519 user certificate 'id' serial 3 signed by
 * ED25519 CA SHA256:...". */
void sshcert_describe(const struct sshcert *c, struct strbuf *sb);

#endif
