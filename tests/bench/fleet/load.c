// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* load.c - the fleet benchmark's client (tests/bench/bench_fleet.sh compiles it; libc only).
 *
 *   load SECONDS CLIENTS SUBJECTS TAG SOCKET...
 *
 * CLIENTS threads per socket, each with its own connection, send `disclose` requests back to
 * back for SECONDS (a charged release each: the state names a subject, the contract has a
 * budget), round-robin over SUBJECTS subjects shared by every host, with unique release ids.
 * Prints one line: "ok N errors E seconds S p50_us P p99_us Q" over the successful requests.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define MAX_LAT (1u << 21)

static double secs;
static int nsubj;
static const char *tag;
static double *lat;
static size_t nlat;
static long errors;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

typedef struct job {
    const char *sock;
    int id;
} job;

static void *client(void *arg)
{
    job *j = arg;
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", j->sock);
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
        perror("connect");
        exit(2);
    }
    char req[1024], resp[1 << 16];
    double end = now_us() + secs * 1e6;
    double *mine = malloc(sizeof(double) * (1u << 16));
    size_t n = 0;
    long err = 0;
    for (unsigned i = 0; now_us() < end; i++) {
        int len = snprintf(req, sizeof(req),
                           "{\"verb\":\"disclose\",\"contract\":\"bench\",\"release\":\"%s-%d-%u\","
                           "\"state\":{\"subject\":\"s%u\",\"fields\":{\"reason\":\"r\","
                           "\"slot_feasible\":\"yes\",\"selected_slot\":\"%u\"}}}\n",
                           tag, j->id, i, (unsigned)(j->id * 7919u + i) % (unsigned)nsubj, i % 16);
        double t0 = now_us();
        if (write(fd, req, (size_t)len) != len) {
            perror("write");
            exit(2);
        }
        size_t got = 0;
        for (;;) {
            ssize_t r = read(fd, resp + got, sizeof(resp) - 1 - got);
            if (r <= 0) {
                fprintf(stderr, "mncd closed the connection\n");
                exit(2);
            }
            got += (size_t)r;
            if (resp[got - 1] == '\n')
                break;
            if (got == sizeof(resp) - 1) {
                fprintf(stderr, "response too long\n");
                exit(2);
            }
        }
        resp[got] = '\0';
        double dt = now_us() - t0;
        if (strstr(resp, "\"outcome\":\"selected\"") && n < (1u << 16))
            mine[n++] = dt;
        else
            err++;
        if (err == 1 && !strstr(resp, "\"outcome\":\"selected\""))
            fprintf(stderr, "first refusal: %.300s", resp);
    }
    close(fd);
    pthread_mutex_lock(&mu);
    for (size_t k = 0; k < n && nlat < MAX_LAT; k++)
        lat[nlat++] = mine[k];
    errors += err;
    pthread_mutex_unlock(&mu);
    free(mine);
    return NULL;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    if (argc < 6) {
        fprintf(stderr, "usage: load SECONDS CLIENTS SUBJECTS TAG SOCKET...\n");
        return 2;
    }
    secs = atof(argv[1]);
    int clients = atoi(argv[2]);
    nsubj = atoi(argv[3]);
    tag = argv[4];
    int nsock = argc - 5;
    lat = malloc(sizeof(double) * MAX_LAT);
    pthread_t *th = calloc((size_t)(clients * nsock), sizeof(*th));
    job *jobs = calloc((size_t)(clients * nsock), sizeof(*jobs));
    if (!lat || !th || !jobs || secs <= 0 || clients < 1 || nsubj < 1)
        return 2;
    double t0 = now_us();
    for (int s = 0; s < nsock; s++)
        for (int c = 0; c < clients; c++) {
            job *j = &jobs[s * clients + c];
            j->sock = argv[5 + s];
            j->id = s * clients + c;
            pthread_create(&th[s * clients + c], NULL, client, j);
        }
    for (int i = 0; i < clients * nsock; i++)
        pthread_join(th[i], NULL);
    double el = (now_us() - t0) / 1e6;
    qsort(lat, nlat, sizeof(double), cmp);
    printf("ok %zu errors %ld seconds %.3f p50_us %.1f p99_us %.1f\n", nlat, errors, el, nlat ? lat[nlat / 2] : 0,
           nlat ? lat[(size_t)(nlat * 0.99)] : 0);
    return 0;
}
