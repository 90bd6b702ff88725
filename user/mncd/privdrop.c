// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* privdrop.c - the monitor's and the enforcer's privilege drops (privdrop.h). Raw capget/capset
 * (linux/capability.h, version 3): libcap is not a dependency for three calls. */
#include <errno.h>
#include <grp.h>
#include <inttypes.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "privdrop.h"

int psp_user(const char *name, uid_t *uid, gid_t *gid, char *why, size_t n)
{
    errno = 0;
    struct passwd *pw = getpwnam(name);
    if (!pw) {
        snprintf(why, n,
                 "user \"%s\" (mncd's monitor runs as it) does not exist%s%s; create it with `systemd-sysusers "
                 "/usr/local/lib/sysusers.d/mncd.conf` (make install installs that file) or choose another with "
                 "--user",
                 name, errno ? ": " : "", errno ? strerror(errno) : "");
        return -1;
    }
    if (pw->pw_uid == 0 || pw->pw_gid == 0) {
        snprintf(why, n, "user \"%s\" is root (uid %u gid %u): the monitor must not run as root", name,
                 (unsigned)pw->pw_uid, (unsigned)pw->pw_gid);
        return -1;
    }
    *uid = pw->pw_uid;
    *gid = pw->pw_gid;
    return 0;
}

static int caps_get(uint64_t *eff, uint64_t *prm, uint64_t *inh)
{
    struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
    struct __user_cap_data_struct d[2];
    memset(d, 0, sizeof(d));
    if (syscall(SYS_capget, &h, d) != 0)
        return -errno;
    *eff = d[0].effective | (uint64_t)d[1].effective << 32;
    *prm = d[0].permitted | (uint64_t)d[1].permitted << 32;
    *inh = d[0].inheritable | (uint64_t)d[1].inheritable << 32;
    return 0;
}

/* Drops from the bounding set every capability not in keep (needs CAP_SETPCAP). */
static int bounding_limit(uint64_t keep, char *why, size_t n)
{
    for (int cap = 0; cap <= 63; cap++) {
        if (keep & PSP_CAP(cap))
            continue;
        if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno != EINVAL) { /* EINVAL: no such cap */
            snprintf(why, n, "drop capability %d from the bounding set: %s", cap, strerror(errno));
            return -1;
        }
    }
    if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 && errno != EINVAL) {
        snprintf(why, n, "clear the ambient set: %s", strerror(errno));
        return -1;
    }
    return 0;
}

int psp_drop_to_user(uid_t uid, gid_t gid, pid_t parent_pid, char *why, size_t n)
{
    if (uid == 0 || gid == 0) {
        snprintf(why, n, "refusing to drop to uid %u gid %u", (unsigned)uid, (unsigned)gid);
        return -1;
    }
    if (prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0) != 0) {
        snprintf(why, n, "PR_SET_KEEPCAPS: %s", strerror(errno));
        return -1;
    }
    if (bounding_limit(0, why, n) != 0)
        return -1;
    if (setgroups(0, NULL) != 0 || setresgid(gid, gid, gid) != 0 || setresuid(uid, uid, uid) != 0) {
        snprintf(why, n, "become uid %u gid %u: %s", (unsigned)uid, (unsigned)gid, strerror(errno));
        return -1;
    }
    uid_t r, e, s;
    gid_t rg, eg, sg;
    uint64_t eff, prm, inh;
    int rc = caps_get(&eff, &prm, &inh);
    if (getresuid(&r, &e, &s) != 0 || getresgid(&rg, &eg, &sg) != 0 || r != uid || e != uid || s != uid || rg != gid ||
        eg != gid || sg != gid) {
        snprintf(why, n, "the uid/gid change did not take");
        return -1;
    }
    if (rc || eff || prm || inh) {
        snprintf(why, n, "capabilities left after the drop: eff %#" PRIx64 " prm %#" PRIx64 " inh %#" PRIx64 "%s%s",
                 eff, prm, inh, rc ? ": " : "", rc ? strerror(-rc) : "");
        return -1;
    }
    if (setuid(0) == 0 || setgid(0) == 0) {
        snprintf(why, n, "root could be regained after the drop");
        return -1;
    }
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) {
        snprintf(why, n, "no_new_privs / not dumpable: %s", strerror(errno));
        return -1;
    }
    /* The credential change cleared any death signal: set it now, then make sure the parent
     * did not die before it took (the signal would never come). */
    if (parent_pid > 0) {
        if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0) {
            snprintf(why, n, "PR_SET_PDEATHSIG: %s", strerror(errno));
            return -1;
        }
        if (getppid() != parent_pid) {
            snprintf(why, n, "the enforcer (pid %d) is gone", (int)parent_pid);
            return -1;
        }
    }
    return 0;
}

int psp_caps_limit(uint64_t keep, char *why, size_t n)
{
    uint64_t eff, prm, inh;
    int rc = caps_get(&eff, &prm, &inh);
    if (rc) {
        snprintf(why, n, "capget: %s", strerror(-rc));
        return -1;
    }
    if (keep & ~prm) {
        snprintf(why, n, "capabilities %#" PRIx64 " to keep are not permitted (permitted %#" PRIx64 ")", keep & ~prm,
                 prm);
        return -1;
    }
    if (bounding_limit(keep, why, n) != 0)
        return -1;
    struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
    struct __user_cap_data_struct d[2];
    memset(d, 0, sizeof(d));
    d[0].effective = d[0].permitted = (uint32_t)keep;
    d[1].effective = d[1].permitted = (uint32_t)(keep >> 32);
    if (syscall(SYS_capset, &h, d) != 0) {
        snprintf(why, n, "capset: %s", strerror(errno));
        return -1;
    }
    if ((rc = caps_get(&eff, &prm, &inh)) != 0 || eff != keep || prm != keep || inh) {
        snprintf(why, n, "capabilities after the drop: eff %#" PRIx64 " prm %#" PRIx64 ", expected %#" PRIx64, eff, prm,
                 keep);
        return -1;
    }
    return 0;
}

static int hexfield(const char *buf, const char *key, uint64_t *out)
{
    const char *s = strstr(buf, key);
    if (!s)
        return -ENOENT;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s + strlen(key), &end, 16);
    if (errno || end == s + strlen(key))
        return -EINVAL;
    *out = v;
    return 0;
}

int psp_caps_of(pid_t pid, psp_caps *c)
{
    char p[64], buf[4096];
    if (pid > 0)
        snprintf(p, sizeof(p), "/proc/%d/status", (int)pid);
    else
        snprintf(p, sizeof(p), "/proc/self/status");
    FILE *f = fopen(p, "re");
    if (!f)
        return -errno;
    size_t len = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[len] = 0;
    memset(c, 0, sizeof(*c));
    uint64_t nnp = 0;
    int rc = hexfield(buf, "\nCapInh:\t", &c->inh);
    if (!rc)
        rc = hexfield(buf, "\nCapPrm:\t", &c->prm);
    if (!rc)
        rc = hexfield(buf, "\nCapEff:\t", &c->eff);
    if (!rc)
        rc = hexfield(buf, "\nCapBnd:\t", &c->bnd);
    if (!rc)
        rc = hexfield(buf, "\nCapAmb:\t", &c->amb);
    if (!rc)
        rc = hexfield(buf, "\nNoNewPrivs:\t", &nnp); /* a single digit: hex reads it as well */
    const char *u = strstr(buf, "\nUid:\t");
    unsigned ru, eu;
    if (!rc && (!u || sscanf(u, "\nUid:\t%u\t%u", &ru, &eu) != 2))
        rc = -EINVAL;
    if (rc)
        return rc;
    c->no_new_privs = (int)nnp;
    c->uid = ru;
    c->euid = eu;
    return 0;
}
