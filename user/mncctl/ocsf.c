// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* ocsf.c - audit records as OCSF 1.8.0 events (ocsf.h; the table is docs/siem.md's). */
#include "ocsf.h"

#include <stdio.h>
#include <string.h>

enum {
    C_BASE = 0,         /* Base Event (an op the table lacks) */
    C_PROCESS = 1007,   /* Process Activity */
    C_EVENTLOG = 1008,  /* Event Log Activity */
    C_FINDING = 2004,   /* Detection Finding */
    C_LIFECYCLE = 6002, /* Application Lifecycle */
    C_API = 6003,       /* API Activity */
};

typedef struct op_map {
    const char *op;
    int class_uid;
    int activity_id;
} op_map;

/* Every op mncd writes (user/mncd: the verbs of protocol.c and the events). API Activity
 * activities: 1 Create, 2 Read, 3 Update, 4 Delete, 99 Other. */
static const op_map ops[] = {
    /* the verbs: an agent's or the admin's request, allowed or refused by the monitor */
    {"disclose", C_API, 1},
    {"send", C_API, 1},
    {"forward", C_API, 1},
    {"derive", C_API, 1},
    {"tool", C_API, 1},
    {"connect", C_API, 1},
    {"request", C_API, 1},
    {"approve", C_API, 3},
    {"recv", C_API, 2},
    {"mem.get", C_API, 2},
    {"mem.put", C_API, 3},
    {"log", C_API, 3},
    {"revoke", C_API, 4},
    {"whoami", C_API, 2},
    {"status", C_API, 2},
    {"list", C_API, 2},
    {"audit", C_API, 2},
    {"approvals", C_API, 2},
    {"disclose.status", C_API, 2},
    {"broker.next", C_API, 2},
    {"broker.reply", C_API, 1},
    {"taint.reset", C_API, 4},
    {"workspace.clear", C_API, 4},
    {"quarantine.put", C_API, 1},
    /* MNC-D: a request with nothing admissible takes the policy's failure order */
    {"mnc-d.delegate", C_API, 1},
    {"mnc-d.approval", C_API, 1},
    {"mnc-d.abstain", C_API, 1},
    /* state the monitor changes: MNC-L charges, taint and principals in the kernel maps */
    {"ledger.charge", C_API, 3},
    {"kernel.taint", C_API, 3},
    {"kernel.principals", C_API, 3},
    {"workspace.taint", C_API, 3},
    /* what the kernel layer and the launcher's relay stopped: findings (activity 1 Create) */
    {"kernel.deny", C_FINDING, 1},
    {"kernel.landlock", C_FINDING, 1},
    {"kernel.landlock_audit", C_FINDING, 1},
    {"kernel.netns", C_FINDING, 1},
    {"kernel.fdscan", C_FINDING, 1},
    {"kernel.sweep", C_FINDING, 1},
    {"quarantine", C_FINDING, 1},
    /* agents: 1 Launch, 2 Terminate, 99 Other */
    {"agent.register", C_PROCESS, 1},
    {"agent.adopt", C_PROCESS, 99},
    {"agent.exit", C_PROCESS, 2},
    /* the daemon and its parts: 3 Start, 4 Stop, 6 Enable, 7 Disable, 8 Update, 99 Other */
    {"daemon.start", C_LIFECYCLE, 3},
    {"daemon.stop", C_LIFECYCLE, 4},
    {"daemon.reload", C_LIFECYCLE, 8},
    {"daemon.privsep", C_LIFECYCLE, 3}, /* the monitor started under its own user */
    {"kernel.start", C_LIFECYCLE, 3},
    {"ledger.recover", C_LIFECYCLE, 99},
    {"observe.on", C_LIFECYCLE, 6},
    {"mnc-l.open", C_LIFECYCLE, 3},
    {"mnc-d.recover", C_LIFECYCLE, 99},
    {"ledger.unavailable", C_LIFECYCLE, 7},
    {"ledger.reconnect", C_LIFECYCLE, 6},
    /* the audit log itself: 2 Delete, 3 Export, 5 Rotate, 99 Other */
    {"audit.folded", C_EVENTLOG, 99},
    {"audit.anchor", C_EVENTLOG, 3},
    {"audit.recover", C_EVENTLOG, 99},
    {"audit.rotate", C_EVENTLOG, 5},
    {"audit.prune", C_EVENTLOG, 2},
};

static mnc_ocsf_class class_info(int class_uid, int activity_id, bool known)
{
    mnc_ocsf_class c = {.class_uid = class_uid, .activity_id = activity_id, .known = known};
    switch (class_uid) {
    case C_PROCESS:
        c.class_name = "Process Activity";
        c.category_uid = 1;
        c.category_name = "System Activity";
        break;
    case C_EVENTLOG:
        c.class_name = "Event Log Activity";
        c.category_uid = 1;
        c.category_name = "System Activity";
        break;
    case C_FINDING:
        c.class_name = "Detection Finding";
        c.category_uid = 2;
        c.category_name = "Findings";
        break;
    case C_LIFECYCLE:
        c.class_name = "Application Lifecycle";
        c.category_uid = 6;
        c.category_name = "Application Activity";
        break;
    case C_API:
        c.class_name = "API Activity";
        c.category_uid = 6;
        c.category_name = "Application Activity";
        break;
    default:
        c.class_uid = C_BASE;
        c.class_name = "Base Event";
        c.category_uid = 0;
        c.category_name = "Uncategorized";
        c.activity_id = 99;
        break;
    }
    return c;
}

mnc_ocsf_class mnc_ocsf_class_of(const char *op)
{
    for (size_t i = 0; op && i < sizeof(ops) / sizeof(ops[0]); i++)
        if (strcmp(ops[i].op, op) == 0)
            return class_info(ops[i].class_uid, ops[i].activity_id, true);
    return class_info(C_BASE, 99, false);
}

void mnc_ocsf_foreach_op(void (*fn)(const char *op, const mnc_ocsf_class *c, void *arg), void *arg)
{
    for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
        mnc_ocsf_class c = class_info(ops[i].class_uid, ops[i].activity_id, true);
        fn(ops[i].op, &c, arg);
    }
}

static const char *str_of(const cJSON *rec, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(rec, k);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* decision -> OCSF outcome. status_id: 1 Success, 2 Failure, 99 Other; action_id: 1 Allowed,
 * 2 Denied, 99 Other; disposition_id: 1 Allowed, 2 Blocked, 3 Quarantined, 7 Custom Action,
 * 14 Delayed, 16 No Action, 99 Other; severity_id: 1 Informational, 2 Low, 3 Medium, 4 High. */
typedef struct outcome {
    const char *decision;
    int status_id, action_id, disposition_id, severity_id;
} outcome;

static const outcome outcomes[] = {
    {"allow", 1, 1, 1, 1},     {"deny", 2, 2, 2, 3},        {"withheld", 2, 2, 3, 3},
    {"error", 2, 99, 99, 4},   {"delegate", 99, 99, 7, 2},  {"approval", 99, 99, 14, 2},
    {"abstain", 2, 99, 16, 2}, {"would_deny", 1, 1, 15, 3}, /* observe mode: allowed, the violation Detected */
};

static bool add_num(cJSON *o, const char *k, double v) { return cJSON_AddNumberToObject(o, k, v) != NULL; }
static bool add_str(cJSON *o, const char *k, const char *v) { return cJSON_AddStringToObject(o, k, v) != NULL; }

/* {"name": name} added to o under k (NULL if out of memory). */
static cJSON *add_named(cJSON *o, const char *k, const char *name)
{
    cJSON *x = cJSON_AddObjectToObject(o, k);
    return x && add_str(x, "name", name) ? x : NULL;
}

static bool add_device(cJSON *ev, const char *host)
{
    cJSON *dev = add_named(ev, "device", host);
    return dev && add_str(dev, "hostname", host) && add_num(dev, "type_id", 1); /* 1 Server */
}

cJSON *mnc_ocsf_event(const cJSON *rec, const char *host)
{
    const cJSON *seq = cJSON_GetObjectItemCaseSensitive(rec, "seq");
    const cJSON *tm = cJSON_GetObjectItemCaseSensitive(rec, "time");
    const char *op = str_of(rec, "op"), *sender = str_of(rec, "sender"), *receiver = str_of(rec, "receiver");
    const char *object = str_of(rec, "object"), *decision = str_of(rec, "decision");
    const char *reason = str_of(rec, "reason"), *detail = str_of(rec, "detail");
    if (!cJSON_IsNumber(seq) || !cJSON_IsNumber(tm) || !op)
        return NULL;
    mnc_ocsf_class c = mnc_ocsf_class_of(op);
    outcome oc = {decision, 99, 99, 99, 0};
    for (size_t i = 0; decision && i < sizeof(outcomes) / sizeof(outcomes[0]); i++)
        if (strcmp(outcomes[i].decision, decision) == 0)
            oc = outcomes[i];
    if (c.class_uid == C_FINDING && oc.severity_id == 3)
        oc.severity_id = 4; /* the kernel stopped an agent: act on it */

    cJSON *ev = cJSON_CreateObject();
    char buf[512];
    bool ok = ev != NULL;
    ok = ok && add_num(ev, "class_uid", c.class_uid) && add_str(ev, "class_name", c.class_name) &&
         add_num(ev, "category_uid", c.category_uid) && add_str(ev, "category_name", c.category_name) &&
         add_num(ev, "activity_id", c.activity_id) && add_num(ev, "type_uid", c.class_uid * 100.0 + c.activity_id) &&
         add_num(ev, "time", tm->valuedouble) && add_num(ev, "severity_id", oc.severity_id) &&
         add_num(ev, "status_id", oc.status_id) && add_num(ev, "action_id", oc.action_id) &&
         add_num(ev, "disposition_id", oc.disposition_id);
    if (ok && decision)
        ok = add_str(ev, "status", decision) && add_str(ev, "action", decision) && add_str(ev, "disposition", decision);
    if (ok && reason)
        ok = add_str(ev, "status_code", reason);
    if (ok && detail)
        ok = add_str(ev, "status_detail", detail);
    if (ok) {
        snprintf(buf, sizeof(buf), "mnc %s %s (%s)%s%.64s%s%.64s", op, decision ? decision : "?", reason ? reason : "?",
                 sender ? " by " : "", sender ? sender : "", receiver ? " to " : "", receiver ? receiver : "");
        ok = add_str(ev, "message", buf);
    }
    /* metadata: the product, the schema version, the security_control profile, the record's
     * place in the chain (uid = host:seq, so two hosts' events never share one). */
    cJSON *md = ok ? cJSON_AddObjectToObject(ev, "metadata") : NULL;
    cJSON *prod = md ? add_named(md, "product", "mnc") : NULL;
    cJSON *profiles = md ? cJSON_AddArrayToObject(md, "profiles") : NULL;
    ok = prod && profiles && add_str(prod, "vendor_name", "mnc") && add_str(md, "version", MNC_OCSF_VERSION) &&
         add_str(md, "log_name", "audit.jsonl") && add_str(md, "log_provider", "mncd");
    if (ok) {
        cJSON *p = cJSON_CreateString("security_control");
        ok = p && cJSON_AddItemToArray(profiles, p);
        snprintf(buf, sizeof(buf), "%.255s:%.0f", host, seq->valuedouble);
        ok = ok && add_str(md, "uid", buf);
    }

    switch (ok ? c.class_uid : -1) {
    case C_API: {
        cJSON *actor = cJSON_AddObjectToObject(ev, "actor");
        ok = actor && (sender ? add_named(actor, "user", sender) != NULL : add_str(actor, "app_name", "mncd"));
        cJSON *api = ok ? cJSON_AddObjectToObject(ev, "api") : NULL;
        ok = api && add_str(api, "operation", op) && add_named(api, "service", "mncd");
        cJSON *src = ok ? add_named(ev, "src_endpoint", sender ? sender : "mncd") : NULL;
        ok = src && add_str(src, "hostname", host);
        if (ok && receiver)
            ok = add_named(ev, "dst_endpoint", receiver) != NULL;
        break;
    }
    case C_FINDING: {
        cJSON *fi = cJSON_AddObjectToObject(ev, "finding_info");
        snprintf(buf, sizeof(buf), "%.255s:%.0f", host, seq->valuedouble);
        ok = fi && add_str(fi, "uid", buf);
        snprintf(buf, sizeof(buf), "%s: %s %s (%s)", sender ? sender : "an agent", op, decision ? decision : "?",
                 reason ? reason : "?");
        ok = ok && add_str(fi, "title", buf) && add_device(ev, host);
        cJSON *types = ok ? cJSON_AddArrayToObject(fi, "types") : NULL;
        cJSON *t = types ? cJSON_CreateString(op) : NULL;
        ok = t && cJSON_AddItemToArray(types, t);
        break;
    }
    case C_PROCESS: {
        cJSON *actor = cJSON_AddObjectToObject(ev, "actor");
        ok = actor && add_str(actor, "app_name", "mncd") &&
             add_named(ev, "process",
                       sender     ? sender
                       : receiver ? receiver
                                  : "?") &&
             add_device(ev, host);
        break;
    }
    case C_LIFECYCLE: {
        cJSON *app = add_named(ev, "app",
                               strncmp(op, "kernel.", 7) == 0   ? "mncd kernel layer"
                               : strncmp(op, "ledger.", 7) == 0 ? "mncd MNC-L ledger"
                                                                : "mncd");
        ok = app && add_str(app, "vendor_name", "mnc");
        break;
    }
    case C_EVENTLOG:
        ok = add_device(ev, host) && add_str(ev, "log_name", "audit.jsonl") && add_str(ev, "log_provider", "mncd");
        break;
    default:
        break;
    }
    if (ok && object && (c.class_uid == C_API || c.class_uid == C_FINDING)) {
        cJSON *res = cJSON_AddArrayToObject(ev, "resources");
        cJSON *r = res ? cJSON_CreateObject() : NULL;
        ok = r && cJSON_AddItemToArray(res, r) && add_str(r, "uid", object) && add_str(r, "type", "mnc.disclosure");
    }
    /* the record itself, members in order: seq, time, op, ..., prev, hash */
    cJSON *un = ok ? cJSON_AddObjectToObject(ev, "unmapped") : NULL;
    cJSON *copy = un ? cJSON_Duplicate(rec, true) : NULL;
    if (!copy || !cJSON_AddItemToObject(un, "mnc", copy)) {
        cJSON_Delete(copy);
        cJSON_Delete(ev);
        return NULL;
    }
    return ev;
}
