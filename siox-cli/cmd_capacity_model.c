/*
 * `siox capacity model` and `siox capacity what-if` (also `siox capacity
 * --what-if SCENARIO --job J`): the storage model calibrated from the
 * warehouse, and predictions of jobs under what-if scenarios. The model,
 * the simulation and the scenarios live in libsiox-capacity
 * (capacity/README.md); this file parses the command line and presents.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd_capacity_model.h"
#include "format.h"
#include "json_out.h"
#include "session.h"
#include "client_cores.h"
#include "siox_capacity.h"
#include "siox_workload.h"
#include "bytes_arg.h"
#include "time_arg.h"

#define MAX_SCEN 32
#define MAX_JOBS 64

static const char help[] =
    "NAME\n"
    "  siox capacity model, siox capacity what-if - a storage model calibrated from\n"
    "  SIOX's measurements, and what a job would take on a changed system\n"
    "\n"
    "SYNOPSIS\n"
    "  siox capacity model [--since T] [--until T] [--json]\n"
    "  siox capacity what-if SCENARIO... (--job J | --workload FILE)... [--since T]\n"
    "                [--until T] [--mount DIR] [--prefix PATH]... [--no-gaps]\n"
    "                [--client-cache BYTES] [--with-delays] [--flat-concurrency]\n"
    "                [--no-collective] [--no-kernel] [--kernel-mean] [--read-all]\n"
    "                [--kernel-pooled] [--healthy-ls] [--no-node-cpu] [--polling]\n"
    "                [--client-cores N] [--json]\n"
    "  siox capacity --what-if SCENARIO (--job J | --workload FILE)... [...]\n"
    "  siox capacity place --bricks N [--mount DIR] PATH...\n"
    "\n"
    "DESCRIPTION\n"
    "  model prints the storage model calibrated on the GlusterFS brick and client\n"
    "  activities that started in the window [since, until) (default: everything\n"
    "  recorded). Per component (a brick; a client node's FUSE channel) and per\n"
    "  request class (read, write, lookup, open, close, fsync, stat), the service time\n"
    "  is a + b * bytes, fitted by least squares on the component's exclusive times (a\n"
    "  brick activity's whole time; a client activity's time minus that of the brick\n"
    "  activity it is linked to), shown with the standard errors of a and b (+-) and\n"
    "  the number of samples. SERVERS is how many requests the component was seen\n"
    "  serving at once. CAPACITY is what the model says the component can do at\n"
    "  full-size requests (the largest brick request seen): SERVERS x size / service\n"
    "  time, with the range the fit's two standard errors give, or the node/bandwidth\n"
    "  the node declares. It is never the most load ever observed.\n"
    "\n"
    "  what-if runs each job's workload (siox workload extract, or a workload file) on\n"
    "  the model in a discrete-event simulation: each rank's compute gaps and\n"
    "  operations in order, each operation's requests through the client's FUSE\n"
    "  channel and then the brick holding the file, queueing where a component is\n"
    "  busy; barriers and MPI collectives hold ranks until their group arrives. Files\n"
    "  sit on the brick the warehouse recorded them on; files not seen, and all files\n"
    "  when the brick count changes, are placed by GlusterFS's DHT rule. The model is\n"
    "  calibrated on the window given, or else on the whole warehouse. The recorded\n"
    "  system (as-is) is always predicted first, for comparison. SCENARIO is one of:\n"
    "    bricks=N             N bricks: fewer (the last ones leave) or more (healthy\n"
    "                         new ones, each like the fleet's median brick)\n"
    "    heal=BRICK           BRICK replaced by a healthy one\n"
    "    device=BRICK:LAT:BW  BRICK (or all) becomes a device of LAT microseconds per\n"
    "                         request and BW MB/s\n"
    "    load=K, or K         K concurrent copies of the workload\n"
    "  and A+B applies A, then B (heal=BRICK+bricks=2: the count alone changes).\n"
    "  Each answer gives the predicted I/O time of each job (the slowest rank's time\n"
    "  inside operations, as the workload file counts it), and per component its\n"
    "  utilization, mean wait and mean queue length, and which component saturates\n"
    "  first and at what load: with D ns of service per copy at a component (busy\n"
    "  time / servers) and T the span of one copy alone, K copies keep it K x D / T\n"
    "  busy, so it saturates at K = T / D; the largest D saturates first. Per brick\n"
    "  it also gives the bytes read and written there.\n"
    "\n"
    "  Residual: a recorded operation also spends time the storage model does not\n"
    "  hold (MPI's data exchange in collective I/O, the kernel's FUSE path, CPU).\n"
    "  With --residual each operation keeps that part, its recorded time minus the\n"
    "  model's time for it on the recorded system (never below 0; none for\n"
    "  barriers), and a scenario changes only the model's part. Off by default: it\n"
    "  also keeps whatever slowed the recorded run (a loaded machine).\n"
    "\n"
    "  place prints the brick (1..N, in volfile order) that GlusterFS's DHT gives each\n"
    "  new PATH on a volume of N equal bricks mounted at DIR.\n"
    "\n"
    "OPTIONS\n"
    "  --since T, --until T  the window the model is calibrated on\n"
    SIOX_TIME_ARG_HELP
    "  --job J          a recorded job to predict (repeatable; each is predicted alone)\n"
    "  --workload FILE  a workload file to predict (repeatable)\n"
    "  --mount DIR      the volume's mount point in the jobs' file names (for the DHT\n"
    "                   rule, which hashes volume-relative directories)\n"
    "  --prefix PATH    with --job: keep only files under PATH (siox workload extract)\n"
    "  --no-gaps        compute gaps take no time\n"
    "  --residual       keep each operation's recorded time outside the model (below)\n"
    "  --client-cache BYTES\n"
    "                   the client node's page cache: reads of pages the client\n"
    "                   wrote or read before are served by it (1.5 us + 0.19 ns/B), up\n"
    "                   to BYTES (K, M, G: KiB, MiB, GiB; least recently used out); 0\n"
    "                   sends every read to its brick. Default 8G (capacity/README.md,\n"
    "                   \"The client's page cache\")\n"
    SIOX_CAPACITY_MODEL_FLAGS_HELP("")
    "  --polling        ranks waiting in MPI (at a barrier or collective, or done\n"
    "                   and waiting for the others) poll and share the node's cores\n"
    "                   with the I/O path's CPU work (off by default: it over-predicted\n"
    "                   on a quiet node; --no-polling, the default, is still accepted:\n"
    "                   capacity/README.md, \"Ranks waiting in MPI\")\n"
    "  --no-collective  MPI_File_open and _close cost only their requests (by\n"
    "                   default also the time the window's calls took beyond them:\n"
    "                   capacity/README.md, \"Collective open and close\")\n"
    "  --client-cores N a client node's cores: its FUSE client serves at most N\n"
    "                   requests at once, not the most it had in flight; 0: no\n"
    "                   bound (the model before). Default: this machine's online\n"
    "                   cores, an assumption the output states (the warehouse has no\n"
    "                   node's core count; capacity/README.md, \"Bounding a client's\n"
    "                   servers by its node's cores\")\n"
    "  --replay-dir DIR predict `siox replay --dir DIR` of the workload instead: its\n"
    "                   files DIR/f<ID>-<name> are placed by DHT\n"
    "  --bricks N       (place) the volume's brick count\n"
    "\n"
    "EXIT STATUS\n"
    "  0 answered; 1 warehouse unreachable, nothing to calibrate on, no such job, an\n"
    "  unknown brick in a scenario, a bad workload file; 2 bad command line.\n"
    "\n"
    "EXAMPLES\n"
    "  siox capacity model --since 1h\n"
    "  siox capacity what-if heal=node1:/data/brick3 bricks=8 load=4 --job 4711\n"
    "  siox capacity --what-if device=all:100:500 --workload job.wl --mount /mnt/vol\n";

const struct siox_cmd siox_cmd_capacity_model = {"capacity", "the storage model and what-if predictions", help, NULL};

struct margs {
  int what_if; /* 0: model */
  int place;   /* place: DHT placement of paths */
  long bricks;
  const char *replay_dir;
  int64_t since_ns, until_ns;
  char *scen[MAX_SCEN];
  int nscen;
  const char *job[MAX_JOBS], *wl[MAX_JOBS];
  int njob, nwl;
  const char *mount;
  const char *prefix[65];
  int nprefix, no_gaps, residual;
  uint64_t client_cache; /* bytes */
  int with_delays, flat, no_collective, no_kernel, kernel_mean, kernel_pooled, read_all, healthy_ls, no_node_cpu, polling;
  long client_cores; /* 0: no bound; SIOX_CLIENT_CORES_ASSUMED: this machine's */
};

int siox_capacity_model_wanted(int argc, char **argv) {
  if (argc > 1 && (strcmp(argv[1], "model") == 0 || strcmp(argv[1], "what-if") == 0 || strcmp(argv[1], "place") == 0))
    return 1;
  for (int i = 1; i < argc; i++)
    if (strcmp(argv[i], "--job") == 0 || strcmp(argv[i], "--workload") == 0 || strncmp(argv[i], "--job=", 6) == 0 ||
        strncmp(argv[i], "--workload=", 11) == 0)
      return 1;
  return 0;
}

static int parse(struct siox_cli *cli, int argc, char **argv, struct margs *a) {
  const struct siox_cmd *self = &siox_cmd_capacity_model;
  enum { O_SINCE = 0x200, O_UNTIL, O_JOB, O_WL, O_MOUNT, O_PREFIX, O_NOGAPS, O_WHATIF, O_REPLAY, O_BRICKS, O_MODELONLY, O_CACHE, O_DELAYS, O_FLAT,
         O_NOCOLL, O_NOKERNEL, O_KMEAN, O_KPOOL, O_READALL, O_HLS, O_CORES, O_NONODECPU, O_NOPOLL, O_POLL };
  static const struct option opts[] = {
      {"since", required_argument, NULL, O_SINCE},   {"until", required_argument, NULL, O_UNTIL},
      {"job", required_argument, NULL, O_JOB},       {"workload", required_argument, NULL, O_WL},
      {"mount", required_argument, NULL, O_MOUNT},   {"prefix", required_argument, NULL, O_PREFIX},
      {"no-gaps", no_argument, NULL, O_NOGAPS},      {"what-if", required_argument, NULL, O_WHATIF},
      {"replay-dir", required_argument, NULL, O_REPLAY}, {"bricks", required_argument, NULL, O_BRICKS},
      {"residual", no_argument, NULL, O_MODELONLY}, {"client-cache", required_argument, NULL, O_CACHE},
      {"with-delays", no_argument, NULL, O_DELAYS}, {"flat-concurrency", no_argument, NULL, O_FLAT},
      {"no-collective", no_argument, NULL, O_NOCOLL},
      {"no-kernel", no_argument, NULL, O_NOKERNEL}, {"client-cores", required_argument, NULL, O_CORES},
      {"no-node-cpu", no_argument, NULL, O_NONODECPU}, {"kernel-mean", no_argument, NULL, O_KMEAN},
      {"kernel-pooled", no_argument, NULL, O_KPOOL},
      {"read-all", no_argument, NULL, O_READALL}, {"healthy-ls", no_argument, NULL, O_HLS},
      {"no-polling", no_argument, NULL, O_NOPOLL},
      {"polling", no_argument, NULL, O_POLL},
      SIOX_GLOBAL_LONGOPTS,                          {0}};
  int c, rc;
  int64_t now = siox_time_now_ns();
  a->since_ns = 0;
  a->until_ns = INT64_MAX;
  if (argc > 1 && argv[1][0] != '-') { /* the action */
    a->what_if = strcmp(argv[1], "what-if") == 0;
    a->place = strcmp(argv[1], "place") == 0;
    if (!a->what_if && !a->place && strcmp(argv[1], "model") != 0)
      return siox_cli_usage(self, "unknown action '%s' (model, what-if, place)", argv[1]);
    argc--, argv++;
  }
  while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
    switch (c) {
    case O_SINCE:
    case O_UNTIL:
      if (siox_time_arg(optarg, now, c == O_SINCE ? &a->since_ns : &a->until_ns) != 0)
        return siox_cli_usage(self, "%s needs a time (now, 15m, 2h, 2026-11-23T06:00:00Z, @SECONDS), not '%s'",
                              c == O_SINCE ? "--since" : "--until", optarg);
      break;
    case O_JOB:
      if (a->njob == MAX_JOBS) return siox_cli_usage(self, "at most %d --job", MAX_JOBS);
      a->job[a->njob++] = optarg;
      break;
    case O_WL:
      if (a->nwl == MAX_JOBS) return siox_cli_usage(self, "at most %d --workload", MAX_JOBS);
      a->wl[a->nwl++] = optarg;
      break;
    case O_MOUNT: a->mount = optarg; break;
    case O_PREFIX:
      if (a->nprefix == 64) return siox_cli_usage(self, "at most 64 --prefix options");
      a->prefix[a->nprefix++] = optarg;
      break;
    case O_NOGAPS: a->no_gaps = 1; break;
    case O_REPLAY: a->replay_dir = optarg; break;
    case O_MODELONLY: a->residual = 1; break;
    case O_DELAYS: a->with_delays = 1; break;
    case O_FLAT: a->flat = 1; break;
    case O_NOCOLL: a->no_collective = 1; break;
    case O_NOKERNEL: a->no_kernel = 1; break;
    case O_KMEAN: a->kernel_mean = 1; break;
    case O_KPOOL: a->kernel_pooled = 1; break;
    case O_READALL: a->read_all = 1; break;
    case O_HLS: a->healthy_ls = 1; break;
    case O_NONODECPU: a->no_node_cpu = 1; break;
    case O_NOPOLL: a->polling = 0; break;
    case O_POLL: a->polling = 1; break;
    case O_CORES:
      if (siox_cli_parse_long(optarg, 0, 65536, &a->client_cores) < 0)
        return siox_cli_usage(self, "--client-cores takes a count from 0 (no bound) to 65536, not '%s'", optarg);
      break;
    case O_CACHE:
      if (siox_bytes_arg(optarg, &a->client_cache) != 0)
        return siox_cli_usage(self, "--client-cache takes bytes (e.g. 0, 65536, 512M, 2G), not '%s'", optarg);
      break;
    case O_BRICKS:
      if (siox_cli_parse_long(optarg, 1, 1024, &a->bricks) < 0)
        return siox_cli_usage(self, "--bricks takes a count from 1 to 1024, not '%s'", optarg);
      break;
    case O_WHATIF:
      if (a->nscen == MAX_SCEN) return siox_cli_usage(self, "at most %d scenarios", MAX_SCEN);
      a->scen[a->nscen++] = optarg;
      a->what_if = 1;
      break;
    default:
      if ((rc = siox_cli_common_opt(cli, self, c, argv)) >= 0) return rc;
    }
  }
  if (a->place) {
    if (!a->bricks) return siox_cli_usage(self, "place needs --bricks N");
    if (optind == argc) return siox_cli_usage(self, "place needs the PATHs to place");
    a->nscen = optind; /* place: the paths start here */
    return -1;
  }
  for (; optind < argc; optind++) {
    if (!a->what_if) return siox_cli_usage(self, "unexpected argument '%s'", argv[optind]);
    if (a->nscen == MAX_SCEN) return siox_cli_usage(self, "at most %d scenarios", MAX_SCEN);
    a->scen[a->nscen++] = argv[optind];
  }
  if (a->until_ns <= a->since_ns) return siox_cli_usage(self, "the window is empty: --until is not after --since");
  if (a->what_if && a->njob + a->nwl == 0) return siox_cli_usage(self, "what-if needs --job J or --workload FILE");
  if (!a->what_if && a->njob + a->nwl) return siox_cli_usage(self, "--job and --workload belong to what-if");
  return -1;
}

/* ---- model ------------------------------------------------------------ */

static const char *cost_str(const struct siox_cap_fit *f, int data, char *buf, size_t len) {
  char a[32], se[32];
  if (!f->n) return snprintf(buf, len, "-"), buf;
  int k = snprintf(buf, len, "%s+-%s", siox_fmt_duration((int64_t)llround(f->a_ns), a, sizeof a),
                   siox_fmt_duration((int64_t)llround(f->se_a), se, sizeof se));
  /* The per-byte cost as a bandwidth: 1 / b. */
  if (data && f->b_ns > 0 && k > 0 && (size_t)k < len)
    snprintf(buf + k, len - (size_t)k, " + B/%.0f MB/s (+-%.0f%%)", 1e3 / f->b_ns, 100 * f->se_b / f->b_ns);
  return buf;
}

/* The components that share the client node's cores (README "The client node's CPU"). */
static void print_node(const siox_cap_model *m) {
  int64_t c = siox_cap_model_main_client(m);
  if (c < 0 || !m->node_cpu || !m->client_cores) return;
  size_t on = 0, bricks = 0;
  for (size_t i = 0; i < m->ncomp; i++)
    if (m->comp[i].kind == SIOX_CAP_BRICK) bricks++, on += (size_t)m->comp[i].on_client_node;
  printf("\n%s: node CPU: %zu of %zu bricks run on the client's host (%s) and share its %u cores",
         m->comp[c].name, on, bricks, m->comp[c].host[0] ? m->comp[c].host : m->comp[c].name, m->client_cores);
}

/* A client's kernel part per call, read and write: the robust estimate with
 * its standard error, the calls it is over, those left out as disturbed and
 * what they add per call (README "The kernel's part"). */
static void print_kernel(const siox_cap_model *m, uint32_t c) {
  printf("\n%s: kernel's part (no request in GlusterFS during the node's POSIX calls) per call%s", m->comp[c].name,
         !m->kernel_path ? " (not used: --no-kernel)"
         : m->kernel_mean ? " (used: the plain mean, --kernel-mean)"
         : m->with_delays ? " (used: with the delay, --with-delays)" : "");
  for (int cls = SIOX_CAP_READ; cls <= SIOX_CAP_WRITE; cls++) {
    const struct siox_cap_fit *f = &m->comp[c].kernel_fit[cls];
    printf("\n  %-5s %.3f ms +- %.3f over %" PRIu64 " calls, %" PRIu64 " left out (delay %.3f ms; plain mean %.3f ms)",
           siox_cap_class_name(cls), m->comp[c].kernel_call_ns[cls] / 1e6, f->se_a / 1e6, f->n, f->left_out,
           f->excess_ns / 1e6, (m->comp[c].kernel_call_ns[cls] + f->excess_ns) / 1e6);
  }
  /* reads per brick that served them (README "The read-back's kernel part") */
  for (size_t b = 0; b < m->ncomp; b++) {
    const struct siox_cap_fit *f = &m->comp[b].kernel_fit[SIOX_CAP_READ];
    if (m->comp[b].kind != SIOX_CAP_BRICK || !f->n) continue;
    printf("\n  read  %.3f ms +- %.3f over %" PRIu64 " calls, %" PRIu64 " left out (delay %.3f ms) served by %s%s",
           m->comp[b].kernel_call_ns[SIOX_CAP_READ] / 1e6, f->se_a / 1e6, f->n, f->left_out, f->excess_ns / 1e6,
           m->comp[b].name, m->kernel_pooled ? " (not used: --kernel-pooled)" : "");
  }
  int64_t h = siox_cap_model_healthy_read_kernel(m);
  if (h >= 0 && m->comp[h].kernel_fit[SIOX_CAP_READ].n)
    printf("\n  read  healthy reference (heal=, new bricks): %s's %.3f ms", m->comp[h].name,
           m->comp[h].kernel_call_ns[SIOX_CAP_READ] / 1e6);
}

/* What a healed or new brick's write costs (README "The healthy reference"):
 * the lower-median brick's robust write line, or its least-squares one. */
static void print_healthy(const siox_cap_model *m) {
  struct siox_cap_fit f;
  siox_cap_model_healthy(m, SIOX_CAP_WRITE, &f);
  if (!f.n) return;
  printf("\nhealthy reference (heal=, new bricks): write %.0f us per %" PRIu64 " B request, %s over %" PRIu64
         " samples, %" PRIu64 " left out",
         siox_cap_fit_eval(&f, (double)m->chunk) / 1e3, m->chunk,
         m->healthy_ls ? "least squares (--healthy-ls)" : "robust", f.n, f.left_out);
}

static void print_model(const siox_cap_model *m, long cores_option) {
  char b[32];
  printf("storage model: %" PRIu64 " samples, %zu components, full-size request %s\n", m->samples, m->ncomp,
         siox_fmt_bytes((int64_t)m->chunk, b, sizeof b));
  printf("client page cache: %s per client node (least recently used out), a cached read %.0f us + B/%.0f MB/s "
         "(not calibrated: capacity/README.md)\n",
         siox_fmt_bytes((int64_t)m->client_cache_bytes, b, sizeof b), m->cache_read.a_ns / 1e3,
         m->cache_read.b_ns > 0 ? 1e3 / m->cache_read.b_ns : 0);
  printf("service time = a +- se(a) [+ bytes / bandwidth (+- se)], per request; N samples fitted, OUT left out as "
         "disturbed, DELAY what they add per request on average, QUEUED a client's reads not fitted: started behind "
         "another request to their brick%s; PER FILE a client's requests of the class in flight at "
         "once on one file (capacity/README.md)\n\n",
         m->read_all ? " (fitted all the same: --read-all)" : "");
  printf("%-32s %-6s %7s  %-7s %8s %6s %5s %6s  %-48s %10s  %s\n", "COMPONENT", "KIND", "SERVERS", "CLASS", "PER FILE",
         "N", "OUT", "QUEUED", "SERVICE TIME", "DELAY",
         "CAPACITY (-2se .. +2se)");
  uint32_t order[1024];
  size_t nb = siox_cap_model_bricks(m, order, 1024), n = nb;
  for (uint32_t i = 0; i < m->ncomp && n < 1024; i++)
    if (m->comp[i].kind != SIOX_CAP_BRICK) order[n++] = i;
  for (size_t k = 0; k < n; k++) {
    const struct siox_cap_comp *c = &m->comp[order[k]];
    int first = 1;
    for (int cls = 0; cls < SIOX_CAP_NCLASS; cls++) {
      const struct siox_cap_fit *f = &c->fit[cls];
      if (!f->n) continue;
      int data = cls == SIOX_CAP_READ || cls == SIOX_CAP_WRITE;
      char cost[96], capb[96], lo_s[32], hi_s[32];
      double lo, hi, cap = siox_cap_comp_capacity(m, order[k], cls, &lo, &hi);
      if (data)
        snprintf(capb, sizeof capb, "%s/s (%s .. %s)%s", siox_fmt_bytes((int64_t)cap, b, sizeof b),
                 siox_fmt_bytes((int64_t)lo, lo_s, sizeof lo_s),
                 hi > 0 ? siox_fmt_bytes((int64_t)hi, hi_s, sizeof hi_s) : "?", c->declared_bps > 0 ? " declared" : "");
      else
        snprintf(capb, sizeof capb, "%.0f op/s (%.0f .. %s)", cap, lo, hi > 0 ? (snprintf(hi_s, sizeof hi_s, "%.0f", hi), hi_s) : "?");
      char delay[32], per[16] = "-";
      if (c->kind == SIOX_CAP_CLIENT && c->class_servers[cls] && m->class_concurrency)
        snprintf(per, sizeof per, "%u", c->class_servers[cls]);
      siox_fmt_duration((int64_t)llround(f->excess_ns), delay, sizeof delay);
      char nq[24] = "-";
      if (f->queued) snprintf(nq, sizeof nq, "%" PRIu64, f->queued);
      printf("%-32s %-6s %7s  %-7s %8s %6" PRIu64 " %5" PRIu64 " %6s  %-48s %10s  %s\n", first ? c->name : "",
             first ? (c->kind == SIOX_CAP_BRICK ? "brick" : "client") : "",
             first ? (snprintf(lo_s, sizeof lo_s, "%u", siox_cap_comp_servers(m, order[k])), lo_s) : "", siox_cap_class_name(cls), per, f->n,
             f->left_out, nq, cost_str(f, data, cost, sizeof cost), f->left_out ? delay : "-", capb);
      first = 0;
    }
  }
  printf("\ncollective MPI-IO: MPI_File_open %.2f ms, MPI_File_close %.2f ms beyond their requests (the window's "
         "median)%s",
         m->mpi_open_ns / 1e6, m->mpi_close_ns / 1e6, m->collective ? "" : " (not used: --no-collective)");
  print_healthy(m);
  for (uint32_t i = 0; i < m->ncomp; i++)
    if (m->comp[i].kind == SIOX_CAP_CLIENT) print_kernel(m, i);
  for (uint32_t i = 0; i < m->ncomp; i++)
    if (m->comp[i].kind == SIOX_CAP_CLIENT && m->client_cores)
      printf("\n%s: SERVERS %u, its node's cores bounding the %u it was seen to have in flight", m->comp[i].name,
             siox_cap_comp_servers(m, i), m->comp[i].servers);
  print_node(m);
  printf("\nplacement: %zu files with a recorded brick\n", m->nplace);
  siox_client_cores_say(stdout, m, cores_option);
}

static json_object *fit_json(const struct siox_cap_fit *f) {
  json_object *o = json_object_new_object();
  siox_json_int(o, "n", (int64_t)f->n);
  siox_json_int(o, "left_out", (int64_t)f->left_out);
  siox_json_dbl(o, "excess_ns", f->excess_ns);
  siox_json_int(o, "queued", (int64_t)f->queued);
  siox_json_dbl(o, "a_ns", f->a_ns);
  siox_json_dbl(o, "se_a_ns", f->se_a);
  siox_json_dbl(o, "b_ns_per_byte", f->b_ns);
  siox_json_dbl(o, "se_b_ns_per_byte", f->se_b);
  siox_json_dbl(o, "residual_sd_ns", f->sd_ns);
  return o;
}

static json_object *model_json(const siox_cap_model *m) {
  json_object *o = json_object_new_object(), *comps = json_object_new_array();
  siox_json_int(o, "samples", (int64_t)m->samples);
  siox_json_int(o, "chunk_bytes", (int64_t)m->chunk);
  siox_json_int(o, "client_cache_bytes", (int64_t)m->client_cache_bytes);
  siox_json_dbl(o, "cache_read_a_ns", m->cache_read.a_ns);
  siox_json_dbl(o, "cache_read_b_ns", m->cache_read.b_ns);
  json_object_object_add(o, "with_delays", json_object_new_boolean(m->with_delays));
  json_object_object_add(o, "class_concurrency", json_object_new_boolean(m->class_concurrency));
  json_object_object_add(o, "kernel_path", json_object_new_boolean(m->kernel_path));
  json_object_object_add(o, "kernel_mean", json_object_new_boolean(m->kernel_mean));
  json_object_object_add(o, "kernel_pooled", json_object_new_boolean(m->kernel_pooled));
  json_object_object_add(o, "read_all", json_object_new_boolean(m->read_all));
  json_object_object_add(o, "node_cpu", json_object_new_boolean(m->node_cpu && m->client_cores));
  json_object_object_add(o, "mpi_polling", json_object_new_boolean(m->mpi_polling && m->node_cpu && m->client_cores));
  json_object_object_add(o, "collective", json_object_new_boolean(m->collective));
  siox_json_dbl(o, "mpi_open_ns", m->mpi_open_ns);
  siox_json_dbl(o, "mpi_close_ns", m->mpi_close_ns);
  siox_json_int(o, "client_cores", m->client_cores); /* 0: no bound */
  for (uint32_t i = 0; i < m->ncomp; i++) {
    const struct siox_cap_comp *c = &m->comp[i];
    json_object *j = json_object_new_object(), *cls = json_object_new_object();
    siox_json_str(j, "name", c->name);
    siox_json_str(j, "kind", c->kind == SIOX_CAP_BRICK ? "brick" : "client");
    siox_json_int(j, "servers", siox_cap_comp_servers(m, i));
    json_object_object_add(j, "on_client_node", json_object_new_boolean(m->comp[i].on_client_node));
    siox_json_int(j, "servers_seen", c->servers);
    if (c->declared_bps > 0) siox_json_dbl(j, "declared_bytes_per_s", c->declared_bps);
    siox_json_int(j, "synthetic", c->synthetic);
    for (int k = 0; k < SIOX_CAP_NCLASS; k++) {
      if (!c->fit[k].n) continue;
      json_object *f = fit_json(&c->fit[k]);
      double lo, hi, cap = siox_cap_comp_capacity(m, i, k, &lo, &hi);
      siox_json_dbl(f, "capacity", cap);
      siox_json_dbl(f, "capacity_low", lo);
      siox_json_dbl(f, "capacity_high", hi);
      if (c->kind == SIOX_CAP_CLIENT) siox_json_int(f, "in_flight_per_file", c->class_servers[k]);
      if ((c->kind == SIOX_CAP_CLIENT && (k == SIOX_CAP_READ || k == SIOX_CAP_WRITE)) ||
          (c->kind == SIOX_CAP_BRICK && k == SIOX_CAP_READ && c->kernel_fit[k].n)) { /* a brick's: its reads' calls */
        siox_json_dbl(f, "kernel_ns_per_call", c->kernel_call_ns[k]);
        json_object_object_add(f, "kernel_fit", fit_json(&c->kernel_fit[k])); /* a_ns + excess_ns: the plain mean */
      }
      json_object_object_add(cls, siox_cap_class_name(k), f);
    }
    json_object_object_add(j, "classes", cls);
    json_object_array_add(comps, j);
  }
  json_object_object_add(o, "components", comps);
  siox_json_int(o, "placed_files", (int64_t)m->nplace);
  return o;
}

/* ---- what-if ------------------------------------------------------------ */

static int load_job(PGconn *pg, const struct margs *a, const char *job, siox_workload **w, char *err, size_t errlen) {
  struct siox_wl_extract_opts o = {.job = job, .prefixes = a->nprefix ? a->prefix : NULL};
  struct siox_wl_extract_stats st;
  return siox_wl_extract(pg, &o, w, &st, err, errlen);
}

/* A trace to simulate: a characterization is synthesized first. */
static int load_file(const char *path, siox_workload **w, char *err, size_t errlen) {
  siox_workload *x = NULL;
  int rc = siox_wl_read_path(path, &x, err, errlen);
  if (rc || siox_wl_form(x) == SIOX_WL_TRACE) return *w = x, rc;
  rc = siox_wl_synthesize(x, w, err, errlen);
  siox_wl_free(x);
  return rc;
}

static void print_answer(const struct siox_cap_answer *ans, int64_t base_ns) {
  char t[32], b[32], w[32];
  const struct siox_cap_run *r = &ans->run;
  printf("  %-28s I/O time %s", ans->label, siox_fmt_duration(r->job_io_ns[0], t, sizeof t));
  if (r->copies > 1) {
    int64_t most = 0;
    for (uint32_t c = 0; c < r->copies; c++) most = r->job_io_ns[c] > most ? r->job_io_ns[c] : most;
    printf(" (copy 1; slowest of %u: %s)", r->copies, siox_fmt_duration(most, b, sizeof b));
  }
  if (base_ns > 0) printf("  %+.1f%% vs as-is", 100.0 * ((double)r->job_io_ns[0] - (double)base_ns) / (double)base_ns);
  printf(", span %s\n", siox_fmt_duration(r->makespan_ns, b, sizeof b));
  if (r->unmatched_syncs)
    printf("    warning: %" PRIu64 " synchronization points of the trace do not match across ranks (released; "
           "a replay of it may hang)\n", r->unmatched_syncs);
  for (size_t c = 0; c < r->ncomp; c++) {
    const struct siox_cap_comp_stat *s = &r->stat[c];
    if (!s->requests) continue;
    const struct siox_cap_comp *k = &ans->model->comp[c];
    printf("    %-30s %-6s util %5.1f%%  requests %6" PRIu64 "  mean wait %10s  mean queue %6.2f%s\n", k->name,
           k->kind == SIOX_CAP_BRICK ? "brick" : "client", 100 * s->utilization, s->requests,
           siox_fmt_duration((int64_t)llround(s->mean_wait_ns), w, sizeof w), s->mean_queue,
           k->synthetic ? "  (scenario)" : "");
    if (k->kind == SIOX_CAP_BRICK)
      printf("    %-30s        read %s, written %s\n", "", siox_fmt_bytes((int64_t)s->bytes_read, b, sizeof b),
             siox_fmt_bytes((int64_t)s->bytes_written, w, sizeof w));
  }
  if (ans->saturates_first >= 0)
    printf("    saturates first: %s, at %.2f concurrent copies of this workload\n",
           ans->model->comp[ans->saturates_first].name, ans->saturates_at);
}

/* Copy 0's ranks: each one's predicted I/O time and its parts per kind of
 * operation (the simulation's explanation, to set beside a run's trace:
 * `siox workload extract` of the run gives the same sums measured). The
 * parts are summed in one walk over the records (a kind a rank never made
 * is left out). */
static json_object *ranks_json(const struct siox_cap_run *r, const siox_workload *w) {
  json_object *arr = json_object_new_array();
  size_t cells = (size_t)r->ranks * SIOX_WL_NOPS;
  int64_t *t = r->rank_io_ns && r->rec_ns ? calloc(cells ? cells : 1, sizeof *t) : NULL;
  uint32_t *n = t ? calloc(cells ? cells : 1, sizeof *n) : NULL;
  for (size_t i = 0; n && i < siox_wl_nrecs(w); i++) {
    const struct siox_wl_rec *x = siox_wl_rec(w, i);
    if (x->rank < r->ranks && (int)x->op < SIOX_WL_NOPS) {
      size_t c = (size_t)x->rank * SIOX_WL_NOPS + x->op;
      t[c] += r->rec_ns[i], n[c]++;
    }
  }
  for (uint32_t k = 0; n && k < r->ranks; k++) {
    json_object *j = json_object_new_object(), *ops = json_object_new_object();
    siox_json_int(j, "rank", k);
    siox_json_int(j, "io_time_ns", r->rank_io_ns[k]);
    for (int op = 0; op < SIOX_WL_NOPS; op++)
      if (n[(size_t)k * SIOX_WL_NOPS + op]) siox_json_int(ops, siox_wl_op_name(op), t[(size_t)k * SIOX_WL_NOPS + op]);
    json_object_object_add(j, "by_op_ns", ops);
    json_object_array_add(arr, j);
  }
  free(t);
  free(n);
  return arr;
}

static json_object *answer_json(const struct siox_cap_answer *ans, const siox_workload *w) {
  const struct siox_cap_run *r = &ans->run;
  json_object *o = json_object_new_object(), *jobs = json_object_new_array(), *comps = json_object_new_array();
  siox_json_str(o, "scenario", ans->label);
  siox_json_int(o, "copies", r->copies);
  siox_json_int(o, "span_ns", r->makespan_ns);
  siox_json_int(o, "unmatched_syncs", (int64_t)r->unmatched_syncs);
  for (uint32_t c = 0; c < r->copies; c++) json_object_array_add(jobs, json_object_new_int64(r->job_io_ns[c]));
  json_object_object_add(o, "io_time_ns", jobs);
  for (size_t c = 0; c < r->ncomp; c++) {
    const struct siox_cap_comp_stat *s = &r->stat[c];
    json_object *j = json_object_new_object();
    siox_json_str(j, "name", ans->model->comp[c].name);
    siox_json_str(j, "kind", ans->model->comp[c].kind == SIOX_CAP_BRICK ? "brick" : "client");
    siox_json_int(j, "requests", (int64_t)s->requests);
    siox_json_dbl(j, "utilization", s->utilization);
    siox_json_dbl(j, "mean_wait_ns", s->mean_wait_ns);
    siox_json_dbl(j, "mean_queue", s->mean_queue);
    siox_json_dbl(j, "demand_ns", s->demand_ns);
    siox_json_int(j, "bytes_read", (int64_t)s->bytes_read);
    siox_json_int(j, "bytes_written", (int64_t)s->bytes_written);
    json_object_array_add(comps, j);
  }
  json_object_object_add(o, "components", comps);
  json_object_object_add(o, "ranks", ranks_json(r, w));
  if (ans->saturates_first >= 0) {
    siox_json_str(o, "saturates_first", ans->model->comp[ans->saturates_first].name);
    siox_json_dbl(o, "saturates_at_copies", ans->saturates_at);
  }
  return o;
}

/* Predicts w under as-is and every scenario; text or into arr. */
static int predict_all(const struct margs *a, const siox_cap_model *m, const char *name, const siox_workload *w,
                       json_object *arr) {
  char err[1024] = "", asis[] = "as-is";
  struct siox_cap_scenario s0 = {.what = SIOX_CAP_AS_IS, .label = asis};
  json_object *jw = arr ? json_object_new_object() : NULL, *js = arr ? json_object_new_array() : NULL;
  int64_t rec = 0, base = 0;
  for (uint32_t r = 0; r < siox_wl_ranks(w); r++) { /* the recorded I/O time: the slowest rank's */
    int64_t t = 0;
    for (size_t i = 0; i < siox_wl_nrecs(w); i++)
      if (siox_wl_rec(w, i)->rank == r) t += siox_wl_rec(w, i)->dur_ns;
    rec = t > rec ? t : rec;
  }
  if (!arr) {
    char t[32];
    printf("%s: %u ranks, %zu files, %zu operations, recorded I/O time %s\n", name, siox_wl_ranks(w),
           siox_wl_nfiles(w), siox_wl_nrecs(w), siox_fmt_duration(rec, t, sizeof t));
  } else {
    siox_json_str(jw, "workload", name);
    siox_json_int(jw, "recorded_io_time_ns", rec);
  }
  struct siox_cap_predict_opts po = {.mount = a->mount, .replay_dir = a->replay_dir, .no_gaps = a->no_gaps,
                                     .residual = a->residual};
  for (int i = -1; i < a->nscen; i++) {
    struct siox_cap_scenario s[8] = {s0};
    int ns = 0;
    char spec[512];
    if (i >= 0) {
      snprintf(spec, sizeof spec, "%s", a->scen[i]);
      if ((ns = siox_cap_scenarios_parse(spec, s, 8, err, sizeof err)) < 0) goto bad;
      s[0].label = a->scen[i];
    }
    struct siox_cap_answer ans;
    if (siox_cap_predict(m, w, s, (size_t)ns, &po, &ans, err, sizeof err) < 0) goto bad;
    if (i < 0) base = ans.run.job_io_ns[0];
    if (arr) json_object_array_add(js, answer_json(&ans, w));
    else print_answer(&ans, i < 0 ? 0 : base);
    siox_cap_answer_free(&ans);
  }
  if (arr) {
    json_object_object_add(jw, "scenarios", js);
    json_object_array_add(arr, jw);
  } else {
    printf("\n");
  }
  return 0;
bad:
  fprintf(stderr, "siox capacity: %s: %s\n", name, err);
  json_object_put(jw);
  json_object_put(js);
  return -1;
}

static int what_if(PGconn *pg, const struct margs *a, const struct siox_cli *cli, const siox_cap_model *m) {
  char err[1024] = "";
  json_object *root = cli->json ? json_object_new_object() : NULL, *arr = cli->json ? json_object_new_array() : NULL;
  /* Check every scenario before any simulation: a typo costs nothing. */
  for (int i = 0; i < a->nscen; i++) {
    char spec[512];
    struct siox_cap_scenario s[8];
    snprintf(spec, sizeof spec, "%s", a->scen[i]);
    if (siox_cap_scenarios_parse(spec, s, 8, err, sizeof err) < 0) {
      fprintf(stderr, "siox capacity: %s\n", err);
      json_object_put(root);
      json_object_put(arr);
      return SIOX_EXIT_USAGE;
    }
  }
  int rc = SIOX_EXIT_OK;
  if (!root) siox_client_cores_say(stdout, m, a->client_cores); /* an assumption the answers rest on */
  for (int i = 0; i < a->njob + a->nwl && rc == SIOX_EXIT_OK; i++) {
    siox_workload *w = NULL;
    const char *name = i < a->njob ? a->job[i] : a->wl[i - a->njob];
    int got = i < a->njob ? load_job(pg, a, name, &w, err, sizeof err) : load_file(name, &w, err, sizeof err);
    if (got < 0) {
      fprintf(stderr, "siox capacity: %s: %s\n", name, err[0] ? err : strerror(-got));
      rc = SIOX_EXIT_FAIL;
    } else if (predict_all(a, m, name, w, arr) < 0) {
      rc = SIOX_EXIT_FAIL;
    }
    siox_wl_free(w);
  }
  if (root) {
    json_object_object_add(root, "model", model_json(m));
    json_object_object_add(root, "workloads", arr);
    if (rc == SIOX_EXIT_OK) rc = siox_json_print(root) == 0 ? SIOX_EXIT_OK : SIOX_EXIT_FAIL;
    else json_object_put(root);
  }
  return rc;
}

int siox_capacity_model_run(struct siox_cli *cli, int argc, char **argv) {
  struct margs a = {.client_cache = SIOX_CAP_CLIENT_CACHE_BYTES, .client_cores = SIOX_CLIENT_CORES_ASSUMED};
  int rc = parse(cli, argc, argv, &a);
  if (rc >= 0) return rc;
  if (a.place) {
    for (int i = a.nscen; i < argc - (argc > 1 && argv[1][0] != '-'); i++) {
      const char *p = argv[i + (argc > 1 && argv[1][0] != '-')];
      int k = siox_cap_dht_place_path(p, a.mount, (uint32_t)a.bricks);
      if (k < 0) {
        fprintf(stderr, "siox capacity: %s: path too long\n", p);
        return SIOX_EXIT_FAIL;
      }
      printf("%s brick%d\n", p, k + 1);
    }
    return SIOX_EXIT_OK;
  }
  struct siox_wh *wh;
  if ((rc = siox_cli_open(cli, &wh)) != SIOX_EXIT_OK) return rc;
  PGconn *pg = siox_wh_pg(wh);
  char err[1024] = "";
  siox_cap_model *m = NULL;
  if (siox_cap_model_from_warehouse(pg, a.since_ns, a.until_ns, &m, err, sizeof err) < 0) {
    fprintf(stderr, "siox capacity: %s\n", err);
    siox_wh_close(wh);
    return SIOX_EXIT_FAIL;
  }
  m->client_cache_bytes = a.client_cache;
  m->with_delays = a.with_delays;
  m->class_concurrency = !a.flat;
  m->kernel_path = !a.no_kernel;
  m->kernel_mean = a.kernel_mean;
  m->kernel_pooled = a.kernel_pooled;
  if (a.read_all) siox_cap_model_read_all(m);
  m->healthy_ls = a.healthy_ls;
  m->node_cpu = !a.no_node_cpu;
  m->mpi_polling = a.polling;
  m->collective = !a.no_collective;
  siox_client_cores_apply(m, a.client_cores);
  if (a.what_if) rc = what_if(pg, &a, cli, m);
  else if (cli->json) rc = siox_json_print(model_json(m)) == 0 ? SIOX_EXIT_OK : SIOX_EXIT_FAIL;
  else print_model(m, a.client_cores), rc = SIOX_EXIT_OK;
  siox_cap_model_free(m);
  siox_wh_close(wh);
  return rc;
}
