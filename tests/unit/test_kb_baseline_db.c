/*
 * Fixture of the knowledge-base aggregate tests: see test_kb_baseline_db.h.
 */
#include <math.h>
#include <setjmp.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "test_kb_baseline_db.h"

/* The analysis thread of siox-server folds the same aggregates; a test that
 * checks what one fold returns must be the only folder. */
static int server_has_no_analyze(const char *bin) {
  char cmd[1200], line[512];
  int has = 0;
  snprintf(cmd, sizeof cmd, "'%s' --help 2>&1", bin);
  FILE *p = popen(cmd, "r");
  if (!p) return 0;
  while (fgets(line, sizeof line, p))
    if (strstr(line, "--no-analyze")) has = 1;
  pclose(p);
  return has;
}

int kbdb_start(struct kbdb *d, int argc, char **argv) {
  memset(d, 0, sizeof *d);
  if (argc < 2) {
    fprintf(stderr, "usage: %s SIOX_SERVER\n", argv[0]);
    return -1;
  }
  static const char *const no_analyze[] = {"--no-analyze", NULL};
  if (harness_init(&d->h, argv[1]) != 0) return -1;
  if (harness_start(&d->h, server_has_no_analyze(argv[1]) ? no_analyze : NULL) != 0 || !(d->c = harness_db(&d->h))) {
    harness_stop(&d->h);
    harness_cleanup(&d->h);
    return -1;
  }
  kbdb_exec(d, "INSERT INTO daemons (daemon_id, hostname) VALUES (1, 'test')");
  /* Rows inserted by SQL are complete at once: no settle time, so that what
   * a test inserts just before a fold is folded by it. */
  kbdb_exec(d, "UPDATE kb_fold_state SET settle_ns = 0");
  return 0;
}

void kbdb_stop(struct kbdb *d) {
  if (d->c) PQfinish(d->c);
  harness_stop(&d->h);
  harness_cleanup(&d->h);
}

static PGresult *run(struct kbdb *d, const char *fmt, va_list ap) {
  char *sql = NULL;
  if (vasprintf(&sql, fmt, ap) < 0) fail_msg("kbdb: out of memory");
  PGresult *r = PQexec(d->c, sql);
  ExecStatusType st = PQresultStatus(r);
  if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
    /* fail_msg ends the test; the group teardown still stops the server. */
    fail_msg("kbdb: %s: %s", sql, PQresultErrorMessage(r));
  }
  free(sql);
  return r;
}

void kbdb_exec(struct kbdb *d, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  PQclear(run(d, fmt, ap));
  va_end(ap);
}

double kbdb_num(struct kbdb *d, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  PGresult *r = run(d, fmt, ap);
  va_end(ap);
  if (PQntuples(r) != 1) {
    fail_msg("kbdb: expected one row, got %d", PQntuples(r));
  }
  double v = PQgetisnull(r, 0, 0) ? NAN : strtod(PQgetvalue(r, 0, 0), NULL);
  PQclear(r);
  return v;
}

int kbdb_node(struct kbdb *d, const char *hwid, const char *swid) {
  return (int)kbdb_num(d, "INSERT INTO nodes (hwid, swid) VALUES ('%s', '%s') RETURNING node_id", hwid, swid);
}

int kbdb_type(struct kbdb *d, int node_id, const char *name) {
  return (int)kbdb_num(d, "INSERT INTO activity_types (node_id, name) VALUES (%d, '%s') RETURNING type_id", node_id,
                       name);
}

int kbdb_proc(struct kbdb *d, const char *host, const char *job) {
  static int pid = 1000;
  pid++;
  return (int)kbdb_num(d,
                       "INSERT INTO processes (daemon_id, host, pid, uid, nonce, exe, job)"
                       " VALUES (1, '%s', %d, 0, %d, '/bin/test', '%s') RETURNING proc_id",
                       host, pid, pid, job);
}

int64_t kbdb_acts(struct kbdb *d, int proc, int node, int type, int n, int64_t t0_ns, int64_t step_ns, int64_t dur_ns,
                  int64_t bytes) {
  int64_t first = ((int64_t)proc << 32) | (d->next_local + 1);
  char attrs[200] = "'{}'::integer[], '{}'::bigint[]";
  if (bytes >= 0)
    snprintf(attrs, sizeof attrs, "ARRAY[(SELECT id FROM ontology WHERE name = 'io/bytes')], ARRAY[%lld::bigint]",
             (long long)bytes);
  kbdb_exec(d,
            "INSERT INTO activities (aid, proc_id, node_id, type_id, start_ns, end_ns, attr_ids, attr_vals)"
            " SELECT %lld::bigint + i, %d, %d, %d, %lld::bigint + i * %lld::bigint,"
            "        %lld::bigint + i * %lld::bigint + %lld::bigint, %s"
            "   FROM generate_series(0, %d) i",
            (long long)first, proc, node, type, (long long)t0_ns, (long long)step_ns, (long long)t0_ns,
            (long long)step_ns, (long long)dur_ns, attrs, n - 1);
  d->next_local += n;
  return first;
}

int64_t kbdb_now_ns(struct kbdb *d) {
  PGresult *r = PQexec(d->c, "SELECT (extract(epoch FROM clock_timestamp()) * 1e9)::bigint");
  if (PQresultStatus(r) != PGRES_TUPLES_OK) fail_msg("kbdb: %s", PQresultErrorMessage(r));
  int64_t v = strtoll(PQgetvalue(r, 0, 0), NULL, 10); /* not via double: ns since 1970 exceed 2^53 */
  PQclear(r);
  return v;
}

void kbdb_wait_until(struct kbdb *d, int64_t t_ns) {
  while (kbdb_now_ns(d) <= t_ns) {
    struct timespec ts = {.tv_sec = 0, .tv_nsec = 10000000};
    nanosleep(&ts, NULL);
  }
}

int64_t kbdb_recent(struct kbdb *d, int64_t span_ns) {
  PGresult *r = PQexec(d->c, "SELECT max(watermark_ns) FROM kb_fold_state");
  if (PQresultStatus(r) != PGRES_TUPLES_OK) fail_msg("kbdb: %s", PQresultErrorMessage(r));
  int64_t t0 = strtoll(PQgetvalue(r, 0, 0), NULL, 10) + 1, now = kbdb_now_ns(d);
  PQclear(r);
  if (t0 < now - span_ns) t0 = now - span_ns;
  kbdb_wait_until(d, t0 + span_ns);
  return t0;
}
