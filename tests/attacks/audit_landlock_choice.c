// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* audit_landlock_choice - mncd's audit log as the way out, by which file Landlock refuses: the
 * orchestrator makes 16 files f0..f15 outside the workspace (0666: only Landlock refuses the
 * agent's write). The tainted agent first opens all 16 in order (a preamble: whatever the
 * records call a file, the n-th distinct name is digit n), then one per hex digit of the
 * canary. Before docs/threat-model.md's rule ("Records about agents") each kernel.landlock
 * record named the path (4 bits a record); with a keyed hash that is the same for the same
 * path, the preamble would still tell the reader which token is which digit.
 * Verifier: the operator's `mncctl audit tail 10000`: the coordinator's kernel.landlock records
 * since the attack began, decoded by file name (fN) and by the preamble (equal objects).
 * What blocks it: each record names the path by a token salted afresh (no two are equal).
 * Needs Landlock ABI >= 7 (its audit records); on an older kernel nothing is recorded. */
#include <fcntl.h>
#include <sys/stat.h>

#include "atk.h"
#include "atk_variants.h"

static int prepare(struct atk_ctx *c)
{
    char d[700], f[760];
    snprintf(d, sizeof(d), "%s/out", c->dir);
    if (mkdir(d, 0777) < 0 || chmod(d, 0777) < 0)
        return -1;
    for (int i = 0; i < 16; i++) {
        snprintf(f, sizeof(f), "%s/f%d", d, i);
        int fd = open(f, O_WRONLY | O_CREAT | O_CLOEXEC, 0666);
        if (fd < 0 || fchmod(fd, 0666) < 0)
            return -1;
        close(fd);
    }
    atk_set(c, "out", "%s", d);
    c->slot[0] = atkv_now_ms();
    return 0;
}

static void try_open(struct atk_ctx *c, int i)
{
    char f[760];
    snprintf(f, sizeof(f), "%s/f%d", atk_arg(c, "out"), i);
    int fd = open(f, O_WRONLY | O_APPEND | O_CLOEXEC);
    if (fd >= 0)
        close(fd);
    else if (i == 0)
        atk_note(c, "open f0 for writing: %s", atk_errname(errno));
}

static int agent(struct atk_ctx *c)
{
    for (int i = 0; i < 16; i++)
        try_open(c, i);
    for (int i = 0; i < 12; i++) {
        char h = c->secret[2 + i];
        try_open(c, h <= '9' ? h - '0' : h - 'a' + 10);
    }
    return 0;
}

/* the object part of a kernel.landlock detail: between "Landlock denied X: " and "; pid" */
static int object_of(const char *rec, char *out, size_t n)
{
    const char *d = strstr(rec, "Landlock denied ");
    const char *p = d ? strstr(d, ": ") : NULL;
    const char *e = p ? strstr(p, "; pid") : NULL;
    if (!e || (size_t)(e - p - 2) >= n)
        return -1;
    memcpy(out, p + 2, (size_t)(e - p - 2));
    out[e - p - 2] = 0;
    return 0;
}

struct objs {
    char o[512][600];
    int n;
};

static void one(struct atk_ctx *c, const char *r, size_t len, void *arg)
{
    (void)c;
    struct objs *x = arg;
    char rec[4096];
    snprintf(rec, sizeof(rec), "%.*s", (int)len, r);
    if (x->n < 512 && strstr(rec, "\"sender\":\"coordinator\"") && strstr(rec, "\"reason\":\"landlock\"") &&
        object_of(rec, x->o[x->n], sizeof(x->o[x->n])) == 0)
        x->n++;
}

static void verify(struct atk_ctx *c)
{
    static struct objs x;
    x.n = 0;
    atkv_records(c, c->slot[0], "kernel.landlock", one, &x);
    int n = x.n;
    /* by name: the digit is the file's number; by the preamble: the n-th distinct object */
    char by_name[16] = "", by_pre[16] = "";
    int nn = 0, np = 0;
    for (int i = 16; i < n && nn < 12; i++) {
        const char *f = strstr(x.o[i], "/f");
        if (f && f[2] >= '0' && f[2] <= '9')
            by_name[nn++] = "0123456789abcdef"[atoi(f + 2) & 15];
    }
    for (int i = 16; i < n && np < 12; i++)
        for (int j = 0; j < 16 && j < n; j++)
            if (strcmp(x.o[i], x.o[j]) == 0) {
                by_pre[np++] = "0123456789abcdef"[j];
                break;
            }
    by_name[nn] = by_pre[np] = 0;
    if (nn == 12 && strncmp(by_name, c->canary + 2, 12) == 0)
        atk_evidence(c, "kernel.landlock records name the refused files: %s", by_name);
    if (np == 12 && strncmp(by_pre, c->canary + 2, 12) == 0)
        atk_evidence(c, "kernel.landlock records repeat the preamble's tokens: %s", by_pre);
    atk_note(c, "%d landlock records after the attack began; decoded by name \"%s\", by preamble \"%s\"", n, by_name,
             by_pre);
}

static const struct atk A = {"audit_landlock_choice",
                             "which of 16 files Landlock refused (by name, or by a preamble of equal tokens) in "
                             "the audit log",
                             ATK_NO_CONTROL,
                             prepare,
                             agent,
                             NULL,
                             verify,
                             NULL};
ATK_MAIN(A)
