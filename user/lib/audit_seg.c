// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* audit_seg.c - the audit log's rotation into segments, and verifying a set of them (mnc/audit.h,
 * "rotation"; docs/audit.md, "Rotation"). */
#include "audit_int.h"
#include "mnc_util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define ZERO_HASH "0000000000000000000000000000000000000000000000000000000000000000"
#define SEQ_DIGITS 20

/* PATH without ".jsonl" (the segments' prefix) into out. -1 if it does not fit. */
static int seg_prefix(const char *path, char *out, size_t len)
{
    size_t n = strlen(path);
    if (n > 6 && strcmp(path + n - 6, ".jsonl") == 0)
        n -= 6;
    if (n + 1 > len)
        return -1;
    memcpy(out, path, n);
    out[n] = '\0';
    return 0;
}

int mnc_audit_segment_name(const char *path, uint64_t first, char *out, size_t len)
{
    char pre[PATH_MAX];
    if (seg_prefix(path, pre, sizeof(pre)) != 0)
        return -1;
    int n = snprintf(out, len, "%s-%0*" PRIu64 ".jsonl", pre, SEQ_DIGITS, first);
    return n < 0 || (size_t)n >= len ? -1 : 0;
}

static int dir_of(const char *path, char *out, size_t len)
{
    const char *sl = strrchr(path, '/');
    int n = sl ? snprintf(out, len, "%.*s", (int)(sl == path ? 1 : sl - path), path) : snprintf(out, len, ".");
    return n < 0 || (size_t)n >= len ? -1 : 0;
}

static int fsync_dir(const char *path)
{
    char d[PATH_MAX];
    if (dir_of(path, d, sizeof(d)) != 0)
        return -1;
    int fd = open(d, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    int rc = fsync(fd);
    close(fd);
    return rc;
}

typedef struct seg {
    uint64_t first;
    char *path;
} seg;

static int seg_cmp(const void *a, const void *b)
{
    const seg *x = a, *y = b;
    return x->first < y->first ? -1 : x->first > y->first;
}

char **mnc_audit_segments(const char *path)
{
    char pre[PATH_MAX], d[PATH_MAX];
    if (seg_prefix(path, pre, sizeof(pre)) != 0 || dir_of(path, d, sizeof(d)) != 0) {
        errno = ENAMETOOLONG;
        return NULL;
    }
    const char *base = strrchr(pre, '/') ? strrchr(pre, '/') + 1 : pre;
    size_t bl = strlen(base);
    DIR *dir = opendir(d);
    if (!dir)
        return NULL;
    seg *v = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    int err = 0;
    while ((e = readdir(dir)) != NULL) {
        const char *nm = e->d_name;
        if (strncmp(nm, base, bl) != 0 || nm[bl] != '-' || strlen(nm + bl + 1) != SEQ_DIGITS + 6 ||
            strcmp(nm + bl + 1 + SEQ_DIGITS, ".jsonl") != 0)
            continue;
        uint64_t first = 0;
        bool digits = true;
        for (int i = 0; i < SEQ_DIGITS && digits; i++) {
            char c = nm[bl + 1 + i];
            digits = c >= '0' && c <= '9' && first <= (UINT64_MAX - 9) / 10;
            first = first * 10 + (uint64_t)(c - '0');
        }
        if (!digits || first == 0)
            continue;
        if (n == cap) {
            size_t nc = cap ? cap * 2 : 16;
            seg *nv = realloc(v, nc * sizeof(*nv));
            if (!nv) {
                err = ENOMEM;
                break;
            }
            v = nv;
            cap = nc;
        }
        size_t pl = strlen(d) + 1 + strlen(nm) + 1;
        v[n].path = malloc(pl);
        if (!v[n].path) {
            err = ENOMEM;
            break;
        }
        snprintf(v[n].path, pl, "%s/%s", d, nm);
        v[n].first = first;
        n++;
    }
    closedir(dir);
    char **out = err ? NULL : calloc(n + 1, sizeof(*out));
    if (out) {
        if (n > 0) /* v is NULL when no segment was found: qsort wants an array */
            qsort(v, n, sizeof(*v), seg_cmp);
        for (size_t i = 0; i < n; i++)
            out[i] = v[i].path;
    } else {
        for (size_t i = 0; i < n; i++)
            free(v[i].path);
        errno = err ? err : ENOMEM;
    }
    free(v);
    return out;
}

void mnc_audit_segments_free(char **segs)
{
    for (size_t i = 0; segs && segs[i]; i++)
        free(segs[i]);
    free(segs);
}

int mnc_audit__seg_base(const char *path, int fd, const mnc_audit_verify *v, mnc_audit_seg_base *base, char *err,
                        size_t errlen)
{
    base->seq = 0;
    memcpy(base->head, ZERO_HASH, sizeof(base->head));
    char tmp[PATH_MAX];
    if (snprintf(tmp, sizeof(tmp), "%s.rot", path) >= (int)sizeof(tmp)) {
        snprintf(err, errlen, "%s: path too long", path);
        return -1;
    }
    if (unlink(tmp) != 0 && errno != ENOENT) { /* a new file a rotation never put in place */
        snprintf(err, errlen, "%s: %s", tmp, strerror(errno));
        return -1;
    }
    char **segs = mnc_audit_segments(path);
    if (!segs) {
        snprintf(err, errlen, "%s: cannot list its rotated segments: %s", path, strerror(errno));
        return -1;
    }
    size_t n = 0;
    while (segs[n])
        n++;
    struct stat a, s;
    if (n > 0 && fstat(fd, &a) == 0 && stat(segs[n - 1], &s) == 0 && a.st_ino == s.st_ino && a.st_dev == s.st_dev) {
        /* A rotation stopped between linking the segment's name and putting the new file in
         * place: the file is still the active one; undo the link. */
        if (unlink(segs[n - 1]) != 0 || fsync_dir(path) != 0) {
            snprintf(err, errlen, "%s: cannot undo an interrupted rotation: %s", segs[n - 1], strerror(errno));
            mnc_audit_segments_free(segs);
            return -1;
        }
        free(segs[--n]);
        segs[n] = NULL;
    }
    int rc = 0;
    if (n == 0) {
        if (v->base_seq > 0) {
            snprintf(err, errlen,
                     "%s starts at record %" PRIu64 ", but no rotated segment beside it holds the records "
                     "before it",
                     path, v->base_seq + 1);
            rc = -1;
        }
        mnc_audit_segments_free(segs);
        return rc;
    }
    if (v->records > 0 && v->base_seq == 0) {
        snprintf(err, errlen,
                 "%s starts a new chain, but rotated segments of a chain are beside it (newest %s): "
                 "restore the log or move the segments away",
                 path, segs[n - 1]);
        mnc_audit_segments_free(segs);
        return -1;
    }
    mnc_audit_verify w;
    int wr = mnc_audit__walk(segs[n - 1], &w, true);
    if (wr != 0 || w.torn_tail || w.records == 0) {
        snprintf(err, errlen, "the newest rotated segment %s does not verify: %s", segs[n - 1],
                 wr != 0 || w.torn_tail ? w.msg : "it is empty");
        rc = -1;
    } else if (v->records > 0 && (w.base_seq + w.records != v->base_seq || strcmp(w.head, v->base_prev) != 0)) {
        snprintf(err, errlen,
                 "%s does not continue the newest rotated segment %s: it starts after record %" PRIu64
                 " (prev %.16s...), the segment ends at record %" PRIu64 " (hash %.16s...)",
                 path, segs[n - 1], v->base_seq, v->base_prev, w.base_seq + w.records, w.head);
        rc = -1;
    } else {
        base->seq = w.base_seq + w.records;
        memcpy(base->head, w.head, sizeof(base->head));
    }
    mnc_audit_segments_free(segs);
    return rc;
}

void mnc_audit_set_rotation(mnc_audit *a, uint64_t max_bytes, uint64_t max_age_ms, unsigned keep)
{
    a->rot_bytes = max_bytes;
    a->rot_age_ms = max_age_ms;
    a->rot_keep = keep;
}

void mnc_audit_rotation_status(const mnc_audit *a, mnc_audit_rotation *r, uint64_t *bytes)
{
    *r = a->rot;
    if (bytes)
        *bytes = (uint64_t)a->size;
}

/* Test hook (tests/integration/test_audit_rotate): MNC_AUDIT_TEST_KILL_ROTATE=N SIGKILLs the
 * process at step N of a rotation: 1 after the segment's name is linked, 2 after the new file
 * was renamed in place, 3 after the oldest segments were deleted. */
static void kill_point(int step)
{
    const char *e = getenv("MNC_AUDIT_TEST_KILL_ROTATE");
    if (e && atoi(e) == step)
        raise(SIGKILL);
}

static void rot_fail(mnc_audit *a, const char *what, const char *name)
{
    a->rot.failures++;
    snprintf(a->rot.last_error, sizeof(a->rot.last_error), "%s %.160s: %s", what, name, strerror(errno));
}

static void prune(mnc_audit *a)
{
    if (!a->rot_keep)
        return;
    char **segs = mnc_audit_segments(a->path);
    if (!segs) {
        rot_fail(a, "listing the segments of", a->path);
        return;
    }
    size_t n = 0;
    while (segs[n])
        n++;
    for (size_t i = 0; i + a->rot_keep < n; i++) {
        if (unlink(segs[i]) != 0)
            rot_fail(a, "deleting", segs[i]);
        else
            a->rot.pruned++;
    }
    mnc_audit_segments_free(segs);
    (void)fsync_dir(a->path);
    kill_point(3);
}

void mnc_audit__maybe_rotate(mnc_audit *a)
{
    if ((!a->rot_bytes && !a->rot_age_ms) || a->poisoned || a->pend_len > 0 || a->size == 0 || !a->path)
        return;
    uint64_t now = mnc_now_ms();
    if (!a->seg_start_ms)
        a->seg_start_ms = now;
    bool due = (a->rot_bytes && (uint64_t)a->size >= a->rot_bytes) ||
               (a->rot_age_ms && now >= a->seg_start_ms && now - a->seg_start_ms >= a->rot_age_ms);
    if (!due)
        return;
    char name[PATH_MAX], tmp[PATH_MAX];
    if (mnc_audit_segment_name(a->path, a->base_seq + 1, name, sizeof(name)) != 0 ||
        snprintf(tmp, sizeof(tmp), "%s.rot", a->path) >= (int)sizeof(tmp)) {
        errno = ENAMETOOLONG;
        rot_fail(a, "naming a segment of", a->path);
        return;
    }
    /* 1. Everything in the file is durable before it becomes a segment. */
    if (fdatasync(a->fd) != 0) {
        a->poisoned = true;
        rot_fail(a, "fdatasync of", a->path);
        return;
    }
    a->dirty = false;
    /* 2. The segment's name; until step 3 the file is still the active one (open undoes it). */
    if (link(a->path, name) != 0) {
        rot_fail(a, "linking", name);
        return;
    }
    if (fsync_dir(a->path) != 0) {
        rot_fail(a, "fsync of the directory of", a->path);
        (void)unlink(name);
        return;
    }
    kill_point(1);
    /* 3. A new, empty, durable file renamed over the active name. */
    (void)unlink(tmp);
    int nfd = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0600);
    if (nfd < 0 || fsync(nfd) != 0 || rename(tmp, a->path) != 0) {
        rot_fail(a, "putting a new file in place of", a->path);
        if (nfd >= 0)
            close(nfd);
        (void)unlink(tmp);
        (void)unlink(name);
        (void)fsync_dir(a->path);
        return;
    }
    kill_point(2);
    if (fsync_dir(a->path) != 0)
        rot_fail(a, "fsync of the directory of", a->path); /* the rename is done: go on */
    close(a->fd);
    a->fd = nfd;
    a->size = 0;
    a->base_seq = a->seq;
    memcpy(a->base_prev, a->head, sizeof(a->base_prev));
    a->seg_start_ms = 0;
    (void)mnc_cache_trim_reset(nfd, &a->trim, 0);
    a->rot.rotations++;
    prune(a);
}

int mnc_audit_verify_set(const char *const *paths, size_t n, mnc_audit_set_verify *r)
{
    memset(r, 0, sizeof(*r));
    memcpy(r->head, ZERO_HASH, sizeof(r->head));
    typedef struct one {
        const char *path;
        mnc_audit_verify v;
    } one;
    one *f = calloc(n ? n : 1, sizeof(*f));
    if (!f) {
        snprintf(r->msg, sizeof(r->msg), "out of memory");
        return -1;
    }
    size_t k = 0;
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        int wr = mnc_audit__walk(paths[i], &f[k].v, true);
        if (wr < 0) {
            snprintf(r->msg, sizeof(r->msg), "%s", f[k].v.msg);
            rc = -1;
        } else if (wr > 0) {
            snprintf(r->bad_file, sizeof(r->bad_file), "%s", paths[i]);
            snprintf(r->msg, sizeof(r->msg), "%s: %s: the file was altered", paths[i], f[k].v.msg);
            rc = 1;
        } else if (f[k].v.records > 0) { /* an empty file (just rotated) adds nothing */
            f[k].path = paths[i];
            k++;
        }
        r->files++;
    }
    /* in chain order; insertion sort: a handful of files */
    for (size_t i = 1; rc == 0 && i < k; i++)
        for (size_t j = i; j > 0 && f[j].v.base_seq < f[j - 1].v.base_seq; j--) {
            one t = f[j];
            f[j] = f[j - 1];
            f[j - 1] = t;
        }
    for (size_t i = 0; rc == 0 && i < k; i++) {
        const mnc_audit_verify *v = &f[i].v;
        if (v->torn_tail && i + 1 < k) {
            snprintf(r->bad_file, sizeof(r->bad_file), "%s", f[i].path);
            snprintf(r->msg, sizeof(r->msg), "%s ends in a torn line but is not the last file: it was altered",
                     f[i].path);
            rc = 1;
            break;
        }
        if (i == 0) {
            r->first = v->base_seq + 1;
            if (v->base_seq > 0 && strcmp(v->base_prev, ZERO_HASH) == 0) {
                snprintf(r->bad_file, sizeof(r->bad_file), "%s", f[i].path);
                snprintf(r->msg, sizeof(r->msg), "%s: its first record has seq %" PRIu64 " but no prev: altered",
                         f[i].path, v->base_seq + 1);
                rc = 1;
                break;
            }
        } else {
            const mnc_audit_verify *p = &f[i - 1].v;
            uint64_t end = p->base_seq + p->records;
            if (v->base_seq > end) {
                snprintf(r->bad_file, sizeof(r->bad_file), "%s", f[i].path);
                snprintf(r->msg, sizeof(r->msg),
                         "records %" PRIu64 "..%" PRIu64 " are missing: a segment between %s and %s was "
                         "deleted or lost",
                         end + 1, v->base_seq, f[i - 1].path, f[i].path);
                rc = 1;
                break;
            }
            if (v->base_seq < end || strcmp(v->base_prev, p->head) != 0) {
                snprintf(r->bad_file, sizeof(r->bad_file), "%s", f[i].path);
                snprintf(r->msg, sizeof(r->msg),
                         "%s does not continue %s (it starts after record %" PRIu64 ", prev %.16s...; %s ends at "
                         "record %" PRIu64 ", hash %.16s...): one of them was altered or replaced",
                         f[i].path, f[i - 1].path, v->base_seq, v->base_prev, f[i - 1].path, end, p->head);
                rc = 1;
                break;
            }
        }
        r->last = v->base_seq + v->records;
        memcpy(r->head, v->head, sizeof(r->head));
        r->torn_tail = v->torn_tail;
    }
    if (rc == 0 && r->first > 1)
        snprintf(r->msg, sizeof(r->msg),
                 "records 1..%" PRIu64 " are not in the set (deleted by retention, or missing: only anchors "
                 "tell which)",
                 r->first - 1);
    free(f);
    return rc;
}
