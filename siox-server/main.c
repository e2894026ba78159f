/*
 * siox-server entry point: parse options, bring up the warehouse (embedded
 * PostgreSQL or --db), migrate the schema, then serve daemons on the libuv
 * loop until SIGINT/SIGTERM, and take everything down in reverse order.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "match_window.h"
#include "server.h"
#include "siox/siox_wh.h"

#define CONNECT_WAIT_MS 30000 /* a starting (embedded or site) PostgreSQL gets this long */

static int write_file(const char *path, const char *text) {
  char tmp[4200];
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  FILE *f = fopen(tmp, "w");
  if (!f) return -errno;
  fputs(text, f);
  if (fclose(f) != 0) return -EIO;
  return rename(tmp, path) == 0 ? 0 : -errno;
}

static void on_signal(uv_signal_t *h, int signum) {
  siox_log("signal %d: stopping", signum);
  uv_stop(h->loop);
}

static int serve(struct siox_server *s, const char *conninfo) {
  uv_signal_t sigint, sigterm;
  int rc = siox_worker_start(&s->worker, s->loop, conninfo, "ingest");
  if (rc != 0) return siox_log("cannot connect the database worker"), rc;
  /* Set before any job can run: jobs come from connections, not yet open. */
  s->worker.db.late_ns = (int64_t)s->opt->late_ms * 1000000;
  s->worker.db.shard = s->opt->shard, s->worker.db.nshards = s->opt->nshards;
  /* Remote calls cross shards (forward.c); the calls this shard owns are
   * linked by SQL (objects.c), the others in memory as without peers. */
  s->worker.db.forward = s->opt->shard && s->opt->n_shard_peer;
  if (s->opt->match_memory &&
      !(s->worker.db.mw = siox_mw_new(SIOX_MATCH_WINDOW_CALLS, (int64_t)s->opt->match_window_ms * 1000000, s->worker.db.late_ns)))
    siox_log("in-memory matcher: out of memory (the SQL matcher does all the matching)");
  siox_limits_init(s);
  if ((rc = siox_hints_start(s, conninfo)) != 0 || (rc = siox_net_start(s)) != 0) {
    if (s->hints_on) siox_log("listen %s:%d: %s", s->opt->host, s->opt->port, uv_strerror(rc));
    siox_limits_stop(s);
    siox_hints_stop(s);
    siox_worker_stop(&s->worker);
    return rc;
  }
  if ((rc = siox_kb_thread_start(s, conninfo)) != 0) siox_log("analysis thread: %s (analyses off)", strerror(-rc));
  siox_roles_start(s);
  if (s->worker.db.forward && !(s->fwd = siox_forward_start(s->opt, conninfo)))
    siox_log("forward: cannot start the forwarder thread (remote calls wait in shard_outbox)");
  uv_timer_init(s->loop, &s->match_timer);
  s->match_timer.data = s;
  uv_timer_start(&s->match_timer, siox_session_match_tick, (uint64_t)s->opt->match_ms, (uint64_t)s->opt->match_ms);
  uv_signal_init(s->loop, &sigint);
  uv_signal_init(s->loop, &sigterm);
  uv_signal_start(&sigint, on_signal, SIGINT);
  uv_signal_start(&sigterm, on_signal, SIGTERM);
  siox_log("listening on %s:%d", s->opt->host, s->opt->port);
  uv_run(s->loop, UV_RUN_DEFAULT);
  siox_net_stop(s);
  siox_roles_stop(s);
  uv_close((uv_handle_t *)&s->match_timer, NULL);
  uv_close((uv_handle_t *)&sigint, NULL);
  uv_close((uv_handle_t *)&sigterm, NULL);
  /* Let decodes in the threadpool finish (the async handle must not keep
   * the loop alive), then drain the database queue: batches stored now lose
   * their Acks, and the daemon's resend is skipped as a duplicate. */
  uv_unref((uv_handle_t *)&s->worker.async);
  uv_run(s->loop, UV_RUN_DEFAULT);
  siox_forward_stop(s->fwd);
  siox_kb_thread_stop(s);
  siox_hints_stop(s);
  siox_worker_stop(&s->worker);
  uv_run(s->loop, UV_RUN_DEFAULT);
  return 0;
}

/* A malformed --db fails at once; an unreachable one after the connect wait.
 * The conninfo itself is never logged: it may hold a password. */
static int check_site_db(const char *conninfo) {
  char *err = NULL;
  PQconninfoOption *o = PQconninfoParse(conninfo, &err);
  if (o) return PQconninfoFree(o), 0;
  size_t n = err ? strlen(err) : 0;
  while (n && err[n - 1] == '\n') n--;
  siox_log("--db: not a valid libpq conninfo: %.*s", (int)n, err ? err : "out of memory");
  PQfreemem(err);
  return -EINVAL;
}

/* The server's conninfo for --db (with --db-passfile) into buf, and the
 * one for `siox` (no password) into pub. */
static int site_conninfo(const struct siox_server_options *o, char *buf, size_t cap, char *pub, size_t pubcap) {
  int rc = check_site_db(o->db);
  if (rc == 0 && (rc = siox_conninfo_rebuild(o->db, o->db_passfile, 1, buf, cap)) < 0)
    siox_log("--db: too long");
  if (rc == 0 && (rc = siox_conninfo_rebuild(o->db, NULL, 0, pub, pubcap)) == 1) {
    siox_log("warning: --db holds a password; it is not written to %s/conninfo (use --db-passfile)", o->data_dir);
    rc = 0;
  }
  return rc;
}

/* libsiox-warehouse's progress lines go to the server's log. */
static void log_line(void *ctx, const char *line) {
  (void)ctx;
  siox_log("%s", line);
}

/* Starts the embedded cluster or checks --db; the server's conninfo in
 * *conninfo, the one `siox` gets in *users. */
static int open_db(struct siox_server *s, struct siox_pg *pg, const char **conninfo, const char **users) {
  static char site[8192], pub[8192];
  int rc;
  *users = pub;
  if (s->opt->db) {
    if ((rc = site_conninfo(s->opt, site, sizeof site, pub, sizeof pub)) != 0) return rc;
    *conninfo = site;
  } else {
    if ((rc = siox_pg_start(pg, s->opt->data_dir, s->opt->pg_bindir)) != 0) return rc;
    *conninfo = pg->conninfo;
    *users = pg->users_conninfo;
  }
  return 0;
}

static PGconn *connect_db(struct siox_server *s, const char *conninfo) {
  PGconn *c = siox_db_connect(conninfo, CONNECT_WAIT_MS);
  if (!c && s->opt->db)
    siox_log("--db: cannot connect to the database (gave up after %d s; reason above)", CONNECT_WAIT_MS / 1000);
  return c;
}

/* --shard K/N: after the migration, the id ranges and siox_shard views. */
static int shard_setup(struct siox_server *s, PGconn *c) {
  if (!s->opt->shard) return 0;
  char err[1024];
  int rc = siox_wh_shard_setup(c, s->opt->shard, s->opt->nshards, err, sizeof err);
  if (rc != 0) siox_log("--shard %d/%d: %s", s->opt->shard, s->opt->nshards, err);
  else siox_log("shard %d of %d", s->opt->shard, s->opt->nshards);
  return rc;
}

static int prepare_db(struct siox_server *s, struct siox_pg *pg, const char **conninfo) {
  const char *users;
  int rc = open_db(s, pg, conninfo, &users);
  if (rc != 0) return rc;
  PGconn *c = connect_db(s, *conninfo);
  if (!c) return -EIO;
  char err[1024];
  if ((rc = siox_wh_migrate(c, log_line, NULL, err, sizeof err)) != 0) siox_log("schema: %s", err);
  if (rc == 0) rc = shard_setup(s, c);
  if (rc == 0 && (rc = siox_roles_prepare(c, s->opt->admin_group, !s->opt->db)) == -EPERM && s->opt->db) {
    siox_log("--db: may not create roles; users' login roles must be made by the site (members of siox_reader)");
    rc = 0;
  }
  PQfinish(c);
  if (rc == 0 && (rc = siox_conninfo_write(s->opt->data_dir, users)) != 0)
    siox_log("cannot write %s/conninfo: %s", s->opt->data_dir, strerror(-rc));
  return rc;
}

/* --coordinator: build the coordinator database from the shards, publish
 * its conninfo (admins: user postgres), then keep its PostgreSQL up until
 * SIGINT/SIGTERM. */
static int coordinate(struct siox_server *s, struct siox_pg *pg) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigprocmask(SIG_BLOCK, &set, NULL); /* taken by sigwait below */
  const char *conninfo, *users;
  int rc = open_db(s, pg, &conninfo, &users);
  if (rc != 0) return rc;
  PGconn *c = connect_db(s, conninfo);
  if (!c) return -EIO;
  char err[2048], admin[8400];
  rc = siox_wh_coordinator_build(c, s->opt->shard_db, s->opt->n_shard_db, log_line, NULL, err, sizeof err);
  PQfinish(c);
  if (rc != 0) return siox_log("coordinator: %s", err), rc;
  snprintf(admin, sizeof admin, "%s%s", users, s->opt->db ? "" : " user=postgres");
  if ((rc = siox_conninfo_write(s->opt->data_dir, admin)) != 0)
    return siox_log("cannot write %s/conninfo: %s", s->opt->data_dir, strerror(-rc)), rc;
  siox_log("coordinator ready: %s/conninfo", s->opt->data_dir);
  int sig = 0;
  sigwait(&set, &sig);
  siox_log("signal %d: stopping", sig);
  return 0;
}

int main(int argc, char **argv) {
  struct siox_server_options opt;
  char err[256];
  if (siox_server_options_parse(argc, argv, &opt, err, sizeof err) != 0) {
    fprintf(stderr, "siox-server: %s\nTry 'siox-server --help'.\n", err);
    return 2;
  }
  if (opt.help) return fputs(siox_server_usage, stdout), 0;
  signal(SIGPIPE, SIG_IGN);
  struct siox_server s;
  memset(&s, 0, sizeof s);
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  s.started_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
  s.opt = &opt;
  s.loop = uv_default_loop();
  static struct siox_pg pg;
  const char *conninfo = NULL;
  char pid[32];
  snprintf(pid, sizeof pid, "%d\n", (int)getpid());
  int rc = 0;
  if (opt.pid_file && (rc = write_file(opt.pid_file, pid)) != 0) siox_log("pid file %s: %s", opt.pid_file, strerror(-rc));
  if (rc == 0 && !opt.coordinator) rc = siox_auth_init(&s.auth, &opt);
  if (rc == 0 && !opt.coordinator) rc = siox_tls_start(&s);
  if (rc == 0 && opt.coordinator) rc = coordinate(&s, &pg);
  else if (rc == 0 && (rc = prepare_db(&s, &pg, &conninfo)) == 0) rc = serve(&s, conninfo);
  siox_pg_stop(&pg);
  uv_loop_close(s.loop);
  siox_auth_free(&s.auth);
  siox_tls_stop(&s);
  if (opt.pid_file) unlink(opt.pid_file);
  siox_log(rc == 0 ? "stopped" : "startup failed");
  return rc == 0 ? 0 : 1;
}
