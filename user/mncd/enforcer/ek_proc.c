// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* ek_proc.c - a process's cgroup, as the kernel shows it and checked against pid reuse
 * (enforcer.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "enforcer.h"

/* 1 alive, 0 gone, -1 cannot tell. A zombie counts as alive: its pid is not reused before it is
 * reaped. EPERM (a process of another uid; the enforcer holds no CAP_KILL) means it exists. */
static int pidfd_alive(int pidfd)
{
    if (pidfd < 0)
        return -1;
    if (syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0) == 0 || errno == EPERM)
        return 1;
    return errno == ESRCH ? 0 : -1;
}

int ek_proc_cgroup(pid_t pid, int pidfd, char *cg, size_t n)
{
    if (pid <= 0 || n == 0)
        return -EINVAL;
    char p[64], line[1024];
    snprintf(p, sizeof(p), "/proc/%d/cgroup", (int)pid);
    FILE *f = fopen(p, "re");
    if (!f)
        return errno == ENOENT ? -ESRCH : -errno;
    int rc = -ENOENT;
    while (fgets(line, sizeof(line), f))
        if (strncmp(line, "0::", 3) == 0) {
            line[strcspn(line, "\n")] = 0;
            rc = strlen(line + 3) < n ? 0 : -ENAMETOOLONG;
            if (!rc)
                memcpy(cg, line + 3, strlen(line + 3) + 1);
            break;
        }
    fclose(f);
    if (!rc && pidfd_alive(pidfd) == 0)
        rc = -ESRCH; /* exited after the read: its pid may name another process now */
    return rc;
}
