// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* rest_label_strip - threat model (docs/threat-model.md, "Data at rest"): run 1 (the tainted
 * coordinator) writes the canary into its workspace OLD, then tries to make what it wrote look
 * unwritten: it removes, blanks and overwrites the label attributes (trusted.mnc.label,
 * trusted.mnc.taint) of the files, of OLD/sub and of OLD itself, and leaves a fresh copy
 * (a new inode) and a hard link made after its last request; then it exits. Run 2 of the same
 * agent is launched on a fresh workspace with a read grant on OLD, reads the copy and sends it
 * out.
 * Verifier: the collector's UNIX stream and TCP listeners, the launcher's stdout.
 * Blocks it: an agent has no CAP_SYS_ADMIN (mncctl run drops every capability, --as-root too),
 * so trusted.* attributes are not its to change; mncd labels every inode of the workspace at the
 * exit, the copy and the link included, and run 2 starts with OLD's label (no sinks). */
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/xattr.h>

#include "atk_variants.h"

static int prepare(struct atk_ctx *c)
{
    char p[760];
    snprintf(p, sizeof(p), "%s/copy.txt", c->ws);
    return atkv_rest_grant(c, NULL, p, c->ws);
}

static void strip(struct atk_ctx *c, const char *ws, const char *rel)
{
    static const char *const names[] = {"trusted.mnc.label", "trusted.mnc.taint"};
    char p[760], what[96];
    snprintf(p, sizeof(p), "%s%s%s", ws, *rel ? "/" : "", rel);
    for (int i = 0; i < 2; i++) {
        snprintf(what, sizeof(what), "remove %s of ws/%s", names[i], rel);
        atk_try(c, what, lremovexattr(p, names[i]));
        snprintf(what, sizeof(what), "blank %s of ws/%s", names[i], rel);
        atk_try(c, what, lsetxattr(p, names[i], "", 0, 0));
        snprintf(what, sizeof(what), "overwrite %s of ws/%s", names[i], rel);
        atk_try(c, what, lsetxattr(p, names[i], "{}", 2, 0));
    }
}

static int agent(struct atk_ctx *c)
{
    if (c->phase == 2)
        return atkv_rest_agent(c);
    const char *ws = atk_arg(c, "ws");
    atkv_rest_agent(c); /* notes.txt and sub/deep.txt, `sync written` */
    char p[760], q[760];
    snprintf(p, sizeof(p), "%s/copy.txt", ws);
    int fd = (int)atk_try(c, "copy.txt", open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
    if (fd >= 0) {
        atk_try(c, "write copy", write(fd, c->secret, strlen(c->secret)));
        close(fd);
    }
    snprintf(q, sizeof(q), "%s/link.txt", ws);
    atk_try(c, "link copy.txt", link(p, q));
    static const char *const rels[] = {"", "sub", "notes.txt", "sub/deep.txt", "copy.txt"};
    for (size_t i = 0; i < sizeof(rels) / sizeof(rels[0]); i++)
        strip(c, ws, rels[i]);
    return 0;
}

static const struct atk A = {"rest_label_strip",
                             "a tainted instance strips the labels of what it wrote, then relaunches",
                             ATK_RELAUNCH | ATK_NO_CONTROL,
                             prepare,
                             agent,
                             NULL,
                             NULL,
                             NULL};
ATK_MAIN(A)
