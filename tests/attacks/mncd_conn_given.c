// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* mncd_conn_given - mncd_conn_shared the other way round: the outsider's own mncd connection,
 * handed IN to the agent. An outsider (uid 65534) connects to mncd itself and, before the
 * agent's recv, gives the agent a copy of that connection (DIR/mg2.sock; the agent is
 * untainted and may talk to anyone), keeping its own and reading from it. The agent sends
 * {"verb":"recv"} on it and does not read: mncd identifies each request line by its writer
 * (per-message credentials: the agent, confined) and delivers; the answer is queued on the
 * outsider's connection. Nothing leaves the agent by SCM_RIGHTS, so refusing fds passed out
 * would not close this; mncd's sweep keeps a connection whose peer is mncd ("the monitor")
 * before it asks who created the socket (a UNIX socket created outside the agent is otherwise
 * shut) or who else holds it.
 * Verifier: the outsider, asked after the agent exited, hands over what follows
 * "selected_slot" in what it read from its connection (the positive control has mncd echo the
 * value as a request id instead).
 * Blocks it: mncd's fd scan looks for every socket of the agent (by its sockfs inode) among the
 * fds of processes outside the agent: the outsider still holds the connection it gave, so it is
 * held_outside and the delivery is refused. */
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "atk_variants.h"

static void outsider(const struct atk_ctx *c, const char *path, int cmd, int ans)
{
    const char *sock = atk_arg((struct atk_ctx *)c, "sock");
    int l = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
    if (!sock || l < 0 || bind(l, (struct sockaddr *)&sa, sizeof(sa)) < 0 || chmod(path, 0777) < 0 || listen(l, 4) < 0)
        _exit(2);
    atkv_keeper_nobody();
    int m = atk_unix(SOCK_STREAM, sock); /* the outsider's own connection to mncd */
    if (m < 0)
        _exit(4);
    if (write(ans, "r", 1) != 1)
        _exit(1);
    int s = accept4(l, NULL, NULL, SOCK_CLOEXEC);
    if (s < 0 || atk_send_fds(s, 'L', &m, 1) < 0)
        _exit(3);
    char x;
    if (read(s, &x, 1) < 0) /* the agent closes its side once it has the connection */
        _exit(3);
    close(s);
    close(l);
    static char buf[1 << 17];
    atkv_keeper_read_until_asked(m, cmd, buf, sizeof(buf));
    const char *v = strstr(buf, "\"selected_slot\":\"");
    if (!v)
        v = strstr(buf, "\"id\":\""); /* the positive control's echo */
    if (v && write(ans, v, strnlen(v, 64)) < 0)
        _exit(1);
    _exit(0);
}

static int prepare(struct atk_ctx *c)
{
    char k[700];
    snprintf(k, sizeof(k), "%s/mg2.sock", c->dir);
    atk_set(c, "mg2", "%s", k);
    return atkv_keeper_start(
        c, k, outsider,
        "1 drop to 65534, 2 listen (or no sock= argument), 3 give the connection, 4 connect mncd as 65534");
}

static int agent(struct atk_ctx *c)
{
    int s = (int)atk_try(c, "connect the outsider", atk_unix(SOCK_STREAM, atk_arg(c, "mg2")));
    if (s < 0)
        return 0;
    int m = -1;
    if (atk_try(c, "take the outsider's mncd connection", atk_recv_fds(s, &m, 1) == 1 ? 0 : -1) < 0)
        return 0;
    close(s);
    if (getenv("ATK_CONTROL_SECRET")) { /* positive control: mncd echoes "id" on that connection */
        atk_recv(c);
        char req[300];
        int n = snprintf(req, sizeof(req), "{\"verb\":\"whoami\",\"id\":\"%.200s\"}\n", c->secret);
        atk_try(c, "whoami with the value as its id", write(m, req, (size_t)n));
        sleep(1);
        return 0;
    }
    atk_say(c, "hold recv"); /* the orchestrator closes the control file and says go */
    char line[16];
    if (!fgets(line, sizeof(line), stdin))
        exit(4);
    const char *req = "{\"verb\":\"recv\"}\n";
    atk_try(c, "send recv on the outsider's connection (and do not read)", write(m, req, strlen(req)));
    sleep(2);              /* the outsider reads the answer */
    atk_say(c, "recv ok"); /* delivered or not, the verdict is what the outsider read */
    return 0;
}

static void verify(struct atk_ctx *c)
{
    atkv_keeper_verify(c, "the recv answer, read by the outsider whose mncd connection the agent used");
}

static const struct atk A = {
    "mncd_conn_given",
    "an outsider's mncd connection handed in; the agent recvs on it, the outsider reads the answer",
    ATK_NO_RECV,
    prepare,
    agent,
    NULL,
    verify,
    atkv_keeper_cleanup};
ATK_MAIN(A)
