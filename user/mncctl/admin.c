// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* admin.c - the admin verbs that loosen what the kernel enforces, taint.reset and
 * workspace.clear, sent to mncd's enforcer on its admin socket (SOCKET.admin), never through the
 * monitor: a compromised monitor must not be able to untaint an agent or clear a label
 * (docs/privsep.md). The request is the admin's own JSON (parsed here, in the admin's process);
 * the enforcer gets a typed message, checks the peer with the kernel and answers; the answer is
 * turned back into a response shaped as mncd's protocol answers (docs/protocol.md). */
#include <cjson/cJSON.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "../mncd/psp_io.h"
#include "../mncd/wsrec.h"
#include "admin.h"
#include "mnc/protocol.h"

bool mncctl_admin_verb(const cJSON *req)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(req, "verb");
    return cJSON_IsString(v) && (!strcmp(v->valuestring, "taint.reset") || !strcmp(v->valuestring, "workspace.clear"));
}

static const char *str_of(const cJSON *req, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(req, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* The removed record as the JSON object mncd used to store. */
static cJSON *record_json(const uint8_t *v, size_t len)
{
    wsrec t;
    if (len == 0 || wsrec_decode(v, len, NULL, &t) != 0)
        return NULL;
    cJSON *o = cJSON_CreateObject(), *s = o ? cJSON_AddArrayToObject(o, "sinks") : NULL;
    const char *names[WSREC_MAX_SINKS];
    int ns = wsrec_sink_names(v, len, names, WSREC_MAX_SINKS);
    for (int i = 0; s && i < ns; i++)
        cJSON_AddItemToArray(s, cJSON_CreateString(names[i]));
    cJSON *ob = s ? cJSON_AddArrayToObject(o, "objects") : NULL;
    for (int i = 0; ob && i < t.n_obj; i++) {
        char hex[33];
        for (int k = 0; k < 16; k++)
            snprintf(hex + 2 * k, 3, "%02x", t.obj[i][k]);
        cJSON_AddItemToArray(ob, cJSON_CreateString(hex));
    }
    if (!ob || !cJSON_AddBoolToObject(o, "tainted", t.tainted) || !cJSON_AddBoolToObject(o, "may_log", t.may_log) ||
        !cJSON_AddBoolToObject(o, "may_memory", t.may_memory) ||
        !cJSON_AddBoolToObject(o, "may_forward", t.may_forward) ||
        !cJSON_AddBoolToObject(o, "may_external", t.may_external) || !cJSON_AddStringToObject(o, "agent", t.agent) ||
        !cJSON_AddNumberToObject(o, "time_ms", (double)t.time_ms) ||
        !cJSON_AddBoolToObject(o, "narrowed", t.narrowed) || !cJSON_AddBoolToObject(o, "legacy", t.legacy)) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

static cJSON *refused_json(const cJSON *id, const struct psp_refused *r)
{
    switch (r->code) {
    case PSP_NO_UNKNOWN:
        return mnc_resp_error(id, MNC_R_UNKNOWN_AGENT, "%s", r->detail);
    case PSP_NO_INVALID:
    case PSP_NO_NOT_ADMIN:
        return mnc_resp_deny(id, r->code == PSP_NO_INVALID ? MNC_R_INVALID : MNC_R_UNKNOWN_AGENT, "%s", r->detail);
    case PSP_NO_OFF:
    case PSP_NO_MALFORMED:
    case PSP_NO_STATE:
        return mnc_resp_error(id, MNC_R_INVALID, "%s", r->detail);
    default:
        return mnc_resp_error(id, MNC_R_INTERNAL, "%s", r->detail);
    }
}

int mncctl_admin_call(const char *socket_path, const cJSON *req, cJSON **resp, char *err, size_t n)
{
    *resp = NULL;
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(req, "id");
    bool reset = !strcmp(str_of(req, "verb"), "taint.reset");
    static psp_buf m, r;
    memset(&m, 0, sizeof(m));
    if (reset) {
        const char *agent = str_of(req, "agent");
        struct psp_adm_reset *a = (void *)&m;
        psp_hdr_init(&a->h, PSP_ADM_RESET, 1);
        if (!agent || !*agent || strlen(agent) >= sizeof(a->agent) ||
            strspn(agent, "abcdefghijklmnopqrstuvwxyz"
                          "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
                          "0123456789_.:-") != strlen(agent)) {
            *resp = mnc_resp_error(id, MNC_R_UNKNOWN_AGENT, "\"%s\" is not an agent of the policy", agent ? agent : "");
            return *resp ? 0 : (snprintf(err, n, "out of memory"), -1);
        }
        memcpy(a->agent, agent, strlen(agent));
    } else {
        const char *path = str_of(req, "path");
        struct psp_adm_ws_clear *w = (void *)&m;
        psp_hdr_init(&w->h, PSP_ADM_WS_CLEAR, 1);
        char real[PATH_MAX];
        if (!path || !realpath(path, real)) {
            int e = path ? errno : EINVAL;
            *resp = mnc_resp_deny(id, MNC_R_INVALID, "workspace.clear refused: %.3000s: %s", path ? path : "(no path)",
                                  strerror(e));
            return *resp ? 0 : (snprintf(err, n, "out of memory"), -1);
        }
        snprintf(w->path, sizeof(w->path), "%s", real);
    }
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    if (snprintf(sa.sun_path, sizeof(sa.sun_path), "%s.admin", socket_path) >= (int)sizeof(sa.sun_path)) {
        snprintf(err, n, "socket path too long: %s.admin", socket_path);
        return -1;
    }
    int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
        int e = errno;
        if (fd >= 0)
            close(fd);
        snprintf(err, n, "cannot reach mncd's admin socket %s: %s%s", sa.sun_path, strerror(e),
                 e == EACCES ? " (taint.reset and workspace.clear are the admin's)" : "");
        return -1;
    }
    int fds[PSP_MAX_FDS], nfds = 0;
    ssize_t len = psp_send(fd, &m, NULL, 0, false) == 0 ? psp_recv(fd, &r, fds, &nfds, false) : -EIO;
    close(fd);
    char why[300];
    int t = len > 0 ? psp_check_reply(&r, (size_t)len, nfds, 0, why, sizeof(why)) : -1;
    psp_close_fds(fds, nfds);
    if (t < 0) {
        snprintf(err, n, "mncd's admin socket: %s",
                 len > 0    ? why
                 : len == 0 ? "closed without an answer"
                            : strerror((int)-len));
        return -1;
    }
    if (t == PSP_REFUSED) {
        *resp = refused_json(id, (void *)&r);
    } else if (t == PSP_ADM_RESET_R && reset) {
        const struct psp_adm_reset_r *a = (void *)&r;
        *resp = mnc_resp_new(id, true, "allow", MNC_OK);
        if (*resp) {
            cJSON_AddStringToObject(*resp, "agent", str_of(req, "agent"));
            cJSON_AddBoolToObject(*resp, "was_tainted", a->was_tainted);
            cJSON_AddNumberToObject(*resp, "live_cgroups", a->live_cgroups);
        }
    } else if (t == PSP_ADM_WS_CLEAR_R && !reset) {
        const struct psp_adm_ws_clear_r *w = (void *)&r;
        *resp = mnc_resp_new(id, true, "allow", MNC_OK);
        if (*resp) {
            cJSON_AddStringToObject(*resp, "path", w->path);
            cJSON_AddBoolToObject(*resp, "was_tainted", w->was_tainted);
            cJSON *prev = w->was_tainted ? record_json(w->previous, w->previous_len) : NULL;
            if (prev)
                cJSON_AddItemToObject(*resp, "previous", prev);
        }
    } else {
        snprintf(err, n, "mncd's admin socket answered %s", psp_type_name((uint32_t)t));
        return -1;
    }
    return *resp ? 0 : (snprintf(err, n, "out of memory"), -1);
}
