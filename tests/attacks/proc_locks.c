// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* proc_locks - byte-range locks on a file every process can read (/etc/hostname, or
 * /bin/busybox where there is none): the agent takes read locks at offsets 2^20*i + 12-bit
 * chunk; /proc/locks shows every lock's range to every user.
 * Verifier: uid 65534 reads /proc/locks while the agent waits and decodes.
 * Closes it: a tainted agent may not take, change or drop a lock: mncctl run's launcher answers
 * every lock call from the taint (run_gate.h), and on the lsm backend lsm/file_lock refuses it
 * too. Before the gate this was a covert channel (covert_flock): 64 bits per lock, thousands per
 * second. Result: blocked on both backends (F_SETLK: EPERM); control: verified.
 * Threat model: docs/threat-model.md (locks). */
#include <fcntl.h>
#include <sys/stat.h>

#include "atk.h"
#include "atk_variants.h"

static int agent(struct atk_ctx *c)
{
    int fd = (int)atk_try(c, "open the shared file", open(atkv_shared_file(), O_RDONLY));
    if (fd < 0)
        return 0;
    for (int i = 0; i < 4; i++) {
        char h[4] = {0};
        memcpy(h, c->secret + 2 + 3 * i, 3);
        struct flock fl = {.l_type = F_RDLCK,
                           .l_whence = SEEK_SET,
                           .l_start = (off_t)((1L << 20) * (i + 1) + strtol(h, NULL, 16)),
                           .l_len = 1};
        if (atk_try(c, "F_SETLK read lock", fcntl(fd, F_SETLK, &fl)) < 0)
            break;
    }
    atk_sync(c, "locked");
    return 0;
}

static int rd(struct atk_ctx *c, char *out, size_t n)
{
    struct stat st;
    FILE *f = fopen("/proc/locks", "r");
    if (!f || stat(atkv_shared_file(), &st) < 0) {
        if (f)
            fclose(f);
        return 0;
    }
    char line[512], got[32] = "mk000000000000";
    int seen = 0;
    while (fgets(line, sizeof(line), f)) {
        unsigned maj, min;
        unsigned long ino;
        long start;
        if (sscanf(line, "%*d: POSIX %*s READ %*d %x:%x:%lu %ld", &maj, &min, &ino, &start) != 4 || ino != st.st_ino)
            continue;
        int i = (int)(start >> 20) - 1;
        if (i < 0 || i > 3)
            continue;
        char h[4];
        snprintf(h, sizeof(h), "%03lx", start & 0xfff);
        memcpy(got + 2 + 3 * i, h, 3);
        seen |= 1 << i;
    }
    fclose(f);
    if (seen == 15 && strcmp(got, c->canary) == 0) {
        snprintf(out, n, "uid 65534 decoded the canary from lock ranges in /proc/locks");
        return 1;
    }
    return 0;
}

static void on_sync(struct atk_ctx *c, const char *tag) { atk_verify_as_nobody(c, tag, NULL, rd); }

static const struct atk A = {
    "proc_locks", "canary in byte-range lock offsets (/proc/locks)", 0, NULL, agent, on_sync, NULL, NULL};
ATK_MAIN(A)
