/*
 * Memory under an ingest burst (issue 9 part 5): a real siox-server
 * (embedded PostgreSQL, --memory-mb SERVER_MB) and 10 real siox-daemons
 * (--memory-mb DAEMON_MB), each fed by one producer process sending 100k
 * activities/s for BURST_S seconds over its unix socket, i.e. 1M activities/s
 * offered in total, far above what the server stores (~220k/s): daemons
 * spool, the server decodes and stores as fast as it can. Prints the peak
 * RSS (VmHWM) of the server and of the largest daemon, next to the configured
 * bounds, the server's RSS before the burst (baseline) and once idle after
 * it, and how many activities were stored.
 *   bench_burst SIOX_SERVER SIOX_DAEMON
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <siox/siox_ontology.h>

#include "cw_synth.h"
#include "server_harness.h"

#define PRODUCERS 10
#define RATE 100000 /* activities/s per producer */
#define BURST_S 3
#define FRAME_ACTS 1000
#define SERVER_MB 512
#define DAEMON_MB 256

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static long kb_of(pid_t pid, const char *field) {
  struct harness tmp = {.pid = pid};
  return harness_server_kb(&tmp, field);
}

static pid_t start_daemon(const char *bin, const char *dir, int i, int port) {
  char sock[300], state[300], server[64], mem[16], log[300];
  snprintf(sock, sizeof sock, "%s/d%d.sock", dir, i);
  snprintf(state, sizeof state, "%s/d%d", dir, i);
  snprintf(log, sizeof log, "%s/d%d.log", dir, i);
  snprintf(server, sizeof server, "127.0.0.1:%d", port);
  snprintf(mem, sizeof mem, "%d", DAEMON_MB);
  pid_t pid = fork();
  if (pid == 0) {
    if (!freopen(log, "w", stderr)) _exit(126);
    execl(bin, bin, "--socket", sock, "--server", server, "--state-dir", state, "--memory-mb", mem,
          "--munge-socket", harness_munge_socket, (char *)NULL);
    _exit(127);
  }
  for (int k = 0; k < 500; k++) {
    int fd = synth_connect(sock);
    if (fd >= 0) return close(fd), pid;
    usleep(10000);
  }
  return -1;
}

/* One producer: FRAME_ACTS activities every FRAME_ACTS/RATE seconds. */
static void produce(const char *dir, int i) {
  char sock[300];
  snprintf(sock, sizeof sock, "%s/d%d.sock", dir, i);
  int fd = synth_connect(sock);
  if (fd < 0) _exit(1);
  struct synth_buf out = {0}, r = {0};
  synth_hello(&out, (uint64_t)i + 1, 0, 0, 0, "/bin/burst", "burst", "burst-job");
  synth_node(&r, 1, "burst-host", "POSIX", "");
  synth_type(&r, 1, 1, "write");
  synth_batch(&out, 0, 1700000000000000000ull, 1700000000000000000ll, &r); /* registrations */
  synth_write_all(fd, out.p, out.len);
  uint64_t aid = 1;
  double t0 = now_s(), period = (double)FRAME_ACTS / RATE;
  for (int f = 0; f < BURST_S * RATE / FRAME_ACTS; f++) {
    r.len = out.len = 0;
    int64_t base = 1700000000000000000ll + (int64_t)aid * 1000;
    for (int k = 0; k < FRAME_ACTS; k++, aid++) {
      struct siox_cw_attr at[2] = {{SIOX_ATTR_IO_OFFSET, SIOX_VT_U64, {.u64 = aid * 4096}},
                                   {SIOX_ATTR_IO_BYTES, SIOX_VT_U64, {.u64 = 4096}}};
      uint64_t t = (uint64_t)(base + k * 1000);
      synth_activity(&r, 1, aid, 0, t, t + 500, 0, 2, at);
    }
    synth_batch(&out, 0, (uint64_t)(base + FRAME_ACTS * 1000), base + FRAME_ACTS * 1000, &r);
    if (synth_write_all(fd, out.p, out.len) != 0) _exit(2);
    double due = t0 + (f + 1) * period, left = due - now_s();
    if (left > 0) usleep((useconds_t)(left * 1e6));
  }
  close(fd);
  _exit(0);
}

int main(int argc, char **argv) {
  if (argc < 3) return fprintf(stderr, "usage: %s SIOX_SERVER SIOX_DAEMON\n", argv[0]), 2;
  struct harness h;
  char mem[16];
  snprintf(mem, sizeof mem, "%d", SERVER_MB);
  const char *extra[] = {"--memory-mb", mem, "--no-analyze", NULL};
  if (harness_setup(&h, argc, argv, NULL, extra) != 0) return 1;
  long before = harness_server_kb(&h, "VmRSS:");
  pid_t daemons[PRODUCERS], producers[PRODUCERS];
  for (int i = 0; i < PRODUCERS; i++)
    if ((daemons[i] = start_daemon(argv[2], h.dir, i, h.port)) < 0) return fprintf(stderr, "daemon %d\n", i), 1;
  for (int i = 0; i < PRODUCERS; i++)
    if ((producers[i] = fork()) == 0) produce(h.dir, i);
  for (int i = 0; i < PRODUCERS; i++) waitpid(producers[i], NULL, 0);
  long long want = (long long)PRODUCERS * BURST_S * RATE, got = 0;
  PGconn *c = harness_db(&h);
  double t0 = now_s();
  while (c && now_s() - t0 < (getenv("BURST_WAIT_S") ? atoi(getenv("BURST_WAIT_S")) : 300) && (got = harness_scalar(c, "SELECT count(*) FROM activities")) < want) sleep(1);
  long daemon_peak = 0;
  for (int i = 0; i < PRODUCERS; i++) {
    long kb = kb_of(daemons[i], "VmHWM:");
    if (kb > daemon_peak) daemon_peak = kb;
  }
  long peak = harness_server_kb(&h, "VmHWM:");
  sleep(3); /* two idle sweeps: limits.c trims malloc's free memory */
  long idle = harness_server_kb(&h, "VmRSS:");
  printf("server_rss_mb_before_burst %.1f MiB\n", before / 1024.0);
  printf("server_rss_mb_peak_burst %.1f MiB\n", peak / 1024.0);
  printf("server_rss_mb_idle_after_burst %.1f MiB\n", idle / 1024.0);
  printf("server_memory_bound_mb %d MiB\n", SERVER_MB);
  printf("daemon_rss_mb_peak_burst %.1f MiB\n", daemon_peak / 1024.0);
  printf("daemon_memory_bound_mb %d MiB\n", DAEMON_MB);
  printf("burst_activities_stored %lld activities\n", got);
  printf("burst_activities_offered %lld activities\n", want);
  PQfinish(c);
  for (int i = 0; i < PRODUCERS; i++) kill(daemons[i], SIGTERM);
  for (int i = 0; i < PRODUCERS; i++) waitpid(daemons[i], NULL, 0);
  int rc = harness_stop(&h);
  if (got != want) {
    fprintf(stderr, "bench_burst: %lld of %lld stored; logs kept in %s\n", got, want, h.dir);
    return 1;
  }
  harness_cleanup(&h);
  return rc == 0 && got == want ? 0 : 1;
}
