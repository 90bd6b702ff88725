// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* test_answer.c - mncd's send, recv and disclose answers written as text (user/mncd/answer.c) against
 * the trees they used to be built as (mnc_resp_new + cJSON_Add*), printed by cJSON itself:
 * the same bytes for generated ids (none, numbers, strings with escapes), names and texts with
 * every kind of byte, object texts, and any number of messages and refusals. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "answer.h"
#include "mnc/protocol.h"

static uint64_t rs = 0x9e3779b97f4a7c15ull;
static unsigned rnd(unsigned n)
{
    rs ^= rs << 13;
    rs ^= rs >> 7;
    rs ^= rs << 17;
    return (unsigned)(rs % n);
}

/* A string of up to max bytes: names, UTF-8, quotes, backslashes, control bytes. */
static void gen_text(char *s, size_t max)
{
    static const char *const pieces[] = {"worker",       "coordinator", "a",           "\"", "\\", "\n", "\t",
                                         "\x01",         "\x1f",        "caf\xc3\xa9", "/",  " ",  "{}", "\x7f",
                                         "\xe2\x82\xac", "0123456789"};
    size_t n = 0;
    unsigned k = rnd(8);
    s[0] = '\0';
    for (unsigned i = 0; i < k; i++) {
        const char *p = pieces[rnd(sizeof(pieces) / sizeof(pieces[0]))];
        if (n + strlen(p) >= max)
            break;
        memcpy(s + n, p, strlen(p) + 1);
        n += strlen(p);
    }
}

static cJSON *gen_id(void)
{
    char t[64];
    switch (rnd(5)) {
    case 0:
        return NULL;
    case 1:
        return cJSON_CreateNumber((double)((int)rnd(2000000) - 1000000));
    case 2:
        return cJSON_CreateNumber((double)rnd(1000) / 7.0);
    case 3:
        return cJSON_CreateNumber(1e300 * (rnd(2) ? 1 : -1));
    default:
        gen_text(t, sizeof(t));
        return cJSON_CreateString(t);
    }
}

static void same(const cJSON *tree, cJSON *item)
{
    char *want = cJSON_PrintUnformatted(tree);
    assert_non_null(want);
    assert_non_null(item);
    assert_true(cJSON_IsRaw(item));
    if (strcmp(want, item->valuestring) != 0) {
        print_message("tree:   %s\ntext:   %s\n", want, item->valuestring);
        fail();
    }
    /* and what the loop prints for a raw item */
    char *printed = cJSON_PrintUnformatted(item);
    assert_string_equal(printed, want);
    cJSON_free(printed);
    cJSON_free(want);
    cJSON_Delete(item);
}

static void test_send(void **st)
{
    (void)st;
    mnc_jbuf b = {0};
    for (int i = 0; i < 20000; i++) {
        cJSON *id = gen_id();
        char to[64];
        gen_text(to, sizeof(to));
        cJSON *tree = mnc_resp_new(id, true, "allow", MNC_OK);
        cJSON_AddStringToObject(tree, "queued_to", to);
        b.len = 0;
        assert_int_equal(mncd_ans_head(&b, id, true, "allow", mnc_reason_name(MNC_OK)), 0);
        assert_int_equal(mncd_ans_str(&b, "queued_to", to), 0);
        same(tree, mncd_ans_item(&b));
        cJSON_Delete(tree);
        cJSON_Delete(id);
    }
    /* the other heads too: not ok, other decisions and reasons */
    for (int i = 0; i < 2000; i++) {
        cJSON *id = gen_id();
        bool ok = rnd(2);
        mnc_reason r = (mnc_reason)rnd(8);
        cJSON *tree = mnc_resp_new(id, ok, ok ? "allow" : "deny", r);
        b.len = 0;
        assert_int_equal(mncd_ans_head(&b, id, ok, ok ? "allow" : "deny", mnc_reason_name(r)), 0);
        same(tree, mncd_ans_item(&b));
        cJSON_Delete(tree);
        cJSON_Delete(id);
    }
    free(b.p);
}

static void test_recv(void **st)
{
    (void)st;
    mnc_jbuf b = {0}, msgs = {0}, refused = {0};
    for (int i = 0; i < 5000; i++) {
        cJSON *id = gen_id();
        cJSON *tree = mnc_resp_new(id, true, "allow", MNC_OK);
        cJSON *ma = cJSON_CreateArray(), *da = cJSON_CreateArray();
        msgs.len = refused.len = 0;
        bool fm = true, fr = true;
        unsigned n = rnd(6);
        for (unsigned k = 0; k < n; k++) {
            char from[64], text[200], hex[40], err[100];
            gen_text(from, sizeof(from));
            gen_text(text, sizeof(text));
            snprintf(hex, sizeof(hex), "%08x%08x%08x%08x", rnd(1u << 31), rnd(1u << 31), rnd(1u << 31), rnd(1u << 31));
            cJSON *x = cJSON_CreateObject();
            cJSON_AddStringToObject(x, "from", from);
            unsigned kind = rnd(3);
            if (kind == 0) { /* delivered: the object's text (any JSON) and its rendering */
                cJSON *obj = cJSON_CreateObject();
                cJSON_AddStringToObject(obj, "id", hex);
                cJSON_AddStringToObject(obj, "note", text);
                cJSON_AddNumberToObject(obj, "n", (double)rnd(100000) / 3.0);
                char *ot = cJSON_PrintUnformatted(obj);
                cJSON_AddRawToObject(x, "object", ot);
                cJSON_AddStringToObject(x, "message", text);
                cJSON_AddItemToArray(ma, x);
                assert_int_equal(mncd_ans_msg(&msgs, fm, from, ot, strlen(ot), text), 0);
                fm = false;
                cJSON_free(ot);
                cJSON_Delete(obj);
            } else {
                const char *dec = kind == 1 ? "deny" : "error";
                const char *reason = mnc_reason_name((mnc_reason)rnd(8));
                gen_text(err, sizeof(err));
                cJSON_AddStringToObject(x, "object", hex);
                cJSON_AddStringToObject(x, "decision", dec);
                cJSON_AddStringToObject(x, "reason", reason);
                if (kind == 2)
                    cJSON_AddStringToObject(x, "error", err);
                cJSON_AddItemToArray(da, x);
                assert_int_equal(mncd_ans_refusal(&refused, fr, from, hex, dec, reason, kind == 2 ? err : NULL), 0);
                fr = false;
            }
        }
        cJSON_AddItemToObject(tree, "messages", ma);
        cJSON_AddItemToObject(tree, "denied", da);
        /* as verbs.c's v_recv puts them together */
        b.len = 0;
        assert_int_equal(mncd_ans_head(&b, id, true, "allow", mnc_reason_name(MNC_OK)), 0);
        assert_int_equal(MNC_JBUF_LIT(&b, ",\"messages\":["), 0);
        assert_int_equal(mnc_jbuf_put(&b, msgs.p, msgs.len), 0);
        assert_int_equal(MNC_JBUF_LIT(&b, "],\"denied\":["), 0);
        assert_int_equal(mnc_jbuf_put(&b, refused.p, refused.len), 0);
        assert_int_equal(MNC_JBUF_LIT(&b, "]"), 0);
        same(tree, mncd_ans_item(&b));
        cJSON_Delete(tree);
        cJSON_Delete(id);
    }
    free(b.p);
    free(msgs.p);
    free(refused.p);
}

static double gen_num(void)
{
    switch (rnd(6)) {
    case 0:
        return -1;
    case 1:
        return 0;
    case 2:
        return (double)rnd(100) / 20.0;
    case 3:
        return (double)rnd(1000000) / 3.0;
    case 4:
        return 1.0 / (1 + rnd(1000));
    default:
        return (double)rnd(1u << 30) * 1e-9;
    }
}

/* a disclose's answer: object, message, form, queued_to, the MNC-L members (as
 * mncd_mncl_selected adds them to the tree) and the candidates' text */
static void test_disclose(void **st)
{
    (void)st;
    mnc_jbuf b = {0};
    for (int i = 0; i < 20000; i++) {
        cJSON *id = gen_id();
        char msg[200], form[64], to[64];
        gen_text(msg, sizeof(msg));
        gen_text(form, sizeof(form));
        gen_text(to, sizeof(to));
        bool ledger = rnd(4) != 0, replayed = rnd(3) == 0;
        double charged = gen_num(), spent = gen_num(), eps = gen_num(), budget = gen_num();
        const char *obj = "{\"id\":\"00ff\",\"values\":{\"a\":\"b\"},\"n\":0.05}";
        const char *cands = rnd(2) ? "[{\"name\":\"x\",\"submitted\":false,\"risk\":0.15,\"verdict\":\"ok\"}]" : "[]";
        cJSON *tree = mnc_resp_new(id, true, "allow", MNC_OK);
        cJSON_AddRawToObject(tree, "object", obj);
        cJSON_AddStringToObject(tree, "message", msg);
        cJSON_AddStringToObject(tree, "form", form);
        cJSON_AddStringToObject(tree, "queued_to", to);
        cJSON_AddStringToObject(tree, "outcome", "selected"); /* mncd_mncl_selected */
        if (ledger) {
            cJSON_AddNumberToObject(tree, "charge", charged);
            if (replayed)
                cJSON_AddBoolToObject(tree, "replayed", true);
            cJSON_AddNumberToObject(tree, "spent", spent + charged);
            if (eps >= 0)
                cJSON_AddNumberToObject(tree, "epsilon", eps);
            if (budget >= 0)
                cJSON_AddNumberToObject(tree, "budget", budget);
        }
        cJSON_AddRawToObject(tree, "candidates", cands);
        b.len = 0;
        assert_int_equal(mncd_ans_head(&b, id, true, "allow", mnc_reason_name(MNC_OK)), 0);
        assert_int_equal(MNC_JBUF_LIT(&b, ",\"object\":"), 0);
        assert_int_equal(mnc_jbuf_put(&b, obj, strlen(obj)), 0);
        assert_int_equal(mncd_ans_str(&b, "message", msg), 0);
        assert_int_equal(mncd_ans_str(&b, "form", form), 0);
        assert_int_equal(mncd_ans_str(&b, "queued_to", to), 0);
        assert_int_equal(mncd_ans_selected(&b, ledger, charged, replayed, spent, eps, budget), 0);
        assert_int_equal(MNC_JBUF_LIT(&b, ",\"candidates\":"), 0);
        assert_int_equal(mnc_jbuf_put(&b, cands, strlen(cands)), 0);
        same(tree, mncd_ans_item(&b));
        cJSON_Delete(tree);
        cJSON_Delete(id);
    }
    free(b.p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_send), cmocka_unit_test(test_recv),
                                       cmocka_unit_test(test_disclose)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
