// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* cmd_doctor.c - `mncctl doctor [--pin-root DIR] [--backend auto|cgroup|lsm] [--policy F]...`:
 * what the kernel offers, which backend mnc would use (or why it refuses), what each hook
 * covers, the functional self-test of the attached programs, and (given the policy) the agents
 * marked "confinement": "none" (mncd delivers to them without kernel confinement). Exit 0 only
 * if enforcement is attached and its self-test passed. */
#include <bpf/bpf.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "mnc_kern.h"
#include "mncctl.h"
#include "util.h"

#define DOCTOR_MAX_POLICIES 16

/* Lists the policy's agents with "confinement": "none" or "netns". Returns 0, or -1 if it does
 * not load. */
static int show_confinement(const char *const *paths, int n)
{
    if (n == 0)
        return 0;
    mnc_policy *p = mncctl_load_policies(paths, n);
    if (!p)
        return -1;
    int none = 0, netns = 0;
    for (int i = 0; i < p->n_principals; i++) {
        none += p->principals[i].cls == MNC_SINK_AGENT && p->principals[i].confinement_none;
        netns += p->principals[i].cls == MNC_SINK_AGENT && p->principals[i].confinement_netns;
    }
    if (!none) {
        printf("confinement:     kernel for every agent of the policy (with a kernel layer on, "
               "mncd delivers only to registered agent cgroups)");
    } else {
        printf("confinement:     NONE for %d agent(s): mncd delivers to them without kernel "
               "confinement (each delivery audited):",
               none);
        for (int i = 0; i < p->n_principals; i++)
            if (p->principals[i].cls == MNC_SINK_AGENT && p->principals[i].confinement_none)
                printf(" %s", p->principals[i].name);
    }
    if (netns) {
        printf("; netns (a network namespace of its own, checked at each delivery) for:");
        for (int i = 0; i < p->n_principals; i++)
            if (p->principals[i].cls == MNC_SINK_AGENT && p->principals[i].confinement_netns)
                printf(" %s", p->principals[i].name);
    }
    printf("\n");
    for (int i = 0; i < p->n_principals; i++) /* observe mode, loudly (docs/threat-model.md) */
        if (p->principals[i].cls == MNC_SINK_AGENT && p->principals[i].observe)
            printf("WARNING:         OBSERVE MODE for agent %s: its scope checks are audited as would_deny and NOT "
                   "enforced (mncd refuses it while its kernel layer is on)\n",
                   p->principals[i].name);
    mnc_policy_free(p);
    return 0;
}

static const char *yesno(bool b) { return b ? "yes" : "no"; }

/* Agents launched --as-root (uid 0, reduced capabilities) are legal but weaker: say so. */
static void warn_root_agents(mnc_kern *k)
{
    char mp[PATH_MAX + 16];
    snprintf(mp, sizeof(mp), "%s/agents", mnc_kern_root(k));
    int fd = bpf_obj_get(mp);
    if (fd < 0) {
        printf("agents:          cannot read %s: %s\n", mp, strerror(errno));
        return;
    }
    struct mnc_agent_key cur, next, *prev = NULL;
    int n = 0, roots = 0, pass = 0;
    while (bpf_map_get_next_key(fd, prev, &next) == 0) {
        cur = next;
        prev = &cur;
        struct mnc_agent a;
        if (bpf_map_lookup_elem(fd, &cur, &a) != 0 || (a.flags & MNC_AGENT_F_SELFTEST))
            continue;
        n++;
        if (a.flags & MNC_AGENT_F_ROOT) {
            printf("WARNING:         agent id %u (cgroup id %llu) runs as root (--as-root: uid 0, reduced "
                   "capabilities); prefer its own uid\n",
                   a.agent_id, (unsigned long long)cur.cgroup_id);
            roots++;
        }
        if (a.flags & MNC_AGENT_F_STDIO_PASS) {
            printf("WARNING:         agent id %u (cgroup id %llu) runs with --stdio passthrough: its stdout and "
                   "stderr are not governed by its taint\n",
                   a.agent_id, (unsigned long long)cur.cgroup_id);
            pass++;
        }
    }
    close(fd);
    printf("agents:          %d running instance(s), %d as root, %d with stdio passthrough\n", n, roots, pass);
}

/* Whether other uids can read the agents' /proc entries (cmdline, stat, and under /proc/PID/net
 * the socket counts of an agent's own network namespace: attack sockstat_count): covert channels
 * the host closes with hidepid (docs/threat-model.md). mnc reports it; it does not remount /proc.
 * The last /proc mount in mountinfo is the one on top, which paths reach. */
static void proc_visibility(void)
{
    FILE *f = fopen("/proc/self/mountinfo", "re");
    char line[1024];
    const char *hp = NULL;
    while (f && fgets(line, sizeof(line), f)) {
        char mnt[256], fstype[64];
        const char *sep = strstr(line, " - ");
        if (sscanf(line, "%*s %*s %*s %*s %255s", mnt) != 1 || strcmp(mnt, "/proc") != 0 || !sep ||
            sscanf(sep + 3, "%63s", fstype) != 1 || strcmp(fstype, "proc") != 0)
            continue;
        hp = strstr(sep, "hidepid=invisible") || strstr(sep, "hidepid=2")    ? "hidepid=invisible"
             : strstr(sep, "hidepid=ptraceable") || strstr(sep, "hidepid=4") ? "hidepid=ptraceable"
             : strstr(sep, "hidepid=noaccess") || strstr(sep, "hidepid=1")   ? "hidepid=noaccess"
                                                                             : "no hidepid";
    }
    if (f)
        fclose(f);
    if (!hp)
        printf("/proc:           not found in mountinfo\n");
    else if (strcmp(hp, "hidepid=invisible") == 0 || strcmp(hp, "hidepid=ptraceable") == 0)
        printf("/proc:           %s (other uids cannot see agents' processes; with --netns their socket "
               "counts stay hidden too)\n",
               hp);
    else
        printf("/proc:           %s: other uids can read agents' cmdline/stat and, under /proc/PID/net, the "
               "socket counts of a --netns agent's namespace (covert channels, docs/threat-model.md); "
               "mount -o remount,hidepid=invisible /proc closes them\n",
               hp);
}

static int cmd_doctor(int argc, char **argv, const mncctl_global *g)
{
    (void)g;
    const char *root = NULL;
    unsigned backend = 0;
    const char *pols[DOCTOR_MAX_POLICIES];
    int n_pols = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--policy") == 0 && i + 1 < argc && n_pols < DOCTOR_MAX_POLICIES) {
            pols[n_pols++] = argv[++i];
        } else if (strcmp(argv[i], "--pin-root") == 0 && i + 1 < argc) {
            root = argv[++i];
        } else if (strcmp(argv[i], "--backend") == 0 && i + 1 < argc) {
            const char *b = argv[++i];
            backend = strcmp(b, "lsm") == 0 ? MNC_BACKEND_LSM : strcmp(b, "cgroup") == 0 ? MNC_BACKEND_CGROUP : 0;
            if (!backend && strcmp(b, "auto") != 0) {
                mncctl_err("doctor: unknown backend \"%s\"", b);
                return 2;
            }
        } else {
            mncctl_err("usage: doctor [--pin-root DIR] [--backend auto|cgroup|lsm] [--policy F]...");
            return 2;
        }
    }
    if (show_confinement(pols, n_pols) != 0)
        return 2;
    mnc_features f;
    mnc_kern_probe(&f);
    char lsm[sizeof(f.lsm_list)];
    snprintf(lsm, sizeof(lsm), "%s", f.lsm_list);
    lsm[strcspn(lsm, "\n")] = 0;
    printf("kernel:          %s\n", f.kernel);
    printf("active LSMs:     %s\n", f.lsm_list_known ? lsm : "(unknown: securityfs not mounted)");
    printf("BPF LSM:         listed %s, programs load %s", yesno(f.lsm_has_bpf), yesno(f.lsm_loads));
    if (!f.lsm_loads)
        printf(" (%s)", strerror(f.lsm_load_errno));
    printf("\n");
    printf("cgroup BPF:      sock_addr %s, sock_create %s, cgroup_skb %s, ringbuf %s\n", yesno(f.sock_addr_loads),
           yesno(f.sock_create_loads), yesno(f.skb_loads), yesno(f.ringbuf));
    printf("cgroup2 mount:   %s\n", f.cgroup2[0] ? f.cgroup2 : "(none)");
    printf("bpffs:           %s\n", f.bpffs ? "/sys/fs/bpf" : "(not mounted at /sys/fs/bpf; attach mounts it)");
    if (f.landlock_abi > 0)
        printf("Landlock:        ABI %d\n", f.landlock_abi);
    else
        printf("Landlock:        unavailable (%s)\n", strerror(-f.landlock_abi));
    printf("seccomp filter:  %s\n", yesno(f.seccomp_filter));
    char err[512] = "";
    int b = mnc_kern_choose_backend(&f, backend, err, sizeof(err));
    if (b < 0)
        printf("backend:         REFUSED: %s\n", err);
    else
        printf("backend:         cgroup (sockets gated by taint; files by Landlock, IPC by seccomp at launch)\n");
    int n;
    const mnc_hook_info *h = mnc_kern_hooks(&n);
    printf("hooks:\n");
    for (int i = 0; i < n; i++)
        printf("  %-20s %s\n", h[i].section, h[i].covers);
    printf("  %-20s %s\n", "identity (run)",
           "own uid per agent (0x6D6E0000 + id), no capabilities, no_new_privs, own "
           "cgroup namespace and session, inherited fds closed, workspace root:its group 0770");
    printf("  %-20s %s\n", "landlock (run)",
           "writes/creates/links/renames only in the workspace; reads and exec only in "
           "system dirs, the workspace and --read grants; no terminals; abstract UNIX and signals scoped -> EACCES");
    printf("  %-20s %s\n", "seccomp (run)",
           "allowlist by class (default ENOSYS; clone3 ENOSYS); SysV/POSIX IPC, keyrings, "
           "namespaces, io_uring, ptrace and other processes' memory, bpf, mounts, modules, clock setting, "
           "socket() outside UNIX/INET/INET6, listen, bind and SO_PASSCRED/SO_PASSPIDFD (non-server), "
           "PR_SET_NAME -> EPERM; lock calls (fcntl F_SETLK*/F_OFD_SETLK*, flock), shutdown and a server's "
           "bind/listen answered by the launcher from the taint (tainted -> EPERM; shutdown of a connection "
           "to a named peer done by the launcher)");
    if (b == (int)MNC_BACKEND_CGROUP)
        /* say what is NOT covered, so nobody reads the list above as complete */
        printf("  %-20s %s\n", "NOT COVERED",
               "a server agent's UNIX listeners and bound sockets made after the taint (shut at the next delivery), "
               "sockets in flight between "
               "processes outside the agent during the sweep, and (--kernel-only, "
               "no mncd sweep) UNIX connections made before the taint (needs the lsm backend: unix_may_send, "
               "socket_sendmsg); see docs/kernel.md");

    proc_visibility(); /* a host setting: reported attached or not */
    mnc_kern *k;
    if (mnc_kern_open(root, &k, err, sizeof(err)) != 0) {
        printf("attached:        no (%s)\n", err);
        printf("self-test:       not run (nothing attached)\n");
        return 1;
    }
    mnc_kern_status s;
    int ok = 0;
    if (mnc_kern_status_get(k, &s) == 0)
        printf("attached:        %d of %d links under %s, tree %s%s%s\n", s.n_links, s.n_links_expected,
               mnc_kern_root(k), mnc_kern_tree(k), s.missing[0] ? ", missing " : "", s.missing);
    warn_root_agents(k);
    mnc_selftest st;
    int rc = mnc_kern_selftest(k, &st);
    printf("self-test:       %s\n", rc == 0 ? "pass" : "FAIL");
    for (int i = 0; i < st.n; i++)
        printf("  %s %s\n", st.c[i].pass ? "pass" : "FAIL", st.c[i].name);
    for (int i = 0; i < st.n_not_run; i++)
        printf("  NOT RUN %s\n", st.not_run[i]);
    if (st.error[0])
        printf("  error: %s\n", st.error);
    ok = rc == 0 && s.n_links == s.n_links_expected && b > 0;
    mnc_kern_close(k);
    return ok ? 0 : 1;
}

MNCCTL_COMMAND(doctor_cmd, "doctor", "doctor [--pin-root DIR] [--backend auto|cgroup|lsm] [--policy F]...", cmd_doctor)
