// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* stdin_tty_termios - stdio (docs/kernel.md, "Stdio", "Interactive use"): the operator's
 * terminal, which `mncctl run` hands the agent as a read-only stdin, as storage. When the
 * caller's stdin is a terminal the launcher reopens it O_RDONLY (write(0) -> EBADF), and mncd's
 * fd scan exempts what the launcher holds on its fds 0-2 (foreign_tty_ro_termios is blocked only
 * for terminals the agent did NOT get from its launcher's stdio). But a terminal's settings are
 * changed through a read-only fd: TCSETS needs no write access and, on a terminal that is not
 * the caller's controlling one (the agent runs setsid()), no job-control check; the fd was
 * opened by the launcher before Landlock, so LANDLOCK_ACCESS_FS_IOCTL_DEV does not judge it; the
 * seccomp filter allows ioctl but the inode-flag commands. After the taint the agent stores the
 * canary in c_cc (17 bytes per call) with no write() at all; every process that holds the
 * terminal (the operator's shell, `stty -a`, any process of the operator's uid) reads it back.
 * TIOCSWINSZ (8 bytes, and SIGWINCH to the terminal's foreground group) works the same way.
 * The harness: this file's main() also plays the caller. prepare() points MNCCTL at this binary,
 * which, for the coordinator's `mncctl run`, makes a pty, gives its slave as the launcher's
 * stdin (stdout/stderr stay the orchestrator's pipes, so the relay decides by the "stdout" sink),
 * forwards the orchestrator's "go" lines to the master, and when the launcher exited writes the
 * slave's c_cc to DIR/tty.cc (every other mncctl call is passed through). The positive control
 * runs the same wrapper around the unconfined agent.
 * Verifier: the canary in DIR/tty.cc (the caller's tcgetattr of its terminal after the agent
 * exited).
 * Blocked by: the seccomp filter of `mncctl run` refuses every ioctl that sets a terminal's
 * state (TCSETS*, TCSETA*, TIOCSWINSZ, TIOCSETD, TCXONC, TCFLSH, modes, lines; run_confine.c,
 * deny_ioctl_cmds): EPERM. Bandwidth when open: 17 bytes per ioctl,
 * ~10^5 ioctls/s: ~10^6 B/s. */
#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>

#include "atk.h"
#include "atk_variants.h"

static int agent(struct atk_ctx *c)
{
    struct termios t;
    atk_note(c, "stdin is %sa terminal", isatty(0) ? "" : "not ");
    if (atk_try(c, "tcgetattr(0)", tcgetattr(0, &t)) < 0)
        return 0;
    size_t n = strlen(c->secret);
    if (n > 17)
        n = 17;
    memcpy(t.c_cc, c->secret, n);
    atk_try(c, "tcsetattr(0) c_cc = canary", tcsetattr(0, TCSANOW, &t));
    return 0;
}

static int prepare(struct atk_ctx *c)
{
    (void)c;
    return atkv_wrap_prepare("ATK_TTY_REAL");
}

static void verify(struct atk_ctx *c)
{
    atkv_wrap_verify(c, "tty.cc",
                     "the caller read the canary from its terminal's c_cc (tcgetattr) after the agent exited");
}

static const struct atk A = {"stdin_tty_termios",
                             "termios c_cc of the operator's terminal, the agent's read-only stdin",
                             0,
                             prepare,
                             agent,
                             NULL,
                             verify,
                             NULL};

/* The caller with a terminal: runs argv with a pty slave as stdin, relays our stdin (the
 * orchestrator's "go" lines) to the master, then dumps the slave's c_cc to DIR/tty.cc. */
static int wrap(char **argv)
{
    const char *dir = NULL;
    for (char **a = argv; *a; a++)
        if (strncmp(*a, "dir=", 4) == 0)
            dir = *a + 4;
    int m = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (m < 0 || grantpt(m) < 0 || unlockpt(m) < 0 || !dir)
        return 127;
    int s = open(ptsname(m), O_RDWR | O_NOCTTY | O_CLOEXEC);
    struct termios t;
    if (s < 0 || tcgetattr(s, &t) < 0)
        return 127;
    t.c_lflag &= ~(tcflag_t)(ECHO | ECHONL);
    if (tcsetattr(s, TCSANOW, &t) < 0)
        return 127;
    pid_t pid = fork();
    if (pid < 0)
        return 127;
    if (pid == 0) {
        if (dup2(s, 0) < 0)
            _exit(127);
        execv(argv[0], argv);
        _exit(127);
    }
    int st = 0, in_open = 1;
    for (;;) {
        pid_t w = waitpid(pid, &st, WNOHANG);
        if (w == pid)
            break;
        struct pollfd pf[2] = {{.fd = in_open ? 0 : -1, .events = POLLIN}, {.fd = m, .events = POLLIN}};
        if (poll(pf, 2, 20) <= 0)
            continue;
        char b[512];
        if (pf[0].revents) {
            ssize_t r = read(0, b, sizeof(b));
            if (r <= 0)
                in_open = 0;
            else if (atk_write_all(m, b, (size_t)r) < 0)
                in_open = 0;
        }
        if (pf[1].revents && read(m, b, sizeof(b)) < 0) { /* whatever the terminal echoes: dropped */
        }
    }
    char p[700];
    snprintf(p, sizeof(p), "%s/tty.cc", dir);
    int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd >= 0 && tcgetattr(s, &t) == 0 && atk_write_all(fd, t.c_cc, NCCS) < 0) {
    }
    if (fd >= 0)
        close(fd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int main(int argc, char **argv) { return atkv_wrap_main(&A, argc, argv, "ATK_TTY_REAL", "ATK_TTY_INNER", wrap); }
