/*
 * `siox blame AID`: why was this call slow? The warehouse library blames
 * the call (siox_blame_doc.h: the causal tree, the suspect, its peers, what
 * it waited for, the baseline, the sibling a collective waited for) and
 * builds the --json document, which `siox web` serves too; this file
 * parses the command line, prints the document, the text or the DOT
 * picture, and sums a job (blame_job.c).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <siox/siox_blame_doc.h>
#include <siox/siox_kb_baselines.h>
#include <siox/siox_wh.h>

#include "blame_job.h"
#include "format.h"
#include "graph_view.h"
#include "json_out.h"
#include "session.h"
#include "warehouse.h"

#define DEFAULT_MARGIN_S 10

static const char help[] =
    "NAME\n"
    "  siox blame - say which component made one call slow, with the evidence\n"
    "\n"
    "SYNOPSIS\n"
    "  siox blame AID [--json | --dot] [--margin S] [--ratio X] [--depth N] [--refit-kind-model]\n"
    "  siox blame --job J [--calls N] [--json] [--margin S] [--ratio X] [--depth N]\n"
    "\n"
    "DESCRIPTION\n"
    "  Loads the causal tree of activity AID (see `siox graph`) and walks down, at\n"
    "  each level into the group of same-kind children covering the most time, to\n"
    "  the deepest level still holding half of the call's time: the suspect. Deep\n"
    "  components (bricks, devices) that spent their own time are judged too; the\n"
    "  one furthest above its peers' median is named.\n"
    "\n"
    "  The suspect is then compared with its peers: activities of the same layer\n"
    "  (SWID) and name on OTHER nodes (other devices' write, other bricks' WRITE),\n"
    "  of the same job (server-side processes, which carry no job, included),\n"
    "  starting within the call's interval widened by S seconds. When the suspect\n"
    "  and its peers report sizes (io/bytes) and the peers show two sizes or more,\n"
    "  a latency line (fixed cost + cost per byte, a robust Theil-Sen fit) is\n"
    "  fitted to the peers and every time is taken over what the line gives for\n"
    "  its size, so a small piece is judged against small pieces; with one peer\n"
    "  size, times are compared per byte.\n"
    "\n"
    "  RULE: the suspect is named the culprit when its time (over the line, or per\n"
    "  byte) is at least X times the peers' median (default 3) and above the\n"
    "  peers' 90th percentile, with at least 3 peer samples. Otherwise blame says\n"
    "  where the time went and that it looks normal, or that there are too few\n"
    "  peers to tell.\n"
    "\n"
    "  The evidence: the suspect's time and share of the call, the peers' median\n"
    "  and 90th percentile, the ratio, the number of peer samples and nodes, the\n"
    "  median per peer node, and the suspect node's own other samples.\n"
    "\n"
    "  COLLECTIVE CALLS: a rank whose collective write (MPI_File_write_all, an\n"
    "  H5Dwrite over it) made no I/O itself waited for the aggregator rank that\n"
    "  wrote its data. The server's link from its call to the aggregator's pwrite\n"
    "  leads the walk there. When no link reaches a shared resource, blame follows\n"
    "  a sibling instead: the same call in another process of the same job (and\n"
    "  file), overlapping this one longest among those that made I/O themselves;\n"
    "  the output then starts with the call asked about and the sibling followed.\n"
    "\n"
    "  BASELINE: the culprit (or, without one, the suspect) is also ranked against\n"
    "  its own component's learned latency baseline (same node, activity name and\n"
    "  size class; see `siox anomalies`) with the activities of the call's run left\n"
    "  out (from the first to the last activity of its job, or of its process\n"
    "  without a job, and the peer window), so the episode being judged is not its\n"
    "  own normal. At or above the 95th percentile it is ABNORMAL for that\n"
    "  component (something changed); below it, the component is NORMALLY this\n"
    "  slow (a slow component, not a fault). With fewer than 20 baseline samples\n"
    "  the judgement is \"unknown\".\n"
    "\n"
    "OPTIONS\n"
    "  AID              global activity id (decimal), e.g. from `siox top --roots`\n"
    "  --margin S       widen the call's time window by S seconds each side when\n"
    "                   looking for peers (default 10, 0..86400)\n"
    "  --ratio X        name a culprit at X times the peers' median (default 3)\n"
    "  --depth N        follow causal links at most N levels down (default 32)\n"
    "  --job J          job-level blame: blames the job's N slowest calls that nothing\n"
    "                   caused (see `siox top --roots`) and sums their attribution:\n"
    "                   each call's own service at its resource (and its queued time\n"
    "                   when that resource is at fault) is charged to the resource\n"
    "                   with the call's class, its queued time behind other jobs to\n"
    "                   those jobs; lists them, most time first, with the class and\n"
    "                   example AIDs, and the time nothing explains\n"
    "  --calls N        how many of the job's slowest calls --job blames (default 20)\n"
    "  --refit-kind-model\n"
    "                   fit the kind's latency model from the warehouse for this\n"
    "                   call (its kind's latest 2000 operations per component\n"
    "                   before the call) instead of reading the one siox-server\n"
    "                   keeps (fitted each minute of the timeline on the history up\n"
    "                   to that minute; blame fits it itself anyway when none is\n"
    "                   kept for the call's time). Slower on a large warehouse;\n"
    "                   for comparing the two (bench/bench_blame_latency.sh)\n"
    "  --dot            print the causal tree as Graphviz DOT instead (as `siox graph\n"
    "                   --format dot`): blame's path in red, the culprit (else the\n"
    "                   resource the call waited at) filled and labelled with its\n"
    "                   class; e.g. siox blame AID --dot | dot -Tsvg > blame.svg\n"
    "  --json           machine-readable: verdict, culprit {hwid, swid, name, aid,\n"
    "                   inclusive_s, exclusive_s, ...} or null, path, peers,\n"
    "                   evidence, rule, baseline {aid, judgement (abnormal |\n"
    "                   normal | unknown), percentile, samples, size_class, p50_s,\n"
    "                   p90_s, p99_s, latency_s, excluded_from_ns, excluded_to_ns},\n"
    "                   class, decided_by, resource, breakdown {own_service_s,\n"
    "                   queued_s, queued_behind [...], unexplained_s, ...},\n"
    "                   unlinked {unlinked_s, share, linked_activities,\n"
    "                   stretches [{from_s, to_s, start_ns, end_ns}]},\n"
    "                   explanation, waited_in_collective {aid, name, inclusive_s,\n"
    "                   collective_aid, collective_name, sibling_aid, sibling_pid,\n"
    "                   rule} (the call asked about, when a sibling was followed;\n"
    "                   else null)\n"
    "\n"
    "  UNLINKED AND UNEXPLAINED: the parts of the call's time that no activity of\n"
    "  a component linked to it covers (below a cross-process link: a file-system\n"
    "  client, a brick) are reported with the stretches they cover when they are\n"
    "  a tenth of the call or more (always in --json); what the waiting analysis\n"
    "  does not account for either is unexplained (breakdown.unexplained_s; all\n"
    "  of the call when it reached no component). A component is not named a\n"
    "  fault when the call's unlinked time is half of the call or more and more\n"
    "  than twice what the component accounts for: no verdict, unexplained (over\n"
    "  a lone outlier: class normal, the unlinked time unexplained).\n"
    "  Metadata calls\n"
    "  (open, creat, stat, unlink, fsync, close) are judged like data calls\n"
    "  through the GlusterFS fops they reach (lookup, create, open, stat, unlink,\n"
    "  fsync, flush); a lookup of a name that does not exist yet carries no file\n"
    "  id and stays unlinked.\n"
    "\n"
    "EXIT STATUS\n"
    "  0 answered (whether or not a culprit was named); 1 no such activity or\n"
    "  warehouse unreachable; 2 bad command line.\n"
    "\n"
    "EXAMPLES\n"
    "  siox blame 4294967299\n"
    "  siox blame 4294967299 --json | jq -r '.culprit.hwid // .class'\n"
    "  siox blame --job 4711 --calls 50\n"
    "  siox top --roots -n 1 --json | jq '.activities[0].aid' | xargs siox blame\n";

struct blame_args {
  int64_t aid;
  long margin_s, depth;
  double ratio;
  bool dot;
  const char *job; /* --job: job-level blame over its `calls` slowest calls */
  long calls;
  bool refit_kind; /* --refit-kind-model */
};

static int parse(struct siox_cli *cli, const struct siox_cmd *self, int argc, char **argv, struct blame_args *a) {
  enum { OPT_MARGIN = 0x200, OPT_RATIO, OPT_DEPTH, OPT_DOT, OPT_JOB, OPT_CALLS, OPT_REFIT };
  static const struct option opts[] = {{"margin", required_argument, NULL, OPT_MARGIN},
                                       {"ratio", required_argument, NULL, OPT_RATIO},
                                       {"depth", required_argument, NULL, OPT_DEPTH},
                                       {"dot", no_argument, NULL, OPT_DOT},
                                       {"job", required_argument, NULL, OPT_JOB},
                                       {"calls", required_argument, NULL, OPT_CALLS},
                                       {"refit-kind-model", no_argument, NULL, OPT_REFIT},
                                       SIOX_GLOBAL_LONGOPTS,
                                       {0}};
  int c, rc;
  char *end;
  *a = (struct blame_args){.margin_s = DEFAULT_MARGIN_S, .depth = 32, .ratio = 3.0, .calls = SIOX_BLAME_JOB_CALLS};
  while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
    switch (c) {
    case OPT_MARGIN:
      if (siox_cli_parse_long(optarg, 0, 86400, &a->margin_s) != 0)
        return siox_cli_usage(self, "--margin needs seconds from 0 to 86400, not '%s'", optarg);
      break;
    case OPT_RATIO:
      a->ratio = strtod(optarg, &end);
      if (*end || end == optarg || !(a->ratio > 1.0 && a->ratio < 1e6))
        return siox_cli_usage(self, "--ratio needs a number above 1, not '%s'", optarg);
      break;
    case OPT_DOT:
      a->dot = true;
      break;
    case OPT_JOB:
      if (!*optarg) return siox_cli_usage(self, "--job needs a job id");
      a->job = optarg;
      break;
    case OPT_CALLS:
      if (siox_cli_parse_long(optarg, 1, 10000, &a->calls) != 0)
        return siox_cli_usage(self, "--calls needs a number from 1 to 10000, not '%s'", optarg);
      break;
    case OPT_REFIT:
      a->refit_kind = true;
      break;
    case OPT_DEPTH:
      if (siox_cli_parse_long(optarg, 1, 1000, &a->depth) != 0)
        return siox_cli_usage(self, "--depth needs a number from 1 to 1000, not '%s'", optarg);
      break;
    default:
      if ((rc = siox_cli_common_opt(cli, self, c, argv)) >= 0) return rc;
    }
  }
  if (a->job && optind < argc) return siox_cli_usage(self, "give an AID or --job J, not both");
  if (a->job && a->dot) return siox_cli_usage(self, "--dot draws one call; not with --job");
  if (a->job) return -1;
  if (optind >= argc) return siox_cli_usage(self, "which activity? give its AID (or --job J)");
  if (optind + 1 < argc) return siox_cli_usage(self, "one AID only, got '%s' too", argv[optind + 1]);
  if (siox_cli_parse_aid(argv[optind], &a->aid) != 0)
    return siox_cli_usage(self, "'%s' is not an activity id (a decimal number > 0)", argv[optind]);
  return -1;
}

/* ---- one call ----------------------------------------------------------- */

static struct siox_blame_opts opts_of(const struct blame_args *a) {
  struct siox_blame_opts o = SIOX_BLAME_OPTS_DEFAULT;
  o.margin_s = a->margin_s;
  o.depth = a->depth;
  o.ratio = a->ratio;
  o.refit_kind = a->refit_kind;
  o.score = siox_kb_baseline_score;
  return o;
}

/* The waiting rank's call, before the sibling's blame (text). */
static void print_via(const struct siox_blame_via *x) {
  char d[32];
  if (!x->used) return;
  printf("Activity %" PRId64 " (%s) took %s and reached no I/O of its own: its collective %s (%" PRId64
         ") waited for the same collective of pid %d, which made the I/O. Blaming that call, %" PRId64 ".\n\n",
         x->root_aid, x->root_name, siox_fmt_duration(x->root_ns, d, sizeof(d)), x->coll_name, x->coll_aid,
         (int)x->sibling_pid, x->sibling_aid);
}

static void print_text(const struct siox_blame *b, const char *prose) {
  char node[512], incl[32], excl[32], med[64];
  const struct siox_act *r = b->path[0];
  printf("Activity %" PRId64 " (%s on %s %s%s%s) took %s.\n\nCritical path:\n", r->aid, r->name, r->hwid, r->swid,
         r->job[0] ? ", job " : "", r->job, siox_fmt_duration(r->inclusive_ns, incl, sizeof(incl)));
  for (size_t i = 0; i < b->npath; i++) {
    const struct siox_act *a = b->path[i];
    snprintf(node, sizeof(node), "%s %s %s", a->hwid, a->swid, a->name);
    printf("%s %-20" PRId64 " %-40s incl %12s  excl %12s  %5.1f%%\n", i == b->suspect_idx ? ">" : " ", a->aid, node,
           siox_fmt_duration(a->inclusive_ns, incl, sizeof(incl)), siox_fmt_duration(a->exclusive_ns, excl, sizeof(excl)),
           siox_blame_share(b, a));
  }
  printf("\n%s", prose);
  if (b->npeers) printf("\nPeers (median per node, slowest first):\n");
  for (size_t i = 0; i < b->npeers; i++)
    printf("  %-24s %-8s %6zu samples  median %s\n", b->peers[i].hwid, b->peers[i].iid, b->peers[i].n,
           siox_blame_value_str(b, b->peers[i].median, med, sizeof(med)));
}

/* The causal tree in DOT with blame's path in red and the component it
 * names (the culprit, else the resource with its class) filled. */
static void picture(struct siox_tree *t, const struct siox_blame *b, const struct siox_blame_wait *w) {
  const struct siox_act *c = siox_blame_culprit(b, w), *m = c ? c : w->resource;
  char label[128];
  snprintf(label, sizeof(label), "%s: %s (by %s)", c ? "CULPRIT" : "blame", siox_class_name(w->v.cls),
           siox_evidence_name(w->v.by));
  siox_tree_mark(t, b->path, b->npath, m);
  siox_view_dot(stdout, t, m ? m->aid : 0, label);
}

/* Blames aid into k (the library's steps), saying on stderr why not. */
static int blame_call(PGconn *c, const struct blame_args *a, int64_t aid, struct siox_blame_call *k) {
  struct siox_blame_opts o = opts_of(a);
  char err[2048];
  if (siox_blame_call_run(c, &o, aid, k, err, sizeof(err)) == 0) return SIOX_EXIT_OK;
  fprintf(stderr, "siox: %s\n", err);
  return SIOX_EXIT_FAIL;
}

/* The document (the library's, as `siox web` serves it) or the text. */
static int blame_print(const struct siox_cli *cli, PGconn *c, const struct blame_args *a) {
  struct siox_blame_opts o = opts_of(a);
  struct siox_blame_call k;
  char err[2048];
  json_object *doc;
  if (cli->json && siox_blame_document(c, a->aid, &o, &doc, err, sizeof(err)) == 0)
    return siox_json_print(doc) == 0 ? SIOX_EXIT_OK : SIOX_EXIT_FAIL;
  if (cli->json) return fprintf(stderr, "siox: %s\n", err), SIOX_EXIT_FAIL;
  int rc = blame_call(c, a, a->aid, &k);
  char *prose = rc == SIOX_EXIT_OK && !a->dot ? siox_blame_explain(&k, a->margin_s) : NULL;
  if (rc == SIOX_EXIT_OK && a->dot) {
    picture(k.t, &k.b, &k.w);
  } else if (rc == SIOX_EXIT_OK && prose) {
    print_via(&k.via);
    print_text(&k.b, prose);
  } else if (rc == SIOX_EXIT_OK) {
    fprintf(stderr, "siox: out of memory\n");
    rc = SIOX_EXIT_FAIL;
  }
  free(prose);
  siox_blame_call_release(&k);
  return rc;
}

/* ---- job-level blame ---------------------------------------------------- */

static void print_job(const struct blame_args *a, const struct siox_job_blame *j) {
  char d[32], u[32];
  printf("Job %s: its %zu slowest call%s took %s in all.\n\n", a->job, j->calls, j->calls == 1 ? "" : "s",
         siox_fmt_duration(j->total_ns, d, sizeof(d)));
  printf("%-14s %6s  %-15s %s\n", "TIME", "CALLS", "CLASS", "COMPONENT OR JOB (example AIDs)");
  for (size_t i = 0; i < j->n; i++) {
    const struct siox_job_entry *e = &j->e[i];
    printf("%-14s %6zu  %-15s %s%s (", siox_fmt_duration(e->ns, d, sizeof(d)), e->calls,
           siox_class_name(siox_job_entry_class(e)), e->is_job ? "job " : "", e->key);
    for (size_t k = 0; k < e->nexamples; k++) printf("%s%" PRId64, k ? " " : "", e->examples[k]);
    printf(")\n");
  }
  printf("\nUnexplained (not at a shared resource SIOX sees, or it was idle): %s.\n",
         siox_fmt_duration(j->unexplained_ns, u, sizeof(u)));
}

static int run_job(const struct siox_cli *cli, PGconn *c, const struct blame_args *a) {
  struct siox_blame_opts o = opts_of(a);
  struct siox_job_blame j;
  char err[2048];
  int rc = siox_blame_job_run(c, a->job, a->calls, &o, &j, err, sizeof(err)) == 0 ? SIOX_EXIT_OK : SIOX_EXIT_FAIL;
  if (rc != SIOX_EXIT_OK)
    fprintf(stderr, "siox: %s\n", err);
  else if (cli->json)
    rc = siox_json_print(siox_blame_job_json(a->job, &j)) == 0 ? SIOX_EXIT_OK : SIOX_EXIT_FAIL;
  else
    print_job(a, &j);
  siox_job_release(&j);
  return rc;
}

static int run(struct siox_cli *cli, const struct siox_cmd *self, int argc, char **argv) {
  struct blame_args a;
  int rc = parse(cli, self, argc, argv, &a);
  if (rc >= 0) return rc;
  struct siox_wh *wh;
  if ((rc = siox_cli_open(cli, &wh)) != SIOX_EXIT_OK) return rc;
  PGconn *c = siox_wh_pg(wh);
  rc = a.job ? run_job(cli, c, &a) : blame_print(cli, c, &a);
  siox_wh_close(wh);
  return rc;
}

const struct siox_cmd siox_cmd_blame = {"blame", "say which component made one call slow, with evidence", help, run};
