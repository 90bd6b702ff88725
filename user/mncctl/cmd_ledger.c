// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* cmd_ledger.c - `mncctl ledger verify FILE` and `mncctl ledger show --file FILE SUBJECT`.
 *
 * Both read the ledger file directly and read-only (no lock, no truncation), so they work
 * while mncd runs and never change what is stored. verify exits 0 for a valid ledger (a torn
 * tail is reported on stderr but is not corruption: mncd truncates it on start) and 1 with
 * the corrupt record named otherwise.
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mnc/ledger.h"
#include "mncctl.h"

static int usage(void)
{
    mncctl_err("usage: mncctl ledger verify FILE | mncctl ledger show --file FILE [--budget B] "
               "[--json] SUBJECT");
    return 2;
}

static int verify(int argc, char **argv)
{
    if (argc != 3)
        return usage();
    char notice[512], err[512];
    mnc_ledger *l = mnc_ledger_open_ro(argv[2], notice, sizeof(notice), err, sizeof(err));
    if (!l) {
        mncctl_err("ledger verify: %s", err);
        return 1;
    }
    size_t ns = 0, nc = 0;
    mnc_ledger_stats(l, &ns, &nc);
    mnc_ledger_close(l);
    if (notice[0])
        fprintf(stderr, "mncctl: notice: %s (mncd truncates it on start)\n", notice);
    printf("%s: ok, %zu charges, %zu subjects\n", argv[2], nc, ns);
    return 0;
}

typedef struct show_ctx {
    cJSON *arr; /* --json */
    bool json;
    bool oom;
} show_ctx;

static int show_one(void *arg, const mnc_ledger_entry *e)
{
    show_ctx *c = arg;
    if (!c->json) {
        printf("  #%llu %s -> %s release %s delta %.6f:", (unsigned long long)e->seq,
               e->subject, e->recipient, e->release, e->delta);
        for (size_t i = 0; i < e->n_obs; i++)
            printf(" %s=%s", e->obs[i].field, e->obs[i].value);
        printf("\n");
        return 0;
    }
    cJSON *o = cJSON_CreateObject();
    if (!o || !cJSON_AddItemToArray(c->arr, o)) {
        cJSON_Delete(o);
        c->oom = true;
        return 1;
    }
    cJSON_AddNumberToObject(o, "seq", (double)e->seq);
    cJSON_AddNumberToObject(o, "time_ms", (double)e->time_ms);
    cJSON_AddStringToObject(o, "recipient", e->recipient);
    cJSON_AddStringToObject(o, "release", e->release);
    cJSON_AddNumberToObject(o, "delta", e->delta);
    cJSON *obs = cJSON_AddArrayToObject(o, "obs");
    if (!obs) {
        c->oom = true;
        return 1;
    }
    for (size_t i = 0; i < e->n_obs; i++) {
        const char *pair[2] = {e->obs[i].field, e->obs[i].value};
        cJSON_AddItemToArray(obs, cJSON_CreateStringArray(pair, 2));
    }
    return 0;
}

static int show(int argc, char **argv, const mncctl_global *g)
{
    const char *file = NULL, *subject = NULL;
    double budget = -1;
    bool json = g->json;
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--file") == 0 && i + 1 < argc) {
            file = argv[++i];
        } else if (strcmp(argv[i], "--budget") == 0 && i + 1 < argc) {
            char *end;
            budget = strtod(argv[++i], &end);
            if (*end || !isfinite(budget) || budget < 0) {
                mncctl_err("ledger show: --budget must be a number >= 0");
                return 2;
            }
        } else if (strcmp(argv[i], "--json") == 0) {
            json = true;
        } else if (argv[i][0] != '-' && !subject) {
            subject = argv[i];
        } else {
            return usage();
        }
    }
    if (!file || !subject)
        return usage();
    char notice[512], err[512];
    mnc_ledger *l = mnc_ledger_open_ro(file, notice, sizeof(notice), err, sizeof(err));
    if (!l) {
        mncctl_err("ledger show: %s", err);
        return 1;
    }
    if (notice[0])
        fprintf(stderr, "mncctl: notice: %s\n", notice);
    double spent = 0;
    mnc_ledger_spent(l, subject, NULL, &spent);
    show_ctx c = {.json = json};
    int rc = 0;
    if (!json) {
        printf("subject %s: spent %.6f", subject, spent);
        if (budget >= 0)
            printf(", budget %.6f, remaining %.6f", budget, fmax(0, budget - spent));
        printf("\nhistory:\n");
        mnc_ledger_foreach(l, subject, show_one, &c);
    } else {
        cJSON *o = cJSON_CreateObject();
        c.arr = o ? cJSON_AddArrayToObject(o, "history") : NULL;
        if (!c.arr) {
            cJSON_Delete(o);
            mnc_ledger_close(l);
            mncctl_err("out of memory");
            return 1;
        }
        cJSON_AddStringToObject(o, "subject", subject);
        cJSON_AddNumberToObject(o, "spent", spent);
        if (budget >= 0) {
            cJSON_AddNumberToObject(o, "budget", budget);
            cJSON_AddNumberToObject(o, "remaining", fmax(0, budget - spent));
        }
        mnc_ledger_foreach(l, subject, show_one, &c);
        char *s = c.oom ? NULL : cJSON_Print(o);
        if (s) {
            printf("%s\n", s);
            free(s);
        } else {
            mncctl_err("out of memory");
            rc = 1;
        }
        cJSON_Delete(o);
    }
    mnc_ledger_close(l);
    return rc;
}

static int cmd_ledger(int argc, char **argv, const mncctl_global *g)
{
    if (argc < 2)
        return usage();
    if (strcmp(argv[1], "verify") == 0)
        return verify(argc, argv);
    if (strcmp(argv[1], "show") == 0)
        return show(argc, argv, g);
    return usage();
}

MNCCTL_COMMAND(ledger_cmd, "ledger",
               "ledger verify FILE | ledger show --file FILE [--budget B] [--json] SUBJECT",
               cmd_ledger)
