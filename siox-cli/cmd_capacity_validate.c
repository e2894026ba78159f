/*
 * `siox capacity validate`: each scenario's prediction, from the model of a
 * recorded job, against the real runs of that scenario the warehouse holds.
 * The prediction and the measurement are libsiox-capacity's
 * (cap_validate.c); this file parses and presents. Building the scenarios
 * on a testbed and running them is a script's job
 * (bench/bench_capacity_validate.sh): the CLI runs as any user, the testbed
 * needs root, FUSE and GlusterFS.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bytes_arg.h"
#include "cmd_capacity_validate.h"
#include "cmd_capacity_model.h" /* the model flags' help */
#include "format.h"
#include "json_out.h"
#include "session.h"
#include "siox/siox_wh.h"
#include "client_cores.h"
#include "siox_capacity.h"
#include "siox_workload.h"
#include "time_arg.h"

#define MAX_CASES 64
#define MAX_RUNS 16

static const char help[] =
    "NAME\n"
    "  siox capacity validate - capacity predictions checked against real runs\n"
    "\n"
    "SYNOPSIS\n"
    "  siox capacity validate --job J [--prefix PATH]... [--mount DIR] [--since T]\n"
    "                [--until T] [--tolerance PCT] [--no-gaps] [--residual]\n"
    "                [--client-cache BYTES] [--with-delays] [--flat-concurrency]\n"
    "                [--no-collective] [--no-kernel] [--kernel-mean] [--read-all]\n"
    "                [--kernel-pooled] [--healthy-ls] [--no-node-cpu] [--polling]\n"
    "                [--client-cores N] [--json] CASE...\n"
    "  CASE:  --case NAME [--scenario SPEC] [--workload FILE] [--replay-dir DIR]\n"
    "         [--run-mount DIR] --measured JOB [--measured JOB]...\n"
    "\n"
    "DESCRIPTION\n"
    "  Calibrates the storage model (see siox capacity model) on what the warehouse\n"
    "  recorded while job J ran (or in [--since, --until)), then, per CASE, predicts\n"
    "  the I/O time of the CASE's workload under its scenario and reads the real runs\n"
    "  of that scenario (the jobs named by --measured) back from the warehouse. It\n"
    "  prints, per case, the predicted and the measured I/O time, the error\n"
    "  |predicted - measured| / measured, and whether it is within the tolerance;\n"
    "  then the median error and a verdict: VALIDATED when every case is within the\n"
    "  tolerance, else NOT VALIDATED with the cases beyond it.\n"
    "\n"
    "  The I/O time of a run is its slowest rank's time inside I/O operations (what\n"
    "  siox workload extract records per operation); with several --measured runs\n"
    "  (concurrent copies, a load=K scenario) the mean over the copies, on both sides.\n"
    "  A case measured more than once (repeats: K more --measured jobs per repeat)\n"
    "  is measured as the median over its repeats, and MIN .. MAX show the fastest\n"
    "  and slowest job: a run's own noise beside the model's error.\n"
    "  A measured run must be in the warehouse and must be a run of the case: the\n"
    "  same ranks and the same bytes read and written as the case's workload, else\n"
    "  the command fails naming the job. Nothing is estimated in its place.\n"
    "\n"
    "  validate does not build scenarios or run jobs: building a GlusterFS volume\n"
    "  with other bricks needs root and FUSE, and a run takes minutes. The script\n"
    "  bench/bench_capacity_validate.sh (bench/run capacity_validate) does the whole\n"
    "  loop on the SIOX testbed: records a job, builds each scenario, replays the\n"
    "  workload there under siox run (siox replay, siox workload transform), then\n"
    "  calls this command with the jobs it ran.\n"
    "\n"
    "OPTIONS\n"
    "  --job J           the recorded job: its time window calibrates the model, its\n"
    "                    workload (siox workload extract) is each case's default\n"
    "  --prefix PATH     the recorded job's files (as siox workload extract --prefix)\n"
    "  --mount DIR       the recorded volume's mount point (DHT placement of new files)\n"
    "  --since T, --until T\n"
    "                    calibrate on this window instead of job J's (now, 15m, 2h,\n"
    "                    2026-11-23T06:00:00Z, @SECONDS)\n"
    "  --tolerance PCT   the largest error a validated case may have (default 10:\n"
    "                    issue 13's target; IOWA's replay error)\n"
    "  --no-gaps         compute gaps take no time in the predictions\n"
    "  --residual        keep each operation's recorded time outside the model\n"
    "                    (capacity/README.md, \"Residual\")\n"
    "  --client-cache BYTES\n"
    "                    the client node's page cache in the predictions: reads of\n"
    "                    pages the client wrote or read before are served by it, up\n"
    "                    to BYTES (K, M, G: KiB, MiB, GiB; least recently used out);\n"
    "                    0 sends every read to its brick. Default 8G\n"
    "                    (capacity/README.md, \"The client's page cache\")\n"
    SIOX_CAPACITY_MODEL_FLAGS_HELP(" ")
    "  --polling         ranks waiting in MPI (at a barrier or collective, or done\n"
    "                    and waiting for the others) poll and share the node's cores\n"
    "                    with the I/O path's CPU work (off by default: it over-predicted\n"
    "                    on a quiet node; --no-polling, the default, is still accepted:\n"
    "                    capacity/README.md, \"Ranks waiting in MPI\")\n"
    "  --no-collective   MPI_File_open and _close cost only their requests (by\n"
    "                    default also the time the window's calls took beyond them:\n"
    "                    capacity/README.md, \"Collective open and close\")\n"
    "  --client-cores N  a client node's cores: its FUSE client serves at most N\n"
    "                    requests at once, not the most it had in flight; 0: no\n"
    "                    bound (the model before). Default: this machine's online\n"
    "                    cores, an assumption the output states (capacity/README.md,\n"
    "                    \"Bounding a client's servers by its node's cores\")\n"
    "  --case NAME       starts a case; the options below belong to the last --case\n"
    "  --scenario SPEC   the storage scenario, as siox capacity what-if takes it\n"
    "                    (bricks=N, heal=BRICK, device=BRICK:LAT_US:MBPS, load=K,\n"
    "                    A+B); default as-is, the recorded system\n"
    "  --workload FILE   the workload the runs executed (a trace, e.g. from siox\n"
    "                    workload transform --ranks N or --file-per-process); default\n"
    "                    job J's\n"
    "  --replay-dir DIR  the runs replayed the workload into DIR (siox replay --dir):\n"
    "                    only files under DIR are the runs' I/O, and the prediction\n"
    "                    places siox replay's files there\n"
    "  --run-mount DIR   the mount point of the volume the runs used (default --mount)\n"
    "  --measured JOB    the job id of a real run of the case (repeat for each\n"
    "                    concurrent copy of a load=K scenario: K of them; for\n"
    "                    repeats of the scenario, K more per repeat, each repeat's\n"
    "                    copies in a row)\n"
    SIOX_GLOBAL_HELP
    "\n"
    "EXIT STATUS\n"
    "  0 every case compared (whatever the verdict: read it in the output or in\n"
    "  --json's \"validated\"); 1 warehouse unreachable, nothing to calibrate on, a\n"
    "  measured run missing or not a run of its case, a bad scenario or workload;\n"
    "  2 bad command line.\n"
    "\n"
    "EXAMPLES\n"
    "  siox capacity validate --job 4711 --prefix /mnt/vol/ --mount /mnt/vol \\\n"
    "      --case asis --replay-dir /mnt/vol/r-asis --measured 4711-asis \\\n"
    "      --case healed --scenario heal=node1:/b/brick3 --replay-dir /mnt/new/r-healed \\\n"
    "          --run-mount /mnt/new --measured 4711-healed \\\n"
    "      --case load2 --scenario load=2 --replay-dir /mnt/vol/r-load2 \\\n"
    "          --measured 4711-load2-a --measured 4711-load2-b\n"
    "  bench/run capacity_validate      (the whole loop on the testbed, as root)\n";

const struct siox_cmd siox_cmd_capacity_validate = {"capacity", "capacity predictions against real runs", help, NULL};

struct vcase {
  struct siox_cap_validate_case c;
  const char *wl_path;
  const char *runs[MAX_RUNS + 1];
  siox_workload *own; /* the case's workload when --workload */
};

struct vargs {
  const char *job, *mount;
  const char *prefix[65];
  int nprefix, no_gaps, residual, window;
  int64_t since_ns, until_ns;
  uint64_t client_cache; /* bytes */
  int with_delays, flat, no_collective, no_kernel, kernel_mean, kernel_pooled, read_all, healthy_ls, no_node_cpu, polling;
  long client_cores; /* 0: no bound; SIOX_CLIENT_CORES_ASSUMED: this machine's */
  uint32_t cores_used;  /* the model's bound (for --json) */
  double tolerance;
  struct vcase cs[MAX_CASES];
  int ncase;
};

static int case_opt(const struct siox_cmd *self, struct vargs *a, int c) {
  if (a->ncase == 0) return siox_cli_usage(self, "--%s belongs to a --case: give --case NAME first",
                                           c == 's' ? "scenario" : c == 'w' ? "workload" : c == 'r' ? "replay-dir"
                                           : c == 'm' ? "run-mount" : "measured");
  struct vcase *k = &a->cs[a->ncase - 1];
  switch (c) {
  case 's': k->c.spec = optarg; break;
  case 'w': k->wl_path = optarg; break;
  case 'r': k->c.replay_dir = optarg; break;
  case 'm': k->c.run_mount = optarg; break;
  default:
    if (k->c.nmeasured == MAX_RUNS) return siox_cli_usage(self, "at most %d --measured per case", MAX_RUNS);
    k->runs[k->c.nmeasured++] = optarg;
  }
  return -1;
}

static int parse(struct siox_cli *cli, int argc, char **argv, struct vargs *a) {
  const struct siox_cmd *self = &siox_cmd_capacity_validate;
  enum { O_JOB = 0x200, O_PREFIX, O_MOUNT, O_SINCE, O_UNTIL, O_TOL, O_NOGAPS, O_RESID, O_CASE, O_CACHE, O_DELAYS, O_FLAT,
         O_NOCOLL, O_NOKERNEL, O_KMEAN, O_KPOOL, O_READALL, O_HLS, O_CORES, O_NONODECPU, O_NOPOLL, O_POLL };
  static const struct option opts[] = {
      {"job", required_argument, NULL, O_JOB},       {"prefix", required_argument, NULL, O_PREFIX},
      {"mount", required_argument, NULL, O_MOUNT},   {"since", required_argument, NULL, O_SINCE},
      {"until", required_argument, NULL, O_UNTIL},   {"tolerance", required_argument, NULL, O_TOL},
      {"no-gaps", no_argument, NULL, O_NOGAPS},      {"residual", no_argument, NULL, O_RESID},
      {"case", required_argument, NULL, O_CASE},     {"scenario", required_argument, NULL, 's'},
      {"client-cache", required_argument, NULL, O_CACHE}, {"with-delays", no_argument, NULL, O_DELAYS},
      {"workload", required_argument, NULL, 'w'},    {"replay-dir", required_argument, NULL, 'r'},
      {"run-mount", required_argument, NULL, 'm'},   {"measured", required_argument, NULL, 'M'},
      {"flat-concurrency", no_argument, NULL, O_FLAT}, {"no-collective", no_argument, NULL, O_NOCOLL},
      {"no-kernel", no_argument, NULL, O_NOKERNEL}, {"client-cores", required_argument, NULL, O_CORES},
      {"no-node-cpu", no_argument, NULL, O_NONODECPU}, {"kernel-mean", no_argument, NULL, O_KMEAN},
      {"kernel-pooled", no_argument, NULL, O_KPOOL},
      {"read-all", no_argument, NULL, O_READALL}, {"healthy-ls", no_argument, NULL, O_HLS},
      {"no-polling", no_argument, NULL, O_NOPOLL},
      {"polling", no_argument, NULL, O_POLL},
      SIOX_GLOBAL_LONGOPTS,                          {0}};
  int c, rc;
  int64_t now = siox_time_now_ns();
  a->tolerance = 10;
  a->client_cache = SIOX_CAP_CLIENT_CACHE_BYTES;
  a->client_cores = SIOX_CLIENT_CORES_ASSUMED;
  a->since_ns = 0;
  a->until_ns = INT64_MAX;
  argc--, argv++; /* "validate" */
  optind = 0; /* glibc: full reset (argv was shifted) */
  while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
    switch (c) {
    case O_JOB: a->job = optarg; break;
    case O_MOUNT: a->mount = optarg; break;
    case O_NOGAPS: a->no_gaps = 1; break;
    case O_RESID: a->residual = 1; break;
    case O_PREFIX:
      if (a->nprefix == 64) return siox_cli_usage(self, "at most 64 --prefix options");
      a->prefix[a->nprefix++] = optarg;
      break;
    case O_SINCE:
    case O_UNTIL:
      if (siox_time_arg(optarg, now, c == O_SINCE ? &a->since_ns : &a->until_ns) != 0)
        return siox_cli_usage(self, "%s needs a time (now, 15m, 2h, 2026-11-23T06:00:00Z, @SECONDS), not '%s'",
                              c == O_SINCE ? "--since" : "--until", optarg);
      a->window = 1;
      break;
    case O_TOL: {
      char *end;
      a->tolerance = strtod(optarg, &end);
      if (*end || !(a->tolerance > 0) || a->tolerance > 1000)
        return siox_cli_usage(self, "--tolerance takes a percentage above 0, not '%s'", optarg);
      break;
    }
    case O_DELAYS: a->with_delays = 1; break;
    case O_FLAT: a->flat = 1; break;
    case O_NOCOLL: a->no_collective = 1; break;
    case O_NOKERNEL: a->no_kernel = 1; break;
    case O_KMEAN: a->kernel_mean = 1; break;
    case O_KPOOL: a->kernel_pooled = 1; break;
    case O_READALL: a->read_all = 1; break;
    case O_HLS: a->healthy_ls = 1; break;
    case O_NONODECPU: a->no_node_cpu = 1; break;
    case O_NOPOLL: a->polling = 0; break;
    case O_POLL: a->polling = 1; break;
    case O_CORES:
      if (siox_cli_parse_long(optarg, 0, 65536, &a->client_cores) < 0)
        return siox_cli_usage(self, "--client-cores takes a count from 0 (no bound) to 65536, not '%s'", optarg);
      break;
    case O_CACHE:
      if (siox_bytes_arg(optarg, &a->client_cache) != 0)
        return siox_cli_usage(self, "--client-cache takes bytes (e.g. 0, 65536, 512M, 2G), not '%s'", optarg);
      break;
    case O_CASE:
      if (a->ncase == MAX_CASES) return siox_cli_usage(self, "at most %d cases", MAX_CASES);
      a->cs[a->ncase].c.name = optarg;
      a->cs[a->ncase].c.measured = a->cs[a->ncase].runs;
      a->ncase++;
      break;
    case 's':
    case 'w':
    case 'r':
    case 'm':
    case 'M':
      if ((rc = case_opt(self, a, c)) >= 0) return rc;
      break;
    default:
      if ((rc = siox_cli_common_opt(cli, self, c, argv)) >= 0) return rc;
    }
  }
  if (optind < argc) return siox_cli_usage(self, "unexpected argument '%s'", argv[optind]);
  if (!a->job) return siox_cli_usage(self, "validate needs --job J, the recorded job");
  if (!a->ncase) return siox_cli_usage(self, "validate needs at least one --case NAME ... --measured JOB");
  for (int i = 0; i < a->ncase; i++)
    if (!a->cs[i].c.nmeasured)
      return siox_cli_usage(self, "case '%s' has no --measured JOB: which run of it should be compared?",
                            a->cs[i].c.name);
  if (a->until_ns <= a->since_ns) return siox_cli_usage(self, "the window is empty: --until is not after --since");
  return -1;
}

/* The recorded job's workload, and each case's own. */
static int load(PGconn *pg, struct vargs *a, siox_workload **base, char *err, size_t errlen) {
  a->prefix[a->nprefix] = NULL;
  struct siox_wl_extract_opts o = {.job = a->job, .prefixes = a->nprefix ? a->prefix : NULL};
  struct siox_wl_extract_stats st;
  char why[512] = "";
  int rc = siox_wl_extract(pg, &o, base, &st, why, sizeof why);
  if (rc < 0) {
    snprintf(err, errlen, "job '%s': %s", a->job, rc == -ENOENT ? "not in the warehouse" : why);
    return rc;
  }
  for (int i = 0; i < a->ncase; i++) {
    struct vcase *k = &a->cs[i];
    k->c.w = *base;
    if (!k->wl_path) continue;
    if ((rc = siox_wl_read_path(k->wl_path, &k->own, why, sizeof why)) < 0) {
      snprintf(err, errlen, "case %s: %s", k->c.name, why);
      return rc;
    }
    if (siox_wl_form(k->own) != SIOX_WL_TRACE) {
      snprintf(err, errlen, "case %s: %s is a characterization: the runs' workload must be a trace", k->c.name,
               k->wl_path);
      return -EINVAL;
    }
    k->c.w = k->own;
  }
  return 0;
}

static void print_text(const struct vargs *a, const siox_cap_model *m, const struct siox_cap_validate_result *r) {
  char p[32], ms[32], lo[32], hi[32];
  printf("capacity validation of job %s: model of %" PRIu64 " samples, %zu components; tolerance %.0f%%\n", a->job,
         m->samples, m->ncomp, a->tolerance);
  siox_client_cores_say(stdout, m, a->client_cores); /* not measured: said with the answers it changes */
  /* The scenario last: a brick's name makes it long. */
  printf("%-12s %5s %6s %7s %12s %12s %-29s %7s  %-7s  %s\n", "CASE", "RANKS", "COPIES", "REPEATS", "PREDICTED",
         "MEASURED", "(RUNS MIN .. MAX)", "ERROR", "VERDICT", "SCENARIO");
  double err[MAX_CASES];
  int off = 0;
  for (int i = 0; i < a->ncase; i++) {
    const struct siox_cap_validate_case *c = &a->cs[i].c;
    char range[64];
    snprintf(range, sizeof range, "(%s .. %s)", siox_fmt_duration(r[i].measured_min_ns, lo, sizeof lo),
             siox_fmt_duration(r[i].measured_max_ns, hi, sizeof hi));
    int ok = r[i].error_pct <= a->tolerance;
    off += !ok;
    err[i] = r[i].error_pct;
    printf("%-12s %5u %6u %7u %12s %12s %-29s %6.1f%%  %-7s  %s%s%s\n", c->name, r[i].ranks, r[i].copies,
           r[i].repeats, siox_fmt_duration(r[i].predicted_ns, p, sizeof p),
           siox_fmt_duration(r[i].measured_ns, ms, sizeof ms), range, r[i].error_pct, ok ? "ok" : "OFF", c->spec ? c->spec : "as-is", a->cs[i].wl_path ? " on " : "",
           a->cs[i].wl_path ? a->cs[i].wl_path : "");
    if (r[i].unmatched_syncs)
      printf("%-12s warning: %" PRIu64 " synchronization points did not match across ranks\n", "",
             r[i].unmatched_syncs);
  }
  printf("\nmedian error %.1f%%, %d of %d cases within %.0f%%\n", siox_cap_median(err, (size_t)a->ncase),
         a->ncase - off, a->ncase, a->tolerance);
  if (!off) {
    printf("verdict: VALIDATED (every case within %.0f%%)\n", a->tolerance);
    return;
  }
  printf("verdict: NOT VALIDATED (beyond %.0f%%:", a->tolerance);
  for (int i = 0; i < a->ncase; i++)
    if (r[i].error_pct > a->tolerance) printf(" %s", a->cs[i].c.name);
  printf(")\n");
}

static json_object *to_json(const struct vargs *a, const struct siox_cap_validate_result *r) {
  json_object *o = json_object_new_object(), *arr = json_object_new_array();
  double err[MAX_CASES];
  int off = 0;
  siox_json_str(o, "job", a->job);
  siox_json_dbl(o, "tolerance_pct", a->tolerance);
  siox_json_int(o, "client_cores", a->cores_used); /* 0: no bound */
  json_object_object_add(o, "node_cpu", json_object_new_boolean(!a->no_node_cpu && a->cores_used));
  json_object_object_add(o, "mpi_polling", json_object_new_boolean(a->polling && !a->no_node_cpu && a->cores_used));
  for (int i = 0; i < a->ncase; i++) {
    const struct siox_cap_validate_case *c = &a->cs[i].c;
    json_object *j = json_object_new_object(), *runs = json_object_new_array();
    siox_json_str(j, "case", c->name);
    siox_json_str(j, "scenario", c->spec ? c->spec : "as-is");
    if (a->cs[i].wl_path) siox_json_str(j, "workload", a->cs[i].wl_path);
    siox_json_int(j, "ranks", r[i].ranks);
    siox_json_int(j, "copies", r[i].copies);
    siox_json_int(j, "repeats", r[i].repeats);
    siox_json_int(j, "predicted_io_time_ns", r[i].predicted_ns);
    siox_json_int(j, "measured_io_time_ns", r[i].measured_ns);
    siox_json_int(j, "measured_min_ns", r[i].measured_min_ns);
    siox_json_int(j, "measured_max_ns", r[i].measured_max_ns);
    for (size_t k = 0; k < c->nmeasured; k++) json_object_array_add(runs, json_object_new_string(c->measured[k]));
    json_object_object_add(j, "measured_jobs", runs);
    siox_json_dbl(j, "error_pct", r[i].error_pct);
    json_object_object_add(j, "within", json_object_new_boolean(r[i].error_pct <= a->tolerance));
    siox_json_int(j, "unmatched_syncs", (int64_t)r[i].unmatched_syncs);
    json_object_array_add(arr, j);
    err[i] = r[i].error_pct;
    off += r[i].error_pct > a->tolerance;
  }
  json_object_object_add(o, "cases", arr);
  siox_json_dbl(o, "median_error_pct", siox_cap_median(err, (size_t)a->ncase));
  json_object_object_add(o, "validated", json_object_new_boolean(off == 0));
  return o;
}

static int validate_all(PGconn *pg, struct vargs *a, const struct siox_cli *cli, const siox_cap_model *m) {
  struct siox_cap_validate_result r[MAX_CASES];
  struct siox_cap_predict_opts po = {.mount = a->mount, .no_gaps = a->no_gaps, .residual = a->residual};
  char err[2048] = "";
  for (int i = 0; i < a->ncase; i++) {
    if (siox_cap_validate(pg, m, &a->cs[i].c, &po, &r[i], err, sizeof err) < 0) {
      fprintf(stderr, "siox capacity validate: %s\n", err);
      return SIOX_EXIT_FAIL;
    }
  }
  if (cli->json) return siox_json_print(to_json(a, r)) == 0 ? SIOX_EXIT_OK : SIOX_EXIT_FAIL;
  print_text(a, m, r);
  return SIOX_EXIT_OK;
}

int siox_capacity_validate_run(struct siox_cli *cli, int argc, char **argv) {
  struct vargs *a = calloc(1, sizeof(*a));
  if (!a) return SIOX_EXIT_FAIL;
  int rc = parse(cli, argc, argv, a);
  if (rc >= 0) return free(a), rc;
  struct siox_wh *wh;
  if ((rc = siox_cli_open(cli, &wh)) != SIOX_EXIT_OK) return free(a), rc;
  PGconn *pg = siox_wh_pg(wh);
  char err[1024] = "";
  siox_cap_model *m = NULL;
  siox_workload *base = NULL;
  rc = SIOX_EXIT_FAIL;
  /* The model of the recorded run only: the runs being checked must not calibrate what they check. */
  if ((a->window || siox_wh_job_window(pg, a->job, &a->since_ns, &a->until_ns, err, sizeof err) == 0) &&
      siox_cap_model_from_warehouse(pg, a->since_ns, a->until_ns == INT64_MAX ? a->until_ns : a->until_ns + 1, &m, err,
                                    sizeof err) == 0 &&
      load(pg, a, &base, err, sizeof err) == 0) {
    m->client_cache_bytes = a->client_cache;
    m->with_delays = a->with_delays;
    m->class_concurrency = !a->flat;
    m->kernel_path = !a->no_kernel;
    m->kernel_mean = a->kernel_mean;
    m->kernel_pooled = a->kernel_pooled;
    if (a->read_all) siox_cap_model_read_all(m);
    m->healthy_ls = a->healthy_ls;
    m->node_cpu = !a->no_node_cpu;
    m->mpi_polling = a->polling;
    m->collective = !a->no_collective;
    siox_client_cores_apply(m, a->client_cores);
    a->cores_used = m->client_cores;
    rc = validate_all(pg, a, cli, m);
  }
  else
    fprintf(stderr, "siox capacity validate: %s\n", err);
  for (int i = 0; i < a->ncase; i++) siox_wl_free(a->cs[i].own);
  siox_wl_free(base);
  siox_cap_model_free(m);
  siox_wh_close(wh);
  free(a);
  return rc;
}
