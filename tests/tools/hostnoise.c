// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* hostnoise - a stand-in for what systemd and journald hold on every real host, so the tests
 * and the attack corpus run on a host that looks like production (docs/threat-model.md, the fd
 * scan; tests/run-tests starts one for the whole run).
 *
 * It holds, as whoever runs it (root in the tests), the kernel objects a service manager and a
 * journal daemon keep open: an epoll instance watching the rest, an eventfd, a periodic timerfd,
 * an inotify instance with watches on "/", "/etc" and "/tmp", a signalfd (SIGUSR2), a memfd
 * mapped shared and writable, pidfds of itself and of pid 1, a pipe and a UNIX socketpair. Every
 * 100 ms the timer fires and it writes and reads its eventfd, so the objects are in use, not
 * only open. It shares none of them with anyone.
 *
 *   hostnoise [--ready-fd N]   prints "hostnoise <pid> ready" on stdout (or writes it to fd N
 *                              and closes it), then runs until SIGTERM or SIGINT (exit 0).
 * Every fd it inherits above 2 (but the ready fd) is closed first. Exits 1 with a message on
 * stderr if an object cannot be made. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <unistd.h>

static volatile sig_atomic_t stop;

static void on_term(int sig)
{
    (void)sig;
    stop = 1;
}

static int must(const char *what, int fd)
{
    if (fd < 0) {
        fprintf(stderr, "hostnoise: %s: %s\n", what, strerror(errno));
        exit(1);
    }
    return fd;
}

static void watch(int ep, int fd)
{
    struct epoll_event ev = {.events = EPOLLIN, .data.fd = fd};
    must("epoll_ctl", epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev));
}

int main(int argc, char **argv)
{
    int ready = 1;
    if (argc == 3 && strcmp(argv[1], "--ready-fd") == 0)
        ready = atoi(argv[2]);
    else if (argc != 1) {
        fprintf(stderr, "usage: hostnoise [--ready-fd N]\n");
        return 2;
    }
    /* nothing inherited: it shares no object with anyone (the caller's pipes stay the caller's) */
    if (ready > 2)
        syscall(SYS_close_range, 3u, (unsigned)ready - 1, 0u);
    syscall(SYS_close_range, ready > 2 ? (unsigned)ready + 1 : 3u, ~0u, 0u);
    struct sigaction sa = {.sa_handler = on_term};
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);

    int ep = must("epoll_create1", epoll_create1(EPOLL_CLOEXEC));
    int ev = must("eventfd", eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
    int tf = must("timerfd_create", timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK));
    struct itimerspec its = {.it_interval = {0, 100 * 1000 * 1000}, .it_value = {0, 100 * 1000 * 1000}};
    must("timerfd_settime", timerfd_settime(tf, 0, &its, NULL));
    int in = must("inotify_init1", inotify_init1(IN_CLOEXEC | IN_NONBLOCK));
    static const char *const dirs[] = {"/", "/etc", "/tmp"};
    for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
        must(dirs[i], inotify_add_watch(in, dirs[i], IN_CREATE | IN_DELETE | IN_MOVED_TO | IN_CLOSE_WRITE));
    sigset_t ss;
    sigemptyset(&ss);
    sigaddset(&ss, SIGUSR2);
    must("sigprocmask", sigprocmask(SIG_BLOCK, &ss, NULL));
    int sf = must("signalfd", signalfd(-1, &ss, SFD_CLOEXEC | SFD_NONBLOCK));
    int mf = must("memfd_create", memfd_create("hostnoise-journal", MFD_CLOEXEC));
    must("ftruncate", ftruncate(mf, 4096));
    char *map = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, mf, 0);
    if (map == MAP_FAILED)
        must("mmap", -1);
    int pself = must("pidfd_open self", (int)syscall(SYS_pidfd_open, getpid(), 0));
    int pinit = must("pidfd_open 1", (int)syscall(SYS_pidfd_open, 1, 0));
    int pp[2], sp[2];
    must("pipe2", pipe2(pp, O_CLOEXEC | O_NONBLOCK));
    must("socketpair", socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, sp));
    watch(ep, ev);
    watch(ep, tf);
    watch(ep, in);
    watch(ep, sf);
    watch(ep, pp[0]);
    watch(ep, sp[0]);
    watch(ep, pself);
    (void)pinit;

    char line[64];
    int n = snprintf(line, sizeof(line), "hostnoise %d ready\n", (int)getpid());
    if (write(ready, line, (size_t)n) != n) {
        fprintf(stderr, "hostnoise: ready: %s\n", strerror(errno));
        return 1;
    }
    if (ready != 1)
        close(ready);

    unsigned long ticks = 0;
    while (!stop) {
        struct epoll_event evs[8];
        int k = epoll_wait(ep, evs, 8, 1000);
        if (k < 0 && errno != EINTR) {
            fprintf(stderr, "hostnoise: epoll_wait: %s\n", strerror(errno));
            return 1;
        }
        for (int i = 0; i < k; i++) {
            char buf[4096];
            if (evs[i].data.fd == tf && read(tf, buf, 8) == 8) {
                uint64_t one = 1; /* in use: the journal's wakeup, the manager's notification */
                if (write(ev, &one, sizeof(one)) != (ssize_t)sizeof(one))
                    continue;
                map[ticks++ % 4096]++;
            } else if (evs[i].data.fd != pself) {
                while (read(evs[i].data.fd, buf, sizeof(buf)) > 0)
                    ;
            }
        }
    }
    return 0;
}
