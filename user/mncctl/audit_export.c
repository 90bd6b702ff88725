// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* audit_export.c - `mncctl audit export [--format ocsf|jsonl] [--follow] [--host NAME]
 * [FILE...]`: the audit records of FILEs (default /var/lib/mnc/audit.jsonl), in the order
 * given, one event per line on stdout (docs/siem.md).
 *
 * `mncctl audit export --classes` prints the mapping table: op, class_uid, class, activity_id.
 *
 * --format ocsf (the default) prints each record as an OCSF 1.8.0 event (ocsf.h); jsonl prints
 * the record lines as they are. --follow keeps reading the last FILE as it grows, like
 * `tail -F`: when mncd rotates it (docs/audit.md, "Rotation"), the old file is read to its end
 * and the new one at the same path from its start, so no record is skipped or repeated.
 *
 * The chain is watched as it goes: a record whose seq or prev does not continue the previous
 * record's is still exported, with a warning on stderr naming it, and the exit code is 1. A
 * line that is not a record (a torn last line is not complete yet, and is waited for) is
 * reported and skipped. Exit 0 all records continue the chain, 1 a break, 2 usage or a file
 * that cannot be read. Reads only; runs as whoever may read the log (root by default).
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "mnc/audit.h"
#include "mncctl.h"
#include "ocsf.h"

int mncctl_audit_export(int argc, char **argv, const mncctl_global *g);

#define U_EXPORT "audit export [--format ocsf|jsonl] [--follow] [--host NAME] [FILE...]"
#define MAX_LINE (64 * 1024) /* as the log's writer and verifier bound a record */

static volatile sig_atomic_t stop_flag;
static void on_stop(int sig)
{
    (void)sig;
    stop_flag = 1;
}

typedef struct exporter {
    bool ocsf;
    const char *host;
    bool have_last;
    unsigned long long last_seq;
    char last_hash[MNC_AUDIT_HASH_HEX];
    int breaks;
    long bad_lines;
    char *buf; /* bytes read but not yet a complete line */
    size_t len, cap;
} exporter;

static int emit(exporter *x, const char *file, char *line, size_t n)
{
    cJSON *rec = n <= MAX_LINE ? cJSON_ParseWithLength(line, n) : NULL;
    const cJSON *seq = cJSON_GetObjectItemCaseSensitive(rec, "seq");
    const cJSON *prev = cJSON_GetObjectItemCaseSensitive(rec, "prev");
    const cJSON *hash = cJSON_GetObjectItemCaseSensitive(rec, "hash");
    if (!cJSON_IsNumber(seq) || !cJSON_IsString(prev) || !cJSON_IsString(hash) ||
        strlen(hash->valuestring) != MNC_AUDIT_HASH_HEX - 1) {
        fprintf(stderr, "mncctl: audit export: %s: a line that is not an audit record (%zu bytes), skipped\n", file, n);
        x->bad_lines++;
        cJSON_Delete(rec);
        return 0;
    }
    unsigned long long s = (unsigned long long)seq->valuedouble;
    if (x->have_last && (s != x->last_seq + 1 || strcmp(prev->valuestring, x->last_hash) != 0)) {
        fprintf(stderr,
                "mncctl: audit export: %s: record %llu does not continue record %llu (%s): records are "
                "missing or altered (run mncctl audit verify)\n",
                file, s, x->last_seq, s != x->last_seq + 1 ? "seq" : "prev");
        x->breaks++;
    }
    x->have_last = true;
    x->last_seq = s;
    snprintf(x->last_hash, sizeof(x->last_hash), "%s", hash->valuestring);
    int rc = 0;
    if (x->ocsf) {
        cJSON *ev = mnc_ocsf_event(rec, x->host);
        char *out = ev ? cJSON_PrintUnformatted(ev) : NULL;
        if (!out || puts(out) == EOF)
            rc = -1;
        cJSON_free(out);
        cJSON_Delete(ev);
    } else {
        line[n] = '\n';
        if (fwrite(line, 1, n + 1, stdout) != n + 1)
            rc = -1;
    }
    cJSON_Delete(rec);
    return rc;
}

/* Reads what fd has now; emits every complete line. 0, or -1 on a read or write error. */
static int drain(exporter *x, int fd, const char *file)
{
    for (;;) {
        if (x->cap - x->len < 65536) {
            size_t nc = x->cap ? x->cap * 2 : 131072;
            char *nb = realloc(x->buf, nc);
            if (!nb) {
                fprintf(stderr, "mncctl: audit export: out of memory\n");
                return -1;
            }
            x->buf = nb;
            x->cap = nc;
        }
        ssize_t r = read(fd, x->buf + x->len, x->cap - x->len - 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            fprintf(stderr, "mncctl: audit export: %s: %s\n", file, strerror(errno));
            return -1;
        }
        if (r == 0)
            break;
        x->len += (size_t)r;
        size_t p = 0;
        char *nl;
        while ((nl = memchr(x->buf + p, '\n', x->len - p)) != NULL) {
            size_t n = (size_t)(nl - (x->buf + p));
            if (emit(x, file, x->buf + p, n) != 0)
                return -1;
            p += n + 1;
        }
        memmove(x->buf, x->buf + p, x->len - p);
        x->len -= p;
        if (x->len > MAX_LINE) { /* no newline in sight: not a record */
            fprintf(stderr, "mncctl: audit export: %s: a line longer than %d bytes, skipped\n", file, MAX_LINE);
            x->bad_lines++;
            x->len = 0;
        }
    }
    return fflush(stdout) == 0 ? 0 : -1;
}

/* Follows the log at file, fd being open on it: each tick reads what was appended. When the
 * file was rotated (the name is another file now), the old one is read to its end, then the
 * segments written since (PREFIX-<next seq>.jsonl: several rotations may happen between two
 * ticks), then the new active file, so every record is read once. */
static int follow(exporter *x, int fd, const char *file)
{
    /* SA_RESTART: a write blocked on a slow reader goes on after the signal; the loop stops */
    struct sigaction sa = {.sa_handler = on_stop, .sa_flags = SA_RESTART};
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGINT, &sa, NULL) != 0 || sigaction(SIGTERM, &sa, NULL) != 0)
        return -1;
    struct stat cur; /* the file fd reads; fd -1: between files, done is the last one read */
    if (fstat(fd, &cur) != 0)
        return -1;
    struct stat done = cur;
    while (!stop_flag) {
        struct timespec ts = {0, 100 * 1000 * 1000};
        nanosleep(&ts, NULL);
        struct stat now;
        if (fd >= 0) {
            if (drain(x, fd, file) != 0)
                return -1;
            if (stat(file, &now) != 0 || (now.st_ino == cur.st_ino && now.st_dev == cur.st_dev))
                continue;                /* not rotated (or the new file is not in place yet) */
            if (drain(x, fd, file) != 0) /* the rotated file's last lines */
                return -1;
            close(fd);
            fd = -1;
            done = cur;
            if (x->len > 0) {
                fprintf(stderr, "mncctl: audit export: %s: a rotated file ends in a torn line, skipped\n", file);
                x->bad_lines++;
                x->len = 0;
            }
        }
        /* the segments rotated since, in order */
        char seg[4096];
        int sfd;
        while (x->have_last && mnc_audit_segment_name(file, x->last_seq + 1, seg, sizeof(seg)) == 0 &&
               (sfd = open(seg, O_RDONLY | O_CLOEXEC)) >= 0) {
            struct stat ss;
            int rc = fstat(sfd, &ss) == 0 ? drain(x, sfd, seg) : -1;
            close(sfd);
            if (rc != 0)
                return -1;
            done = ss;
        }
        /* then the active file, once it is a new one */
        int nfd = open(file, O_RDONLY | O_CLOEXEC);
        if (nfd < 0)
            continue;
        if (fstat(nfd, &now) != 0 || (now.st_ino == done.st_ino && now.st_dev == done.st_dev)) {
            close(nfd); /* still the file just read: its rotation is not finished */
            continue;
        }
        fd = nfd;
        cur = now;
    }
    if (fd >= 0)
        close(fd);
    return 0;
}

static void print_class(const char *op, const mnc_ocsf_class *c, void *arg)
{
    (void)arg;
    printf("%-22s %4d %-22s %2d\n", op, c->class_uid, c->class_name, c->activity_id);
}

int mncctl_audit_export(int argc, char **argv, const mncctl_global *g)
{
    (void)g;
    if (argc == 3 && !strcmp(argv[2], "--classes")) { /* the mapping table (docs/siem.md) */
        mnc_ocsf_foreach_op(print_class, NULL);
        return fflush(stdout) == 0 ? 0 : 1;
    }
    exporter x = {.ocsf = true};
    bool fol = false;
    char hn[256];
    int i = 2;
    for (; i < argc && argv[i][0] == '-' && argv[i][1] == '-'; i++) {
        if (!strcmp(argv[i], "--format") && i + 1 < argc && !strcmp(argv[i + 1], "ocsf"))
            x.ocsf = true, i++;
        else if (!strcmp(argv[i], "--format") && i + 1 < argc && !strcmp(argv[i + 1], "jsonl"))
            x.ocsf = false, i++;
        else if (!strcmp(argv[i], "--follow"))
            fol = true;
        else if (!strcmp(argv[i], "--host") && i + 1 < argc)
            x.host = argv[++i];
        else if (!strcmp(argv[i], "--")) {
            i++;
            break;
        } else {
            mncctl_err("audit export: unknown option %s (usage: %s)", argv[i], U_EXPORT);
            return 2;
        }
    }
    if (!x.host) {
        if (gethostname(hn, sizeof(hn)) != 0)
            snprintf(hn, sizeof(hn), "localhost");
        hn[sizeof(hn) - 1] = '\0';
        x.host = hn;
    }
    static char *def[] = {"/var/lib/mnc/audit.jsonl"};
    char **files = i < argc ? argv + i : def;
    int nf = i < argc ? argc - i : 1;
    int rc = 0;
    for (int k = 0; k < nf && rc == 0; k++) {
        int fd = open(files[k], O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
            mncctl_err("audit export: %s: %s", files[k], strerror(errno));
            rc = 2;
            break;
        }
        if (drain(&x, fd, files[k]) != 0) {
            close(fd);
            rc = 2;
            break;
        }
        if (k == nf - 1 && fol) {
            if (follow(&x, fd, files[k]) != 0)
                rc = 2;
            continue; /* follow closed fd */
        }
        if (x.len > 0) {
            fprintf(stderr, "mncctl: audit export: %s: ends in a torn line (a crash while appending), skipped\n",
                    files[k]);
            x.len = 0;
        }
        close(fd);
    }
    free(x.buf);
    if (rc == 0 && x.breaks)
        rc = 1;
    return rc;
}
