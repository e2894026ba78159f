/*
 * bench_user: SIOX's overhead as a user (or a competing tool) measures it:
 * whole processes of a plain C program (bench_pwrite), run bare and under
 * LD_PRELOAD of libsiox-posix with the real siox-daemon behind SIOX_SOCKET
 * (bench_user.sh starts siox-server, PostgreSQL and the daemon), in
 * interleaved ABBA rounds (bare, traced, traced, bare, ...) so that slow
 * drifts of a loaded machine hit both sides alike. Each round gives one
 * difference traced - bare; the figure is the median of those differences
 * with its distribution-free 95% confidence interval (order statistics of
 * the binomial(n, 1/2)). Prints NAME VALUE UNIT:
 *   posix_overhead_ns_per_call_4k_{200k,1m}   loop time (CLOCK_MONOTONIC in
 *       the program) added per 4 KiB pwrite, 200k / 1M calls per process
 *   ..._ci95_low / _ci95_high                 its interval
 *   posix_process_overhead_ns_per_call_4k_*   the same from the whole
 *       process's wall time (start, loop, exit flush) seen from outside
 *   posix_process_cpu_overhead_ns_per_call_4k_*  CPU time (user + system,
 *       every thread of the process: the flusher too) added per call, with
 *       its interval: on a loaded 2-core node the bare loop's wall time
 *       stretched to 2.5-4 us a call (0.56 quiet), the wall intervals to ~2 us
 *   posix_baseline_ns_per_call_4k_*           the bare loop, per call
 *   process_start_overhead_ms                 /bin/true, wall per process
 *   process_start_overhead_ms_openwrite       open + 4 KiB write + close
 *   process_start_cpu_overhead_ms[_openwrite] the same in CPU time (user +
 *       system of the process, every thread), steadier on a loaded node
 *   process_start_{vol,invol}_switches[_openwrite]  context switches added
 *       per process (rusage), voluntary (blocked) and involuntary (preempted)
 *   daemon_cpu_ms_per_process_openwrite       siox-daemon CPU over the
 *       openwrite rounds (and 1 s after), per traced process
 *   daemon_cpu_ns_per_activity                siox-daemon CPU (all its
 *       threads, the scheduler's ns) over the traced runs, per activity
 *
 * usage: bench_user BENCH_PWRITE LIBSIOX_POSIX_SO DAEMON_PID [ROUNDS]
 *   ROUNDS (default 16) pairs for 200k calls; 1M and start use their own
 *   multiples of it. SIOX_SOCKET must name the daemon's socket.
 *   USER_LONG=0 leaves the 1M-call loop out (an A/B on a machine so loaded
 *   that a bare 4 KiB pwrite takes 40 us: each 1M run then takes 40 s).
 *   USER_LOOPS=0 leaves both loops (and the daemon's CPU) out: the start
 *   figures alone, for an A/B of the process start. USER_START=0 leaves
 *   the start figures out (an A/B of the loops alone).
 *   USER_BASE_SO=LIB (e.g. a saved copy of main's libsiox-posix.so): each
 *   loop round runs a third process under LIB, the three in an order
 *   rotating through all six permutations, and adds
 *     posix_base_{overhead,process_cpu_overhead}_ns_per_call_*  LIB's
 *     posix_ab_overhead_ns_per_call_*     loop time, this library - LIB
 *     posix_ab_process_cpu_ns_per_call_*  process CPU, this library - LIB
 *   (median of the per-round differences, with the 95% interval): an
 *   interleaved A/B of two libraries in one sitting (ROUNDS a multiple of
 *   6 gives every order alike).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "median_ci.h"

extern char **environ;

#define MAX_ROUNDS 256
#define START_BATCH 10 /* processes per variant per round of the start test */

static const char *pwrite_bin, *preload_so;
static char path[64];

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

struct run {
  double wall_ns, cpu_ns, loop_ns;
  long vcsw, ivcsw; /* voluntary (blocked) and involuntary (preempted) switches */
};

/* Runs argv bare or traced; fills *o (loop_ns: the number the program
 * printed, 0 if none). Returns 0 or -1. */
static int run_one_so(char *const argv[], const char *so, struct run *o) {
  char *env[512], pre[4200];
  int n = 0;
  for (char **e = environ; *e && n < 500; e++)
    if (strncmp(*e, "LD_PRELOAD=", 11) != 0) env[n++] = *e;
  if (so) {
    snprintf(pre, sizeof pre, "LD_PRELOAD=%s", so);
    env[n++] = pre;
  }
  env[n] = NULL;
  int pfd[2];
  if (pipe(pfd) < 0) return -1;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, pfd[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&fa, pfd[0]);
  pid_t pid;
  double t0 = now_ns();
  int rc = posix_spawn(&pid, argv[0], &fa, NULL, argv, env);
  posix_spawn_file_actions_destroy(&fa);
  close(pfd[1]);
  char out[64] = "";
  ssize_t got = 0, r;
  while (rc == 0 && got < (ssize_t)sizeof out - 1 && (r = read(pfd[0], out + got, sizeof out - 1 - (size_t)got)) > 0)
    got += r;
  close(pfd[0]);
  int status = 0;
  struct rusage ru;
  if (rc == 0 && wait4(pid, &status, 0, &ru) < 0) rc = errno;
  o->wall_ns = now_ns() - t0;
  if (rc != 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    fprintf(stderr, "bench_user: %s failed (%s)\n", argv[0], rc ? strerror(rc) : "exit status");
    return -1;
  }
  out[got > 0 ? got : 0] = '\0';
  o->cpu_ns = ((double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec) * 1e9 +
              ((double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_usec) * 1e3;
  o->loop_ns = got > 0 ? atof(out) : 0;
  o->vcsw = ru.ru_nvcsw;
  o->ivcsw = ru.ru_nivcsw;
  return 0;
}

static int run_one(char *const argv[], int traced, struct run *o) {
  return run_one_so(argv, traced ? preload_so : NULL, o);
}

/* ---- statistics ------------------------------------------------------------ */

static void print_est(const char *name, struct median_ci e, const char *unit) {
  printf("%s %.1f %s\n", name, e.median, unit);
  printf("%s_ci95_low %.1f %s\n", name, e.lo, unit);
  printf("%s_ci95_high %.1f %s\n", name, e.hi, unit);
}

/* ---- daemon CPU ----------------------------------------------------------- */

static const char *daemon_pid;

/* The daemon's CPU time in ns, all its threads: the scheduler's own sum
 * (/proc/PID/task/TID/schedstat, ns), or -1. /proc/PID/stat counts clock
 * ticks (10 ms here): over a block of 320 short processes that was steps of
 * 0.03 ms per process, coarser than what one process costs the daemon. */
static double daemon_cpu_ns(void) {
  char p[300], buf[128];
  snprintf(p, sizeof p, "/proc/%s/task", daemon_pid);
  DIR *dir = opendir(p);
  if (!dir) return -1;
  double sum = 0;
  int n = 0;
  for (struct dirent *e; (e = readdir(dir)) != NULL;) {
    if (e->d_name[0] == '.') continue;
    snprintf(p, sizeof p, "/proc/%s/task/%.32s/schedstat", daemon_pid, e->d_name);
    FILE *f = fopen(p, "r");
    unsigned long long run;
    if (f && fgets(buf, sizeof buf, f) && sscanf(buf, "%llu", &run) == 1) sum += (double)run, n++;
    if (f) fclose(f);
  }
  closedir(dir);
  return n > 0 ? sum : -1;
}

/* ---- the measurements ----------------------------------------------------- */

static double activities_total;

/* With USER_BASE_SO: a third process per round, the same loop under that
 * library (e.g. a saved copy of main's), and the figures of this library
 * against it, round by round: an interleaved A/B of two preloads in one
 * sitting. The three run in an order that goes through all six
 * permutations over the rounds, so that no library keeps a slot. */
static const char *base_so;

/* Prints the median of d (with its interval) under "PREFIX_SUFFIX". */
static void print_named(const char *prefix, const char *suffix, double *d, int rounds) {
  char name[160];
  snprintf(name, sizeof name, "%s_%s", prefix, suffix);
  print_est(name, median_ci(d, rounds), "ns");
}

/* ABBA rounds of the pwrite loop with `calls` calls (with base_so, rounds
 * of three in rotating order); prints the figures with suffix (e.g.
 * "4k_200k"). */
static int loop_bench(long calls, int rounds, const char *suffix) {
  char cs[32], name[128];
  snprintf(cs, sizeof cs, "%ld", calls);
  char *argv[] = {(char *)pwrite_bin, "loop", path, cs, NULL};
  static double dloop[MAX_ROUNDS], dwall[MAX_ROUNDS], dcpu[MAX_ROUNDS], base[MAX_ROUNDS];
  static double bloop[MAX_ROUNDS], bcpu[MAX_ROUNDS], abloop[MAX_ROUNDS], abcpu[MAX_ROUNDS];
  static const int perm[6][3] = {{0, 1, 2}, {2, 1, 0}, {1, 2, 0}, {0, 2, 1}, {2, 0, 1}, {1, 0, 2}};
  for (int r = 0; r < rounds; r++) {
    struct run v[3]; /* bare, this library, base_so */
    if (base_so) {
      for (int k = 0; k < 3; k++) {
        int which = perm[r % 6][k];
        if (run_one_so(argv, which == 0 ? NULL : which == 1 ? preload_so : base_so, &v[which]) < 0) return -1;
      }
      activities_total += (double)calls + 2;
      bloop[r] = (v[2].loop_ns - v[0].loop_ns) / (double)calls;
      bcpu[r] = (v[2].cpu_ns - v[0].cpu_ns) / (double)calls;
      abloop[r] = (v[1].loop_ns - v[2].loop_ns) / (double)calls;
      abcpu[r] = (v[1].cpu_ns - v[2].cpu_ns) / (double)calls;
    } else {
      for (int k = 0; k < 2; k++) {
        int traced = (k == 0) == (r % 2 == 1); /* ABBA: bare first in even rounds */
        if (run_one(argv, traced, &v[traced]) < 0) return -1;
      }
    }
    struct run b = v[0], t = v[1];
    activities_total += (double)calls + 2; /* the pwrites, open, close */
    dloop[r] = (t.loop_ns - b.loop_ns) / (double)calls;
    dwall[r] = (t.wall_ns - b.wall_ns) / (double)calls;
    dcpu[r] = (t.cpu_ns - b.cpu_ns) / (double)calls;
    base[r] = b.loop_ns / (double)calls;
    fprintf(stderr, "  %s round %d: bare %.0f traced %.0f ns/call (loop)", suffix, r, b.loop_ns / (double)calls,
            t.loop_ns / (double)calls);
    if (base_so) fprintf(stderr, " base %.0f; cpu traced-base %.0f", v[2].loop_ns / (double)calls, abcpu[r]);
    fprintf(stderr, "\n");
  }
  snprintf(name, sizeof name, "posix_baseline_ns_per_call_%s", suffix);
  printf("%s %.1f ns\n", name, median_ci(base, rounds).median);
  print_named("posix_overhead_ns_per_call", suffix, dloop, rounds);
  print_named("posix_process_overhead_ns_per_call", suffix, dwall, rounds);
  /* with its interval: under load the wall figures are noise */
  print_named("posix_process_cpu_overhead_ns_per_call", suffix, dcpu, rounds);
  if (base_so) {
    /* The base library's own overheads, and this one's minus the base's. */
    print_named("posix_base_overhead_ns_per_call", suffix, bloop, rounds);
    print_named("posix_base_process_cpu_overhead_ns_per_call", suffix, bcpu, rounds);
    print_named("posix_ab_overhead_ns_per_call", suffix, abloop, rounds);
    print_named("posix_ab_process_cpu_ns_per_call", suffix, abcpu, rounds);
  }
  fflush(stdout);
  return 0;
}

/* 1 when the environment variable is set to "0" (a part left out). */
static int env_off(const char *name) {
  const char *v = getenv(name);
  return v && strcmp(v, "0") == 0;
}

/* ABBA rounds of START_BATCH processes each; the figure is ms per process.
 * Also the context switches added per process (`switches`: the suffix of
 * the figures' names), voluntary (the process blocked: a wait for the
 * daemon) and involuntary (preempted: on 2 cores the daemon, woken by a
 * send, often runs on the sender's core at once); counts do not scale with
 * the machine's load as times do. daemon_name: also the daemon's CPU per
 * traced process (after it settled), what a short process costs the node
 * beyond itself. */
static int start_bench(char *const argv[], int rounds, const char *name, const char *cpu_name,
                       const char *switches, const char *daemon_name) {
  static double d[MAX_ROUNDS], dc[MAX_ROUNDS], dv[MAX_ROUNDS], di[MAX_ROUNDS];
  double d0 = daemon_cpu_ns();
  for (int r = 0; r < rounds; r++) {
    double sum[2] = {0, 0}, cpu[2] = {0, 0}, vol[2] = {0, 0}, invol[2] = {0, 0};
    for (int k = 0; k < 2; k++) {
      int traced = (k == 0) == (r % 2 == 1);
      for (int i = 0; i < START_BATCH; i++) {
        struct run o;
        if (run_one(argv, traced, &o) < 0) return -1;
        sum[traced] += o.wall_ns;
        cpu[traced] += o.cpu_ns;
        vol[traced] += (double)o.vcsw;
        invol[traced] += (double)o.ivcsw;
      }
    }
    d[r] = (sum[1] - sum[0]) / START_BATCH / 1e6;
    dc[r] = (cpu[1] - cpu[0]) / START_BATCH / 1e6;
    dv[r] = (vol[1] - vol[0]) / START_BATCH;
    di[r] = (invol[1] - invol[0]) / START_BATCH;
  }
  struct median_ci e = median_ci(d, rounds), c = median_ci(dc, rounds);
  printf("%s %.3f ms\n%s_ci95_low %.3f ms\n%s_ci95_high %.3f ms\n", name, e.median, name, e.lo, name, e.hi);
  printf("%s %.3f ms\n%s_ci95_low %.3f ms\n%s_ci95_high %.3f ms\n", cpu_name, c.median, cpu_name, c.lo, cpu_name,
         c.hi);
  printf("process_start_vol_switches%s %.2f switches\n", switches, median_ci(dv, rounds).median);
  printf("process_start_invol_switches%s %.2f switches\n", switches, median_ci(di, rounds).median);
  if (daemon_name) {
    sleep(1);
    double d1 = daemon_cpu_ns();
    if (d0 >= 0 && d1 >= 0) printf("%s %.3f ms\n", daemon_name, (d1 - d0) / 1e6 / (rounds * START_BATCH));
  }
  fflush(stdout);
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 4 || !getenv("SIOX_SOCKET")) {
    fprintf(stderr, "usage: SIOX_SOCKET=SOCK %s BENCH_PWRITE LIBSIOX_POSIX_SO DAEMON_PID [ROUNDS]\n", argv[0]);
    return 2;
  }
  pwrite_bin = argv[1], preload_so = argv[2], daemon_pid = argv[3];
  base_so = getenv("USER_BASE_SO") && *getenv("USER_BASE_SO") ? getenv("USER_BASE_SO") : NULL;
  int rounds = argc > 4 ? atoi(argv[4]) : 16;
  if (rounds < 6 || rounds * 2 > MAX_ROUNDS) return fprintf(stderr, "ROUNDS: 6 .. %d\n", MAX_ROUNDS / 2), 2;
  snprintf(path, sizeof path, "/dev/shm/siox-bench-user.%d", (int)getpid());
  char *true_argv[] = {"/bin/true", NULL};
  char *once_argv[] = {(char *)pwrite_bin, "once", path, NULL};
  /* The daemon's CPU over every loop run and until it has settled (what it
   * does for a process it partly does while the next one runs). */
  int rc = 0;
  if (!env_off("USER_LOOPS")) {
    double d0 = daemon_cpu_ns();
    rc = loop_bench(200000, rounds, "4k_200k");
    if (rc == 0 && !env_off("USER_LONG"))
      rc = loop_bench(1000000, rounds * 3 / 4 > 6 ? rounds * 3 / 4 : 6, "4k_1m");
    sleep(2);
    double d1 = daemon_cpu_ns();
    if (rc == 0 && d0 >= 0 && d1 >= 0)
      printf("daemon_cpu_ns_per_activity %.1f ns\n", (d1 - d0) / activities_total);
  }
  if (rc == 0 && !env_off("USER_START"))
    rc = start_bench(true_argv, rounds * 2, "process_start_overhead_ms", "process_start_cpu_overhead_ms", "", NULL);
  if (rc == 0 && !env_off("USER_START"))
    rc = start_bench(once_argv, rounds * 2, "process_start_overhead_ms_openwrite", "process_start_cpu_overhead_ms_openwrite",
                     "_openwrite", "daemon_cpu_ms_per_process_openwrite");
  unlink(path);
  return rc == 0 ? 0 : 1;
}
