/*
 * `siox blame AID`: why was this call slow? Loads the call's causal tree,
 * lets the warehouse library pick the suspect on the critical path
 * (blame.c), judge it against its peers (blame_peers.c: same layer and
 * operation, other nodes, same job and time window), find what it waited
 * for (blame_wait.c, blame_sibling.c) and sum a job (blame_job.c); this
 * file runs those steps in order and presents what they computed.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <siox/siox_kb_baselines.h>
#include <siox/siox_wh.h>

#include "blame.h"
#include "blame_job.h"
#include "blame_peers.h"
#include "blame_sibling.h"
#include "blame_unlinked.h"
#include "blame_wait.h"
#include "blame_wait_report.h"
#include "format.h"
#include "graph_view.h"
#include "json_out.h"
#include "session.h"
#include "warehouse.h"

#define DEFAULT_MARGIN_S 10
#define PEER_LIMIT 20000

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

/* A call that reached no shared resource itself and was blamed through
 * the sibling its collective waited for (blame_collective.h). */
struct via {
  bool used;
  int64_t root_aid, root_ns, coll_aid, sibling_aid;
  int32_t sibling_pid;
  char root_name[64], coll_name[64];
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
  *a = (struct blame_args){.margin_s = DEFAULT_MARGIN_S, .depth = 32, .ratio = 3.0, .calls = 20};
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

/* ---- baseline --------------------------------------------------------- */

#define BASELINE_ABNORMAL_PCT 95.0

/* The culprit's (else the suspect's) rank in its component's own baseline. */
struct baseline_verdict {
  int have;       /* 1: scored (the knowledge base answered) */
  int64_t aid;
  int64_t from_ns, to_ns; /* left out of the baseline: the call's run */
  struct siox_kb_score s;
};

static const char *baseline_judgement(const struct baseline_verdict *v) {
  if (!v->have || !v->s.found) return "unknown";
  return v->s.percentile >= BASELINE_ABNORMAL_PCT ? "abnormal" : "normal";
}

/* The call's run (its job's span and the peer window q) is left out of the
 * baseline: the episode being judged must not count as the component's
 * normal. */
static void baseline_score(PGconn *c, const struct siox_blame *b, const struct siox_act *x,
                           const struct siox_peer_query *q, struct baseline_verdict *v) {
  char err[512];
  memset(v, 0, sizeof *v);
  v->aid = x->aid;
  v->from_ns = q->from_ns;
  v->to_ns = q->to_ns;
  siox_wh_job_span(c, b->path[0]->aid, q->job, &v->from_ns, &v->to_ns, err, sizeof err); /* keeps the window on error */
  /* A warehouse without the knowledge base (or an error) leaves the
   * judgement unknown; the peer comparison still stands. */
  v->have = siox_kb_baseline_score(c, v->aid, v->from_ns, v->to_ns + 1, &v->s, err, sizeof err) == 1;
}

/* -1 unknown, 0 normal, 1 abnormal: the baseline's vote in the class. */
static int baseline_vote(const struct baseline_verdict *v) {
  if (!v->have || !v->s.found) return -1;
  return v->s.percentile >= BASELINE_ABNORMAL_PCT;
}

static void explain_baseline(FILE *f, const struct siox_act *x, const struct baseline_verdict *v) {
  char p50[32], p99[32];
  if (!v->have || !v->s.found) {
    fprintf(f, "Baseline: %s %s on %s has no baseline yet (%" PRId64 " sample%s, need %d).\n", x->swid, x->name,
            x->hwid, v->have ? v->s.base_n : 0, v->have && v->s.base_n == 1 ? "" : "s", SIOX_KB_MIN_BASELINE);
    return;
  }
  fprintf(f, "Baseline: at p%.1f of its own component's %" PRId64 " %s outside this run (median %s, p99 %s): %s.\n",
          v->s.percentile, v->s.base_n, x->name, siox_fmt_duration((int64_t)v->s.p50_ns, p50, sizeof p50),
          siox_fmt_duration((int64_t)v->s.p99_ns, p99, sizeof p99),
          v->s.percentile >= BASELINE_ABNORMAL_PCT ? "ABNORMAL for this component (something changed)"
                                                   : "NORMALLY this slow (the component is slow, not faulty)");
}

static json_object *baseline_json(const struct baseline_verdict *v) {
  json_object *o = json_object_new_object();
  siox_json_int(o, "aid", v->aid);
  siox_json_str(o, "judgement", baseline_judgement(v));
  siox_json_dbl(o, "abnormal_at_percentile", BASELINE_ABNORMAL_PCT);
  json_object_object_add(o, "percentile", v->have && v->s.found ? json_object_new_double(v->s.percentile) : NULL);
  siox_json_int(o, "samples", v->have ? v->s.base_n : 0);
  siox_json_int(o, "size_class", v->have ? v->s.size_class : -1);
  siox_json_dbl(o, "p50_s", v->s.p50_ns / 1e9);
  siox_json_dbl(o, "p90_s", v->s.p90_ns / 1e9);
  siox_json_dbl(o, "p99_s", v->s.p99_ns / 1e9);
  siox_json_dbl(o, "latency_s", (double)v->s.latency_ns / 1e9);
  siox_json_int(o, "excluded_from_ns", v->from_ns);
  siox_json_int(o, "excluded_to_ns", v->to_ns);
  return o;
}

/* ---- the prose -------------------------------------------------------- */

static const char *value_str(const struct siox_blame *b, double v, char *buf, size_t len) {
  if (b->line) {
    snprintf(buf, len, "%.2fx the line", v);
    return buf;
  }
  return b->per_byte ? siox_fmt_per_byte(v, buf, len) : siox_fmt_duration((int64_t)(v * 1e9), buf, len);
}

/* The peers' latency line, as "150.000 us + 9.500 ms/MiB". */
static const char *line_str(const struct siox_blame *b, char *buf, size_t len) {
  char a[32], per[64];
  snprintf(buf, len, "%s + %s", siox_fmt_duration((int64_t)(b->line_a_s * 1e9), a, sizeof(a)),
           siox_fmt_per_byte(b->line_b_s, per, sizeof(per)));
  return buf;
}

static const char *measure_str(const struct siox_blame *b) {
  return b->line ? "Against its peers' latency line for its size" : b->per_byte ? "Per byte" : "In all";
}

static double share_of(const struct siox_blame *b, const struct siox_act *a) {
  int64_t total = b->path[0]->inclusive_ns;
  return total > 0 ? 100.0 * (double)a->inclusive_ns / (double)total : 100.0;
}

static void explain_where(FILE *f, const struct siox_blame *b) {
  const struct siox_act *x = b->suspect, *r = b->path[0];
  char node[256], who[512], incl[32], excl[32], total[32];
  /* Just named in the line above: "It" reads better than the name again. */
  if (b->verdict == SIOX_VERDICT_CULPRIT)
    snprintf(who, sizeof(who), "It");
  else
    snprintf(who, sizeof(who), "%s (%s)", siox_fmt_node(x, node, sizeof(node)), x->name);
  fprintf(f, "%s held %s of the call's %s (%.0f%%), %s of it in itself (exclusive).\n", who,
          siox_fmt_duration(x->inclusive_ns, incl, sizeof(incl)), siox_fmt_duration(r->inclusive_ns, total, sizeof(total)),
          share_of(b, x), siox_fmt_duration(x->exclusive_ns, excl, sizeof(excl)));
}

static void explain_evidence(FILE *f, const struct siox_blame *b, long margin_s) {
  const struct siox_act *x = b->suspect;
  char v[64], med[64], p90[64], own[64], line[128], took[32], want[32];
  if (b->line)
    fprintf(f, "Its peers' latency line (fitted to their sizes and times) is %s: for its %" PRId64
               " B it took %s where the line gives %s.\n",
            line_str(b, line, sizeof(line)), x->bytes, siox_fmt_duration(x->inclusive_ns, took, sizeof(took)),
            siox_fmt_duration((int64_t)(siox_blame_line_s(b, x->bytes) * 1e9), want, sizeof(want)));
  fprintf(f, "%s it took %s; its peers (%s %s on %zu other node%s, %zu sample%s in the job's window +/- %ld s) took "
             "a median of %s, p%.0f %s: %.1fx the median.\n",
          measure_str(b), value_str(b, b->value, v, sizeof(v)), x->swid, x->name, b->npeers,
          b->npeers == 1 ? "" : "s", b->peer_samples, b->peer_samples == 1 ? "" : "s", margin_s,
          value_str(b, b->peer_median, med, sizeof(med)), b->rule.pct * 100, value_str(b, b->peer_p90, p90, sizeof(p90)),
          b->ratio);
  if (b->own_samples)
    fprintf(f, "Its node's %zu other sample%s in the window: median %s.\n", b->own_samples,
            b->own_samples == 1 ? "" : "s", value_str(b, b->own_median, own, sizeof(own)));
  if (b->peer_skipped)
    fprintf(f, "(%zu peer sample%s without a byte count were left out.)\n", b->peer_skipped,
            b->peer_skipped == 1 ? "" : "s");
}

/* The component blame names: the resource (else the suspect) when the
 * class is fault; nobody otherwise. */
static const struct siox_act *culprit_of(const struct siox_blame *b, const struct siox_blame_wait *o) {
  if (o->v.cls != SIOX_CLASS_FAULT) return NULL;
  return o->resource ? o->resource : b->suspect;
}

/* "job B (62%), job C (20%)": the other jobs the call waited behind. */
static void other_jobs(FILE *f, const struct siox_wait *w) {
  const char *sep = "";
  for (size_t i = 0; i < w->nby; i++) {
    if (w->by[i].same_job) continue;
    bool seen = false;
    for (size_t k = 0; k < i && !seen; k++) seen = !w->by[k].same_job && strcmp(w->by[k].job, w->by[i].job) == 0;
    if (seen) continue;
    double share = 0;
    for (size_t k = i; k < w->nby; k++)
      if (strcmp(w->by[k].job, w->by[i].job) == 0) share += w->by[k].share;
    fprintf(f, "%sjob %s (%.0f%% of the wait)", sep, w->by[i].job[0] ? w->by[i].job : "(none)", 100 * share);
    sep = ", ";
  }
}

/* What the verdict lacked, for "No verdict". */
static void missing(FILE *f, const struct siox_blame *b, const struct siox_blame_wait *o,
                    const struct siox_unlinked *u) {
  char d[32];
  if (o->outweighed) {
    char node[512], t[32], c[32];
    fprintf(f, "No verdict: %s of the call's %s is covered by no linked component, more than twice the %s that "
               "%s (%s), the component it reached, accounts for (its service of the call and the time the call "
               "queued there), although its request was slow (%s, by %s). Naming it would blame it for time it "
               "did not take: the call's time is unexplained.\n",
            siox_fmt_duration(u->unlinked_ns, d, sizeof(d)), siox_fmt_duration(u->total_ns, t, sizeof(t)),
            siox_fmt_duration(o->w.own_ns + o->queue->queued_ns, c, sizeof(c)),
            siox_fmt_node(o->resource, node, sizeof(node)), o->resource->name, siox_class_name(o->named.cls),
            siox_evidence_name(o->named.by));
    return;
  }
  if (!o->resource) {
    fprintf(f, "No verdict: the call reached no shared resource SIOX records (no brick, device or server below "
               "it), so its %s are unexplained.\n",
            siox_fmt_duration(b->path[0]->inclusive_ns, d, sizeof(d)));
    return;
  }
  fprintf(f, "No verdict: no peers in the window (%zu comparable samples on other nodes, need %zu), ",
          o->peer_judged ? o->peer.peer_samples : b->peer_samples, b->rule.min_peers);
  if (o->resource)
    fprintf(f, "no latency model of its kind (history on %zu component%s, need %d)", o->kind.nodes,
            o->kind.nodes == 1 ? "" : "s", SIOX_KIND_MIN_NODES);
  else
    fprintf(f, "no shared resource reached to model");
  fprintf(f, " and no baseline of the component (need %d samples).\n", SIOX_KB_MIN_BASELINE);
}

static void headline(FILE *f, const struct siox_blame *b, const struct siox_blame_wait *o,
                     const struct siox_unlinked *u) {
  const struct siox_act *x = o->resource ? o->resource : b->suspect, *c = culprit_of(b, o);
  char node[512], d[32];
  siox_fmt_node(x, node, sizeof(node));
  switch (o->v.cls) {
  case SIOX_CLASS_FAULT:
    fprintf(f, "Culprit: %s (%s), activity %" PRId64 ": fault (its service time is abnormal; decided by %s).\n",
            siox_fmt_node(c, node, sizeof(node)), c->name, c->aid, siox_evidence_name(o->v.by));
    break;
  case SIOX_CLASS_TRANSIENT:
    fprintf(f, "Transient: %s (%s), activity %" PRId64 ", was slow (decided by %s), but the component's %zu other "
               "operations around the call took a median of %.1fx its kind's model: a lone outlier, not a fault.\n",
            node, x->name, x->aid, siox_evidence_name(o->v.by), o->ops, o->ops_ratio);
    break;
  case SIOX_CLASS_INTERFERENCE:
    fprintf(f, "Interference at %s: it served normally (decided by %s), but the call queued %s behind other jobs' "
               "requests: ",
            node, siox_evidence_name(o->v.by), siox_fmt_duration(o->queue->queued_ns, d, sizeof(d)));
    other_jobs(f, o->queue);
    fprintf(f, ". No component is faulty.\n");
    break;
  case SIOX_CLASS_SELF:
    fprintf(f, "Self-inflicted: the call queued %s at %s behind its own job's requests while it served normally "
               "(decided by %s). Spread the job's files over more servers or make fewer, larger requests; see "
               "`siox hints` and `siox anomalies` for the knowledge base's findings.\n",
            siox_fmt_duration(o->queue->queued_same_job_ns, d, sizeof(d)), node, siox_evidence_name(o->v.by));
    break;
  case SIOX_CLASS_NORMAL:
    if (o->outweighed) {
      char t[32];
      fprintf(f, "Nothing stands out in the components it reached: %s (%s), activity %" PRId64 ", was slow (decided "
                 "by %s), but its %zu other operations around the call took a median of %.1fx its kind's model, "
                 "and %s of the call's %s is covered by no linked component (below): a lone outlier under time "
                 "SIOX does not trace, not a fault.\n",
              node, x->name, x->aid, siox_evidence_name(o->v.by), o->ops, o->ops_ratio,
              siox_fmt_duration(u->unlinked_ns, d, sizeof(d)), siox_fmt_duration(u->total_ns, t, sizeof(t)));
      break;
    }
    fprintf(f, "Nothing stands out: the time went where it usually goes (decided by %s).\n",
            siox_evidence_name(o->v.by));
    break;
  case SIOX_CLASS_NONE:
    missing(f, b, o, u);
    break;
  }
}

/* The verdict in sentences; the caller frees the string. */
/* The time no linked component covers (blame_unlinked.h), when it is a
 * tenth of the call or more, or the call reached no component at all. */
static void explain_unlinked(FILE *f, const struct siox_unlinked *u, const struct siox_blame_wait *o) {
  if (u->unlinked_ns <= 0 || (o->resource && 10 * u->unlinked_ns < u->total_ns)) return;
  char d[32], t[32], a[32], z[32];
  const struct siox_interval *l = siox_unlinked_longest(u);
  fprintf(f, "Unlinked: %s of the call's %s (%.0f%%) covered by no activity of a component linked to it, in %zu "
             "stretch%s, the longest from +%s to +%s after the call started. Links cannot say where that time went: "
             "the call's own layers, the kernel, or requests no component linked to it (a lookup of a name that "
             "does not exist yet carries no file id; such requests show above as served for processes without a "
             "job). What the waiting analysis above does not account for is unexplained.\n",
          siox_fmt_duration(u->unlinked_ns, d, sizeof(d)), siox_fmt_duration(u->total_ns, t, sizeof(t)),
          100.0 * (double)u->unlinked_ns / (double)u->total_ns, u->ngaps, u->ngaps == 1 ? "" : "es",
          siox_fmt_duration(l->start - u->start_ns, a, sizeof(a)), siox_fmt_duration(l->end - u->start_ns, z, sizeof(z)));
}

static char *explain(const struct siox_blame *b, const struct siox_blame_wait *o, long margin_s,
                     const struct baseline_verdict *v, const struct siox_unlinked *u) {
  char *s = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&s, &len);
  if (!f) return NULL;
  const struct siox_act *x = b->suspect;
  headline(f, b, o, u);
  siox_blame_wait_text(f, o, b->path[0]);
  explain_unlinked(f, u, o);
  explain_where(f, b);
  if (b->verdict != SIOX_VERDICT_NO_PEERS) explain_evidence(f, b, margin_s);
  if (b->verdict == SIOX_VERDICT_NORMAL)
    fprintf(f, "Against its peers that is below the rule's %.1fx (or within the peers' p%.0f).\n", b->rule.ratio,
            b->rule.pct * 100);
  if (b->verdict == SIOX_VERDICT_NO_PEERS)
    fprintf(f, "Peers: only %zu comparable sample%s of %s %s on other nodes in the window +/- %ld s (need %zu).\n",
            b->peer_samples, b->peer_samples == 1 ? "" : "s", x->swid, x->name, margin_s, b->rule.min_peers);
  explain_baseline(f, o->resource ? o->resource : x, v);
  fprintf(f, "Rule: named when its time%s is >= %.1fx the peers' median and above their p%.0f, with >= %zu peer "
             "samples; without peers, >= %.1fx its kind's latency model, else at or above p%.0f of its own baseline; "
             "a fault only when the component's other operations around the call are slow too.\n",
          b->line ? " over the peers' latency line for its size" : b->per_byte ? " per byte" : "", b->rule.ratio,
          b->rule.pct * 100, b->rule.min_peers, b->rule.ratio, BASELINE_ABNORMAL_PCT);
  fclose(f);
  return s;
}

/* ---- output ----------------------------------------------------------- */

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
           share_of(b, a));
  }
  printf("\n%s", prose);
  if (b->npeers) printf("\nPeers (median per node, slowest first):\n");
  for (size_t i = 0; i < b->npeers; i++)
    printf("  %-24s %-8s %6zu samples  median %s\n", b->peers[i].hwid, b->peers[i].iid, b->peers[i].n,
           value_str(b, b->peers[i].median, med, sizeof(med)));
}

static json_object *culprit_json(const struct siox_blame *b, const struct siox_act *x) {
  json_object *o = json_object_new_object();
  siox_json_int(o, "aid", x->aid);
  siox_json_str(o, "hwid", x->hwid);
  siox_json_str(o, "swid", x->swid);
  siox_json_str(o, "iid", x->iid);
  siox_json_str(o, "name", x->name);
  siox_json_str(o, "host", x->host);
  siox_json_dbl(o, "inclusive_s", (double)x->inclusive_ns / 1e9);
  siox_json_dbl(o, "exclusive_s", (double)x->exclusive_ns / 1e9);
  siox_json_dbl(o, "share", share_of(b, x) / 100);
  json_object_object_add(o, "bytes", x->bytes >= 0 ? json_object_new_int64(x->bytes) : NULL);
  return o;
}

static json_object *evidence_json(const struct siox_blame *b, const struct siox_peer_query *q, long margin_s) {
  json_object *o = json_object_new_object();
  siox_json_str(o, "metric", b->line       ? "inclusive seconds over the peers' latency line for the size"
                             : b->per_byte ? "inclusive seconds per byte"
                                           : "inclusive seconds");
  siox_json_str(o, "unit", b->line ? "x" : b->per_byte ? "s/B" : "s");
  if (b->line) {
    json_object *l = json_object_new_object();
    siox_json_dbl(l, "a_s", b->line_a_s);
    siox_json_dbl(l, "b_s_per_byte", b->line_b_s);
    json_object_object_add(o, "line", l);
  }
  siox_json_dbl(o, "value", b->value);
  siox_json_dbl(o, "peer_median", b->peer_median);
  siox_json_dbl(o, "peer_p90", b->peer_p90);
  siox_json_dbl(o, "ratio", b->ratio);
  siox_json_int(o, "peer_samples", (int64_t)b->peer_samples);
  siox_json_int(o, "peer_nodes", (int64_t)b->npeers);
  siox_json_int(o, "peer_skipped", (int64_t)b->peer_skipped);
  siox_json_int(o, "own_samples", (int64_t)b->own_samples);
  siox_json_dbl(o, "own_median", b->own_median);
  siox_json_str(o, "job", q->job);
  siox_json_int(o, "window_from_ns", q->from_ns);
  siox_json_int(o, "window_to_ns", q->to_ns);
  siox_json_int(o, "margin_s", margin_s);
  return o;
}

static json_object *rule_json(const struct siox_blame *b) {
  json_object *o = json_object_new_object();
  siox_json_dbl(o, "ratio", b->rule.ratio);
  siox_json_dbl(o, "percentile", b->rule.pct);
  siox_json_int(o, "min_peers", (int64_t)b->rule.min_peers);
  siox_json_dbl(o, "path_share", b->rule.share);
  return o;
}

/* "unlinked": the time no linked component covers, with its stretches
 * (seconds after the call's start, and absolute ns). */
static json_object *unlinked_json(const struct siox_unlinked *u) {
  json_object *j = json_object_new_object(), *arr = json_object_new_array();
  siox_json_dbl(j, "unlinked_s", (double)u->unlinked_ns / 1e9);
  siox_json_dbl(j, "share", u->total_ns > 0 ? (double)u->unlinked_ns / (double)u->total_ns : 0);
  siox_json_int(j, "linked_activities", (int64_t)u->linked);
  for (size_t i = 0; i < u->ngaps; i++) {
    json_object *g = json_object_new_object();
    siox_json_dbl(g, "from_s", (double)(u->gaps[i].start - u->start_ns) / 1e9);
    siox_json_dbl(g, "to_s", (double)(u->gaps[i].end - u->start_ns) / 1e9);
    siox_json_int(g, "start_ns", u->gaps[i].start);
    siox_json_int(g, "end_ns", u->gaps[i].end);
    json_object_array_add(arr, g);
  }
  json_object_object_add(j, "stretches", arr);
  return j;
}

static json_object *blame_json(const struct siox_blame *b, const struct siox_blame_wait *w,
                               const struct siox_peer_query *q, long margin_s, const struct baseline_verdict *v,
                               const struct siox_unlinked *u, const char *prose) {
  static const char *const verdicts[] = {"culprit", "normal", "no-peers"};
  json_object *o = json_object_new_object(), *path = json_object_new_array(), *peers = json_object_new_array();
  siox_json_int(o, "aid", b->path[0]->aid);
  siox_json_str(o, "verdict", verdicts[b->verdict]);
  const struct siox_act *c = culprit_of(b, w);
  json_object_object_add(o, "culprit", c ? culprit_json(b, c) : NULL);
  json_object_object_add(o, "suspect", culprit_json(b, b->suspect));
  siox_blame_wait_json(o, w);
  json_object_object_add(o, "unlinked", unlinked_json(u));
  for (size_t i = 0; i < b->npath; i++) {
    json_object *a = siox_json_act(b->path[i], b->path[0], false);
    siox_json_dbl(a, "share", share_of(b, b->path[i]) / 100);
    json_object_array_add(path, a);
  }
  json_object_object_add(o, "path", path);
  siox_json_int(o, "suspect_index", (int64_t)b->suspect_idx);
  for (size_t i = 0; i < b->npeers; i++) {
    json_object *p = json_object_new_object();
    siox_json_str(p, "hwid", b->peers[i].hwid);
    siox_json_str(p, "iid", b->peers[i].iid);
    siox_json_int(p, "samples", (int64_t)b->peers[i].n);
    siox_json_dbl(p, "median", b->peers[i].median);
    json_object_array_add(peers, p);
  }
  json_object_object_add(o, "peers", peers);
  json_object_object_add(o, "evidence", evidence_json(b, q, margin_s));
  json_object_object_add(o, "rule", rule_json(b));
  json_object_object_add(o, "baseline", baseline_json(v));
  siox_json_str(o, "explanation", prose);
  return o;
}

/* ---- run -------------------------------------------------------------- */

/* The library's peer fetch, saying why a query failed (blame_peers.h). */
static int fetch(void *ctx, const struct siox_act *x, const struct siox_blame_sample **s, size_t *n) {
  struct siox_blame_peers *p = ctx;
  int rc = siox_blame_peers_fetch(p, x, s, n);
  if (rc != 0 && p->err[0]) fprintf(stderr, "siox: %s\n", p->err);
  return rc;
}

static int judge(PGconn *c, const struct blame_args *a, struct siox_blame *b, struct siox_blame_peers *f) {
  siox_blame_peers_init(f, c, b->path[0], (int64_t)a->margin_s * 1000000000, PEER_LIMIT);
  int rc = siox_blame_find(b, fetch, f);
  if (rc == -ENOMEM) fprintf(stderr, "siox: out of memory\n");
  return rc == 0 ? SIOX_EXIT_OK : SIOX_EXIT_FAIL;
}

/* The waiting rank's call, before the sibling's blame (text). */
static void print_via(const struct via *x) {
  char d[32];
  if (!x->used) return;
  printf("Activity %" PRId64 " (%s) took %s and reached no I/O of its own: its collective %s (%" PRId64
         ") waited for the same collective of pid %d, which made the I/O. Blaming that call, %" PRId64 ".\n\n",
         x->root_aid, x->root_name, siox_fmt_duration(x->root_ns, d, sizeof(d)), x->coll_name, x->coll_aid,
         (int)x->sibling_pid, x->sibling_aid);
}

static json_object *via_json(const struct via *x) {
  if (!x->used) return NULL;
  json_object *o = json_object_new_object();
  siox_json_int(o, "aid", x->root_aid);
  siox_json_str(o, "name", x->root_name);
  siox_json_dbl(o, "inclusive_s", (double)x->root_ns / 1e9);
  siox_json_int(o, "collective_aid", x->coll_aid);
  siox_json_str(o, "collective_name", x->coll_name);
  siox_json_int(o, "sibling_aid", x->sibling_aid);
  siox_json_int(o, "sibling_pid", x->sibling_pid);
  siox_json_str(o, "rule", "the call's collective reached no shared resource; followed the sibling call of the same "
                           "job overlapping it longest that made I/O itself");
  return o;
}

static int report(const struct siox_cli *cli, const struct blame_args *a, const struct siox_blame *b,
                  const struct siox_blame_wait *w, const struct siox_peer_query *q, const struct baseline_verdict *v,
                  const struct siox_unlinked *u, const struct via *x) {
  char *prose = explain(b, w, a->margin_s, v, u);
  if (!prose) return SIOX_EXIT_FAIL;
  int rc = SIOX_EXIT_OK;
  if (cli->json) {
    json_object *o = blame_json(b, w, q, a->margin_s, v, u, prose);
    /* "waited_in_collective": the call asked about, when blame followed a
     * sibling (null otherwise); everything else describes the sibling. */
    json_object_object_add(o, "waited_in_collective", via_json(x));
    rc = siox_json_print(o) == 0 ? SIOX_EXIT_OK : SIOX_EXIT_FAIL;
  } else {
    print_via(x);
    print_text(b, prose);
  }
  free(prose);
  return rc;
}

/* The causal tree in DOT with blame's path in red and the component it
 * names (the culprit, else the resource with its class) filled. */
static void picture(struct siox_tree *t, const struct siox_blame *b, const struct siox_blame_wait *w) {
  const struct siox_act *c = culprit_of(b, w), *m = c ? c : w->resource;
  char label[128];
  snprintf(label, sizeof(label), "%s: %s (by %s)", c ? "CULPRIT" : "blame", siox_class_name(w->v.cls),
           siox_evidence_name(w->v.by));
  siox_tree_mark(t, b->path, b->npath, m);
  siox_view_dot(stdout, t, m ? m->aid : 0, label);
}

/* The waiting step, the baseline of the resource (else the suspect), the class. */
static int charge(PGconn *c, struct siox_blame *b, struct siox_blame_peers *f, struct siox_blame_wait *w,
                  struct baseline_verdict *v) {
  char err[2048];
  int rc = siox_blame_wait_run(c, b, fetch, f, w, err, sizeof(err));
  if (rc != 0) {
    fprintf(stderr, "siox: %s\n", err);
    return SIOX_EXIT_FAIL;
  }
  baseline_score(c, b, w->resource ? w->resource : b->suspect, &f->q, v);
  siox_blame_wait_classify(w, baseline_vote(v));
  return SIOX_EXIT_OK;
}

/* Everything blame found about one call, alive until released. */
struct call {
  struct siox_tree *t;
  struct siox_blame b;
  struct siox_blame_wait w;
  struct siox_blame_peers f;
  struct baseline_verdict v;
  struct via via;
  struct siox_unlinked u; /* the call's time no linked component covers */
};

/* The call's unlinked time, and whether it withdraws the verdict
 * (blame_sibling.h: the waits in collectives charged to the resource). */
static int unlinked(PGconn *c, struct call *k) {
  char err[2048];
  if (siox_blame_unlinked_run(c, &k->b, &k->w, &k->u, err, sizeof(err)) == 0) return SIOX_EXIT_OK;
  fprintf(stderr, "siox: %s\n", err);
  return SIOX_EXIT_FAIL;
}

static int blame_one(PGconn *c, const struct blame_args *a, int64_t aid, struct call *k) {
  struct siox_blame_rule rule = SIOX_BLAME_RULE_DEFAULT;
  rule.ratio = a->ratio;
  rule.refit_kind = a->refit_kind;
  memset(k, 0, sizeof(*k));
  int rc = siox_cli_load(c, aid, (int)a->depth, &k->t);
  if (rc == SIOX_EXIT_OK) rc = siox_blame_walk(k->t, &rule, &k->b) == 0 ? SIOX_EXIT_OK : SIOX_EXIT_FAIL;
  if (rc == SIOX_EXIT_OK) rc = judge(c, a, &k->b, &k->f);
  if (rc == SIOX_EXIT_OK) rc = charge(c, &k->b, &k->f, &k->w, &k->v);
  if (rc == SIOX_EXIT_OK) rc = unlinked(c, k);
  return rc;
}

static void call_release(struct call *k) {
  siox_unlinked_release(&k->u);
  siox_blame_wait_release(&k->w);
  siox_blame_release(&k->b);
  siox_blame_peers_release(&k->f);
  siox_tree_destroy(k->t);
}

/* Blames aid; when its collective call waited for another rank's I/O that
 * no link ties to it, blames that rank's call instead and says so. */
static int blame_call(PGconn *c, const struct blame_args *a, int64_t aid, struct call *k) {
  struct siox_blame_sibling sib;
  struct via via = {.used = true};
  char err[2048];
  int rc = blame_one(c, a, aid, k);
  if (rc == SIOX_EXIT_OK && siox_blame_sibling_find(c, &k->b, &k->w, &sib, err, sizeof(err)) != 0) {
    fprintf(stderr, "siox: %s\n", err);
    rc = SIOX_EXIT_FAIL;
  }
  if (rc != SIOX_EXIT_OK || sib.aid == 0) return rc;
  via.sibling_aid = sib.aid;
  via.sibling_pid = sib.pid;
  via.root_aid = k->b.path[0]->aid;
  via.root_ns = k->b.path[0]->inclusive_ns;
  via.coll_aid = sib.coll->aid;
  snprintf(via.root_name, sizeof(via.root_name), "%s", k->b.path[0]->name);
  snprintf(via.coll_name, sizeof(via.coll_name), "%s", sib.coll->name);
  call_release(k);
  rc = blame_one(c, a, via.sibling_aid, k);
  k->via = via;
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

static json_object *job_json(const struct blame_args *a, const struct siox_job_blame *j) {
  json_object *o = json_object_new_object(), *arr = json_object_new_array();
  siox_json_str(o, "job", a->job);
  siox_json_int(o, "calls", (int64_t)j->calls);
  siox_json_dbl(o, "total_s", (double)j->total_ns / 1e9);
  siox_json_dbl(o, "unexplained_s", (double)j->unexplained_ns / 1e9);
  for (size_t i = 0; i < j->n; i++) {
    const struct siox_job_entry *e = &j->e[i];
    json_object *x = json_object_new_object(), *ex = json_object_new_array();
    siox_json_str(x, "kind", e->is_job ? "job" : "component");
    siox_json_str(x, "name", e->key);
    siox_json_dbl(x, "time_s", (double)e->ns / 1e9);
    siox_json_int(x, "calls", (int64_t)e->calls);
    siox_json_str(x, "class", siox_class_name(siox_job_entry_class(e)));
    for (size_t k = 0; k < e->nexamples; k++) json_object_array_add(ex, json_object_new_int64(e->examples[k]));
    json_object_object_add(x, "example_aids", ex);
    json_object_array_add(arr, x);
  }
  json_object_object_add(o, "entries", arr);
  return o;
}

static int run_job(const struct siox_cli *cli, PGconn *c, const struct blame_args *a) {
  struct siox_top_query q = {.limit = a->calls, .job = a->job, .roots_only = 1};
  struct siox_top top = {0};
  struct siox_job_blame j = {0};
  char err[2048];
  if (siox_wh_top(c, &q, &top, err, sizeof(err)) != 0) {
    fprintf(stderr, "siox: %s\n", err);
    return SIOX_EXIT_FAIL;
  }
  int rc = top.n ? SIOX_EXIT_OK : SIOX_EXIT_FAIL;
  if (!top.n) fprintf(stderr, "siox: job '%s' has no activities in the warehouse (see `siox top`)\n", a->job);
  for (size_t i = 0; i < top.n && rc == SIOX_EXIT_OK; i++) {
    struct call k;
    rc = blame_call(c, a, top.rows[i].aid, &k);
    if (rc == SIOX_EXIT_OK &&
        siox_job_add_call(&j, k.b.path[0], &k.w, k.via.used ? k.via.root_aid : 0, k.via.root_ns) != 0)
      rc = SIOX_EXIT_FAIL;
    call_release(&k);
  }
  siox_wh_top_free(&top);
  siox_job_sort(&j);
  if (rc == SIOX_EXIT_OK && cli->json)
    rc = siox_json_print(job_json(a, &j)) == 0 ? SIOX_EXIT_OK : SIOX_EXIT_FAIL;
  else if (rc == SIOX_EXIT_OK)
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
  siox_wh_interactive(c);
  if (a.job) {
    rc = run_job(cli, c, &a);
  } else {
    struct call k;
    rc = blame_call(c, &a, a.aid, &k);
    if (rc == SIOX_EXIT_OK && a.dot)
      picture(k.t, &k.b, &k.w);
    else if (rc == SIOX_EXIT_OK)
      rc = report(cli, &a, &k.b, &k.w, &k.f.q, &k.v, &k.u, &k.via);
    call_release(&k);
  }
  siox_wh_close(wh);
  return rc;
}

const struct siox_cmd siox_cmd_blame = {"blame", "say which component made one call slow, with evidence", help, run};
