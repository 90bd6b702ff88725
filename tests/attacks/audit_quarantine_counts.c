// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* audit_quarantine_counts - mncd's audit log as the way out, by how much a tainted agent writes:
 * its stdout is withheld (the launcher's relay files it in mncd's quarantine), but each
 * quarantine record used to give the chunk's byte count. The agent writes one chunk per hex
 * digit of the canary, digit + 1 bytes long, pausing so that each is filed on its own.
 * Verifier: the operator's `mncctl audit tail 10000`: the quarantine records since the attack
 * began, each one's count (a number before "byte", "kept" or "withheld") read as digit + 1.
 * What blocks it: quarantine records give no byte counts, only whether all was kept. */
#include <time.h>

#include "atk.h"
#include "atk_variants.h"

static int prepare(struct atk_ctx *c)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    c->slot[0] = (long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
    return 0;
}

static int agent(struct atk_ctx *c)
{
    static const char xs[] = "xxxxxxxxxxxxxxxxx";
    for (int i = 0; i < 12; i++) {
        char h = c->secret[2 + i];
        int d = h <= '9' ? h - '0' : h - 'a' + 10;
        if (write(1, xs, (size_t)d + 1) < 0)
            atk_note(c, "write: %s", atk_errname(errno));
        usleep(150000);
    }
    return 0;
}

/* the first number in a record's detail that counts something ("N byte(s)", "N kept", ...) */
static long count_in(const char *r, size_t len)
{
    const char *d = memmem(r, len, "\"detail\":\"", 10);
    if (!d)
        return -1;
    for (const char *p = d + 10; p < r + len && *p != '"'; p++)
        if (*p >= '0' && *p <= '9' && (p[-1] == ' ' || p[-1] == '(' || p[-1] == ':')) {
            char *e;
            long v = strtol(p, &e, 10);
            if (*e == ' ' &&
                (strncmp(e, " byte", 5) == 0 || strncmp(e, " kept", 5) == 0 || strncmp(e, " withheld", 9) == 0))
                return v;
        }
    return -1;
}

static void verify(struct atk_ctx *c)
{
    char path[700];
    const char *const args[] = {"audit", "tail", "10000", NULL};
    if (atkv_admin(c, "audit.out", args, path, sizeof(path)) < 0)
        return;
    char *t = atkv_slurp(path, NULL);
    if (!t)
        return;
    char dec[64] = "";
    int n = 0, k = 0;
    for (char *r = strstr(t, "{\"seq\":"); r; r = strstr(r + 1, "{\"seq\":")) {
        char *end = strstr(r + 1, "{\"seq\":");
        size_t len = end ? (size_t)(end - r) : strlen(r);
        const char *tm = strstr(r, "\"time\":");
        if (!tm || atoll(tm + 7) < c->slot[0] || !memmem(r, len, "\"op\":\"quarantine\"", 17))
            continue;
        n++;
        long v = count_in(r, len);
        if (v >= 1 && v <= 16 && k < 60)
            dec[k++] = "0123456789abcdef"[v - 1];
    }
    dec[k] = 0;
    free(t);
    if (strstr(dec, c->canary + 2))
        atk_evidence(c, "quarantine records count the chunks: digits %s", dec);
    atk_note(c, "%d quarantine records after the attack began, counts decoded \"%s\"", n, dec);
}

static const struct atk A = {"audit_quarantine_counts",
                             "byte counts of withheld output chunks in quarantine records",
                             ATK_NO_CONTROL,
                             prepare,
                             agent,
                             NULL,
                             verify,
                             NULL};
ATK_MAIN(A)
