/*
 * The CPU time the matcher uses (status counter match_cpu_us): the
 * database thread's own, plus that of its connection's PostgreSQL backend
 * over the same stretches, where the link rows are written. match_busy_us
 * is wall time, which on a loaded host is mostly waiting for a core;
 * this is the figure that A/B rounds can compare there (bench_match,
 * bench_match_ab.sh). The backend's time comes from
 * /proc/PID/schedstat, so only for a backend on this host: one reached by
 * a Unix socket whose process is a postgres (the embedded cluster, a
 * local --db); for any other the thread's time alone is counted.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "server.h"

static int64_t thread_ns(void) {
  struct timespec ts;
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0) return 0;
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Whether pid is this host's postgres process. */
static int local_postgres(int pid) {
  char f[64], comm[32] = "";
  snprintf(f, sizeof f, "/proc/%d/comm", pid);
  FILE *p = fopen(f, "r");
  if (!p) return 0;
  int ok = fgets(comm, sizeof comm, p) && strncmp(comm, "postgres", 8) == 0;
  fclose(p);
  return ok;
}

/* The backend's CPU time so far, -1 when it cannot be read (see above);
 * whether it can is decided once per backend. */
static int64_t backend_ns(struct siox_db *db) {
  int pid = PQbackendPID(db->conn);
  if (pid <= 0) return -1;
  if (pid != db->cpu_pid) {
    const char *host = PQhost(db->conn);
    db->cpu_pid = pid, db->cpu_pid_local = host && host[0] == '/' && local_postgres(pid);
  }
  if (!db->cpu_pid_local) return -1;
  char f[64];
  long long ns = -1;
  snprintf(f, sizeof f, "/proc/%d/schedstat", pid);
  FILE *p = fopen(f, "r");
  if (p && fscanf(p, "%lld", &ns) != 1) ns = -1;
  if (p) fclose(p);
  return ns;
}

void siox_match_cpu_start(struct siox_db *db, struct siox_match_cpu *m) {
  m->pid = PQbackendPID(db->conn);
  m->thread = thread_ns();
  m->backend = backend_ns(db);
}

void siox_match_cpu_end(struct siox_db *db, const struct siox_match_cpu *m) {
  int64_t t = thread_ns() - m->thread, b = m->pid == PQbackendPID(db->conn) ? backend_ns(db) : -1;
  db->match_cpu_ns += (t > 0 ? t : 0) + (b >= 0 && m->backend >= 0 && b > m->backend ? b - m->backend : 0);
}
