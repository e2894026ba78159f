/*
 * `siox capacity`: what should we buy? Per component (brick, device, client
 * node, job) the load in a window from the knowledge base's aggregates
 * (siox_kb_capacity.h): rates, peak, utilisation against the most a
 * component of its kind was ever seen to do, latency against load, and
 * which saturates first when the load grows (--what-if). Plots via gnuplot.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <siox/siox_kb.h>
#include <siox/siox_kb_capacity.h>

#include "cmd_capacity_model.h"
#include "cmd_capacity_validate.h"
#include "format.h"
#include "json_out.h"
#include "plot_gnuplot.h"
#include "session.h"
#include "time_arg.h"

#define MAX_PLOTTED 8

static const char help[] =
    "NAME\n"
    "  siox capacity - per-component load, peaks, headroom and what saturates first\n"
    "\n"
    "SYNOPSIS\n"
    "  siox capacity [--since T] [--until T] [--component PATTERN] [--kind KIND]\n"
    "                [--what-if FACTOR] [--plot DIR [--format png|svg]] [--update] [--json]\n"
    "  siox capacity validate ...          (predictions against real runs: see\n"
    "                                       siox capacity validate --help)\n"
    "  siox capacity model | what-if ...   (the calibrated storage model and what-if\n"
    "                predictions: siox capacity model --help)\n"
    "\n"
    "DESCRIPTION\n"
    "  The knowledge base keeps the load of every component per time bucket (1 s):\n"
    "  operations, bytes (io/bytes) and busy time (the sum of its activities'\n"
    "  latencies). Components are of three kinds:\n"
    "    node  an instrumented component (HWID, SWID): a brick (SWID GlusterFS-brick),\n"
    "          a device, or a layer such as POSIX or MPI-IO of one client node\n"
    "    host  a client node: the I/O its POSIX layer handed to the file system\n"
    "    job   an MPI job (processes' job id, or proc:ID): its POSIX-layer I/O\n"
    "\n"
    "  For each component with load in the window [since, until): mean and peak\n"
    "  (busiest bucket) bytes/s and ops/s, busy (mean requests in flight), and its\n"
    "  CAPACITY: the node/bandwidth attribute when the component reports one, else\n"
    "  the most that it or any component of its kind (same SWID; all hosts; all\n"
    "  jobs) did in one bucket, ever; marked '=' when no other component of its\n"
    "  kind was ever seen (then it is only its own best, and such components are\n"
    "  listed last). Load is bytes/s where the component moves\n"
    "  bytes, else ops/s. UTIL is peak / capacity. LATENCY is the mean latency in\n"
    "  the quieter and the busier half of its buckets, and a least-squares line\n"
    "  latency = a + b * load over the buckets.\n"
    "\n"
    "  SATURATES AT is the growth factor at which its peak reaches its capacity\n"
    "  (capacity / peak); components are listed in that order, so the first one\n"
    "  saturates first. --what-if FACTOR projects every peak FACTOR times higher:\n"
    "  projected utilisation, and latency by the line above.\n"
    "\n"
    "  Capacity from observation is a lower bound: a component never driven hard\n"
    "  shows the most it was asked for, not the most it can do. Give nodes a\n"
    "  node/bandwidth attribute for nominal figures.\n"
    "\n"
    "OPTIONS\n"
    "  --since T        start of the window (default 1h: an hour ago)\n"
    "  --until T        end of the window (default now)\n"
    SIOX_TIME_ARG_HELP
    "  --component PATTERN  only components of role PATTERN when it names one\n"
    "                   (brick, device, layer, client, job), else those whose label\n"
    "                   (HWID SWID, host, job) contains PATTERN\n"
    "  --kind KIND      only node, host or job components\n"
    "  --what-if FACTOR project the load FACTOR times higher (1..1000, default 1)\n"
    "  --plot DIR       draw with gnuplot into DIR: load.png (load over time),\n"
    "                   latency_vs_load.png, utilization.png (now and projected),\n"
    "                   each with its .dat and .gp (for the first 8 components)\n"
    "  --format F       png (default) or svg, for --plot\n"
    "  --update         fold newly ingested activities into the aggregates first\n"
    "                   (siox-server does this itself after its analyses)\n"
    "  --json           machine-readable: since_ns, until_ns, what_if, saturates_first,\n"
    "                   components [{kind, key, role, label, metric, ops, bytes,\n"
    "                   bytes_per_s, ops_per_s, rate, peak, capacity, capacity_source,\n"
    "                   peers,\n"
    "                   utilization, mean_utilization, busy, latency_low_s,\n"
    "                   latency_high_s, latency_slope_s_per_unit, saturation_factor,\n"
    "                   projected_utilization, projected_latency_s}]\n"
    "\n"
    "EXIT STATUS\n"
    "  0 answered (possibly no load in the window); 1 warehouse unreachable, no\n"
    "  knowledge-base schema, or plotting failed; 2 bad command line.\n"
    "\n"
    "EXAMPLES\n"
    "  siox capacity --since 2h\n"
    "  siox capacity --component brick --what-if 2\n"
    "  siox capacity --since 1d --plot /tmp/cap --format svg\n"
    "  siox capacity --json | jq -r '.saturates_first.label'\n";

struct capacity_args {
  struct siox_kb_capacity_query q;
  const char *plot_dir, *format;
  int update;
};

static int parse_time(const struct siox_cmd *self, const char *opt, const char *arg, int64_t *out) {
  if (siox_time_arg(arg, siox_time_now_ns(), out) != 0)
    return siox_cli_usage(self, "%s needs a time (now, 15m, 2h, 2026-11-23T06:00:00Z, @SECONDS), not '%s'", opt, arg);
  return -1;
}

static int parse_opt(const struct siox_cmd *self, int c, struct capacity_args *a) {
  char *end;
  switch (c) {
  case 0x200: return parse_time(self, "--since", optarg, &a->q.since_ns);
  case 0x201: return parse_time(self, "--until", optarg, &a->q.until_ns);
  case 0x202: a->q.component = optarg; return -1;
  case 0x203:
    if (strcmp(optarg, "node") && strcmp(optarg, "host") && strcmp(optarg, "job"))
      return siox_cli_usage(self, "--kind is node, host or job, not '%s'", optarg);
    a->q.kind = optarg;
    return -1;
  case 0x204:
    a->q.what_if = strtod(optarg, &end);
    if (*end || end == optarg || !(a->q.what_if >= 1 && a->q.what_if <= 1000))
      return siox_cli_usage(self, "--what-if needs a factor from 1 to 1000, not '%s'", optarg);
    return -1;
  case 0x205: a->plot_dir = optarg; return -1;
  case 0x206:
    if (strcmp(optarg, "png") && strcmp(optarg, "svg"))
      return siox_cli_usage(self, "--format is png or svg, not '%s'", optarg);
    a->format = optarg;
    return -1;
  case 0x207: a->update = 1; return -1;
  }
  return -2;
}

static int parse(struct siox_cli *cli, const struct siox_cmd *self, int argc, char **argv, struct capacity_args *a) {
  static const struct option opts[] = {
      {"since", required_argument, NULL, 0x200},   {"until", required_argument, NULL, 0x201},
      {"component", required_argument, NULL, 0x202}, {"kind", required_argument, NULL, 0x203},
      {"what-if", required_argument, NULL, 0x204}, {"plot", required_argument, NULL, 0x205},
      {"format", required_argument, NULL, 0x206},  {"update", no_argument, NULL, 0x207},
      SIOX_GLOBAL_LONGOPTS,                        {0}};
  int c, rc;
  int64_t now = siox_time_now_ns();
  *a = (struct capacity_args){.q = {.since_ns = now - 3600LL * 1000000000, .until_ns = now, .what_if = 1},
                              .format = "png"};
  while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
    rc = parse_opt(self, c, a);
    if (rc == -2 && (rc = siox_cli_common_opt(cli, self, c, argv)) >= 0) return rc;
    if (rc >= 0) return rc;
  }
  if (optind < argc) return siox_cli_usage(self, "unexpected argument '%s'", argv[optind]);
  if (a->q.until_ns <= a->q.since_ns) return siox_cli_usage(self, "the window is empty: --until is not after --since");
  return -1;
}

/* ---- text ------------------------------------------------------------- */

static const char *rate_str(const struct siox_kb_capacity_row *x, double v, char *buf, size_t len) {
  if (!x->bytes_metric) {
    snprintf(buf, len, "%.1f op/s", v);
    return buf;
  }
  char b[32];
  snprintf(buf, len, "%s/s", siox_fmt_bytes((int64_t)llround(v), b, sizeof b));
  return buf;
}

static void print_row(const struct siox_kb_capacity_row *x) {
  char mean[40], peak[40], cap[40], lo[32], hi[32], lat[80], sat[32];
  snprintf(lat, sizeof lat, "%s -> %s", siox_fmt_duration((int64_t)x->lat_low_ns, lo, sizeof lo),
           x->lat_high_ns > 0 ? siox_fmt_duration((int64_t)x->lat_high_ns, hi, sizeof hi) : "-");
  if (isinf(x->saturation_factor))
    snprintf(sat, sizeof sat, "-");
  else
    snprintf(sat, sizeof sat, "x%.2f", x->saturation_factor);
  printf("%-4s %-6s %-38s %13s %13s %13s%s %5.0f%% %9.1f %6.2f  %-24s %s\n", x->kind, x->role, x->label,
         rate_str(x, x->rate, mean, sizeof mean), rate_str(x, x->peak, peak, sizeof peak),
         rate_str(x, x->capacity, cap, sizeof cap), x->capacity_nominal ? "*" : (x->peers <= 1 ? "=" : " "),
         100 * x->utilization,
         x->ops_per_s, x->busy, lat, sat);
}

static void print_projection(const struct capacity_args *a, const struct siox_kb_capacity_row *r, size_t n) {
  char lat[32];
  size_t over = 0, known = 0;
  for (size_t i = 0; i < n; i++)
    if (r[i].peers > 1 || r[i].capacity_nominal) known++, over += r[i].projected_utilization >= 1.0;
  printf("\nSaturates first: %s (%s), when the load grows x%.2f%s.\n", r[0].label, r[0].role, r[0].saturation_factor,
         r[0].saturation_factor <= 1.0 ? " (its peak already is the most seen on its kind)" : "");
  if (a->q.what_if <= 1) return;
  printf("What if the load grows x%.2f: its peak would be %.0f%% of its capacity", a->q.what_if,
         100 * r[0].projected_utilization);
  if (r[0].projected_lat_ns > 0)
    printf(" and its latency about %s by its latency/load line",
           siox_fmt_duration((int64_t)r[0].projected_lat_ns, lat, sizeof lat));
  printf(";\n%zu of the %zu components with a known capacity would be at or over it.\n", over, known);
}

static void print_text(const struct capacity_args *a, const struct siox_kb_capacity_row *r, size_t n) {
  char from[64], to[64];
  printf("Window %s .. %s (%.0f s).\n", siox_fmt_iso(a->q.since_ns, from, sizeof from),
         siox_fmt_iso(a->q.until_ns, to, sizeof to), (double)(a->q.until_ns - a->q.since_ns) / 1e9);
  if (n == 0) {
    printf("No load recorded in this window (try --update, or a larger --since).\n");
    return;
  }
  printf("CAPACITY is the most this component or one of its kind did in one bucket, ever (* nominal\n"
         "node/bandwidth; = no peer of its kind, only its own best). Listed by SATURATES AT: the load\n"
         "growth that brings the peak to capacity.\n\n");
  printf("%-4s %-6s %-38s %13s %13s %13s  %6s %9s %6s  %-24s %s\n", "KIND", "ROLE", "COMPONENT", "MEAN", "PEAK",
         "CAPACITY", "UTIL", "OPS/S", "BUSY", "LATENCY QUIET -> BUSY", "SATURATES AT");
  for (size_t i = 0; i < n; i++) print_row(&r[i]);
  if (!isinf(r[0].saturation_factor)) print_projection(a, r, n);
}

/* ---- plots ------------------------------------------------------------ */

struct plot_data {
  struct siox_kb_capacity_point *pt[MAX_PLOTTED];
  double *t[MAX_PLOTTED], *load[MAX_PLOTTED], *lx[MAX_PLOTTED], *ly[MAX_PLOTTED];
  size_t n[MAX_PLOTTED], nl[MAX_PLOTTED];
};

/* Series of one component in MiB/s (or op/s) and ms, seconds since since. */
static int series(PGconn *c, const struct capacity_args *a, const struct siox_kb_capacity_row *x, struct plot_data *d,
                  size_t i, char *err, size_t errcap) {
  if (siox_kb_capacity_series(c, x->kind, x->key, a->q.since_ns, a->q.until_ns, &d->pt[i], &d->n[i], err, errcap) < 0)
    return -1;
  size_t n = d->n[i];
  d->t[i] = calloc(n + 1, sizeof(double));
  d->load[i] = calloc(n + 1, sizeof(double));
  d->lx[i] = calloc(n + 1, sizeof(double));
  d->ly[i] = calloc(n + 1, sizeof(double));
  if (!d->t[i] || !d->load[i] || !d->lx[i] || !d->ly[i]) {
    snprintf(err, errcap, "out of memory");
    return -1;
  }
  for (size_t k = 0; k < n; k++) {
    const struct siox_kb_capacity_point *p = &d->pt[i][k];
    double v = x->bytes_metric ? p->bytes_per_s / (1024.0 * 1024.0) : p->ops_per_s;
    d->t[i][k] = (double)(p->bucket_ns - a->q.since_ns) / 1e9;
    d->load[i][k] = v;
    if (p->ops_per_s > 0) {
      d->lx[i][d->nl[i]] = v;
      d->ly[i][d->nl[i]++] = p->mean_lat_ns / 1e6;
    }
  }
  return 0;
}

/* "brick4:/srv/b4 GlusterFS-brick" -> "brick4 GlusterFS-brick": the paths
 * in HWIDs make legends and axis labels unreadable. */
static const char *short_label(const char *label, char *buf, size_t len) {
  size_t n = 0;
  for (const char *p = label; *p && n + 1 < len; p++) {
    if (p[0] == ':' && p[1] == '/') {
      while (*p && *p != ' ') p++;
      if (!*p) break;
    }
    buf[n++] = *p;
  }
  buf[n] = '\0';
  return buf;
}

static int draw(const struct capacity_args *a, const struct siox_kb_capacity_row *r, size_t m, struct plot_data *d,
                char *err, size_t errcap) {
  struct siox_plot_series s[MAX_PLOTTED], l[MAX_PLOTTED];
  const char *labels[MAX_PLOTTED];
  char shortl[MAX_PLOTTED][320];
  double now[MAX_PLOTTED], proj[MAX_PLOTTED];
  int bytes = m && r[0].bytes_metric;
  for (size_t i = 0; i < m; i++) {
    s[i] = (struct siox_plot_series){r[i].label, d->t[i], d->load[i], d->n[i]};
    l[i] = (struct siox_plot_series){r[i].label, d->lx[i], d->ly[i], d->nl[i]};
    labels[i] = short_label(r[i].label, shortl[i], sizeof shortl[i]);
    s[i].title = l[i].title = labels[i];
    now[i] = 100 * r[i].utilization;
    proj[i] = 100 * r[i].projected_utilization;
  }
  struct siox_plot p = {a->plot_dir, "load", a->format, "Load per component", "seconds since the window's start",
                        bytes ? "MiB/s (op/s where no bytes)" : "op/s", SIOX_PLOT_LINES};
  if (siox_plot_xy(&p, s, m, err, errcap) < 0) return -1;
  p = (struct siox_plot){a->plot_dir, "latency_vs_load", a->format, "Mean latency against load (one point per bucket)",
                         bytes ? "load, MiB/s (op/s where no bytes)" : "load, op/s", "mean latency, ms", SIOX_PLOT_POINTS};
  if (siox_plot_xy(&p, l, m, err, errcap) < 0) return -1;
  char title[128], t2[64];
  snprintf(title, sizeof title, "Peak utilisation of capacity (what if x%.2f)", a->q.what_if);
  snprintf(t2, sizeof t2, "projected x%.2f", a->q.what_if);
  p = (struct siox_plot){a->plot_dir, "utilization", a->format, title, "", "% of capacity", SIOX_PLOT_LINES};
  return siox_plot_bars(&p, labels, now, "now", proj, t2, m, 100, err, errcap);
}

static int plot(PGconn *c, const struct capacity_args *a, const struct siox_kb_capacity_row *r, size_t n) {
  struct plot_data d = {0};
  char err[1024] = "";
  size_t m = n < MAX_PLOTTED ? n : MAX_PLOTTED;
  int rc = 0;
  fflush(stdout); /* the table before what the plotting says on stderr */
  for (size_t i = 0; i < m && rc == 0; i++) rc = series(c, a, &r[i], &d, i, err, sizeof err);
  if (rc == 0 && m) rc = draw(a, r, m, &d, err, sizeof err);
  for (size_t i = 0; i < m; i++) free(d.pt[i]), free(d.t[i]), free(d.load[i]), free(d.lx[i]), free(d.ly[i]);
  if (rc < 0) fprintf(stderr, "siox capacity: --plot: %s\n", err);
  else if (!a->plot_dir[0] || !m) return 0;
  else fprintf(stderr, "siox capacity: plots in %s (load, latency_vs_load, utilization .%s)\n", a->plot_dir, a->format);
  return rc;
}

static int run(struct siox_cli *cli, const struct siox_cmd *self, int argc, char **argv) {
  /* Predictions against real runs: cmd_capacity_validate.c. */
  if (argc > 1 && strcmp(argv[1], "validate") == 0) return siox_capacity_validate_run(cli, argc, argv);
  /* The calibrated model and what-if predictions: cmd_capacity_model.c. */
  if (siox_capacity_model_wanted(argc, argv)) return siox_capacity_model_run(cli, argc, argv);
  struct capacity_args a;
  int rc = parse(cli, self, argc, argv, &a);
  if (rc >= 0) return rc;
  struct siox_wh *wh;
  if ((rc = siox_cli_open(cli, &wh)) != SIOX_EXIT_OK) return rc;
  PGconn *c = siox_wh_pg(wh);
  char err[1024] = "";
  struct siox_kb_capacity_row *r = NULL;
  size_t n = 0;
  int got = -1;
  if (!a.update || siox_kb_capacity_update(c, 0, err, sizeof err) >= 0)
    got = siox_kb_capacity_report(c, &a.q, &r, &n, err, sizeof err);
  if (got < 0) {
    fprintf(stderr, "siox capacity: %s\n", err);
    rc = SIOX_EXIT_FAIL;
  } else {
    if (cli->json)
      rc = siox_json_print(siox_kb_capacity_json(&a.q, r, n)) == 0 ? SIOX_EXIT_OK : SIOX_EXIT_FAIL;
    else
      print_text(&a, r, n), rc = SIOX_EXIT_OK;
    if (a.plot_dir && plot(c, &a, r, n) < 0) rc = SIOX_EXIT_FAIL;
  }
  free(r);
  siox_wh_close(wh);
  return rc;
}

const struct siox_cmd siox_cmd_capacity = {"capacity", "per-component load, headroom, what saturates first", help, run};
