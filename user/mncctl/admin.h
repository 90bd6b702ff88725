/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* admin.h - taint.reset and workspace.clear over mncd's admin socket (admin.c). */
#ifndef MNCCTL_ADMIN_H
#define MNCCTL_ADMIN_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

/* Is req one of the verbs that go to the enforcer's admin socket? */
bool mncctl_admin_verb(const cJSON *req);

/* Sends req (taint.reset {agent} or workspace.clear {path}) to SOCKET.admin and turns the answer
 * into a protocol response (*resp, the caller frees it; a refusal is a response too). 0, or -1
 * with err (the socket unreachable: not the admin, or mncd not running). */
int mncctl_admin_call(const char *socket_path, const cJSON *req, cJSON **resp, char *err, size_t n);

#endif
