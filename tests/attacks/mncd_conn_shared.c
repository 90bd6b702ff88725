// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* mncd_conn_shared - the agent's own mncd connection, also held by an outsider, carries the
 * delivery. Before its recv the agent (untainted: it may talk to anyone) connects to mncd and
 * hands a copy of that connected socket to an outsider (uid 65534, DIR/mc.sock), which keeps it
 * and reads from it. Then the agent sends {"verb":"recv"} on the connection and does not read:
 * the request's bytes are the agent's (per-message credentials: mncd identifies the agent,
 * confined, and delivers), and the answer, with the object's values, is queued on a socket the
 * outsider reads. lend_mncd_conn is the other direction (the outsider writes on the agent's
 * connection and is identified as itself). mncd's sweep keeps a connection whose peer is mncd
 * ("the monitor") without asking who else holds the agent's end; the host pass looks for
 * outside holders of the agent's socket pairs only.
 * Verifier: the outsider, asked after the agent exited, hands over what follows
 * "selected_slot" in what it read from the connection.
 * Blocks it: mncd's fd scan looks for every socket of the agent (by its sockfs inode) among the
 * fds of processes outside the agent: the outsider holding the agent's mncd connection makes it
 * held_outside and the delivery is refused (mncd holds only its own end, another inode). */
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "atk_variants.h"

static void outsider(const struct atk_ctx *c, const char *path, int cmd, int ans)
{
    (void)c;
    int m = atkv_keeper_take_as_nobody(path, ans);
    static char buf[1 << 17];
    atkv_keeper_read_until_asked(m, cmd, buf, sizeof(buf));
    const char *v = strstr(buf, "\"selected_slot\":\"");
    if (v && write(ans, v, strnlen(v, 64)) < 0)
        _exit(1);
    _exit(0);
}

static int prepare(struct atk_ctx *c)
{
    return atkv_keeper_start_at(c, "mc", outsider, "1 drop to 65534, 2 listen, 3 take the connection");
}

static int agent(struct atk_ctx *c)
{
    if (getenv("ATK_CONTROL_SECRET")) /* positive control: the value goes on the outsider's copy */
        return atkv_control_pair_agent(c, "mc", "{\"selected_slot\":\"", "\"}\n");
    int m = (int)atk_try(c, "connect mncd", atk_mncd(c));
    if (atkv_hand_to_keeper(c, "mc", m, 'L', "hand a copy of the mncd connection to the outsider",
                            "outsider holds it") < 0)
        return 0;
    atk_say(c, "hold recv"); /* the orchestrator closes the control file and says go */
    char line[16];
    if (!fgets(line, sizeof(line), stdin))
        exit(4);
    const char *req = "{\"verb\":\"recv\"}\n";
    atk_try(c, "send recv on the shared connection (and do not read)", write(m, req, strlen(req)));
    sleep(2);              /* the outsider reads the answer */
    atk_say(c, "recv ok"); /* delivered or not, the verdict is what the outsider read */
    return 0;
}

static void verify(struct atk_ctx *c)
{
    atkv_keeper_verify(c, "the recv answer, read by an outsider holding the agent's own mncd connection");
}

static const struct atk A = {"mncd_conn_shared",
                             "the agent's mncd connection also held by an outsider, which reads the recv answer",
                             ATK_NO_RECV,
                             prepare,
                             agent,
                             NULL,
                             verify,
                             atkv_keeper_cleanup};
ATK_MAIN(A)
