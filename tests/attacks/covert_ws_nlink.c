// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* covert_ws_nlink - the workspace directory's link count, read by anyone who can pass its
 * parent. `mncctl run` closes the workspace (root:agentgid 0770): nobody else may list or open
 * anything in it, but stat() of the directory itself needs only search permission on its
 * parent, and its st_nlink is 2 + the number of its subdirectories, which the agent sets with
 * mkdir/rmdir. The agent puts the canary's 6 bytes (12 hex digits) one at a time into the
 * number of subdirectories WS/.nN (0..255) and waits at sync "bN" while uid 65534 stat()s WS.
 * The last value stays after the agent exited (also st_size and the times of the directory).
 * Verifier: uid 65534 at each sync; the 6 bytes read back as hex are the canary.
 * Would close it: a workspace whose parent other uids cannot search (the launcher refusing a
 * parent with search permission for others, or making the workspace inside a 0700/0710
 * directory of its own); covert channel (threat model), bandwidth ~8-16 bits per stat. */
#include <sys/stat.h>

#include "atk.h"

static int agent(struct atk_ctx *c)
{
    const char *ws = atk_arg(c, "ws");
    int have = 0;
    for (int i = 0; i < 6; i++) {
        unsigned v;
        if (sscanf(c->secret + 2 + 2 * i, "%2x", &v) != 1)
            return 0;
        char p[700];
        while (have < (int)v) {
            snprintf(p, sizeof(p), "%s/.n%d", ws, have);
            if (mkdir(p, 0700) < 0) {
                atk_note(c, "mkdir: %s", atk_errname(errno));
                return 0;
            }
            have++;
        }
        while (have > (int)v) {
            snprintf(p, sizeof(p), "%s/.n%d", ws, have - 1);
            if (rmdir(p) < 0) {
                atk_note(c, "rmdir: %s", atk_errname(errno));
                return 0;
            }
            have--;
        }
        char tag[8];
        snprintf(tag, sizeof(tag), "b%d", i);
        atk_sync(c, tag);
    }
    atk_note(c, "6 bytes through the link count of WS");
    return 0;
}

static int rd(struct atk_ctx *c, char *out, size_t n)
{
    struct stat st;
    if (stat(c->ws, &st) < 0 || st.st_nlink < 2) {
        snprintf(out, n, "stat: %s", strerror(errno));
        return 0;
    }
    snprintf(out, n, "%02x", (unsigned)(st.st_nlink - 2) & 0xff);
    return 1;
}

static void on_sync(struct atk_ctx *c, const char *tag)
{
    char out[64];
    int i = tag[0] == 'b' ? atoi(tag + 1) : -1;
    if (i < 0 || i > 5 || atk_as_uid(c, ATK_NOBODY, rd, out, sizeof(out)) != 1)
        return;
    char *got = (char *)&c->slot[0]; /* 12 hex digits + NUL in slot[0..1] */
    memcpy(got + 2 * i, out, 2);
    got[12] = 0;
    if (i == 5 && strncmp(got, c->canary + 2, 12) == 0)
        atk_evidence(c, "uid 65534 read the canary from st_nlink of the workspace (stat through its parent)");
}

static const struct atk A = {"covert_ws_nlink",
                             "the workspace's link count (subdirectories), stat()ed by uid 65534 through its parent",
                             ATK_COVERT,
                             NULL,
                             agent,
                             on_sync,
                             NULL,
                             NULL};
ATK_MAIN(A)
