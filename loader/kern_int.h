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

struct bpf_object;
/* Attaches every program of obj - to the cgroup cg_fd, or as BPF LSM when cg_fd < 0 - and pins
 * its link at <root>/links/<program>. A link already pinned there is replaced atomically
 * (bpf_link_update: the old program runs until the new one is in). The names of links this call
 * created are appended to created[] (for rollback); more than max_created is an error.
 * Returns 0 or -errno with the reason in err. */
int mnc_attach_pinned(struct bpf_object *obj, const char *root, int cg_fd, char created[][64],
                      int *n_created, int max_created, char *err, size_t errlen);

/* Records one self-test case (ignored past the table's capacity). */
void mnc_selftest_add(mnc_selftest *st, const char *name, int want, int got);

/* printf into err (bounded); returns rc so callers can `return kerr(...)` */
int mnc_kerr(char *err, size_t errlen, int rc, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

#endif
