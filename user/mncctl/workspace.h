/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* workspace.h - the launcher's side of the workspace taint (cmd_workspace.c; docs/kernel.md
 * "Workspace taint"). */
#ifndef MNCCTL_WORKSPACE_H
#define MNCCTL_WORKSPACE_H

#include <cjson/cJSON.h>

#define MNCCTL_WS_MAX_TAINTED_DIRS 1024 /* == mncd's MNCD_WS_MAX_TAINTED_DIRS */

/* Appends to arr (a cJSON array) the path of every directory strictly inside ws (a realpath)
 * that carries a trusted.mnc.taint record: agent.register's "tainted_dirs" (mncd re-reads each
 * itself). Walks without following symlinks, across mounts. Needs CAP_SYS_ADMIN (without it
 * the records are invisible). 0, or -1 after printing why (a directory that cannot be read,
 * more than MNCCTL_WS_MAX_TAINTED_DIRS records): the launch must then be refused. */
int mncctl_ws_tainted_dirs(const char *ws, cJSON *arr);

#endif
