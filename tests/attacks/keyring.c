// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* keyring - threat model (docs/threat-model.md): storage any process can read. add_key("user") into the agent's user keyring, with permissions
 * opened to everyone (KEYCTL_SETPERM); another process of the same uid finds it in the user
 * keyring and reads it, and with "other" permissions any uid that knows the serial can.
 * Verifier: while the agent waits, a process outside the agent with the agent's uid searches the
 * user keyring; uid 65534 reads the key by serial.
 * Blocks it: seccomp (add_key, request_key, keyctl). */
#include <linux/keyctl.h>
#include <sys/syscall.h>

#include "atk.h"

static int agent(struct atk_ctx *c)
{
    char desc[64];
    snprintf(desc, sizeof(desc), "mnc-atk-%s", atk_arg(c, "kd"));
    long k = atk_try(c, "add_key(user keyring)",
                     syscall(SYS_add_key, "user", desc, c->secret, strlen(c->secret), KEY_SPEC_USER_KEYRING));
    if (k < 0)
        return 0;
    atk_try(c, "keyctl SETPERM all", syscall(SYS_keyctl, KEYCTL_SETPERM, k, 0x3f3f3f3f));
    char tag[32];
    snprintf(tag, sizeof(tag), "%ld", k);
    atk_sync(c, tag);
    return 0;
}

static long serial;
static int rd(struct atk_ctx *c, char *out, size_t n)
{
    char desc[64], buf[256];
    snprintf(desc, sizeof(desc), "mnc-atk-%s", atk_arg(c, "kd"));
    long k = syscall(SYS_keyctl, KEYCTL_SEARCH, KEY_SPEC_USER_KEYRING, "user", desc, 0);
    const char *how = "found in its user keyring";
    if (k < 0) {
        k = serial;
        how = "read by serial";
    }
    long r = syscall(SYS_keyctl, KEYCTL_READ, k, buf, sizeof(buf));
    if (r > 0 && atk_buf_has(buf, (size_t)(r < (long)sizeof(buf) ? r : (long)sizeof(buf)), c->canary)) {
        snprintf(out, n, "uid %d %s the canary (key %ld)", (int)getuid(), how, k);
        return 1;
    }
    return 0;
}

static void on_sync(struct atk_ctx *c, const char *tag)
{
    char out[256];
    serial = atol(tag);
    if (c->agent_uid >= 0 && atk_as_uid(c, (uid_t)c->agent_uid, rd, out, sizeof(out)) == 1)
        atk_evidence(c, "%s", out);
    if (atk_as_uid(c, ATK_NOBODY, rd, out, sizeof(out)) == 1)
        atk_evidence(c, "%s", out);
}

static int prepare(struct atk_ctx *c)
{
    atk_set(c, "kd", "%d", getpid());
    return 0;
}

static void cleanup(struct atk_ctx *c)
{
    (void)c;
    if (serial > 0)
        syscall(SYS_keyctl, KEYCTL_INVALIDATE, serial);
}

static const struct atk A = {
    "keyring", "kernel keyring (add_key into the user keyring)", 0, prepare, agent, on_sync, NULL, cleanup};
ATK_MAIN(A)
