/*
 * siox-daemon entry point: parses the command line, runs the daemon on the
 * default libuv loop in the foreground (logs to stderr), and exits 0 after
 * an orderly SIGTERM/SIGINT shutdown.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"

static const char usage[] =
    "NAME\n"
    "    siox-daemon - SIOX node daemon: collects local trace records and\n"
    "    forwards them to siox-server\n"
    "\n"
    "SYNOPSIS\n"
    "    siox-daemon [options]\n"
    "\n"
    "DESCRIPTION\n"
    "    One siox-daemon runs per node, in the foreground, logging to stderr.\n"
    "    Instrumented processes (libsiox-client) connect to its unix socket and\n"
    "    send their records; the daemon identifies each client by SO_PEERCRED\n"
    "    (pid, uid) and stamps the host name, converts client TSC timestamps to\n"
    "    CLOCK_REALTIME nanoseconds, merges all clients into batches, writes\n"
    "    every sealed batch to a disk spool and sends it to siox-server over\n"
    "    TCP. A batch leaves the spool only when the server acknowledges it;\n"
    "    spooled batches are replayed in order after a server outage or a\n"
    "    daemon restart, so no accepted activity is lost. When the spool is\n"
    "    full the daemon keeps reading its clients but discards their\n"
    "    activities, counting them per process (\"daemon spool\" in siox status);\n"
    "    an accepted record is journaled (DIR/journal) before it is consumed, so\n"
    "    a kill -9 of the daemon loses none.\n"
    "\n"
    "OPTIONS\n"
    "    --socket PATH\n"
    "        Unix socket for clients. Default: $SIOX_SOCKET, else\n"
    "        /run/siox/daemon.sock.\n"
    "    --server HOST:PORT[,HOST:PORT...]\n"
    "        siox-server address. Default: 127.0.0.1:7410. IPv6 as [ADDR]:PORT.\n"
    "        A site of several servers (shards, siox-server --shard K/N) lists\n"
    "        them all, in the same order on every node: this daemon sends to\n"
    "        entry number (daemon id mod count), counting from 0, where the\n"
    "        daemon id is the hexadecimal number in DIR/daemon.id; it is\n"
    "        logged at start. A daemon's batches are acknowledged by its own\n"
    "        server only: keep the list (its order and length) for the life\n"
    "        of the site. When that server is down, the daemon spools, as\n"
    "        with one server; it never sends elsewhere.\n"
    "    --state-dir DIR\n"
    "        Spool (DIR/spool/<seq>.sxb), daemon id (DIR/daemon.id) and the\n"
    "        highest acknowledged batch (DIR/seq). Default: /var/lib/siox/daemon.\n"
    "    --spool-max-mb N\n"
    "        Bound on the spool in MiB. Default: 1024.\n"
    "    --batch-activities N\n"
    "        Seal a batch once it holds N activities. Default: 65536.\n"
    "    --batch-ms N\n"
    "        ...or N milliseconds after its first record. Default: 200.\n"
    "    --auth munge|token|none\n"
    "        How the daemon proves its identity to the server (which must use\n"
    "        the same method). munge: each Hello carries a fresh MUNGE\n"
    "        credential whose payload names this daemon's id and host name;\n"
    "        the server learns the daemon's uid and host from munged, and the\n"
    "        daemon id then belongs to that identity. token: the Hello carries\n"
    "        the secret of --token-file, which the server's token file lists\n"
    "        for this daemon id (DIR/daemon.id). none: nothing (only a server\n"
    "        run with --auth none accepts it). Default: token when\n"
    "        --token-file is given, else munge.\n"
    "    --munge-socket PATH\n"
    "        munged's socket. Default: libmunge's (/run/munge/munge.socket.2).\n"
    "    --tls\n"
    "        Speak TLS to the server (OpenSSL; for a server started with\n"
    "        --tls-cert). Its certificate must verify against --tls-ca, else\n"
    "        the system's CAs, and name --server's host (name or address).\n"
    "    --tls-ca FILE\n"
    "        PEM CA certificate(s) for --tls; implies --tls.\n"
    "    --token-file F\n"
    "        This daemon's token (trailing newline dropped); the server's\n"
    "        token file holds the line 'DAEMON_ID TOKEN' for it.\n"
    "    --pid-file F\n"
    "        Write the daemon's pid to F (removed on exit).\n"
    "    --hints on|off\n"
    "        Serve MPI-IO hints to instrumented MPI_File_open calls that ask\n"
    "        (SIOX_HINTS=1 in the application, or `siox run --hints`): the\n"
    "        daemon forwards the question (executable, command line, file,\n"
    "        MPI-IO component) to siox-server, which answers from the\n"
    "        knowledge base. With off, every query is answered \"disabled\".\n"
    "        When the server is not connected the answer is \"server down\"\n"
    "        at once; an unanswered query gets it after 2 s. Default: on.\n"
    "    --hints-ttl S\n"
    "        Keep the server's answers for S seconds per (uid, executable,\n"
    "        arguments, file, component), so that the ranks of a job ask the\n"
    "        server once. 0 disables the cache. Default: 5.\n"
    "    --memory-mb N\n"
    "        Bound on what clients can make the daemon hold. Half of N is for\n"
    "        frames being received from clients, all clients together: frames\n"
    "        above 1 MiB (libsiox-client sends at most 256 KiB) may use half of\n"
    "        that and are refused beyond it (the client is closed); other frames\n"
    "        wait, unread, until buffers are freed. While clients wait or more\n"
    "        than half is in use, a frame not complete 30 s after it could be\n"
    "        read closes its client. Every refusal is logged (at most a line a\n"
    "        second) and counted in `siox status`. The rest of N covers the\n"
    "        open batch (--batch-activities) and its encoding.\n"
    "        Default: 256.\n"
    "    --test-clock-shift-ms N\n"
    "        FOR TESTING ONLY. Behave as on a host whose clock is wrong by N\n"
    "        milliseconds (-60000..60000, negative: behind): N is added to every\n"
    "        time the daemon converts from its clients (on such a host their\n"
    "        CLOCK_REALTIME readings are off by N too) and to the times it\n"
    "        reports in the ping exchange with siox-server. The server's offset\n"
    "        correction must then remove it: the tests of cross-host causality\n"
    "        use it to give daemons on one machine clocks that disagree. Never\n"
    "        set it on a real host. Default: 0.\n"
    "    --test-kill-after-frames N\n"
    "        FOR TESTING ONLY. Kill the daemon (SIGKILL, itself) right after\n"
    "        the client read in which it took its N-th new BATCH frame that\n"
    "        holds a running activity's records and no activity record: the\n"
    "        frame is journaled, its ACK not yet sent, so the client sends it\n"
    "        again to the next daemon (the tests of resent frames). Default: 0\n"
    "        (never).\n"
    "    --test-kill-after-seal\n"
    "        FOR TESTING ONLY. With --test-kill-after-frames: withhold the ACKs\n"
    "        from then on and kill the daemon once the batch holding that frame\n"
    "        is spooled and its journal removed.\n"
    "    --help\n"
    "        Show this text.\n"
    "\n"
    "SIGNALS\n"
    "    SIGTERM, SIGINT\n"
    "        Seal the open batch, spool it, try for up to 2 s to deliver every\n"
    "        spooled batch, then exit 0. What is not delivered stays spooled.\n"
    "\n"
    "STATUS\n"
    "    `siox status --socket PATH` shows clients, activities received,\n"
    "    batches sealed/acknowledged, spool size, server connection, clock\n"
    "    offset, rejected frames, client-side drops, and hint queries (all,\n"
    "    answered from the cache, forwarded to the server).\n"
    "\n"
    "EXIT STATUS\n"
    "    0 after a signal-initiated shutdown; 1 on a start-up error; 2 on a\n"
    "    usage error.\n";

enum {
  OPT_SOCKET = 256,
  OPT_SERVER,
  OPT_STATE,
  OPT_SPOOL,
  OPT_BATCH_ACT,
  OPT_BATCH_MS,
  OPT_TOKEN,
  OPT_AUTH,
  OPT_MUNGE_SOCKET,
  OPT_TLS,
  OPT_TLS_CA,
  OPT_PID,
  OPT_HINTS,
  OPT_HINTS_TTL,
  OPT_MEMORY,
  OPT_CLOCK_SHIFT,
  OPT_KILL_FRAMES,
  OPT_KILL_SEALED,
  OPT_HELP
};

static const struct option options[] = {
    {"socket", required_argument, 0, OPT_SOCKET},
    {"server", required_argument, 0, OPT_SERVER},
    {"state-dir", required_argument, 0, OPT_STATE},
    {"spool-max-mb", required_argument, 0, OPT_SPOOL},
    {"batch-activities", required_argument, 0, OPT_BATCH_ACT},
    {"batch-ms", required_argument, 0, OPT_BATCH_MS},
    {"token-file", required_argument, 0, OPT_TOKEN},
    {"auth", required_argument, 0, OPT_AUTH},
    {"munge-socket", required_argument, 0, OPT_MUNGE_SOCKET},
    {"tls", no_argument, 0, OPT_TLS},
    {"tls-ca", required_argument, 0, OPT_TLS_CA},
    {"pid-file", required_argument, 0, OPT_PID},
    {"hints", required_argument, 0, OPT_HINTS},
    {"hints-ttl", required_argument, 0, OPT_HINTS_TTL},
    {"memory-mb", required_argument, 0, OPT_MEMORY},
    {"test-clock-shift-ms", required_argument, 0, OPT_CLOCK_SHIFT},
    {"test-kill-after-frames", required_argument, 0, OPT_KILL_FRAMES},
    {"test-kill-after-seal", no_argument, 0, OPT_KILL_SEALED},
    {"help", no_argument, 0, OPT_HELP},
    {0, 0, 0, 0},
};

/* Parses a positive integer no larger than max; -EINVAL otherwise. */
static int parse_u64(const char *s, uint64_t max, uint64_t *out) {
  char *end;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  if (errno || end == s || *end || v == 0 || v > max || s[0] == '-')
    return -EINVAL;
  *out = v;
  return 0;
}

/* A signed millisecond count within a minute, as ns. */
static int parse_shift_ms(const char *s, int64_t *ns) {
  char *end;
  errno = 0;
  long long v = strtoll(s, &end, 10);
  if (errno || end == s || *end || v < -60000 || v > 60000)
    return -EINVAL;
  *ns = (int64_t)v * 1000000;
  return 0;
}

/* HOST:PORT[,HOST:PORT...] ([V6]:PORT too): checked here, one picked by
 * daemon id at start (route.c). */
static int parse_server(const char *s, struct daemon_config *c) {
  if (daemon_server_check(s) < 0) return -EINVAL;
  c->server_list = s;
  return daemon_server_entry(s, 0, c->server_host, sizeof c->server_host, &c->server_port);
}

static void defaults(struct daemon_config *c) {
  memset(c, 0, sizeof *c);
  const char *env = getenv("SIOX_SOCKET");
  c->socket_path = env && *env ? env : "/run/siox/daemon.sock";
  parse_server("127.0.0.1:7410", c);
  c->state_dir = "/var/lib/siox/daemon";
  c->spool_max_bytes = 1024ull << 20;
  c->batch_activities = 65536;
  c->batch_ms = 200;
  c->hints_ttl_ms = 5000;
  c->memory_mb = 256;
}

static int bad_usage(const char *what, const char *arg) {
  fprintf(stderr, "siox-daemon: invalid %s: '%s' (see --help)\n", what, arg);
  return 2;
}

/* Returns 0 to run, or an exit status (help: 0 via *done). */
static int parse_args(int argc, char **argv, struct daemon_config *c, bool *done) {
  uint64_t v;
  int opt;
  bool auth_given = false;
  while ((opt = getopt_long(argc, argv, "h", options, NULL)) != -1) {
    switch (opt) {
    case OPT_SOCKET:
      c->socket_path = optarg;
      break;
    case OPT_SERVER:
      if (parse_server(optarg, c) < 0)
        return bad_usage("--server", optarg);
      break;
    case OPT_STATE:
      c->state_dir = optarg;
      break;
    case OPT_SPOOL:
      if (parse_u64(optarg, UINT64_MAX >> 20, &v) < 0)
        return bad_usage("--spool-max-mb", optarg);
      c->spool_max_bytes = v << 20;
      break;
    case OPT_BATCH_ACT:
      if (parse_u64(optarg, 1u << 24, &v) < 0)
        return bad_usage("--batch-activities", optarg);
      c->batch_activities = (uint32_t)v;
      break;
    case OPT_BATCH_MS:
      if (parse_u64(optarg, 3600000, &v) < 0)
        return bad_usage("--batch-ms", optarg);
      c->batch_ms = (uint32_t)v;
      break;
    case OPT_TOKEN:
      c->token_file = optarg;
      break;
    case OPT_AUTH:
      auth_given = true;
      if (strcmp(optarg, "munge") == 0)
        c->auth = DAEMON_AUTH_MUNGE;
      else if (strcmp(optarg, "token") == 0)
        c->auth = DAEMON_AUTH_TOKEN;
      else if (strcmp(optarg, "none") == 0)
        c->auth = DAEMON_AUTH_NONE;
      else
        return bad_usage("--auth (munge, token or none)", optarg);
      break;
    case OPT_MUNGE_SOCKET:
      c->munge_socket = optarg;
      break;
    case OPT_TLS:
      c->tls = true;
      break;
    case OPT_TLS_CA:
      c->tls = true;
      c->tls_ca = optarg;
      break;
    case OPT_PID:
      c->pid_file = optarg;
      break;
    case OPT_HINTS:
      if (strcmp(optarg, "on") != 0 && strcmp(optarg, "off") != 0)
        return bad_usage("--hints (on or off)", optarg);
      c->hints_off = strcmp(optarg, "off") == 0;
      break;
    case OPT_HINTS_TTL:
      /* 0 is allowed here (no cache), unlike parse_u64's positive values. */
      if (strcmp(optarg, "0") == 0)
        v = 0;
      else if (parse_u64(optarg, 86400, &v) < 0)
        return bad_usage("--hints-ttl", optarg);
      c->hints_ttl_ms = (uint32_t)(v * 1000);
      break;
    case OPT_MEMORY:
      if (parse_u64(optarg, 1u << 20, &v) < 0 || v < 16)
        return bad_usage("--memory-mb (16 or more)", optarg);
      c->memory_mb = (uint32_t)v;
      break;
    case OPT_CLOCK_SHIFT:
      if (parse_shift_ms(optarg, &c->test_clock_shift_ns) < 0)
        return bad_usage("--test-clock-shift-ms (-60000..60000)", optarg);
      break;
    case OPT_KILL_FRAMES:
      if (parse_u64(optarg, 1u << 30, &v) < 0)
        return bad_usage("--test-kill-after-frames", optarg);
      c->test_kill_frames = (uint32_t)v;
      break;
    case OPT_KILL_SEALED:
      c->test_kill_sealed = true;
      break;
    case 'h':
    case OPT_HELP:
      fputs(usage, stdout);
      *done = true;
      return 0;
    default:
      return 2;
    }
  }
  if (optind < argc)
    return bad_usage("argument", argv[optind]);
  if (!auth_given && c->token_file)
    c->auth = DAEMON_AUTH_TOKEN;
  if (c->auth == DAEMON_AUTH_TOKEN && !c->token_file)
    return bad_usage("--auth token without --token-file", "token");
  return 0;
}

static int write_pid_file(const char *path) {
  FILE *f = fopen(path, "w");
  if (!f)
    return -errno;
  fprintf(f, "%ld\n", (long)getpid());
  return fclose(f) == 0 ? 0 : -errno;
}

int main(int argc, char **argv) {
  struct daemon_config cfg;
  bool done = false;
  defaults(&cfg);
  int rc = parse_args(argc, argv, &cfg, &done);
  if (rc || done)
    return rc;
  signal(SIGPIPE, SIG_IGN); /* a vanished peer is an error return, not death */
  if (cfg.pid_file && (rc = write_pid_file(cfg.pid_file)) < 0) {
    fprintf(stderr, "siox-daemon: pid file %s: %s\n", cfg.pid_file, strerror(-rc));
    return 1;
  }
  static struct daemon d;
  uv_loop_t *loop = uv_default_loop();
  rc = daemon_start(&d, loop, &cfg);
  if (d.loop) /* handles exist: let their close callbacks run */
    uv_run(loop, UV_RUN_DEFAULT);
  daemon_close(&d);
  uv_loop_close(loop);
  if (cfg.pid_file)
    unlink(cfg.pid_file);
  return rc < 0 ? 1 : 0;
}
