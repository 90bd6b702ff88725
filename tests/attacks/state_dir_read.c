// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* state_dir_read - threat model (docs/threat-model.md): reading mncd's state. mncd's STATE_DIR (state journal, ledger, audit log) holds
 * the disclosed values of every agent. Another agent (bystander) has an object pending with its
 * own canary; the attacker reads the state dir and prints every value it finds.
 * Verifier: the bystander's canary in anything the agent could print.
 * Blocks it: Landlock read rules (system dirs, workspace, --read grants only); the state dir's
 * mode (0700 root) for an unprivileged agent. */
#include <dirent.h>
#include <fcntl.h>

#include "atk.h"

static void scan(struct atk_ctx *c, const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    static char buf[1 << 22];
    ssize_t n = read(fd, buf, sizeof(buf));
    close(fd);
    int found = 0;
    for (ssize_t i = 0; i + 14 <= n; i++) {
        if (buf[i] != 'm' || buf[i + 1] != 'k')
            continue;
        int hex = 1;
        for (int k = 2; k < 14; k++)
            if (!strchr("0123456789abcdef", buf[i + k]))
                hex = 0;
        if (hex && memcmp(buf + i, c->secret, 14) != 0) {
            atk_say(c, "dump %.14s", buf + i); /* another agent's value */
            found++;
        }
    }
    atk_note(c, "read %s: %zd bytes, %d foreign values", strrchr(path, '/') + 1, n, found);
}

static int agent(struct atk_ctx *c)
{
    const char *st = atk_arg(c, "state");
    DIR *d = opendir(st);
    if (atk_try(c, "opendir STATE_DIR", d ? 0 : -1) < 0)
        return 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char p[700];
        snprintf(p, sizeof(p), "%s/%s", st, e->d_name);
        scan(c, p);
    }
    closedir(d);
    return 0;
}

static const struct atk A = {"state_dir_read",
                             "read mncd's state dir (other agents' disclosed values)",
                             ATK_FOREIGN,
                             NULL,
                             agent,
                             NULL,
                             NULL,
                             NULL};
ATK_MAIN(A)
