// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* answer.c - send and recv answers as text (contract: answer.h). A tree per answer was ~5-10
 * items allocated, their strings and the object's text copied, printed and freed; here the
 * same bytes go straight into a buffer mncd reuses. */
#include "answer.h"

#include <string.h>

#define LIT(b, s) MNC_JBUF_LIT((b), (s))

int mncd_ans_head(mnc_jbuf *b, const cJSON *id, bool ok, const char *decision, const char *reason)
{
    int rc = LIT(b, "{");
    if (rc == 0 && id) {
        rc = LIT(b, "\"id\":");
        rc = rc ? rc : mnc_json_print(b, id);
        rc = rc ? rc : LIT(b, ",");
    }
    rc = rc ? rc : (ok ? LIT(b, "\"ok\":true,\"decision\":") : LIT(b, "\"ok\":false,\"decision\":"));
    rc = rc ? rc : mnc_jbuf_str(b, decision);
    rc = rc ? rc : LIT(b, ",\"reason\":");
    return rc ? rc : mnc_jbuf_str(b, reason);
}

/* ,"name": then the string value (names here need no escaping: ASCII literals) */
int mncd_ans_str(mnc_jbuf *b, const char *name, const char *value)
{
    int rc = LIT(b, ",\"");
    rc = rc ? rc : mnc_jbuf_put(b, name, strlen(name));
    rc = rc ? rc : LIT(b, "\":");
    return rc ? rc : mnc_jbuf_str(b, value);
}

int mncd_ans_msg(mnc_jbuf *b, bool first, const char *from, const char *obj, size_t obj_len, const char *message)
{
    int rc = first ? LIT(b, "{\"from\":") : LIT(b, ",{\"from\":");
    rc = rc ? rc : mnc_jbuf_str(b, from);
    rc = rc ? rc : LIT(b, ",\"object\":");
    rc = rc ? rc : mnc_jbuf_put(b, obj, obj_len);
    rc = rc ? rc : LIT(b, ",\"message\":");
    rc = rc ? rc : mnc_jbuf_str(b, message);
    return rc ? rc : LIT(b, "}");
}

int mncd_ans_refusal(mnc_jbuf *b, bool first, const char *from, const char *hex, const char *decision,
                     const char *reason, const char *error)
{
    int rc = first ? LIT(b, "{\"from\":") : LIT(b, ",{\"from\":");
    rc = rc ? rc : mnc_jbuf_str(b, from);
    rc = rc ? rc : mncd_ans_str(b, "object", hex);
    rc = rc ? rc : mncd_ans_str(b, "decision", decision);
    rc = rc ? rc : mncd_ans_str(b, "reason", reason);
    if (rc == 0 && error)
        rc = mncd_ans_str(b, "error", error);
    return rc ? rc : LIT(b, "}");
}

/* ,"name":number, as cJSON_AddNumberToObject adds it */
static int num(mnc_jbuf *b, const char *name, double v)
{
    int rc = LIT(b, ",\"");
    rc = rc ? rc : mnc_jbuf_put(b, name, strlen(name));
    rc = rc ? rc : LIT(b, "\":");
    return rc ? rc : mnc_jbuf_num(b, v);
}

int mncd_ans_selected(mnc_jbuf *b, bool ledger, double charged, bool replayed, double spent, double epsilon,
                      double budget)
{
    int rc = LIT(b, ",\"outcome\":\"selected\"");
    if (rc || !ledger)
        return rc;
    rc = num(b, "charge", charged);
    if (rc == 0 && replayed)
        rc = LIT(b, ",\"replayed\":true");
    rc = rc ? rc : num(b, "spent", spent + charged);
    if (rc == 0 && epsilon >= 0)
        rc = num(b, "epsilon", epsilon);
    if (rc == 0 && budget >= 0)
        rc = num(b, "budget", budget);
    return rc;
}

cJSON *mncd_ans_item(mnc_jbuf *b)
{
    if (LIT(b, "}") != 0 || mnc_jbuf_put(b, "", 1) != 0) /* and a NUL for the copy */
        return NULL;
    return cJSON_CreateRaw(b->p);
}
