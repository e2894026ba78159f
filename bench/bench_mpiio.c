/*
 * bench_mpiio: cost added by libsiox-mpi + libsiox-posix to MPI-IO writes,
 * IOR-like: 4 ranks, WRITES independent MPI_File_write_at per rank to one
 * shared file on tmpfs (each rank cycling over its own 32 MiB segment),
 * first with 4 KiB then with 64 KiB transfers from a page-aligned buffer
 * (as IOR's). The bench runs mpirun on itself in rounds of four runs, bare,
 * both layers, bare again and libsiox-posix alone, the order turned around
 * every round (B F B' P, P B' F B), after one discarded bare run, while a
 * drain thread plays the daemon (bench_drain.c; or the daemon of
 * SIOX_SOCKET). The 64 KiB rounds have no P run (no figure uses it: B F
 * B', B' F B), unless BENCH_MPIIO_BASE names both layers of another build
 * ("libsiox-mpi.so:libsiox-posix.so", e.g. of the commit before a change):
 * then that build takes its place. Each round gives its own differences;
 * every figure is the median of those with its distribution-free 95%
 * interval (_ci95_low, _ci95_high). "Bare" is the mean of the round's two
 * bare runs, which bracket the instrumented one:
 *   mpiio_overhead_ns_per_call        both layers - bare (4 KiB, wall, the
 *                                     slowest rank's loop)
 *   mpiio_layer_overhead_ns_per_call  both layers - POSIX alone: the MPI-IO
 *                                     layer's own cost, the POSIX calls
 *                                     beneath recorded on both sides
 *   *_cpu_ns_per_call                 the same in CPU time of all ranks
 *                                     (every thread, so the flushers too)
 *                                     plus the drain's (the daemon's share,
 *                                     counted over the whole run: an upper
 *                                     bound), which the 4-on-2
 *                                     oversubscription disturbs less
 *   mpiio_wrapper_ab_ns_per_call      inside the instrumented runs, blocks
 *                                     of MPI_File_write_at and
 *                                     PMPI_File_write_at alternated: the
 *                                     MPI-IO wrapper alone
 *   ior_like_slowdown_percent         64 KiB, both layers / bare - 1
 *   ior_like_cpu_overhead_percent     the same in CPU time
 *   ior_like_aa_percent               64 KiB, second bare / first bare - 1:
 *                                     the noise floor of the same rounds (a
 *                                     slowdown inside its interval cannot
 *                                     be told from none); with
 *                                     BENCH_MPIIO_SECOND=disabled the second
 *                                     run has both preloads and
 *                                     SIOX_DISABLE=1 (nothing recorded),
 *                                     printed as ior_like_disabled_percent
 *   ior_like_base_slowdown_percent    with BENCH_MPIIO_BASE: 64 KiB, the
 *                                     other build / bare - 1
 *   ior_like_vs_base_percent          this build / the other build - 1, run
 *                                     by run: the A/B of the two builds
 *
 * usage: bench_mpiio LIBSIOX_MPI_SO LIBSIOX_POSIX_SO [WRITES [ROUNDS]]  (100000, 5; <= 201 rounds)
 *        bench_mpiio --rank FILE BLOCK WRITES      (what mpirun starts)
 */
#include <dlfcn.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_drain.h"
#include "median_ci.h"

#define RANKS 4
#define SEGMENT (32LL << 20)
#define MAX_REPS 201

/* ---- rank: the measured loop -------------------------------------------- */

/* SIOX records this process lost, or -1 without the preload. */
static long long dropped(void) {
  struct stats { uint64_t activities, records, dropped, bytes_sent; int connected; } s;
  int (*get)(struct stats *);
  void *p = dlsym(RTLD_DEFAULT, "siox_stats_get");
  if (!p) return -1;
  memcpy(&get, &p, sizeof p);
  return get(&s) == 0 ? (long long)s.dropped : -1;
}

static double cpu_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

typedef int (*write_at_fn)(MPI_File, MPI_Offset, const void *, int, MPI_Datatype, MPI_Status *);

/* ns per call of n writes through f, continuing at *i. */
static double timed(write_at_fn f, MPI_File fh, int rank, long long block, long long n, long long *i, char *buf) {
  long long per_segment = SEGMENT / block;
  double t0 = MPI_Wtime();
  for (long long k = 0; k < n; k++, (*i)++)
    f(fh, rank * SEGMENT + (*i % per_segment) * block, buf, (int)block, MPI_BYTE, MPI_STATUS_IGNORE);
  return (MPI_Wtime() - t0) * 1e9 / (double)n;
}

static int cmp(const void *a, const void *b);

/* With the preload: blocks of wrapped (MPI_File_write_at) and direct
 * (PMPI_File_write_at) calls alternate, so both see the same contention;
 * the median of the block differences is the MPI-IO layer's own cost per
 * call (the POSIX calls beneath are recorded in both: bench_posix measures
 * that layer). Returns -1 without the preload or with BENCH_MPIIO_NO_AB set
 * (the 64 KiB series, whose A/B figure is not printed, and perf stat of
 * whole runs: then every variant does the same writes). */
#define AB_BLOCKS 41
static double ab_wrapper_ns(MPI_File fh, int rank, long long block, long long writes, char *buf) {
  if (dlsym(RTLD_DEFAULT, "siox_stats_get") == NULL || getenv("BENCH_MPIIO_NO_AB")) return -1;
  long long n = writes / (2 * AB_BLOCKS) > 0 ? writes / (2 * AB_BLOCKS) : 1, i = 0;
  double d[AB_BLOCKS];
  for (int b = 0; b < AB_BLOCKS; b++)
    d[b] = timed(MPI_File_write_at, fh, rank, block, n, &i, buf) - timed(PMPI_File_write_at, fh, rank, block, n, &i, buf);
  qsort(d, AB_BLOCKS, sizeof d[0], cmp);
  return d[AB_BLOCKS / 2];
}

/* Rank 0 prints "NS_PER_CALL CPU_NS_PER_CALL DROPPED AB_NS": the slowest rank's
 * loop time per call; the CPU time of all ranks (every thread, so SIOX's
 * flusher too) per call, which other load on the machine disturbs less; and
 * the records SIOX lost in all ranks. */
static int rank_main(const char *path, long long block, long long writes) {
  int rank;
  MPI_File fh;
  MPI_Init(NULL, NULL);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  /* Page-aligned, as IOR allocates its transfer buffer (aligned_buffer_alloc):
   * where malloc puts 64 KiB would otherwise depend on what the preload
   * allocated first, and the bare and instrumented runs would copy from
   * differently aligned buffers. */
  char *buf = NULL;
  if (posix_memalign((void **)&buf, 4096, (size_t)block)) MPI_Abort(MPI_COMM_WORLD, 1);
  memset(buf, 'a' + rank, (size_t)block);
  if (MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh))
    MPI_Abort(MPI_COMM_WORLD, 1);
  long long i = 0;
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime(), c0 = cpu_s();
  timed(MPI_File_write_at, fh, rank, block, writes, &i, buf);
  double mine = MPI_Wtime() - t0, cpu = cpu_s() - c0, slowest = 0, cpu_all = 0;
  /* Nobody starts the A/B blocks (preloaded runs only) while a slower rank
   * is still in the timed loop: they would take its cores. */
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Reduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  MPI_Reduce(&cpu, &cpu_all, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
  double ab = ab_wrapper_ns(fh, rank, block, writes, buf), ab_all[RANKS] = {0};
  MPI_Gather(&ab, 1, MPI_DOUBLE, ab_all, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  qsort(ab_all, RANKS, sizeof ab_all[0], cmp);
  MPI_File_close(&fh);
  long long d = dropped(), all = 0;
  MPI_Reduce(&d, &all, 1, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0)
    printf("%.3f %.3f %lld %.3f\n", slowest * 1e9 / (double)writes, cpu_all * 1e9 / (double)(writes * RANKS),
           d < 0 ? -1 : all, (ab_all[RANKS / 2 - 1] + ab_all[RANKS / 2]) / 2);
  free(buf);
  MPI_Finalize();
  return 0;
}

/* ---- driver: runs, medians ---------------------------------------------- */

/* Runs mpirun on this binary; preload may be NULL. Returns ns per call,
 * or a negative value on failure; *cpu gets CPU ns per call (the ranks'
 * loops, plus this process's CPU during the run when the drain thread here
 * plays the daemon: what SIOX costs on the node, not only in the ranks),
 * *drops the lost records. */
static int own_drain; /* the drain thread of this process plays the daemon */

static double run_once(const char *self, const char *preload, const char *env, const char *sock, const char *file,
                       long long block, long long writes, double *cpu, long long *drops, double *ab) {
  char cmd[4096], out[256] = "";
  unlink(file);
  snprintf(cmd, sizeof cmd,
           "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun --oversubscribe -np %d "
           "%s%s%s%s%s%s -x SIOX_SOCKET=%s %s --rank %s %lld %lld",
           RANKS, preload ? "-x LD_PRELOAD=" : "", preload ? preload : "", preload ? " " : "", env ? "-x " : "",
           env ? env : "", env ? " " : "", sock, self, file, block, writes);
  double c0 = cpu_s();
  FILE *p = popen(cmd, "r");
  if (!p) return -1;
  if (!fgets(out, sizeof out, p)) out[0] = 0;
  int st = pclose(p);
  double ns = -1, drain = own_drain ? cpu_s() - c0 : 0;
  if (st != 0 || sscanf(out, "%lf %lf %lld %lf", &ns, cpu, drops, ab) != 4) return -1;
  *cpu += drain * 1e9 / (double)(writes * RANKS);
  return ns;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Per round (same sitting), the differences the figures are medians of. */
struct series {
  double plain[MAX_REPS];      /* wall ns per call, bare */
  double full[MAX_REPS];       /* instrumented - bare (MPI-IO + POSIX layers) */
  double mpi_layer[MAX_REPS];  /* instrumented - POSIX layer alone */
  double cpu_full[MAX_REPS];   /* CPU ns per call, instrumented - bare */
  double cpu_mpi[MAX_REPS];    /* CPU ns per call, instrumented - POSIX alone */
  double percent[MAX_REPS];    /* (instrumented / bare - 1) * 100 */
  double cpu_percent[MAX_REPS];
  double aa[MAX_REPS];         /* (second bare / first bare - 1) * 100: the floor */
  double ab[MAX_REPS];         /* in-run wrapper vs PMPI (ab_wrapper_ns) */
  double base[MAX_REPS];       /* (other build / bare - 1) * 100 (BENCH_MPIIO_BASE) */
  double vs_base[MAX_REPS];    /* (this build / other build - 1) * 100 */
  long long drops;
};

/* The second bare run of a round: bare again (the A/A floor), or, with
 * BENCH_MPIIO_SECOND=disabled, both preloads with SIOX_DISABLE=1 (what
 * loading the libraries costs when they record nothing). */
static const char *second_env(void) {
  const char *m = getenv("BENCH_MPIIO_SECOND");
  return m && strcmp(m, "disabled") == 0 ? "SIOX_DISABLE=1" : NULL;
}

/* The fourth run of a round. At 4 KiB the POSIX layer alone (the MPI-IO
 * layer's own cost is both layers minus it). At 64 KiB no figure uses that
 * run: there the round has only three, unless BENCH_MPIIO_BASE names both
 * layers of another build ("libsiox-mpi.so:libsiox-posix.so", e.g. of the
 * commit before a change): then that build, so that two builds are
 * compared in the same rounds (ior_like_vs_base_percent). */
static const char *fourth_preload(const char *posix, long long block) {
  if (block == 4096) return posix;
  const char *b = getenv("BENCH_MPIIO_BASE");
  return b && *b ? b : NULL;
}

/* Rounds of four runs: bare, both layers, bare again, the fourth
 * (fourth_preload); the order turns around every round (B F B' P, P B' F
 * B: whatever drifts during the series falls on all alike). Both layers run
 * between the two bare runs and are compared with their mean, so a linear
 * drift within the round cancels; the two bare runs compared with each
 * other give the A/A figure, the noise floor of the same rounds (a slightly
 * wider one: two single runs, not one against a mean of two). A discarded
 * bare run first warms the page cache and the file's pages. */
static int measure(const char *self, const char *full, const char *posix, const char *sock, const char *file,
                   long long block, long long writes, int reps, struct series *s) {
  double warm_cpu, warm_ab;
  long long warm_d;
  /* Only the 4 KiB series' A/B figure is printed: the 64 KiB runs skip the
   * blocks (half of a preloaded run's writes). */
  const char *no_ab = block == 4096 ? NULL : "BENCH_MPIIO_NO_AB=1";
  if (run_once(self, NULL, no_ab, sock, file, block, writes, &warm_cpu, &warm_d, &warm_ab) < 0) return -1;
  s->drops = 0;
  const char *env2 = second_env(), *fourth = fourth_preload(posix, block);
  int runs = fourth ? 4 : 3;
  for (int r = 0; r < reps; r++) {
    /* 0 bare, 1 both layers, 2 bare again (or disabled preloads), 3 the fourth */
    const char *third_env = env2 && no_ab ? "SIOX_DISABLE=1 -x BENCH_MPIIO_NO_AB=1" : env2 ? env2 : no_ab;
    const char *pre[4] = {NULL, full, env2 ? full : NULL, fourth}, *env[4] = {no_ab, no_ab, third_env, no_ab};
    double ns[4] = {0}, cpu[4] = {0}, ab[4] = {0};
    long long d[4] = {0};
    for (int k = 0; k < runs; k++) {
      int v = r % 2 ? runs - 1 - k : k;
      ns[v] = run_once(self, pre[v], env[v], sock, file, block, writes, &cpu[v], &d[v], &ab[v]);
      if (ns[v] < 0) return -1;
    }
    double bare = env2 ? ns[0] : (ns[0] + ns[2]) / 2, bare_cpu = env2 ? cpu[0] : (cpu[0] + cpu[2]) / 2;
    s->plain[r] = bare;
    s->full[r] = ns[1] - bare;
    s->mpi_layer[r] = ns[1] - ns[3];
    s->cpu_full[r] = cpu[1] - bare_cpu;
    s->cpu_mpi[r] = cpu[1] - cpu[3];
    s->percent[r] = (ns[1] / bare - 1) * 100;
    s->cpu_percent[r] = (cpu[1] / bare_cpu - 1) * 100;
    s->aa[r] = (ns[2] / ns[0] - 1) * 100;
    s->ab[r] = ab[1];
    s->base[r] = (ns[3] / bare - 1) * 100;
    s->vs_base[r] = (ns[1] / ns[3] - 1) * 100;
    s->drops += d[1] + d[3] + (env2 ? d[2] : 0);
    fprintf(stderr, "  %lld B round %d: bare %.0f both %.0f %s %.0f %s %.0f ns/call; a/b %.1f\n", block, r, ns[0],
            ns[1], env2 ? "disabled" : "bare", ns[2], block == 4096 ? "posix" : fourth ? "base" : "-", ns[3], ab[1]);
  }
  return 0;
}

static void print_ci(const char *name, double *v, int n, const char *unit) {
  struct median_ci e = median_ci(v, n);
  printf("%s %.2f %s\n%s_ci95_low %.2f %s\n%s_ci95_high %.2f %s\n", name, e.median, unit, name, e.lo, unit, name, e.hi,
         unit);
}

int main(int argc, char **argv) {
  if (argc == 5 && strcmp(argv[1], "--rank") == 0) return rank_main(argv[2], atoll(argv[3]), atoll(argv[4]));
  if (argc < 3) {
    fprintf(stderr, "usage: %s LIBSIOX_MPI_SO LIBSIOX_POSIX_SO [WRITES [REPS]]\n", argv[0]);
    return 2;
  }
  long long writes = argc > 3 ? atoll(argv[3]) : 100000;
  int reps = argc > 4 ? atoi(argv[4]) : 5;
  if (reps < 1 || reps > MAX_REPS || writes < 1) return 2;
  char self[4096], preload[8192], sock[64], file[64];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n < 0) return 1;
  self[n] = 0;
  snprintf(preload, sizeof preload, "%s:%s", argv[1], argv[2]);
  snprintf(file, sizeof file, "/dev/shm/bench_mpiio.%d", (int)getpid());
  const char *real = getenv("SIOX_SOCKET");
  if (real) {
    snprintf(sock, sizeof sock, "%s", real);
  } else if (bench_drain_start("mpiio", sock, sizeof sock) < 0) {
    return perror("bench_mpiio: drain socket"), 1;
  } else {
    own_drain = 1;
  }
  static struct series k4, k64;
  int rc = measure(self, preload, argv[2], sock, file, 4096, writes, reps, &k4) ||
           measure(self, preload, argv[2], sock, file, 65536, writes, reps, &k64);
  unlink(file);
  if (!real) unlink(sock);
  if (rc) {
    fprintf(stderr, "bench_mpiio: an mpirun failed\n");
    return 1;
  }
  printf("mpiio_write_4k_plain_ns_per_call %.1f ns\n", median_ci(k4.plain, reps).median);
  print_ci("mpiio_overhead_ns_per_call", k4.full, reps, "ns");
  print_ci("mpiio_layer_overhead_ns_per_call", k4.mpi_layer, reps, "ns");
  print_ci("mpiio_overhead_cpu_ns_per_call", k4.cpu_full, reps, "ns");
  print_ci("mpiio_layer_overhead_cpu_ns_per_call", k4.cpu_mpi, reps, "ns");
  print_ci("mpiio_wrapper_ab_ns_per_call", k4.ab, reps, "ns");
  printf("mpiio_write_64k_plain_ns_per_call %.1f ns\n", median_ci(k64.plain, reps).median);
  print_ci("ior_like_slowdown_percent", k64.percent, reps, "%");
  print_ci("ior_like_cpu_overhead_percent", k64.cpu_percent, reps, "%");
  /* The same rounds' second bare run against the first: the bench cannot
   * tell a slowdown narrower than this interval from none. */
  print_ci(second_env() ? "ior_like_disabled_percent" : "ior_like_aa_percent", k64.aa, reps, "%");
  if (fourth_preload(argv[2], 65536)) {
    print_ci("ior_like_base_slowdown_percent", k64.base, reps, "%");
    print_ci("ior_like_vs_base_percent", k64.vs_base, reps, "%");
  }
  printf("mpiio_dropped_records %lld count\n", k4.drops + k64.drops);
  /* Dropped records are cheaper than recorded ones (bench_posix.c). */
  if (k4.drops + k64.drops)
    fprintf(stderr, "bench_mpiio: %lld records were dropped; the figures above time the drop path\n",
            k4.drops + k64.drops);
  return k4.drops + k64.drops ? 1 : 0;
}
