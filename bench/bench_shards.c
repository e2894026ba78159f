/*
 * Sharded ingest benchmark (issue 15 §2): starts 3 real siox-servers with
 * --shard K/3, each with its own embedded PostgreSQL, and for N = 1, 2, 3
 * sends the same load (batches of 64k SPMD activities, 4 in flight, as
 * bench_server) to each of the first N shards at once, one daemon per
 * shard. The rounds interleave N (1,2,3 / 2,3,1 / 3,1,2 ...), so a warehouse
 * that grows and a machine whose load changes weigh on every N alike; each
 * figure is the median over rounds. Prints, per N:
 *   server_ingest_activities_per_s_shards_N   all activities over the wall time
 *                                             from the first send to the last Ack
 *   server_cpu_s_per_million_activities_shards_N
 *                                             CPU seconds (user + system) of one
 *                                             shard's siox-server and its whole
 *                                             PostgreSQL (postmaster, backends,
 *                                             exited children) per million
 *                                             activities it stored, mean of the N
 * On a machine with fewer cores than shards the servers share them, so the
 * rate cannot grow with N; the CPU per activity must stay flat: no shard
 * waits for another or for any shared point.
 * Usage: bench_shards SIOX_SERVER [activities_per_shard] [rounds]
 */
#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "server_harness.h"
#include "siox_frame.h"

#define PER_BATCH 65536
#define WINDOW 4
#define SHARDS 3
#define MAX_ROUNDS 16

struct enc {
  uint8_t *frame;
  size_t len;
};

struct sender {
  int port;
  struct enc *e; /* e[1..nbatch] */
  int nbatch;
  uint64_t daemon;
  double t_end;
  int rc;
};

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static struct enc encode(uint64_t d, uint64_t seq, uint32_t pid) {
  struct enc e = {0, 0};
  e.frame = spmd_batch_frame(d, seq, pid, PER_BATCH, &e.len);
  return e;
}

static void *send_all(void *arg) {
  struct sender *s = arg;
  s->rc = -1;
  int fd = cli_connect(s->port);
  if (fd < 0 || cli_hello(fd, s->daemon, "benchnode", NULL) < 0) return NULL;
  int next = 1;
  long long acked = 0;
  while (acked < s->nbatch) {
    while (next <= s->nbatch && next - acked <= WINDOW) cli_send_raw(fd, s->e[next].frame, s->e[next].len), next++;
    long long a = cli_wait_ack(fd, (uint64_t)acked + 1, 300000);
    if (a < 0) return close(fd), NULL;
    acked = a;
  }
  s->t_end = now_s();
  close(fd);
  s->rc = 0;
  return NULL;
}

/* utime + stime (+ cutime + cstime: reaped children) of pid, in seconds. */
static double cpu_of(pid_t pid, int children) {
  char path[64], buf[1024];
  snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
  FILE *f = fopen(path, "r");
  if (!f) return 0;
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = '\0';
  char *p = strrchr(buf, ')'); /* the command may hold spaces */
  unsigned long long v[17] = {0};
  if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3]) != 4)
    return 0;
  double t = (double)(v[0] + v[1] + (children ? v[2] + v[3] : 0));
  return t / (double)sysconf(_SC_CLK_TCK);
}

static pid_t ppid_of(pid_t pid) {
  char path[64], buf[1024];
  snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
  FILE *f = fopen(path, "r");
  if (!f) return 0;
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = '\0';
  char *p = strrchr(buf, ')');
  int pp = 0;
  return p && sscanf(p + 2, "%*c %d", &pp) == 1 ? (pid_t)pp : 0;
}

/* CPU of one shard: its siox-server, its postmaster with the children it
 * reaped, and the postmaster's live children (backends, walwriter, ...). */
static double shard_cpu(const struct harness *h) {
  char path[400];
  snprintf(path, sizeof path, "%s/pg/postmaster.pid", h->data_dir);
  FILE *f = fopen(path, "r");
  int pm = 0;
  if (f) {
    if (fscanf(f, "%d", &pm) != 1) pm = 0;
    fclose(f);
  }
  double t = cpu_of(h->pid, 0) + (pm ? cpu_of(pm, 1) : 0);
  if (!pm) return t;
  DIR *proc = opendir("/proc");
  for (struct dirent *d; proc && (d = readdir(proc));) {
    pid_t p = (pid_t)atoi(d->d_name);
    if (p > 0 && ppid_of(p) == pm) t += cpu_of(p, 0);
  }
  if (proc) closedir(proc);
  return t;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* One run: n shards at once. Rate and mean CPU per million into *rate, *cpu. */
static int run(struct harness *h, int n, int nbatch, uint64_t *daemon, double *rate, double *cpu) {
  struct sender s[SHARDS];
  pthread_t th[SHARDS];
  double c0[SHARDS];
  for (int k = 0; k < n; k++) {
    s[k] = (struct sender){h[k].port, calloc((size_t)nbatch + 1, sizeof(struct enc)), nbatch, ++*daemon, 0, -1};
    for (int i = 1; i <= nbatch; i++) s[k].e[i] = encode(s[k].daemon, (uint64_t)i, (uint32_t)(1000 + s[k].daemon));
    c0[k] = shard_cpu(&h[k]);
  }
  double t0 = now_s(), t_end = t0;
  for (int k = 0; k < n; k++) pthread_create(&th[k], NULL, send_all, &s[k]);
  int rc = 0;
  *cpu = 0;
  for (int k = 0; k < n; k++) {
    pthread_join(th[k], NULL);
    rc |= s[k].rc;
    if (s[k].t_end > t_end) t_end = s[k].t_end;
  }
  for (int k = 0; k < n; k++) {
    *cpu += (shard_cpu(&h[k]) - c0[k]) / ((double)nbatch * PER_BATCH / 1e6) / n;
    for (int i = 1; i <= nbatch; i++) free(s[k].e[i].frame);
    free(s[k].e);
  }
  *rate = (double)n * nbatch * PER_BATCH / (t_end - t0);
  return rc;
}

int main(int argc, char **argv) {
  if (argc < 2) return fprintf(stderr, "usage: %s SIOX_SERVER [activities_per_shard] [rounds]\n", argv[0]), 2;
  long total = argc > 2 ? atol(argv[2]) : 262144;
  int rounds = argc > 3 ? atoi(argv[3]) : 3;
  if (rounds < 1 || rounds > MAX_ROUNDS) rounds = 3;
  int nbatch = (int)((total + PER_BATCH - 1) / PER_BATCH);
  struct harness h[SHARDS];
  memset(h, 0, sizeof h);
  int rc = 0;
  for (int k = 0; k < SHARDS && rc == 0; k++) {
    char shard[16];
    snprintf(shard, sizeof shard, "%d/%d", k + 1, SHARDS);
    const char *extra[] = {"--shard", shard, "--auth", "none", "--no-analyze", NULL};
    if (harness_init(&h[k], argv[1]) != 0 || harness_start(&h[k], extra) != 0)
      rc = fprintf(stderr, "bench: cannot start shard %d\n", k + 1);
  }
  double rate[SHARDS][MAX_ROUNDS], cpu[SHARDS][MAX_ROUNDS];
  uint64_t daemon = 100;
  for (int r = 0; r < rounds && rc == 0; r++)
    for (int j = 0; j < SHARDS && rc == 0; j++) {
      int n = (r + j) % SHARDS + 1;
      rc = run(h, n, nbatch, &daemon, &rate[n - 1][r], &cpu[n - 1][r]);
      fprintf(stderr, "round %d, %d shard(s): %.0f act/s, %.2f CPU s per million activities per shard\n", r + 1, n,
              rate[n - 1][r], cpu[n - 1][r]);
    }
  for (int n = 1; n <= SHARDS && rc == 0; n++) {
    qsort(rate[n - 1], (size_t)rounds, sizeof(double), cmp);
    qsort(cpu[n - 1], (size_t)rounds, sizeof(double), cmp);
    printf("server_ingest_activities_per_s_shards_%d %.0f act/s\n", n, rate[n - 1][rounds / 2]);
    printf("server_cpu_s_per_million_activities_shards_%d %.2f s\n", n, cpu[n - 1][rounds / 2]);
  }
  for (int k = 0; k < SHARDS; k++) {
    if (h[k].pid) harness_stop(&h[k]);
    harness_cleanup(&h[k]);
  }
  return rc == 0 ? 0 : 1;
}
