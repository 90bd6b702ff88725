// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* quarantine.c - output of a tainted agent that `mncctl run`'s stdio relay withheld (mncd.h,
 * user/mncctl/run_relay.h, docs/kernel.md "Stdio").
 *
 * The relay runs outside the agent as the admin; when the agent's taint does not allow the
 * stream it read from, it sends the chunk here instead of to its own stdout. mncd keeps the
 * bytes for an admin to review in STATE_DIR/quarantine/<agent>.<stream> (root-only: the
 * directory 0700, the file 0600, both owned by mncd's uid; the state dir is unreadable to
 * agents under Landlock), bounded per file by cfg.quarantine_max, and writes one audit record
 * per withholding with the objects the agent holds - the disclosures its taint comes from -
 * and no byte counts (how much the agent wrote is its choice); the record counts against the
 * agent's record budget (core.c). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "mncd.h"

#define QUARANTINE_MAX_OIDS 8 /* object ids named in one audit record (then "and more") */

/* Decodes padded base64 (already validated by the protocol parser) into out (>= 3/4 of n).
 * Returns the decoded length, or -1 on a character outside the alphabet. */
static long b64_decode(const char *in, size_t n, unsigned char *out)
{
    static const char alpha[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t o = 0;
    uint32_t acc = 0;
    int bits = 0;
    for (size_t i = 0; i < n; i++) {
        if (in[i] == '=')
            break;
        const char *p = strchr(alpha, in[i]);
        if (!p || !in[i])
            return -1;
        acc = (acc << 6) | (uint32_t)(p - alpha);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[o++] = (unsigned char)((acc >> bits) & 0xff);
        }
    }
    return (long)o;
}

typedef struct held_ctx {
    unsigned agent;
    int n;
    char *p; /* into buf */
    size_t left;
} held_ctx;

/* Appends the id of every object the agent holds (bounded; counts all). */
static int held_one(mnc_disclosure *o, void *arg)
{
    held_ctx *h = arg;
    if (!mnc_set_has(&o->holders, h->agent))
        return 0;
    if (h->n < QUARANTINE_MAX_OIDS && h->left > MNC_OID_HEX + 1) {
        char hex[MNC_OID_HEX];
        mnc_oid_hex(&o->id, hex);
        int w = snprintf(h->p, h->left, "%s%s", h->n ? "," : "", hex);
        if (w > 0 && (size_t)w < h->left) {
            h->p += w;
            h->left -= (size_t)w;
        }
    }
    h->n++;
    return 0;
}

/* Appends up to `room` bytes of data to the quarantine file; *kept receives what was written.
 * 0, or -1 with errno (nothing may be assumed kept then). */
static int append(const mncd *d, const char *agent, const char *stream, const unsigned char *data, size_t n,
                  size_t *kept)
{
    *kept = 0;
    char dir[PATH_MAX + 16], path[PATH_MAX + 160];
    snprintf(dir, sizeof(dir), "%s/quarantine", d->cfg.state_dir);
    if (mkdir(dir, 0700) != 0 && errno != EEXIST)
        return -1;
    struct stat st;
    /* a directory another process could enter would expose what was withheld */
    if (lstat(dir, &st) != 0)
        return -1;
    if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid()) {
        errno = ENOTDIR;
        return -1;
    }
    if ((st.st_mode & 077) && chmod(dir, 0700) != 0)
        return -1;
    snprintf(path, sizeof(path), "%s/%s.%s", dir, agent, stream);
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return -1;
    int rc = -1;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        if (errno == 0)
            errno = EINVAL;
        goto out;
    }
    if ((st.st_mode & 077) && fchmod(fd, 0600) != 0)
        goto out;
    uint64_t size = (uint64_t)st.st_size;
    size_t room = size >= d->cfg.quarantine_max ? 0 : (size_t)(d->cfg.quarantine_max - size);
    size_t want = n < room ? n : room;
    size_t done = 0;
    while (done < want) {
        ssize_t w = write(fd, data + done, want - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            break;
        done += (size_t)w;
    }
    *kept = done;
    /* the audit record is fsynced before the response; the bytes it counts are too */
    rc = (done == want && (done == 0 || fdatasync(fd) == 0)) ? 0 : -1;
out:;
    int e = errno;
    close(fd);
    errno = e;
    return rc;
}

cJSON *mncd_quarantine_put(mncd *d, const mncd_ident *w, const mnc_request *q)
{
    /* mncd_handle admitted an admin; an agent process (identified by its cgroup) never is one,
     * but say it here too: only the launcher outside the agent may file its output */
    if (!w->admin || w->via == MNCD_VIA_CGROUP) {
        mncd_audit(d, "quarantine", w->agent, -1, NULL, "deny", MNC_R_UNKNOWN_AGENT,
                   "quarantine.put from a caller that is not the admin outside the agents");
        return mnc_resp_deny(q->id, MNC_R_UNKNOWN_AGENT, "quarantine.put is the launcher's (admin) verb");
    }
    int agent = mnc_policy_agent(d->policy, q->agent);
    if (agent < 0)
        return mnc_resp_error(q->id, MNC_R_UNKNOWN_AGENT, "\"%s\" is not an agent of the policy", q->agent);
    if (strcmp(q->stream, "stdout") != 0 && strcmp(q->stream, "stderr") != 0)
        return mnc_resp_error(q->id, MNC_R_INVALID, "\"stream\" must be \"stdout\" or \"stderr\"");
    size_t n64 = strlen(q->data);
    unsigned char *buf = malloc(n64 / 4 * 3 + 1);
    if (!buf)
        return mnc_resp_error(q->id, MNC_R_INTERNAL, "out of memory");
    long n = b64_decode(q->data, n64, buf);
    if (n < 0) {
        free(buf);
        return mnc_resp_error(q->id, MNC_R_INVALID, "\"data\" must be base64");
    }
    size_t kept = 0;
    int wr = append(d, q->agent, q->stream, buf, (size_t)n, &kept);
    int werr = errno;
    free(buf);
    uint64_t lost = (uint64_t)n - kept + (q->lost > 0 ? (uint64_t)q->lost : 0);

    char oids[QUARANTINE_MAX_OIDS * (MNC_OID_HEX + 1) + 1] = "";
    held_ctx h = {.agent = (unsigned)agent, .p = oids, .left = sizeof(oids)};
    mnc_registry_each(&d->store.reg, held_one, &h);
    /* the record's object is the first held object; the detail names up to 8 and the count */
    mnc_oid first;
    char first_hex[MNC_OID_HEX];
    snprintf(first_hex, sizeof(first_hex), "%.32s", oids);
    bool have_first = h.n > 0 && mnc_oid_parse(first_hex, &first) == 0;
    /* No byte counts: how much a tainted agent writes, chunk by chunk, is its choice (a count
     * per record spelled a secret, docs/threat-model.md "Records about agents"). What was kept
     * or lost is said as a class; the bytes themselves are in the quarantine file. */
    char why[160] = "all of it kept in quarantine";
    if (lost && wr != 0)
        snprintf(why, sizeof(why), "not all of it kept: the quarantine write failed (%s)", strerror(werr));
    else if (lost)
        snprintf(why, sizeof(why), "not all of it kept: %s",
                 kept < (size_t)n ? "the quarantine bound was reached" : "the relay had to drop some");
    char det[1024];
    snprintf(det, sizeof(det), "stream %s: output withheld, %s; agent holds %s%s%s", q->stream, why,
             h.n ? "objects " : "no object", oids, h.n > QUARANTINE_MAX_OIDS ? " and more" : "");
    mncd_audit_event(d, "quarantine", agent, NULL, have_first ? &first : NULL, "withheld", mnc_reason_name(MNC_R_LOG),
                     det);
    cJSON *r = mnc_resp_new(q->id, true, "allow", MNC_OK);
    if (r) {
        cJSON_AddNumberToObject(r, "bytes", (double)n);
        cJSON_AddNumberToObject(r, "kept", (double)kept);
        cJSON_AddNumberToObject(r, "lost", (double)lost);
    }
    return r;
}
