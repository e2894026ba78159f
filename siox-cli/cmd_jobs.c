/*
 * `siox jobs`: the jobs in the warehouse with their I/O, worst component,
 * findings and IOMiner-like factors (warehouse/src/wh_jobs.c decides; the
 * findings count comes from the knowledge base). Presentation only.
 */
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

#include "format.h"
#include "json_out.h"
#include "session.h"
#include "siox/siox_kb.h"
#include "siox/siox_wh.h"
#include "time_arg.h"

static const char help[] =
    "NAME\n"
    "  siox jobs - triage: the jobs, their I/O and what slowed them\n"
    "\n"
    "SYNOPSIS\n"
    "  siox jobs [--since T] [--sort io_time|bytes|bandwidth] [--json]\n"
    "\n"
    "DESCRIPTION\n"
    "  One line per job (batch-system job id and owner): processes, bytes read and\n"
    "  written, I/O time, effective bandwidth, the worst component and the number of\n"
    "  findings of the knowledge base, then a factor table in the manner of IOMiner.\n"
    "\n"
    "  Bytes and I/O time are those of the calls the application made itself (the\n"
    "  top-level calls of its HDF5, MPI-IO, POSIX and stdio layers), so nested layers\n"
    "  count once. I/O time is the slowest process's summed call time; bandwidth is\n"
    "  bytes / I/O time. The worst component is the one outside the job (storage\n"
    "  client, brick, device) that spent the most time serving the job's calls,\n"
    "  followed through up to three causal links.\n"
    "\n"
    "  Factors:\n"
    "    small     share of data calls moving less than 64 KiB\n"
    "    noncons   share of data accesses not starting where the previous one on\n"
    "              the same descriptor ended (non-consecutive)\n"
    "    coll      share of MPI-IO data calls that are collective\n"
    "    bricks    GlusterFS bricks that served the job\n"
    "    p/brick   processes per brick\n"
    "\n"
    "OPTIONS\n"
    "  --since T        only jobs with a process first seen at or after T\n" SIOX_TIME_ARG_HELP
    "  --sort KEY       io_time, bytes or bandwidth, most first (default: newest first)\n"
    "\n"
    "EXIT STATUS\n"
    "  0 listed (possibly nothing); 1 warehouse unreachable; 2 bad command line.\n"
    "\n"
    "EXAMPLES\n"
    "  siox jobs --since 1d --sort io_time\n"
    "  siox jobs --json | jq '.jobs[0].factors'\n"
    "  siox summary --job 4711        the per-layer and per-file view of one job\n";

static int parse(struct siox_cli *cli, const struct siox_cmd *self, int argc, char **argv,
                 struct siox_wh_jobs_query *q) {
  enum { OPT_SINCE = 0x200, OPT_SORT };
  static const struct option opts[] = {{"since", required_argument, NULL, OPT_SINCE},
                                       {"sort", required_argument, NULL, OPT_SORT},
                                       SIOX_GLOBAL_LONGOPTS,
                                       {0}};
  int c, rc;
  *q = (struct siox_wh_jobs_query){0};
  while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
    switch (c) {
    case OPT_SINCE:
      if (siox_time_arg(optarg, siox_time_now_ns(), &q->since_ns) != 0)
        return siox_cli_usage(self, "--since: '%s' is not a time (now, 2h, 2026-11-23T06:00Z, @SECONDS)", optarg);
      break;
    case OPT_SORT:
      if (strcmp(optarg, "io_time") && strcmp(optarg, "bytes") && strcmp(optarg, "bandwidth"))
        return siox_cli_usage(self, "--sort must be io_time, bytes or bandwidth, not '%s'", optarg);
      q->sort = optarg;
      break;
    default:
      if ((rc = siox_cli_common_opt(cli, self, c, argv)) >= 0) return rc;
    }
  }
  if (optind < argc) return siox_cli_usage(self, "unexpected argument '%s'", argv[optind]);
  return -1;
}

static int64_t get_i64(json_object *o, const char *k) { return json_object_get_int64(json_object_object_get(o, k)); }
static double get_dbl(json_object *o, const char *k) { return json_object_get_double(json_object_object_get(o, k)); }

static void print_text(json_object *doc) {
  json_object *jobs = json_object_object_get(doc, "jobs");
  size_t n = json_object_array_length(jobs);
  if (n == 0) {
    printf("No jobs.\n");
    return;
  }
  printf("%-16s %6s %5s %10s %10s %12s %12s %8s  %s\n", "JOB", "UID", "PROCS", "READ", "WRITTEN", "I/O TIME",
         "BANDWIDTH", "FINDINGS", "WORST COMPONENT");
  for (size_t i = 0; i < n; i++) {
    json_object *j = json_object_array_get_idx(jobs, i), *w = json_object_object_get(j, "worst_component");
    char rd[32], wr[32], t[32], bw[40];
    siox_fmt_bytes(get_i64(j, "bytes_read"), rd, sizeof(rd));
    siox_fmt_bytes(get_i64(j, "bytes_written"), wr, sizeof(wr));
    siox_fmt_duration(get_i64(j, "io_time_ns"), t, sizeof(t));
    siox_fmt_bytes((int64_t)get_dbl(j, "bandwidth_bps"), bw, sizeof(bw));
    strncat(bw, "/s", sizeof(bw) - strlen(bw) - 1);
    json_object *fnd = json_object_object_get(j, "findings");
    char fs[16] = "-";
    if (fnd) snprintf(fs, sizeof(fs), "%d", json_object_get_int(fnd));
    printf("%-16s %6lld %5lld %10s %10s %12s %12s %8s  %s\n", json_object_get_string(json_object_object_get(j, "job")),
           (long long)get_i64(j, "uid"), (long long)get_i64(j, "processes"), rd, wr, t, bw, fs,
           w ? json_object_get_string(w) : "-");
  }
  printf("\nFACTORS\n%-16s %7s %8s %7s %6s %8s\n", "JOB", "SMALL", "NONCONS", "COLL", "BRICKS", "P/BRICK");
  for (size_t i = 0; i < n; i++) {
    json_object *j = json_object_array_get_idx(jobs, i), *f = json_object_object_get(j, "factors");
    printf("%-16s %6.0f%% %7.0f%% %6.0f%% %6lld %8.1f\n", json_object_get_string(json_object_object_get(j, "job")),
           100 * get_dbl(f, "small_requests_share"), 100 * get_dbl(f, "non_consecutive_share"),
           100 * get_dbl(f, "collective_share"), (long long)get_i64(f, "bricks"), get_dbl(f, "processes_per_brick"));
  }
}

static int run(struct siox_cli *cli, const struct siox_cmd *self, int argc, char **argv) {
  struct siox_wh_jobs_query q;
  int rc = parse(cli, self, argc, argv, &q);
  if (rc >= 0) return rc;
  struct siox_wh *wh;
  if ((rc = siox_cli_open(cli, &wh)) != SIOX_EXIT_OK) return rc;
  json_object *doc = NULL;
  char err[2048] = "out of memory";
  if (siox_wh_jobs(wh, &q, &doc, err, sizeof(err)) != 0 ||
      siox_kb_count_findings(siox_wh_pg(wh), json_object_object_get(doc, "jobs"), err, sizeof(err)) != 0) {
    fprintf(stderr, "siox: %s\n", err);
    json_object_put(doc);
    siox_wh_close(wh);
    return SIOX_EXIT_FAIL;
  }
  rc = siox_json_present(doc, cli->json, print_text);
  siox_wh_close(wh);
  return rc;
}

const struct siox_cmd siox_cmd_jobs = {"jobs", "list jobs with their I/O, worst component and factors", help, run};
