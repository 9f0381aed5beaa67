/* SPDX-License-Identifier: MIT */
/*
 * The algorithm lists of an SSH connection (key exchange, ciphers, MACs, host key and
 * public key signature algorithms), resolved as OpenSSH resolves ssh_config's
 * KexAlgorithms, Ciphers, MACs, HostKeyAlgorithms and PubkeyAcceptedAlgorithms: a
 * list replaces the default, "+list" appends to it, "^list" puts it first, "-list"
 * takes names matching its patterns out; names may be patterns (* ?) matched against
 * every algorithm OpenSSH knows. No libssh2 here: ssh.c takes what libssh2 has of the
 * result, and words negotiation failures with ssh_algs_mismatch.
 */
#ifndef DISPATCH_SSH_ALGS_H
#define DISPATCH_SSH_ALGS_H

#include <stdbool.h>
#include <stddef.h>

#include "base/strbuf.h"

enum ssh_algs_kind {
	SSH_ALGS_KEX,
	SSH_ALGS_CIPHERS,
	SSH_ALGS_MACS,
	SSH_ALGS_HOSTKEY,
	SSH_ALGS_PUBKEY,
	SSH_ALGS_NKINDS,
};

/* "KexAlgorithms", "Ciphers", "MACs", "HostKeyAlgorithms", "PubkeyAcceptedAlgorithms". */
const char *ssh_algs_keyword(enum ssh_algs_kind kind);

/* OpenSSH 9.2's client default, and every name it knows (ssh -Q), comma-separated. */
const char *ssh_algs_openssh_default(enum ssh_algs_kind kind);
const char *ssh_algs_openssh_all(enum ssh_algs_kind kind);

/* dispatch's default: OpenSSH's, less the SHA-1 MACs (hmac-sha1, hmac-sha1-etm), which
 * OpenSSH 9.2 still offers. What libssh2 lacks of it is dropped when connecting. */
const char *ssh_algs_default(enum ssh_algs_kind kind);

/* Whether a config value is one ssh accepts when reading the file: every name known
 * (patterns allowed in -lists, and for the key algorithms everywhere). On a bad one,
 * false and *bad (free it) names it. */
bool ssh_algs_valid(enum ssh_algs_kind kind, const char *value, char **bad);

/* The list value (NULL or "": unset) gives over the default def, as ssh's
 * kex_assemble_names; NULL when a list, +list or ^list leaves nothing (ssh refuses
 * that), "" when a -list does (ssh takes it, and fails to connect). Free it. */
char *ssh_algs_assemble(enum ssh_algs_kind kind, const char *value, const char *def);

/* The names of list that are also in have, in list's order. Free it. */
char *ssh_algs_filter(const char *list, const char *have);
/* Whether name is one of the comma-separated list. */
bool ssh_algs_has(const char *list, const char *name);

/* What the two sides of a key exchange offer, as in SSH_MSG_KEXINIT (RFC 4253 7.1):
 * KEX, host key, cipher c->s, cipher s->c, MAC c->s, MAC s->c (the rest unused). */
enum {
	SSH_KEXINIT_KEX, SSH_KEXINIT_HOSTKEY, SSH_KEXINIT_CIPHER_CS, SSH_KEXINIT_CIPHER_SC,
	SSH_KEXINIT_MAC_CS, SSH_KEXINIT_MAC_SC, SSH_KEXINIT_COMP_CS, SSH_KEXINIT_COMP_SC,
	SSH_KEXINIT_LANG_CS, SSH_KEXINIT_LANG_SC, SSH_KEXINIT_NLISTS,
};

/* Parse the payload of an SSH_MSG_KEXINIT packet (message number first) into its ten
 * name-lists (strv entries, freed with strv-free semantics by the caller: free each
 * and the array). -1 when it is not a well-formed KEXINIT. */
int ssh_kexinit_parse(const unsigned char *payload, size_t len, char *lists[SSH_KEXINIT_NLISTS]);

/* Why a key exchange between server (its KEXINIT lists) and ours (the lists dispatch
 * offered: KEX, host key, cipher, MAC) cannot agree: one "no common MAC: server offers
 * ...; dispatch has ..." clause per category that has nothing in common, joined with
 * "; ", into sb. Returns the number of such categories (0: they do agree, the
 * failure was something else). A server whose key exchanges are all post-quantum
 * gets a clause that says so. */
int ssh_algs_mismatch(struct strbuf *sb, char *const server[SSH_KEXINIT_NLISTS],
		      const char *kex, const char *hostkey, const char *cipher, const char *mac);

#endif
