/* SPDX-License-Identifier: MIT */
/*
 * The server's SSH_MSG_KEXINIT (network input, read before any encryption when a key
 * exchange failed): ssh_kexinit_parse either gives ten NUL-free lists or nothing, and
 * ssh_algs_mismatch words any lists against dispatch's defaults without reading past
 * them. The input's first half is also tried as an ssh_config algorithm list value.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "transport/ssh_algs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *lists[SSH_KEXINIT_NLISTS];
	if (ssh_kexinit_parse(data, size, lists) == 0) {
		for (int i = 0; i < SSH_KEXINIT_NLISTS; i++)
			if (!lists[i] || strlen(lists[i]) > size)
				abort();
		struct strbuf sb = STRBUF_INIT;
		int n = ssh_algs_mismatch(&sb, lists, ssh_algs_default(SSH_ALGS_KEX),
					  ssh_algs_default(SSH_ALGS_HOSTKEY),
					  ssh_algs_default(SSH_ALGS_CIPHERS),
					  ssh_algs_default(SSH_ALGS_MACS));
		if ((n == 0) != (sb.len == 0))
			abort();
		strbuf_release(&sb);
		for (int i = 0; i < SSH_KEXINIT_NLISTS; i++)
			free(lists[i]);
	} else {
		for (int i = 0; i < SSH_KEXINIT_NLISTS; i++)
			if (lists[i])
				abort();
	}
	char *value = strndup((const char *)data, size / 2);
	if (!value)
		return 0;
	for (int k = 0; k < SSH_ALGS_NKINDS; k++) {
		char *bad = NULL;
		if (ssh_algs_valid(k, value, &bad)) {
			char *list = ssh_algs_assemble(k, value, ssh_algs_default(k));
			/* whatever it gives is names OpenSSH knows */
			if (list) {
				char *known = ssh_algs_filter(list, ssh_algs_openssh_all(k));
				if (strcmp(known, list) != 0)
					abort();
				free(known);
			}
			free(list);
		}
		free(bad);
	}
	free(value);
	return 0;
}
