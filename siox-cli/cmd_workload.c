/*
 * `siox workload extract`: a job's workload from the warehouse, written as a
 * workload file (workload/README.md). The reading and the format live in
 * libsiox-workload; this file parses the command line and presents.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd_workload_transform.h"
#include "json_out.h"
#include "session.h"
#include "siox_workload.h"

static const char help[] =
    "NAME\n"
    "  siox workload - take a job's I/O workload out of the warehouse\n"
    "\n"
    "SYNOPSIS\n"
    "  siox workload extract --job J [-o FILE] [--form trace|characterization]\n"
    "                        [--anonymize] [--prefix PATH]... [--json]\n"
    "  siox workload transform FILE -o OUT [--ranks N] [--file-per-process]\n"
    "\n"
    "DESCRIPTION\n"
    "  Reads every POSIX, stdio, MPI-IO and MPI activity of batch job J and writes\n"
    "  a portable, versioned workload file (format: workload/README.md in the SIOX\n"
    "  sources) that `siox replay` executes.\n"
    "\n"
    "  trace             per rank, the stream of open, close, read, write, fsync,\n"
    "                    seek and stat (POSIX and stdio) and MPI-IO open, close,\n"
    "                    read, write, their collective (_all) forms and sync, with\n"
    "                    file ids, byte offsets, sizes, the compute gap before each\n"
    "                    operation and its recorded duration; MPI synchronization\n"
    "                    points (collective I/O calls, barriers) are kept as such.\n"
    "                    The calls an MPI-IO call made below it (ROMIO's pread/pwrite,\n"
    "                    two-phase aggregation) are not separate operations: replaying\n"
    "                    the MPI-IO call redoes them.\n"
    "  characterization  per file and rank, Darshan-like counters: operation counts,\n"
    "                    bytes, access-size histogram and most common sizes,\n"
    "                    sequential and consecutive shares, time per kind; per rank\n"
    "                    the compute time and barrier count. A few hundred bytes per\n"
    "                    file and rank, whatever the job's length.\n"
    "\n"
    "  Ranks come from MPI_Init's mpi/rank (processes without one, such as mpirun,\n"
    "  are left out of an MPI job); a job without MPI numbers its processes.\n"
    "  Files of the system and of the MPI runtime (/proc, /sys, /dev except\n"
    "  /dev/shm, /etc, /usr, /lib*, /run, OpenMPI's session and shared-memory\n"
    "  files) are left out unless --prefix names what to keep.\n"
    "\n"
    "  A summary goes to standard error (standard output with --json): ranks,\n"
    "  files, operations, what was left out and why, and the size of the job's\n"
    "  workload file in both forms.\n"
    "\n"
    "  transform writes workload FILE (a trace) changed the way a what-if about the\n"
    "  application asks, for `siox replay` to run and `siox capacity validate` to\n"
    "  predict. Sizes, gaps and recorded durations are kept.\n"
    "\n"
    "OPTIONS\n"
    "  --job J           the batch job (as `siox top --job` shows it); required\n"
    "  -o FILE           write the workload here (default: standard output)\n"
    "  --form F          trace (default) or characterization\n"
    "  --anonymize       replace file names by fileN plus their extension (.h5)\n"
    "  --prefix PATH     keep only files whose name starts with PATH (repeatable);\n"
    "                    replaces the default filter\n"
    "  --ranks N         (transform) the same job at N ranks, weak scaling: rank r does\n"
    "                    what rank r mod R did (R: the trace's ranks; fewer ranks: the\n"
    "                    first N keep theirs); a file one rank used gets a copy per\n"
    "                    replica (NAME.rK); a shared file stays shared, replica K\n"
    "                    working K x its extent further on\n"
    "  --file-per-process (transform) each rank's part of a shared file goes to a file\n"
    "                    of its own, NAME.rR, at the same offsets (after --ranks)\n"
    "\n"
    "EXIT STATUS\n"
    "  0 written; 1 no such job, warehouse unreachable or FILE not writable;\n"
    "  2 bad command line.\n"
    "\n"
    "EXAMPLES\n"
    "  siox workload extract --job 4711 -o job4711.wl\n"
    "  siox workload extract --job 4711 --form characterization --anonymize -o j.wlc\n"
    "  siox workload extract --job 4711 --prefix /mnt/gluster/ -o - | head\n"
    "  siox replay job4711.wl --dir /mnt/gluster/replay\n"
    "  siox workload transform job4711.wl --ranks 8 --file-per-process -o fpp8.wl\n";

struct args {
  struct siox_wl_extract_opts x;
  const char *out;
  int charact, anonymize;
  const char *prefixes[65];
  int nprefix;
};

static int parse(struct siox_cli *cli, const struct siox_cmd *self, int argc, char **argv, struct args *a) {
  enum { OPT_JOB = 0x200, OPT_FORM, OPT_ANON, OPT_PREFIX };
  static const struct option opts[] = {{"job", required_argument, NULL, OPT_JOB},
                                       {"form", required_argument, NULL, OPT_FORM},
                                       {"anonymize", no_argument, NULL, OPT_ANON},
                                       {"prefix", required_argument, NULL, OPT_PREFIX},
                                       SIOX_GLOBAL_LONGOPTS,
                                       {0}};
  int c, rc;
  if (argc < 2 || strcmp(argv[1], "extract") != 0) {
    if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) return siox_cli_help(self);
    return siox_cli_usage(self, argc < 2 ? "which action? (extract, transform)" : "unknown action '%s' (extract, transform)", argv[1]);
  }
  argc--, argv++;
  while ((c = getopt_long(argc, argv, ":ho:", opts, NULL)) != -1) {
    switch (c) {
    case OPT_JOB: a->x.job = optarg; break;
    case 'o': a->out = optarg; break;
    case OPT_ANON: a->anonymize = 1; break;
    case OPT_FORM:
      if (strcmp(optarg, "trace") && strcmp(optarg, "characterization"))
        return siox_cli_usage(self, "--form takes trace or characterization, not '%s'", optarg);
      a->charact = optarg[0] == 'c';
      break;
    case OPT_PREFIX:
      if (a->nprefix == 64) return siox_cli_usage(self, "at most 64 --prefix options");
      a->prefixes[a->nprefix++] = optarg;
      a->x.prefixes = a->prefixes;
      break;
    default:
      if ((rc = siox_cli_common_opt(cli, self, c, argv)) >= 0) return rc;
    }
  }
  if (optind < argc) return siox_cli_usage(self, "unexpected argument '%s'", argv[optind]);
  if (!a->x.job) return siox_cli_usage(self, "--job J is required");
  if (cli->json && (!a->out || strcmp(a->out, "-") == 0))
    return siox_cli_usage(self, "--json prints the summary on standard output: give -o FILE for the workload");
  return -1;
}

/* Size in bytes of w written in the file format. */
static long serialized_size(const siox_workload *w) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (!f) return -1;
  int rc = siox_wl_write(w, f);
  fclose(f);
  free(buf);
  return rc ? -1 : (long)len;
}

static int write_out(const struct args *a, const siox_workload *w) {
  FILE *f = !a->out || strcmp(a->out, "-") == 0 ? stdout : fopen(a->out, "w");
  if (!f) {
    fprintf(stderr, "siox workload: %s: %s\n", a->out, strerror(errno));
    return SIOX_EXIT_FAIL;
  }
  int rc = siox_wl_write(w, f);
  if (f != stdout && fclose(f)) rc = -EIO;
  if (rc) fprintf(stderr, "siox workload: writing %s failed\n", a->out ? a->out : "standard output");
  return rc ? SIOX_EXIT_FAIL : SIOX_EXIT_OK;
}

static void summary(const struct args *a, const siox_workload *t, const struct siox_wl_extract_stats *st, long tsize,
                    long csize, int json) {
  if (json) {
    json_object *o = json_object_new_object();
    siox_json_str(o, "job", a->x.job);
    siox_json_int(o, "ranks", siox_wl_ranks(t));
    siox_json_int(o, "files", (int64_t)siox_wl_nfiles(t));
    siox_json_int(o, "operations", (int64_t)siox_wl_nrecs(t));
    siox_json_int(o, "activities_read", (int64_t)st->activities);
    siox_json_int(o, "inner", (int64_t)st->inner);
    siox_json_int(o, "unknown_file", (int64_t)st->unknown_file);
    siox_json_int(o, "filtered", (int64_t)st->filtered);
    siox_json_int(o, "other_calls", (int64_t)st->other);
    siox_json_int(o, "no_rank", (int64_t)st->no_rank);
    siox_json_int(o, "trace_bytes", tsize);
    siox_json_int(o, "characterization_bytes", csize);
    siox_json_str(o, "form", a->charact ? "characterization" : "trace");
    siox_json_print(o);
    return;
  }
  FILE *f = stderr;
  fprintf(f, "job %s: %u ranks, %zu files, %zu operations from %" PRIu64 " activities\n", a->x.job, siox_wl_ranks(t),
          siox_wl_nfiles(t), siox_wl_nrecs(t), st->activities);
  fprintf(f, "left out: %" PRIu64 " inside MPI-IO calls, %" PRIu64 " on files the filter drops, %" PRIu64
             " on descriptors opened before tracing, %" PRIu64 " calls with no workload operation, %" PRIu64
             " of processes without a rank\n",
          st->inner, st->filtered, st->unknown_file, st->other, st->no_rank);
  fprintf(f, "workload file size: trace %ld bytes, characterization %ld bytes (wrote the %s)\n", tsize, csize,
          a->charact ? "characterization" : "trace");
}

static int run(struct siox_cli *cli, const struct siox_cmd *self, int argc, char **argv) {
  struct args a = {0};
  if (argc > 1 && strcmp(argv[1], "transform") == 0) return siox_workload_transform_run(cli, self, argc - 1, argv + 1);
  int rc = parse(cli, self, argc, argv, &a);
  if (rc >= 0) return rc;
  struct siox_wh *wh;
  if ((rc = siox_cli_open(cli, &wh)) != SIOX_EXIT_OK) return rc;
  PGconn *c = siox_wh_pg(wh);
  siox_workload *t = NULL, *ch = NULL;
  struct siox_wl_extract_stats st;
  char err[2048] = "out of memory";
  int e = siox_wl_extract(c, &a.x, &t, &st, err, sizeof(err));
  siox_wh_close(wh);
  if (!e && a.anonymize) e = siox_wl_anonymize(t);
  if (!e) e = siox_wl_characterize(t, &ch);
  if (e) {
    fprintf(stderr, "siox workload: %s\n", e == -ENOMEM ? "out of memory" : err);
    siox_wl_free(t);
    return SIOX_EXIT_FAIL;
  }
  long tsize = serialized_size(t), csize = serialized_size(ch);
  rc = write_out(&a, a.charact ? ch : t);
  if (rc == SIOX_EXIT_OK) summary(&a, t, &st, tsize, csize, cli->json);
  siox_wl_free(t);
  siox_wl_free(ch);
  return rc;
}

const struct siox_cmd siox_cmd_workload = {
    .name = "workload", .summary = "extract a job's workload file (trace or characterization)", .help = help, .run = run};
