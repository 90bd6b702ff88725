/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* wsrec.h - the enforcer's records in trusted.* extended attributes, as fixed binary layouts
 * (docs/privsep.md, "What the enforcer reads"): a workspace's taint (trusted.mnc.taint) and an
 * agent cgroup's registration facts (trusted.mnc.reg). Only CAP_SYS_ADMIN reads or writes the
 * trusted.* namespace: no agent, and not mncd's monitor. The enforcer parses no text, so these
 * are not JSON (as they were before the split): every field has a fixed place and size, every
 * count is bounded, every name has the policy's alphabet, and a value that is not exactly one
 * well-formed record is refused.
 *
 * Workspace taint (version 2): the header, then n_obj object ids (16 bytes each, oldest first),
 * then n_sinks sink names (64 bytes each, NUL-padded). Sinks are stored by NAME, so a record read
 * back under an edited policy never names another principal: a name the policy no longer has is
 * dropped (tighter). A record longer than WSREC_MAX loses its oldest objects first, then sink
 * names (fewer sinks: tighter, marked narrowed). A value that starts with '{' is a record of
 * mncd before the split (JSON): it is read, without parsing it, as the tightest taint there is
 * (tainted, no sinks, nothing allowed), which is never looser than what it said.
 *
 * Registration facts (version 1): the header, then n_ws workspace paths, each a 16-bit length
 * and that many bytes (an absolute path, no NUL).
 *
 * Pure functions: no I/O, no allocation (the callers do getxattr/setxattr).
 */
#ifndef MNCD_WSREC_H
#define MNCD_WSREC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define WSREC_XATTR "trusted.mnc.taint"
#define REGREC_XATTR "trusted.mnc.reg"
#define WSREC_NAME 64        /* == MNC_NAME_MAX */
#define WSREC_MAX_OBJECTS 16 /* object ids kept per workspace (the most recent) */
#define WSREC_MAX_SINKS 256  /* principal ids of the policy (mnc/set.h) */
/* Longest value written: ext4 keeps an xattr value within one block (~4 KiB) unless the
 * filesystem has ea_inode. */
#define WSREC_MAX 3900
#define REGREC_MAX_WS 16 /* == MNC_MAX_WORKSPACE */
#define REGREC_PATH_MAX 4096

/* One workspace's taint in the terms of the running policy. */
typedef struct wsrec {
    bool tainted;
    uint64_t sinks[WSREC_MAX_SINKS / 64]; /* principal ids of the running policy */
    bool may_log, may_memory, may_forward, may_external;
    int n_obj;
    uint8_t obj[WSREC_MAX_OBJECTS][16]; /* oldest first */
    char agent[WSREC_NAME];             /* the agent whose instance tainted it last */
    uint64_t time_ms;                   /* when it was last tightened */
    bool narrowed;                      /* sink names were dropped (to fit, or unknown to the policy) */
    bool legacy;                        /* read from a JSON record of mncd before the split */
} wsrec;

/* The running policy's principal names (index = id). */
typedef struct wsrec_names {
    const char (*name)[WSREC_NAME];
    int n;
} wsrec_names;

/* Encodes t (tainted records only) into out (cap bytes, at least WSREC_MAX). Returns the length,
 * or -EINVAL (t untainted). */
int wsrec_encode(const wsrec *t, const wsrec_names *nm, uint8_t *out, size_t cap);

/* Decodes a value of len bytes. 0 and *t, or -EBADMSG (not exactly one well-formed record). nm
 * NULL: the sink names are checked but not mapped (t->sinks empty; wsrec_sink_names shows them). */
int wsrec_decode(const uint8_t *v, size_t len, const wsrec_names *nm, wsrec *t);

/* The sink names a well-formed record (wsrec_decode accepted it) stores, as they are, into
 * names (pointers into v, NUL-terminated inside their fields), at most max. Returns how many (a
 * legacy record: 0). For showing a record without a policy (`mncctl workspace show`). */
int wsrec_sink_names(const uint8_t *v, size_t len, const char **names, int max);

/* a tightened by b: tainted = a OR b; both tainted: sinks a AND b, each may_* a AND b; an
 * untainted side adds nothing. Objects: union, the most recent kept. b's agent and time win. */
void wsrec_merge(wsrec *a, const wsrec *b);
/* Adds one object id (the oldest dropped when full; no duplicate). */
void wsrec_add_object(wsrec *t, const uint8_t id[16]);
/* "objects a, b; sinks x, y; may_log 0 ...; tainted by A" (always NUL-terminated). */
void wsrec_describe(const wsrec *t, const wsrec_names *nm, char *out, size_t n);
/* Is a the same directory as b or inside it? Both realpaths. */
bool wsrec_within(const char *a, const char *b);
/* ... or does either contain the other? */
bool wsrec_overlap(const char *a, const char *b);

/* Registration facts of one agent instance (what `mncctl run` registered). */
typedef struct regrec {
    bool known; /* uid given */
    uint32_t uid;
    bool root;
    int n_ws;
    const char *ws[REGREC_MAX_WS]; /* encode: the paths; decode: pointers into the value */
    uint16_t ws_len[REGREC_MAX_WS];
} regrec;

/* Encodes r into out (cap bytes). Returns the length, or -E2BIG / -EINVAL. */
int regrec_encode(const regrec *r, uint8_t *out, size_t cap);
/* Decodes a value; r->ws[i] point into v (ws_len[i] bytes each, not NUL-terminated). 0, or
 * -EBADMSG. */
int regrec_decode(const uint8_t *v, size_t len, regrec *r);

#endif
