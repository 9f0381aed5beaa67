/* SPDX-License-Identifier: MIT */
/* The OpenSSH client configuration (ssh_config(5)). */
#ifndef DISPATCH_SSH_CONFIG_H
#define DISPATCH_SSH_CONFIG_H

#include "error.h"

/* The concrete Host aliases of a config file, following Include, in order, without
 * duplicates; patterns (with * ? or !) are skipped. path NULL means ~/.ssh/config.
 * A missing file gives an empty list (ssh does not require one). */
int ssh_config_aliases(const char *path, char ***aliases, struct dp_error *err);

#endif
