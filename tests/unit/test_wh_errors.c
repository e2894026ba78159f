/*
 * libsiox-warehouse reports a failed query one way (wh_pg.h's
 * siox_wh_failed): "<what>: <server's message>", one line, prefixed
 * "permission denied: " when the server refused the user (SQLSTATE 42501),
 * which the front ends show as it is. A real siox-server's warehouse, read
 * through a role that may read nothing: every query below is refused.
 * Checked for the job views, the component latency, the capacity
 * measurements, the counts, and the trace extractor's job rows.
 */
#include <errno.h>
#include <json-c/json.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <siox/siox_wh.h>

#include "siox_workload.h"
#include "test_kb_baseline_db.h"

static struct kbdb db;
static int argc_;
static char **argv_;
static struct siox_wh *wh;

static int cap_sample(void *ctx, const struct siox_wh_cap_sample *s) {
  (void)ctx, (void)s;
  return 0;
}

static int setup(void **state) {
  (void)state;
  if (kbdb_start(&db, argc_, argv_) != 0) return -1;
  kbdb_proc(&db, "h1", "J1");
  char path[400], ci[4096] = "", err[512];
  snprintf(path, sizeof path, "%s/conninfo", db.h.data_dir);
  FILE *f = fopen(path, "r");
  if (!f) return -1;
  int got = fgets(ci, sizeof ci, f) != NULL;
  fclose(f);
  if (!got) return -1;
  ci[strcspn(ci, "\n")] = '\0';
  if (siox_wh_open(ci, &wh, err, sizeof err) != 0) return fprintf(stderr, "%s\n", err), -1;
  /* a role without siox_reader: no table may be read */
  kbdb_exec(&db, "CREATE ROLE siox_test_nobody");
  PGresult *r = PQexec(siox_wh_pg(wh), "SET ROLE siox_test_nobody");
  int ok = PQresultStatus(r) == PGRES_COMMAND_OK;
  PQclear(r);
  return ok ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  siox_wh_close(wh);
  kbdb_stop(&db);
  return 0;
}

/* rc -EIO, and err is "permission denied: <what>: ..." on one line. */
static void refused(int rc, const char *err, const char *what) {
  printf("  %s\n", err);
  assert_int_equal(rc, -EIO);
  char want[256];
  snprintf(want, sizeof want, "permission denied: %s: ", what);
  assert_true(strncmp(err, want, strlen(want)) == 0);
  assert_null(strchr(err, '\n'));
  assert_non_null(strstr(err, "permission denied for"));
}

static void test_job_views(void **state) {
  (void)state;
  char err[512];
  json_object *doc = NULL;
  struct siox_wh_jobs_query q = {0};
  refused(siox_wh_jobs(wh, &q, &doc, err, sizeof err), err, "counting the jobs' activities");
  assert_null(doc);
  refused(siox_wh_job_summary(wh, "J1", &doc, err, sizeof err), err, "reading job J1's processes");
  refused(siox_wh_job_heatmap(wh, "J1", 10, &doc, err, sizeof err), err, "reading job J1's processes");
}

static void test_component_latency(void **state) {
  (void)state;
  char err[512];
  json_object *doc = NULL;
  refused(siox_wh_component_latency(wh, "brick", 0, 10, &doc, err, sizeof err), err,
          "reading the components' latency");
}

static void test_capacity(void **state) {
  (void)state;
  char err[512];
  refused(siox_wh_capacity_samples(siox_wh_pg(wh), 0, INT64_MAX, cap_sample, NULL, err, sizeof err), err,
          "reading the capacity model's measurements");
}

static void test_counts(void **state) {
  (void)state;
  char err[512];
  struct siox_wh_counts n;
  refused(siox_wh_counts(siox_wh_pg(wh), &n, err, sizeof err), err, "counting the warehouse");
}

static void test_trace_rows(void **state) {
  (void)state;
  char err[512];
  siox_workload *w = NULL;
  struct siox_wl_extract_opts o = {.job = "J1"};
  struct siox_wl_extract_stats st;
  refused(siox_wl_extract(siox_wh_pg(wh), &o, &w, &st, err, sizeof err), err,
          "reading job J1's processes from the warehouse");
  assert_null(w);
}

int main(int argc, char **argv) {
  argc_ = argc, argv_ = argv;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_job_views), cmocka_unit_test(test_component_latency), cmocka_unit_test(test_capacity),
      cmocka_unit_test(test_counts),    cmocka_unit_test(test_trace_rows),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
