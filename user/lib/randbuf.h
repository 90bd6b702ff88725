/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* randbuf.h - random bytes from the kernel's CSPRNG, fetched a page at a time.
 *
 * Contract: mnc_random_bytes fills out with n bytes that getrandom(2) returned and that no
 * other call (in this process or any other) has been or will be given: the buffer lives in a
 * page marked MADV_WIPEONFORK, so a forked child starts with it empty and never hands out the
 * bytes its parent hands out; bytes are erased from the buffer as they are taken. Thread-safe
 * (one mutex). Without the page (mmap or madvise refused) every call is one getrandom. Returns
 * 0, or -1 (getrandom failed; out is then undefined). Internal to libmnc (not installed).
 */
#ifndef MNC_RANDBUF_H
#define MNC_RANDBUF_H

#include <stddef.h>

int mnc_random_bytes(void *out, size_t n);

#endif
