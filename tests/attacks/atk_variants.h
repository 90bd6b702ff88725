/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* atk_variants.h - shared bodies of the attacks that come in variants (atk_variants.c). Each
 * takes the variant; the attack file passes it and keeps its own name, channel line and
 * header comment (what it tries, how it is verified, what blocks it). */
#ifndef MNC_ATK_VARIANTS_H
#define MNC_ATK_VARIANTS_H

#include "atk.h"

/* foreign_*: take the socket the collector's giver made (code: 'S' UNIX stream connected to the
 * outsider, 'D' unconnected UNIX dgram, 'U' unconnected UDP, 'T' unconnected TCP), recv the
 * canary, then send it on that socket. */
int atkv_foreign_agent(struct atk_ctx *c, char code);

/* listen_*: after the taint, listen ('t' TCP on 127.0.0.1, 'a' abstract UNIX, 'p' UNIX path in
 * the workspace, mode 0777) and serve the canary to whoever connects; on_sync is the outsider
 * that connects and reads. */
int atkv_listen_agent(struct atk_ctx *c, char kind);
void atkv_listen_on_sync(struct atk_ctx *c, const char *tag);

/* dev_shm, tmp_file, var_tmp_file: a 0666 file with the canary in dir, read by uid 65534. */
int atkv_shared_file_prepare(struct atk_ctx *c, const char *dir);
int atkv_shared_file_agent(struct atk_ctx *c);
void atkv_shared_file_verify(struct atk_ctx *c);
void atkv_shared_file_cleanup(struct atk_ctx *c);

/* sink_log_write (log = 1: append to the log sink file), sink_memory_write (log = 0: a new
 * file in the memory sink directory); verify reads both sinks. */
int atkv_sink_write_agent(struct atk_ctx *c, int log);
void atkv_sink_write_verify(struct atk_ctx *c);

/* abstract_name (abstract = 1), unix_path_name (0): bind a socket named after the canary;
 * on_sync has uid 65534 read /proc/net/unix. */
int atkv_bound_name_agent(struct atk_ctx *c, int abstract);
void atkv_bound_name_on_sync(struct atk_ctx *c, const char *tag);

/* procsys_write, setdomainname: prepare saves the host's domain name, cleanup restores it;
 * on_sync has uid 65534 read /proc/sys/kernel/domainname. */
int atkv_domainname_prepare(struct atk_ctx *c);
void atkv_domainname_on_sync(struct atk_ctx *c, const char *tag);
void atkv_domainname_cleanup(struct atk_ctx *c);

#endif
