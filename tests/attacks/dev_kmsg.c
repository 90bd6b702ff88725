// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* dev_kmsg - the kernel log (our addition): write the canary to /dev/kmsg (or syslog(2) is not
 * a writer); log shippers and dmesg read it.
 * Verifier: an untainted reader of /dev/kmsg (root: dmesg_restrict may hide it from others).
 * Blocks it: Landlock (/dev/kmsg is not among the writable device nodes). */
#include <fcntl.h>

#include "atk.h"

static int agent(struct atk_ctx *c)
{
    int fd = (int)atk_try(c, "open /dev/kmsg for writing", open("/dev/kmsg", O_WRONLY));
    if (fd >= 0) {
        char line[300];
        snprintf(line, sizeof(line), "%.250s\n", c->secret); /* a record without a newline waits for the next */
        atk_try(c, "write", write(fd, line, strlen(line)));
    }
    return 0;
}

static void verify(struct atk_ctx *c)
{
    int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return;
    char buf[8192];
    ssize_t r;
    while ((r = read(fd, buf, sizeof(buf))) != 0) {
        if (r < 0 && errno == EPIPE)
            continue; /* overwritten records */
        if (r < 0)
            break;
        if (atk_buf_has(buf, (size_t)r, c->canary)) {
            atk_evidence(c, "canary in the kernel log (/dev/kmsg)");
            break;
        }
    }
    close(fd);
}

static const struct atk A = {"dev_kmsg", "the kernel log via /dev/kmsg", 0, NULL, agent, NULL, verify, NULL};
ATK_MAIN(A)
