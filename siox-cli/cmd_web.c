/*
 * `siox web`: the explorer in a browser (web/README.md). Parses the options
 * and hands over to libsiox-web.
 */
#include <errno.h>
#include <stdio.h>

#include "session.h"
#include "siox/siox_web.h"
#include "siox/siox_wh.h"

static const char help[] =
    "NAME\n"
    "  siox web - explore the warehouse in a browser\n"
    "\n"
    "SYNOPSIS\n"
    "  siox web [--listen HOST:PORT] [--allow CIDR[,CIDR...]] [--threads N]\n"
    "\n"
    "DESCRIPTION\n"
    "  Serves a single-page explorer and a JSON API over HTTP until interrupted\n"
    "  (SIGINT, SIGTERM). Everything the page needs is inside this binary (the\n"
    "  front end and its libraries are bundled at build time): it works on an\n"
    "  offline login node. Open the address it prints.\n"
    "\n"
    "  Pages: jobs (triage, refreshed while jobs run), job (summary, rank x time\n"
    "  heatmap, critical files, findings and hints, blame summary on request), call (the\n"
    "  causal graph with folding, blame's path and culprit, link confidence; a\n"
    "  Gantt timeline; blame's evidence in words), component (latency over time\n"
    "  against its baseline, load and capacity).\n"
    "\n"
    "  API (GET; JSON; the same documents as the CLI's --json):\n"
    "    /api/jobs[?since=NS&sort=io_time|bytes|bandwidth]   siox jobs --json\n"
    "    /api/summary?job=J                                  siox summary --job J --json\n"
    "    /api/heatmap?job=J[&bins=N]                         rank x time bins (1..4096, default 60)\n"
    "    /api/findings?job=J                                 the knowledge base's findings and hints\n"
    "    /api/blame?aid=A | ?job=J                           siox blame A --json, siox blame --job J --json\n"
    "    /api/graph?aid=A                                    siox graph A --format json\n"
    "    /api/top?job=J[&n=N]                                siox top --job J --roots -n N --json\n"
    "    /api/component?component=PATTERN[&since=T]          siox capacity --component PATTERN --json\n"
    "  A malformed query is 400, an unknown activity or job 404, each with\n"
    "  {\"error\": message}.\n"
    "\n"
    "ACCESS\n"
    "  The server reads the warehouse as the user who runs it: every viewer sees\n"
    "  what that user may see (row-level security; see siox-server's README, \"Who\n"
    "  sees what\"). So it listens on loopback by default. Beyond loopback it\n"
    "  needs an access rule: --allow names the client networks served (loopback\n"
    "  always is); connections from anywhere else are refused at accept. There is\n"
    "  no TLS and no login: use it on a trusted network, or tunnel loopback (ssh\n"
    "  -L 8080:127.0.0.1:8080 login-node).\n"
    "\n"
    "OPTIONS\n"
    "  --listen HOST:PORT  address to serve on (default 127.0.0.1:8080; an IPv4\n"
    "                   address or [IPv6]; port 0 picks a free one)\n"
    "  --allow CIDR[,CIDR...]  the client networks served besides loopback, e.g.\n"
    "                   10.1.0.0/16; required when HOST is not a loopback address\n"
    "  --threads N      request threads (default 4, 1..64)\n"
    "\n"
    "EXIT STATUS\n"
    "  0 stopped by a signal; 1 cannot listen or reach the warehouse; 2 bad command\n"
    "  line (also: --listen beyond loopback without --allow).\n"
    "\n"
    "EXAMPLES\n"
    "  siox web                                  then open http://127.0.0.1:8080/\n"
    "  siox web --listen 10.1.2.3:8080 --allow 10.1.0.0/16\n";

static int parse(struct siox_cli *cli, const struct siox_cmd *self, int argc, char **argv, struct siox_web_opts *o) {
  enum { OPT_LISTEN = 0x200, OPT_ALLOW, OPT_THREADS };
  static const struct option opts[] = {{"listen", required_argument, NULL, OPT_LISTEN},
                                       {"allow", required_argument, NULL, OPT_ALLOW},
                                       {"threads", required_argument, NULL, OPT_THREADS},
                                       SIOX_GLOBAL_LONGOPTS,
                                       {0}};
  int c, rc;
  long n;
  while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
    switch (c) {
    case OPT_LISTEN: o->listen = optarg; break;
    case OPT_ALLOW: o->allow = optarg; break;
    case OPT_THREADS:
      if (siox_cli_parse_long(optarg, 1, 64, &n)) return siox_cli_usage(self, "--threads needs 1..64, not '%s'", optarg);
      o->threads = (int)n;
      break;
    default:
      if ((rc = siox_cli_common_opt(cli, self, c, argv)) >= 0) return rc;
    }
  }
  if (optind < argc) return siox_cli_usage(self, "unexpected argument '%s'", argv[optind]);
  return -1;
}

static int run(struct siox_cli *cli, const struct siox_cmd *self, int argc, char **argv) {
  struct siox_web_opts o = {.listen = "127.0.0.1:8080", .threads = 4};
  int rc = parse(cli, self, argc, argv, &o);
  if (rc >= 0) return rc;
  char conninfo[4096], err[2048];
  struct siox_wh *probe;
  /* reachable now, with the CLI's wording when not */
  if ((rc = siox_cli_open(cli, &probe)) != SIOX_EXIT_OK) return rc;
  siox_wh_close(probe);
  if (siox_cli_conninfo(cli, conninfo, sizeof(conninfo), err, sizeof(err))) {
    fprintf(stderr, "siox: %s\n", err);
    return SIOX_EXIT_FAIL;
  }
  o.conninfo = conninfo;
  rc = siox_web_run(&o, err, sizeof(err));
  if (rc == -EINVAL || rc == -EPERM) return siox_cli_usage(self, "%s", err);
  if (rc) {
    fprintf(stderr, "siox web: %s\n", err);
    return SIOX_EXIT_FAIL;
  }
  return SIOX_EXIT_OK;
}

const struct siox_cmd siox_cmd_web = {"web", "explore the warehouse in a browser (HTTP server)", help, run};
