// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* eventfd_shared - an eventfd the agent made, held outside too. Before its recv the agent
 * (untainted: it may talk to anyone) creates an eventfd and passes it to an outsider (uid 65534,
 * DIR/ev.sock), keeping its own copy: one open file, two holders. After the taint it adds the
 * canary's 48-bit value to the counter with write(2), which no hook judges.
 * Verifier: the outsider, asked after the agent exited, reads the counter (read(2) returns it).
 * Blocks it: mncd's fd scan (held_outside) finds the outsider holding the same open file as the
 * agent (kcmp KCMP_FILE against mncd's copy): every anonymous-inode file on the host shares one
 * inode, so only the open file description tells the agent's eventfd from systemd's. */
#include <stdint.h>
#include <sys/eventfd.h>

#include "atk_variants.h"

static void outsider(const struct atk_ctx *c, const char *path, int cmd, int ans)
{
    (void)c;
    int fd = atkv_keeper_take_as_nobody(path, ans);
    atkv_keeper_wait_asked(cmd);
    uint64_t v = 0;
    char buf[32];
    int n = 0;
    if (read(fd, &v, sizeof(v)) == (ssize_t)sizeof(v))
        n = snprintf(buf, sizeof(buf), "mk%012llx", (unsigned long long)v);
    atkv_keeper_answer(ans, buf, (size_t)(n > 0 ? n : 0));
}

static int make(void) { return eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK); }

static void use(struct atk_ctx *c, int fd)
{
    uint64_t v = atkv_canary_value(c->secret);
    atk_try(c, "write the canary's value to the eventfd", write(fd, &v, sizeof(v)));
}

static int prepare(struct atk_ctx *c) { return atkv_keeper_start_at(c, "ev", outsider, "1 drop, 2 listen, 3 take"); }
static int agent(struct atk_ctx *c) { return atkv_object_out_agent(c, "ev", "eventfd", make, use); }
static void verify(struct atk_ctx *c) { atkv_keeper_verify(c, "the counter of an eventfd the outsider also holds"); }

static const struct atk A = {"eventfd_shared",
                             "an eventfd passed out before the taint, written after",
                             ATK_NO_RECV,
                             prepare,
                             agent,
                             NULL,
                             verify,
                             atkv_keeper_cleanup};
ATK_MAIN(A)
