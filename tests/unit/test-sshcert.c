/* SPDX-License-Identifier: MIT */
/* sshcert: real certificates made by ssh-keygen (tests/unit/data/sshcert/make-fixtures):
 * parsing, the CA's signature for every CA type, kind, validity and principals; and
 * what a broken certificate (a byte changed, cut short, grown) gives. */
#include "base/base64.h"
#include "transport/sshcert.h"
#include "unit.h"

#define WINDOW_START 1767225600ULL      /* 2026-01-01T00:00:00Z, make-fixtures' -V */
#define WINDOW_END 2082758400ULL        /* 2036-01-01T00:00:00Z */
#define INSIDE (WINDOW_START + 1000)

static char *fixture(const char *name)
{
	_cleanup_free_ char *path = xasprintf("%s/sshcert/%s", unit_data(), name);
	char *text = read_file(path, NULL);
	if (!text) {
		printf("Bail out! cannot read %s\n", path);
		exit(1);
	}
	return text;
}

/* The key blob of a public key file ("type base64 comment"). */
static void pub_blob(const char *name, struct strbuf *blob)
{
	_cleanup_free_ char *text = fixture(name);
	char *b = strchr(text, ' ');
	char *e = b ? strchr(b + 1, ' ') : NULL;
	if (!b || !e || base64_decode(blob, b + 1, (size_t)(e - b - 1)) < 0) {
		printf("Bail out! bad public key %s\n", name);
		exit(1);
	}
}

static int load(const char *name, struct sshcert *c, struct dp_error *err)
{
	_cleanup_free_ char *text = fixture(name);
	return sshcert_parse_line(text, strlen(text), c, err);
}

static bool same_blob(const unsigned char *a, size_t an, const struct strbuf *b)
{
	return an == b->len && memcmp(a, b->buf, an) == 0;
}

/* Each CA type signs, and the signature verifies; the certified key and the CA key are
 * those ssh-keygen used. */
static void test_signatures(void)
{
	static const struct {
		const char *cert, *ca, *key, *key_type, *sig_alg, *id;
		uint32_t kind;
		uint64_t serial;
	} cases[] = {
		{ "user-ed25519-by-ed25519-cert.pub", "ca_ed25519.pub", "user_ed25519.pub",
		  "ssh-ed25519", "ssh-ed25519", "alice-laptop", SSHCERT_USER, 7 },
		{ "user-ecdsa256-by-ecdsa256-cert.pub", "ca_ecdsa256.pub", "user_ecdsa256.pub",
		  "ecdsa-sha2-nistp256", "ecdsa-sha2-nistp256", "alice-ecdsa", SSHCERT_USER, 8 },
		{ "user-rsa-by-rsa256-cert.pub", "ca_rsa.pub", "user_rsa.pub", "ssh-rsa",
		  "rsa-sha2-256", "alice-rsa256", SSHCERT_USER, 9 },
		{ "user-rsa-by-rsa512-cert.pub", "ca_rsa.pub", "user_rsa.pub", "ssh-rsa",
		  "rsa-sha2-512", "alice-rsa512", SSHCERT_USER, 10 },
		{ "host-ed25519-by-ecdsa521-cert.pub", "ca_ecdsa521.pub", "host_ed25519.pub",
		  "ssh-ed25519", "ecdsa-sha2-nistp521", "box1-host", SSHCERT_HOST, 12 },
		{ "host-ecdsa384-by-ecdsa384-cert.pub", "ca_ecdsa384.pub", "host_ecdsa384.pub",
		  "ecdsa-sha2-nistp384", "ecdsa-sha2-nistp384", "box2-host", SSHCERT_HOST, 13 },
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct sshcert c;
		struct dp_error err = { 0 };
		_cleanup_strbuf_ struct strbuf ca = STRBUF_INIT, key = STRBUF_INIT;
		pub_blob(cases[i].ca, &ca);
		pub_blob(cases[i].key, &key);
		CHECK_INT(load(cases[i].cert, &c, &err), 0);
		CHECK_STR(c.key_type, cases[i].key_type);
		CHECK_STR(c.sig_alg, cases[i].sig_alg);
		CHECK_STR(c.key_id, cases[i].id);
		CHECK_INT(c.kind, cases[i].kind);
		CHECK_INT(c.serial, cases[i].serial);
		CHECK_INT(c.valid_after, WINDOW_START);
		CHECK_INT(c.valid_before, WINDOW_END);
		CHECK(same_blob(c.ca_key, c.ca_key_len, &ca));
		CHECK(same_blob(c.key, c.key_len, &key));
		err.msg[0] = '\0';
		CHECK_INT(sshcert_verify_signature(&c, &err), 0);
		CHECK_STR(err.msg, "");
		sshcert_release(&c);
	}
}

static void test_fields(void)
{
	struct sshcert c;
	struct dp_error err;

	CHECK_INT(load("user-ed25519-by-ed25519-cert.pub", &c, &err), 0);
	CHECK_STR(c.type, "ssh-ed25519-cert-v01@openssh.com");
	CHECK_INT(strv_len(c.principals), 2);
	CHECK_STR(c.principals[0], "alice");
	CHECK_STR(c.principals[1], "bob");
	CHECK(c.critical_options == NULL);
	/* ssh-keygen's default extensions, in their order */
	CHECK_INT(strv_len(c.extensions), 5);
	CHECK_STR(c.extensions[0], "permit-X11-forwarding");
	CHECK_STR(c.extensions[4], "permit-user-rc");
	_cleanup_free_ char *fp = sshcert_fingerprint(c.key, c.key_len);
	_cleanup_strbuf_ struct strbuf d = STRBUF_INIT;
	sshcert_describe(&c, &d);
	CHECK_CONTAINS(d.buf, "ED25519 user certificate 'alice-laptop' (serial 7) signed by ED25519 CA SHA256:");
	sshcert_release(&c);

	CHECK_INT(load("user-ed25519-forced-cert.pub", &c, &err), 0);
	CHECK_INT(strv_len(c.critical_options), 2);
	CHECK_STR(c.critical_options[0], "force-command");
	CHECK_STR(c.critical_options[1], "source-address");
	CHECK_INT(sshcert_verify_signature(&c, &err), 0);
	CHECK_INT(sshcert_check(&c, SSHCERT_USER, "alice", true, INSIDE, &err), 0);
	sshcert_release(&c);

	CHECK_INT(load("host-ed25519-forever-cert.pub", &c, &err), 0);
	CHECK_INT(c.valid_after, 0);
	CHECK(c.valid_before == SSHCERT_FOREVER);
	CHECK_INT(sshcert_verify_signature(&c, &err), 0);
	CHECK_INT(sshcert_check(&c, SSHCERT_HOST, "box1", false, UINT64_MAX - 1, &err), 0);
	sshcert_release(&c);

	char buf[32];
	sshcert_format_time(WINDOW_START, buf);
	CHECK_STR(buf, "2026-01-01T00:00:00Z");
	sshcert_format_time(SSHCERT_FOREVER, buf);
	CHECK_STR(buf, "forever");
}

static void test_checks(void)
{
	struct sshcert c;
	struct dp_error err;

	CHECK_INT(load("host-ed25519-by-ecdsa521-cert.pub", &c, &err), 0);
	CHECK_INT(sshcert_check(&c, SSHCERT_HOST, "box1", false, INSIDE, &err), 0);
	CHECK_INT(sshcert_check(&c, SSHCERT_HOST, "127.0.0.1", false, INSIDE, &err), 0);
	/* principals match exactly: no patterns, no case folding */
	CHECK_INT(sshcert_check(&c, SSHCERT_HOST, "box2", false, INSIDE, &err), -1);
	CHECK_INT(err.kind, DPE_FAIL);
	CHECK_CONTAINS(err.msg, "is not valid for 'box2': its principals are box1, 127.0.0.1");
	CHECK_INT(sshcert_check(&c, SSHCERT_HOST, "BOX1", false, INSIDE, &err), -1);
	CHECK_INT(sshcert_check(&c, SSHCERT_HOST, "box*", false, INSIDE, &err), -1);
	/* the window: valid_after included, valid_before excluded */
	CHECK_INT(sshcert_check(&c, SSHCERT_HOST, "box1", false, WINDOW_START, &err), 0);
	CHECK_INT(sshcert_check(&c, SSHCERT_HOST, "box1", false, WINDOW_START - 1, &err), -1);
	CHECK_CONTAINS(err.msg, "is not valid yet: valid from 2026-01-01T00:00:00Z");
	CHECK_INT(sshcert_check(&c, SSHCERT_HOST, "box1", false, WINDOW_END - 1, &err), 0);
	CHECK_INT(sshcert_check(&c, SSHCERT_HOST, "box1", false, WINDOW_END, &err), -1);
	CHECK_CONTAINS(err.msg, "has expired: valid from 2026-01-01T00:00:00Z to 2036-01-01T00:00:00Z");
	/* a host certificate is no user certificate */
	CHECK_INT(sshcert_check(&c, SSHCERT_USER, "box1", false, INSIDE, &err), -1);
	CHECK_CONTAINS(err.msg, "is a host certificate, not a user certificate");
	sshcert_release(&c);

	CHECK_INT(load("user-ed25519-by-ed25519-cert.pub", &c, &err), 0);
	CHECK_INT(sshcert_check(&c, SSHCERT_HOST, "alice", false, INSIDE, &err), -1);
	CHECK_CONTAINS(err.msg, "is a user certificate, not a host certificate");
	CHECK_INT(sshcert_check(&c, SSHCERT_USER, "bob", true, INSIDE, &err), 0);
	sshcert_release(&c);

	/* no principals: any name, unless one is required */
	CHECK_INT(load("user-ed25519-any-cert.pub", &c, &err), 0);
	CHECK(c.principals == NULL);
	CHECK_INT(sshcert_check(&c, SSHCERT_USER, "anyone", false, INSIDE, &err), 0);
	CHECK_INT(sshcert_check(&c, SSHCERT_USER, "anyone", true, INSIDE, &err), -1);
	CHECK_CONTAINS(err.msg, "names no principals");
	sshcert_release(&c);

	/* ssh-rsa (SHA-1) CA signatures are refused, as OpenSSH refuses them */
	CHECK_INT(load("user-rsa-by-sha1-cert.pub", &c, &err), 0);
	CHECK_STR(c.sig_alg, "ssh-rsa");
	CHECK_INT(sshcert_verify_signature(&c, &err), -1);
	CHECK_CONTAINS(err.msg, "signed with ssh-rsa (RSA with SHA-1)");
	sshcert_release(&c);
}

/* Every single-byte change in the signed part breaks the signature (or the parse);
 * every cut or addition fails to parse. */
static void test_tampering(void)
{
	static const char *const names[] = {
		"user-ed25519-by-ed25519-cert.pub", "user-ecdsa256-by-ecdsa256-cert.pub",
		"user-rsa-by-rsa512-cert.pub", "host-ed25519-by-ecdsa521-cert.pub",
	};
	for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
		struct sshcert c;
		struct dp_error err;
		CHECK_INT(load(names[i], &c, &err), 0);
		size_t len = c.len, signed_len = c.signed_len;
		unsigned char *blob = xmalloc(len + 1);
		memcpy(blob, c.blob, len);
		sshcert_release(&c);

		int verified = 0, parsed_wrong = 0;
		for (size_t off = 0; off < signed_len; off += 7) {
			blob[off] ^= 0x01;
			if (sshcert_parse(blob, len, &c, &err) == 0) {
				if (sshcert_verify_signature(&c, &err) == 0)
					verified++;
				sshcert_release(&c);
			}
			blob[off] ^= 0x01;
		}
		CHECK_INT(verified, 0);
		for (size_t cut = 0; cut < len; cut += 5) {
			if (sshcert_parse(blob, cut, &c, &err) == 0) {
				parsed_wrong++;
				sshcert_release(&c);
			}
		}
		blob[len] = 0;
		if (sshcert_parse(blob, len + 1, &c, &err) == 0) {
			parsed_wrong++;
			sshcert_release(&c);
		}
		CHECK_CONTAINS(err.msg, "trailing bytes after the signature");
		CHECK_INT(parsed_wrong, 0);
		free(blob);
	}
}

static void test_not_certificates(void)
{
	struct sshcert c;
	struct dp_error err;
	_cleanup_free_ char *text = fixture("user_ed25519.pub");
	CHECK_INT(sshcert_parse_line(text, strlen(text), &c, &err), -1);
	CHECK_INT(err.kind, DPE_INPUT);
	CHECK_CONTAINS(err.msg, "not a certificate: key type 'ssh-ed25519'");
	CHECK_INT(sshcert_parse_line("x", 1, &c, &err), -1);
	CHECK_INT(sshcert_parse("", 0, &c, &err), -1);
	CHECK_CONTAINS(err.msg, "malformed certificate: no key type");
	static const unsigned char dss[] = "\0\0\0\034ssh-dss-cert-v01@openssh.com";
	CHECK_INT(sshcert_parse(dss, sizeof(dss) - 1, &c, &err), -1);
	CHECK_CONTAINS(err.msg, "unsupported certificate type 'ssh-dss-cert-v01@openssh.com'");
	CHECK(sshcert_is_cert_type("ssh-ed25519-cert-v01@openssh.com", 32));
	CHECK(!sshcert_is_cert_type("ssh-ed25519", 11));
	CHECK(!sshcert_is_cert_type("-cert-v01@openssh.com", 21));
}

int main(void)
{
	test_signatures();
	test_fields();
	test_checks();
	test_tampering();
	test_not_certificates();
	return unit_done();
}
