/*
 * The embedded warehouse: with no --db, siox-server runs its own PostgreSQL
 * cluster in DIR/pg (unix socket in DIR/pg/run, no TCP). It creates it on the
 * first start, adopts a postmaster that a killed server left behind, and
 * stops it on exit. PostgreSQL refuses to run as root, so under euid 0 every
 * PostgreSQL program runs as the Debian 'postgres' user.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pthread.h>
#include <time.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "server.h"

#define PG_FALLBACK_BINDIR "/usr/lib/postgresql/15/bin"
#define CONF_MARKER "# --- siox-server settings ---"

/* Ingest tuning, appended once to postgresql.conf. Durability stays on
 * (fsync, synchronous_commit, full_page_writes): an Ack promises the batch is
 * stored, and one commit per 64k-activity batch makes the fsync cheap. */
static const char conf_fmt[] =
    "\n" CONF_MARKER "\n"
    "listen_addresses = ''\n"
    "unix_socket_directories = '%s/run'\n"
    "unix_socket_permissions = 0700\n"
    "max_connections = 50\n"
    "shared_buffers = 256MB\n"
    "work_mem = 16MB\n"
    "maintenance_work_mem = 256MB\n"
    "wal_buffers = 16MB\n"
    "max_wal_size = 4GB\n"
    "min_wal_size = 256MB\n"
    "checkpoint_timeout = 15min\n"
    "checkpoint_completion_target = 0.9\n";

/* Runs argv (argv[0] a full path) as the postgres user when we are root,
 * with stdout/stderr to log_path (NULL: inherit). Returns the exit status
 * or a negative errno. */
static int run_as_pg(char *const argv[], const char *log_path) {
  struct passwd *pw = geteuid() == 0 ? getpwnam("postgres") : NULL;
  if (geteuid() == 0 && !pw) return siox_log("running as root needs a 'postgres' user"), -ESRCH;
  pid_t pid = fork();
  if (pid < 0) return -errno;
  if (pid == 0) {
    if (log_path) {
      int fd = open(log_path, O_WRONLY | O_CREAT | O_APPEND, 0644);
      if (fd >= 0) dup2(fd, 1), dup2(fd, 2), close(fd);
    }
    if (pw && (setgid(pw->pw_gid) || initgroups("postgres", pw->pw_gid) || setuid(pw->pw_uid))) _exit(126);
    if (chdir("/") != 0) _exit(126); /* our cwd may be closed to postgres */
    execv(argv[0], argv);
    _exit(127);
  }
  int st;
  while (waitpid(pid, &st, 0) < 0)
    if (errno != EINTR) return -errno;
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static int chown_pg(const char *path) {
  if (geteuid() != 0) return 0;
  struct passwd *pw = getpwnam("postgres");
  if (!pw) return -ESRCH;
  return chown(path, pw->pw_uid, pw->pw_gid) == 0 ? 0 : -errno;
}

static void find_bindir(struct siox_pg *pg, const char *want) {
  if (want) {
    snprintf(pg->bindir, sizeof pg->bindir, "%s", want);
    return;
  }
  snprintf(pg->bindir, sizeof pg->bindir, "%s", PG_FALLBACK_BINDIR);
  FILE *p = popen("pg_config --bindir 2>/dev/null", "r");
  char line[1024], probe[1100];
  if (p && fgets(line, sizeof line, p)) {
    line[strcspn(line, "\n")] = '\0';
    snprintf(probe, sizeof probe, "%s/initdb", line);
    if (access(probe, X_OK) == 0) snprintf(pg->bindir, sizeof pg->bindir, "%s", line);
  }
  if (p) pclose(p);
}

/* Creates dir (and parents) like mkdir -p. */
static int mkdir_p(const char *dir, mode_t mode) {
  char tmp[4096];
  snprintf(tmp, sizeof tmp, "%s", dir);
  for (char *s = tmp + 1; *s; s++)
    if (*s == '/') {
      *s = '\0';
      if (mkdir(tmp, 0755) != 0 && errno != EEXIST) return -errno;
      *s = '/';
    }
  return (mkdir(tmp, mode) == 0 || errno == EEXIST) ? 0 : -errno;
}

static int write_conf(const struct siox_pg *pg) {
  char path[4200], line[256];
  snprintf(path, sizeof path, "%s/postgresql.conf", pg->dir);
  FILE *f = fopen(path, "r+");
  if (!f) return -errno;
  while (fgets(line, sizeof line, f))
    if (strncmp(line, CONF_MARKER, strlen(CONF_MARKER)) == 0) return fclose(f), 0;
  fprintf(f, conf_fmt, pg->dir);
  return fclose(f) == 0 ? 0 : -EIO;
}

static int init_cluster(struct siox_pg *pg) {
  char ver[4200], initdb[1100], log[4200];
  snprintf(ver, sizeof ver, "%s/PG_VERSION", pg->dir);
  if (access(ver, F_OK) == 0) return 0;
  int rc = mkdir_p(pg->dir, 0700);
  if (rc == 0) rc = chown_pg(pg->dir);
  if (rc != 0) return siox_log("cannot create %s: %s", pg->dir, strerror(-rc)), rc;
  snprintf(initdb, sizeof initdb, "%s/initdb", pg->bindir);
  snprintf(log, sizeof log, "%s.initdb.log", pg->dir);
  siox_log("initdb %s (log: %s)", pg->dir, log);
  char *argv[] = {initdb, "-D", pg->dir, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-locale", NULL};
  rc = run_as_pg(argv, log);
  if (rc != 0)
    return siox_log("initdb failed (status %d), see %s (as root: the postgres user needs search access to every parent of %s)", rc, log, pg->dir), -EIO;
  return write_conf(pg);
}

/* Returns the pid of a live postmaster on pg->dir, or 0. */
static pid_t running_postmaster(const struct siox_pg *pg) {
  char path[4200];
  snprintf(path, sizeof path, "%s/postmaster.pid", pg->dir);
  FILE *f = fopen(path, "r");
  if (!f) return 0;
  long pid = 0;
  if (fscanf(f, "%ld", &pid) != 1) pid = 0;
  fclose(f);
  if (pid <= 0 || (kill((pid_t)pid, 0) != 0 && errno != EPERM)) return 0;
  return (pid_t)pid;
}

static int unlink_pidfile(const struct siox_pg *pg) {
  char path[4200];
  snprintf(path, sizeof path, "%s/postmaster.pid", pg->dir);
  return unlink(path) == 0 ? 0 : -errno;
}

/* Is pid a process of our cluster? A postmaster.pid whose pid was reused
 * by another program is stale. With pid_max 32768 and a loaded machine the
 * dead postmaster's pid comes back within minutes, also as a process of
 * another PostgreSQL cluster: the name alone then says "alive" and the
 * postmaster is never restarted. Every PostgreSQL process runs in its data
 * directory, so the cwd decides; the name only when /proc does not tell. */
static int is_our_postgres(const struct siox_pg *pg, pid_t pid) {
  char path[64], comm[64] = "", cwd[4200];
  snprintf(path, sizeof path, "/proc/%d/cwd", (int)pid);
  ssize_t n = readlink(path, cwd, sizeof cwd - 1);
  if (n >= 0) return cwd[n] = '\0', strcmp(cwd, pg->dir) == 0;
  snprintf(path, sizeof path, "/proc/%d/comm", (int)pid);
  FILE *f = fopen(path, "r");
  if (!f) return 1; /* no /proc: trust kill(pid, 0) */
  if (!fgets(comm, sizeof comm, f)) comm[0] = '\0';
  fclose(f);
  return strncmp(comm, "postgres", 8) == 0 || strncmp(comm, "postmaster", 10) == 0;
}

static int start_postmaster(struct siox_pg *pg) {
  char run[4200], pgctl[1100], log[4200];
  snprintf(run, sizeof run, "%s/run", pg->dir);
  if (mkdir(run, 0755) != 0 && errno != EEXIST) return -errno;
  chown_pg(run);
  pid_t pid = running_postmaster(pg);
  if (pid && is_our_postgres(pg, pid)) return siox_log("adopting running postmaster %d on %s", (int)pid, pg->dir), 0;
  if (pid && unlink_pidfile(pg) == 0) /* else pg_ctl refuses: "lock file already exists" */
    siox_log("embedded PostgreSQL: removed stale postmaster.pid (pid %d is not a process of this cluster)", (int)pid);
  snprintf(pgctl, sizeof pgctl, "%s/pg_ctl", pg->bindir);
  snprintf(log, sizeof log, "%s/log", pg->dir);
  char *argv[] = {pgctl, "-D", pg->dir, "-l", log, "-w", "-t", "120", "start", NULL};
  int rc = run_as_pg(argv, "/dev/null");
  if (rc != 0) return siox_log("pg_ctl start failed (status %d), see %s", rc, log), -EIO;
  return 0;
}

/* Quotes v for a conninfo value: single quotes, backslash escapes. */
static void conn_quote(char *out, size_t cap, const char *v) {
  size_t o = 0;
  out[o++] = '\'';
  for (; *v && o + 3 < cap; v++) {
    if (*v == '\'' || *v == '\\') out[o++] = '\\';
    out[o++] = *v;
  }
  out[o++] = '\'';
  out[o] = '\0';
}

static int create_database(struct siox_pg *pg) {
  char host[4300], ci[4400];
  snprintf(ci, sizeof ci, "%s/run", pg->dir);
  conn_quote(host, sizeof host, ci);
  snprintf(ci, sizeof ci, "host=%s dbname=postgres user=postgres", host);
  PGconn *c = siox_db_connect(ci, 60000);
  if (!c) return -EIO;
  PGresult *r = siox_db_query(c, "SELECT 1 FROM pg_database WHERE datname = 'siox'", 0, NULL);
  int rc = r ? 0 : -EIO;
  if (r && PQntuples(r) == 0) rc = siox_db_exec(c, "CREATE DATABASE siox");
  PQclear(r);
  PQfinish(c);
  snprintf(pg->conninfo, sizeof pg->conninfo, "host=%.4150s dbname=siox user=postgres", host);
  char sock[4096], users[4200];
  siox_pg_users_socket_dir(pg, sock, sizeof sock);
  conn_quote(users, sizeof users, sock);
  snprintf(pg->users_conninfo, sizeof pg->users_conninfo, "host=%.4150s dbname=siox", users);
  return rc;
}

/* PostgreSQL (as postgres) must be able to reach DIR/pg: give DIR the
 * search bit for others when root created it private (mkdtemp does). */
static void open_data_dir(const char *dir) {
  struct stat st;
  if (geteuid() == 0 && stat(dir, &st) == 0 && !(st.st_mode & S_IXOTH)) {
    siox_log("adding search permission for others to %s (postgres must reach %s/pg)", dir, dir);
    if (chmod(dir, (st.st_mode & 07777) | S_IXOTH) != 0) siox_log("chmod %s: %s", dir, strerror(errno));
  }
}

/* The access rules were just rewritten: an adopted postmaster rereads them
 * (SIGHUP), and one of a cluster from before the users' socket existed is
 * restarted once (fast shutdown) so that it opens that socket. */
static int open_to_users(struct siox_pg *pg) {
  pid_t pid = running_postmaster(pg);
  if (siox_pg_access_ready(pg)) return pid && kill(pid, SIGHUP) != 0 ? -errno : 0;
  siox_log("restarting the postmaster %d once, to open the users' socket", (int)pid);
  if (pid && kill(pid, SIGINT) != 0) return -errno;
  for (int i = 0; i < 600 && running_postmaster(pg); i++) usleep(100 * 1000);
  if (running_postmaster(pg)) return siox_log("postmaster %d did not stop", (int)pid), -ETIMEDOUT;
  int rc = start_postmaster(pg);
  if (rc == 0 && !siox_pg_access_ready(pg)) return siox_log("the users' socket did not appear"), -EIO;
  return rc;
}

/* ---- revival after a crash (siox_pg_revive) ------------------------------- */

static pthread_mutex_t revive_mu = PTHREAD_MUTEX_INITIALIZER;
static struct siox_pg *revive_pg; /* the cluster we run; NULL with --db */
static int64_t revive_last_ms, revive_count;

static int64_t revive_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int siox_pg_revive(void) {
  pthread_mutex_lock(&revive_mu);
  struct siox_pg *pg = revive_pg;
  int rc = 0;
  pid_t pid = pg ? running_postmaster(pg) : 0;
  if (!pg || !pg->started) rc = -ENODEV;
  else if (pid && is_our_postgres(pg, pid)) rc = 0; /* alive (maybe still recovering): reconnecting is enough */
  else if (revive_now_ms() - revive_last_ms < 2000) rc = -EAGAIN;
  else {
    revive_last_ms = revive_now_ms();
    siox_log("embedded PostgreSQL: postmaster is gone; restarting it (crash recovery runs first)");
    rc = start_postmaster(pg);
    if (rc == 0) revive_count++;
    siox_log(rc == 0 ? "embedded PostgreSQL: restarted, recovery done" : "embedded PostgreSQL: restart failed; will retry");
    revive_last_ms = revive_now_ms();
  }
  pthread_mutex_unlock(&revive_mu);
  return rc;
}

int64_t siox_pg_restarts(void) {
  pthread_mutex_lock(&revive_mu);
  int64_t n = revive_count;
  pthread_mutex_unlock(&revive_mu);
  return n;
}

int siox_pg_start(struct siox_pg *pg, const char *data_dir, const char *bindir) {
  memset(pg, 0, sizeof *pg);
  int rc = mkdir_p(data_dir, 0755);
  char abs[4096];
  if (rc != 0 || !realpath(data_dir, abs))
    return siox_log("data dir %s: %s", data_dir, strerror(rc ? -rc : errno)), rc ? rc : -errno;
  /* The path goes into postgresql.conf and a conninfo between quotes. */
  if (strchr(abs, '\'') || strchr(abs, '\\')) return siox_log("data dir %s: quotes and backslashes are not supported", abs), -EINVAL;
  if (strlen(abs) > 60) siox_log("warning: long data dir path; unix socket paths are limited to 107 bytes");
  open_data_dir(abs);
  snprintf(pg->dir, sizeof pg->dir, "%s/pg", abs);
  find_bindir(pg, bindir);
  if ((rc = init_cluster(pg)) != 0 || (rc = siox_pg_access_write(pg)) != 0 || (rc = start_postmaster(pg)) != 0 ||
      (rc = open_to_users(pg)) != 0)
    return rc;
  pg->started = 1;
  rc = create_database(pg);
  if (rc == 0) revive_pg = pg;
  return rc;
}

void siox_pg_stop(struct siox_pg *pg) {
  if (!pg->started) return;
  pthread_mutex_lock(&revive_mu);
  revive_pg = NULL; /* no revival while we stop it */
  pthread_mutex_unlock(&revive_mu);
  char pgctl[1100];
  snprintf(pgctl, sizeof pgctl, "%s/pg_ctl", pg->bindir);
  char *argv[] = {pgctl, "-D", pg->dir, "-m", "fast", "-w", "-t", "60", "stop", NULL};
  int rc = run_as_pg(argv, "/dev/null");
  siox_log(rc == 0 ? "embedded PostgreSQL stopped" : "pg_ctl stop failed (status %d)", rc);
  pg->started = 0;
}
