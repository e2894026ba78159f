/*
 * bench_daemon: siox-daemon throughput and wire cost. Starts the real daemon
 * binary, a sink server thread that acks every batch, and N "ranks" (client
 * connections) sending SPMD-pattern BATCH frames: strided 4096 B writes to a
 * shared file, 2 numeric attributes, TSC timestamps. Measures from the first
 * byte sent until the sink holds every activity; medians over the runs.
 * Usage: bench_daemon [PATH-TO-siox-daemon or ""] [RUNS]
 */
#include <libgen.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <siox/siox_ontology.h>

#include "cw_synth.h"
#include "fake_server.h"

#define RANKS 8
#define PER_FRAME 4096
#define FRAMES 32 /* per rank and run: 8 x 32 x 4096 = 1,048,576 activities */
#define TICKS_PER_NS 3

struct rank {
  int id, fd;
  struct synth_buf frames; /* HELLO + all BATCH frames of one run */
  pthread_t thread;
};

static pthread_barrier_t go;

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint64_t xorshift(uint64_t *s) {
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}

/* What an IOR-like rank's client would send: one write type, strided offsets,
 * ~2 us per write, timestamps in TSC ticks. */
static void build_frames(struct rank *r, uint64_t nonce) {
  const uint64_t tsc0 = 1000000000ull;
  const int64_t ns0 = 1700000000000000000ll;
  synth_hello(&r->frames, nonce, SIOX_CW_CLOCK_TSC, tsc0, ns0, "/usr/bin/ior", "ior -w -t 4k -b 128m", "4711");
  struct synth_buf reg = {0}; /* node and type first, as libsiox-client does: the daemon validates against them */
  synth_node(&reg, 1, "node1", "POSIX", "");
  synth_type(&reg, 1, 1, "write");
  synth_batch(&r->frames, 0, tsc0, ns0, &reg);
  synth_buf_free(&reg);
  uint64_t aid = 1, t = tsc0 + 1000, rng = nonce * 0x9e3779b97f4a7c15ull + 1;
  for (int f = 0; f < FRAMES; f++) {
    struct synth_buf recs = {0};
    for (int i = 0; i < PER_FRAME; i++, aid++) {
      uint64_t k = (uint64_t)f * PER_FRAME + (uint64_t)i;
      struct siox_cw_attr at[2] = {{SIOX_ATTR_IO_OFFSET, SIOX_VT_U64, {.u64 = (k * RANKS + (uint64_t)r->id) * 4096}},
                                   {SIOX_ATTR_IO_BYTES, SIOX_VT_U64, {.u64 = 4096}}};
      /* Real writes jitter: random (not periodic, which lz4 would fold
       * away) +-150 ns on the duration and on the gap. */
      uint64_t dur = (1500 + xorshift(&rng) % 300) * TICKS_PER_NS;
      synth_activity(&recs, 1, aid, 0, t, t + dur, 0, 2, at);
      t += dur + (500 + xorshift(&rng) % 300) * TICKS_PER_NS;
    }
    synth_batch(&r->frames, 0, t, ns0 + (int64_t)((t - tsc0) / TICKS_PER_NS), &recs);
    synth_buf_free(&recs);
  }
}

static void *rank_main(void *arg) {
  struct rank *r = arg;
  pthread_barrier_wait(&go);
  if (synth_write_all(r->fd, r->frames.p, r->frames.len) < 0)
    fprintf(stderr, "bench_daemon: rank %d: write failed\n", r->id);
  return NULL;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static pid_t start_daemon(const char *path, const char *sock, const char *state, int port) {
  char server[64];
  snprintf(server, sizeof server, "127.0.0.1:%d", port);
  pid_t pid = fork();
  if (pid == 0) {
    execl(path, path, "--socket", sock, "--server", server, "--state-dir", state, "--batch-ms", "50", "--auth", "none",
          (char *)NULL); /* a fake server: no credential to check */
    _exit(127);
  }
  for (int i = 0; i < 500; i++) {
    int fd = synth_connect(sock);
    if (fd >= 0) {
      close(fd);
      return pid;
    }
    usleep(10000);
  }
  return -1;
}

static uint64_t stored(struct fake_server *s, uint64_t *wire) {
  pthread_mutex_lock(&s->mu);
  uint64_t v = s->activities_stored;
  if (wire)
    *wire = s->wire_bytes;
  pthread_mutex_unlock(&s->mu);
  return v;
}

/* One run: fresh connections, every rank released at once. */
static int run_once(const char *sock, struct fake_server *srv, int run, double *rate, double *bpa) {
  struct rank ranks[RANKS];
  uint64_t wire0, base = stored(srv, &wire0);
  for (int i = 0; i < RANKS; i++) {
    ranks[i] = (struct rank){.id = i};
    build_frames(&ranks[i], (uint64_t)run * 1000 + (uint64_t)i + 1);
    if ((ranks[i].fd = synth_connect(sock)) < 0)
      return -1;
  }
  pthread_barrier_init(&go, NULL, RANKS + 1);
  for (int i = 0; i < RANKS; i++)
    pthread_create(&ranks[i].thread, NULL, rank_main, &ranks[i]);
  double t0 = now_s();
  pthread_barrier_wait(&go);
  const uint64_t want = base + (uint64_t)RANKS * FRAMES * PER_FRAME;
  while (stored(srv, NULL) < want && now_s() - t0 < 120)
    usleep(200);
  double t1 = now_s();
  uint64_t wire1, got = stored(srv, &wire1) - base;
  for (int i = 0; i < RANKS; i++) {
    pthread_join(ranks[i].thread, NULL);
    close(ranks[i].fd);
    synth_buf_free(&ranks[i].frames);
  }
  pthread_barrier_destroy(&go);
  if (got < want - base)
    return -1;
  *rate = (double)got / (t1 - t0);
  *bpa = (double)(wire1 - wire0) / (double)got;
  fprintf(stderr, "run %d: %.0f act/s, %.2f B/activity\n", run, *rate, *bpa);
  return 0;
}

int main(int argc, char **argv) {
  char path[PATH_MAX];
  if (argc > 1 && argv[1][0]) {
    snprintf(path, sizeof path, "%s", argv[1]);
  } else { /* build tree layout: bench/bench_daemon next to siox-daemon/ */
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    self[n > 0 ? n : 0] = '\0';
    snprintf(path, sizeof path, "%s/../siox-daemon/siox-daemon", dirname(self));
  }
  int runs = argc > 2 ? atoi(argv[2]) : 5;
  char dir[] = "/tmp/siox-bench-daemon-XXXXXX", sock[128], state[128];
  if (!mkdtemp(dir))
    return 1;
  snprintf(sock, sizeof sock, "%s/d.sock", dir);
  snprintf(state, sizeof state, "%s/state", dir);
  struct fake_server srv;
  if (fake_server_start(&srv, false, NULL, NULL) < 0)
    return 1;
  pid_t pid = start_daemon(path, sock, state, srv.port);
  if (pid < 0) {
    fprintf(stderr, "bench_daemon: cannot start %s\n", path);
    return 1;
  }
  double rate[16], bpa[16];
  int ok = 0;
  for (int r = 0; r < runs && r < 16; r++)
    if (run_once(sock, &srv, r, &rate[ok], &bpa[ok]) == 0)
      ok++;
  kill(pid, SIGTERM);
  struct rusage ru;
  wait4(pid, NULL, 0, &ru);
  double cpu = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
  fake_server_stop(&srv);
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0 || ok == 0)
    return 1;
  qsort(rate, (size_t)ok, sizeof *rate, cmp_double);
  qsort(bpa, (size_t)ok, sizeof *bpa, cmp_double);
  printf("daemon_activities_per_s %.0f act/s\n", rate[ok / 2]);
  printf("wire_bytes_per_activity %.2f B\n", bpa[ok / 2]);
  /* The daemon's own CPU time over all runs (incl. start and idle): the
   * per-core cost, independent of how the ranks share the machine. */
  printf("daemon_activities_per_cpu_s %.0f act/s\n", (double)ok * RANKS * FRAMES * PER_FRAME / cpu);
  return 0;
}
