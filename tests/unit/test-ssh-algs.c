/* SPDX-License-Identifier: MIT */
/* lib/transport/ssh_algs.c: list assembly (the rest is checked against ssh -G by
 * t0400), KEXINIT parsing, and the words for a key exchange that cannot agree. */
#include <stdlib.h>
#include <string.h>

#include "transport/ssh_algs.h"
#include "unit.h"
#include "base/util.h"

static void test_defaults(void)
{
	/* dispatch's MACs: OpenSSH's without the SHA-1 ones, -etm first */
	CHECK_STR(ssh_algs_default(SSH_ALGS_MACS),
		  "umac-64-etm@openssh.com,umac-128-etm@openssh.com,hmac-sha2-256-etm@openssh.com,"
		  "hmac-sha2-512-etm@openssh.com,umac-64@openssh.com,umac-128@openssh.com,"
		  "hmac-sha2-256,hmac-sha2-512");
	for (int k = 0; k < SSH_ALGS_NKINDS; k++) {
		const char *d = ssh_algs_default(k);
		CHECK(!strstr(d, "cbc") && !strstr(d, "arcfour") && !strstr(d, "md5") &&
		      !strstr(d, "ssh-dss") && !ssh_algs_has(d, "ssh-rsa") &&
		      !ssh_algs_has(d, "diffie-hellman-group14-sha1") && !ssh_algs_has(d, "hmac-sha1"));
		/* every default name is one OpenSSH knows */
		_cleanup_free_ char *known = ssh_algs_filter(d, ssh_algs_openssh_all(k));
		CHECK_STR(known, d);
	}
}

static void test_assemble(void)
{
	static const struct { enum ssh_algs_kind k; const char *value, *def, *want; } cases[] = {
		{ SSH_ALGS_MACS, NULL, "a,b", "a,b" },
		{ SSH_ALGS_MACS, "+hmac-sha1", "hmac-sha2-256", "hmac-sha2-256,hmac-sha1" },
		{ SSH_ALGS_MACS, "+hmac-sha2-256", "hmac-sha2-256", "hmac-sha2-256" },
		{ SSH_ALGS_MACS, "^hmac-sha1", "hmac-sha2-256,hmac-sha1", "hmac-sha1,hmac-sha2-256" },
		{ SSH_ALGS_MACS, "-hmac-sha2-*", "hmac-sha2-256,hmac-sha1,hmac-sha2-512", "hmac-sha1" },
		{ SSH_ALGS_MACS, "-*", "hmac-sha2-256", "" },
		{ SSH_ALGS_CIPHERS, "aes256-ctr,aes128-ctr", "x", "aes256-ctr,aes128-ctr" },
		{ SSH_ALGS_CIPHERS, "nonesuch", "x", NULL },
		/* key algorithms: patterns expand in OpenSSH's order */
		{ SSH_ALGS_HOSTKEY, "rsa-sha2-*", "x", "rsa-sha2-256,rsa-sha2-256-cert-v01@openssh.com,"
		  "rsa-sha2-512,rsa-sha2-512-cert-v01@openssh.com" },
		{ SSH_ALGS_HOSTKEY, "!ssh-rsa", "x", NULL },
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		char *got = ssh_algs_assemble(cases[i].k, cases[i].value, cases[i].def);
		if (cases[i].want)
			CHECK_STR(got ? got : "(null)", cases[i].want);
		else
			CHECK(got == NULL);
		free(got);
	}
	char *bad = NULL;
	CHECK(!ssh_algs_valid(SSH_ALGS_KEX, "curve25519-sha256,bogus", &bad));
	CHECK_STR(bad, "bogus");
	free(bad);
	CHECK(ssh_algs_valid(SSH_ALGS_KEX, "-bogus*", &bad));
	CHECK(ssh_algs_valid(SSH_ALGS_PUBKEY, "+ssh-rsa*", &bad));
	CHECK(!ssh_algs_valid(SSH_ALGS_CIPHERS, "aes*", &bad));
	free(bad);
}

/* A KEXINIT payload with the ten lists given. */
static void kexinit(struct strbuf *sb, const char *const lists[SSH_KEXINIT_NLISTS])
{
	strbuf_addch(sb, 20);
	strbuf_add(sb, "0123456789abcdef", 16);
	for (int i = 0; i < SSH_KEXINIT_NLISTS; i++) {
		size_t n = strlen(lists[i]);
		unsigned char len[4] = { (unsigned char)(n >> 24), (unsigned char)(n >> 16),
					 (unsigned char)(n >> 8), (unsigned char)n };
		strbuf_add(sb, len, 4);
		strbuf_adds(sb, lists[i]);
	}
	strbuf_add(sb, "\0\0\0\0\0", 5); /* first_kex_packet_follows, reserved */
}

static void free_lists(char *lists[SSH_KEXINIT_NLISTS])
{
	for (int i = 0; i < SSH_KEXINIT_NLISTS; i++)
		free(lists[i]);
}

static const char our_kex[] = "curve25519-sha256,diffie-hellman-group14-sha256";
static const char our_hk[] = "ssh-ed25519,rsa-sha2-512";
static const char our_ciphers[] = "chacha20-poly1305@openssh.com,aes128-ctr";
static const char our_macs[] = "hmac-sha2-256-etm@openssh.com,hmac-sha2-256";

/* The clauses for a server whose lists are these. */
static int mismatch(const char *const server[SSH_KEXINIT_NLISTS], struct strbuf *out)
{
	_cleanup_strbuf_ struct strbuf pkt = STRBUF_INIT;
	char *lists[SSH_KEXINIT_NLISTS];
	kexinit(&pkt, server);
	if (ssh_kexinit_parse((const unsigned char *)pkt.buf, pkt.len, lists) < 0)
		return -1;
	int n = ssh_algs_mismatch(out, lists, our_kex, our_hk, our_ciphers, our_macs);
	free_lists(lists);
	return n;
}

static void test_mismatch(void)
{
	const char *agree[] = { "curve25519-sha256,kex-strict-s-v00@openssh.com", "ssh-ed25519",
				"aes128-ctr", "aes128-ctr", "hmac-sha2-256", "hmac-sha2-256",
				"none", "none", "", "" };
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	CHECK_INT(mismatch(agree, &sb), 0);
	CHECK_STR(sb.buf, "");

	const char *mac[] = { "curve25519-sha256", "ssh-ed25519", "aes128-ctr", "aes128-ctr",
			      "hmac-sha1-etm@openssh.com", "hmac-sha1-etm@openssh.com",
			      "none", "none", "", "" };
	CHECK_INT(mismatch(mac, &sb), 1);
	CHECK_STR(sb.buf, "no common MAC: server offers hmac-sha1-etm@openssh.com; dispatch has "
		  "hmac-sha2-256-etm@openssh.com,hmac-sha2-256");

	/* the MACs do not matter with chacha20-poly1305 agreed */
	const char *aead[] = { "curve25519-sha256", "ssh-ed25519",
			       "chacha20-poly1305@openssh.com", "chacha20-poly1305@openssh.com",
			       "umac-64-etm@openssh.com", "umac-64-etm@openssh.com",
			       "none", "none", "", "" };
	strbuf_reset(&sb);
	CHECK_INT(mismatch(aead, &sb), 0);

	const char *pq[] = { "sntrup761x25519-sha512@openssh.com,mlkem768x25519-sha256,"
			     "kex-strict-s-v00@openssh.com", "ssh-ed25519", "aes128-ctr",
			     "aes128-ctr", "hmac-sha2-256", "hmac-sha2-256", "none", "none", "", "" };
	strbuf_reset(&sb);
	CHECK_INT(mismatch(pq, &sb), 1);
	CHECK_CONTAINS(sb.buf, "no common key exchange: server offers only post-quantum key "
		       "exchange (sntrup761x25519-sha512@openssh.com,mlkem768x25519-sha256), "
		       "which no released libssh2 implements; this server needs OpenSSH's ssh");

	const char *several[] = { "diffie-hellman-group1-sha1", "ssh-dss", "aes256-cbc",
				  "aes256-cbc", "hmac-md5", "hmac-md5", "none", "none", "", "" };
	strbuf_reset(&sb);
	CHECK_INT(mismatch(several, &sb), 4);
	CHECK_STR(sb.buf, "no common key exchange: server offers diffie-hellman-group1-sha1; "
		  "dispatch has curve25519-sha256,diffie-hellman-group14-sha256; "
		  "no common host key algorithm: server offers ssh-dss; dispatch has "
		  "ssh-ed25519,rsa-sha2-512; no common cipher: server offers aes256-cbc; "
		  "dispatch has chacha20-poly1305@openssh.com,aes128-ctr; no common MAC: server "
		  "offers hmac-md5; dispatch has hmac-sha2-256-etm@openssh.com,hmac-sha2-256");

	/* not a KEXINIT, or cut short */
	char *lists[SSH_KEXINIT_NLISTS];
	_cleanup_strbuf_ struct strbuf pkt = STRBUF_INIT;
	kexinit(&pkt, agree);
	CHECK_INT(ssh_kexinit_parse((const unsigned char *)pkt.buf, 40, lists), -1);
	pkt.buf[0] = 21;
	CHECK_INT(ssh_kexinit_parse((const unsigned char *)pkt.buf, pkt.len, lists), -1);
	CHECK(lists[0] == NULL);
}

int main(void)
{
	test_defaults();
	test_assemble();
	test_mismatch();
	return unit_done();
}
