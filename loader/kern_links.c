// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* kern_links.c - pinned links with undo: attach every program of an object and pin its link,
 * replacing a pinned link atomically (compare-and-swap update, or pin swap for LSM links), and
 * roll back or keep what one attach changed. Contract: loader/kern_int.h. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "kern_int.h"

/* ---- attach with undo (see kern_int.h) */

void mnc_attach_undo_init(mnc_attach_undo *u) { memset(u, 0, sizeof(*u)); }

static int obj_prog_id(int fd, bool is_link, uint32_t *id)
{
    if (is_link) {
        struct bpf_link_info li;
        __u32 len = sizeof(li);
        memset(&li, 0, sizeof(li));
        if (bpf_obj_get_info_by_fd(fd, &li, &len) != 0)
            return -errno;
        *id = li.prog_id;
    } else {
        struct bpf_prog_info pi;
        __u32 len = sizeof(pi);
        memset(&pi, 0, sizeof(pi));
        if (bpf_obj_get_info_by_fd(fd, &pi, &len) != 0)
            return -errno;
        *id = pi.id;
    }
    return 0;
}

/* The next free record of u for a replaced link of this kind, taking over lfd (no fds of
 * programs yet). NULL when the table is full: lfd is closed and err says so (-E2BIG). The
 * record counts in u->n_replaced only when the caller increments it. */
static mnc_replaced_link *undo_slot(mnc_attach_undo *u, int lfd, int kind, char *err, size_t errlen)
{
    if (u->n_replaced >= MNC_UNDO_MAX) {
        close(lfd);
        mnc_errf(err, errlen, -E2BIG, "more replaced links than the rollback table holds (%d)", MNC_UNDO_MAX);
        return NULL;
    }
    mnc_replaced_link *r = &u->replaced[u->n_replaced];
    memset(r, 0, sizeof(*r));
    r->kind = kind;
    r->link_fd = lfd;
    r->old_prog_fd = r->new_prog_fd = r->new_link_fd = -1;
    return r;
}

/* Replaces the program of the pinned link lfd (taken over: closed or recorded in u) with prog,
 * as a compare-and-swap against the program the link holds now. */
static int replace_in_link(int lfd, struct bpf_program *prog, const char *lp, mnc_attach_undo *u, char *err,
                           size_t errlen)
{
    const char *name = bpf_program__name(prog);
    mnc_replaced_link *r = undo_slot(u, lfd, MNC_REPL_UPDATE, err, errlen);
    if (!r)
        return -E2BIG;
    int rc = obj_prog_id(lfd, true, &r->old_prog_id);
    if (rc) {
        mnc_errf(err, errlen, rc, "read pinned link %s: %s", lp, strerror(-rc));
        goto fail;
    }
    /* our own reference on the previous program: the link drops its one at the update, and
     * without this the program would be freed and could not be swapped back */
    r->old_prog_fd = bpf_prog_get_fd_by_id(r->old_prog_id);
    if (r->old_prog_fd < 0) {
        rc = -errno;
        mnc_errf(err, errlen, rc, "open program %u of %s (kept to swap back on failure): %s", r->old_prog_id, lp,
                 strerror(-rc));
        goto fail;
    }
    r->new_prog_fd = fcntl(bpf_program__fd(prog), F_DUPFD_CLOEXEC, 3);
    if (r->new_prog_fd < 0 || (rc = obj_prog_id(r->new_prog_fd, false, &r->new_prog_id)) != 0) {
        rc = r->new_prog_fd < 0 ? -errno : rc;
        mnc_errf(err, errlen, rc, "program %s: %s", name, strerror(-rc));
        goto fail;
    }
    /* compare-and-swap: the old program runs until this syscall swaps in the new one, and it
     * fails (EPERM) if someone else replaced the program since we read it */
    LIBBPF_OPTS(bpf_link_update_opts, uo, .flags = BPF_F_REPLACE, .old_prog_fd = r->old_prog_fd);
    if (bpf_link_update(lfd, r->new_prog_fd, &uo) != 0) {
        rc = -errno;
        mnc_errf(err, errlen, rc, "bpf_link_update %s: %s%s", lp, strerror(-rc),
                 rc == -EPERM    ? " (the link's program changed after it was read: another attacher at work?)"
                 : rc == -EINVAL ? " (this link type cannot be updated in place on this kernel)"
                                 : "");
        goto fail;
    }
    snprintf(r->name, sizeof(r->name), "%s", name);
    u->n_replaced++;
    return 0;
fail:
    close(lfd);
    if (r->old_prog_fd >= 0)
        close(r->old_prog_fd);
    if (r->new_prog_fd >= 0)
        close(r->new_prog_fd);
    return rc;
}

static int link_id(int fd, uint32_t *id)
{
    struct bpf_link_info li;
    __u32 len = sizeof(li);
    memset(&li, 0, sizeof(li));
    if (bpf_obj_get_info_by_fd(fd, &li, &len) != 0)
        return -errno;
    *id = li.id;
    return 0;
}

/* Does the pin at lp still name the link whose id is want? 0 yes, -EPERM no, other -errno. */
static int pin_names(const char *lp, uint32_t want)
{
    int fd = bpf_obj_get(lp);
    if (fd < 0)
        return -errno;
    uint32_t id = 0;
    int rc = link_id(fd, &id);
    close(fd);
    return rc ? rc : id == want ? 0 : -EPERM;
}

/* Pins link fd at <lp>__<sfx> and renames that over lp (bpffs rename replaces the target in one
 * step: the path never names no link). Not "<lp>.<sfx>": bpffs refuses dots in names (EPERM). */
static int pin_over(int fd, const char *lp, const char *sfx)
{
    char tmp[PATH_MAX + 100];
    snprintf(tmp, sizeof(tmp), "%s__%s", lp, sfx);
    unlink(tmp); /* a leftover of a crashed attach */
    if (bpf_obj_pin(fd, tmp) != 0)
        return -errno;
    if (rename(tmp, lp) != 0) {
        int e = errno;
        unlink(tmp);
        return -e;
    }
    return 0;
}

/* LSM links: bpf_link_update is refused for tracing links (EINVAL, measured on 6.1). Attach the
 * new program beside the old one (both enforce meanwhile), then swap the pin; the old link is
 * kept alive by old_lfd (taken over) until the attach is committed or rolled back. */
static int swap_lsm_link(int old_lfd, struct bpf_program *prog, const char *lp, mnc_attach_undo *u, char *err,
                         size_t errlen)
{
    const char *name = bpf_program__name(prog);
    mnc_replaced_link *r = undo_slot(u, old_lfd, MNC_REPL_PIN_SWAP, err, errlen);
    if (!r)
        return -E2BIG;
    uint32_t old_id = 0;
    int rc = link_id(old_lfd, &old_id);
    if (rc == 0)
        rc = obj_prog_id(old_lfd, true, &r->old_prog_id);
    if (rc) {
        mnc_errf(err, errlen, rc, "read pinned link %s: %s", lp, strerror(-rc));
        goto fail;
    }
    struct bpf_link *l = bpf_program__attach_lsm(prog);
    if (!l) {
        rc = -errno;
        mnc_errf(err, errlen, rc, "attach %s (%s): %s", name, bpf_program__section_name(prog), strerror(-rc));
        goto fail;
    }
    r->new_link_fd = fcntl(bpf_link__fd(l), F_DUPFD_CLOEXEC, 3);
    rc = r->new_link_fd < 0 ? -errno : 0;
    /* our dup keeps the new link (and its attachment) alive after libbpf's handle is gone */
    bpf_link__destroy(l);
    if (rc == 0)
        rc = obj_prog_id(r->new_link_fd, true, &r->new_prog_id);
    if (rc) {
        mnc_errf(err, errlen, rc, "new link for %s: %s", name, strerror(-rc));
        goto fail;
    }
    /* compare-and-swap, as close as pins allow: the pin must still name the link read above */
    if ((rc = pin_names(lp, old_id)) != 0) {
        mnc_errf(err, errlen, rc, "pinned link %s changed while attaching%s: %s", lp,
                 rc == -EPERM ? " (another attacher at work?)" : "", strerror(-rc));
        goto fail;
    }
    if ((rc = pin_over(r->new_link_fd, lp, "new")) != 0) {
        mnc_errf(err, errlen, rc, "pin new link over %s: %s", lp, strerror(-rc));
        goto fail;
    }
    snprintf(r->name, sizeof(r->name), "%s", name);
    u->n_replaced++;
    return 0;
fail:
    close(old_lfd);
    if (r->new_link_fd >= 0)
        close(r->new_link_fd); /* not pinned: detaches */
    return rc;
}

int mnc_attach_pinned(struct bpf_object *obj, const char *root, int cg_fd, mnc_attach_undo *u, char *err, size_t errlen)
{
    struct bpf_program *prog;
    bpf_object__for_each_program(prog, obj)
    {
        if (!bpf_program__autoload(prog))
            continue; /* not loaded: this backend does not use it (lsm: mnc_egress) */
        const char *name = bpf_program__name(prog);
        char lp[PATH_MAX + 80];
        snprintf(lp, sizeof(lp), "%s/links/%s", root, name);
        int lfd = bpf_obj_get(lp);
        if (lfd >= 0) {
            int rc = cg_fd >= 0 ? replace_in_link(lfd, prog, lp, u, err, errlen)
                                : swap_lsm_link(lfd, prog, lp, u, err, errlen);
            if (rc)
                return rc;
            continue;
        }
        if (errno != ENOENT)
            return mnc_errf(err, errlen, -errno, "open pinned link %s: %s", lp, strerror(errno));
        /* Room in the rollback table first, so a link we create is never left unrecorded. */
        if (u->n_created >= MNC_UNDO_MAX)
            return mnc_errf(err, errlen, -E2BIG, "more links than the rollback table holds (%d)", MNC_UNDO_MAX);
        struct bpf_link *l = cg_fd >= 0 ? bpf_program__attach_cgroup(prog, cg_fd) : bpf_program__attach_lsm(prog);
        if (!l) {
            int e = errno;
            return mnc_errf(err, errlen, -e, "attach %s (%s): %s", name, bpf_program__section_name(prog), strerror(e));
        }
        int rc = bpf_link__pin(l, lp);
        /* closing our fd leaves the pinned link (and so the attachment) in place */
        bpf_link__destroy(l);
        if (rc != 0)
            return mnc_errf(err, errlen, rc, "pin link %s: %s", lp, strerror(-rc));
        snprintf(u->created[u->n_created], sizeof(u->created[0]), "%s", name);
        u->n_created++;
    }
    return 0;
}

void mnc_attach_undo_release(mnc_attach_undo *u)
{
    for (int i = 0; i < u->n_replaced; i++) {
        mnc_replaced_link *r = &u->replaced[i];
        int fds[] = {r->link_fd, r->old_prog_fd, r->new_prog_fd, r->new_link_fd};
        for (size_t j = 0; j < sizeof(fds) / sizeof(fds[0]); j++)
            if (fds[j] >= 0)
                close(fds[j]); /* PIN_SWAP: closing the old link detaches the old program */
    }
    u->n_replaced = u->n_created = 0;
}

int mnc_attach_rollback(mnc_attach_undo *u, const char *root, char *err, size_t errlen)
{
    int rc = 0;
    char bad[512] = "";
    size_t bl = 0;
    /* newest first: the reverse of the order they were made */
    for (int i = u->n_replaced - 1; i >= 0; i--) {
        mnc_replaced_link *r = &u->replaced[i];
        int e = 0;
        if (r->kind == MNC_REPL_PIN_SWAP) {
            /* only take back what this attach put in: the pin must name our new link */
            char lp[PATH_MAX + 80];
            snprintf(lp, sizeof(lp), "%s/links/%s", root, r->name);
            uint32_t nid = 0;
            int x = link_id(r->new_link_fd, &nid);
            if (x == 0)
                x = pin_names(lp, nid);
            if (x == 0)
                x = pin_over(r->link_fd, lp, "rollback");
            e = -x;
        } else {
            /* compare-and-swap again: only take back what this attach put in */
            LIBBPF_OPTS(bpf_link_update_opts, uo, .flags = BPF_F_REPLACE, .old_prog_fd = r->new_prog_fd);
            if (bpf_link_update(r->link_fd, r->old_prog_fd, &uo) != 0)
                e = errno;
        }
        if (e) {
            rc = rc ? rc : -e;
            int n = snprintf(bad + bl, sizeof(bad) - bl, "%s%s (program %u, not back to %u: %s)", bl ? ", " : "",
                             r->name, r->new_prog_id, r->old_prog_id, strerror(e));
            if (n > 0)
                bl = bl + (size_t)n < sizeof(bad) ? bl + (size_t)n : sizeof(bad) - 1;
        }
    }
    for (int i = 0; i < u->n_created; i++) {
        char lp[PATH_MAX + 80];
        snprintf(lp, sizeof(lp), "%s/links/%s", root, u->created[i]);
        if (unlink(lp) != 0 && errno != ENOENT) {
            int e = errno;
            rc = rc ? rc : -e;
            int n = snprintf(bad + bl, sizeof(bad) - bl, "%s%s (new link not unpinned: %s)", bl ? ", " : "",
                             u->created[i], strerror(e));
            if (n > 0)
                bl = bl + (size_t)n < sizeof(bad) ? bl + (size_t)n : sizeof(bad) - 1;
        }
    }
    int n_rep = u->n_replaced, n_cre = u->n_created;
    mnc_attach_undo_release(u);
    if (rc) {
        mnc_errf(err, errlen, rc, "ROLLBACK FAILED: still running the new, UNVERIFIED programs: %s", bad);
        fprintf(stderr, "mnc: loader: %s\n", err); /* loud: the caller's own report may be cut short */
        return rc;
    }
    mnc_errf(err, errlen, 0,
             "rolled back: %d replaced link(s) have their previous program again, %d new link(s) "
             "unpinned",
             n_rep, n_cre);
    return 0;
}
