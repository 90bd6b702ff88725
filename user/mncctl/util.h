/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* util.h - helpers shared by mncctl subcommands. */
#ifndef MNCCTL_UTIL_H
#define MNCCTL_UTIL_H

#include <cjson/cJSON.h>
#include <stdint.h>

#include "mnc/policy.h"
#include "mnc_util.h"

/* Loads policy files; on failure prints every error to stderr and returns NULL. */
mnc_policy *mncctl_load_policies(const char *const *paths, int n);

/* Prints a cJSON tree (formatted) to stdout followed by a newline; returns 0 or -1. */
int mncctl_print_json(const cJSON *j);

#endif
