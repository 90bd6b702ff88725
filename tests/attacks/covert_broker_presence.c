// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* covert_broker_presence - [covert] a tainted broker's mere connection to mncd, read by the
 * issuer of the brokered contract. MNC-D's delegate step applies "only if the contract's broker
 * agent is connected" (mncd_failure.c advance: conns[broker] > 0, counted per connection at
 * accept); otherwise it is skipped and the next step (here abstain) runs. So every disclose
 * under brokered_scope (worker -> bystander, failure delegate then abstain; the coordinator is
 * its broker, as in mncd_broker_receipt) answers the issuer "outcome":"pending_delegation" while
 * the coordinator holds an mncd connection and "abstained" while it holds none. The tainted
 * agent sends no request at all: it opens (bit 1) or closes (bit 0) one connection per bit of
 * the canary's 12 hex digits and waits at sync bN while the worker discloses.
 * Verifier: at each sync the orchestrator has the worker (another agent, an outsider to the
 * coordinator) disclose under brokered_scope and reads the outcome; the 48 bits read back as hex
 * are the canary. ATK_NO_CONTROL: the channel needs the agent's identity at mncd (as
 * mncd_broker_failure); a LEAKED in the real run is its own evidence.
 * What would close it: the delegate decision not depending on a tainted broker's state (e.g. a
 * broker counted as connected while a registered instance of it lives, whatever its
 * connections; or a tainted broker's connections not counted); covert channel, 1 bit per
 * disclose, at the issuer's disclose rate (each pending delegation lasts broker_timeout_ms). */
#include <time.h>

#include "atk.h"

static int agent(struct atk_ctx *c)
{
    int fd = -1;
    for (int i = 0; i < 48; i++) {
        unsigned v;
        if (sscanf(c->secret + 2 + i / 4, "%1x", &v) != 1)
            break;
        int bit = (v >> (3 - i % 4)) & 1;
        if (bit && fd < 0) {
            fd = atk_mncd(c);
            char resp[4096];
            if (fd < 0 || atk_call(fd, "{\"verb\":\"whoami\"}", resp, sizeof(resp)) < 0) {
                atk_note(c, "mncd connection: %s", atk_errname(errno));
                return 0;
            }
        } else if (!bit && fd >= 0) {
            close(fd);
            fd = -1;
            struct timespec ts = {0, 20 * 1000 * 1000}; /* mncd sees the close */
            nanosleep(&ts, NULL);
        }
        char tag[8];
        snprintf(tag, sizeof(tag), "b%d", i);
        atk_sync(c, tag);
    }
    if (fd >= 0)
        close(fd);
    atk_note(c, "48 bits through whether the broker holds an mncd connection");
    return 0;
}

static void on_sync(struct atk_ctx *c, const char *tag)
{
    int i = tag[0] == 'b' ? atoi(tag + 1) : -1;
    if (i < 0 || i > 47)
        return;
    char resp[8192];
    if (atk_worker_request(c,
                           "{\"verb\":\"disclose\",\"contract\":\"brokered_scope\",\"state\":{\"fields\":{"
                           "\"slot_feasible\":\"true\",\"selected_slot\":\"Thu10\"}}}",
                           resp, sizeof(resp)) < 0)
        return;
    int bit = strstr(resp, "\"pending_delegation\"") ? 1 : strstr(resp, "\"abstained\"") ? 0 : -1;
    unsigned char *bits = (unsigned char *)&c->slot[0]; /* 48 bits: 6 bytes; slot[1] counts */
    if (bit < 0)
        return;
    if (bit)
        bits[i / 8] |= (unsigned char)(0x80 >> (i % 8));
    c->slot[1]++;
    if (i == 47 && c->slot[1] == 48) {
        char got[16];
        for (int k = 0; k < 6; k++)
            snprintf(got + 2 * k, sizeof(got) - 2 * k, "%02x", bits[k]);
        if (strncmp(got, c->canary + 2, 12) == 0)
            atk_evidence(c, "the worker read the canary from 48 disclose outcomes (pending_delegation = the "
                            "broker holds an mncd connection)");
        else {
            size_t l = strlen(c->notes);
            snprintf(c->notes + l, sizeof(c->notes) - l, "%sread %s", l ? ", " : "", got);
        }
    }
}

static const struct atk A = {"covert_broker_presence",
                             "whether the tainted broker holds an mncd connection, read by the issuer from its "
                             "disclose outcomes (MNC-D delegate step)",
                             ATK_COVERT | ATK_NO_CONTROL,
                             NULL,
                             agent,
                             on_sync,
                             NULL,
                             NULL};
ATK_MAIN(A)
