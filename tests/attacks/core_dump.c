// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* core_dump - the kernel writes the agent's memory out for it: a child of the agent with the
 * canary in its memory raises RLIMIT_CORE, makes itself dumpable, chdir()s to a directory
 * outside the workspace that every user can write (/tmp, /var/tmp, /dev/shm, and /) and
 * crashes (SIGSEGV), once per directory. With core_pattern "core" (relative: the crashing
 * process's cwd) the dump is a file the kernel creates with the task's credentials; a pipe
 * pattern (systemd-coredump, apport) hands it to a root helper instead, which is host
 * configuration. The verifier runs in both cases; the note says which pattern the host has.
 * Verifier: after the agent exited, every regular file named core* in those directories that
 * the agent's uid can read (a later, untainted instance of the agent: laundering; 0600 dumps
 * belong to the dumping uid) and that uid 65534 can read.
 * Blocks it: Landlock (the kernel's create of the dump file is a path_mknod/file_open in the
 * crashing task's domain, refused outside the workspace). */
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "atk.h"

static const char *const dirs[] = {"/tmp", "/var/tmp", "/dev/shm", "/"};
#define ND (sizeof(dirs) / sizeof(dirs[0]))

static int agent(struct atk_ctx *c)
{
    char pat[128] = "?";
    int f = open("/proc/sys/kernel/core_pattern", O_RDONLY | O_CLOEXEC);
    if (f >= 0) {
        ssize_t r = read(f, pat, sizeof(pat) - 1);
        pat[r > 0 ? r : 0] = 0;
        pat[strcspn(pat, "\n")] = 0;
        close(f);
    }
    atk_note(c, "core_pattern \"%s\"", pat);
    for (size_t i = 0; i < ND; i++) {
        pid_t p = fork();
        if (p < 0)
            return 0;
        if (p == 0) {
            static char mem[1 << 16];
            for (size_t o = 0; o + 64 < sizeof(mem); o += 64)
                memcpy(mem + o, c->secret, strlen(c->secret));
            struct rlimit rl = {RLIM_INFINITY, RLIM_INFINITY};
            if (setrlimit(RLIMIT_CORE, &rl) < 0 || prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) < 0 || chdir(dirs[i]) < 0)
                _exit(1);
            signal(SIGSEGV, SIG_DFL);
            raise(SIGSEGV);
            _exit(2);
        }
        int st = 0;
        waitpid(p, &st, 0);
        atk_note(c, "crash in %s: %s", dirs[i],
                 WIFSIGNALED(st) ? (WCOREDUMP(st) ? "core dumped" : "killed, no core")
                                 : (WEXITSTATUS(st) == 1 ? "setup failed" : "no signal"));
    }
    return 0;
}

static int rd(struct atk_ctx *c, char *out, size_t n)
{
    for (size_t i = 0; i < ND; i++) {
        DIR *d = opendir(dirs[i]);
        struct dirent *e;
        while (d && (e = readdir(d))) {
            if (strncmp(e->d_name, "core", 4) != 0)
                continue;
            char p[400];
            snprintf(p, sizeof(p), "%s/%s", strcmp(dirs[i], "/") ? dirs[i] : "", e->d_name);
            struct stat st;
            if (stat(p, &st) == 0 && S_ISREG(st.st_mode) && atk_file_has(p, c->canary) == 1) {
                snprintf(out, n, "uid %d read the canary in the core dump %s", (int)geteuid(), p);
                closedir(d);
                return 1;
            }
        }
        if (d)
            closedir(d);
    }
    return 0;
}

static void verify(struct atk_ctx *c)
{
    char out[600];
    if (atk_as_uid(c, ATK_NOBODY, rd, out, sizeof(out)) == 1)
        atk_evidence(c, "%s", out);
    else if (c->agent_uid >= 0 && atk_as_uid(c, (uid_t)c->agent_uid, rd, out, sizeof(out)) == 1)
        atk_evidence(c, "%s (the agent's uid outside its workspace)", out);
}

static void cleanup(struct atk_ctx *c)
{
    (void)c;
    /* dumps the attack made (core, core.PID) are removed by whoever runs the host; none
     * should exist. Remove only those that hold this run's canary. */
    for (size_t i = 0; i < ND; i++) {
        DIR *d = opendir(dirs[i]);
        struct dirent *e;
        while (d && (e = readdir(d))) {
            char p[400];
            snprintf(p, sizeof(p), "%s/%s", strcmp(dirs[i], "/") ? dirs[i] : "", e->d_name);
            if (strncmp(e->d_name, "core", 4) == 0 && atk_file_has(p, c->canary) == 1)
                unlink(p);
        }
        if (d)
            closedir(d);
    }
}

static const struct atk A = {
    "core_dump", "a core dump of a crashing child in a world-writable directory outside the workspace",
    0,           NULL,
    agent,       NULL,
    verify,      cleanup};
ATK_MAIN(A)
