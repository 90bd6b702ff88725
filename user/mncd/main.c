// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* main.c - mncd startup and shutdown.
 *
 * Startup refuses, with one clear message, on: a bad flag or config, a policy that does not
 * load, a config mapping that names an unknown agent, an audit log whose chain does not verify,
 * or a state journal that is corrupt or does not load under the current policy. It never
 * "repairs" anything except a torn last record (a crash while appending), which it truncates
 * and records in the audit log.
 */
#include <errno.h>
#include <signal.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "json_write.h"
#include "mncd.h"

static int setup_identity(mncd *d)
{
    for (int i = 0; i < d->cfg.n_uids; i++)
        if (mnc_policy_agent(d->policy, d->cfg.uids[i].agent) < 0) {
            fprintf(stderr, "mncd: config: agents.%s: no such agent in the policy\n", d->cfg.uids[i].agent);
            return -1;
        }
    mncd_ident_clear();
    for (int i = 0; i < d->cfg.n_cgroups; i++) {
        int a = mnc_policy_agent(d->policy, d->cfg.cgroups[i].agent);
        if (a < 0 || mncd_ident_register_cgroup(d->cfg.cgroups[i].path, a) != 0) {
            fprintf(stderr, "mncd: config: cgroups[\"%s\"]: %s\n", d->cfg.cgroups[i].path,
                    a < 0 ? "no such agent in the policy" : "registration table full");
            return -1;
        }
    }
    return 0;
}

/* A connection takes two fds (its socket and, Linux 6.13+, the connecting process's pidfd, see
 * loop.c) plus a pidfd per chunk of any other writer. The usual soft limit (1024) is below what
 * max_clients allows; the soft limit is raised as far as the hard limit lets it. Short of
 * that, a connection simply gets no held pidfd, and a chunk whose pidfd cannot be installed
 * has no proven sender (refused): never a silent allow. */
static void raise_fd_limit(const mncd_config *c)
{
    struct rlimit rl;
    rlim_t want = (rlim_t)c->max_clients * 3 + 256;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur >= want)
        return;
    rlim_t old = rl.rlim_cur;
    rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > want ? want : rl.rlim_max;
    if (rl.rlim_cur > old && setrlimit(RLIMIT_NOFILE, &rl) != 0)
        fprintf(stderr, "mncd: cannot raise the open-file limit from %llu: %s\n", (unsigned long long)old,
                strerror(errno));
    if (rl.rlim_cur < want)
        fprintf(stderr,
                "mncd: open-file limit %llu is below the %llu that max_clients %zu needs; past it, new "
                "connections or their requests are refused\n",
                (unsigned long long)rl.rlim_cur, (unsigned long long)want, (size_t)c->max_clients);
}

/* Whether mncd frees its tables before it exits. Normally not: the exit reclaims them at once,
 * while freeing 10^5 subjects and objects one allocation at a time costs ~0.4 s of CPU on the
 * development VM (`bench_mncd` prints a stop's cost) and delays a restart, which waits for the
 * state dir's lock. The journals are closed (durable) either way. ASan builds and
 * MNCD_FREE_AT_EXIT=1 free everything, so that the freeing code keeps being exercised and a
 * leak checker sees an empty heap. */
static bool free_at_exit(void)
{
#if defined(__SANITIZE_ADDRESS__)
    return true;
#else
    const char *v = getenv("MNCD_FREE_AT_EXIT");
    return v && strcmp(v, "1") == 0;
#endif
}

int main(int argc, char **argv)
{
    static mncd d; /* large (config tables); static keeps it off the stack */
    d.argc = argc;
    d.argv = argv;
    /* a reload re-executes mncd from its loop, which blocks SIGTERM, SIGINT and SIGHUP (read
     * through a signalfd): the mask survives exec, and the start must not run with it */
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    /* --privsep (docs/privsep.md): the parent becomes the enforcer here; this process goes on as
     * the monitor, a plain process of its own user, before it reads a byte (monitor/mon_kern.c) */
    if (mon_kern_split(argc, argv, &d.psp) < 0)
        return 2;
    mnc_json_use_pool(); /* cJSON's items from free lists (json_write.h): requests, answers */
    int rc = mncd_config_load(&d.cfg, argc, argv);
    if (rc != 0)
        return rc > 0 ? 0 : 2;
    rc = 1;
    d.started_ms = mnc_now_ms();
    raise_fd_limit(&d.cfg);

    mnc_errors e;
    mnc_errors_init(&e);
    d.policy = mnc_policy_load_files((const char *const *)d.cfg.policies, d.cfg.n_policies, &e);
    if (!d.policy) {
        fprintf(stderr, "mncd: refusing to start: the policy does not load:\n");
        for (int i = 0; i < e.n; i++)
            fprintf(stderr, "  %s\n", e.msg[i]);
        mnc_errors_free(&e);
        goto out;
    }
    mnc_errors_free(&e);
    if (setup_identity(&d) != 0)
        goto out;

    /* --privsep: the enforcer creates the state dir and hands it over at the seal */
    if (d.psp && mon_kern_configure(&d) != 0)
        goto out;
    if (!d.psp && mkdir(d.cfg.state_dir, 0700) != 0 && errno != EEXIST) {
        fprintf(stderr, "mncd: cannot create state dir %s: %s\n", d.cfg.state_dir, strerror(errno));
        goto out;
    }
    if (strlen(d.cfg.state_dir) + sizeof("/audit.jsonl") > sizeof(d.audit_path)) {
        fprintf(stderr, "mncd: state dir path too long\n");
        goto out;
    }
    memcpy(d.audit_path, d.cfg.state_dir, strlen(d.cfg.state_dir));
    memcpy(d.audit_path + strlen(d.cfg.state_dir), "/audit.jsonl", sizeof("/audit.jsonl"));
    char err[600];
    size_t torn = 0;
    d.audit = mnc_audit_open(d.audit_path, &torn, err, sizeof(err));
    if (!d.audit) {
        fprintf(stderr, "mncd: refusing to start: %s\n", err);
        goto out;
    }
    mnc_audit_set_rotation(d.audit, d.cfg.audit_rotate_bytes, d.cfg.audit_rotate_age_ms, d.cfg.audit_keep);
    d.metrics = mnc_metrics_new(); /* NULL: status carries no metrics, nothing else changes */
    /* The store first re-appends audit records the state journal holds but the log lost
     * (store.c); only then may anything new be appended to the log. */
    if (mncd_store_open(&d.store, d.policy, d.cfg.state_dir, d.audit) != 0) {
        fprintf(stderr, "mncd: refusing to start: state: %s\n", d.store.err);
        goto out;
    }
    d.store.metrics = d.metrics;
    if (torn) {
        char det[128];
        snprintf(det, sizeof(det),
                 "truncated a torn last record of %zu bytes (crash while "
                 "appending)",
                 torn);
        fprintf(stderr, "mncd: audit log: %s\n", det);
        mncd_audit(&d, "audit.recover", -1, -1, NULL, "allow", MNC_OK, det);
    }
    if (mncd_flow_open(&d) != 0) {
        fprintf(stderr, "mncd: refusing to start: out of memory (flow record)\n");
        goto out;
    }
    /* MNC-L ledger and MNC-D queue (mncd_failure.c): a corrupt ledger record refuses the start */
    if (mncd_mncl_open(&d) != 0)
        goto out;
    char det[160];
    snprintf(det, sizeof(det), "mncd %s; %zu objects, %zu memory entries restored", MNCD_VERSION, d.store.reg.n,
             d.store.mem.n);
    mncd_audit(&d, "daemon.start", -1, -1, NULL, "allow", MNC_OK, det);
    if (d.fatal || mnc_audit_sync(d.audit) != 0) {
        fprintf(stderr, "mncd: refusing to start: cannot write the audit log\n");
        goto out;
    }
    if (mncd_observe_start(&d) != 0) /* observe agents (observe.c): never silently */
        goto out;
    /* kernel layer (kern.c): an unavailable requested mode refuses the start */
    if (mncd_kern_start(&d) != 0)
        goto out;
    rc = mncd_run(&d);
out:
    mncd_flow_close(&d);
    mncd_kern_stop(&d);
    bool at_exit = !free_at_exit();
    mncd_mncl_close(&d, at_exit);
    if (d.store.p)
        mncd_store_close(&d.store, at_exit);
    mnc_audit_close(d.audit);
    mnc_metrics_free(d.metrics);
    mnc_policy_free(d.policy);
    mncd_config_free(&d.cfg);
    if (d.psp_broken)
        rc = 1; /* the enforcer went away: not a clean stop */
    if (rc == 0 && d.reload) {
        /* SIGHUP (reload.c): the same program, arguments and pid; every fd is close-on-exec,
         * the state dir's lock goes with them, the pinned kernel state stays */
        fflush(NULL);
        execv("/proc/self/exe", argv);
        fprintf(stderr, "mncd: reload: exec /proc/self/exe: %s; stopped\n", strerror(errno));
        return 1;
    }
    return rc;
}
