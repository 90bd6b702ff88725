// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* cmd_metrics.c - `mncctl metrics [--textfile PATH] [--interval SECONDS]` (docs/metrics.md).
 *
 * Asks mncd for `status` (an admin verb: run as root or the configured admin uid), adds the
 * size of each quarantine file (STATE_DIR/quarantine, root-only), and prints the metrics as
 * Prometheus text (mnc/metrics.h), or writes them atomically to PATH for
 * prometheus-node-exporter's textfile collector (PATH: a *.prom file in its
 * --collector.textfile.directory). With --interval it does so every SECONDS until SIGTERM, as
 * a service; without, once (a systemd timer). When mncd does not answer, the output says
 * mnc_up 0 (the alert rules fire on it) and the exit code is 1. The metrics reach Prometheus
 * through the node exporter that already runs on the host: mncd opens no port, and agents get
 * no new door to it.
 */
#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "mnc/metrics.h"
#include "mnc/protocol.h"
#include "mncctl.h"

#define U_METRICS "metrics [--textfile PATH] [--interval SECONDS]   (admin)"

static volatile sig_atomic_t stop_flag;
static void on_stop(int sig)
{
    (void)sig;
    stop_flag = 1;
}

static cJSON *status_of(const mncctl_global *g, char *err, size_t errlen)
{
    int fd = mnc_client_connect(g->socket, err, errlen);
    if (fd < 0)
        return NULL;
    cJSON *req = cJSON_CreateObject(), *resp = NULL;
    if (!req || !cJSON_AddStringToObject(req, "verb", "status") || mnc_client_call(fd, req, &resp, err, errlen) != 0) {
        cJSON_Delete(req);
        close(fd);
        return NULL;
    }
    cJSON_Delete(req);
    close(fd);
    if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(resp, "ok"))) {
        const cJSON *e = cJSON_GetObjectItemCaseSensitive(resp, "error");
        snprintf(err, errlen, "status refused: %s (run as root or mncd's admin uid)",
                 cJSON_IsString(e) ? e->valuestring : "?");
        cJSON_Delete(resp);
        return NULL;
    }
    return resp;
}

/* {"agent.stream": bytes} for STATE_DIR/quarantine/<agent>.<stream> (NULL if unreadable) */
static cJSON *quarantine_of(const cJSON *status)
{
    const cJSON *sd = cJSON_GetObjectItemCaseSensitive(status, "state_dir");
    if (!cJSON_IsString(sd))
        return NULL;
    char dir[4096];
    snprintf(dir, sizeof(dir), "%s/quarantine", sd->valuestring);
    cJSON *q = cJSON_CreateObject();
    DIR *dh = q ? opendir(dir) : NULL;
    if (!dh)
        return q; /* none yet: no series */
    struct dirent *e;
    while ((e = readdir(dh)) != NULL) {
        struct stat st;
        if (e->d_name[0] == '.' || fstatat(dirfd(dh), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode))
            continue;
        cJSON_AddNumberToObject(q, e->d_name, (double)st.st_size);
    }
    closedir(dh);
    return q;
}

static int once(const mncctl_global *g, const char *textfile)
{
    char err[600] = "";
    cJSON *st = status_of(g, err, sizeof(err));
    if (!st)
        mncctl_err("metrics: mncd: %s (writing mnc_up 0)", err);
    cJSON *q = st ? quarantine_of(st) : NULL;
    char *text = mnc_metrics_render(st, q);
    cJSON_Delete(q);
    cJSON_Delete(st);
    if (!text) {
        mncctl_err("metrics: out of memory");
        return 1;
    }
    int rc = st ? 0 : 1;
    if (textfile) {
        char werr[4200];
        if (mnc_metrics_write_file(textfile, text, werr, sizeof(werr)) != 0) {
            mncctl_err("metrics: %s", werr);
            rc = 1;
        }
    } else if (fputs(text, stdout) == EOF || fflush(stdout) != 0) {
        rc = 1;
    }
    free(text);
    return rc;
}

static int c_metrics(int argc, char **argv, const mncctl_global *g)
{
    const char *textfile = NULL;
    long interval = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--textfile") && i + 1 < argc) {
            textfile = argv[++i];
        } else if (!strcmp(argv[i], "--interval") && i + 1 < argc) {
            char *end;
            interval = strtol(argv[++i], &end, 10);
            if (*end || interval < 1 || interval > 86400) {
                mncctl_err("metrics: --interval must be 1..86400 seconds");
                return 2;
            }
        } else {
            mncctl_err("usage: mncctl %s", U_METRICS);
            return 2;
        }
    }
    if (!interval)
        return once(g, textfile);
    struct sigaction sa = {.sa_handler = on_stop};
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGINT, &sa, NULL) != 0 || sigaction(SIGTERM, &sa, NULL) != 0)
        return 1;
    while (!stop_flag) {
        (void)once(g, textfile); /* mncd down: mnc_up 0 is written, and we go on */
        struct timespec ts = {interval, 0};
        while (!stop_flag && nanosleep(&ts, &ts) != 0 && errno == EINTR)
            ;
    }
    return 0;
}

MNCCTL_COMMAND(cmd_metrics, "metrics", U_METRICS, c_metrics)
