/*
 * siox-replay: executes a SIOX workload file (workload/README.md) under MPI,
 * one MPI rank per rank of the workload, and prints the I/O time and the
 * bytes per file. `siox replay` launches it under mpirun.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "replay.h"

static const char help[] =
    "NAME\n"
    "  siox-replay - execute a SIOX workload file on a real file system (MPI program)\n"
    "\n"
    "SYNOPSIS\n"
    "  mpirun -np N siox-replay [--dir PATH] [--generator exact|characterization] [--no-gaps] FILE\n"
    "  (usually launched by `siox replay FILE`)\n"
    "\n"
    "DESCRIPTION\n"
    "  Reads FILE, a workload written by `siox workload extract`, and executes it:\n"
    "  MPI rank r replays the stream of the workload's rank r with the same\n"
    "  operations, sizes and offsets, waits the recorded compute gap before each\n"
    "  one, opens each MPI-IO file collectively over exactly the ranks that opened\n"
    "  it in the job, and issues collective accesses (*_all) and barriers as\n"
    "  collectives, so two-phase I/O and synchronization happen as they did.\n"
    "  Every file of the workload is replayed as PATH/f<ID>-<base name>; rank 0\n"
    "  creates them first and extends each to the size its reads need (reads of\n"
    "  data the job did not write here return zeros). Writes write the byte 'r'.\n"
    "\n"
    "  The job must be launched with as many ranks as the workload has.\n"
    "\n"
    "OPTIONS\n"
    "  --dir PATH        directory to replay in (default: the current one); must exist\n"
    "  --generator G     exact (default for a trace): the recorded stream;\n"
    "                    characterization: a stream synthesized from the counters of\n"
    "                    the characterization (the only choice for a characterization\n"
    "                    file; for a trace, its characterization is computed first)\n"
    "  --no-gaps         do not wait the compute gaps (I/O only)\n"
    "  -h, --help        print this manual page\n"
    "\n"
    "OUTPUT (rank 0, one line each, KEY VALUE... for scripts)\n"
    "  replay FILE form=F generator=G ranks=N\n"
    "  file ID PATH read_bytes=B written_bytes=B          per file, summed over ranks\n"
    "  rank R ops=N io_ns=T recorded_io_ns=T wall_ns=T     per rank\n"
    "  io_time_ns T recorded_io_time_ns T                  the slowest rank's I/O time\n"
    "  (time inside the replayed calls, gaps excluded) and the recording's\n"
    "\n"
    "EXIT STATUS\n"
    "  0 replayed; 1 an operation failed (named, with the rank and its position)\n"
    "  or FILE was rejected (truncated, foreign, wrong rank count); 2 bad command line.\n"
    "\n"
    "EXAMPLES\n"
    "  siox workload extract --job 4711 -o job.wl\n"
    "  mpirun -np 4 siox-replay --dir /mnt/gluster/replay job.wl\n";

struct opts {
  const char *file, *dir;
  int synth, no_gaps, synth_set;
};

static int parse(int argc, char **argv, struct opts *o) {
  static const struct option lo[] = {{"dir", required_argument, NULL, 'd'},
                                     {"generator", required_argument, NULL, 'g'},
                                     {"no-gaps", no_argument, NULL, 'n'},
                                     {"help", no_argument, NULL, 'h'},
                                     {0}};
  int c;
  o->dir = ".";
  opterr = 0;
  while ((c = getopt_long(argc, argv, ":h", lo, NULL)) != -1) {
    switch (c) {
    case 'd': o->dir = optarg; break;
    case 'n': o->no_gaps = 1; break;
    case 'g':
      if (strcmp(optarg, "exact") && strcmp(optarg, "characterization")) {
        fprintf(stderr, "siox-replay: --generator takes exact or characterization, not '%s'\n", optarg);
        return 2;
      }
      o->synth = optarg[0] == 'c';
      o->synth_set = 1;
      break;
    case 'h': fputs(help, stdout); return 0;
    default: fprintf(stderr, "siox-replay: bad option '%s'\nTry 'siox-replay --help'.\n", argv[optind - 1]); return 2;
    }
  }
  if (optind != argc - 1) {
    fprintf(stderr, "siox-replay: give exactly one workload FILE\nTry 'siox-replay --help'.\n");
    return 2;
  }
  o->file = argv[optind];
  return -1;
}

/* The workload to execute: the file, or the stream synthesized from its
 * characterization. */
static int load(const struct opts *o, siox_workload **out, int *synth, char *err, size_t errlen) {
  siox_workload *w = NULL, *c = NULL, *t = NULL;
  int rc = siox_wl_read_path(o->file, &w, err, errlen);
  if (rc) return rc;
  *synth = o->synth || siox_wl_form(w) == SIOX_WL_CHARACTERIZATION;
  if (o->synth_set && !o->synth && siox_wl_form(w) == SIOX_WL_CHARACTERIZATION) {
    snprintf(err, errlen, "%s is a characterization: only --generator characterization can replay it", o->file);
    siox_wl_free(w);
    return -EINVAL;
  }
  if (!*synth) {
    *out = w;
    return 0;
  }
  if (siox_wl_form(w) == SIOX_WL_TRACE) {
    rc = siox_wl_characterize(w, &c);
    siox_wl_free(w);
    if (rc) return rc;
    w = c;
  }
  rc = siox_wl_synthesize(w, &t, err, errlen);
  siox_wl_free(w);
  if (!rc) *out = t;
  return rc;
}

static void report(const struct opts *o, const struct replay_plan *p, const struct replay_result *res, int synth,
                   int rank, int size) {
  size_t nf = p->nfiles ? p->nfiles : 1;
  uint64_t *rd = calloc(nf, sizeof(*rd)), *wr = calloc(nf, sizeof(*wr));
  int64_t mine[4] = {(int64_t)res->ops, res->io_ns, res->recorded_io_ns, res->wall_ns};
  int64_t *all = calloc((size_t)size * 4, sizeof(*all));
  /* PMPI_: the replay's own bookkeeping is not the workload's; a traced
   * replay records only the workload's collectives (libsiox-mpi). */
  PMPI_Reduce(res->bytes_read, rd, (int)nf, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
  PMPI_Reduce(res->bytes_written, wr, (int)nf, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
  PMPI_Gather(mine, 4, MPI_INT64_T, all, 4, MPI_INT64_T, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    printf("replay %s form=%s generator=%s ranks=%d\n", o->file,
           siox_wl_form(p->w) == SIOX_WL_TRACE && !synth ? "trace" : "synthesized", synth ? "characterization" : "exact",
           size);
    for (size_t f = 0; f < p->nfiles; f++)
      printf("file %zu %s read_bytes=%" PRIu64 " written_bytes=%" PRIu64 "\n", f, p->path[f], rd[f], wr[f]);
    int64_t io = 0, rec = 0;
    for (int r = 0; r < size; r++) {
      int64_t *x = &all[r * 4];
      printf("rank %d ops=%" PRId64 " io_ns=%" PRId64 " recorded_io_ns=%" PRId64 " wall_ns=%" PRId64 "\n", r, x[0], x[1],
             x[2], x[3]);
      io = x[1] > io ? x[1] : io;
      rec = x[2] > rec ? x[2] : rec;
    }
    printf("io_time_ns %" PRId64 " recorded_io_time_ns %" PRId64 "\n", io, rec);
    fflush(stdout);
  }
  free(rd);
  free(wr);
  free(all);
}

/* Every rank reaches the same verdict: one failing rank fails all. */
static int agree(int rc) {
  int bad = rc != 0, any = 0;
  PMPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return any;
}

int main(int argc, char **argv) {
  struct opts o = {0};
  int prc = parse(argc, argv, &o);
  if (prc >= 0) return prc;
  MPI_Init(&argc, &argv);
  int rank, size, synth = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  char err[512] = "";
  siox_workload *w = NULL;
  int rc = load(&o, &w, &synth, err, sizeof(err));
  if (!rc && siox_wl_ranks(w) != (uint32_t)size) {
    snprintf(err, sizeof(err), "%s has %u ranks, this run has %d: launch it with mpirun -np %u", o.file,
             siox_wl_ranks(w), size, siox_wl_ranks(w));
    rc = -EINVAL;
  }
  struct stat sb;
  if (!rc && (stat(o.dir, &sb) || !S_ISDIR(sb.st_mode))) {
    snprintf(err, sizeof(err), "--dir %s: not a directory", o.dir);
    rc = -ENOTDIR;
  }
  struct replay_plan plan = {0};
  struct replay_result res = {0};
  if (!agree(rc)) rc = replay_plan_build(&plan, w, o.dir, rank, err, sizeof(err));
  if (!agree(rc) && rank == 0) rc = replay_prepare_files(&plan, err, sizeof(err));
  size_t nf = plan.nfiles ? plan.nfiles : 1;
  if (!agree(rc)) {
    res.bytes_read = calloc(nf, sizeof(uint64_t));
    res.bytes_written = calloc(nf, sizeof(uint64_t));
    if (!res.bytes_read || !res.bytes_written) rc = -ENOMEM;
  }
  if (!agree(rc)) {
    PMPI_Barrier(MPI_COMM_WORLD);
    rc = replay_run(&plan, !o.no_gaps, &res, err, sizeof(err));
    if (rc) { /* the other ranks may wait in a collective this rank never reaches */
      fprintf(stderr, "siox-replay: rank %d: %s\n", rank, err);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
  }
  if (rc && err[0]) fprintf(stderr, "siox-replay: rank %d: %s\n", rank, err);
  int failed = agree(rc);
  if (!failed) report(&o, &plan, &res, synth, rank, size);
  if (plan.w) replay_plan_free(&plan);
  free(res.bytes_read);
  free(res.bytes_written);
  siox_wl_free(w);
  MPI_Finalize();
  return failed ? 1 : 0;
}
