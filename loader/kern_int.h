/* kern_int.h - private to loader/: the handle layout shared by the kern_*.c files. */
#ifndef MNC_KERN_INT_H
#define MNC_KERN_INT_H

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>

#include "mnc_kern.h"

struct ring_buffer;

struct mnc_kern {
    char root[PATH_MAX];
    char tree[MNC_TREE_PATH_MAX];
    int fd_agents, fd_taint, fd_unix, fd_inet, fd_files, fd_names, fd_settings, fd_counters,
        fd_events;
    struct ring_buffer *rb;
    mnc_kern_event_fn cb;
    void *cb_ctx;
    int cb_count;
    int cb_stop;
    char notice[320]; /* why attach fell back from lsm to cgroup, "" otherwise */
};

/* Records one self-test case (ignored past the table's capacity). */
void mnc_selftest_add(mnc_selftest *st, const char *name, int want, int got);

/* printf into err (bounded); returns rc so callers can `return kerr(...)` */
int mnc_kerr(char *err, size_t errlen, int rc, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

#endif
