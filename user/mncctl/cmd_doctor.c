/* cmd_doctor.c - `mncctl doctor [--pin-root DIR] [--backend auto|cgroup|lsm] [--policy F]...`:
 * what the kernel offers, which backend mnc would use (or why it refuses), what each hook
 * covers, the functional self-test of the attached programs, and (given the policy) the agents
 * marked "confinement": "none" (mncd delivers to them without kernel confinement). Exit 0 only
 * if enforcement is attached and its self-test passed. */
#include <stdio.h>
#include <string.h>

#include "mnc_kern.h"
#include "mncctl.h"
#include "util.h"

#define DOCTOR_MAX_POLICIES 16

/* Lists the policy's agents with "confinement": "none". Returns 0, or -1 if it does not load. */
static int show_confinement(const char *const *paths, int n)
{
    if (n == 0)
        return 0;
    mnc_policy *p = mncctl_load_policies(paths, n);
    if (!p)
        return -1;
    int none = 0;
    for (int i = 0; i < p->n_principals; i++)
        if (p->principals[i].cls == MNC_SINK_AGENT && p->principals[i].confinement_none)
            none++;
    if (!none) {
        printf("confinement:     kernel for every agent of the policy (with a kernel layer on, "
               "mncd delivers only to registered agent cgroups)\n");
    } else {
        printf("confinement:     NONE for %d agent(s): mncd delivers to them without kernel "
               "confinement (each delivery audited):", none);
        for (int i = 0; i < p->n_principals; i++)
            if (p->principals[i].cls == MNC_SINK_AGENT && p->principals[i].confinement_none)
                printf(" %s", p->principals[i].name);
        printf("\n");
    }
    mnc_policy_free(p);
    return 0;
}

static const char *yesno(bool b) { return b ? "yes" : "no"; }

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
    printf("  %-20s %s\n", "landlock (run)", "direct file writes/creates/links/renames outside the workspace -> EACCES");
    printf("  %-20s %s\n", "seccomp (run)", "SysV msg/shm, mq_*, socket(AF_PACKET), and bpf, perf_event_open, mounts, module/kexec "
           "loading, ioperm/iopl, clock setting, swap, reboot (no tampering with the maps) -> EPERM");
    if (b == (int)MNC_BACKEND_CGROUP)
        /* say what is NOT covered, so nobody reads the list above as complete */
        printf("  %-20s %s\n", "NOT COVERED",
               "UNIX listeners made after the taint, sockets in flight in SCM_RIGHTS, and (--kernel-only, "
               "no mncd sweep) UNIX connections made before the taint (needs the lsm backend: unix_may_send, "
               "socket_sendmsg); see docs/kernel.md");

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
    mnc_selftest st;
    int rc = mnc_kern_selftest(k, &st);
    printf("self-test:       %s\n", rc == 0 ? "pass" : "FAIL");
    for (int i = 0; i < st.n; i++)
        printf("  %s %s\n", st.c[i].pass ? "pass" : "FAIL", st.c[i].name);
    if (st.error[0])
        printf("  error: %s\n", st.error);
    ok = rc == 0 && s.n_links == s.n_links_expected && b > 0;
    mnc_kern_close(k);
    return ok ? 0 : 1;
}

MNCCTL_COMMAND(doctor_cmd, "doctor", "doctor [--pin-root DIR] [--backend auto|cgroup|lsm] [--policy F]...",
               cmd_doctor)
