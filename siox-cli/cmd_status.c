/*
 * `siox status`: is SIOX healthy here? Asks the node daemon and the server
 * for their counters (status_probe.c) and counts the warehouse, including
 * what clients dropped. Each part is reported on its own; the exit status
 * says whether all of them answered.
 */
#include <inttypes.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <string.h>

#include "json_out.h"
#include "loss_view.h"
#include "status_probe.h"
#include "session.h"
#include "warehouse.h"

static const char help[] =
    "NAME\n"
    "  siox status - health of the node daemon, the server and the warehouse\n"
    "\n"
    "SYNOPSIS\n"
    "  siox status [--socket PATH] [--server HOST:PORT] [--job ID] [--json]\n"
    "\n"
    "DESCRIPTION\n"
    "  Asks three parts of SIOX how they are, each on its own:\n"
    "  daemon     the node's siox-daemon, over its unix socket: uptime and counters\n"
    "             (clients, batches, spool, ...)\n"
    "  server     siox-server, over TCP: uptime and counters (ingest, links, ...);\n"
    "             the request carries a MUNGE credential of the caller (munged's\n"
    "             socket: $SIOX_MUNGE_SOCKET, else the default), without which the\n"
    "             server shows only its health (db_ok). With $SIOX_TLS_CA set (a\n"
    "             PEM CA file) it speaks TLS, for a server run with --tls-cert\n"
    "  warehouse  the PostgreSQL warehouse: activities, processes, nodes, daemons,\n"
    "             implicit links, and how complete the traces are: what the\n"
    "             processes made, what was stored, and what was dropped where:\n"
    "               client buffer      the process's buffer was full (or a call\n"
    "                                  was refused: stack too deep, ...)\n"
    "               client exit        still held at exit, no daemon took it\n"
    "               daemon spool       the daemon's spool was full (server away)\n"
    "               daemon validation  the daemon refused a malformed record\n"
    "             \"unaccounted\" is made - stored - dropped: 0 when every\n"
    "             activity is either stored or counted. Processes that have not\n"
    "             reported their counters yet are listed apart.\n"
    "             Also: activities in batches daemons quarantined (the server\n"
    "             rejected them; schema 012).\n"
    "  A part that does not answer is shown as \"unreachable: <reason>\"; the\n"
    "  others are still shown. A part that answers but cannot do its work is\n"
    "  shown as \"DEGRADED: <reason>\" (the server, while its database is\n"
    "  unreachable: it reconnects by itself, and restarts its embedded\n"
    "  PostgreSQL when that died; see its db_ok, db_reconnects, db_restarts).\n"
    "\n"
    "OPTIONS\n"
    "  --socket PATH       the daemon's socket (default $SIOX_SOCKET, else\n"
    "                      " SIOX_DEFAULT_SOCKET ")\n"
    "  --server HOST:PORT  the server (default " SIOX_DEFAULT_SERVER ")\n"
    "  --job ID            also account for the processes of job ID alone\n"
    "                      (JSON: .job)\n"
    "\n"
    "EXIT STATUS\n"
    "  0 all three parts answered and are healthy; 1 at least one is unreachable or\n"
    "  degraded; 2 bad command line.\n"
    "\n"
    "EXAMPLES\n"
    "  siox status\n"
    "  siox status --socket /tmp/siox.sock --server 10.0.0.5:7410 --data-dir /srv/siox\n"
    "  siox status --json | jq '.warehouse.loss'\n"
    "  siox status --job 4711 --json | jq '.job.unaccounted'\n";

struct status_args {
  const char *socket, *server, *job;
};

static int parse(struct siox_cli *cli, const struct siox_cmd *self, int argc, char **argv, struct status_args *a) {
  enum { OPT_SOCKET = 0x200, OPT_SERVER, OPT_JOB };
  static const struct option opts[] = {{"socket", required_argument, NULL, OPT_SOCKET},
                                       {"server", required_argument, NULL, OPT_SERVER},
                                       {"job", required_argument, NULL, OPT_JOB},
                                       SIOX_GLOBAL_LONGOPTS,
                                       {0}};
  const char *env = getenv("SIOX_SOCKET");
  int c, rc;
  a->socket = env && *env ? env : SIOX_DEFAULT_SOCKET;
  a->server = SIOX_DEFAULT_SERVER;
  a->job = NULL;
  while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
    if (c == OPT_SOCKET)
      a->socket = optarg;
    else if (c == OPT_SERVER)
      a->server = optarg;
    else if (c == OPT_JOB)
      a->job = optarg;
    else if ((rc = siox_cli_common_opt(cli, self, c, argv)) >= 0)
      return rc;
  }
  if (optind < argc) return siox_cli_usage(self, "unexpected argument '%s'", argv[optind]);
  return -1;
}

/* ---- one part each: prints text, or adds to the JSON object ------------ */

/* A part that answers is healthy unless it says otherwise (health is empty
 * from older versions). The server says so when its database is away. */
static bool healthy(const Siox__StatusReply *r) { return !r->health || !*r->health || strcmp(r->health, "ok") == 0; }

static json_object *reply_json(const Siox__StatusReply *r) {
  json_object *o = json_object_new_object(), *cs = json_object_new_object();
  siox_json_str(o, "role", r->role);
  siox_json_str(o, "health", healthy(r) ? "ok" : r->health);
  json_object_object_add(o, "healthy", json_object_new_boolean(healthy(r)));
  siox_json_int(o, "uptime_s", (int64_t)r->uptime_s);
  for (size_t i = 0; i < r->n_counters; i++) siox_json_int(cs, r->counters[i]->name, r->counters[i]->value);
  json_object_object_add(o, "counters", cs);
  return o;
}

static void reply_text(const char *label, const char *addr, const Siox__StatusReply *r) {
  uint64_t up = r->uptime_s;
  char state[512] = "ok";
  if (!healthy(r)) snprintf(state, sizeof state, "DEGRADED: %s", r->health);
  printf("%-10s %s: %s (%s), up %" PRIu64 "d %02" PRIu64 ":%02" PRIu64 ":%02" PRIu64 "\n", label, addr, state,
         r->role && *r->role ? r->role : "?", up / 86400, up / 3600 % 24, up / 60 % 60, up % 60);
  for (size_t i = 0; i < r->n_counters; i++)
    printf("%-10s   %-32s %" PRId64 "\n", "", r->counters[i]->name, r->counters[i]->value);
  if (r->role && !strcmp(r->role, "server") && r->n_counters <= 1)
    printf("%-10s   (other counters only for a MUNGE-authenticated caller: is munged running?"
           " SIOX_MUNGE_SOCKET names its socket)\n", "");
}

/* Daemon or server. Returns true when it answered and is healthy. */
static bool probe_part(const struct siox_cli *cli, json_object *all, const char *label, const char *addr,
                       Siox__StatusReply *(*probe)(const char *, char *, size_t)) {
  char err[1024];
  Siox__StatusReply *r = probe(addr, err, sizeof(err));
  if (cli->json) {
    json_object *o = r ? reply_json(r) : json_object_new_object();
    siox_json_str(o, "address", addr);
    json_object_object_add(o, "ok", json_object_new_boolean(r != NULL));
    if (!r) siox_json_str(o, "error", err);
    json_object_object_add(all, label, o);
  } else if (r) {
    reply_text(label, addr, r);
  } else {
    printf("%-10s %s: unreachable: %s\n", label, addr, err);
  }
  bool ok = r && healthy(r);
  if (r) siox__status_reply__free_unpacked(r, NULL);
  return ok;
}

static void counts_out(const struct siox_cli *cli, json_object *o, const struct siox_wh_counts *n) {
  if (!cli->json) {
    printf("%-10s ok: %" PRId64 " activities, %" PRId64 " processes, %" PRId64 " nodes, %" PRId64 " daemons, %" PRId64
           " implicit links; %" PRId64 " activities dropped by clients, %" PRId64 " by daemon validation, %" PRId64
           " in quarantined batches\n",
           "warehouse", n->activities, n->processes, n->nodes, n->daemons, n->implicit_links, n->dropped,
           n->dropped_validation, n->quarantined);
    return;
  }
  siox_json_int(o, "activities", n->activities);
  siox_json_int(o, "processes", n->processes);
  siox_json_int(o, "nodes", n->nodes);
  siox_json_int(o, "daemons", n->daemons);
  siox_json_int(o, "implicit_links", n->implicit_links);
  siox_json_int(o, "dropped", n->dropped);
  siox_json_int(o, "dropped_validation", n->dropped_validation);
  siox_json_int(o, "quarantined", n->quarantined);
}

/* The completeness of everything (into the warehouse object, or a text
 * line), and of one job (top-level "job", or a line) when asked. */
static void loss_out(const struct siox_cli *cli, json_object *all, json_object *o, const char *job,
                     const struct siox_wh_loss *l, const struct siox_wh_loss *lj) {
  if (!cli->json) {
    siox_loss_text(stdout, "           traces:", l);
    if (job) {
      char label[300];
      snprintf(label, sizeof label, "job %s:", job);
      siox_loss_text(stdout, label, lj);
    }
    return;
  }
  json_object_object_add(o, "loss", siox_wh_loss_json(l));
  if (job) {
    json_object *j = siox_wh_loss_json(lj);
    siox_json_str(j, "id", job);
    json_object_object_add(all, "job", j);
  }
}

static bool warehouse_part(const struct siox_cli *cli, json_object *all, const char *job) {
  char err[2048];
  struct siox_wh_counts n;
  struct siox_wh_loss l, lj;
  struct siox_wh *wh = siox_cli_connect(cli, err, sizeof(err));
  PGconn *c = siox_wh_pg(wh);
  char lerr[512] = "";
  bool ok = c && siox_wh_counts(c, &n, err, sizeof(err)) == 0;
  int lrc = ok ? siox_wh_loss(c, NULL, 0, &l, lerr, sizeof lerr) : -EIO;
  if (ok && lrc == 0 && job) lrc = siox_wh_loss(c, job, 0, &lj, lerr, sizeof lerr);
  if (ok && lrc != 0 && lrc != -ENOTSUP) /* an older warehouse has counts but no breakdown */
    ok = false, snprintf(err, sizeof err, "%s", lerr);
  siox_wh_close(wh);
  json_object *o = json_object_new_object();
  json_object_object_add(o, "ok", json_object_new_boolean(ok));
  if (ok) {
    counts_out(cli, o, &n);
    if (lrc == 0) loss_out(cli, all, o, job, &l, &lj);
    else if (cli->json) siox_json_str(o, "loss_error", lerr);
    else printf("           traces: %s\n", lerr);
  }
  else if (cli->json)
    siox_json_str(o, "error", err);
  else
    printf("%-10s unreachable: %s\n", "warehouse", err);
  if (cli->json)
    json_object_object_add(all, "warehouse", o);
  else
    json_object_put(o);
  return ok;
}

static int run(struct siox_cli *cli, const struct siox_cmd *self, int argc, char **argv) {
  struct status_args a;
  int rc = parse(cli, self, argc, argv, &a);
  if (rc >= 0) return rc;
  json_object *all = cli->json ? json_object_new_object() : NULL;
  bool ok = probe_part(cli, all, "daemon", a.socket, siox_probe_daemon);
  ok &= probe_part(cli, all, "server", a.server, siox_probe_server);
  ok &= warehouse_part(cli, all, a.job);
  if (all) {
    json_object_object_add(all, "ok", json_object_new_boolean(ok));
    siox_json_print(all);
  }
  return ok ? SIOX_EXIT_OK : SIOX_EXIT_FAIL;
}

const struct siox_cmd siox_cmd_status = {"status", "health of the node daemon, the server and the warehouse", help, run};
