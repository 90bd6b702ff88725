/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* mnc_util.h - the small helpers every layer shares: clock, bounded error text, small file
 * reads and writes.
 *
 * Contract: these functions have no state, allocate nothing and depend on libc only, so any
 * layer (libmnc, loader/, mncd, mncctl, the qemu guest's static test driver) can link them
 * without pulling anything else in. This header is internal to the mnc tree (not installed,
 * not exported by libmnc.so's version script).
 */
#ifndef MNC_UTIL_H
#define MNC_UTIL_H

#include <stddef.h>
#include <stdint.h>

/* Wall-clock time in milliseconds since the epoch (CLOCK_REALTIME): what lifetimes, journal
 * records and audit lines are stamped with. */
uint64_t mnc_now_ms(void);

/* Monotonic time in microseconds (CLOCK_MONOTONIC): for timeouts, never for stamps. */
int64_t mnc_mono_us(void);

/* printf into err (bounded, always NUL-terminated when errlen > 0; err may be NULL or errlen
 * 0, then nothing is written). Returns rc, so callers can `return mnc_errf(err, n, -EINVAL, ...)`. */
int mnc_errf(char *err, size_t errlen, int rc, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* Writes the string s to an existing file in one write(2) (cgroup control files such as
 * cgroup.procs or cgroup.freeze; no O_CREAT, no O_TRUNC). Returns 0 or -errno; a short write
 * is -EIO. */
int mnc_write_file(const char *path, const char *s);

/* Reads at most n - 1 bytes of path (one read(2): small procfs, sysfs and cgroup files) into
 * buf and NUL-terminates them (n >= 1). Returns 0 or -errno. */
int mnc_read_file(const char *path, char *buf, size_t n);

/* Opens path read-only for a loader (O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK: a FIFO must not
 * hang it; the caller checks the type). Returns the fd, or -errno. A process that reads its
 * configuration through another (mncd's monitor asks its enforcer: docs/privsep.md) installs an
 * opener with mnc_set_opener: every configuration file libmnc reads (policies, states, risk
 * models) and mncd's config then come through it; NULL restores open(2). */
typedef int (*mnc_opener_fn)(void *arg, const char *path);
int mnc_open_ro(const char *path);
void mnc_set_opener(mnc_opener_fn fn, void *arg);

/* Makes room for element n of the array *arr (capacity *cap elements of elem bytes): nothing if
 * n < *cap, else realloc to twice the capacity (first when it is 0). Returns 0, or -1 when out
 * of memory or the capacity would overflow (*arr and *cap unchanged). */
int mnc_grow(void **arr, int *cap, int n, size_t elem, int first);

/* Writes the concatenation of the np strings parts[] into buf (n bytes): exactly what
 * snprintf(buf, n, "%s%s...", parts...) writes - cut at n - 1 bytes, NUL-terminated when
 * n >= 1 - without printf (messages built per request). Returns the length written. */
size_t mnc_str_cat(char *buf, size_t n, const char *const *parts, size_t np);

/* How mncd and mncctl show path: as is when it is none of roots[0..n) and lies below none of
 * them; otherwise as "ROOT/<entry, inode N>" (lstat now; "ROOT/<an entry>" if it is gone).
 * Names inside a workspace are the agent's choice, and what mncd and mncctl print is not
 * governed by the stdio relay: quoted, a name would carry what a tainted agent chose to the
 * operator or a log collector (attacks ws_launcher_msg, ws_taint_note_name, ws_taint_show_name,
 * ws_register_race_name). `find ROOT -inum N` finds the entry. Writes into out (outn bytes) and
 * returns out, or path itself. */
const char *mnc_ws_shown(const char *path, char *const *roots, int n, char *out, size_t outn);

#endif
