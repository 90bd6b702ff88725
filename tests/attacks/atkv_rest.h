/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* atkv_rest.h - data at rest keeps its label (the rest_* attacks; docs/threat-model.md, "Data at rest")
 * (atkv_rest.c). */
#ifndef MNC_ATKV_REST_H
#define MNC_ATKV_REST_H

#include <stdint.h>
#include <sys/types.h>
#include <sys/un.h>

#include "atk.h"

/* ---- data at rest (rest_*; docs/threat-model.md, "Data at rest"). Phase 1 (the tainted
 * coordinator) writes the canary into WS/notes.txt and WS/sub/deep.txt, says `sync written`
 * (the orchestrator links, mounts or moves what it wrote meanwhile: on_sync) and exits. Phase 2
 * (launched as c->launch2_*) reads the file at kv rest_path (and fd ATK_KEEP_FD with rest_fd=1,
 * or an fd the collector's giver opens on kv rest_give), says `sync read` when kv rest_sync2
 * is set (before reading), and tries to get what it read out: a UNIX stream and TCP to the
 * collector, and stdout. */
int atkv_rest_agent(struct atk_ctx *c);
/* prepare: phase 2 on the fresh workspace DIR/ws2 (the binary copied there) as agent (NULL:
 * coordinator), reading path (kv rest_path). 0 or -1. */
int atkv_rest_prepare(struct atk_ctx *c, const char *agent, const char *path);
/* atkv_rest_prepare, then run 2 is given a read grant on the directory grant. 0 or -1. */
int atkv_rest_grant(struct atk_ctx *c, const char *agent, const char *path, const char *grant);
/* DIR/name, made 0755 (a directory an outsider prepares for a grant). out gets the path. 0/-1. */
int atkv_rest_dir(struct atk_ctx *c, const char *name, char *out, size_t n);

/* Waits (up to 5 s) until mncd labelled path (the instance that wrote it exited and mncd saw
 * it go): for attacks that move data at rest after the exit. 0, or -1. */
int atkv_rest_wait_label(const char *path);

/* Phase 2's way out for what it read (c->secret): UNIX stream and TCP to the collector, stdout. */
void atkv_rest_out(struct atk_ctx *c, const char *what);
/* The first "mk" + 12 hex digits in buf (the canary's shape) into out: 1, or 0. */
int atkv_rest_find(const char *buf, size_t n, char *out, size_t outn);

#endif
