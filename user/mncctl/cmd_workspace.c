// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* cmd_workspace.c - `mncctl workspace show DIR` and `mncctl workspace clear DIR` (admin).
 *
 * A workspace directory written by a tainted agent instance carries that taint in its
 * trusted.mnc.taint extended attribute (user/mncd/wstaint.h, docs/kernel.md "Workspace taint"):
 * the next instance on it, or on a directory inside it, starts with that taint.
 *
 * show reads the attribute directly (of DIR, of each ancestor, since a tainted parent covers
 * its children, and of each directory inside DIR that carries one) and prints it; exit 0 whether or not a record exists, 1 if it cannot be read.
 * trusted.* attributes are invisible without CAP_SYS_ADMIN (getxattr says "no such
 * attribute"), so show refuses to run without it rather than report "no taint" wrongly.
 * clear goes through mncd (admin verb workspace.clear): mncd refuses while a live instance's
 * workspace overlaps DIR, and audits the removed value.
 */
#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <linux/magic.h>
#include <unistd.h>

#include "mnc_kern.h"
#include "mncctl.h"
#include "mnc_util.h"
#include "workspace.h"

int mncctl_call_print(const mncctl_global *g, cJSON *req); /* cmd_client.c */

#define U_WORKSPACE "workspace show DIR | workspace clear DIR   (show: root; clear: admin, through mncd)"
#define WS_XATTR "trusted.mnc.taint"

/* CAP_SYS_ADMIN (bit 21) in the effective set, from /proc/self/status. */
static bool have_sys_admin(void)
{
    FILE *f = fopen("/proc/self/status", "re");
    char line[256];
    bool yes = false;
    while (f && fgets(line, sizeof(line), f))
        if (strncmp(line, "CapEff:", 7) == 0) {
            unsigned long long caps = strtoull(line + 7, NULL, 16);
            yes = (caps >> 21) & 1;
            break;
        }
    if (f)
        fclose(f);
    return yes;
}

/* dir's record: 1 (value in buf), 0 none, -1 after printing why (dir shown as mnc_ws_shown
 * does below root, if root is not NULL). */
static int read_one(const char *root, const char *dir, char *buf, size_t n)
{
    ssize_t r = getxattr(dir, WS_XATTR, buf, n - 1);
    if (r >= 0) {
        buf[r] = 0;
        return 1;
    }
    if (errno == ENODATA || errno == EOPNOTSUPP)
        return 0;
    int e = errno;
    char sh[PATH_MAX + 64];
    char *const roots[1] = {(char *)root};
    mncctl_err("workspace show: %s: %s", root ? mnc_ws_shown(dir, roots, 1, sh, sizeof(sh)) : dir, strerror(e));
    return -1;
}

/* ---- the walk for agent.register's "tainted_dirs" (workspace.h) */

static cJSON *walk_arr;
static const char *walk_root;
static char walk_err[PATH_MAX + 128];

/* walk_err's text for path (below walk_root: shown by inode) */
static void walk_fail(const char *path, const char *why)
{
    char sh[PATH_MAX + 64];
    char *const roots[1] = {(char *)walk_root};
    snprintf(walk_err, sizeof(walk_err), "%s: %s", mnc_ws_shown(path, roots, 1, sh, sizeof(sh)), why);
}

static int walk_one(const char *path, const struct stat *sb, int type, struct FTW *ftw)
{
    (void)sb;
    struct stat gone;
    if ((type == FTW_DNR || type == FTW_NS) && lstat(path, &gone) != 0 && errno == ENOENT)
        return 0; /* removed while we walked: nothing of it to read (attack ws_show_race_name) */
    if (type == FTW_DNR || type == FTW_NS) {
        walk_fail(path, "cannot be read");
        return 1;
    }
    if (type != FTW_D || ftw->level == 0)
        return 0; /* files, symlinks (FTW_PHYS: never followed) and the workspace itself */
    char v[8];
    ssize_t r = lgetxattr(path, WS_XATTR, v, sizeof(v));
    if (r < 0 && (errno == ENODATA || errno == EOPNOTSUPP || errno == ENOENT))
        return 0; /* none, or removed while we walked */
    if (r < 0 && errno != ERANGE) {
        walk_fail(path, strerror(errno));
        return 1;
    }
    if (cJSON_GetArraySize(walk_arr) >= MNCCTL_WS_MAX_TAINTED_DIRS) {
        snprintf(walk_err, sizeof(walk_err), "more than %d tainted directories under %s", MNCCTL_WS_MAX_TAINTED_DIRS,
                 walk_root);
        return 1;
    }
    cJSON *s = cJSON_CreateString(path);
    if (!s || !cJSON_AddItemToArray(walk_arr, s)) {
        cJSON_Delete(s);
        snprintf(walk_err, sizeof(walk_err), "out of memory");
        return 1;
    }
    return 0;
}

int mncctl_ws_tainted_dirs(const char *ws, cJSON *arr)
{
    walk_arr = arr;
    walk_root = ws;
    walk_err[0] = 0;
    /* no FTW_MOUNT: a directory mounted inside the workspace is part of what the agent writes */
    int r = nftw(ws, walk_one, 32, FTW_PHYS);
    if (r != 0) {
        mncctl_err("workspace %s: taint scan failed: %s", ws, walk_err[0] ? walk_err : strerror(errno));
        return -1;
    }
    return 0;
}

static int show(const char *arg, const mncctl_global *g)
{
    if (!have_sys_admin()) {
        mncctl_err("workspace show: needs CAP_SYS_ADMIN (run as root): " WS_XATTR
                   " attributes are invisible without it");
        return 1;
    }
    char real[PATH_MAX];
    if (!realpath(arg, real)) {
        mncctl_err("workspace show: %s: %s", arg, strerror(errno));
        return 1;
    }
    cJSON *out = cJSON_CreateObject(), *anc = out ? cJSON_AddArrayToObject(out, "tainted_ancestors") : NULL;
    if (!anc || !cJSON_AddStringToObject(out, "path", real)) {
        cJSON_Delete(out);
        mncctl_err("out of memory");
        return 1;
    }
    static char buf[65536];
    int own = read_one(NULL, real, buf, sizeof(buf));
    if (own < 0) {
        cJSON_Delete(out);
        return 1;
    }
    cJSON *v = own ? cJSON_Parse(buf) : NULL;
    if (own && !v)
        cJSON_AddStringToObject(out, "taint_raw", buf); /* not valid JSON: shown as is */
    cJSON_AddItemToObject(out, "taint", v ? v : cJSON_CreateNull());
    if (!g->json)
        printf("%s: %s%s\n", real, own ? "taint record " : "no taint record", own ? buf : "");
    char p[PATH_MAX];
    snprintf(p, sizeof(p), "%s", real);
    for (char *sl = strrchr(p, '/'); sl && !(sl == p && p[1] == 0); sl = strrchr(p, '/')) {
        if (sl == p)
            p[1] = 0;
        else
            *sl = 0;
        int r = read_one(NULL, p, buf, sizeof(buf));
        if (r < 0) {
            cJSON_Delete(out);
            return 1;
        }
        if (r == 0)
            continue;
        cJSON *a = cJSON_CreateObject();
        cJSON *av = cJSON_Parse(buf);
        if (!a || !cJSON_AddItemToArray(anc, a) || !cJSON_AddStringToObject(a, "path", p)) {
            cJSON_Delete(av);
            cJSON_Delete(out);
            mncctl_err("out of memory");
            return 1;
        }
        cJSON_AddItemToObject(a, "taint", av ? av : cJSON_CreateString(buf));
        if (!g->json)
            printf("  covered by ancestor %s: taint record %s\n", p, buf);
    }
    cJSON *desc = cJSON_AddArrayToObject(out, "tainted_inside");
    if (!desc || mncctl_ws_tainted_dirs(real, desc) != 0) {
        cJSON_Delete(out);
        return 1;
    }
    cJSON *it;
    char *const roots[1] = {real};
    cJSON_ArrayForEach(it, desc)
    {
        char sh[PATH_MAX + 64];
        int r = read_one(real, it->valuestring, buf, sizeof(buf));
        const char *shown_path = mnc_ws_shown(it->valuestring, roots, 1, sh, sizeof(sh));
        if (!g->json && r > 0)
            printf("  inside: %s: taint record %s\n", shown_path, buf);
        if (!cJSON_SetValuestring(it, shown_path)) { /* --json shows the same (names are the agent's) */
            cJSON_Delete(out);
            mncctl_err("out of memory");
            return 1;
        }
    }
    if (g->json) {
        char *s = cJSON_PrintUnformatted(out);
        if (s)
            puts(s);
        cJSON_free(s);
    }
    cJSON_Delete(out);
    return 0;
}

static int clear(const char *arg, const mncctl_global *g)
{
    char real[PATH_MAX];
    if (!realpath(arg, real)) {
        mncctl_err("workspace clear: %s: %s", arg, strerror(errno));
        return 1;
    }
    cJSON *req = cJSON_CreateObject();
    if (!req || !cJSON_AddStringToObject(req, "verb", "workspace.clear") ||
        !cJSON_AddStringToObject(req, "path", real)) {
        cJSON_Delete(req);
        mncctl_err("out of memory");
        return 1;
    }
    return mncctl_call_print(g, req);
}

static int c_workspace(int argc, char **argv, const mncctl_global *g)
{
    if (argc == 3 && !strcmp(argv[1], "show"))
        return show(argv[2], g);
    if (argc == 3 && !strcmp(argv[1], "clear"))
        return clear(argv[2], g);
    mncctl_err("usage: mncctl %s", U_WORKSPACE);
    return 2;
}

MNCCTL_COMMAND(cmd_workspace, "workspace", U_WORKSPACE, c_workspace)

/* ---- the launcher giving the workspaces to the agent (workspace.h, mncctl_ws_give) */

#define GIVE_WALK_LIMIT 200000 /* entries per workspace */
#define GIVE_MAX_DEPTH 256     /* directory levels (one fd each while the walk is below) */
#define GIVE_MAX_INST 32       /* other live instances remembered (their pids are not outsiders) */

struct ws_key {
    uint64_t dev, ino; /* dev in the kernel's encoding (major << 20 | minor), as fdinfo's sdev */
    int ws;            /* index of the workspace */
    bool fresh;        /* an inode this launch made (fresh_dir, fresh_file): nobody held it before */
};

typedef struct {
    mnc_kern *k;
    uid_t uid; /* the agent's (0 --as-root); its gid has the same number */
    bool check_open;
    const char *ws;
    int ws_idx;
    char path[PATH_MAX];        /* the entry being handled (never printed below the top: shown()) */
    unsigned long long cur_ino; /* its inode once known, else 0 */
    char shown[PATH_MAX + 64];
    long count;
    struct ws_key *keys;
    size_t nkeys, capkeys;
    cJSON *tainted; /* agent.register's "tainted_dirs", or NULL */
} give_ctx;

static uint64_t kdev(dev_t d) { return ((uint64_t)major(d) << 20) | minor(d); }

/* The entry being handled as messages show it: the workspace's top as given, anything below it
 * by inode only. Names inside a workspace are written by the agent, and the launcher's stderr is
 * not governed by the stdio relay: a name quoted there would carry what a tainted agent chose to
 * the next launch's operator or log collector (attack ws_launcher_msg). `find WS -inum N`
 * finds the entry. */
static const char *shown(give_ctx *c)
{
    size_t wl = strlen(c->ws);
    if (strncmp(c->path, c->ws, wl) != 0 || c->path[wl] == 0)
        return c->path;
    if (c->cur_ino)
        snprintf(c->shown, sizeof(c->shown), "%s/<entry, inode %llu>", c->ws, c->cur_ino);
    else
        snprintf(c->shown, sizeof(c->shown), "%s/<an entry>", c->ws);
    return c->shown;
}

static int give_refuse(const give_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int give_refuse(const give_ctx *c, const char *fmt, ...)
{
    char why[PATH_MAX + 256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof(why), fmt, ap);
    va_end(ap);
    mncctl_err("run refused: workspace %s: %s", c->ws, why);
    return -1;
}

static int add_key(give_ctx *c, const struct stat *st)
{
    if (c->nkeys == c->capkeys) {
        size_t cap = c->capkeys ? c->capkeys * 2 : 1024;
        struct ws_key *n = realloc(c->keys, cap * sizeof(*n));
        if (!n)
            return give_refuse(c, "out of memory");
        c->keys = n;
        c->capkeys = cap;
    }
    c->keys[c->nkeys++] = (struct ws_key){kdev(st->st_dev), st->st_ino, c->ws_idx, false};
    return 0;
}

/* The mode an entry gets: no bits for others, the owner's bits also for the group (the agent
 * reaches root-owned entries through its group), no setuid/setgid/sticky. */
static mode_t given_mode(mode_t m) { return (m & 0770) | ((m & 0700) >> 3); }

/* Owner, ACLs and mode of the open fd (a directory or a regular file, or an O_PATH fd of a FIFO
 * or socket: then through /proc/self/fd). st is its fstat. The owner is root, not the agent: an
 * owner may chmod, and an agent that owned a directory an outsider had bind-mounted (or a file
 * it had hard-linked, or held by O_PATH) before the launch could open it again with chmod
 * (--as-root agents have no chmod, run_confine.c). A FIFO the agent made keeps its uid (the
 * FIFO rule above: only the agent's own FIFOs are accepted). 0; 1 if the entry is on a read-only
 * mount (left as is: the agent cannot write there either, so nothing of its reaches a holder);
 * -1 after printing why the launch is refused. */
/* Whether an entry below the top keeps the agent as its owner: a directory or a single-linked
 * regular file the agent itself made (owned by its uid), on a walk that gives every such entry a
 * fresh inode (check_open: fresh_dir, and fresh_file for every one of them), so that whatever
 * anyone kept from before the launch (a directory fd, an O_PATH fd, even one parked in flight in
 * a socket queue where no scan finds it) refers to the old, unlinked inode, which the agent no
 * longer reaches and so cannot chmod open. Keeping the owner is what lets git (its "dubious
 * ownership" check), chmod, touch -d and cp -p work on a workspace reused across launches. A
 * file with other hard links cannot get a fresh copy: root's, as every other entry. */
static bool keeps_agent_owner(const give_ctx *c, const struct stat *st, bool top)
{
    return !top && c->check_open && c->uid != 0 && st->st_uid == c->uid &&
           (S_ISDIR(st->st_mode) || (S_ISREG(st->st_mode) && st->st_nlink == 1));
}

static int normalise(give_ctx *c, int fd, const struct stat *st, bool top)
{
    bool opath = !S_ISDIR(st->st_mode) && !S_ISREG(st->st_mode);
    char proc[64];
    snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
    uid_t own = S_ISFIFO(st->st_mode) || keeps_agent_owner(c, st, top) ? st->st_uid : 0;
    bool chown_it = st->st_uid != own || st->st_gid != c->uid;
    if (chown_it && fchownat(fd, "", own, c->uid, AT_EMPTY_PATH) != 0) {
        if (errno == EROFS) /* a read-only mount: nothing the agent writes can land there */
            return 1;
        return give_refuse(c, "%s: chown to %u:%u: %s", shown(c), (unsigned)own, (unsigned)c->uid, strerror(errno));
    }
    /* POSIX ACLs: a named-user entry would let an outsider in whatever the mode */
    const char *acl[2] = {"system.posix_acl_access", "system.posix_acl_default"};
    for (int i = 0; i < (S_ISDIR(st->st_mode) ? 2 : 1); i++) {
        /* looked up first: a removal starts a journal transaction even when there is nothing */
        ssize_t has = opath ? getxattr(proc, acl[i], NULL, 0) : fgetxattr(fd, acl[i], NULL, 0);
        if (has < 0 && (errno == ENODATA || errno == EOPNOTSUPP))
            continue;
        int r = opath ? removexattr(proc, acl[i]) : fremovexattr(fd, acl[i]);
        if (r != 0 && errno == EROFS)
            return 1;
        if (r != 0 && errno != ENODATA && errno != EOPNOTSUPP)
            return give_refuse(c, "%s: remove %s: %s", shown(c), acl[i], strerror(errno));
    }
    mode_t want = top ? (c->uid ? 0770 : 0700) : given_mode(st->st_mode);
    /* a chown may have cleared setuid/setgid: set the mode then, and whenever it differs */
    if ((chown_it || (st->st_mode & 07777) != want) && (opath ? chmod(proc, want) : fchmod(fd, want)) != 0) {
        if (errno == EROFS)
            return 1;
        return give_refuse(c, "%s: chmod %04o: %s", shown(c), (unsigned)want, strerror(errno));
    }
    return 0;
}

/* The checks every entry passes (formerly check_workspace's walk): no device node, no FIFO
 * someone else made (it may be open for reading outside already), no registered log or memory
 * sink (by (dev, ino), so hard links are found). st is the entry's own stat, before it is
 * normalised (the FIFO's owner is the one who made it). */
static int entry_checks(give_ctx *c, const struct stat *st)
{
    c->cur_ino = st->st_ino;
    if (++c->count > GIVE_WALK_LIMIT)
        return give_refuse(c, "too many entries to verify (limit %d)", GIVE_WALK_LIMIT);
    if ((S_ISFIFO(st->st_mode) && st->st_uid != c->uid) || S_ISCHR(st->st_mode) || S_ISBLK(st->st_mode))
        return give_refuse(c, "%s: %s: refused",
                           S_ISFIFO(st->st_mode) ? "holds a FIFO the agent did not create" : "holds a device node",
                           shown(c));
    struct mnc_file_key k = {.dev = kdev(st->st_dev), .ino = st->st_ino};
    struct mnc_sink s;
    if (c->k && mnc_kern_sink_file_lookup(c->k, &k, &s) == 0 && (s.cls == MNC_SINK_LOG || s.cls == MNC_SINK_MEMORY))
        return give_refuse(c, "contains a registered %s sink: %s", s.cls == MNC_SINK_LOG ? "log" : "memory", shown(c));
    return add_key(c, st);
}

/* Whether a regular file's page-cache pages may be referenced from outside (fd, with the write
 * lease held: nobody else has it open or mapped). splice, vmsplice of a mapping and sendfile
 * leave references to a file's pages, not copies, in a pipe or socket buffer; a page the agent
 * later writes in place is read there as it is then (attack workspace_page_prelaunch), with no
 * open file left to find. On a disk filesystem dirty pages are written back and the cache is
 * dropped (POSIX_FADV_DONTNEED): the kernel keeps a page only while something else holds a
 * reference to it, so a page still resident (mincore, over windows of a private read-only
 * mapping) is held by someone's buffer. tmpfs and ramfs pages are the file itself and cannot be
 * dropped. 0: none can be; 1: the file needs a fresh inode (fresh_file); -1 after printing why.
 * The cost: a file's pages are read from disk again after the launch. */
#define GIVE_PAGE_WINDOW (64u << 20)
static int pages_maybe_shared(give_ctx *c, int fd, const struct stat *st)
{
    struct statfs sf;
    if (fstatfs(fd, &sf) != 0)
        return give_refuse(c, "%s: fstatfs: %s", shown(c), strerror(errno));
    if (sf.f_type == TMPFS_MAGIC || sf.f_type == RAMFS_MAGIC)
        return st->st_size > 0;
    if (st->st_size == 0)
        return 0;
    if (sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER) !=
        0)
        return give_refuse(c, "%s: sync_file_range: %s", shown(c), strerror(errno));
    int e = posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    if (e != 0)
        return give_refuse(c, "%s: posix_fadvise(DONTNEED): %s", shown(c), strerror(e));
    long pg = sysconf(_SC_PAGESIZE);
    static unsigned char vec[GIVE_PAGE_WINDOW / 4096];
    if (pg < 4096)
        return give_refuse(c, "page size %ld below 4096", pg);
    for (off_t off = 0; off < st->st_size; off += GIVE_PAGE_WINDOW) {
        off_t left = st->st_size - off;
        size_t len = left < (off_t)GIVE_PAGE_WINDOW ? (size_t)left : GIVE_PAGE_WINDOW;
        void *m = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, off);
        if (m == MAP_FAILED)
            return give_refuse(c, "%s: mmap for mincore: %s", shown(c), strerror(errno));
        int r = mincore(m, len, vec);
        int me = errno;
        munmap(m, len);
        if (r != 0)
            return give_refuse(c, "%s: mincore: %s", shown(c), strerror(me));
        for (size_t i = 0; i < (len + (size_t)pg - 1) / (size_t)pg; i++)
            if (vec[i] & 1)
                return 1;
    }
    return 0;
}

static int copy_xattrs(give_ctx *c, int from, int to);

/* The workspace's inode keys (check_marks) name the entry's fresh inode (nfd), not the removed
 * one (old). */
static void rekey(give_ctx *c, const struct stat *old, int nfd)
{
    struct stat nst;
    if (fstat(nfd, &nst) == 0)
        for (size_t i = c->nkeys; i-- > 0;)
            if (c->keys[i].ino == old->st_ino && c->keys[i].dev == kdev(old->st_dev)) {
                c->keys[i].ino = nst.st_ino;
                c->keys[i].fresh = true;
                break;
            }
}

/* Gives the regular file `name` of the directory parent (fd, st as normalised) a fresh inode:
 * a copy (data, owner, mode, extended attributes, access and modification times) made under a
 * temporary name and renamed over it, so that page references anyone kept point into the old
 * inode's pages, which no name reaches any more. Nothing half-done: the old file stays until
 * the rename, the copy is removed if a step fails. A file with other hard links is refused (a
 * copy would split it). 0, or -1 after printing why. */
static int fresh_file(give_ctx *c, int parent, const char *name, int fd, const struct stat *st)
{
    if (st->st_nlink > 1)
        return give_refuse(c,
                           "%s: its pages may be held outside (a pipe or socket buffer that spliced it before the "
                           "launch) and it has %lu hard links, so it cannot be given a fresh copy; remove the "
                           "other links and launch again",
                           shown(c), (unsigned long)st->st_nlink);
    static unsigned long seq;
    char tmp[64];
    snprintf(tmp, sizeof(tmp), ".mnc-fresh-file.%d.%lu", (int)getpid(), seq++);
    int nfd = openat(parent, tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (nfd < 0)
        return give_refuse(c, "%s: creating its fresh copy: %s", shown(c), strerror(errno));
    const char *step = "chown";
    bool ok = fchown(nfd, st->st_uid, st->st_gid) == 0 && (step = "chmod", fchmod(nfd, st->st_mode & 07777) == 0);
    loff_t in = 0;
    while (ok && in < st->st_size) {
        ssize_t n = copy_file_range(fd, &in, nfd, NULL, (size_t)(st->st_size - in), 0);
        if (n <= 0) {
            step = n == 0 ? "copy (the file shrank)" : "copy_file_range";
            ok = false;
        }
    }
    struct timespec ts[2] = {st->st_atim, st->st_mtim};
    if (ok && !(step = "futimens", futimens(nfd, ts) == 0))
        ok = false;
    if (ok && !(step = "fsync", fsync(nfd) == 0))
        ok = false;
    int e = errno;
    if (ok && copy_xattrs(c, fd, nfd) != 0) { /* says why itself */
        close(nfd);
        unlinkat(parent, tmp, 0);
        return -1;
    }
    if (ok && !(step = "rename", renameat(parent, tmp, parent, name) == 0)) {
        ok = false;
        e = errno;
    }
    if (!ok) {
        close(nfd);
        unlinkat(parent, tmp, 0);
        return give_refuse(c, "%s: making its fresh copy (%s): %s", shown(c), step, strerror(e));
    }
    rekey(c, st, nfd);
    close(nfd);
    return 0;
}

/* A regular file nobody else has open: the kernel grants a write lease only if no other open
 * file description of the inode exists (fd tables, mappings, fds in flight in socket queues,
 * an executable being run all count; O_PATH fds do not, and cannot read). */
static int check_not_open(give_ctx *c, int parent, const char *name, int fd)
{
    if (!c->check_open)
        return 0;
    if (fcntl(fd, F_SETLEASE, F_WRLCK) != 0) {
        if (errno == EAGAIN)
            return give_refuse(c,
                               "%s is open elsewhere (an fd, a mapping or a socket queue): a process that opened "
                               "it before the launch could read what the agent writes; close it (fuser/lsof find "
                               "fds and mappings, not fds in flight) and launch again",
                               shown(c));
        return give_refuse(c, "%s: cannot check whether it is open elsewhere (F_SETLEASE: %s)", shown(c),
                           strerror(errno));
    }
    struct stat st; /* as normalised */
    int rc = fstat(fd, &st) != 0                  ? give_refuse(c, "%s: fstat: %s", shown(c), strerror(errno))
             : st.st_uid == c->uid && c->uid != 0 ? 1 /* the agent's own: a fresh inode (keeps_agent_owner) */
                                                  : pages_maybe_shared(c, fd, &st);
    if (rc == 1)
        rc = fresh_file(c, parent, name, fd, &st);
    if (fcntl(fd, F_SETLEASE, F_UNLCK) != 0)
        return give_refuse(c, "%s: F_SETLEASE F_UNLCK: %s", shown(c), strerror(errno));
    return rc;
}

/* A directory inside the workspace (fd) that carries a trusted.mnc.taint record: its path goes
 * to agent.register's "tainted_dirs", as mncctl_ws_tainted_dirs would find it (mncd re-reads
 * each record itself). */
static int tainted_dir(give_ctx *c, int fd)
{
    char v[8];
    ssize_t r = fgetxattr(fd, WS_XATTR, v, sizeof(v));
    if (r < 0 && (errno == ENODATA || errno == EOPNOTSUPP))
        return 0;
    if (r < 0 && errno != ERANGE)
        return give_refuse(c, "%s: %s: %s", shown(c), WS_XATTR, strerror(errno));
    if (cJSON_GetArraySize(c->tainted) >= MNCCTL_WS_MAX_TAINTED_DIRS)
        return give_refuse(c, "more than %d tainted directories", MNCCTL_WS_MAX_TAINTED_DIRS);
    cJSON *str = cJSON_CreateString(c->path);
    if (!str || !cJSON_AddItemToArray(c->tainted, str)) {
        cJSON_Delete(str);
        return give_refuse(c, "out of memory");
    }
    return 0;
}

/* Copies the extended attributes of from to to (fds), except POSIX ACLs (removed anyway). 0 or
 * -1 after printing why. */
static int copy_xattrs(give_ctx *c, int from, int to)
{
    char names[8192], val[4096];
    ssize_t n = flistxattr(from, names, sizeof(names));
    if (n < 0)
        return errno == ENOTSUP ? 0 : give_refuse(c, "%s: listxattr: %s", shown(c), strerror(errno));
    for (char *a = names; a < names + n; a += strlen(a) + 1) {
        if (!strncmp(a, "system.posix_acl_", 17))
            continue;
        ssize_t v = fgetxattr(from, a, val, sizeof(val));
        if (v < 0 || fsetxattr(to, a, val, (size_t)v, 0) != 0)
            return give_refuse(c, "%s: copying xattr %s: %s", shown(c), a, strerror(errno));
    }
    return 0;
}

/* Renames every entry of the directory from into the directory to (fds). The read position of
 * from is shared with the stream used here (a dup): it is rewound before and after, so a walk
 * that goes on with from lists every entry. 0, or -1 with errno. */
static int move_entries(int from, int to)
{
    int dfd = dup(from);
    DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
    if (!d) {
        int e = errno;
        if (dfd >= 0)
            close(dfd);
        errno = e;
        return -1;
    }
    rewinddir(d);
    int rc = 0;
    struct dirent *e;
    while (rc == 0 && (e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            rc = renameat(from, e->d_name, to, e->d_name);
    int err = errno;
    closedir(d);
    if (lseek(from, 0, SEEK_SET) != 0 && rc == 0) {
        err = errno;
        rc = -1;
    }
    errno = err;
    return rc;
}

/* A fresh inode for the directory `name` of parent (fd the open, normalised old one, st its
 * fstat): a new directory with the same owner, mode and xattrs receives every entry of the old
 * one (rename), the two are exchanged atomically (RENAME_EXCHANGE) and the old, empty one is
 * removed. Whatever referred to the old directory before the launch (a directory fd or an
 * inotify watch, even one parked in flight in a socket queue where no scan finds it; a cwd; a
 * bind mount) now refers to a deleted, empty directory. A directory that cannot be exchanged (a
 * mount point: EBUSY, EXDEV) keeps its inode and the walk goes on with it (docs/kernel.md).
 * Returns the fd to walk (the new directory, or fd itself), or -1 after printing why (fd is
 * closed then). */
static int fresh_dir(give_ctx *c, int parent, const char *name, int fd)
{
    struct stat stbuf, *st = &stbuf; /* as normalised */
    if (fstat(fd, st) != 0) {
        close(fd);
        return give_refuse(c, "%s: fstat: %s", shown(c), strerror(errno));
    }
    static unsigned long seq;
    char tmp[64];
    snprintf(tmp, sizeof(tmp), ".mnc-fresh.%d.%lu", (int)getpid(), seq++);
    if (mkdirat(parent, tmp, 0700) != 0) {
        if (errno == EROFS)
            return fd;
        close(fd);
        return give_refuse(c, "%s: mkdir of its fresh copy: %s", shown(c), strerror(errno));
    }
    int nfd = openat(parent, tmp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    bool made = nfd >= 0 && fchown(nfd, st->st_uid, st->st_gid) == 0 && fchmod(nfd, st->st_mode & 07777) == 0;
    int e = errno;
    if (!made || copy_xattrs(c, fd, nfd) != 0) { /* copy_xattrs says why itself */
        if (nfd >= 0)
            close(nfd);
        unlinkat(parent, tmp, AT_REMOVEDIR);
        close(fd);
        return made ? -1 : give_refuse(c, "%s: preparing its fresh copy: %s", shown(c), strerror(e));
    }
    int rc = move_entries(fd, nfd);
    int err = errno;
    if (rc == 0 && renameat2(parent, name, parent, tmp, RENAME_EXCHANGE) != 0) {
        err = errno;
        rc = -1;
    }
    if (rc != 0) {
        /* nothing half-done: every entry goes back to the old directory, the new one goes */
        int back = move_entries(nfd, fd);
        close(nfd);
        unlinkat(parent, tmp, AT_REMOVEDIR);
        if (back == 0 && (err == EBUSY || err == EXDEV))
            return fd; /* it is, or holds, a mount point: it keeps its inode */
        close(fd);
        if (back != 0)
            return give_refuse(c,
                               "%s: moving its entries into a fresh directory failed (%s), and moving them back "
                               "failed too: some are in %s next to it",
                               shown(c), strerror(err), tmp);
        return give_refuse(c, "%s: moving its entries into a fresh directory: %s", shown(c), strerror(err));
    }
    close(fd);
    if (unlinkat(parent, tmp, AT_REMOVEDIR) != 0) {
        close(nfd);
        return give_refuse(c, "%s: removing the old directory %s: %s", shown(c), tmp, strerror(errno));
    }
    rekey(c, st, nfd);
    return nfd;
}

static int give_dir(give_ctx *c, int dfd, size_t plen, int depth);

/* One entry `name` of the directory dfd (already normalised: no outsider can add, remove or
 * swap entries in it any more). */
static int give_entry(give_ctx *c, int dfd, const char *name, unsigned char dtype, size_t plen, int depth)
{
    int n = snprintf(c->path + plen, sizeof(c->path) - plen, "/%s", name);
    c->cur_ino = 0;
    if (n < 0 || (size_t)n >= sizeof(c->path) - plen)
        return give_refuse(c, "a path inside it is too long");
    size_t nlen = plen + (size_t)n;
    struct stat st;
    if (dtype == DT_UNKNOWN) { /* the filesystem does not say: stat it */
        if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
            return give_refuse(c, "%s: %s", shown(c), strerror(errno));
        dtype = S_ISDIR(st.st_mode) ? DT_DIR : S_ISREG(st.st_mode) ? DT_REG : S_ISLNK(st.st_mode) ? DT_LNK : DT_FIFO;
    }
    int fd = -1, rc = -1;
    if (dtype == DT_LNK) { /* a symlink is never followed; its owner only */
        if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
            return give_refuse(c, "%s: %s", shown(c), strerror(errno));
        if (!S_ISLNK(st.st_mode)) /* changed since readdir: only the agent's own instances can */
            return give_refuse(c, "%s changed during the walk", shown(c));
        if (entry_checks(c, &st) != 0)
            return -1;
        if ((st.st_uid != 0 || st.st_gid != c->uid) && fchownat(dfd, name, 0, c->uid, AT_SYMLINK_NOFOLLOW) != 0)
            return give_refuse(c, "%s: lchown: %s", shown(c), strerror(errno));
        return 0;
    }
    if (dtype == DT_DIR)
        fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    else if (dtype == DT_REG)
        fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_NOATIME | O_CLOEXEC);
    else /* FIFO, socket, device: never opened for I/O */
        fd = openat(dfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return give_refuse(c, "%s cannot be read: %s", shown(c), strerror(errno));
    if (fstat(fd, &st) != 0) {
        give_refuse(c, "%s: fstat: %s", shown(c), strerror(errno));
        goto out;
    }
    c->cur_ino = st.st_ino;
    if ((dtype == DT_DIR) != S_ISDIR(st.st_mode) || (dtype == DT_REG) != S_ISREG(st.st_mode)) {
        give_refuse(c, "%s changed during the walk", shown(c));
        goto out;
    }
    int nr = entry_checks(c, &st) != 0 ? -1 : normalise(c, fd, &st, false);
    if (nr < 0)
        goto out;
    if (S_ISDIR(st.st_mode) && c->tainted && tainted_dir(c, fd) != 0)
        goto out;
    if (S_ISDIR(st.st_mode)) {
        if (depth + 1 > GIVE_MAX_DEPTH) {
            give_refuse(c, "%s: more than %d levels deep", shown(c), GIVE_MAX_DEPTH);
            goto out;
        }
        if (c->check_open && nr == 0 && (fd = fresh_dir(c, dfd, name, fd)) < 0)
            goto out;
        rc = give_dir(c, fd, nlen, depth + 1); /* takes fd */
        fd = -1;
        goto out;
    }
    if (S_ISREG(st.st_mode) && nr == 0 && check_not_open(c, dfd, name, fd) != 0)
        goto out;
    rc = 0;
out:
    if (fd >= 0)
        close(fd);
    c->path[plen] = 0;
    return rc;
}

/* The entries of dfd (normalised already), each after its directory: whoever reached a
 * directory before the launch (a bind mount, a directory fd, a cwd) has lost the right to add
 * or rename entries before they are listed. Takes dfd. */
static int give_dir(give_ctx *c, int dfd, size_t plen, int depth)
{
    DIR *d = fdopendir(dfd);
    if (!d) {
        close(dfd);
        return give_refuse(c, "%s: %s", shown(c), strerror(errno));
    }
    int rc = 0;
    struct dirent *e;
    errno = 0;
    while (rc == 0 && (e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        rc = give_entry(c, dirfd(d), e->d_name, e->d_type, plen, depth);
        errno = 0;
    }
    if (rc == 0 && errno != 0)
        rc = give_refuse(c, "%s: readdir: %s", shown(c), strerror(errno));
    closedir(d);
    return rc;
}

/* ---- other live instances of the agent, and the outsiders' inotify/fanotify marks */

/* Live instances of `agent` other than the launcher's own: cgroup directories
 * <tree>/<agent>.<pid> that have processes (cgroup.events "populated 1"), the cgroups mncd
 * watches (user/mncd/kern_watch.c). Their paths go to inst (up to GIVE_MAX_INST); returns how
 * many exist, or -1 after printing why the tree cannot be read. */
static int live_instances(const char *tree, const char *agent, char (*inst)[PATH_MAX])
{
    DIR *d = opendir(tree);
    if (!d) {
        mncctl_err("run refused: cannot list the agents' cgroups in %s: %s", tree, strerror(errno));
        return -1;
    }
    size_t al = strlen(agent);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        const char *s = e->d_name;
        if (strncmp(s, agent, al) != 0 || s[al] != '.' || !s[al + 1] ||
            strspn(s + al + 1, "0123456789") != strlen(s + al + 1))
            continue;
        char p[PATH_MAX], buf[256];
        snprintf(p, sizeof(p), "%s/%s/cgroup.events", tree, s);
        int fd = open(p, O_RDONLY | O_CLOEXEC);
        ssize_t r = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
        if (fd >= 0)
            close(fd);
        if (r <= 0)
            continue;
        buf[r] = 0;
        if (!strstr(buf, "populated 1"))
            continue;
        if (n < GIVE_MAX_INST)
            snprintf(inst[n], PATH_MAX, "%s/%s", tree, s);
        n++;
    }
    closedir(d);
    return n;
}

/* Is pid in one of the agent's live instances (their cgroup.procs)? */
static bool pid_in_instances(pid_t pid, char (*inst)[PATH_MAX], int ninst)
{
    for (int i = 0; i < ninst && i < GIVE_MAX_INST; i++) {
        char p[PATH_MAX + 16];
        snprintf(p, sizeof(p), "%.4080s/cgroup.procs", inst[i]);
        FILE *f = fopen(p, "re");
        long v;
        bool hit = false;
        while (f && !hit && fscanf(f, "%ld", &v) == 1)
            hit = v == (long)pid;
        if (f)
            fclose(f);
        if (hit)
            return true;
    }
    return false;
}

static int key_cmp(const void *a, const void *b)
{
    const struct ws_key *x = a, *y = b;
    if (x->dev != y->dev)
        return x->dev < y->dev ? -1 : 1;
    return x->ino < y->ino ? -1 : x->ino > y->ino;
}

/* One fdinfo file of an inotify or fanotify fd: the first mark on a workspace inode, or NULL. */
static const struct ws_key *fdinfo_hit(int pfd, const char *fdname, const struct ws_key *keys, size_t n)
{
    char p[300];
    snprintf(p, sizeof(p), "fdinfo/%s", fdname);
    int fd = openat(pfd, p, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL; /* gone */
    FILE *f = fdopen(fd, "re");
    if (!f) {
        close(fd);
        return NULL;
    }
    char line[512];
    const struct ws_key *hit = NULL;
    while (!hit && fgets(line, sizeof(line), f)) {
        /* "inotify wd:1 ino:9e7e sdev:800013 mask:..." / "fanotify ino:4f969 sdev:800013 ..."
         * (mount and filesystem marks need CAP_SYS_ADMIN: a root outsider's) */
        if (strncmp(line, "inotify wd:", 11) != 0 && strncmp(line, "fanotify ino:", 13) != 0)
            continue;
        const char *i = strstr(line, " ino:"), *s = strstr(line, " sdev:");
        if (!i || !s)
            continue;
        struct ws_key k = {strtoull(s + 6, NULL, 16), strtoull(i + 5, NULL, 16), 0, false};
        hit = bsearch(&k, keys, n, sizeof(*keys), key_cmp);
    }
    fclose(f);
    return hit;
}

/* inotify and fanotify marks, and open directory fds, of processes outside the agent's cgroups
 * on any inode of the workspaces. A mark outlives the mode change (inotify_add_watch checks read
 * access once) and reports the names of the files the agent creates; so does getdents on a
 * directory fd opened before (read access is checked at open only). Open regular files are the
 * lease's (check_not_open). Only the inodes that existed before the launch are looked for: a
 * mark or an fd taken before it cannot be on an inode the walk made fresh (fresh_dir,
 * fresh_file), and one taken during or after it is root's (only root and the agent's group reach
 * a given workspace), which no scan can keep out anyway. When every inode is fresh (a workspace
 * the agent made, relaunched) the host's fds are not read at all: the scan was the largest part
 * of a launch's cost (bench_launch). 0, or -1 after printing the first one. */
static int check_marks(give_ctx *c, char *const *ws, char (*inst)[PATH_MAX], int ninst)
{
    size_t kept = 0;
    for (size_t i = 0; i < c->nkeys; i++)
        if (!c->keys[i].fresh)
            c->keys[kept++] = c->keys[i];
    c->nkeys = kept;
    if (kept == 0)
        return 0;
    qsort(c->keys, c->nkeys, sizeof(*c->keys), key_cmp);
    DIR *proc = opendir("/proc");
    if (!proc) {
        mncctl_err("run refused: cannot read /proc to look for watches on the workspaces: %s", strerror(errno));
        return -1;
    }
    int rc = 0;
    struct dirent *e;
    while (rc == 0 && (e = readdir(proc))) {
        if (e->d_name[0] < '1' || e->d_name[0] > '9')
            continue;
        pid_t pid = (pid_t)atol(e->d_name);
        if (pid == getpid())
            continue;
        int pfd = openat(dirfd(proc), e->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (pfd < 0)
            continue; /* exited */
        int ffd = openat(pfd, "fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        DIR *fds = ffd >= 0 ? fdopendir(ffd) : NULL;
        if (!fds && ffd >= 0)
            close(ffd);
        struct dirent *f;
        while (fds && rc == 0 && (f = readdir(fds))) {
            if (f->d_name[0] == '.')
                continue;
            char l[PATH_MAX];
            ssize_t r = readlinkat(dirfd(fds), f->d_name, l, sizeof(l) - 1);
            if (r <= 0)
                continue;
            l[r] = 0;
            const struct ws_key *hit = NULL;
            bool dir = false;
            if (l[0] == '/') { /* a path: a directory fd on a workspace directory? (by (dev, ino):
                                * the path is the holder's, maybe of another mount namespace) */
                char fp[300];
                struct stat st;
                snprintf(fp, sizeof(fp), "fd/%s", f->d_name);
                if (fstatat(pfd, fp, &st, 0) != 0 || !S_ISDIR(st.st_mode))
                    continue;
                struct ws_key k = {kdev(st.st_dev), st.st_ino, 0, false};
                hit = bsearch(&k, c->keys, c->nkeys, sizeof(*c->keys), key_cmp);
                dir = true;
            } else if (!strcmp(l, "anon_inode:inotify") || !strcmp(l, "anon_inode:[fanotify]")) {
                hit = fdinfo_hit(pfd, f->d_name, c->keys, c->nkeys);
            }
            if (!hit || pid_in_instances(pid, inst, ninst))
                continue;
            /* no names from inside the workspace, and no task name (an agent's may be its own
             * choice: exec_comm): both could carry what a tainted agent wrote (shown()) */
            if (dir)
                mncctl_err("run refused: workspace %s: process %d holds a directory of it (inode %llu) open (fd "
                           "%s, opened before the launch: reading it lists the names of what the agent creates); "
                           "close it and launch again",
                           ws[hit->ws], (int)pid, (unsigned long long)hit->ino, f->d_name);
            else
                mncctl_err("run refused: workspace %s: process %d watches inode %llu of it (%s mark, fd %s, "
                           "made before the launch: it would see the names of what the agent creates); end the "
                           "watch and launch again",
                           ws[hit->ws], (int)pid, (unsigned long long)hit->ino, l + 11, f->d_name);
            rc = -1;
        }
        if (fds)
            closedir(fds);
        close(pfd);
    }
    closedir(proc);
    return rc;
}

int mncctl_ws_give(mnc_kern *k, const char *agent, char *const *ws, int n_ws, uid_t uid, cJSON *tainted)
{
    static char inst[GIVE_MAX_INST][PATH_MAX];
    int ninst = live_instances(mnc_kern_tree(k), agent, inst);
    if (ninst < 0)
        return -1;
    give_ctx c = {.k = k, .uid = uid, .tainted = tainted};
    /* a lease break (someone opening a file while the lease is held) signals SIGIO, whose
     * default action ends the launcher: ignored while the walk runs */
    struct sigaction ign = {.sa_handler = SIG_IGN}, old;
    sigemptyset(&ign.sa_mask);
    if (sigaction(SIGIO, &ign, &old) != 0) {
        mncctl_err("run: sigaction: %s", strerror(errno));
        return -1;
    }
    int rc = 0;
    for (int w = 0; rc == 0 && w < n_ws; w++) {
        c.ws = ws[w];
        c.ws_idx = w;
        c.count = 0;
        snprintf(c.path, sizeof(c.path), "%s", ws[w]);
        int fd = open(ws[w], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        struct stat st;
        if (fd < 0 || fstat(fd, &st) != 0) {
            rc = give_refuse(&c, "cannot open it: %s", strerror(errno));
            if (fd >= 0)
                close(fd);
            break;
        }
        /* Another live instance's own opens would count as "open elsewhere": the check is
         * skipped then, but only on a workspace already given to this agent (root:gid, 0770 or
         * 0700), which no outsider could enter since; a workspace given now is checked. */
        c.check_open = ninst == 0 || st.st_uid != 0 || st.st_gid != uid || (st.st_mode & 07777) != (uid ? 0770 : 0700);
        /* the top directory first: root's, the agent's group, 0770 (root: 0700), no ACL */
        if (add_key(&c, &st) != 0 || normalise(&c, fd, &st, true) < 0) {
            close(fd);
            rc = -1;
            break;
        }
        /* and a fresh inode for it, as for every directory below (fresh_dir) */
        if (c.check_open) {
            char parent[PATH_MAX];
            snprintf(parent, sizeof(parent), "%s", ws[w]);
            char *slash = strrchr(parent, '/');
            const char *base = slash ? slash + 1 : parent;
            if (slash == parent)
                parent[1] = 0;
            else if (slash)
                *slash = 0;
            char basename_[NAME_MAX + 1];
            size_t bl = strlen(base);
            if (bl > NAME_MAX) {
                close(fd);
                rc = give_refuse(&c, "its name is longer than %d bytes", NAME_MAX);
                break;
            }
            memcpy(basename_, base, bl + 1);
            int pfd = slash ? open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
            if (pfd < 0) {
                close(fd);
                rc = give_refuse(&c, "its parent directory: %s", strerror(errno));
                break;
            }
            fd = fresh_dir(&c, pfd, basename_, fd);
            close(pfd);
            if (fd < 0) {
                rc = -1;
                break;
            }
        }
        rc = give_dir(&c, fd, strlen(c.path), 0);
    }
    sigaction(SIGIO, &old, NULL);
    if (rc == 0)
        rc = check_marks(&c, ws, inst, ninst);
    free(c.keys);
    return rc;
}
