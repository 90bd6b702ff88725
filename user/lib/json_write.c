// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* json_write.c - see json_write.h. */
#include "json_write.h"

#include <stdio.h>
#include <string.h>

cJSON *mnc_json_add_u64(cJSON *o, const char *name, uint64_t v)
{
    char buf[24];
    snprintf(buf, sizeof(buf), "%llu", (unsigned long long)v);
    return cJSON_AddRawToObject(o, name, buf);
}

size_t mnc_json_str_len(const char *s)
{
    if (!s)
        return 4;
    size_t n = 2;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\' || *p == '\b' || *p == '\f' || *p == '\n' || *p == '\r' || *p == '\t')
            n += 2;
        else if (*p < 0x20)
            n += 6;
        else
            n++;
    }
    return n;
}

size_t mnc_json_put_str(char *out, const char *s)
{
    if (!s) {
        memcpy(out, "null", 4);
        return 4;
    }
    static const char hx[] = "0123456789abcdef";
    char *o = out;
    *o++ = '"';
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        unsigned char c = *p;
        if (c >= 0x20 && c != '"' && c != '\\') {
            *o++ = (char)c;
            continue;
        }
        *o++ = '\\';
        switch (c) {
        case '"':
        case '\\':
            *o++ = (char)c;
            break;
        case '\b':
            *o++ = 'b';
            break;
        case '\f':
            *o++ = 'f';
            break;
        case '\n':
            *o++ = 'n';
            break;
        case '\r':
            *o++ = 'r';
            break;
        case '\t':
            *o++ = 't';
            break;
        default:
            memcpy(o, "u00", 3);
            o[3] = hx[c >> 4];
            o[4] = hx[c & 15];
            o += 5;
        }
    }
    *o++ = '"';
    return (size_t)(o - out);
}

size_t mnc_json_put_u64(char *out, uint64_t v)
{
    char t[20];
    size_t n = 0;
    do {
        t[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    for (size_t i = 0; i < n; i++)
        out[i] = t[n - 1 - i];
    return n;
}
