/* mnc_abi.h - the kernel/user ABI of mnc, defined once.
 *
 * Included by the BPF programs (after vmlinux.h) and by user space (libmnc, loader, mncd).
 * Everything here must be plain data plus static inline pure functions: no helpers, no maps.
 * Changing a layout here changes the pinned maps; bump MNC_ABI_VERSION when you do.
 */
#ifndef MNC_ABI_H
#define MNC_ABI_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define MNC_ABI_VERSION 1

/* Sink classes. Agents are sinks too (the receivers of messages and forwards). Ids of agents
 * and sinks share one namespace of at most 256 entries (see user/include/mnc/set.h). */
enum mnc_sink_class {
    MNC_SINK_NONE = 0,
    MNC_SINK_AGENT = 1,
    MNC_SINK_LOG = 2,
    MNC_SINK_MEMORY = 3,
    MNC_SINK_TOOL = 4,
    MNC_SINK_EXTERNAL = 5, /* also the class of any unregistered destination */
    MNC_SINK_MNCD = 6,     /* the monitor's own socket: always reachable */
};

#endif
