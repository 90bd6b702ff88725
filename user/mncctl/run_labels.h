/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* run_labels.h - the launcher's part of "data at rest keeps its label" (docs/kernel.md, "Data at
 * rest"): agent.register tells mncd what else the agent can read - its read grants and the fds
 * it inherits - and mncd decides their labels (user/mncd/labels.h): the launch starts with them,
 * or is refused. */
#ifndef MNCCTL_RUN_LABELS_H
#define MNCCTL_RUN_LABELS_H

#include <cjson/cJSON.h>
#include <stdbool.h>

/* Adds "reads" (rd[0..n_read): the --read grants, realpaths) and "fds" (the fd numbers the
 * agent inherits from the launcher: 0, 1 and 2 with --stdio passthrough - else 1 and 2 are the
 * relay's pipes -, and each --keep-fd) to an agent.register request. 0, or -1 (out of memory). */
int run_labels_request(cJSON *req, char *const *rd, int n_read, const int *keep, int n_keep, bool stdio_pass);

/* Prints one note per labelled place mncd's answer lists ("labels_from"): the agent starts with
 * that label. */
void run_labels_note(const cJSON *resp, const char *agent);

#endif
