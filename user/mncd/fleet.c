/* fleet.c - mncd's fleet mode (docs/fleet.md): the "ledger" config section and the periodic
 * work a shared ledger needs (reconnecting with backoff). The ledger backend itself is in
 * libmnc (mnc/ledger_backend.h); mncl.c charges through it.
 *
 * Config: "ledger": {"backend": "journal" | "postgres", "conninfo": "host=/run/postgresql
 * dbname=mnc", "host": "web-1", "anchor_interval_ms": 10000}. conninfo is libpq's; a password
 * in it is refused (it would sit in the config and could reach a log): libpq reads it from a
 * passfile, or authentication uses peer or certificates. "host" defaults to gethostname().
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "mnc/fleet.h"
#include "mnc/ledger_backend.h"
#include "mncd.h"

#define DEFAULT_ANCHOR_MS 10000u

static bool good_host(const char *h)
{
    size_t n = strlen(h);
    if (n < 1 || n > 63)
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = h[i];
        if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '.' || c == ':' || c == '-'))
            return false;
    }
    return true;
}

int mncd_fleet_config(mncd_config *c, const cJSON *it, const char *path)
{
    if (!cJSON_IsObject(it)) {
        fprintf(stderr, "mncd: config %s: \"ledger\" must be an object {\"backend\", "
                        "\"conninfo\", \"host\", \"anchor_interval_ms\"}\n", path);
        return -1;
    }
    const cJSON *be = NULL, *ci = NULL, *host = NULL, *anchor = NULL;
    for (const cJSON *x = it->child; x; x = x->next) {
        if (strcmp(x->string, "backend") == 0)
            be = x;
        else if (strcmp(x->string, "conninfo") == 0)
            ci = x;
        else if (strcmp(x->string, "host") == 0)
            host = x;
        else if (strcmp(x->string, "anchor_interval_ms") == 0)
            anchor = x;
        else {
            fprintf(stderr, "mncd: config %s: ledger: unknown key \"%s\"\n", path, x->string);
            return -1;
        }
    }
    if (!cJSON_IsString(be) ||
        (strcmp(be->valuestring, "journal") != 0 && strcmp(be->valuestring, "postgres") != 0)) {
        fprintf(stderr, "mncd: config %s: ledger.backend must be \"journal\" or \"postgres\"\n",
                path);
        return -1;
    }
    if (strcmp(be->valuestring, "journal") == 0) {
        if (ci || host || anchor) {
            fprintf(stderr, "mncd: config %s: ledger: conninfo, host and anchor_interval_ms "
                            "belong to the postgres backend\n", path);
            return -1;
        }
        c->ledger_backend = MNC_LB_JOURNAL;
        return 0;
    }
    char err[512];
    if (!cJSON_IsString(ci) || strlen(ci->valuestring) >= sizeof(c->ledger_conninfo)) {
        fprintf(stderr, "mncd: config %s: ledger.conninfo must be a libpq connection string "
                        "(< %zu bytes)\n", path, sizeof(c->ledger_conninfo));
        return -1;
    }
    if (mnc_pg_check_conninfo(ci->valuestring, err, sizeof(err)) != 0) {
        fprintf(stderr, "mncd: config %s: ledger.conninfo: %s\n", path, err);
        return -1;
    }
    snprintf(c->ledger_conninfo, sizeof(c->ledger_conninfo), "%s", ci->valuestring);
    if (host) {
        if (!cJSON_IsString(host) || !good_host(host->valuestring)) {
            fprintf(stderr, "mncd: config %s: ledger.host must be 1..63 characters "
                            "[A-Za-z0-9_.:-]\n", path);
            return -1;
        }
        snprintf(c->fleet_host, sizeof(c->fleet_host), "%s", host->valuestring);
    }
    if (anchor) {
        if (!cJSON_IsNumber(anchor) || anchor->valuedouble < 100 ||
            anchor->valuedouble > 86400000 ||
            anchor->valuedouble != (double)(long long)anchor->valuedouble) {
            fprintf(stderr, "mncd: config %s: ledger.anchor_interval_ms must be an integer "
                            "100..86400000\n", path);
            return -1;
        }
        c->anchor_interval_ms = (uint32_t)anchor->valuedouble;
    }
    c->ledger_backend = MNC_LB_POSTGRES;
    return 0;
}

int mncd_fleet_defaults(mncd_config *c)
{
    if (c->ledger_backend != MNC_LB_POSTGRES)
        return 0;
    if (!c->anchor_interval_ms)
        c->anchor_interval_ms = DEFAULT_ANCHOR_MS;
    if (!c->fleet_host[0]) {
        char h[256];
        if (gethostname(h, sizeof(h)) != 0 || (h[sizeof(h) - 1] = '\0', !good_host(h))) {
            fprintf(stderr, "mncd: config: this host's name is not usable as ledger.host "
                            "(1..63 characters [A-Za-z0-9_.:-]): set \"ledger\": {\"host\"}\n");
            return -1;
        }
        memcpy(c->fleet_host, h, strlen(h) + 1); /* good_host: <= 63 bytes */
    }
    return 0;
}

int mncd_fleet_timeout(mncd *d)
{
    mnc_lbackend *b = mncd_mncl_backend(d);
    if (!b || mnc_lb_kind_of(b) != MNC_LB_POSTGRES)
        return -1;
    char st[8];
    /* Down: wake up for the next reconnect; up: for the next anchor. */
    if (!mnc_lb_state(b, st, sizeof(st), NULL))
        return 200;
    return (int)d->cfg.anchor_interval_ms;
}

void mncd_fleet_tick(mncd *d)
{
    mnc_lbackend *b = mncd_mncl_backend(d);
    if (!b || mnc_lb_kind_of(b) != MNC_LB_POSTGRES)
        return;
    bool was_up = mnc_lb_state(b, NULL, 0, NULL);
    (void)mnc_lb_tick(b, mncd_now_ms());
    char st[640];
    bool up = mnc_lb_state(b, st, sizeof(st), NULL);
    if (up != was_up) {
        fprintf(stderr, "mncd: ledger (postgres): %s\n", up ? "reconnected" : st);
        mncd_audit(d, up ? "ledger.reconnect" : "ledger.unavailable", -1, -1, NULL,
                   up ? "allow" : "error", up ? MNC_OK : MNC_R_LEDGER_UNAVAILABLE, st);
    }
}
