// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* cmd_audit.c - `mncctl audit verify FILE [--anchors CONNINFO [--host NAME]]` (offline) and
 * `mncctl audit tail [N]` (via mncd).
 *
 * --anchors also checks the log against the chain heads its mncd anchored in the fleet
 * database (docs/fleet.md): every anchored (seq, hash) of the host must be in the log, and the
 * log must reach the last anchored seq. A log rewritten end to end with a fresh,
 * self-consistent chain passes the chain check but not this one.
 *
 * `mncctl audit find VALUE...` prints the records that name a value an agent chose (a path, an
 * address, a port, a pid) by a keyed token (docs/threat-model.md, "Records about agents"); it
 * reads the per-host key (STATE_DIR/audit.key, root-only), so only whoever may read that key
 * can correlate. Exit 1 if no record names any of them. `mncctl audit hash --id VALUE...` prints
 * the unsalted hash under which mncd's state files keep an identifier (a memory key).
 *
 * verify exit codes: 0 the chain verifies (a torn last line from a crash is reported as a
 * notice and the prefix must verify), 1 a record was edited, removed, inserted or reordered
 * (the first bad line is named), 2 usage or the file cannot be read.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mnc/audit.h"
#include "mnc/fleet.h"
#include "mncctl.h"

int mncctl_call_print(const mncctl_global *g, cJSON *req); /* cmd_client.c */

#define U_AUDIT                                                                                                        \
    "audit verify FILE [--anchors CONNINFO [--host NAME]] | audit tail [N]   (tail: admin) | "                         \
    "audit find [--state DIR | --key FILE] [--log FILE] VALUE... | audit hash --id VALUE..."

typedef struct anchor {
    unsigned long long seq;
    char hash[MNC_AUDIT_HASH_HEX];
} anchor;

typedef struct anchors {
    anchor *v;
    size_t n, cap;
} anchors;

static int add_anchor(void *arg, unsigned long long seq, const char *hash)
{
    anchors *a = arg;
    if (a->n == a->cap) {
        size_t nc = a->cap ? a->cap * 2 : 64;
        anchor *nv = realloc(a->v, nc * sizeof(*nv));
        if (!nv)
            return 1;
        a->v = nv;
        a->cap = nc;
    }
    a->v[a->n].seq = seq;
    snprintf(a->v[a->n].hash, sizeof(a->v[a->n].hash), "%s", hash);
    a->n++;
    return 0;
}

/* Checks the verified log at path against host's anchors. 0 ok (msg: summary), 1 mismatch
 * (msg names the host and the first anchor that fails), 2 cannot check (msg). */
static int check_anchors(const char *path, const char *conninfo, const char *host, char *msg, size_t msg_len)
{
    char err[768];
    PGconn *c = mnc_pg_connect(conninfo, "mncctl", err, sizeof(err));
    if (!c || mnc_pg_schema_check(c, err, sizeof(err)) != 0) {
        snprintf(msg, msg_len, "anchors: %s", err);
        if (c)
            PQfinish(c);
        return 2;
    }
    anchors a = {0};
    int rc = mnc_pg_anchor_foreach(c, host, add_anchor, &a, err, sizeof(err));
    PQfinish(c);
    if (rc != 0) {
        snprintf(msg, msg_len, "anchors: %s", rc > 0 ? "out of memory" : err);
        free(a.v);
        return 2;
    }
    if (a.n == 0) {
        snprintf(msg, msg_len, "host %s has no anchors in the fleet database (wrong --host?)", host);
        free(a.v);
        return 2;
    }
    FILE *f = fopen(path, "re");
    if (!f) {
        snprintf(msg, msg_len, "%s: %m", path);
        free(a.v);
        return 2;
    }
    char *line = NULL;
    size_t cap = 0, k = 0;
    ssize_t n;
    unsigned long long last = 0;
    rc = 0;
    while (rc == 0 && k < a.n && (n = getline(&line, &cap, f)) > 0) {
        if (line[n - 1] != '\n')
            break; /* a torn last line: not part of the verified chain */
        cJSON *j = cJSON_ParseWithLength(line, (size_t)n);
        const cJSON *s = cJSON_GetObjectItemCaseSensitive(j, "seq");
        const cJSON *h = cJSON_GetObjectItemCaseSensitive(j, "hash");
        if (cJSON_IsNumber(s) && cJSON_IsString(h)) {
            last = (unsigned long long)s->valuedouble;
            while (k < a.n && a.v[k].seq < last)
                k++; /* an anchor below the first line cannot be matched: caught below */
            if (k < a.n && a.v[k].seq == last) {
                if (strcmp(a.v[k].hash, h->valuestring) != 0) {
                    snprintf(msg, msg_len,
                             "host %s: record %llu does not match the head it "
                             "anchored (anchored %.16s..., the log has %.16s...): the log was "
                             "rewritten",
                             host, last, a.v[k].hash, h->valuestring);
                    rc = 1;
                }
                k++;
            }
        }
        cJSON_Delete(j);
    }
    free(line);
    fclose(f);
    if (rc == 0 && k < a.n) {
        snprintf(msg, msg_len,
                 "host %s anchored record %llu, but the log ends at record %llu: "
                 "it was truncated or rewritten",
                 host, a.v[a.n - 1].seq, last);
        rc = 1;
    }
    if (rc == 0)
        snprintf(msg, msg_len, "%zu anchors of host %s match (last anchored record %llu)", a.n, host, a.v[a.n - 1].seq);
    free(a.v);
    return rc;
}

static int verify(const char *path, const char *conninfo, const char *host, const mncctl_global *g)
{
    mnc_audit_verify v;
    int rc = mnc_audit_verify_file(path, &v);
    char amsg[1024] = "";
    int arc = -1;
    if (rc == 0 && conninfo) {
        arc = check_anchors(path, conninfo, host, amsg, sizeof(amsg));
        if (arc == 1)
            rc = 1;
        else if (arc == 2)
            rc = -1;
        if (arc != 0)
            snprintf(v.msg, sizeof(v.msg), "%.255s", amsg);
    }
    if (g->json) {
        cJSON *o = cJSON_CreateObject();
        if (!o)
            return 1;
        cJSON_AddBoolToObject(o, "ok", rc == 0);
        cJSON_AddNumberToObject(o, "records", (double)v.records);
        cJSON_AddStringToObject(o, "head", v.head);
        cJSON_AddNumberToObject(o, "bad_line", (double)v.bad_line);
        cJSON_AddBoolToObject(o, "torn_tail", v.torn_tail);
        cJSON_AddStringToObject(o, "message", v.msg);
        if (conninfo)
            cJSON_AddStringToObject(o, "anchors", amsg);
        char *s = cJSON_PrintUnformatted(o);
        if (s)
            puts(s);
        cJSON_free(s);
        cJSON_Delete(o);
    } else if (rc == 0) {
        printf("%s: OK, %llu records, head %s\n", path, (unsigned long long)v.records, v.head);
        if (arc == 0)
            printf("anchors: %s\n", amsg);
        if (v.torn_tail)
            printf("notice: %s (mncd truncates it on its next start)\n", v.msg);
    } else if (rc == 1) {
        printf("%s: TAMPERED: %s\n", path, arc == 1 ? amsg : v.msg);
    } else {
        mncctl_err("%s", arc == 2 ? amsg : v.msg);
    }
    return rc == 0 ? 0 : rc == 1 ? 1 : 2;
}

/* the key: --key FILE, or STATE_DIR/audit.key (--state DIR, default /var/lib/mnc). 0 or 2. */
static int load_key(const char *key, const char *state, unsigned char k[MNC_AUDIT_KEY_LEN])
{
    char path[4096], err[4200];
    if (!key) {
        snprintf(path, sizeof(path), "%s/audit.key", state);
        key = path;
    }
    if (mnc_audit_key_load(key, false, k, err, sizeof(err)) != 0) {
        mncctl_err("audit: %s", err);
        return 2;
    }
    return 0;
}

/* Does any token in s name one of vals? Returns the index of the value, or -1. */
static int names_any(const unsigned char *k, const char *s, char **vals, int nv)
{
    for (const char *p = s; (p = strstr(p, "h:")) != NULL; p += 2) {
        if (strnlen(p, 27) < 27 || p[10] != '.')
            continue;
        for (int i = 0; i < nv; i++)
            if (mnc_audit_hv_names(k, p, vals[i], strlen(vals[i])))
                return i;
    }
    return -1;
}

/* audit find [--state DIR | --key FILE] [--log FILE] VALUE...: the records that name a value
 * (each token is salted afresh: only the key tells which tokens name it). audit hash --id
 * VALUE...: the unsalted 128-bit hash mncd keeps identifiers under in its state files. */
static int hash_cmd(int argc, char **argv, const mncctl_global *g, bool find)
{
    const char *key = NULL, *state = "/var/lib/mnc", *log = NULL;
    int i = 2;
    bool id = false;
    for (; i < argc && argv[i][0] == '-' && argv[i][1] == '-'; i++) {
        if (!strcmp(argv[i], "--state") && i + 1 < argc)
            state = argv[++i];
        else if (!strcmp(argv[i], "--key") && i + 1 < argc)
            key = argv[++i];
        else if (find && !strcmp(argv[i], "--log") && i + 1 < argc)
            log = argv[++i];
        else if (!find && !strcmp(argv[i], "--id"))
            id = true;
        else if (!strcmp(argv[i], "--")) {
            i++;
            break;
        } else {
            mncctl_err("audit %s: unknown option %s", find ? "find" : "hash", argv[i]);
            return 2;
        }
    }
    if (i >= argc || (!find && !id)) {
        mncctl_err("usage: %s", U_AUDIT);
        return 2;
    }
    unsigned char k[MNC_AUDIT_KEY_LEN];
    if (load_key(key, state, k) != 0)
        return 2;
    int rc = 0;
    if (!find) {
        cJSON *arr = g->json ? cJSON_CreateArray() : NULL;
        for (; i < argc; i++) {
            char h[MNC_AUDIT_HV_MAX];
            if (!mnc_audit_hv(k, argv[i], strlen(argv[i]), 32, h))
                rc = 1;
            else if (arr)
                cJSON_AddItemToArray(arr, cJSON_CreateString(h));
            else
                printf("%s  %s\n", h, argv[i]);
        }
        if (arr) {
            char *t = cJSON_PrintUnformatted(arr);
            if (t)
                printf("%s\n", t);
            cJSON_free(t);
            cJSON_Delete(arr);
        }
        memset(k, 0, sizeof(k));
        return rc;
    }
    char lp[4096];
    if (!log) {
        snprintf(lp, sizeof(lp), "%s/audit.jsonl", state);
        log = lp;
    }
    FILE *f = fopen(log, "re");
    if (!f) {
        mncctl_err("audit find: %s: %s", log, strerror(errno));
        memset(k, 0, sizeof(k));
        return 2;
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    long found = 0;
    cJSON *arr = g->json ? cJSON_CreateArray() : NULL;
    while ((n = getline(&line, &cap, f)) > 0) {
        int w = names_any(k, line, argv + i, argc - i);
        if (w < 0)
            continue;
        found++;
        line[strcspn(line, "\n")] = 0;
        if (arr) {
            cJSON *r = cJSON_Parse(line);
            if (r) {
                cJSON_AddStringToObject(r, "names", argv[i + w]);
                cJSON_AddItemToArray(arr, r);
            }
        } else {
            printf("%s  %s\n", argv[i + w], line);
        }
    }
    free(line);
    fclose(f);
    memset(k, 0, sizeof(k));
    if (arr) {
        char *t = cJSON_PrintUnformatted(arr);
        if (t)
            printf("%s\n", t);
        cJSON_free(t);
        cJSON_Delete(arr);
    }
    return found ? 0 : 1;
}

static int c_audit(int argc, char **argv, const mncctl_global *g)
{
    if (argc >= 2 && (!strcmp(argv[1], "hash") || !strcmp(argv[1], "find")))
        return hash_cmd(argc, argv, g, !strcmp(argv[1], "find"));
    if (argc >= 3 && !strcmp(argv[1], "verify")) {
        const char *file = NULL, *conninfo = NULL, *host = NULL;
        bool bad = false;
        for (int i = 2; i < argc && !bad; i++) {
            if (!strcmp(argv[i], "--anchors") && i + 1 < argc)
                conninfo = argv[++i];
            else if (!strcmp(argv[i], "--host") && i + 1 < argc)
                host = argv[++i];
            else if (argv[i][0] != '-' && !file)
                file = argv[i];
            else
                bad = true;
        }
        char hn[256];
        if (conninfo && !host) {
            if (gethostname(hn, sizeof(hn)) != 0)
                hn[0] = '\0';
            hn[sizeof(hn) - 1] = '\0';
            host = hn;
        }
        if (!bad && file && (!host || conninfo))
            return verify(file, conninfo, host, g);
    }
    if ((argc == 2 || argc == 3) && !strcmp(argv[1], "tail")) {
        cJSON *req = cJSON_CreateObject();
        if (!req || !cJSON_AddStringToObject(req, "verb", "audit")) {
            cJSON_Delete(req);
            return 1;
        }
        if (argc == 3) {
            int n = atoi(argv[2]);
            if (n < 1 || n > 10000) {
                cJSON_Delete(req);
                mncctl_err("audit tail: N must be 1..10000");
                return 2;
            }
            cJSON_AddNumberToObject(req, "max", n);
        }
        return mncctl_call_print(g, req);
    }
    mncctl_err("usage: mncctl %s", U_AUDIT);
    return 2;
}

MNCCTL_COMMAND(cmd_audit, "audit", U_AUDIT, c_audit)
