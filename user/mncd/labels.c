// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* labels.c - data at rest keeps its label (labels.h). */
#include "labels.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "kern_layer.h"

/* ---- the mount table: where a path lies inside its filesystem */

typedef struct mnt {
    dev_t dev;  /* st_dev of what is mounted */
    char *root; /* the mounted directory, as a path inside its filesystem */
    char *mp;   /* where it is mounted */
} mnt;

typedef struct mnts {
    mnt *m;
    int n;
} mnts;

static void mnts_free(mnts *t)
{
    for (int i = 0; i < t->n; i++) {
        free(t->m[i].root);
        free(t->m[i].mp);
    }
    free(t->m);
    memset(t, 0, sizeof(*t));
}

/* mountinfo escapes space, tab, newline and backslash as \ooo. In place. */
static void unescape(char *s)
{
    char *o = s;
    for (char *i = s; *i; i++) {
        if (i[0] == '\\' && i[1] >= '0' && i[1] <= '3' && i[2] >= '0' && i[2] <= '7' && i[3] >= '0' && i[3] <= '7') {
            *o++ = (char)((i[1] - '0') * 64 + (i[2] - '0') * 8 + (i[3] - '0'));
            i += 3;
        } else {
            *o++ = *i;
        }
    }
    *o = 0;
}

static int mnts_load(mnts *t)
{
    memset(t, 0, sizeof(*t));
    FILE *f = fopen("/proc/self/mountinfo", "re");
    if (!f)
        return -errno;
    char *line = NULL;
    size_t cap = 0;
    int rc = 0, alloc = 0;
    while (getline(&line, &cap, f) > 0) {
        unsigned maj, mnr;
        char root[PATH_MAX], mp[PATH_MAX];
        if (sscanf(line, "%*u %*u %u:%u %4095s %4095s", &maj, &mnr, root, mp) != 4)
            continue;
        if (t->n == alloc) {
            alloc = alloc ? alloc * 2 : 64;
            mnt *nm = realloc(t->m, (size_t)alloc * sizeof(*nm));
            if (!nm) {
                rc = -ENOMEM;
                break;
            }
            t->m = nm;
        }
        unescape(root);
        unescape(mp);
        t->m[t->n].dev = makedev(maj, mnr);
        t->m[t->n].root = strdup(root);
        t->m[t->n].mp = strdup(mp);
        if (!t->m[t->n].root || !t->m[t->n].mp) {
            free(t->m[t->n].root);
            free(t->m[t->n].mp);
            rc = -ENOMEM;
            break;
        }
        t->n++;
    }
    free(line);
    fclose(f);
    if (rc)
        mnts_free(t);
    return rc;
}

/* The length of prefix p of path (component-wise), or -1 if p is not a prefix. "/" is. */
static int prefix_len(const char *path, const char *p)
{
    size_t l = strlen(p);
    if (l == 1 && p[0] == '/')
        return path[0] == '/' ? 1 : -1;
    if (strncmp(path, p, l) != 0 || (path[l] != 0 && path[l] != '/'))
        return -1;
    return (int)l;
}

/* The path inside its filesystem of host path `path` (a realpath), from the mount it lies on
 * (the longest mount point; the last mounted of equal ones): root + the rest. "" if unknown. */
static void fs_path(const mnts *t, const char *path, dev_t *dev, char *out, size_t n)
{
    int best = -1, bl = -1;
    for (int i = 0; i < t->n; i++) {
        int l = prefix_len(path, t->m[i].mp);
        if (l >= 0 && l >= bl) {
            best = i;
            bl = l;
        }
    }
    out[0] = 0;
    *dev = 0;
    if (best < 0)
        return;
    const char *rest = path + (bl == 1 ? 0 : bl);
    const char *root = t->m[best].root;
    snprintf(out, n, "%s%s", strcmp(root, "/") == 0 && rest[0] == '/' ? "" : root, rest[0] ? rest : "");
    if (!out[0])
        snprintf(out, n, "/");
    *dev = t->m[best].dev;
}

/* Do the places a and b (host paths) share any inode: by path, or inside a filesystem (a bind
 * mount of one inside, or of a part of, the other; mounts under either counted)? */
static bool overlap_fs(const mnts *t, const char *a, const char *b)
{
    if (mncd_ws_overlap(a, b))
        return true;
    /* (dev, fs path) of each place, and of every mount point below it */
    const char *pl[2] = {a, b};
    for (int x = 0; x < 2; x++) {
        dev_t dx;
        char fx[PATH_MAX];
        fs_path(t, pl[x], &dx, fx, sizeof(fx));
        for (int y = -1; y < t->n; y++) {
            dev_t dy;
            char fy[PATH_MAX];
            if (y < 0) {
                fs_path(t, pl[1 - x], &dy, fy, sizeof(fy));
            } else {
                if (prefix_len(t->m[y].mp, pl[1 - x]) < 0)
                    continue; /* a mount point below the other place */
                dy = t->m[y].dev;
                snprintf(fy, sizeof(fy), "%s", t->m[y].root);
            }
            if (fx[0] && fy[0] && dx == dy && mncd_ws_overlap(fx, fy))
                return true;
        }
    }
    return false;
}

/* ---- reading and writing labels */

/* The record (MNCD_WS_XATTR: a workspace's) and the label (MNCD_LABEL_XATTR: a sealed inode's)
 * of path, merged into *t (tainted iff either is). 0, 1 if an invalid one was found (taken as
 * the tightest label there is), or -errno. Never follows a symlink at the end. */
static int read_labels(const mncd *d, const char *path, bool follow, mncd_wtaint *t)
{
    memset(t, 0, sizeof(*t));
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOATIME | O_CLOEXEC | (follow ? 0 : O_NOFOLLOW));
    if (fd < 0)
        return -errno;
    int bad = 0;
    static const char *const attrs[] = {MNCD_WS_XATTR, MNCD_LABEL_XATTR};
    for (size_t i = 0; i < 2; i++) {
        mncd_wtaint one;
        int r = mncd_ws_fread(fd, attrs[i], d->policy, &one);
        if (r == -EBADMSG) {
            bad = 1;
            memset(&one, 0, sizeof(one));
            one.tainted = true; /* not a valid record: the tightest label there is */
        } else if (r) {
            continue; /* none, or no xattrs here: nothing recorded */
        }
        mncd_ws_merge(t, &one);
    }
    close(fd);
    return bad;
}

/* The kernel's label for a record (lsm backend): its sinks as ids of the running policy. */
static void to_kernel(const mncd_wtaint *t, struct mnc_label *l)
{
    memset(l, 0, sizeof(*l));
    memcpy(l->sinks, t->sinks.w, sizeof(l->sinks));
    l->may_log = t->may_log;
    l->may_memory = t->may_memory;
    l->may_forward = t->may_forward;
    l->may_external = t->may_external;
}

/* file_labels[(dev, ino) of the open fd] = t (lsm backend only; elsewhere nothing to do). */
static int kernel_label(mncd *d, int fd, const struct stat *st, const mncd_wtaint *t)
{
    mncd_kern *kk = d->kern;
    if (!kk || kk->backend != MNC_BACKEND_LSM)
        return 0;
    struct mnc_file_key key = {.dev = ((uint64_t)major(st->st_dev) << 20) | minor(st->st_dev), .ino = st->st_ino};
    struct mnc_label l;
    to_kernel(t, &l);
    int gen = 0;
    if (fd >= 0 && ioctl(fd, FS_IOC_GETVERSION, &gen) == 0) {
        l.flags |= MNC_LABEL_F_GEN;
        l.gen = (uint32_t)gen;
    }
    return mnc_kern_label_set(kk->k, &key, &l);
}

/* ---- sealing: nftw has no user argument; mncd is single-threaded */

typedef struct seal_ctx {
    mncd *d;
    const mncd_wtaint *t; /* NULL: unseal */
    const char *top;
    unsigned long seen, written;
    int err;
    char errpath[PATH_MAX];
} seal_ctx;
static seal_ctx *seal_cur;

static int seal_one(const char *path, const struct stat *st, int type, struct FTW *f)
{
    seal_ctx *c = seal_cur;
    (void)f;
    if (type != FTW_F && type != FTW_D && type != FTW_DP && type != FTW_DNR)
        return 0; /* symlinks (never followed), unreadable entries */
    if (!S_ISREG(st->st_mode) && !S_ISDIR(st->st_mode))
        return 0;
    if (++c->seen > MNCD_LABEL_SEAL_MAX) {
        c->err = -E2BIG;
        return 1;
    }
    bool top = strcmp(path, c->top) == 0;
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOATIME | O_CLOEXEC);
    if (fd < 0 && errno == EPERM)
        fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT || errno == ELOOP)
            return 0; /* removed meanwhile, or a symlink put in its place */
        c->err = -errno;
        snprintf(c->errpath, sizeof(c->errpath), "%s", path);
        return 1;
    }
    struct stat now;
    int rc = fstat(fd, &now);
    if (rc == 0 && (now.st_dev != st->st_dev || now.st_ino != st->st_ino))
        rc = 0;  /* replaced meanwhile: label what is there now */
    if (!c->t) { /* unseal */
        if (!top && fremovexattr(fd, MNCD_LABEL_XATTR) != 0 && errno != ENODATA && errno != EOPNOTSUPP)
            rc = -errno;
        mncd_kern *kk = c->d->kern;
        if (rc == 0 && kk && kk->backend == MNC_BACKEND_LSM) {
            struct mnc_file_key key = {.dev = ((uint64_t)major(now.st_dev) << 20) | minor(now.st_dev),
                                       .ino = now.st_ino};
            int r = mnc_kern_label_del(kk->k, &key);
            rc = r == -ENOENT ? 0 : r;
        }
    } else if (top) {
        rc = kernel_label(c->d, fd, &now, c->t); /* the top carries the workspace record */
    } else {
        mncd_wtaint cur, merged;
        int r = mncd_ws_fread(fd, MNCD_LABEL_XATTR, c->d->policy, &cur);
        if (r == -EBADMSG) {
            memset(&cur, 0, sizeof(cur));
            cur.tainted = true; /* not a valid label: the tightest, replaced by a valid one */
        } else if (r) {
            memset(&cur, 0, sizeof(cur));
        }
        merged = cur;
        mncd_ws_merge(&merged, c->t);
        merged.n_obj = 0; /* the workspace record keeps the object ids */
        bool same = r == 0 && cur.tainted && mncd_ws_implies(&cur, &merged) && mncd_ws_implies(&merged, &cur) &&
                    strcmp(cur.agent, merged.agent) == 0;
        if (!same) {
            rc = mncd_ws_fwrite(fd, MNCD_LABEL_XATTR, c->d->policy, &merged);
            c->written += rc == 0;
        }
        if (rc == 0)
            rc = kernel_label(c->d, fd, &now, &merged);
    }
    close(fd);
    if (rc) {
        c->err = rc;
        snprintf(c->errpath, sizeof(c->errpath), "%s", path);
        return 1;
    }
    return 0;
}

static int seal_walk(mncd *d, const char *dir, const mncd_wtaint *t, unsigned long *written, char *why, size_t n)
{
    seal_ctx c = {.d = d, .t = t, .top = dir};
    seal_cur = &c;
    int r = nftw(dir, seal_one, 32, FTW_PHYS);
    seal_cur = NULL;
    if (written)
        *written = c.written;
    if (r < 0 && !c.err)
        c.err = -errno;
    if (c.err) {
        char sh[PATH_MAX + 64];
        char *roots[1] = {(char *)dir};
        snprintf(why, n, "%s %.400s: %s", t ? "labelling" : "removing the labels of",
                 c.errpath[0] ? mnc_ws_shown(c.errpath, roots, 1, sh, sizeof(sh)) : dir,
                 c.err == -E2BIG ? "more inodes than "
                                   "the bound ("
                                   "MNCD_LABEL_SEAL_MAX"
                                   ")"
                                 : strerror(-c.err));
        return c.err;
    }
    return 0;
}

int mncd_labels_seal(mncd *d, const char *dir, const mncd_wtaint *t, unsigned long *sealed, char *why, size_t n)
{
    if (!t->tainted)
        return 0;
    return seal_walk(d, dir, t, sealed, why, n);
}

int mncd_labels_unseal(mncd *d, const char *dir, char *why, size_t n) { return seal_walk(d, dir, NULL, NULL, why, n); }

int mncd_labels_seal_live(mncd *d, char *why, size_t n)
{
    mncd_kern *kk = d->kern;
    for (int i = 0; kk && i < kk->n_w; i++)
        for (int j = 0; j < kk->w[i].reg.n_ws; j++) {
            mncd_wtaint rec;
            if (mncd_ws_read(kk->w[i].reg.ws[j], d->policy, &rec) != 0 || !rec.tainted)
                continue;
            int r = mncd_labels_seal(d, kk->w[i].reg.ws[j], &rec, NULL, why, n);
            if (r)
                return r;
        }
    return 0;
}

/* ---- the decision at launch */

void mncd_labels_free(mncd_labels *l)
{
    free(l->src);
    memset(l, 0, sizeof(*l));
}

typedef enum place_kind { PLACE_GRANT, PLACE_WS, PLACE_FD } place_kind;

typedef struct decide_ctx {
    mncd *d;
    int agent;
    const mncd_reg *reg;
    mncd_labels *out;
    mnts mt;
    place_kind kind;
    const char *root; /* the place (a realpath) */
    const char *what; /* "read grant /x" */
    /* inodes that no read place may contain: mncd's state dir */
    dev_t state_dev;
    ino_t state_ino;
    const char *why; /* set when refused */
    char *whybuf;
    size_t whyn;
    unsigned long walked;
} decide_ctx;
static decide_ctx *decide_cur;

/* A label found at `where` (the place's root, an ancestor or an inode below it). */
static const char *take(decide_ctx *c, const char *where, const mncd_wtaint *t)
{
    if (!t->tainted)
        return NULL;
    char sh[PATH_MAX + 64];
    char *roots[1] = {(char *)c->root};
    /* names below the place may be an agent's: shown by inode (as mnc_ws_shown) */
    const char *shown = strcmp(where, c->root) == 0 ? where : mnc_ws_shown(where, roots, 1, sh, sizeof(sh));
    if (c->kind != PLACE_WS) {
        const mnc_policy *p = c->d->policy;
        int writer = t->agent[0] ? mnc_policy_agent(p, t->agent) : -1;
        bool own = writer == c->agent;
        bool named = writer >= 0 && mnc_set_has(&p->principals[c->agent].reads_from, (unsigned)writer);
        if (!own && !named) {
            char desc[600];
            mncd_ws_describe(t, p, desc, sizeof(desc));
            snprintf(c->whybuf, c->whyn,
                     "%s covers data at rest that %s%s wrote while tainted (%.600s: %s); agent %s does not name that "
                     "flow (the policy's \"reads_from\"): it would read it untainted by its scope",
                     c->what, t->agent[0] ? "agent " : "", t->agent[0] ? t->agent : "an unnamed agent", shown, desc,
                     p->principals[c->agent].name);
            c->why = c->whybuf;
            return c->why;
        }
    }
    char what[PATH_MAX + 128];
    snprintf(what, sizeof(what), "%s: %s", c->what, shown);
    mncd_ws_merge(&c->out->t, t);
    for (int i = 0; i < c->out->n_src; i++)
        if (strcmp(c->out->src[i].what, what) == 0) {
            mncd_ws_merge(&c->out->src[i].t, t);
            return NULL;
        }
    if (c->out->n_src >= 64)
        return NULL; /* in the merge; not listed */
    mncd_label_src *ns = realloc(c->out->src, (size_t)(c->out->n_src + 1) * sizeof(*ns));
    if (!ns) {
        snprintf(c->whybuf, c->whyn, "out of memory");
        return c->why = c->whybuf;
    }
    c->out->src = ns;
    snprintf(ns[c->out->n_src].what, sizeof(ns[0].what), "%s", what);
    ns[c->out->n_src++].t = *t;
    return NULL;
}

/* Refuses places that reach mncd's own data at rest: its state dir, log and memory sinks. */
static const char *forbidden(decide_ctx *c, const char *path, const struct stat *st)
{
    mncd_kern *kk = c->d->kern;
    struct mnc_file_key key = {.dev = ((uint64_t)major(st->st_dev) << 20) | minor(st->st_dev), .ino = st->st_ino};
    struct mnc_sink s;
    bool sink =
        kk && mnc_kern_sink_file_lookup(kk->k, &key, &s) == 0 && (s.cls == MNC_SINK_LOG || s.cls == MNC_SINK_MEMORY);
    bool state = st->st_dev == c->state_dev && st->st_ino == c->state_ino;
    if (!sink && !state)
        return NULL;
    char sh[PATH_MAX + 64];
    char *roots[1] = {(char *)c->root};
    snprintf(c->whybuf, c->whyn,
             "%s reaches %s%s%s (%.600s): data at rest that only mncd may hand out (its objects, logs and memory)",
             c->what, state ? "mncd's state directory" : mnc_sink_class_name(s.cls), state ? "" : " sink ",
             state ? "" : (mncd_peer_name(c->d, s.id) ? mncd_peer_name(c->d, s.id) : "?"),
             strcmp(path, c->root) == 0 ? path : mnc_ws_shown(path, roots, 1, sh, sizeof(sh)));
    return c->why = c->whybuf;
}

static int decide_one(const char *path, const struct stat *st, int type, struct FTW *f)
{
    decide_ctx *c = decide_cur;
    (void)f;
    if (type == FTW_NS || type == FTW_SL || type == FTW_SLN)
        return 0;
    if (type == FTW_DNR) {
        char sh[PATH_MAX + 64];
        char *roots[1] = {(char *)c->root};
        snprintf(c->whybuf, c->whyn, "%s: %.600s cannot be read, so its labels cannot be checked", c->what,
                 strcmp(path, c->root) == 0 ? path : mnc_ws_shown(path, roots, 1, sh, sizeof(sh)));
        c->why = c->whybuf;
        return 1;
    }
    if (++c->walked > MNCD_LABEL_WALK_MAX) {
        snprintf(c->whybuf, c->whyn,
                 "%s holds more than %d entries: its labels cannot all be checked; grant a "
                 "smaller directory",
                 c->what, MNCD_LABEL_WALK_MAX);
        c->why = c->whybuf;
        return 1;
    }
    if (forbidden(c, path, st))
        return 1;
    if (!S_ISREG(st->st_mode) && !S_ISDIR(st->st_mode))
        return 0;
    mncd_wtaint t;
    int r = read_labels(c->d, path, false, &t);
    if (r < 0)
        return 0; /* gone meanwhile */
    return take(c, path, &t) ? 1 : 0;
}

/* The ancestors of the place (by path, and inside its filesystem through every mount of it that
 * shows them) and their labels; forbidden ones refuse. */
static const char *ancestors(decide_ctx *c, const char *place)
{
    dev_t dev;
    char fsp[PATH_MAX];
    fs_path(&c->mt, place, &dev, fsp, sizeof(fsp));
    char a[PATH_MAX];
    /* host path ancestors */
    snprintf(a, sizeof(a), "%s", place);
    for (char *sl = strrchr(a, '/'); sl; sl = strrchr(a, '/')) {
        if (sl == a) {
            if (a[1] == 0)
                break;
            a[1] = 0;
        } else {
            *sl = 0;
        }
        struct stat st;
        if (lstat(a, &st) != 0)
            continue;
        if (forbidden(c, a, &st))
            return c->why;
        mncd_wtaint t;
        if (read_labels(c->d, a, false, &t) >= 0 && take(c, a, &t))
            return c->why;
    }
    /* ancestors inside the filesystem (a bind mount of a part of a labelled directory) */
    if (!fsp[0])
        return NULL;
    snprintf(a, sizeof(a), "%s", fsp);
    for (char *sl = strrchr(a, '/'); sl; sl = strrchr(a, '/')) {
        if (sl == a) {
            if (a[1] == 0)
                break;
            a[1] = 0;
        } else {
            *sl = 0;
        }
        for (int i = 0; i < c->mt.n; i++) {
            const mnt *m = &c->mt.m[i];
            int l = m->dev == dev ? prefix_len(a, m->root) : -1;
            if (l < 0)
                continue;
            char host[PATH_MAX * 2];
            snprintf(host, sizeof(host), "%s%s", strcmp(m->mp, "/") == 0 ? "" : m->mp, a + (l == 1 ? 0 : l));
            if (!host[0])
                snprintf(host, sizeof(host), "/");
            struct stat st;
            if (lstat(host, &st) != 0 || st.st_dev != dev)
                continue;
            if (forbidden(c, host, &st))
                return c->why;
            mncd_wtaint t;
            if (read_labels(c->d, host, false, &t) >= 0 && take(c, host, &t))
                return c->why;
        }
    }
    return NULL;
}

/* One place: live overlaps, ancestors, and every inode below it. */
static const char *place(decide_ctx *c, place_kind kind, const char *path, const char *what)
{
    c->kind = kind;
    c->root = path;
    c->what = what;
    mncd_kern *kk = c->d->kern;
    /* live instances of other agents: a read grant on their workspace, a workspace under their
     * read grant, would share data without sharing taint */
    for (int i = 0; kk && i < kk->n_w; i++) {
        if (kk->w[i].agent == c->agent)
            continue;
        const mncd_reg *r = &kk->w[i].reg;
        for (int j = 0; j < r->n_ws; j++)
            if (overlap_fs(&c->mt, path, r->ws[j])) {
                snprintf(c->whybuf, c->whyn,
                         "%s overlaps workspace %.400s of a live instance of agent %s (cgroup %.200s): two agents "
                         "would share data without sharing taint",
                         what, r->ws[j], mncd_peer_name(c->d, kk->w[i].agent), kk->w[i].path + strlen(kk->cg2));
                return c->why = c->whybuf;
            }
        for (int j = 0; j < r->n_rd && kind == PLACE_WS; j++)
            if (overlap_fs(&c->mt, path, r->rd[j])) {
                snprintf(c->whybuf, c->whyn,
                         "%s overlaps read grant %.400s of a live instance of agent %s (cgroup %.200s): that agent "
                         "would read what this one writes without sharing its taint",
                         what, r->rd[j], mncd_peer_name(c->d, kk->w[i].agent), kk->w[i].path + strlen(kk->cg2));
                return c->why = c->whybuf;
            }
    }
    if (ancestors(c, path))
        return c->why;
    struct stat st;
    if (lstat(path, &st) != 0) {
        snprintf(c->whybuf, c->whyn, "%s: %s", what, strerror(errno));
        return c->why = c->whybuf;
    }
    if (!S_ISDIR(st.st_mode)) {
        if (forbidden(c, path, &st))
            return c->why;
        mncd_wtaint t;
        if (read_labels(c->d, path, false, &t) >= 0 && take(c, path, &t))
            return c->why;
        return NULL;
    }
    decide_cur = c;
    int r = nftw(path, decide_one, 32, FTW_PHYS);
    decide_cur = NULL;
    if (c->why)
        return c->why;
    if (r < 0) {
        snprintf(c->whybuf, c->whyn, "%s: walking it failed: %s", what, strerror(errno));
        return c->why = c->whybuf;
    }
    return NULL;
}

/* An fd the agent inherits from the caller: a regular file or directory is a place (its own
 * labels, its ancestors when its path still names it, below it for a directory); pipes,
 * sockets, terminals carry no label (docs/kernel.md, "Data at rest", limits). */
static const char *fd_place(decide_ctx *c, pid_t caller, int fdn)
{
    char proc[64], what[128], target[PATH_MAX];
    snprintf(proc, sizeof(proc), "/proc/%d/fd/%d", (int)caller, fdn);
    snprintf(what, sizeof(what), "fd %d passed in", fdn);
    struct stat st;
    if (stat(proc, &st) != 0)
        return NULL; /* not open: the agent does not inherit it */
    if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
        return NULL;
    c->kind = PLACE_FD;
    c->root = proc;
    c->what = what;
    if (forbidden(c, proc, &st))
        return c->why;
    mncd_wtaint t;
    if (read_labels(c->d, proc, true, &t) >= 0 && take(c, proc, &t))
        return c->why;
    ssize_t n = readlink(proc, target, sizeof(target) - 1);
    struct stat ts;
    if (n <= 0 || target[0] != '/')
        return NULL;
    target[n] = 0;
    if (stat(target, &ts) != 0 || ts.st_dev != st.st_dev || ts.st_ino != st.st_ino)
        return NULL; /* its path no longer names it (deleted, moved): its own label is all */
    snprintf(what, sizeof(what), "fd %d passed in", fdn);
    const char *why = place(c, PLACE_FD, target, what);
    return why;
}

const char *mncd_labels_register(mncd *d, int agent, pid_t caller, const mncd_reg *reg, const cJSON *reads,
                                 const cJSON *fds, mncd_labels *out, char *why, size_t n)
{
    memset(out, 0, sizeof(*out));
    decide_ctx c = {.d = d, .agent = agent, .reg = reg, .out = out, .whybuf = why, .whyn = n};
    struct stat sst;
    if (stat(d->cfg.state_dir, &sst) == 0) {
        c.state_dev = sst.st_dev;
        c.state_ino = sst.st_ino;
    }
    int r = mnts_load(&c.mt);
    if (r) {
        snprintf(why, n, "reading the mount table: %s", strerror(-r));
        return why;
    }
    /* what live tainted instances wrote since their last seal counts too (a hard link or bind
     * mount of it can only be met through a read grant or an inherited file or directory: a
     * workspace overlapping a live one of another agent is refused, and one of the same agent
     * shares its taint) */
    bool any = reg->n_rd > 0;
    const cJSON *farr = cJSON_IsArray(fds) ? fds : NULL, *fit;
    (void)reads; /* kl_reg_from_request resolved them into reg->rd */
    cJSON_ArrayForEach(fit, farr)
    {
        char proc[64];
        struct stat fst;
        snprintf(proc, sizeof(proc), "/proc/%d/fd/%d", (int)caller, cJSON_IsNumber(fit) ? (int)fit->valuedouble : -1);
        any = any || (caller > 0 && stat(proc, &fst) == 0 && (S_ISREG(fst.st_mode) || S_ISDIR(fst.st_mode)));
    }
    if (any && (r = mncd_labels_seal_live(d, why, n)) != 0) {
        mnts_free(&c.mt);
        return why;
    }
    const char *res = NULL;
    for (int i = 0; !res && i < reg->n_rd; i++) {
        char what[PATH_MAX + 32];
        snprintf(what, sizeof(what), "read grant %.4000s", reg->rd[i]);
        res = place(&c, PLACE_GRANT, reg->rd[i], what);
    }
    for (int i = 0; !res && i < reg->n_ws; i++) {
        char what[PATH_MAX + 32];
        snprintf(what, sizeof(what), "workspace %.4000s", reg->ws[i]);
        res = place(&c, PLACE_WS, reg->ws[i], what);
    }
    if (!res && fds) {
        if (!cJSON_IsArray(fds) || cJSON_GetArraySize(fds) > MNCD_MAX_FDS) {
            snprintf(why, n, "\"fds\" must be an array of at most %d fd numbers", MNCD_MAX_FDS);
            res = why;
        }
        const cJSON *it;
        cJSON_ArrayForEach(it, fds)
        {
            if (res)
                break;
            if (!cJSON_IsNumber(it) || it->valuedouble < 0 || it->valuedouble > 1048576 ||
                it->valuedouble != (double)(int)it->valuedouble) {
                snprintf(why, n, "\"fds\" must be an array of fd numbers");
                res = why;
                break;
            }
            if (caller <= 0) {
                snprintf(why, n, "the caller's fds cannot be inspected (no pid)");
                res = why;
                break;
            }
            res = fd_place(&c, caller, (int)it->valuedouble);
        }
    }
    out->walked = c.walked;
    mnts_free(&c.mt);
    if (res)
        mncd_labels_free(out);
    return res;
}

/* ---- the workspaces that ever carried a record: STATE_DIR/labelled, one realpath a line.
 * A start seals them again: files a tainted instance wrote before an exit mncd did not see (it
 * was down) get their labels then. */

#define NOTED_MAX 65536
static char **noted;
static int n_noted;

static bool is_noted(const char *ws)
{
    for (int i = 0; i < n_noted; i++)
        if (strcmp(noted[i], ws) == 0)
            return true;
    return false;
}

static int remember(const char *ws)
{
    if (is_noted(ws))
        return 0;
    if (n_noted >= NOTED_MAX)
        return -ENOSPC;
    char **nn = realloc(noted, (size_t)(n_noted + 1) * sizeof(*nn));
    char *dup = nn ? strdup(ws) : NULL;
    if (nn)
        noted = nn;
    if (!dup)
        return -ENOMEM;
    noted[n_noted++] = dup;
    return 1;
}

int mncd_labels_note(mncd *d, const char *ws)
{
    int r = remember(ws);
    if (r <= 0)
        return r;
    char p[PATH_MAX + 32];
    snprintf(p, sizeof(p), "%s/labelled", d->cfg.state_dir);
    int fd = open(p, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0)
        return -errno;
    size_t l = strlen(ws);
    int rc = write(fd, ws, l) == (ssize_t)l && write(fd, "\n", 1) == 1 ? 0 : -EIO;
    close(fd);
    return rc;
}

int mncd_labels_start(mncd *d)
{
    char p[PATH_MAX + 32], tmp[PATH_MAX + 40];
    snprintf(p, sizeof(p), "%s/labelled", d->cfg.state_dir);
    snprintf(tmp, sizeof(tmp), "%s.tmp", p);
    FILE *f = fopen(p, "re");
    if (!f)
        return errno == ENOENT ? 0 : -errno;
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    while ((n = getline(&line, &cap, f)) > 0) {
        if (line[n - 1] == '\n')
            line[n - 1] = 0;
        if (line[0] == '/')
            remember(line);
    }
    free(line);
    fclose(f);
    /* seal each that still carries a record; keep only those */
    int out = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
    int kept = 0, sealed = 0;
    for (int i = 0; i < n_noted; i++) {
        mncd_wtaint rec;
        if (mncd_ws_read(noted[i], d->policy, &rec) != 0 || !rec.tainted) {
            free(noted[i]);
            noted[i] = NULL;
            continue;
        }
        char why[700], det[PATH_MAX + 800];
        if (mncd_labels_seal(d, noted[i], &rec, NULL, why, sizeof(why)) != 0) {
            snprintf(det, sizeof(det), "workspace %.3000s: labelling its files at start failed: %s", noted[i], why);
            mncd_audit_named(d, "workspace.taint", NULL, NULL, NULL, "error", "internal", det);
        } else {
            sealed++;
        }
        if (out >= 0 && (write(out, noted[i], strlen(noted[i])) < 0 || write(out, "\n", 1) < 0)) {
            close(out);
            out = -1;
        }
        noted[kept++] = noted[i];
    }
    n_noted = kept;
    if (out >= 0 && (fsync(out) != 0 || close(out) != 0 || rename(tmp, p) != 0))
        unlink(tmp);
    if (kept) {
        char det[160];
        snprintf(det, sizeof(det), "%d tainted workspace(s) known; %d labelled anew at start", kept, sealed);
        mncd_audit_named(d, "workspace.taint", NULL, NULL, NULL, "allow", "ok", det);
    }
    return 0;
}
