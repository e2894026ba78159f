/*
 * Command-line parsing for siox-server (see options.h); main.c acts on the
 * result. Also holds the --help text, written as a short man page.
 */
#include "options.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "siox_hostport.h"

const char siox_server_usage[] =
    "NAME\n"
    "    siox-server - SIOX ingest and causal-matching server\n"
    "\n"
    "SYNOPSIS\n"
    "    siox-server [--listen HOST:PORT] [--data-dir DIR | --db CONNINFO [--db-passfile FILE]]\n"
    "                [--admin-group GROUP]\n"
    "                [--auth munge|token|none] [--munge-socket PATH]\n"
    "                [--token-file FILE] [--tls-cert FILE --tls-key FILE]\n"
    "                [--insecure] [--pid-file FILE] [--pg-bindir DIR]\n"
    "                [--match-ms N] [--late-ms N] [--match-memory on|off]\n"
    "                [--match-window-ms N]\n"
    "                [--analyze-idle S] [--analyze-every S] [--no-analyze]\n"
    "                [--memory-mb N] [--shard K/N [--shard-peer J=CONNINFO ...]]\n"
    "    siox-server --coordinator --shard-db CONNINFO [--shard-db CONNINFO ...]\n"
    "                [--data-dir DIR] [--pid-file FILE] [--pg-bindir DIR]\n"
    "\n"
    "DESCRIPTION\n"
    "    Accepts batches of activities from siox-daemon over TCP, stores them\n"
    "    idempotently in a PostgreSQL warehouse (one transaction and one Ack per\n"
    "    batch), resolves descriptors to objects and links sends to receives\n"
    "    across processes and hosts (table causal_links). Runs in the\n"
    "    foreground and logs to stderr. SIGINT or SIGTERM stop it cleanly.\n"
    "\n"
    "    Without --db it runs a private PostgreSQL cluster in DIR/pg (initdb on\n"
    "    first start, unix socket DIR/pg/run only, no TCP), reuses a postmaster\n"
    "    left running by a killed server, and stops it on exit. When run as\n"
    "    root, PostgreSQL runs as the 'postgres' user. Either way the libpq\n"
    "    conninfo of the warehouse is written to DIR/conninfo for `siox`.\n"
    "\n"
    "ACCESS\n"
    "    Every user reads only their own processes, jobs and activities, plus\n"
    "    the server-side activities (bricks, devices) causally below them, and\n"
    "    the per-component aggregates (row-level security, schema 011). The\n"
    "    embedded cluster takes peer authentication on DIR/socket (reachable by\n"
    "    every user): Unix user alice logs in as role alice, which the server\n"
    "    creates (member of siox_reader) when it first stores one of alice's\n"
    "    processes. DIR/conninfo (mode 0644) holds no password and no user.\n"
    "    Roles: siox_writer (ingest), siox_reader (users), siox_admin (all).\n"
    "\n"
    "OPTIONS\n"
    "    --listen HOST:PORT   address for daemons and status queries\n"
    "                         (default " SIOX_SERVER_DEFAULT_LISTEN ")\n"
    "    --data-dir DIR       state directory (default " SIOX_SERVER_DEFAULT_DATA_DIR ")\n"
    "    --db CONNINFO        use this PostgreSQL database instead of the\n"
    "                         embedded one (libpq conninfo or URI); the schema\n"
    "                         is created or upgraded on start (PostgreSQL 13 or\n"
    "                         later with the contrib extension btree_gist, which\n"
    "                         the database owner may create)\n"
    "    --db-passfile FILE   the password for --db, in libpq's .pgpass format\n"
    "                         (host:port:db:user:password lines, mode 0600);\n"
    "                         a password in CONNINFO itself works too but is\n"
    "                         never written to DIR/conninfo\n"
    "    --admin-group GROUP  Unix group whose members read every user's rows\n"
    "                         (warehouse role siox_admin); default: none, so\n"
    "                         only root, postgres and the server's own user\n"
    "                         (the embedded cluster's superusers) see all\n"
    "    --auth METHOD        how daemons prove who they are (default munge,\n"
    "                         or token when only --token-file is given):\n"
    "                         munge  the Hello carries a MUNGE credential bound\n"
    "                                to its daemon id and hostname; the uid and\n"
    "                                origin address MUNGE vouches for become the\n"
    "                                daemon id's owner (needs a running munged\n"
    "                                with the cluster's key)\n"
    "                         token  the Hello carries the daemon id's own token\n"
    "                                from --token-file\n"
    "                         none   no authentication at all: anyone who reaches\n"
    "                                the port can send as any daemon (tests only;\n"
    "                                logged as a warning)\n"
    "                         A daemon id belongs to the first identity that\n"
    "                         stored a batch under it (table daemons, columns\n"
    "                         owner_*); a Hello from another identity is refused.\n"
    "    --munge-socket PATH  munged's socket (default: libmunge's,\n"
    "                         /run/munge/munge.socket.2)\n"
    "    --token-file FILE    --auth token's secrets: one 'DAEMON_ID TOKEN' line\n"
    "                         per daemon (DAEMON_ID: hex, as in the daemon's\n"
    "                         STATE/daemon.id; '#' starts a comment). A token\n"
    "                         opens a session only for its own daemon id. The\n"
    "                         old one-shared-token file is refused.\n"
    "    --tls-cert FILE      PEM certificate (chain) for TLS; with --tls-key,\n"
    "    --tls-key FILE       every connection must speak TLS (OpenSSL)\n"
    "    --insecure           allow listening beyond loopback without TLS\n"
    "                         (otherwise such a server refuses to start)\n"
    "    --pid-file FILE      write the server's pid to FILE\n"
    "    --pg-bindir DIR      where initdb, pg_ctl and postgres live (default:\n"
    "                         `pg_config --bindir`, else /usr/lib/postgresql/15/bin)\n"
    "    --match-ms N         run the implicit-link matcher every N ms (default 500)\n"
    "    --late-ms N          link a receive that starts up to N ms after its\n"
    "                         sender ended (write-behind), with confidence <= 0.2\n"
    "                         and flag 'after-parent' (default 2000; 0: never)\n"
    "    --match-memory on|off\n"
    "                         on (default): link remote calls at ingest, in a\n"
    "                         window of the last 30 s of data (at most 512k\n"
    "                         calls, about 60 MB) held in memory; the periodic\n"
    "                         SQL matcher takes only what the window cannot\n"
    "                         decide (a sender that arrives after the window\n"
    "                         has moved on, calls stored before the server\n"
    "                         started). off: every link is made by the SQL\n"
    "                         matcher (the same rules; slower: for comparison)\n"
    "    --match-window-ms N  how much data time the in-memory window keeps\n"
    "                         (default 30000, 100..600000): a receive whose\n"
    "                         sender arrives later than that (a spooling\n"
    "                         daemon) is linked by the SQL matcher instead\n"
    "    --analyze-idle S     analyse a job (knowledge base: findings and MPI-IO\n"
    "                         hint sets) once it has been quiet S seconds, i.e.\n"
    "                         it ended (default 5; 1..86400)\n"
    "    --analyze-every S    re-analyse a job that is still running every S\n"
    "                         seconds, so long jobs get hints early (default 60)\n"
    "    --no-analyze         run no analyses (no thread; `siox hints --analyze`\n"
    "                         still works on demand). Analyses run on a thread and\n"
    "                         database connection of their own, never on ingest;\n"
    "                         after them it folds the baselines and capacity.\n"
    "    --memory-mb N        bound the memory that peers can make the server\n"
    "                         hold (default 512, at least 256): N/2 for decoding\n"
    "                         batches (4 at once, each refused beyond N/8 for\n"
    "                         lz4 output, protobuf and the decoded block; a\n"
    "                         64k-activity batch with 8 attributes needs 32 MiB),\n"
    "                         N/8 for frames larger than 128 KiB being\n"
    "                         received, N/4 for connections\n"
    "                         (192 KiB each; the connection limit is the smaller\n"
    "                         of N/4 / 192 KiB and the fd limit - 64). A Hello\n"
    "                         is due within 10 s and may be at most 64 KiB; a\n"
    "                         frame must complete within 30 s of reading; a\n"
    "                         peer with 64 KiB of unread replies is not read.\n"
    "                         When connections are at the limit, the oldest\n"
    "                         one without a Hello is closed to admit a new one;\n"
    "                         one address may hold 64 without a Hello.\n"
    "                         PostgreSQL's own memory is not part of N.\n"
    "    --shard K/N          this server's warehouse is shard K of a site of N\n"
    "                         (1 <= K <= N <= 127): its ids (processes,\n"
    "                         nodes, objects, links, ...) are drawn from shard\n"
    "                         K's own range, so that rows of all shards are\n"
    "                         unique together, and schema siox_shard shows its\n"
    "                         tables to the coordinator. A shard keeps its K\n"
    "                         for life and starts from an empty warehouse.\n"
    "                         Daemons pick their server with --server A,B,...\n"
    "                         (daemon id modulo the count; siox-daemon --help)\n"
    "    --shard-peer J=CONNINFO  with --shard K/N: shard J's database (libpq\n"
    "                         conninfo, as this server reaches it). Repeat\n"
    "                         for every other shard. Remote calls named by a\n"
    "                         global descriptor (gfid, path) belong to shard\n"
    "                         1 + fnv1a(type, value) mod N; those another\n"
    "                         shard owns are forwarded to it (an outbox in\n"
    "                         this warehouse, delivered exactly once), so a\n"
    "                         client and a brick recorded on different shards\n"
    "                         are linked on the owner (by the SQL matcher:\n"
    "                         the in-memory one leaves what this shard owns)\n"
    "    --coordinator        do not serve daemons: run the coordinator, the\n"
    "                         one database where `siox` sees every shard. Its\n"
    "                         own PostgreSQL runs in DIR/pg as the embedded one\n"
    "                         does (or --db). At start it migrates each shard\n"
    "                         in turn, then rebuilds the coordinator in one\n"
    "                         transaction: per warehouse table a parent\n"
    "                         partitioned on the shard number whose partitions\n"
    "                         are postgres_fdw foreign tables on the shards\n"
    "                         (a failure leaves the previous build; starting\n"
    "                         again resumes). It then waits for SIGTERM and\n"
    "                         stops its PostgreSQL. DIR/conninfo is for\n"
    "                         admins only (user postgres): the coordinator\n"
    "                         reads the shards as their superuser. A query\n"
    "                         that needs a shard that is down fails, naming\n"
    "                         it (could not connect to server \"siox_shard_K\").\n"
    "    --shard-db CONNINFO  with --coordinator: a shard's database, as the\n"
    "                         coordinator's PostgreSQL reaches it (libpq\n"
    "                         conninfo; user and password go to its user\n"
    "                         mapping, default user postgres). For an embedded\n"
    "                         shard: \"host=SHARDDIR/pg/run dbname=siox\".\n"
    "                         Repeat for each shard; their numbers come from\n"
    "                         the shards themselves\n"
    "    -h, --help           show this text\n"
    "\n"
    "PROTOCOL\n"
    "    Frames of protocol/siox_frame.h carrying protobuf messages of\n"
    "    protocol/siox.proto (inside TLS with --tls-cert). A daemon sends Hello\n"
    "    first, authenticated as --auth says, and gets HelloReply {acked_seq};\n"
    "    each Batch is answered with Ack{seq} once committed; a batch with\n"
    "    seq <= acked_seq is acknowledged again and not stored twice. Ping gets\n"
    "    Pong (CLOCK_REALTIME). StatusRequest gets StatusReply with every\n"
    "    counter for an authenticated peer (an accepted Hello, or a request\n"
    "    signed with MUNGE as `siox status` does), else db_ok alone. Any\n"
    "    malformed frame or failed authentication gets an Error{reason}, is\n"
    "    logged, and that connection is closed.\n"
    "\n"
    "FILES\n"
    "    DIR/conninfo         libpq conninfo of the warehouse, for `siox`\n"
    "    DIR/socket           the embedded cluster's socket for users\n"
    "    DIR/pg               embedded cluster (DIR/pg/log: its log)\n"
    "\n"
    "EXIT STATUS\n"
    "    0 after a clean stop, 1 on a startup failure, 2 on a usage error.\n";

static int parse_int(const char *s, int lo, int hi, int *out) {
  char *end;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (errno || *end || end == s || v < lo || v > hi) return -EINVAL;
  *out = (int)v;
  return 0;
}

/* K/N, 1 <= K <= N <= SIOX_SERVER_SHARDS_MAX. */
static int parse_shard(const char *s, struct siox_server_options *o) {
  char k[16];
  const char *slash = strchr(s, '/');
  if (!slash || (size_t)(slash - s) >= sizeof k) return -EINVAL;
  memcpy(k, s, (size_t)(slash - s));
  k[slash - s] = '\0';
  if (parse_int(slash + 1, 1, SIOX_SERVER_SHARDS_MAX, &o->nshards) != 0) return -EINVAL;
  return parse_int(k, 1, o->nshards, &o->shard);
}

/* J=CONNINFO: shard J's database; each J once. */
static int parse_peer(const char *s, struct siox_server_options *o) {
  char j[16];
  const char *eq = strchr(s, '=');
  int k;
  if (!eq || (size_t)(eq - s) >= sizeof j || !eq[1]) return -EINVAL;
  memcpy(j, s, (size_t)(eq - s));
  j[eq - s] = '\0';
  if (parse_int(j, 1, SIOX_SERVER_SHARDS_MAX, &k) != 0 || o->shard_peer[k]) return -EINVAL;
  o->shard_peer[k] = eq + 1;
  o->n_shard_peer++;
  return 0;
}

static void defaults(struct siox_server_options *o) {
  memset(o, 0, sizeof *o);
  siox_hostport_parse(SIOX_SERVER_DEFAULT_LISTEN, strlen(SIOX_SERVER_DEFAULT_LISTEN), o->host, sizeof o->host, &o->port);
  o->data_dir = SIOX_SERVER_DEFAULT_DATA_DIR;
  o->match_ms = 500;
  o->late_ms = 2000;
  o->match_memory = 1;
  o->match_window_ms = 30000;
  o->analyze_idle_s = 5;
  o->analyze_every_s = 60;
  o->memory_mb = 512;
}

int siox_server_options_parse(int argc, char **argv, struct siox_server_options *o, char *err, unsigned errcap) {
  static const struct option longopts[] = {
      {"listen", required_argument, 0, 'l'},   {"data-dir", required_argument, 0, 'd'},
      {"db", required_argument, 0, 'D'},       {"token-file", required_argument, 0, 't'},
      {"pid-file", required_argument, 0, 'p'}, {"pg-bindir", required_argument, 0, 'B'},
      {"match-ms", required_argument, 0, 'm'}, {"late-ms", required_argument, 0, 'L'},
      {"analyze-idle", required_argument, 0, 'I'}, {"analyze-every", required_argument, 0, 'E'},
      {"no-analyze", no_argument, 0, 'N'},
      {"db-passfile", required_argument, 0, 'P'}, {"admin-group", required_argument, 0, 'G'},
      {"auth", required_argument, 0, 'A'},     {"munge-socket", required_argument, 0, 'M'},
      {"tls-cert", required_argument, 0, 'C'}, {"tls-key", required_argument, 0, 'K'},
      {"insecure", no_argument, 0, 'S'},
      {"memory-mb", required_argument, 0, 'Y'}, {"match-memory", required_argument, 0, 'W'},
      {"match-window-ms", required_argument, 0, 'w'},
      {"shard", required_argument, 0, 'k'},   {"coordinator", no_argument, 0, 'c'},
      {"shard-db", required_argument, 0, 's'}, {"shard-peer", required_argument, 0, 'J'},
      {"help", no_argument, 0, 'h'},
      {0, 0, 0, 0}};
  defaults(o);
  optind = 0; /* glibc: full re-initialisation, so parsing can run twice */
  opterr = 0;
  int c, auth_given = 0;
  while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
    switch (c) {
    case 'l':
      if (siox_hostport_parse(optarg, strlen(optarg), o->host, sizeof o->host, &o->port) != 0)
        return snprintf(err, errcap, "--listen: expected HOST:PORT, got '%s'", optarg), -EINVAL;
      break;
    case 'd': o->data_dir = optarg; break;
    case 'D': o->db = optarg; break;
    case 't': o->token_file = optarg; break;
    case 'p': o->pid_file = optarg; break;
    case 'B': o->pg_bindir = optarg; break;
    case 'm':
      if (parse_int(optarg, 10, 3600000, &o->match_ms) != 0)
        return snprintf(err, errcap, "--match-ms: expected 10..3600000, got '%s'", optarg), -EINVAL;
      break;
    case 'L':
      if (parse_int(optarg, 0, 60000, &o->late_ms) != 0)
        return snprintf(err, errcap, "--late-ms: expected 0..60000, got '%s'", optarg), -EINVAL;
      break;
    case 'I':
      if (parse_int(optarg, 1, 86400, &o->analyze_idle_s) != 0)
        return snprintf(err, errcap, "--analyze-idle: expected 1..86400 seconds, got '%s'", optarg), -EINVAL;
      break;
    case 'E':
      if (parse_int(optarg, 1, 86400, &o->analyze_every_s) != 0)
        return snprintf(err, errcap, "--analyze-every: expected 1..86400 seconds, got '%s'", optarg), -EINVAL;
      break;
    case 'N': o->no_analyze = 1; break;
    case 'P': o->db_passfile = optarg; break;
    case 'G': o->admin_group = optarg; break;
    case 'A':
      auth_given = 1;
      if (!strcmp(optarg, "munge")) o->auth = SIOX_AUTH_MUNGE;
      else if (!strcmp(optarg, "token")) o->auth = SIOX_AUTH_TOKEN;
      else if (!strcmp(optarg, "none")) o->auth = SIOX_AUTH_NONE;
      else return snprintf(err, errcap, "--auth: expected munge, token or none, got '%s'", optarg), -EINVAL;
      break;
    case 'M': o->munge_socket = optarg; break;
    case 'C': o->tls_cert = optarg; break;
    case 'K': o->tls_key = optarg; break;
    case 'S': o->insecure = 1; break;
    case 'Y':
      if (parse_int(optarg, 256, 1048576, &o->memory_mb) != 0)
        return snprintf(err, errcap, "--memory-mb: expected 256..1048576 MiB, got '%s'", optarg), -EINVAL;
      break;
    case 'W':
      if (!strcmp(optarg, "on")) o->match_memory = 1;
      else if (!strcmp(optarg, "off")) o->match_memory = 0;
      else return snprintf(err, errcap, "--match-memory: expected on or off, got '%s'", optarg), -EINVAL;
      break;
    case 'w':
      if (parse_int(optarg, 100, 600000, &o->match_window_ms) != 0)
        return snprintf(err, errcap, "--match-window-ms: expected 100..600000, got '%s'", optarg), -EINVAL;
      break;
    case 'k':
      if (parse_shard(optarg, o) != 0)
        return snprintf(err, errcap, "--shard: expected K/N with 1 <= K <= N <= %d, got '%s'", SIOX_SERVER_SHARDS_MAX,
                        optarg),
               -EINVAL;
      break;
    case 'c': o->coordinator = 1; break;
    case 's':
      if (o->n_shard_db == SIOX_SERVER_SHARDS_MAX)
        return snprintf(err, errcap, "--shard-db: at most %d shards", SIOX_SERVER_SHARDS_MAX), -EINVAL;
      o->shard_db[o->n_shard_db++] = optarg;
      break;
    case 'J':
      if (parse_peer(optarg, o) != 0)
        return snprintf(err, errcap, "--shard-peer: expected J=CONNINFO with 1 <= J <= %d, given once, got '%s'",
                        SIOX_SERVER_SHARDS_MAX, optarg),
               -EINVAL;
      break;
    case 'h': o->help = 1; break;
    default:
      return snprintf(err, errcap, "unknown or incomplete option '%s'", argv[optind - 1]), -EINVAL;
    }
  }
  if (optind < argc) return snprintf(err, errcap, "unexpected argument '%s'", argv[optind]), -EINVAL;
  if (o->db_passfile && !o->db) return snprintf(err, errcap, "--db-passfile needs --db"), -EINVAL;
  if (!auth_given && o->token_file) o->auth = SIOX_AUTH_TOKEN;
  if (o->auth == SIOX_AUTH_TOKEN && !o->token_file)
    return snprintf(err, errcap, "--auth token needs --token-file"), -EINVAL;
  if (!o->tls_cert != !o->tls_key) return snprintf(err, errcap, "--tls-cert and --tls-key go together"), -EINVAL;
  if (o->coordinator && !o->n_shard_db) return snprintf(err, errcap, "--coordinator needs --shard-db"), -EINVAL;
  if (!o->coordinator && o->n_shard_db) return snprintf(err, errcap, "--shard-db needs --coordinator"), -EINVAL;
  if (o->coordinator && o->shard) return snprintf(err, errcap, "--coordinator and --shard exclude each other"), -EINVAL;
  if (o->n_shard_peer && !o->shard) return snprintf(err, errcap, "--shard-peer needs --shard"), -EINVAL;
  for (int j = o->nshards + 1; o->shard && j <= SIOX_SERVER_SHARDS_MAX; j++)
    if (o->shard_peer[j]) return snprintf(err, errcap, "--shard-peer %d: the site has %d shards", j, o->nshards), -EINVAL;
  if (o->shard && o->shard_peer[o->shard])
    return snprintf(err, errcap, "--shard-peer %d: that is this shard", o->shard), -EINVAL;
  /* The calls a shard without a peer owns would wait in the outbox for ever. */
  if (o->n_shard_peer && o->n_shard_peer != o->nshards - 1)
    return snprintf(err, errcap, "--shard-peer: %d given, one for each of the site's %d other shards needed",
                    o->n_shard_peer, o->nshards - 1),
           -EINVAL;
  if (!o->data_dir[0]) return snprintf(err, errcap, "--data-dir must not be empty"), -EINVAL;
  return 0;
}
