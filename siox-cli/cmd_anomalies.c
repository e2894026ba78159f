/*
 * `siox anomalies`: which components are slower than usual right now? Ranks
 * each component's latencies in a recent window against its own learned
 * baseline (knowledge base, siox_kb_baselines.h) and prints the abnormal
 * ones with the evidence.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include <siox/siox_kb.h>
#include <siox/siox_kb_baselines.h>

#include "format.h"
#include "json_out.h"
#include "session.h"
#include "time_arg.h"

static const char help[] =
    "NAME\n"
    "  siox anomalies - list components whose recent latencies are abnormal for them\n"
    "\n"
    "SYNOPSIS\n"
    "  siox anomalies [--since T] [--until T] [--percentile P] [--ratio X]\n"
    "                 [--min-samples N] [--all] [--update] [--json]\n"
    "\n"
    "DESCRIPTION\n"
    "  The knowledge base keeps a latency baseline per component (node: HWID, SWID,\n"
    "  IID), activity name and size class (io/bytes rounded down to a power of two):\n"
    "  a histogram in quarter-octave buckets learned from all history, folded in\n"
    "  incrementally by siox-server after its analyses (or by --update).\n"
    "\n"
    "  For every component with activities starting in the window [since, until),\n"
    "  the window's median latency is ranked in the component's own baseline, with\n"
    "  the window's activities taken out of it (a component that has been slow for\n"
    "  a while cannot make its slowness look normal).\n"
    "\n"
    "  RULE: abnormal when the window's median ranks at or above percentile P of the\n"
    "  baseline (default 95) AND is at least X times the baseline's median (default\n"
    "  2: a tight baseline ranks a 20 % drift at p99, which is not worth a look),\n"
    "  with at least N activities in the window (default 5) and at least 20\n"
    "  baseline samples outside it.\n"
    "\n"
    "  The evidence per component: activities in the window, their median and p90,\n"
    "  the baseline's samples, median and p99, the percentile rank, the share of the\n"
    "  window above the baseline's p99, and the slowest AIDs (for `siox blame`).\n"
    "\n"
    "OPTIONS\n"
    "  --since T        start of the window (default 1h: an hour ago)\n"
    "  --until T        end of the window (default now)\n"
    SIOX_TIME_ARG_HELP
    "  --percentile P   the rule's percentile, 50..100 (default 95)\n"
    "  --ratio X        the rule's least median / baseline median, 1..1000 (default 2)\n"
    "  --min-samples N  the rule's least number of activities in the window (default 5)\n"
    "  --all            list every component seen in the window, not only abnormal ones\n"
    "  --update         fold newly ingested activities into the baselines first\n"
    "                   (siox-server does this itself after its analyses)\n"
    "  --json           machine-readable: since_ns, until_ns, rule, abnormal (count),\n"
    "                   components [{hwid, swid, iid, name, size_class, samples, p50_s,\n"
    "                   p90_s, baseline_samples, baseline_p50_s, baseline_p99_s,\n"
    "                   percentile, ratio, above_baseline_p99, slowest_aids, abnormal}]\n"
    "\n"
    "EXIT STATUS\n"
    "  0 answered (whether or not anything is abnormal); 1 warehouse unreachable or\n"
    "  without the knowledge-base schema; 2 bad command line.\n"
    "\n"
    "EXAMPLES\n"
    "  siox anomalies --since 15m\n"
    "  siox anomalies --since 2026-11-23T06:00:00Z --until 2026-11-23T07:00:00Z --all\n"
    "  siox anomalies --json | jq -r '.components[] | select(.abnormal) | .slowest_aids[0]' | xargs -n1 siox blame\n";

struct anomalies_args {
  int64_t since_ns, until_ns;
  struct siox_kb_anomaly_rule rule;
  int all, update;
};

static int parse_window(const struct siox_cmd *self, const char *opt, const char *arg, int64_t *out) {
  if (siox_time_arg(arg, siox_time_now_ns(), out) != 0)
    return siox_cli_usage(self, "%s needs a time (now, 15m, 2h, 2026-11-23T06:00:00Z, @SECONDS), not '%s'", opt, arg);
  return -1;
}

static int parse(struct siox_cli *cli, const struct siox_cmd *self, int argc, char **argv, struct anomalies_args *a) {
  enum { OPT_SINCE = 0x200, OPT_UNTIL, OPT_PCT, OPT_RATIO, OPT_MIN, OPT_ALL, OPT_UPDATE };
  static const struct option opts[] = {{"since", required_argument, NULL, OPT_SINCE},
                                       {"until", required_argument, NULL, OPT_UNTIL},
                                       {"percentile", required_argument, NULL, OPT_PCT},
                                       {"ratio", required_argument, NULL, OPT_RATIO},
                                       {"min-samples", required_argument, NULL, OPT_MIN},
                                       {"all", no_argument, NULL, OPT_ALL},
                                       {"update", no_argument, NULL, OPT_UPDATE},
                                       SIOX_GLOBAL_LONGOPTS,
                                       {0}};
  int c, rc;
  long v;
  char *end;
  int64_t now = siox_time_now_ns();
  *a = (struct anomalies_args){.since_ns = now - 3600LL * 1000000000, .until_ns = now,
                               .rule = {.percentile = 95, .min_ratio = 2, .min_samples = 5}};
  while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
    switch (c) {
    case OPT_SINCE:
      if ((rc = parse_window(self, "--since", optarg, &a->since_ns)) >= 0) return rc;
      break;
    case OPT_UNTIL:
      if ((rc = parse_window(self, "--until", optarg, &a->until_ns)) >= 0) return rc;
      break;
    case OPT_PCT:
      if (siox_cli_parse_long(optarg, 50, 100, &v) != 0)
        return siox_cli_usage(self, "--percentile needs a number from 50 to 100, not '%s'", optarg);
      a->rule.percentile = (double)v;
      break;
    case OPT_RATIO:
      a->rule.min_ratio = strtod(optarg, &end);
      if (*end || end == optarg || !(a->rule.min_ratio >= 1 && a->rule.min_ratio <= 1000))
        return siox_cli_usage(self, "--ratio needs a number from 1 to 1000, not '%s'", optarg);
      break;
    case OPT_MIN:
      if (siox_cli_parse_long(optarg, 1, 1000000, &v) != 0)
        return siox_cli_usage(self, "--min-samples needs a number from 1 to 1000000, not '%s'", optarg);
      a->rule.min_samples = v;
      break;
    case OPT_ALL: a->all = 1; break;
    case OPT_UPDATE: a->update = 1; break;
    default:
      if ((rc = siox_cli_common_opt(cli, self, c, argv)) >= 0) return rc;
    }
  }
  if (optind < argc) return siox_cli_usage(self, "unexpected argument '%s'", argv[optind]);
  if (a->until_ns <= a->since_ns) return siox_cli_usage(self, "the window is empty: --until is not after --since");
  return -1;
}

/* "4.0 KiB+" for size class 12, "-" without a byte count. */
static const char *size_label(int size_class, char *buf, size_t len) {
  if (size_class < 0) return "-";
  char b[32];
  snprintf(buf, len, "%s+", siox_fmt_bytes(size_class == 0 ? 0 : (int64_t)1 << size_class, b, sizeof b));
  return buf;
}

static void print_one(const struct siox_kb_anomaly *x) {
  char node[400], sz[40], p50[32], p90[32], b50[32], b99[32];
  snprintf(node, sizeof node, "%s %s%s%s", x->hwid, x->swid, x->iid[0] ? "#" : "", x->iid);
  printf("%-36s %-18s %9s %7" PRId64 " %11s %11s %8" PRId64 " %11s %11s %6.1f %7.1fx %5.0f%%  %s\n", node, x->name,
         size_label(x->size_class, sz, sizeof sz), x->n, siox_fmt_duration((int64_t)x->p50_ns, p50, sizeof p50),
         siox_fmt_duration((int64_t)x->p90_ns, p90, sizeof p90), x->base_n,
         x->base_n ? siox_fmt_duration((int64_t)x->base_p50_ns, b50, sizeof b50) : "-",
         x->base_n ? siox_fmt_duration((int64_t)x->base_p99_ns, b99, sizeof b99) : "-", x->percentile, x->ratio,
         100 * x->above_base_p99, x->abnormal ? "ABNORMAL" : (x->base_n < SIOX_KB_MIN_BASELINE ? "no baseline" : "normal"));
  if (x->abnormal && x->slowest_aids[0])
    printf("    slowest: %" PRId64 " %" PRId64 " %" PRId64 "  (siox blame AID)\n", x->slowest_aids[0],
           x->slowest_aids[1], x->slowest_aids[2]);
}

static void print_text(const struct anomalies_args *a, const struct siox_kb_anomaly *x, size_t n, int abnormal) {
  char from[64], to[64];
  printf("Window %s .. %s. Rule: the window's median at or above p%.0f of the component's own baseline\n"
         "and >= %.1fx its median, >= %" PRId64 " activities in the window, >= %d baseline samples.\n\n",
         siox_fmt_iso(a->since_ns, from, sizeof from), siox_fmt_iso(a->until_ns, to, sizeof to), a->rule.percentile,
         a->rule.min_ratio, a->rule.min_samples, SIOX_KB_MIN_BASELINE);
  if (abnormal || a->all)
    printf("%-36s %-18s %9s %7s %11s %11s %8s %11s %11s %6s %8s %6s\n", "COMPONENT (HWID SWID)", "NAME", "SIZE", "N",
           "MEDIAN", "P90", "BASE N", "BASE P50", "BASE P99", "PCTL", "RATIO", ">P99");
  for (size_t i = 0; i < n; i++)
    if (x[i].abnormal || a->all) print_one(&x[i]);
  printf("%s%d of %zu component/operation/size group%s abnormal.\n", abnormal || a->all ? "\n" : "", abnormal, n,
         n == 1 ? "" : "s");
}

static json_object *one_json(const struct siox_kb_anomaly *x) {
  json_object *o = json_object_new_object(), *aids = json_object_new_array();
  siox_json_str(o, "hwid", x->hwid);
  siox_json_str(o, "swid", x->swid);
  siox_json_str(o, "iid", x->iid);
  siox_json_str(o, "name", x->name);
  siox_json_int(o, "size_class", x->size_class);
  siox_json_int(o, "samples", x->n);
  siox_json_dbl(o, "p50_s", x->p50_ns / 1e9);
  siox_json_dbl(o, "p90_s", x->p90_ns / 1e9);
  siox_json_int(o, "baseline_samples", x->base_n);
  json_object_object_add(o, "baseline_p50_s", x->base_n ? json_object_new_double(x->base_p50_ns / 1e9) : NULL);
  json_object_object_add(o, "baseline_p99_s", x->base_n ? json_object_new_double(x->base_p99_ns / 1e9) : NULL);
  json_object_object_add(o, "percentile", x->base_n ? json_object_new_double(x->percentile) : NULL);
  json_object_object_add(o, "ratio", x->base_n ? json_object_new_double(x->ratio) : NULL);
  siox_json_dbl(o, "above_baseline_p99", x->above_base_p99);
  for (int k = 0; k < 3 && x->slowest_aids[k]; k++) json_object_array_add(aids, json_object_new_int64(x->slowest_aids[k]));
  json_object_object_add(o, "slowest_aids", aids);
  json_object_object_add(o, "abnormal", json_object_new_boolean(x->abnormal));
  return o;
}

static json_object *anomalies_json(const struct anomalies_args *a, const struct siox_kb_anomaly *x, size_t n,
                                   int abnormal) {
  json_object *o = json_object_new_object(), *rule = json_object_new_object(), *arr = json_object_new_array();
  siox_json_int(o, "since_ns", a->since_ns);
  siox_json_int(o, "until_ns", a->until_ns);
  siox_json_dbl(rule, "percentile", a->rule.percentile);
  siox_json_dbl(rule, "min_ratio", a->rule.min_ratio);
  siox_json_int(rule, "min_samples", a->rule.min_samples);
  siox_json_int(rule, "min_baseline", SIOX_KB_MIN_BASELINE);
  json_object_object_add(o, "rule", rule);
  siox_json_int(o, "abnormal", abnormal);
  for (size_t i = 0; i < n; i++)
    if (x[i].abnormal || a->all) json_object_array_add(arr, one_json(&x[i]));
  json_object_object_add(o, "components", arr);
  return o;
}

static int run(struct siox_cli *cli, const struct siox_cmd *self, int argc, char **argv) {
  struct anomalies_args a;
  int rc = parse(cli, self, argc, argv, &a);
  if (rc >= 0) return rc;
  struct siox_wh *wh;
  if ((rc = siox_cli_open(cli, &wh)) != SIOX_EXIT_OK) return rc;
  PGconn *c = siox_wh_pg(wh);
  char err[1024] = "";
  struct siox_kb_anomaly *x = NULL;
  size_t n = 0;
  int abnormal = -1;
  if (!a.update || (siox_kb_baselines_update(c, 0, err, sizeof err) >= 0 &&
                    siox_wh_kind_models_update(c, 0, 0, err, sizeof err) >= 0))
    abnormal = siox_kb_anomalies(c, a.since_ns, a.until_ns, &a.rule, &x, &n, err, sizeof err);
  if (abnormal < 0) {
    fprintf(stderr, "siox anomalies: %s\n", err);
    rc = SIOX_EXIT_FAIL;
  } else if (cli->json) {
    rc = siox_json_print(anomalies_json(&a, x, n, abnormal)) == 0 ? SIOX_EXIT_OK : SIOX_EXIT_FAIL;
  } else {
    print_text(&a, x, n, abnormal);
    rc = SIOX_EXIT_OK;
  }
  free(x);
  siox_wh_close(wh);
  return rc;
}

const struct siox_cmd siox_cmd_anomalies = {"anomalies", "list components abnormally slow against their baselines",
                                            help, run};
