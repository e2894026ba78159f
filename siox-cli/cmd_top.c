/*
 * `siox top`: the slowest activities in the warehouse, optionally of one job,
 * layer (SWID) or activity name: where to start looking before `siox blame`.
 */
#include <inttypes.h>
#include <stdio.h>

#include "format.h"
#include "json_out.h"
#include "session.h"
#include "warehouse.h"

static const char help[] =
    "NAME\n"
    "  siox top - list the slowest activities\n"
    "\n"
    "SYNOPSIS\n"
    "  siox top [-n N] [--job J] [--layer SWID] [--name NAME] [--roots] [--json]\n"
    "\n"
    "DESCRIPTION\n"
    "  Lists activities by inclusive time (end - start), slowest first, with their\n"
    "  AID, host, node (HWID, SWID), activity name, duration and bytes (the io/bytes\n"
    "  attribute, '-' when the layer does not report it). Feed an AID to\n"
    "  `siox graph` or `siox blame`.\n"
    "\n"
    "OPTIONS\n"
    "  -n N             show N activities (default 20, 1..100000)\n"
    "  --job J          only activities of processes in batch job J\n"
    "  --layer SWID     only this software layer, e.g. MPI-IO, POSIX, GlusterFS-brick\n"
    "  --name NAME      only this activity name, e.g. MPI_File_write_at, write, WRITE\n"
    "  --roots          only activities nothing else caused (the calls an\n"
    "                   application made at its top instrumented layer)\n"
    "\n"
    "EXIT STATUS\n"
    "  0 listed (possibly nothing); 1 warehouse unreachable; 2 bad command line.\n"
    "\n"
    "EXAMPLES\n"
    "  siox top -n 5\n"
    "  siox top --job 4711 --layer MPI-IO --name MPI_File_write_at_all\n"
    "  siox top --roots --json | jq '.activities[0].aid'\n";

static int parse(struct siox_cli *cli, const struct siox_cmd *self, int argc, char **argv, struct siox_top_query *q) {
  enum { OPT_JOB = 0x200, OPT_LAYER, OPT_NAME, OPT_ROOTS };
  static const struct option opts[] = {{"job", required_argument, NULL, OPT_JOB},
                                       {"layer", required_argument, NULL, OPT_LAYER},
                                       {"name", required_argument, NULL, OPT_NAME},
                                       {"roots", no_argument, NULL, OPT_ROOTS},
                                       SIOX_GLOBAL_LONGOPTS,
                                       {0}};
  int c, rc;
  *q = (struct siox_top_query){.limit = 20};
  while ((c = getopt_long(argc, argv, ":hn:", opts, NULL)) != -1) {
    switch (c) {
    case 'n':
      if (siox_cli_parse_long(optarg, 1, 100000, &q->limit) != 0)
        return siox_cli_usage(self, "-n needs a number from 1 to 100000, not '%s'", optarg);
      break;
    case OPT_JOB: q->job = optarg; break;
    case OPT_LAYER: q->layer = optarg; break;
    case OPT_NAME: q->name = optarg; break;
    case OPT_ROOTS: q->roots_only = 1; break;
    default:
      if ((rc = siox_cli_common_opt(cli, self, c, argv)) >= 0) return rc;
    }
  }
  if (optind < argc) return siox_cli_usage(self, "unexpected argument '%s'", argv[optind]);
  return -1;
}

static void print_text(const struct siox_top *t) {
  char dur[32], bytes[32], when[64], node[256];
  if (t->n == 0) {
    printf("No activities match.\n");
    return;
  }
  printf("%-20s %-12s %-28s %-22s %12s %10s  %s\n", "AID", "HOST", "NODE (HWID SWID)", "NAME", "DURATION", "BYTES",
         "START");
  for (size_t i = 0; i < t->n; i++) {
    const struct siox_top_row *r = &t->rows[i];
    snprintf(node, sizeof(node), "%s %s", r->hwid, r->swid);
    printf("%-20" PRId64 " %-12s %-28s %-22s %12s %10s  %s%s\n", r->aid, r->host[0] ? r->host : "-", node, r->name,
           siox_fmt_duration(r->duration_ns, dur, sizeof(dur)), siox_fmt_bytes(r->bytes, bytes, sizeof(bytes)),
           siox_fmt_iso(r->start_ns, when, sizeof(when)), r->err ? "  (error)" : "");
  }
}

/* The library's document (documents.h), the one siox web serves. */
static int run_json(PGconn *c, const struct siox_top_query *q) {
  char err[2048] = "out of memory";
  json_object *doc;
  if (siox_wh_top_document(c, q, &doc, err, sizeof(err)) != 0) {
    fprintf(stderr, "siox: %s\n", err);
    return SIOX_EXIT_FAIL;
  }
  return siox_json_print(doc) == 0 ? SIOX_EXIT_OK : SIOX_EXIT_FAIL;
}

static int run_text(PGconn *c, const struct siox_top_query *q) {
  char err[2048] = "out of memory";
  struct siox_top t = {0};
  if (siox_wh_top(c, q, &t, err, sizeof(err)) != 0) {
    fprintf(stderr, "siox: %s\n", err);
    return SIOX_EXIT_FAIL;
  }
  print_text(&t);
  siox_wh_top_free(&t);
  return SIOX_EXIT_OK;
}

static int run(struct siox_cli *cli, const struct siox_cmd *self, int argc, char **argv) {
  struct siox_top_query q;
  int rc = parse(cli, self, argc, argv, &q);
  if (rc >= 0) return rc;
  struct siox_wh *wh;
  if ((rc = siox_cli_open(cli, &wh)) != SIOX_EXIT_OK) return rc;
  rc = cli->json ? run_json(siox_wh_pg(wh), &q) : run_text(siox_wh_pg(wh), &q);
  siox_wh_close(wh);
  return rc;
}

const struct siox_cmd siox_cmd_top = {"top", "list the slowest activities (by job, layer, name)", help, run};
