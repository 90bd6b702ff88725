// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* state.c - a subject's private state (field -> literal value), parsed strictly.
 *
 * Values are kept as text because every consumer (templates, the exposure scan, the ledger)
 * works on the literal that would be disclosed: a number or boolean is stored as its JSON
 * spelling ("42", "true").
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "mnc/state.h"

void mnc_state_init(mnc_state *s) { memset(s, 0, sizeof(*s)); }

void mnc_state_free(mnc_state *s)
{
    for (int i = 0; i < MNC_MAX_FIELDS; i++) /* most are NULL: no call for those */
        if (s->value[i])
            free(s->value[i]);
    mnc_state_init(s);
}

int mnc_state_set(mnc_state *s, int field, const char *value)
{
    if (!s || !value || field < 0 || field >= MNC_MAX_FIELDS)
        return -1;
    char *v = strdup(value);
    if (!v)
        return -1;
    free(s->value[field]);
    s->value[field] = v;
    mnc_set_add(&s->present, (unsigned)field);
    return 0;
}

/* Escapes an untrusted key for an error message (control, quote, backslash and non-ASCII bytes
 * become \xNN) so that a hostile key cannot forge or break a message line; cut when long. */
static void esc(char *out, size_t n, const char *key)
{
    size_t o = 0;
    for (size_t i = 0; key[i] && o + 5 < n; i++) {
        unsigned char c = (unsigned char)key[i];
        if (c < 0x20 || c >= 0x7f || c == '"' || c == '\\') {
            static const char hex[] = "0123456789abcdef";
            out[o++] = '\\';
            out[o++] = 'x';
            out[o++] = hex[c >> 4];
            out[o++] = hex[c & 15];
        } else {
            out[o++] = (char)c;
        }
    }
    out[o] = '\0';
}

/* The JSON path of field key: fields.NAME, or fields["..."] for keys that are not names. */
static void key_path(char *out, size_t n, const char *key)
{
    char e[128];
    esc(e, sizeof(e), key);
    if (mnc_name_valid(key))
        snprintf(out, n, "fields.%s", e);
    else
        snprintf(out, n, "fields[\"%s\"]", e);
}

int mnc_state_from_json(const mnc_policy *p, const cJSON *j, mnc_state *s, const char *where, mnc_errors *errs)
{
    int before = errs->n;
    const char *w = where ? where : "(state)";
    mnc_state_init(s);
    if (!p) {
        mnc_errors_add(errs, "%s: $: no policy", w);
        return -1;
    }
    if (!cJSON_IsObject(j)) {
        mnc_errors_add(errs, "%s: $: expected a state object {\"subject\": ..., \"fields\": {...}}", w);
        return -1;
    }
    for (const cJSON *k = j->child; k; k = k->next) {
        if (!k->string || (strcmp(k->string, "subject") != 0 && strcmp(k->string, "fields") != 0)) {
            char e[128];
            esc(e, sizeof(e), k->string ? k->string : "");
            mnc_errors_add(errs, "%s: $: unknown key \"%s\"", w, e);
        }
    }
    const cJSON *sub = cJSON_GetObjectItemCaseSensitive(j, "subject");
    if (sub) {
        if (!cJSON_IsString(sub) || !mnc_name_valid(sub->valuestring))
            mnc_errors_add(errs, "%s: subject: expected a name (1-63 characters of A-Z a-z 0-9 _ . : -)", w);
        else
            memcpy(s->subject, sub->valuestring, strlen(sub->valuestring) + 1);
    }
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(j, "fields");
    if (!f) {
        mnc_errors_add(errs, "%s: $: missing required key \"fields\"", w);
    } else if (!cJSON_IsObject(f)) {
        mnc_errors_add(errs, "%s: fields: expected an object of field values", w);
    } else {
        for (const cJSON *v = f->child; v; v = v->next) {
            /* the key's path, for error messages only: printed when one is written */
            char kp[160];
            const char *key = v->string ? v->string : "";
#define KP (key_path(kp, sizeof(kp), key), kp)
            int id = mnc_policy_field(p, key);
            if (id < 0) {
                mnc_errors_add(errs, "%s: %s: unknown field (not declared by the policy)", w, KP);
                continue;
            }
            if (mnc_set_has(&s->present, (unsigned)id)) {
                mnc_errors_add(errs, "%s: %s: duplicate key", w, KP);
                continue;
            }
            /* the value's text, copied once by mnc_state_set */
            const char *text = NULL;
            char *printed = NULL;
            if (cJSON_IsString(v)) {
                if (!mnc_utf8_valid(v->valuestring, strlen(v->valuestring))) {
                    mnc_errors_add(errs, "%s: %s: value is not valid UTF-8", w, KP);
                    continue;
                }
                text = v->valuestring;
            } else if (cJSON_IsNumber(v)) {
                if (!isfinite(v->valuedouble)) {
                    mnc_errors_add(errs, "%s: %s: number is not finite", w, KP);
                    continue;
                }
                text = printed = cJSON_PrintUnformatted(v);
            } else if (cJSON_IsBool(v)) {
                text = cJSON_IsTrue(v) ? "true" : "false";
            } else {
                mnc_errors_add(errs, "%s: %s: expected a string, number or boolean", w, KP);
                continue;
            }
            if (!text) {
                mnc_errors_add(errs, "%s: %s: out of memory", w, KP);
                continue;
            }
            int r = mnc_state_set(s, id, text);
            cJSON_free(printed); /* allocated with cJSON's hooks */
            if (r != 0)
                mnc_errors_add(errs, "%s: %s: out of memory", w, KP);
        }
    }
#undef KP
    if (errs->n != before) {
        mnc_state_free(s);
        return -1;
    }
    return 0;
}

int mnc_state_load_file(const mnc_policy *p, const char *path, mnc_state *s, mnc_errors *errs)
{
    char *buf = NULL;
    size_t len = 0;
    mnc_state_init(s);
    if (mnc_json_read_file(path, MNC_POLICY_FILE_MAX, &buf, &len, errs) != 0)
        return -1;
    cJSON *j = mnc_json_parse_strict(path, buf, len, errs);
    free(buf);
    if (!j)
        return -1;
    int r = mnc_state_from_json(p, j, s, path, errs);
    cJSON_Delete(j);
    return r;
}
