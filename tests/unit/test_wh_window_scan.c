/*
 * siox_wh_exec_window (warehouse/src/wh_window_scan.c), the way blame's
 * window reads run (issue 10, blame latency): plain index scans off for
 * the one statement, SET + statement + RESET sent as one pipeline, so a
 * read costs one round trip to the warehouse, not three. Checked on a real
 * siox-server's warehouse: the round trips (libpq's protocol trace: each
 * Sync or simple Query the client sends waits for the server), the
 * setting inside the statement and after it, and a failing statement
 * (its error returned, the connection usable, the setting back on).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <siox/siox_wh.h>

#include "test_kb_baseline_db.h"

static struct kbdb db;
static int argc_;
static char **argv_;

static int setup(void **state) {
  (void)state;
  return kbdb_start(&db, argc_, argv_) == 0 ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  kbdb_stop(&db);
  return 0;
}

/* The session's enable_indexscan, read the plain way. */
static void assert_indexscan(const char *want) {
  PGresult *r = PQexec(db.c, "SHOW enable_indexscan");
  assert_int_equal(PQresultStatus(r), PGRES_TUPLES_OK);
  assert_string_equal(PQgetvalue(r, 0, 0), want);
  PQclear(r);
}

/* Round trips in a protocol trace: the frontend's Sync and Query messages
 * (each ends what the client sends before it waits for the answers). */
static int round_trips(FILE *trace) {
  char line[4096];
  int n = 0;
  rewind(trace);
  while (fgets(line, sizeof line, trace)) {
    char dir[4] = "", msg[32] = "";
    int len;
    if (sscanf(line, "%3s %d %31s", dir, &len, msg) == 3 && strcmp(dir, "F") == 0 &&
        (strcmp(msg, "Sync") == 0 || strcmp(msg, "Query") == 0))
      n++;
  }
  return n;
}

static void test_one_round_trip(void **state) {
  (void)state;
  FILE *trace = tmpfile();
  assert_non_null(trace);
  PQtrace(db.c, trace);
  PQsetTraceFlags(db.c, PQTRACE_SUPPRESS_TIMESTAMPS);
  const char *params[] = {"7"};
  PGresult *r = siox_wh_exec_window(db.c, "SELECT $1::int + 1, current_setting('enable_indexscan')", 1, params);
  PQuntrace(db.c);
  assert_int_equal(PQresultStatus(r), PGRES_TUPLES_OK);
  assert_string_equal(PQgetvalue(r, 0, 0), "8");
  assert_string_equal(PQgetvalue(r, 0, 1), "off"); /* inside the statement */
  PQclear(r);
  int n = round_trips(trace);
  fclose(trace);
  if (n != 1) fail_msg("a window read took %d round trips, want 1", n);
  assert_int_equal(PQpipelineStatus(db.c), PQ_PIPELINE_OFF);
  assert_indexscan("on"); /* and after it */
}

static void test_failure(void **state) {
  (void)state;
  const char *params[] = {"0"};
  PGresult *r = siox_wh_exec_window(db.c, "SELECT 1 / $1::int", 1, params);
  assert_int_equal(PQresultStatus(r), PGRES_FATAL_ERROR);
  assert_non_null(strstr(PQresultErrorMessage(r), "division by zero"));
  PQclear(r);
  assert_int_equal(PQpipelineStatus(db.c), PQ_PIPELINE_OFF);
  assert_indexscan("on");
  /* The next read works. */
  r = siox_wh_exec_window(db.c, "SELECT 2", 0, NULL);
  assert_int_equal(PQresultStatus(r), PGRES_TUPLES_OK);
  assert_string_equal(PQgetvalue(r, 0, 0), "2");
  PQclear(r);
  assert_indexscan("on");
}

int main(int argc, char **argv) {
  argc_ = argc;
  argv_ = argv;
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_one_round_trip), cmocka_unit_test(test_failure)};
  return cmocka_run_group_tests(tests, setup, teardown);
}
