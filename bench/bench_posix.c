/*
 * bench_posix: cost added by libsiox-posix to one pwrite(64 B) on a tmpfs
 * file (/dev/shm), against the same call without the preload, in one run.
 * The bench re-executes itself as the worker, alternately with and without
 * LD_PRELOAD, while a drain thread plays the daemon (bench_drain.c: reads the unix socket,
 * discards and acknowledges). Prints medians over REPS runs of CALLS calls each:
 *   posix_overhead_ns_per_call   instrumented run minus plain run (includes
 *                                the flusher thread competing for a core)
 *   posix_wrapper_ab_ns_per_call inside the preloaded run, blocks of wrapped
 *                                and direct libc calls alternated: the cost
 *                                of the wrapper and client hot path alone
 *   posix_app_thread_cpu_overhead_ns_per_call
 *                                CPU time of the calling thread (user +
 *                                kernel), instrumented minus plain: what the
 *                                application's own thread pays, less exposed
 *                                to other load than wall time
 *   posix_background_cpu_ns_per_call
 *                                CPU time of SIOX's flusher thread per call
 *                                (the process's CPU minus the calling
 *                                thread's), spent on another core when free
 *
 * usage: bench_posix LIBSIOX_POSIX_SO [CALLS [REPS]]   (1000000, 7)
 *   SIOX_SOCKET set in the environment: use that (real) daemon instead.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_drain.h"

extern char **environ;

#define WORKER_ENV "SIOX_BENCH_POSIX_WORKER"
#define MAX_REPS 101

static double clock_ns(clockid_t c) {
  struct timespec ts;
  clock_gettime(c, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static double now_ns(void) {
  return clock_ns(CLOCK_MONOTONIC);
}

/* ---- worker: the measured loop ------------------------------------------- */

typedef ssize_t (*pwrite_fn)(int, const void *, size_t, off_t);

/* ns per call of CALLS pwrites through f. */
static double timed(pwrite_fn f, int fd, long calls, const char *data) {
  double t0 = now_ns();
  for (long i = 0; i < calls; i++)
    if (f(fd, data, 64, (i * 64) & 0xfffff) != 64) return perror("pwrite"), -1;
  return (now_ns() - t0) / (double)calls;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* In the preloaded worker: blocks of wrapped and direct (libc's own
 * symbol) calls alternate, so that both see the same machine state; the
 * median of the block differences is the wrapper's own cost. */
#define AB_BLOCKS 41
#define AB_CALLS 20000
static double ab_wrapper_ns(int fd, const char *data) {
  void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
  pwrite_fn direct = libc ? (pwrite_fn)dlsym(libc, "pwrite") : NULL;
  if (!direct || direct == pwrite) return -1;
  double diff[AB_BLOCKS];
  for (int b = 0; b < AB_BLOCKS; b++) diff[b] = timed(pwrite, fd, AB_CALLS, data) - timed(direct, fd, AB_CALLS, data);
  return median(diff, AB_BLOCKS);
}

/* Prints "NS_PER_CALL DROPPED WRAPPER_NS THREAD_CPU_NS PROCESS_CPU_NS"
 * (dropped: SIOX records lost, -1 without the preload; WRAPPER_NS -1
 * without it; CPU times per call of the measured loop). */
static int worker(long calls) {
  char path[64], data[64];
  memset(data, 'x', sizeof data);
  snprintf(path, sizeof path, "/dev/shm/siox-bench-posix.%d", (int)getpid());
  int fd = open(path, O_CREAT | O_RDWR | O_TRUNC, 0600);
  if (fd < 0) return perror("open"), 1;
  if (timed(pwrite, fd, 10000, data) < 0) return 1; /* warm-up: thread attach, page cache */
  double th0 = clock_ns(CLOCK_THREAD_CPUTIME_ID), pr0 = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
  double ns = timed(pwrite, fd, calls, data);
  if (ns < 0) return 1;
  double th = (clock_ns(CLOCK_THREAD_CPUTIME_ID) - th0) / (double)calls;
  double pr = (clock_ns(CLOCK_PROCESS_CPUTIME_ID) - pr0) / (double)calls;
  double ab = ab_wrapper_ns(fd, data);
  close(fd);
  unlink(path);
  long long dropped = -1;
  struct stats { uint64_t activities, records, dropped, bytes_sent; int connected; } st;
  int (*get)(struct stats *) = (int (*)(struct stats *))dlsym(RTLD_DEFAULT, "siox_stats_get");
  if (get && get(&st) == 0) dropped = (long long)st.dropped;
  printf("%.2f %lld %.2f %.2f %.2f\n", ns, dropped, ab, th, pr);
  return 0;
}

/* ---- parent: drain daemon, runs, medians --------------------------------- */

/* Runs one worker with env (NULL-terminated extra entries); fills ns and
 * dropped. Returns 0 or -1. */
struct sample {
  double ns, ab, thread_cpu, process_cpu;
  long long dropped;
};

static int run_worker(const char *self, char **extra, long calls, struct sample *o) {
  char *env[256], callstr[32];
  int n = 0;
  for (char **e = environ; *e && n < 200; e++)
    if (strncmp(*e, "LD_PRELOAD=", 11) != 0) env[n++] = *e;
  env[n++] = WORKER_ENV "=1";
  for (char **e = extra; *e; e++) env[n++] = *e;
  env[n] = NULL;
  snprintf(callstr, sizeof callstr, "%ld", calls);
  char *argv[] = {(char *)self, callstr, NULL};
  int pipefd[2];
  if (pipe(pipefd) < 0) return -1;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, pipefd[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&fa, pipefd[0]);
  pid_t pid;
  int rc = posix_spawn(&pid, self, &fa, NULL, argv, env);
  posix_spawn_file_actions_destroy(&fa);
  close(pipefd[1]);
  char out[128] = "";
  ssize_t got = rc == 0 ? read(pipefd[0], out, sizeof out - 1) : -1;
  close(pipefd[0]);
  int status = 0;
  if (rc == 0) waitpid(pid, &status, 0);
  if (rc != 0 || got <= 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return -1;
  out[got] = '\0';
  return sscanf(out, "%lf %lld %lf %lf %lf", &o->ns, &o->dropped, &o->ab, &o->thread_cpu, &o->process_cpu) == 5 ? 0 : -1;
}

int main(int argc, char **argv) {
  if (getenv(WORKER_ENV)) return worker(argc > 1 ? atol(argv[1]) : 1000000);
  if (argc < 2) {
    fprintf(stderr, "usage: %s LIBSIOX_POSIX_SO [CALLS [REPS]]\n", argv[0]);
    return 2;
  }
  long calls = argc > 2 ? atol(argv[2]) : 1000000;
  int reps = argc > 3 ? atoi(argv[3]) : 7;
  if (calls <= 0 || reps <= 0 || reps > MAX_REPS) return fprintf(stderr, "bad CALLS or REPS\n"), 2;
  char sock[108], preload[4200], sockenv[160];
  int rc;
  const char *real_sock = getenv("SIOX_SOCKET");
  if (real_sock && *real_sock) {
    snprintf(sock, sizeof sock, "%s", real_sock);
  } else if ((rc = bench_drain_start("posix", sock, sizeof sock)) < 0) {
    return fprintf(stderr, "drain socket: %s\n", strerror(-rc)), 1;
  }
  snprintf(preload, sizeof preload, "LD_PRELOAD=%s", argv[1]);
  snprintf(sockenv, sizeof sockenv, "SIOX_SOCKET=%s", sock);
  char *plain_env[] = {NULL};
  char *traced_env[] = {preload, sockenv, "SIOX_BUFFER_KB=16384", NULL};
  double base[MAX_REPS], traced[MAX_REPS], wrapper[MAX_REPS], cpu_base[MAX_REPS], cpu_traced[MAX_REPS],
      background[MAX_REPS];
  long long dropped = 0;
  for (int r = 0; r < reps; r++) {
    struct sample p, t;
    if (run_worker("/proc/self/exe", plain_env, calls, &p) < 0 ||
        run_worker("/proc/self/exe", traced_env, calls, &t) < 0)
      return fprintf(stderr, "worker failed\n"), 1;
    if (t.dropped < 0) return fprintf(stderr, "the preload did not load (no siox_stats_get)\n"), 1;
    base[r] = p.ns, traced[r] = t.ns, wrapper[r] = t.ab;
    cpu_base[r] = p.thread_cpu, cpu_traced[r] = t.thread_cpu, background[r] = t.process_cpu - t.thread_cpu;
    dropped += t.dropped;
  }
  if (!(real_sock && *real_sock)) unlink(sock);
  double mb = median(base, reps), mt = median(traced, reps);
  printf("posix_baseline_ns_per_call %.1f ns\n", mb);
  printf("posix_instrumented_ns_per_call %.1f ns\n", mt);
  printf("posix_overhead_ns_per_call %.1f ns\n", mt - mb);
  printf("posix_overhead_ratio %.3f x\n", mt / mb);
  printf("posix_wrapper_ab_ns_per_call %.1f ns\n", median(wrapper, reps));
  printf("posix_app_thread_cpu_overhead_ns_per_call %.1f ns\n", median(cpu_traced, reps) - median(cpu_base, reps));
  printf("posix_background_cpu_ns_per_call %.1f ns\n", median(background, reps));
  printf("posix_dropped_records %lld records\n", dropped);
  /* Dropped records are cheaper than recorded ones: such figures are not
   * the overhead of tracing every call. */
  if (dropped) fprintf(stderr, "bench_posix: %lld records were dropped; the figures above time the drop path\n", dropped);
  return dropped ? 1 : 0;
}
