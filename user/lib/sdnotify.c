// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* sdnotify.c - sd_notify(3) by hand (sdnotify.h). */
#include "sdnotify.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

int mnc_sd_notify(const char *msg)
{
    const char *path = getenv("NOTIFY_SOCKET");
    if (!path || !path[0])
        return 0;
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    size_t n = strlen(path);
    if ((path[0] != '/' && path[0] != '@') || n >= sizeof(sa.sun_path)) {
        errno = EINVAL;
        return -1;
    }
    memcpy(sa.sun_path, path, n);
    if (path[0] == '@')
        sa.sun_path[0] = '\0'; /* abstract namespace */
    int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    ssize_t w = sendto(fd, msg, strlen(msg), MSG_NOSIGNAL, (struct sockaddr *)&sa,
                       (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n));
    int e = errno;
    close(fd);
    errno = e;
    return w == (ssize_t)strlen(msg) ? 1 : -1;
}

uint64_t mnc_sd_watchdog_ms(void)
{
    const char *us = getenv("WATCHDOG_USEC"), *pid = getenv("WATCHDOG_PID");
    if (!us)
        return 0;
    if (pid && strtol(pid, NULL, 10) != (long)getpid())
        return 0;
    char *end;
    unsigned long long v = strtoull(us, &end, 10);
    if (*end || v == 0)
        return 0;
    uint64_t half = v / 2000;
    return half ? half : 1;
}
