// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* atkv_records.c - records and identifiers (the audit_* and identifier attacks): requests to mncd, the
 * admin's view, fresh instances that probe, canary spellings.
 * Contracts in atkv_records.h; linked into every attack (atk_variants.h). */
#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#include "atk.h"
#include "atk_variants.h"

/* ---- records and identifiers (atk_variants.h) */

int atkv_req(struct atk_ctx *c, const char *req, char *resp, size_t n)
{
    int fd = atk_mncd(c);
    if (fd < 0)
        return -1;
    int rc = atk_call(fd, req, resp, n);
    close(fd);
    return rc;
}

/* the value of "key":"..." after p (no escapes expected in our values) */
static int jstr(const char *p, const char *key, char *out, size_t n)
{
    char pat[96];
    snprintf(pat, sizeof(pat), "\"%s\":\"", key);
    const char *v = strstr(p, pat);
    const char *e = v ? strchr(v + strlen(pat), '"') : NULL;
    if (!e || (size_t)(e - v - strlen(pat)) >= n)
        return -1;
    memcpy(out, v + strlen(pat), (size_t)(e - v - strlen(pat)));
    out[e - v - strlen(pat)] = 0;
    return 0;
}

int atkv_recv_contract(struct atk_ctx *c, const char *contract, char *oid, size_t n)
{
    static char resp[1 << 20];
    char line[16];
    oid[0] = 0;
    atk_say(c, "hold recv"); /* as atk_recv: the orchestrator lets go of the control file */
    if (!fgets(line, sizeof(line), stdin))
        exit(4);
    if (atkv_req(c, "{\"verb\":\"recv\",\"max\":100}", resp, sizeof(resp)) < 0) {
        atk_say(c, "recv fail: no answer");
        exit(3);
    }
    /* the canary: this run's disclosure (obj=) */
    char pat[96];
    snprintf(pat, sizeof(pat), "\"id\":\"%.40s\"", atk_arg(c, "obj") ? atk_arg(c, "obj") : "?");
    const char *mine = strstr(resp, pat);
    const char *v = mine ? strstr(mine, "\"values\":") : NULL;
    if (!v || jstr(v, "selected_slot", c->secret, sizeof(c->secret)) < 0) {
        atk_say(c, "recv fail: %.200s", resp);
        exit(3);
    }
    snprintf(c->object, sizeof(c->object), "%.32s", atk_arg(c, "obj"));
    atk_say(c, "recv ok");
    /* the first object of `contract`: {"id":"...","contract":"..." */
    snprintf(pat, sizeof(pat), "\"contract\":\"%s\"", contract);
    const char *p = strstr(resp, pat);
    const char *id = p;
    while (id && id > resp && strncmp(id, "\"id\":\"", 6) != 0)
        id--;
    if (!p || strncmp(id, "\"id\":\"", 6) != 0 || n < 33)
        return -1;
    snprintf(oid, n, "%.32s", id + 6);
    return 0;
}

static const char *envs(const char *k)
{
    const char *v = getenv(k);
    return v ? v : "";
}

int atkv_admin(struct atk_ctx *c, const char *file, const char *const *args, char *path, size_t n)
{
    snprintf(path, n, "%s/%s", c->dir, file);
    const char *argv[24];
    int k = 0;
    argv[k++] = envs("MNCCTL");
    argv[k++] = "--json";
    for (int i = 0; args[i] && k < 23; i++)
        argv[k++] = args[i];
    argv[k] = NULL;
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        int o = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (o < 0 || dup2(o, 1) < 0 || dup2(o, 2) < 0)
            _exit(127);
        execv(argv[0], (char **)argv);
        _exit(127);
    }
    int st;
    return waitpid(pid, &st, 0) == pid && WIFEXITED(st) ? 0 : -1;
}

char *atkv_slurp(const char *path, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    size_t cap = 65536, n = 0;
    char *b = malloc(cap + 1);
    ssize_t r;
    while (b && (r = read(fd, b + n, cap - n)) > 0) {
        n += (size_t)r;
        if (n == cap) {
            char *nb = realloc(b, cap * 2 + 1);
            if (!nb) {
                free(b);
                b = NULL;
                break;
            }
            b = nb;
            cap *= 2;
        }
    }
    close(fd);
    if (b) {
        b[n] = 0;
        if (len)
            *len = n;
    }
    return b;
}

/* copy /proc/self/exe to path, 0755 */
static int copy_exe(const char *path)
{
    int in = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
    int out = in >= 0 ? open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755) : -1;
    char buf[65536];
    ssize_t r = -1;
    int rc = in >= 0 && out >= 0 ? 0 : -1;
    while (rc == 0 && (r = read(in, buf, sizeof(buf))) > 0)
        rc = atk_write_all(out, buf, (size_t)r);
    if (in >= 0)
        close(in);
    if (out >= 0 && (fchmod(out, 0755) < 0 || close(out) < 0))
        rc = -1;
    return rc == 0 && r == 0 ? 0 : -1;
}

/* Are all of agent's cgroups in our tree gone (its taint is dropped when the last one is)? */
static int agent_gone(const char *agent)
{
    char base[600];
    snprintf(base, sizeof(base), "%s/%s", envs("ATK_CG2"), envs("ATK_TREE"));
    DIR *d = opendir(base);
    if (!d)
        return 1;
    struct dirent *e;
    int gone = 1;
    size_t al = strlen(agent);
    while ((e = readdir(d)))
        if (strncmp(e->d_name, agent, al) == 0 && e->d_name[al] == '.')
            gone = 0;
    closedir(d);
    return gone;
}

int atkv_run_fresh(struct atk_ctx *c, const char *agent, const char *ws, const char *const *extra, int timeout_s)
{
    char wsd[700], exe[720], ctl[720], ctlarg[740], errp[720];
    snprintf(wsd, sizeof(wsd), "%s/%s", c->dir, ws);
    snprintf(exe, sizeof(exe), "%s/.atk", wsd);
    snprintf(ctl, sizeof(ctl), "%s/.ctl2", wsd);
    snprintf(ctlarg, sizeof(ctlarg), "ctl=%s", ctl);
    snprintf(errp, sizeof(errp), "%s/%s.err", c->dir, ws);
    for (int i = 0; i < 100 && !agent_gone(agent); i++)
        usleep(50000);
    usleep(1200000); /* mncd drops a gone instance's registration (and, the last, its taint) within 1 s */
    if ((mkdir(wsd, 0755) < 0 && errno != EEXIST) || copy_exe(exe) < 0)
        return -1;
    int cf = open(ctl, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (cf < 0 || fchmod(cf, 0666) < 0 || close(cf) < 0)
        return -1;
    const char *argv[ATK_MAXKV + 32];
    int n = 0;
    argv[n++] = envs("MNCCTL");
    argv[n++] = "run";
    argv[n++] = "--agent";
    argv[n++] = agent;
    argv[n++] = "--workspace";
    argv[n++] = wsd;
    if (strcmp(c->mode, "root") == 0 && envs("ATK_ROOTFLAG")[0])
        argv[n++] = envs("ATK_ROOTFLAG");
    argv[n++] = "--";
    argv[n++] = exe;
    argv[n++] = "agent";
    argv[n++] = "phase=2";
    argv[n++] = ctlarg;
    for (int i = 0; i < c->nkv && n < ATK_MAXKV + 24; i++)
        argv[n++] = c->kv[i];
    for (int i = 0; extra && extra[i] && n < ATK_MAXKV + 30; i++)
        argv[n++] = extra[i];
    argv[n] = NULL;
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        setpgid(0, 0);
        int dn = open("/dev/null", O_RDWR | O_CLOEXEC);
        int e = open(errp, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
        if (dn < 0 || dup2(dn, 0) < 0 || dup2(dn, 1) < 0 || (e >= 0 && dup2(e, 2) < 0))
            _exit(127);
        execv(argv[0], (char **)argv);
        _exit(127);
    }
    int st = 0, rc = -1;
    for (int i = 0; i < timeout_s * 20; i++) {
        pid_t w = waitpid(pid, &st, WNOHANG);
        if (w == pid) {
            rc = WIFEXITED(st) ? WEXITSTATUS(st) : 128;
            break;
        }
        usleep(50000);
    }
    if (rc < 0) {
        kill(-pid, SIGKILL);
        waitpid(pid, &st, 0);
    }
    size_t len = 0;
    char *txt = atkv_slurp(ctl, &len);
    if (txt) {
        for (char *l = strtok(txt, "\n"); l; l = strtok(NULL, "\n"))
            if (strncmp(l, "note ", 5) == 0) {
                size_t have = strlen(c->notes);
                snprintf(c->notes + have, sizeof(c->notes) - have, "%s%s: %s", have ? ", " : "", ws, l + 5);
            }
        free(txt);
    }
    return rc;
}

int atkv_listen_tcp(int *port)
{
    int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t al = sizeof(a);
    if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(s, 16) < 0 ||
        getsockname(s, (struct sockaddr *)&a, &al) < 0) {
        if (s >= 0)
            close(s);
        return -1;
    }
    *port = ntohs(a.sin_port);
    return s;
}

long atkv_accept_read(int lfd, int timeout_ms, char *buf, size_t n)
{
    size_t got = 0;
    struct pollfd p = {.fd = lfd, .events = POLLIN};
    while (got + 1 < n && poll(&p, 1, timeout_ms) > 0) {
        int a = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
        if (a < 0)
            break;
        struct pollfd q = {.fd = a, .events = POLLIN};
        while (got + 1 < n && poll(&q, 1, 500) > 0) {
            ssize_t r = read(a, buf + got, n - 1 - got);
            if (r <= 0)
                break;
            got += (size_t)r;
        }
        close(a);
        timeout_ms = 300; /* more connections may follow */
    }
    buf[got] = 0;
    return (long)got;
}

/* the canary's 6 bytes (its 12 hex digits after "mk") */
static int canary_bytes(const char *canary, unsigned char b[6])
{
    if (strlen(canary) < 14)
        return -1;
    for (int i = 0; i < 6; i++) {
        unsigned v;
        if (sscanf(canary + 2 + 2 * i, "%2x", &v) != 1)
            return -1;
        b[i] = (unsigned char)v;
    }
    return 0;
}

int atkv_spelled(const char *text, const char *canary, char *why, size_t n)
{
    unsigned char cb[6];
    if (strstr(text, canary)) {
        snprintf(why, n, "the canary as text");
        return 1;
    }
    if (canary_bytes(canary, cb) < 0)
        return 0;
    const char *hex = canary + 2;
    /* its hex digits inside a word: an IPv6 address (with or without colons), an id */
    char nocolon[1 << 14];
    size_t k = 0;
    for (const char *p = text; *p && k + 1 < sizeof(nocolon); p++)
        if (*p != ':')
            nocolon[k++] = *p;
    nocolon[k] = 0;
    if (strstr(nocolon, hex)) {
        snprintf(why, n, "the canary's hex digits (also across ':' of an address)");
        return 1;
    }
    /* its bytes as numbers in the order they appear: each byte alone (a protocol, a length, an
     * IPv4 octet), or 16-bit pairs (a port, an option name) */
    unsigned long nums[4096];
    size_t nn = 0;
    for (const char *p = text; *p && nn < 4096;) {
        if (*p >= '0' && *p <= '9' && (p == text || !((p[-1] >= '0' && p[-1] <= '9') || p[-1] == 'x'))) {
            char *e;
            unsigned long v = strtoul(p, &e, 10);
            nums[nn++] = v;
            p = e;
        } else {
            p++;
        }
    }
    for (size_t i = 0; i + 6 <= nn; i++) {
        int ok = 1;
        for (int j = 0; j < 6 && ok; j++)
            ok = nums[i + j] == cb[j];
        if (ok) {
            snprintf(why, n, "the canary's bytes as 6 numbers in a row");
            return 1;
        }
    }
    for (size_t i = 0; i + 3 <= nn; i++) {
        int ok = 1;
        for (int j = 0; j < 3 && ok; j++)
            ok = nums[i + j] == ((unsigned long)cb[2 * j] << 8 | cb[2 * j + 1]);
        if (ok) {
            snprintf(why, n, "the canary's bytes as 3 16-bit numbers in a row (ports, option names)");
            return 1;
        }
    }
    /* hex digits one per number (lengths 0..15 or 1..16 in a row) */
    for (size_t i = 0; i + 12 <= nn; i++)
        for (int off = 0; off <= 1; off++) {
            int ok = 1;
            for (int j = 0; j < 12 && ok; j++) {
                char h = hex[j];
                unsigned long d = (unsigned long)(h <= '9' ? h - '0' : h - 'a' + 10);
                ok = nums[i + j] == d + (unsigned long)off;
            }
            if (ok) {
                snprintf(why, n, "the canary's hex digits as 12 numbers in a row");
                return 1;
            }
        }
    return 0;
}

void atkv_candidates(struct atk_ctx *c, char *out, size_t n)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    int at = (int)(ts.tv_nsec / 1000 % 16);
    size_t o = 0;
    for (int i = 0; i < 16 && o + 20 < n; i++) {
        char k[32];
        if (i == at)
            snprintf(k, sizeof(k), "%s", c->canary);
        else
            atk_mkcanary(k, sizeof(k));
        o += (size_t)snprintf(out + o, n - o, "%s%s", i ? "," : "", k);
    }
}

int atkv_recv_one(struct atk_ctx *c)
{
    static char resp[1 << 16];
    char line[16], req[128];
    atk_say(c, "hold recv");
    if (!fgets(line, sizeof(line), stdin))
        exit(4);
    snprintf(req, sizeof(req), "{\"verb\":\"recv\",\"object\":\"%.40s\"}", atk_arg(c, "obj") ? atk_arg(c, "obj") : "");
    const char *v = atkv_req(c, req, resp, sizeof(resp)) == 0 ? strstr(resp, "\"values\":") : NULL;
    if (!v || jstr(v, "selected_slot", c->secret, sizeof(c->secret)) < 0) {
        atk_say(c, "recv fail: %.200s", resp);
        exit(3);
    }
    snprintf(c->object, sizeof(c->object), "%.32s", atk_arg(c, "obj"));
    atk_say(c, "recv ok");
    return 0;
}

int atkv_reset_coordinator(struct atk_ctx *c)
{
    char path[700];
    const char *const args[] = {"call", "{\"verb\":\"taint.reset\",\"agent\":\"coordinator\"}", NULL};
    if (atkv_admin(c, "reset.out", args, path, sizeof(path)) < 0)
        return -1;
    char *t = atkv_slurp(path, NULL);
    int ok = t && strstr(t, "\"ok\":true");
    free(t);
    return ok ? 0 : -1;
}

int atkv_charge_subject(struct atk_ctx *c, const char *subject)
{
    char req[512], resp[4096];
    snprintf(req, sizeof(req),
             "{\"verb\":\"disclose\",\"contract\":\"to_bystander\",\"state\":{\"subject\":\"%s\",\"fields\":"
             "{\"selected_slot\":\"s\",\"slot_feasible\":\"true\"}}}",
             subject);
    return atk_worker_request(c, req, resp, sizeof(resp)) == 0 && strstr(resp, "\"ok\":true") ? 0 : -1;
}

void atkv_send_out(struct atk_ctx *c, const char *what)
{
    int port = (int)atk_argl(c, "lport");
    int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {
        .sin_family = AF_INET, .sin_port = htons((uint16_t)port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    if (s >= 0 && atk_try(c, "probe: connect out", connect(s, (struct sockaddr *)&a, sizeof(a))) == 0)
        atk_try(c, "probe: send what it learnt", write(s, what, strlen(what)));
    if (s >= 0)
        close(s);
}

void atkv_probe_fresh(struct atk_ctx *c, const char *agent, const char *ws, const char *evidence)
{
    int port;
    int l = atkv_listen_tcp(&port);
    if (l < 0)
        return;
    char cands[1024], ca[1100], pa[32], got[4096];
    atkv_candidates(c, cands, sizeof(cands));
    snprintf(ca, sizeof(ca), "cands=%s", cands);
    snprintf(pa, sizeof(pa), "lport=%d", port);
    const char *const extra[] = {ca, pa, NULL};
    int rc = atkv_run_fresh(c, agent, ws, extra, 30);
    atkv_accept_read(l, 500, got, sizeof(got));
    close(l);
    if (strstr(got, c->canary))
        atk_evidence(c, "%s", evidence);
    if (rc != 0)
        atk_note(c, "%s instance exit %d", agent, rc);
}

int atkv_records(struct atk_ctx *c, long since_ms, const char *op,
                 void (*fn)(struct atk_ctx *c, const char *rec, size_t len, void *arg), void *arg)
{
    char path[700], opp[96];
    const char *const args[] = {"audit", "tail", "10000", NULL};
    if (atkv_admin(c, "audit.out", args, path, sizeof(path)) < 0)
        return -1;
    char *t = atkv_slurp(path, NULL);
    if (!t)
        return -1;
    snprintf(opp, sizeof(opp), "\"op\":\"%s\"", op);
    int n = 0;
    for (char *r = strstr(t, "{\"seq\":"); r; r = strstr(r + 1, "{\"seq\":")) {
        char *end = strstr(r + 1, "{\"seq\":");
        size_t len = end ? (size_t)(end - r) : strlen(r);
        const char *tm = strstr(r, "\"time\":");
        if (!tm || atoll(tm + 7) < since_ms || !memmem(r, len, opp, strlen(opp)))
            continue;
        fn(c, r, len, arg);
        n++;
    }
    free(t);
    return n;
}

void atkv_admin_spelled(struct atk_ctx *c, const char *const *args, const char *file)
{
    char path[700], why[200];
    if (atkv_admin(c, file, args, path, sizeof(path)) < 0)
        return;
    char *t = atkv_slurp(path, NULL);
    if (t && atkv_spelled(t, c->canary, why, sizeof(why)))
        atk_evidence(c, "the admin's `mncctl %s %s` spells the canary: %s", args[0], args[1] ? args[1] : "", why);
    free(t);
}

long atkv_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int atkv_probe_cands(struct atk_ctx *c, const char *req_fmt, const char *hit)
{
    char cands[1024], req[1024];
    static char resp[1 << 16];
    snprintf(cands, sizeof(cands), "%s", atk_arg(c, "cands") ? atk_arg(c, "cands") : "");
    int hits = 0, n = 0;
    for (char *k = strtok(cands, ","); k; k = strtok(NULL, ","), n++) {
        snprintf(req, sizeof(req), req_fmt, k);
        int neg = hit[0] == '!';
        if (atkv_req(c, req, resp, sizeof(resp)) < 0 || (strstr(resp, hit + neg) != NULL) == neg)
            continue;
        hits++;
        atkv_send_out(c, k);
    }
    atk_note(c, "probe: %d candidates, %d answered %s", n, hits, hit);
    return hits;
}

int atkv_store_under_canary(struct atk_ctx *c)
{
    char wide[40], req[512], resp[8192];
    if (atkv_recv_contract(c, "wide_scope", wide, sizeof(wide)) < 0) {
        atk_note(c, "no wide_scope object");
        return -1;
    }
    snprintf(req, sizeof(req), "{\"verb\":\"mem.put\",\"key\":\"slot/%s\",\"object\":\"%s\"}", c->secret, wide);
    int ok = atkv_req(c, req, resp, sizeof(resp)) == 0 && strstr(resp, "\"ok\":true");
    atk_note(c, "mem.put slot/<canary>: %s", ok ? "OK" : resp);
    return ok ? 0 : -1;
}
