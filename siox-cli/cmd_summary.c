/*
 * `siox summary --job J`: a darshan-parser-like view of one job, per layer
 * and per file, with its critical files (warehouse/src/wh_job_summary.c
 * decides). Presentation only.
 */
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

#include "format.h"
#include "json_out.h"
#include "session.h"
#include "siox/siox_wh.h"

static const char help[] =
    "NAME\n"
    "  siox summary - one job's I/O per layer and per file, and its critical files\n"
    "\n"
    "SYNOPSIS\n"
    "  siox summary --job J [--json]\n"
    "\n"
    "DESCRIPTION\n"
    "  In the manner of darshan-parser, for each layer the job's processes used\n"
    "  (HDF5, MPI-IO, POSIX, stdio), and within it for each file:\n"
    "    operations, reads and writes, bytes read and written, the access-size\n"
    "    histogram of data calls (darshan's buckets), the sequential share (an access\n"
    "    at or after where the previous one on the file, by the same process,\n"
    "    ended) and consecutive share (exactly there), seeks, cumulative and\n"
    "    slowest call time (with its AID) and the ranks that made the calls.\n"
    "\n"
    "  A call is on the file its descriptor was opened on (open, fopen,\n"
    "  MPI_File_open carry the path; reads and writes their fd or FILE*); an MPI-IO\n"
    "  or HDF5 call that names none is on the file of its first POSIX child.\n"
    "  Calls on no known file are listed under '(unknown)'.\n"
    "\n"
    "  Totals are those of the calls the application made itself (no explicit\n"
    "  parent): nested layers count once. I/O time is the slowest process's summed\n"
    "  call time; bandwidth is bytes / I/O time.\n"
    "\n"
    "  Critical files, by IOMiner's sweep line: the job's busy time (the union of\n"
    "  all its I/O intervals; idle gaps left out) is divided at each instant\n"
    "  equally among the files being accessed then; a file's exclusive time is its\n"
    "  share (the shares add up to the busy time). Busy is the union of the file's\n"
    "  own intervals.\n"
    "\n"
    "OPTIONS\n"
    "  --job J          the batch job id (as `siox jobs` lists it)\n"
    "\n"
    "EXIT STATUS\n"
    "  0 shown; 1 no such job, job id of several users, warehouse unreachable;\n"
    "  2 bad command line.\n"
    "\n"
    "EXAMPLES\n"
    "  siox summary --job 4711\n"
    "  siox summary --job 4711 --json | jq '.critical_files[0]'\n";

static int parse(struct siox_cli *cli, const struct siox_cmd *self, int argc, char **argv, const char **job) {
  enum { OPT_JOB = 0x200 };
  static const struct option opts[] = {{"job", required_argument, NULL, OPT_JOB}, SIOX_GLOBAL_LONGOPTS, {0}};
  int c, rc;
  *job = NULL;
  while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
    if (c == OPT_JOB) *job = optarg;
    else if ((rc = siox_cli_common_opt(cli, self, c, argv)) >= 0) return rc;
  }
  if (optind < argc) return siox_cli_usage(self, "unexpected argument '%s'", argv[optind]);
  if (!*job || !**job) return siox_cli_usage(self, "--job J is required");
  return -1;
}

static json_object *get(json_object *o, const char *k) { return json_object_object_get(o, k); }
static int64_t get_i64(json_object *o, const char *k) { return json_object_get_int64(get(o, k)); }

/* Ranks as runs: 0-3,5 */
static void print_ranks(json_object *ranks) {
  size_t n = json_object_array_length(ranks);
  if (n == 0) fputs("-", stdout);
  for (size_t i = 0; i < n; i++) {
    int r = json_object_get_int(json_object_array_get_idx(ranks, i)), last = r;
    printf("%s%d", i ? "," : "", r);
    while (i + 1 < n && json_object_get_int(json_object_array_get_idx(ranks, i + 1)) == last + 1) last++, i++;
    if (last > r) printf("-%d", last);
  }
}

static void print_stats(json_object *s, const char *indent) {
  char rd[32], wr[32], cum[32], slow[32];
  printf("%sops %lld (reads %lld, writes %lld, seeks %lld)  read %s  written %s\n", indent,
         (long long)get_i64(s, "operations"), (long long)get_i64(s, "reads"), (long long)get_i64(s, "writes"),
         (long long)get_i64(s, "seeks"), siox_fmt_bytes(get_i64(s, "bytes_read"), rd, sizeof(rd)),
         siox_fmt_bytes(get_i64(s, "bytes_written"), wr, sizeof(wr)));
  printf("%stime %s cumulative, slowest %s (aid %lld)  sequential %.0f%%  consecutive %.0f%%  ranks ", indent,
         siox_fmt_duration(get_i64(s, "cumulative_ns"), cum, sizeof(cum)),
         siox_fmt_duration(get_i64(s, "slowest_ns"), slow, sizeof(slow)), (long long)get_i64(s, "slowest_aid"),
         100 * json_object_get_double(get(s, "sequential_share")),
         100 * json_object_get_double(get(s, "consecutive_share")));
  print_ranks(get(s, "ranks"));
  printf("\n%saccess sizes:", indent);
  json_object_object_foreach(get(s, "access_sizes"), k, v) if (json_object_get_int64(v)) printf(" %s:%lld", k,
                                                                                                (long long)json_object_get_int64(v));
  putchar('\n');
}

static void print_text(json_object *doc) {
  json_object *t = get(doc, "totals");
  char rd[32], wr[32], io[32], bw[32], busy[32];
  printf("job %s (uid %lld): %lld processes, %lld ranks, %lld activities, %lld calls\n",
         json_object_get_string(get(doc, "job")), (long long)get_i64(doc, "uid"), (long long)get_i64(doc, "processes"),
         (long long)get_i64(doc, "ranks"), (long long)get_i64(t, "activities"), (long long)get_i64(t, "calls"));
  printf("read %s, written %s, I/O time %s (slowest process), bandwidth %s/s, busy %s\n",
         siox_fmt_bytes(get_i64(t, "bytes_read"), rd, sizeof(rd)),
         siox_fmt_bytes(get_i64(t, "bytes_written"), wr, sizeof(wr)),
         siox_fmt_duration(get_i64(t, "io_time_ns"), io, sizeof(io)),
         siox_fmt_bytes((int64_t)json_object_get_double(get(t, "bandwidth_bps")), bw, sizeof(bw)),
         siox_fmt_duration(get_i64(doc, "busy_ns"), busy, sizeof(busy)));
  json_object *layers = get(doc, "layers");
  for (size_t l = 0; l < json_object_array_length(layers); l++) {
    json_object *L = json_object_array_get_idx(layers, l), *files = get(L, "files");
    printf("\nLAYER %s\n", json_object_get_string(get(L, "layer")));
    print_stats(L, "  ");
    for (size_t f = 0; f < json_object_array_length(files); f++) {
      json_object *F = json_object_array_get_idx(files, f), *name = get(F, "file");
      printf("  FILE %s\n", name ? json_object_get_string(name) : "(unknown)");
      print_stats(F, "    ");
    }
  }
  json_object *crit = get(doc, "critical_files");
  printf("\nCRITICAL FILES (exclusive time, sweep line; idle gaps left out)\n");
  for (size_t i = 0; i < json_object_array_length(crit); i++) {
    json_object *c = json_object_array_get_idx(crit, i);
    char ex[32], b[32];
    printf("  %5.1f%%  %12s exclusive  %12s busy  %s\n", 100 * json_object_get_double(get(c, "share")),
           siox_fmt_duration(get_i64(c, "exclusive_ns"), ex, sizeof(ex)),
           siox_fmt_duration(get_i64(c, "busy_ns"), b, sizeof(b)), json_object_get_string(get(c, "file")));
  }
}

static int run(struct siox_cli *cli, const struct siox_cmd *self, int argc, char **argv) {
  const char *job;
  int rc = parse(cli, self, argc, argv, &job);
  if (rc >= 0) return rc;
  struct siox_wh *wh;
  if ((rc = siox_cli_open(cli, &wh)) != SIOX_EXIT_OK) return rc;
  json_object *doc = NULL;
  char err[2048] = "out of memory";
  if (siox_wh_job_summary(wh, job, &doc, err, sizeof(err)) != 0) {
    fprintf(stderr, "siox: %s\n", err);
    siox_wh_close(wh);
    return SIOX_EXIT_FAIL;
  }
  rc = siox_json_present(doc, cli->json, print_text);
  siox_wh_close(wh);
  return rc;
}

const struct siox_cmd siox_cmd_summary = {"summary", "one job's I/O per layer and file, critical files", help, run};
