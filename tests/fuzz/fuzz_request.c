// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* fuzz_request.c - libFuzzer target for the mncd request parser (mnc_request_parse).
 * Any input must either parse into a request whose pointers are valid, or fail with a message;
 * never crash, leak or read out of bounds (built with -fsanitize=fuzzer,address,undefined).
 * The fast paths are checked against the full parser: a line reqscan.h takes must parse the
 * same way through the tree (verb, strings, max, id), and a tree jtree.h builds must be
 * cJSON's, item for item, with the same end. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "mnc/protocol.h"
#include "jtree.h"
#include "reqscan.h"

static bool same_str(const char *a, const char *b) { return (!a && !b) || (a && b && strcmp(a, b) == 0); }

static bool same_id(const cJSON *a, const cJSON *b)
{
    if (!a || !b)
        return !a && !b;
    char *pa = cJSON_PrintUnformatted(a), *pb = cJSON_PrintUnformatted(b);
    bool same = pa && pb && strcmp(pa, pb) == 0 && a->type == b->type && a->valueint == b->valueint;
    cJSON_free(pa);
    cJSON_free(pb);
    return same;
}

static void same_tree(const cJSON *a, const cJSON *b)
{
    if (a->type != b->type || !same_str(a->string, b->string) || !same_str(a->valuestring, b->valuestring) ||
        a->valueint != b->valueint || !(a->valuedouble == b->valuedouble))
        __builtin_trap();
    const cJSON *x = a->child, *y = b->child;
    for (; x && y; x = x->next, y = y->next)
        same_tree(x, y);
    if (x || y || (a->child && (a->child->prev == NULL) != (b->child->prev == NULL)))
        __builtin_trap();
}

/* A tree jtree builds is cJSON's. */
static void check_jtree(const char *line, size_t size)
{
    const char *e1 = NULL, *e2 = NULL;
    cJSON *a = mnc_jtree_parse(line, size, &e1);
    if (!a)
        return;
    cJSON *b = cJSON_ParseWithLengthOpts(line, size, &e2, false);
    if (!b || e1 != e2)
        __builtin_trap();
    same_tree(a, b);
    cJSON_Delete(a);
    cJSON_Delete(b);
}

/* A line the fast path takes parses the same way through the tree. */
static void check_fast_path(const char *line, size_t size)
{
    mnc_request f, t;
    char err[256];
    if (mnc_reqscan(line, size, &f) != 1)
        return;
    if (mnc_request_parse_tree(line, size, &t, NULL, err, sizeof(err)) != 0)
        __builtin_trap();
    if (f.verb != t.verb || !same_str(f.as, t.as) || !same_str(f.object, t.object) || !same_str(f.to, t.to) ||
        !same_str(f.channel, t.channel) || !same_str(f.purpose, t.purpose) || f.max != t.max || !same_id(f.id, t.id) ||
        f.memory != t.memory || f.deny != t.deny || f.uid != t.uid || f.lost != t.lost ||
        f.run_as_root != t.run_as_root)
        __builtin_trap();
    mnc_request_free(&f);
    mnc_request_free(&t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    mnc_request r;
    cJSON *id = NULL;
    char err[256];
    check_fast_path((const char *)data, size);
    check_jtree((const char *)data, size);
    if (mnc_request_parse((const char *)data, size, &r, &id, err, sizeof(err)) == 0) {
        /* Touch what the daemon touches. */
        volatile size_t n = strlen(mnc_verb_name(r.verb));
        if (r.object)
            n += strlen(r.object);
        if (r.to)
            n += strlen(r.to);
        (void)n;
        cJSON *resp = mnc_resp_new(r.id, true, "allow", MNC_OK);
        char *line = resp ? mnc_resp_line(resp, NULL) : NULL;
        cJSON_free(line);
        cJSON_Delete(resp);
        mnc_request_free(&r);
    } else {
        cJSON *resp = mnc_resp_error(id, MNC_R_INVALID, "%s", err);
        cJSON_Delete(resp);
        cJSON_Delete(id);
    }
    return 0;
}
