/*
 * `siox export`: a job's trace for other tools: Chrome trace-event JSON
 * (Perfetto, chrome://tracing) or CSV tables. Streams: memory stays flat
 * however large the job.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "export_out.h"
#include "session.h"

static const char help[] =
    "NAME\n"
    "  siox export - write a job's trace as a Chrome trace or as CSV tables\n"
    "\n"
    "SYNOPSIS\n"
    "  siox export --job J --format chrome-trace [--output FILE]\n"
    "  siox export --job J --format csv --output DIR\n"
    "\n"
    "DESCRIPTION\n"
    "  Exports every activity of job J's processes and everything their implicit\n"
    "  causal links reached (the file system client, the servers, their devices),\n"
    "  with the causal links between them and their attributes. Rows are written\n"
    "  as the warehouse sends them, so memory stays flat for big jobs.\n"
    "\n"
    "  chrome-trace writes Chrome's trace-event JSON (object form), which Perfetto\n"
    "  (ui.perfetto.dev, offline too) and chrome://tracing open: a track per\n"
    "  process (pid = the warehouse's process id, named \"host pid exe job J\") and\n"
    "  in it one per instrumented layer (tid = the layer's node id, named \"SWID\n"
    "  HWID\"; the warehouse records no thread ids); each activity a complete\n"
    "  event (ph X; args: aid, parent_aid, bytes, err); each causal link a flow\n"
    "  arrow (ph s at the parent, ph f at the child) named \"explicit 1.00\" or\n"
    "  \"implicit 0.85\": its kind and confidence (args: kind, confidence, flags,\n"
    "  parent_aid, child_aid). Times are microseconds since the job's first\n"
    "  activity; otherData.t0_ns gives that instant in ns since 1970.\n"
    "\n"
    "  csv writes three RFC 4180 tables with a header line into DIR (created if\n"
    "  missing): activities.csv (aid, parent_aid, proc_id, host, pid, exe, job,\n"
    "  node_id, hwid, swid, iid, name, start_ns, end_ns, duration_ns, err, bytes;\n"
    "  bytes -1 when unknown), links.csv (parent_aid, child_aid, kind, confidence,\n"
    "  flags) and attributes.csv (aid, name, unit, value).\n"
    "\n"
    "OPTIONS\n"
    "  --job J          the job (processes.job, or proc:ID for a process without one)\n"
    "  --format F       chrome-trace or csv\n"
    "  --output PATH    chrome-trace: the file (default stdout); csv: the directory\n"
    SIOX_GLOBAL_HELP
    "\n"
    "EXIT STATUS\n"
    "  0 written; 1 no such job, warehouse unreachable or a write failed (a partial\n"
    "  file is left); 2 bad command line.\n"
    "\n"
    "EXAMPLES\n"
    "  siox export --job 4711 --format chrome-trace --output 4711.json\n"
    "  siox export --job 4711 --format csv --output 4711-csv/\n";

struct export_args {
  const char *job, *output;
  int csv;
};

static int parse(struct siox_cli *cli, const struct siox_cmd *self, int argc, char **argv, struct export_args *a) {
  enum { OPT_JOB = 0x200, OPT_FORMAT, OPT_OUTPUT };
  static const struct option opts[] = {{"job", required_argument, NULL, OPT_JOB},
                                       {"format", required_argument, NULL, OPT_FORMAT},
                                       {"output", required_argument, NULL, OPT_OUTPUT},
                                       SIOX_GLOBAL_LONGOPTS,
                                       {0}};
  int c, rc, format = 0;
  *a = (struct export_args){0};
  while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
    switch (c) {
    case OPT_JOB: a->job = optarg; break;
    case OPT_OUTPUT: a->output = optarg; break;
    case OPT_FORMAT:
      if (strcmp(optarg, "chrome-trace") == 0) a->csv = 0;
      else if (strcmp(optarg, "csv") == 0) a->csv = 1;
      else return siox_cli_usage(self, "--format is chrome-trace or csv, not '%s'", optarg);
      format = 1;
      break;
    default:
      if ((rc = siox_cli_common_opt(cli, self, c, argv)) >= 0) return rc;
    }
  }
  if (optind < argc) return siox_cli_usage(self, "unexpected argument '%s'", argv[optind]);
  if (!a->job || !a->job[0]) return siox_cli_usage(self, "--job J is required");
  if (!format) return siox_cli_usage(self, "--format chrome-trace or --format csv is required");
  if (a->csv && !a->output) return siox_cli_usage(self, "--format csv needs --output DIR (three files)");
  return -1;
}

static int run(struct siox_cli *cli, const struct siox_cmd *self, int argc, char **argv) {
  struct export_args a;
  int rc = parse(cli, self, argc, argv, &a);
  if (rc >= 0) return rc;
  struct siox_wh *wh;
  if ((rc = siox_cli_open(cli, &wh)) != SIOX_EXIT_OK) return rc;
  char err[2048] = "";
  if (a.csv) {
    rc = siox_export_csv(siox_wh_pg(wh), a.job, a.output, err, sizeof err);
  } else {
    FILE *f = a.output ? fopen(a.output, "w") : stdout;
    if (!f) {
      rc = -errno;
      snprintf(err, sizeof err, "cannot write %s: %s", a.output, strerror(-rc));
    } else {
      rc = siox_export_chrome(siox_wh_pg(wh), a.job, f, err, sizeof err);
      if (f != stdout && fclose(f) != 0 && rc == 0) {
        rc = -EIO;
        snprintf(err, sizeof err, "writing %s: %s", a.output, strerror(errno));
      }
    }
  }
  siox_wh_close(wh);
  if (rc == 0) return SIOX_EXIT_OK;
  fprintf(stderr, "siox export: %s\n", err);
  return SIOX_EXIT_FAIL;
}

const struct siox_cmd siox_cmd_export = {"export", "write a job's trace as Chrome trace JSON (Perfetto) or CSV", help,
                                         run};
