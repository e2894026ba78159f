/*
 * `siox graph AID`: the causal tree of one activity, from the warehouse
 * (warehouse_tree.c), with the times of graph.c, as text or DOT; JSON is
 * libsiox-warehouse's document (siox_wh_graph_document).
 */
#include <stdio.h>
#include <string.h>

#include "blame.h"
#include "graph_view.h"
#include "json_out.h"
#include "loss_view.h"
#include "session.h"

static const char help[] =
    "NAME\n"
    "  siox graph - show the causal tree of one activity\n"
    "\n"
    "SYNOPSIS\n"
    "  siox graph AID [--format text|dot|json] [--json] [--depth N] [--absolute]\n"
    "\n"
    "DESCRIPTION\n"
    "  Loads activity AID and everything it caused: explicit links (the parent\n"
    "  known inside one process) and implicit links the server reconstructed across\n"
    "  processes and hosts (file-system client -> storage server), down to N\n"
    "  levels. An activity reached along several links (write-behind, collective\n"
    "  buffering) is shown once, under its shallowest, most confident parent.\n"
    "\n"
    "  Every entry shows the node (HWID and SWID), the activity name, its start,\n"
    "  inclusive time (end - start), exclusive time (inclusive minus the union of\n"
    "  its children's intervals, clipped to it: children that overlap are not\n"
    "  counted twice), attributes by their ontology names, the error code if any,\n"
    "  and how it is linked to its parent: explicit, or implicit with the\n"
    "  confidence of the match (and flags such as before-parent for read-ahead).\n"
    "  The marked path (the critical path) is blame's walk: at each level the group\n"
    "  of same-kind children covering the most time, its heaviest member marked\n"
    "  (see `siox blame`; `siox blame AID --dot` also marks the culprit).\n"
    "\n"
    "  After the tree (text) or under \"trace_completeness\" (json): how complete\n"
    "  the trace of the root's process and job is: activities made, stored, and\n"
    "  dropped where (client buffer, client exit, daemon spool, daemon\n"
    "  validation), as `siox status --job` shows it. A tree of a trace that lost\n"
    "  activities may miss children.\n"
    "\n"
    "OPTIONS\n"
    "  AID              global activity id (decimal), as printed by `siox top`\n"
    "  --format F       text (default): an indented tree, '*' marks the critical path;\n"
    "                   dot: a Graphviz digraph (critical path red, implicit links\n"
    "                   dashed and labelled with their confidence);\n"
    "                   json: the tree as nested objects (\"children\")\n"
    "  --depth N        follow links at most N levels down (default 32, 1..1000)\n"
    "  --absolute       text: print every start as an ISO time, not as an offset\n"
    "                   from the root\n"
    "\n"
    "EXIT STATUS\n"
    "  0 shown; 1 no such activity or warehouse unreachable; 2 bad command line.\n"
    "\n"
    "EXAMPLES\n"
    "  siox graph 4294967299\n"
    "  siox graph 4294967299 --format dot | dot -Tsvg > call.svg\n"
    "  siox graph 4294967299 --json | jq '.children[0].exclusive_s'\n"
    "  siox graph 4294967299 --json | jq '.trace_completeness.job.unaccounted'\n";

enum format { FMT_TEXT, FMT_DOT, FMT_JSON };

struct graph_args {
  int64_t aid;
  long depth;
  enum format fmt;
  bool absolute;
};

static int parse_format(const char *s, enum format *out) {
  if (strcmp(s, "text") == 0)
    *out = FMT_TEXT;
  else if (strcmp(s, "dot") == 0)
    *out = FMT_DOT;
  else if (strcmp(s, "json") == 0)
    *out = FMT_JSON;
  else
    return -1;
  return 0;
}

static int parse(struct siox_cli *cli, const struct siox_cmd *self, int argc, char **argv, struct graph_args *a) {
  static const struct option opts[] = {{"format", required_argument, NULL, 'f'},
                                       {"depth", required_argument, NULL, 'd'},
                                       {"absolute", no_argument, NULL, 'A'},
                                       SIOX_GLOBAL_LONGOPTS,
                                       {0}};
  int c, rc;
  bool fmt_given = false;
  *a = (struct graph_args){.depth = SIOX_WH_GRAPH_DEPTH, .fmt = FMT_TEXT};
  while ((c = getopt_long(argc, argv, ":hf:d:", opts, NULL)) != -1) {
    switch (c) {
    case 'f':
      if (parse_format(optarg, &a->fmt) != 0) return siox_cli_usage(self, "unknown format '%s' (text, dot or json)", optarg);
      fmt_given = true;
      break;
    case 'd':
      if (siox_cli_parse_long(optarg, 1, 1000, &a->depth) != 0)
        return siox_cli_usage(self, "--depth needs a number from 1 to 1000, not '%s'", optarg);
      break;
    case 'A': a->absolute = true; break;
    default:
      if ((rc = siox_cli_common_opt(cli, self, c, argv)) >= 0) return rc;
    }
  }
  if (cli->json && !fmt_given) a->fmt = FMT_JSON;
  if (optind >= argc) return siox_cli_usage(self, "which activity? give its AID");
  if (optind + 1 < argc) return siox_cli_usage(self, "one AID only, got '%s' too", argv[optind + 1]);
  if (siox_cli_parse_aid(argv[optind], &a->aid) != 0)
    return siox_cli_usage(self, "'%s' is not an activity id (a decimal number > 0)", argv[optind]);
  return -1;
}

/* How complete the trace of the root's process and job is, after the text
 * tree: a graph with holes must say so (the JSON document's
 * "trace_completeness", siox_wh_graph_document). Nothing when the
 * warehouse could not tell. */
static void completeness_text(PGconn *c, const struct siox_act *root) {
  struct siox_wh_loss lp, lj;
  char label[320];
  int have = siox_wh_graph_completeness(c, root, &lp, &lj);
  if (have < 1) return;
  snprintf(label, sizeof label, "\ntrace of process %d (%s):", root->pid, root->host ? root->host : "?");
  siox_loss_text(stdout, label, &lp);
  if (have < 2) return;
  snprintf(label, sizeof label, "trace of job %s:", root->job);
  siox_loss_text(stdout, label, &lj);
}

/* The library's document (documents.h), the one siox web serves. */
static int run_json(PGconn *c, const struct graph_args *a) {
  char err[2048] = "";
  json_object *doc;
  if (siox_wh_graph_document(c, a->aid, (int)a->depth, &doc, err, sizeof err) != 0) {
    fprintf(stderr, "siox: %s\n", err);
    return SIOX_EXIT_FAIL;
  }
  return siox_json_print(doc) == 0 ? SIOX_EXIT_OK : SIOX_EXIT_FAIL;
}

/* Text or DOT, drawn here from the tree. */
static int run_view(PGconn *c, const struct graph_args *a) {
  struct siox_tree *t = NULL;
  int rc = siox_cli_load(c, a->aid, (int)a->depth, &t);
  if (rc != SIOX_EXIT_OK) return rc;
  struct siox_blame b;
  /* The marked path is blame's walk: the picture and blame agree. */
  if (siox_blame_walk(t, &SIOX_BLAME_RULE_DEFAULT, &b) == 0) siox_tree_mark(t, b.path, b.npath, NULL);
  siox_blame_release(&b);
  if (a->fmt == FMT_TEXT) siox_view_text(stdout, t, a->absolute), completeness_text(c, t->root);
  if (a->fmt == FMT_DOT) siox_view_dot(stdout, t, 0, NULL);
  siox_tree_destroy(t);
  return SIOX_EXIT_OK;
}

static int run(struct siox_cli *cli, const struct siox_cmd *self, int argc, char **argv) {
  struct graph_args a;
  int rc = parse(cli, self, argc, argv, &a);
  if (rc >= 0) return rc;
  struct siox_wh *wh;
  if ((rc = siox_cli_open(cli, &wh)) != SIOX_EXIT_OK) return rc;
  rc = a.fmt == FMT_JSON ? run_json(siox_wh_pg(wh), &a) : run_view(siox_wh_pg(wh), &a);
  siox_wh_close(wh);
  return rc;
}

const struct siox_cmd siox_cmd_graph = {"graph", "show the causal tree of one activity (text, DOT, JSON)", help, run};
