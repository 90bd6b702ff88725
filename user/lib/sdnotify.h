/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* sdnotify.h - systemd's service notification protocol (sd_notify(3)), without libsystemd: one
 * datagram to $NOTIFY_SOCKET. mncd says READY=1 when it serves requests and, when the unit
 * sets WatchdogSec=, WATCHDOG=1 from its event loop (docs/metrics.md, "Health").
 */
#ifndef MNC_SDNOTIFY_H
#define MNC_SDNOTIFY_H

#include <stdint.h>

/* Sends msg ("READY=1", "WATCHDOG=1", "STATUS=...") to $NOTIFY_SOCKET (a path, or "@name"
 * in the abstract namespace). 1 sent, 0 no $NOTIFY_SOCKET (not under systemd), -1 error. */
int mnc_sd_notify(const char *msg);

/* Half of $WATCHDOG_USEC in ms when the watchdog is on for this process ($WATCHDOG_PID unset or
 * this pid), else 0: how often to send WATCHDOG=1. */
uint64_t mnc_sd_watchdog_ms(void);

#endif
