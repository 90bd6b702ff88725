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
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/xattr.h>

#include "mncctl.h"
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

/* dir's record: 1 (value in buf), 0 none, -1 after printing why. */
static int read_one(const char *dir, char *buf, size_t n)
{
    ssize_t r = getxattr(dir, WS_XATTR, buf, n - 1);
    if (r >= 0) {
        buf[r] = 0;
        return 1;
    }
    if (errno == ENODATA || errno == EOPNOTSUPP)
        return 0;
    mncctl_err("workspace show: %s: %s", dir, strerror(errno));
    return -1;
}

/* ---- the walk for agent.register's "tainted_dirs" (workspace.h) */

static cJSON *walk_arr;
static const char *walk_root;
static char walk_err[PATH_MAX + 128];

static int walk_one(const char *path, const struct stat *sb, int type, struct FTW *ftw)
{
    (void)sb;
    if (type == FTW_DNR || type == FTW_NS) {
        snprintf(walk_err, sizeof(walk_err), "%s: cannot be read", path);
        return 1;
    }
    if (type != FTW_D || ftw->level == 0)
        return 0; /* files, symlinks (FTW_PHYS: never followed) and the workspace itself */
    char v[8];
    ssize_t r = lgetxattr(path, WS_XATTR, v, sizeof(v));
    if (r < 0 && (errno == ENODATA || errno == EOPNOTSUPP))
        return 0;
    if (r < 0 && errno != ERANGE) {
        snprintf(walk_err, sizeof(walk_err), "%s: %s", path, strerror(errno));
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
    int own = read_one(real, buf, sizeof(buf));
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
        int r = read_one(p, buf, sizeof(buf));
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
    const cJSON *it;
    cJSON_ArrayForEach(it, desc)
    {
        int r = read_one(it->valuestring, buf, sizeof(buf));
        if (!g->json && r > 0)
            printf("  inside: %s: taint record %s\n", it->valuestring, buf);
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
