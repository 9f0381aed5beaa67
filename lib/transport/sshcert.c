/* SPDX-License-Identifier: MIT */
/*
 * OpenSSH certificates: a bounds-checked reader over the wire form, and the checks
 * ssh makes (sshkey.c's cert_parse and sshkey_cert_check_authority), with the CA's
 * signature verified through libcrypto's EVP interface (OpenSSL 3).
 */
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ecdsa.h>
#include <openssl/evp.h>
#include <openssl/param_build.h>
#include <time.h>

#include "base/base64.h"
#include "base/sha256.h"
#include "transport/sshcert.h"

#define MAX_PRINCIPALS 256      /* as OpenSSH's SSHKEY_CERT_MAX_PRINCIPALS */
#define MIN_RSA_BITS 1024       /* as OpenSSH's SSH_RSA_MINIMUM_MODULUS_SIZE */
#define MAX_RSA_BITS 16384      /* as OpenSSH's SSHBUF_MAX_BIGNUM * 8 */

/* ---- reading the wire form ---- */

struct rd {
	const unsigned char *p;
	size_t n;
};

static bool get_u32(struct rd *r, uint32_t *v)
{
	if (r->n < 4)
		return false;
	*v = (uint32_t)r->p[0] << 24 | (uint32_t)r->p[1] << 16 | (uint32_t)r->p[2] << 8 | r->p[3];
	r->p += 4;
	r->n -= 4;
	return true;
}

static bool get_u64(struct rd *r, uint64_t *v)
{
	uint32_t hi, lo;
	if (!get_u32(r, &hi) || !get_u32(r, &lo))
		return false;
	*v = (uint64_t)hi << 32 | lo;
	return true;
}

static bool get_string(struct rd *r, const unsigned char **s, size_t *len)
{
	uint32_t n;
	struct rd save = *r;
	if (!get_u32(r, &n) || n > r->n) {
		*r = save;
		return false;
	}
	*s = r->p;
	*len = n;
	r->p += n;
	r->n -= n;
	return true;
}

/* A string that must hold text: no NUL inside (as sshbuf_get_cstring). */
static bool get_cstring(struct rd *r, char **out)
{
	const unsigned char *s;
	size_t n;
	if (!get_string(r, &s, &n) || memchr(s, '\0', n))
		return false;
	*out = xstrndup((const char *)s, n);
	return true;
}

static bool str_is(const unsigned char *s, size_t n, const char *want)
{
	return n == strlen(want) && memcmp(s, want, n) == 0;
}

/* A positive mpint (no sign bit set, no superfluous leading zero): its magnitude. */
static bool get_mpint(struct rd *r, const unsigned char **s, size_t *n)
{
	if (!get_string(r, s, n))
		return false;
	if (*n && ((*s)[0] & 0x80))
		return false;           /* negative */
	if (*n >= 2 && (*s)[0] == 0 && !((*s)[1] & 0x80))
		return false;           /* a leading zero that is not needed */
	if (*n && (*s)[0] == 0)
		(*s)++, (*n)--;
	return true;
}

/* ---- key types ---- */

enum alg { ALG_ED25519, ALG_ECDSA, ALG_RSA };

static const struct cert_type {
	const char *cert, *plain, *curve, *group, *short_name;
	enum alg alg;
	size_t point_len;       /* an uncompressed ECDSA point: 1 + 2 * field size */
} cert_types[] = {
	{ "ssh-ed25519-cert-v01@openssh.com", "ssh-ed25519", NULL, NULL, "ED25519", ALG_ED25519, 0 },
	{ "ecdsa-sha2-nistp256-cert-v01@openssh.com", "ecdsa-sha2-nistp256", "nistp256", "P-256",
	  "ECDSA", ALG_ECDSA, 65 },
	{ "ecdsa-sha2-nistp384-cert-v01@openssh.com", "ecdsa-sha2-nistp384", "nistp384", "P-384",
	  "ECDSA", ALG_ECDSA, 97 },
	{ "ecdsa-sha2-nistp521-cert-v01@openssh.com", "ecdsa-sha2-nistp521", "nistp521", "P-521",
	  "ECDSA", ALG_ECDSA, 133 },
	{ "ssh-rsa-cert-v01@openssh.com", "ssh-rsa", NULL, NULL, "RSA", ALG_RSA, 0 },
};

static const struct cert_type *type_by_cert(const unsigned char *s, size_t n)
{
	for (size_t i = 0; i < ARRAY_SIZE(cert_types); i++)
		if (str_is(s, n, cert_types[i].cert))
			return &cert_types[i];
	return NULL;
}

static const struct cert_type *type_by_plain(const unsigned char *s, size_t n)
{
	for (size_t i = 0; i < ARRAY_SIZE(cert_types); i++)
		if (str_is(s, n, cert_types[i].plain))
			return &cert_types[i];
	return NULL;
}

static const char *short_name(const char *plain)
{
	const struct cert_type *t = type_by_plain((const unsigned char *)plain, strlen(plain));
	return t ? t->short_name : plain;
}

bool sshcert_is_cert_type(const char *type, size_t len)
{
	static const char suffix[] = "-cert-v01@openssh.com";
	size_t n = sizeof(suffix) - 1;
	return len > n && memcmp(type + len - n, suffix, n) == 0;
}

/* The public key fields of type t (after the type name, or after a certificate's
 * nonce): checked for shape, consumed from r. */
static bool get_key_fields(struct rd *r, const struct cert_type *t, const char **why)
{
	const unsigned char *a, *b;
	size_t an, bn;
	switch (t->alg) {
	case ALG_ED25519:
		if (!get_string(r, &a, &an) || an != 32)
			return *why = "ED25519 key is not 32 bytes", false;
		return true;
	case ALG_ECDSA:
		if (!get_string(r, &a, &an) || !get_string(r, &b, &bn))
			return *why = "ECDSA key truncated", false;
		if (!str_is(a, an, t->curve))
			return *why = "ECDSA curve does not match the key type", false;
		if (bn != t->point_len || b[0] != 0x04)
			return *why = "ECDSA point is not an uncompressed point of the curve", false;
		return true;
	case ALG_RSA:
		if (!get_mpint(r, &a, &an) || !get_mpint(r, &b, &bn))
			return *why = "RSA key truncated or malformed", false;
		if (an == 0 || bn == 0)
			return *why = "RSA key has an empty exponent or modulus", false;
		if (bn * 8 > MAX_RSA_BITS + 8)
			return *why = "RSA modulus too large", false;
		return true;
	}
	return false;
}

/* A list of (string name, string data) pairs: the names, each once, in order. */
static bool get_options(const unsigned char *s, size_t n, char ***names, const char **why)
{
	struct rd r = { s, n };
	while (r.n) {
		char *name;
		const unsigned char *data;
		size_t dlen;
		if (!get_cstring(&r, &name)) {
			*why = "malformed critical options or extensions";
			return false;
		}
		if (!get_string(&r, &data, &dlen)) {
			free(name);
			*why = "malformed critical options or extensions";
			return false;
		}
		size_t k = strv_len(*names);
		if (k && strcmp((*names)[k - 1], name) >= 0) {
			free(name);
			*why = "critical options or extensions out of order or repeated";
			return false;
		}
		strv_push(names, name);
	}
	return true;
}

void sshcert_release(struct sshcert *c)
{
	free(c->type);
	free(c->key);
	free(c->key_id);
	strv_free(c->principals);
	strv_free(c->critical_options);
	strv_free(c->extensions);
	free(c->ca_type);
	free(c->ca_key);
	free(c->sig_alg);
	free(c->blob);
	memset(c, 0, sizeof(*c));
}

static int bad(struct sshcert *c, struct dp_error *err, const char *why)
{
	sshcert_release(c);
	return dp_err(err, DPE_INPUT, "malformed certificate: %s", why);
}

int sshcert_parse(const void *blob, size_t len, struct sshcert *c, struct dp_error *err)
{
	const unsigned char *s, *key_start;
	size_t n;
	const char *why = NULL;

	memset(c, 0, sizeof(*c));
	c->blob = xmalloc(len ? len : 1);
	memcpy(c->blob, blob, len);
	c->len = len;
	struct rd r = { c->blob, len };

	if (!get_string(&r, &s, &n))
		return bad(c, err, "no key type");
	const struct cert_type *t = type_by_cert(s, n);
	if (!t) {
		_cleanup_free_ char *name = xstrndup((const char *)s, n > 64 ? 64 : n);
		for (char *p = name; *p; p++)
			if ((unsigned char)*p < 0x20 || (unsigned char)*p > 0x7e)
				*p = '?';
		bool is_cert = sshcert_is_cert_type((const char *)s, n);
		sshcert_release(c);
		if (is_cert)
			return dp_err(err, DPE_INPUT, "unsupported certificate type '%s' (dispatch "
				      "knows ED25519, ECDSA and RSA certificates)", name);
		return dp_err(err, DPE_INPUT, "not a certificate: key type '%s'", name);
	}
	c->type = xstrdup(t->cert);
	c->key_type = t->plain;
	if (!get_string(&r, &s, &n))
		return bad(c, err, "no nonce");
	if (n < 16)
		return bad(c, err, "nonce shorter than 16 bytes");
	key_start = r.p;
	if (!get_key_fields(&r, t, &why))
		return bad(c, err, why);
	/* The certified key as a plain key: string type, then the same fields. */
	size_t tlen = strlen(t->plain), flen = (size_t)(r.p - key_start);
	c->key_len = 4 + tlen + flen;
	c->key = xmalloc(c->key_len);
	c->key[0] = (unsigned char)(tlen >> 24);
	c->key[1] = (unsigned char)(tlen >> 16);
	c->key[2] = (unsigned char)(tlen >> 8);
	c->key[3] = (unsigned char)tlen;
	memcpy(c->key + 4, t->plain, tlen);
	memcpy(c->key + 4 + tlen, key_start, flen);

	if (!get_u64(&r, &c->serial) || !get_u32(&r, &c->kind))
		return bad(c, err, "truncated after the key");
	if (c->kind != SSHCERT_USER && c->kind != SSHCERT_HOST)
		return bad(c, err, "type is neither user (1) nor host (2)");
	if (!get_cstring(&r, &c->key_id))
		return bad(c, err, "bad key ID");
	if (!get_string(&r, &s, &n))
		return bad(c, err, "no principals");
	for (struct rd pr = { s, n }; pr.n;) {
		char *p;
		if (!get_cstring(&pr, &p))
			return bad(c, err, "bad principal");
		strv_push(&c->principals, p);
		if (strv_len(c->principals) > MAX_PRINCIPALS)
			return bad(c, err, "more than 256 principals");
	}
	if (!get_u64(&r, &c->valid_after) || !get_u64(&r, &c->valid_before))
		return bad(c, err, "no validity interval");
	if (!get_string(&r, &s, &n) || !get_options(s, n, &c->critical_options, &why))
		return bad(c, err, why ? why : "no critical options");
	if (!get_string(&r, &s, &n) || !get_options(s, n, &c->extensions, &why))
		return bad(c, err, why ? why : "no extensions");
	if (!get_string(&r, &s, &n))
		return bad(c, err, "no reserved field");

	/* The CA key: a plain key of a type we know (a certificate cannot sign). */
	if (!get_string(&r, &s, &n))
		return bad(c, err, "no signature key");
	struct rd ca = { s, n };
	const unsigned char *cs;
	size_t cn;
	if (!get_string(&ca, &cs, &cn))
		return bad(c, err, "signature key has no type");
	c->ca_type = xstrndup((const char *)cs, cn);
	if (memchr(cs, '\0', cn))
		return bad(c, err, "signature key type has a NUL");
	if (sshcert_is_cert_type(c->ca_type, cn))
		return bad(c, err, "signed by a certificate, not a CA key");
	const struct cert_type *ct = type_by_plain(cs, cn);
	if (ct) {
		if (!get_key_fields(&ca, ct, &why))
			return bad(c, err, why);
		if (ca.n)
			return bad(c, err, "trailing bytes after the signature key");
	}
	/* (An unknown CA key type is kept: sshcert_verify_signature says so.) */
	c->ca_key_len = n;
	c->ca_key = xmalloc(n ? n : 1);
	memcpy(c->ca_key, s, n);

	c->signed_len = (size_t)(r.p - c->blob);
	if (!get_string(&r, &s, &n))
		return bad(c, err, "no signature");
	if (r.n)
		return bad(c, err, "trailing bytes after the signature");
	struct rd sr = { s, n };
	if (!get_cstring(&sr, &c->sig_alg) || !get_string(&sr, &c->sig, &c->sig_len) || sr.n)
		return bad(c, err, "malformed signature");
	return 0;
}

int sshcert_parse_line(const char *line, size_t len, struct sshcert *c, struct dp_error *err)
{
	const char *p = line, *end = line + len;
	memset(c, 0, sizeof(*c));
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	const char *type = p;
	while (p < end && *p != ' ' && *p != '\t')
		p++;
	size_t tlen = (size_t)(p - type);
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	const char *b64 = p;
	while (p < end && *p != ' ' && *p != '\t' && *p != '\n' && *p != '\r')
		p++;
	_cleanup_strbuf_ struct strbuf blob = STRBUF_INIT;
	if (b64 == p || base64_decode(&blob, b64, (size_t)(p - b64)) < 0)
		return dp_err(err, DPE_INPUT, "malformed certificate: not 'type base64' text");
	if (sshcert_parse(blob.buf, blob.len, c, err) < 0)
		return -1;
	if (!str_is((const unsigned char *)type, tlen, c->type)) {
		sshcert_release(c);
		return dp_err(err, DPE_INPUT, "malformed certificate: the type before the key does "
			      "not match the key's own");
	}
	return 0;
}

/* ---- the signature ---- */

static void pkey_ctx_freep(EVP_PKEY_CTX **p) { EVP_PKEY_CTX_free(*p); }
static void pkey_freep(EVP_PKEY **p) { EVP_PKEY_free(*p); }
static void md_ctx_freep(EVP_MD_CTX **p) { EVP_MD_CTX_free(*p); }
static void bn_freep(BIGNUM **p) { BN_free(*p); }
static void param_bld_freep(OSSL_PARAM_BLD **p) { OSSL_PARAM_BLD_free(*p); }
static void params_freep(OSSL_PARAM **p) { OSSL_PARAM_free(*p); }

static EVP_PKEY *pkey_from(const char *name, OSSL_PARAM *params)
{
	_cleanup_(pkey_ctx_freep) EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_name(NULL, name, NULL);
	EVP_PKEY *pk = NULL;
	if (!ctx || EVP_PKEY_fromdata_init(ctx) != 1 ||
	    EVP_PKEY_fromdata(ctx, &pk, EVP_PKEY_PUBLIC_KEY, params) != 1)
		return NULL;
	return pk;
}

static bool ecdsa_point_ok(EVP_PKEY *pk)
{
	_cleanup_(pkey_ctx_freep) EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_pkey(NULL, pk, NULL);
	return ctx && EVP_PKEY_public_check(ctx) == 1;
}

/* The CA key (already shape-checked by the parser) as an EVP_PKEY. */
static EVP_PKEY *ca_pkey(const struct sshcert *c, const struct cert_type *t, const char **why)
{
	struct rd r = { c->ca_key, c->ca_key_len };
	const unsigned char *a, *b, *type;
	size_t an, bn, tn;
	if (!get_string(&r, &type, &tn))
		return NULL;
	switch (t->alg) {
	case ALG_ED25519:
		if (!get_string(&r, &a, &an))
			return NULL;
		return EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, NULL, a, an);
	case ALG_ECDSA: {
		if (!get_string(&r, &a, &an) || !get_string(&r, &b, &bn))
			return NULL;
		char group[8];
		snprintf(group, sizeof(group), "%s", t->group);
		OSSL_PARAM params[] = {
			OSSL_PARAM_construct_utf8_string(OSSL_PKEY_PARAM_GROUP_NAME, group, 0),
			OSSL_PARAM_construct_octet_string(OSSL_PKEY_PARAM_PUB_KEY, (void *)b, bn),
			OSSL_PARAM_construct_end(),
		};
		EVP_PKEY *pk = pkey_from("EC", params);
		if (pk && !ecdsa_point_ok(pk)) {
			EVP_PKEY_free(pk);
			*why = "the CA's ECDSA key is not a point on its curve";
			return NULL;
		}
		return pk;
	}
	case ALG_RSA: {
		if (!get_mpint(&r, &a, &an) || !get_mpint(&r, &b, &bn))
			return NULL;
		if (bn * 8 < MIN_RSA_BITS) {
			*why = "the CA's RSA key is shorter than 1024 bits";
			return NULL;
		}
		_cleanup_(bn_freep) BIGNUM *e = BN_bin2bn(a, (int)an, NULL);
		_cleanup_(bn_freep) BIGNUM *nn = BN_bin2bn(b, (int)bn, NULL);
		_cleanup_(param_bld_freep) OSSL_PARAM_BLD *bld = OSSL_PARAM_BLD_new();
		if (!e || !nn || !bld || !OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_N, nn) ||
		    !OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_E, e))
			return NULL;
		_cleanup_(params_freep) OSSL_PARAM *params = OSSL_PARAM_BLD_to_param(bld);
		return params ? pkey_from("RSA", params) : NULL;
	}
	}
	return NULL;
}

/* ECDSA's wire signature (mpint r, mpint s) as the DER that libcrypto verifies. */
static bool ecdsa_der(const unsigned char *sig, size_t len, struct strbuf *der)
{
	struct rd r = { sig, len };
	const unsigned char *rp, *sp;
	size_t rn, sn;
	if (!get_mpint(&r, &rp, &rn) || !get_mpint(&r, &sp, &sn) || r.n || rn > 66 || sn > 66)
		return false;
	ECDSA_SIG *es = ECDSA_SIG_new();
	BIGNUM *br = BN_bin2bn(rp, (int)rn, NULL), *bs = BN_bin2bn(sp, (int)sn, NULL);
	if (!es || !br || !bs || !ECDSA_SIG_set0(es, br, bs)) {
		BN_free(br);
		BN_free(bs);
		ECDSA_SIG_free(es);
		return false;
	}
	int n = i2d_ECDSA_SIG(es, NULL);
	bool ok = n > 0;
	if (ok) {
		strbuf_grow(der, (size_t)n);
		unsigned char *q = (unsigned char *)der->buf;
		ok = i2d_ECDSA_SIG(es, &q) == n;
		der->len = (size_t)n;
	}
	ECDSA_SIG_free(es);
	return ok;
}

static int wrong_alg(const struct sshcert *c, struct dp_error *err)
{
	return dp_err(err, DPE_FAIL, "certificate signature algorithm '%s' does not fit its %s CA key",
		      c->sig_alg, c->ca_type);
}

int sshcert_verify_signature(const struct sshcert *c, struct dp_error *err)
{
	const char *why = NULL;
	const EVP_MD *md = NULL;
	const struct cert_type *t = type_by_plain((const unsigned char *)c->ca_type, strlen(c->ca_type));
	if (!t)
		return dp_err(err, DPE_FAIL, "certificate is signed by a %s key, which dispatch cannot "
			      "verify (it knows ED25519, ECDSA and RSA CAs)", c->ca_type);
	/* The signature algorithm must fit the CA key, and be one OpenSSH accepts. */
	switch (t->alg) {
	case ALG_ED25519:
		if (!streq(c->sig_alg, "ssh-ed25519"))
			return wrong_alg(c, err);
		if (c->sig_len != 64)
			return dp_err(err, DPE_FAIL, "certificate signature is not 64 bytes (ED25519)");
		break;
	case ALG_ECDSA:
		if (!streq(c->sig_alg, t->plain))
			return wrong_alg(c, err);
		md = t->point_len == 65 ? EVP_sha256() : t->point_len == 97 ? EVP_sha384() : EVP_sha512();
		break;
	case ALG_RSA:
		if (streq(c->sig_alg, "ssh-rsa"))
			return dp_err(err, DPE_FAIL, "certificate is signed with ssh-rsa (RSA with "
				      "SHA-1), which OpenSSH refuses by default since 8.2 "
				      "(CASignatureAlgorithms); sign it again with rsa-sha2-512 "
				      "(ssh-keygen -t rsa-sha2-512 -s CA ...)");
		if (streq(c->sig_alg, "rsa-sha2-256"))
			md = EVP_sha256();
		else if (streq(c->sig_alg, "rsa-sha2-512"))
			md = EVP_sha512();
		else
			return wrong_alg(c, err);
		break;
	}

	_cleanup_(pkey_freep) EVP_PKEY *pk = ca_pkey(c, t, &why);
	if (!pk)
		return dp_err(err, DPE_FAIL, "cannot use the certificate's CA key: %s",
			      why ? why : "libcrypto refused it");
	_cleanup_strbuf_ struct strbuf der = STRBUF_INIT;
	const unsigned char *sig = c->sig;
	size_t sig_len = c->sig_len;
	if (t->alg == ALG_ECDSA) {
		if (!ecdsa_der(c->sig, c->sig_len, &der))
			return dp_err(err, DPE_FAIL, "certificate signature is malformed (ECDSA)");
		sig = (const unsigned char *)der.buf;
		sig_len = der.len;
	} else if (t->alg == ALG_RSA) {
		/* As OpenSSH: a signature shorter than the modulus is padded with zeros on the
		 * left; a longer one is refused. */
		size_t mod = (size_t)EVP_PKEY_get_size(pk);
		if (sig_len > mod)
			return dp_err(err, DPE_FAIL, "certificate signature is longer than the CA's "
				      "RSA modulus");
		if (sig_len < mod) {
			strbuf_grow(&der, mod);
			memset(der.buf, 0, mod - sig_len);
			memcpy(der.buf + (mod - sig_len), sig, sig_len);
			der.len = mod;
			sig = (const unsigned char *)der.buf;
			sig_len = mod;
		}
	}
	_cleanup_(md_ctx_freep) EVP_MD_CTX *mctx = EVP_MD_CTX_new();
	if (!mctx || EVP_DigestVerifyInit(mctx, NULL, md, NULL, pk) != 1)
		return dp_err(err, DPE_FAIL, "cannot verify the certificate's signature: libcrypto "
			      "failed to set up %s", c->sig_alg);
	if (EVP_DigestVerify(mctx, sig, sig_len, c->blob, c->signed_len) != 1) {
		_cleanup_free_ char *fp = sshcert_fingerprint(c->ca_key, c->ca_key_len);
		return dp_err(err, DPE_FAIL, "certificate signature does not verify: it was not made "
			      "by the %s CA key %s it names, or the certificate was altered",
			      t->short_name, fp);
	}
	return 0;
}

/* ---- the rest of the checks ---- */

void sshcert_format_time(uint64_t t, char buf[32])
{
	if (t == SSHCERT_FOREVER) {
		snprintf(buf, 32, "forever");
		return;
	}
	time_t tt = (time_t)t;
	struct tm tm;
	if (t > 253402300799ULL || (uint64_t)tt != t || !gmtime_r(&tt, &tm) ||  /* 9999-12-31 */
	    !strftime(buf, 32, "%Y-%m-%dT%H:%M:%SZ", &tm))
		snprintf(buf, 32, "%llu", (unsigned long long)t);
}

char *sshcert_fingerprint(const unsigned char *blob, size_t len)
{
	struct sha256 h;
	unsigned char d[32];
	struct strbuf sb = STRBUF_INIT;
	sha256_init(&h);
	sha256_update(&h, blob, len);
	sha256_final(&h, d);
	strbuf_adds(&sb, "SHA256:");
	base64_encode(&sb, d, 32, false);
	return strbuf_detach(&sb);
}

/* Text from the certificate, for messages: control characters shown as '?'. */
static void add_safe(struct strbuf *sb, const char *s)
{
	for (; *s; s++)
		strbuf_addch(sb, (unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s);
}

void sshcert_describe(const struct sshcert *c, struct strbuf *sb)
{
	_cleanup_free_ char *fp = sshcert_fingerprint(c->ca_key, c->ca_key_len);
	strbuf_addf(sb, "%s %s certificate '", short_name(c->key_type),
		    c->kind == SSHCERT_HOST ? "host" : "user");
	add_safe(sb, c->key_id);
	strbuf_addf(sb, "' (serial %llu) signed by %s CA %s", (unsigned long long)c->serial,
		    short_name(c->ca_type), fp);
}

int sshcert_check(const struct sshcert *c, enum sshcert_kind kind, const char *name,
		  bool require_principal, uint64_t now, struct dp_error *err)
{
	char t1[32], t2[32];
	_cleanup_strbuf_ struct strbuf d = STRBUF_INIT;

	sshcert_describe(c, &d);
	if (c->kind != (uint32_t)kind)
		return dp_err(err, DPE_FAIL, "%s is a %s certificate, not a %s certificate", d.buf,
			      c->kind == SSHCERT_HOST ? "host" : "user",
			      kind == SSHCERT_HOST ? "host" : "user");
	if (now < c->valid_after) {
		sshcert_format_time(c->valid_after, t1);
		return dp_err(err, DPE_FAIL, "%s is not valid yet: valid from %s", d.buf, t1);
	}
	if (now >= c->valid_before) {
		sshcert_format_time(c->valid_after, t1);
		sshcert_format_time(c->valid_before, t2);
		return dp_err(err, DPE_FAIL, "%s has expired: valid from %s to %s", d.buf, t1, t2);
	}
	if (kind == SSHCERT_HOST && c->critical_options)
		return dp_err(err, DPE_FAIL, "%s has critical options (%s...), which ssh refuses in "
			      "a host certificate", d.buf, c->critical_options[0]);
	if (!c->principals) {
		if (require_principal)
			return dp_err(err, DPE_FAIL, "%s names no principals", d.buf);
		return 0;
	}
	for (char **p = c->principals; *p; p++)
		if (streq(*p, name))
			return 0;
	_cleanup_strbuf_ struct strbuf list = STRBUF_INIT;
	for (char **p = c->principals; *p; p++) {
		if (p - c->principals >= 8) {
			strbuf_addf(&list, ", ... (%zu in all)", strv_len(c->principals));
			break;
		}
		if (list.len)
			strbuf_adds(&list, ", ");
		add_safe(&list, *p);
	}
	_cleanup_strbuf_ struct strbuf shown = STRBUF_INIT;
	add_safe(&shown, name);
	return dp_err(err, DPE_FAIL, "%s is not valid for '%s': its principals are %s", d.buf,
		      shown.buf, list.buf);
}
