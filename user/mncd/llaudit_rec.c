// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* llaudit_rec.c - reading one kernel audit record of a Landlock denial (llaudit.h, "records"):
 * the header, a field, an untrusted value (the kernel hex-encodes what it cannot print), and an
 * ACCESS record's object as keyed hashes. Everything here reads bytes an agent chose (paths,
 * names); nothing is interpreted beyond the kernel's key=value framing. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llaudit.h"

/* The serial and where the fields start, or NULL. */
const char *llr_header(const char *s, uint32_t *serial)
{
    if (strncmp(s, "audit(", 6) != 0)
        return NULL;
    const char *c = strchr(s, ':'), *e = strstr(s, "): ");
    if (!c || !e || c > e)
        return NULL;
    char *end;
    errno = 0;
    unsigned long v = strtoul(c + 1, &end, 10);
    if (errno || end != e || v > UINT32_MAX)
        return NULL;
    *serial = (uint32_t)v;
    return e + 3;
}

/* The raw value of `key` (a token "key=value"; values never contain spaces: the kernel quotes a
 * string only when it has no space, quote or control byte, and hex-encodes it otherwise).
 * Returns its length (cut to n-1) or -1 if absent. */
int llr_field(const char *f, const char *key, char *out, size_t n)
{
    size_t kl = strlen(key);
    for (const char *p = f; *p;) {
        while (*p == ' ')
            p++;
        const char *te = strchr(p, ' ');
        size_t tl = te ? (size_t)(te - p) : strlen(p);
        if (tl > kl && strncmp(p, key, kl) == 0 && p[kl] == '=') {
            size_t vl = tl - kl - 1;
            if (vl >= n)
                vl = n - 1;
            memcpy(out, p + kl + 1, vl);
            out[vl] = 0;
            return (int)vl;
        }
        p += tl;
    }
    return -1;
}

static int hexval(int c)
{
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
                                  : -1;
}

/* A field value as the kernel wrote it (raw, rl bytes): "quoted", hex-encoded (may_hex: only
 * string fields; ino=10952922 is a number) or plain, decoded into its bytes. Returns the length
 * (at most n). */
static size_t decode(const char *raw, size_t rl, bool may_hex, unsigned char *out, size_t n)
{
    bool hex = may_hex && rl >= 2 && rl % 2 == 0 && raw[0] != '"';
    for (size_t i = 0; hex && i < rl; i++)
        hex = hexval((unsigned char)raw[i]) >= 0;
    if (rl && raw[0] == '"') {
        raw++;
        rl = rl >= 2 && raw[rl - 2] == '"' ? rl - 2 : rl - 1;
    }
    size_t o = 0;
    for (size_t i = 0; i < rl && o < n; i += hex ? 2 : 1)
        out[o++] = hex ? (unsigned char)(hexval((unsigned char)raw[i]) * 16 + hexval((unsigned char)raw[i + 1]))
                       : (unsigned char)raw[i];
    return o;
}

/* An untrusted field value (raw, rl bytes, as in the record) as printable text (the blockers:
 * the kernel's names of access rights): decoded; an abstract socket name's leading NUL shown as
 * '@'; any byte outside 0x20..0x7e, and '"' and '\\', become '?'. A value cut at n - 1 bytes
 * ends in "...". */
void llr_untrusted(const char *raw, size_t rl, bool may_hex, char *out, size_t n)
{
    unsigned char b[LL_OBJ_MAX];
    size_t bl = decode(raw, rl, may_hex, b, sizeof(b)), o = 0, i = 0;
    for (; i < bl && o + 1 < n; i++) {
        int c = b[i] == 0 && o == 0 ? '@' : b[i];
        out[o++] = c >= 0x20 && c < 0x7f && c != '"' && c != '\\' ? (char)c : '?';
    }
    if (i < bl && o >= 3)
        memcpy(out + o - 3, "...", 3); /* cut: say so */
    out[o] = 0;
}

/* The object of an ACCESS record: every field but domain and blockers, each value as the keyed
 * hash of its bytes (mncd_hv: the path, name, inode or port is the agent's choice, and which of
 * several files it was refused would otherwise spell what it holds); names chosen by the
 * processes themselves (comm, ocomm) left out. `mncctl audit hash PATH` finds a path's records. */
void llr_object(mncd *d, const char *f, char *out, size_t n)
{
    size_t o = 0;
    out[0] = 0;
    for (const char *p = f; *p && o + 1 < n;) {
        while (*p == ' ')
            p++;
        const char *te = strchr(p, ' ');
        size_t tl = te ? (size_t)(te - p) : strlen(p);
        const char *eq = memchr(p, '=', tl);
        size_t kl = eq ? (size_t)(eq - p) : 0;
        char key[32], h[MNC_AUDIT_HV_MAX];
        unsigned char val[LL_OBJ_MAX];
        if (eq && kl < sizeof(key)) {
            memcpy(key, p, kl);
            key[kl] = 0;
            bool known = true;
            for (size_t i = 0; i < kl; i++)
                known &= (key[i] >= 'a' && key[i] <= 'z') || key[i] == '_';
            if (known && strcmp(key, "domain") && strcmp(key, "blockers") && strcmp(key, "comm") &&
                strcmp(key, "ocomm")) {
                bool str = !strcmp(key, "path") || !strcmp(key, "dev") || !strcmp(key, "name") || !strcmp(key, "exe");
                size_t vl = decode(eq + 1, tl - kl - 1, str, val, sizeof(val));
                int w = snprintf(out + o, n - o, "%s%s %s", o ? ", " : "", key, mncd_hv(d, val, vl, h));
                o = w < 0 ? o : o + (size_t)w >= n ? n - 1 : o + (size_t)w;
            }
        }
        p += tl;
    }
}
