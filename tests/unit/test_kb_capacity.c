/*
 * Capacity aggregates (knowledge-base/src/capacity*.c) on a synthetic
 * warehouse: what each component is charged per time bucket, and the
 * report built from it (rates, peaks, utilisation, which saturates first).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <siox/siox_kb.h>
#include <siox/siox_kb_capacity.h>
#include <stdlib.h>

#include "test_kb_baseline_db.h"

static struct kbdb db;
static int g_argc;
static char **g_argv;

#define MS 1000000LL
#define SEC 1000000000LL
#define MIB (1024LL * 1024LL)

static int setup(void **state) {
  (void)state;
  return kbdb_start(&db, g_argc, g_argv);
}

static int teardown(void **state) {
  (void)state;
  kbdb_stop(&db);
  return 0;
}

static int fold(void) {
  char err[256] = "";
  int n = siox_kb_capacity_update(db.c, 0, err, sizeof err);
  if (n < 0) fail_msg("siox_kb_capacity_update: %s", err);
  return n;
}

static int node1, node2, posix, mpiio;
static int64_t t0;

/* Two bricks, brick1 driven ten times harder than brick2 in the first
 * second (and lighter, faster, in the next), under one client node whose
 * POSIX layer wrote 50 x 4 KiB (MPI-IO above it the same bytes again, which
 * the host must not be charged for). */
static void charges(void **state) {
  (void)state;
  node1 = kbdb_node(&db, "brick1:/srv/b1", "GlusterFS-brick");
  node2 = kbdb_node(&db, "brick2:/srv/b2", "GlusterFS-brick");
  posix = kbdb_node(&db, "h1", "POSIX");
  mpiio = kbdb_node(&db, "h1", "MPI-IO");
  int w1 = kbdb_type(&db, node1, "WRITE"), w2 = kbdb_type(&db, node2, "WRITE");
  int pw = kbdb_type(&db, posix, "pwrite"), mw = kbdb_type(&db, mpiio, "MPI_File_write");
  int srv = kbdb_proc(&db, "srv", ""), app = kbdb_proc(&db, "h1", "J1");
  t0 = (kbdb_recent(&db, 0) / SEC + 1) * SEC; /* the next bucket boundary */
  kbdb_acts(&db, srv, node1, w1, 100, t0, 9 * MS, 2 * MS, MIB);
  kbdb_acts(&db, srv, node2, w2, 10, t0, 90 * MS, 2 * MS, MIB);
  kbdb_acts(&db, app, posix, pw, 50, t0, 10 * MS, MS, 4096);
  kbdb_acts(&db, app, mpiio, mw, 50, t0, 10 * MS, 2 * MS, 4096);
  kbdb_acts(&db, srv, node1, w1, 10, t0 + SEC, 90 * MS, MS, MIB);
  kbdb_wait_until(&db, t0 + 2 * SEC); /* both buckets over */
  assert_int_equal(fold(), 220);
  assert_int_equal(fold(), 0);
  const char *q = "SELECT %s FROM kb_capacity WHERE kind = '%s' AND key = '%s' AND bucket_ns = %lld";
  char k1[16], k2[16];
  snprintf(k1, sizeof k1, "%d", node1);
  snprintf(k2, sizeof k2, "%d", node2);
  assert_int_equal((int64_t)kbdb_num(&db, q, "ops", "node", k1, (long long)t0), 100);
  assert_int_equal((int64_t)kbdb_num(&db, q, "bytes", "node", k1, (long long)t0), 100 * MIB);
  assert_int_equal((int64_t)kbdb_num(&db, q, "busy_ns", "node", k1, (long long)t0), 200 * MS);
  assert_int_equal((int64_t)kbdb_num(&db, q, "bytes", "node", k2, (long long)t0), 10 * MIB);
  assert_int_equal((int64_t)kbdb_num(&db, q, "bytes", "host", "h1", (long long)t0), 50 * 4096);
  assert_int_equal((int64_t)kbdb_num(&db, q, "ops", "job", "J1", (long long)t0), 50);
  /* The server-side process has no job: it is charged under proc:<id>,
   * with nothing since it has no POSIX layer. */
  assert_true(isnan(kbdb_num(&db, "SELECT max(ops) FROM kb_capacity WHERE kind = 'host' AND key = 'srv'")));
}

/* The report over both seconds: brick1 is the one driven hardest, it sets
 * the bricks' observed maximum (100 MiB/s) and saturates first (at growth
 * 1x); brick2 has 10x headroom. brick1's latency grew with load: 1 ms at
 * 10 MiB/s, 2 ms at 100 MiB/s, so at twice its peak the fit projects
 * 1 ms + 1 ms * (200 - 10) / 90 = 3.11 ms. */
static void report(void **state) {
  (void)state;
  struct siox_kb_capacity_query q = {.since_ns = t0, .until_ns = t0 + 2 * SEC, .kind = "node", .what_if = 2};
  struct siox_kb_capacity_row *r = NULL;
  size_t n = 0;
  char err[256] = "";
  if (siox_kb_capacity_report(db.c, &q, &r, &n, err, sizeof err) < 0) fail_msg("report: %s", err);
  assert_int_equal(n, 4); /* two bricks, POSIX, MPI-IO */
  char k1[16];
  snprintf(k1, sizeof k1, "%d", node1);
  assert_string_equal(r[0].key, k1);
  assert_string_equal(r[0].role, "brick");
  assert_string_equal(r[0].label, "brick1:/srv/b1 GlusterFS-brick");
  assert_true(r[0].bytes_metric);
  assert_true(fabs(r[0].peak - 100.0 * MIB) < 1);
  assert_true(fabs(r[0].capacity - 100.0 * MIB) < 1);
  assert_true(fabs(r[0].utilization - 1.0) < 1e-9);
  assert_true(fabs(r[0].saturation_factor - 1.0) < 1e-9);
  assert_true(fabs(r[0].projected_utilization - 2.0) < 1e-9);
  assert_true(fabs(r[0].bytes_per_s - 55.0 * MIB) < 1);
  assert_true(fabs(r[0].lat_low_ns - 1e6) < 1);
  assert_true(fabs(r[0].lat_high_ns - 2e6) < 1);
  assert_true(fabs(r[0].projected_lat_ns - (1e6 + 1e6 * 190.0 / 90.0)) < 10);
  /* The next to saturate: brick2 at 10x, compared with its peer brick1. */
  size_t i2 = 1;
  while (i2 < n && strcmp(r[i2].role, "brick") != 0) i2++;
  assert_true(i2 < n);
  assert_true(fabs(r[i2].utilization - 0.1) < 1e-9);
  assert_true(fabs(r[i2].saturation_factor - 10.0) < 1e-9);
  free(r);

  /* A nominal bandwidth replaces the observed maximum. */
  kbdb_exec(&db,
            "INSERT INTO node_attributes (node_id, attr_id, value_num)"
            " SELECT %d, id, 400 * 1024 * 1024 FROM ontology WHERE name = 'node/bandwidth'",
            node1);
  q.component = "brick1";
  if (siox_kb_capacity_report(db.c, &q, &r, &n, err, sizeof err) < 0) fail_msg("report: %s", err);
  assert_int_equal(n, 1);
  assert_true(r[0].capacity_nominal);
  assert_true(fabs(r[0].saturation_factor - 4.0) < 1e-9);
  free(r);

  struct siox_kb_capacity_point *pt = NULL;
  if (siox_kb_capacity_series(db.c, "node", k1, t0, t0 + 3 * SEC, &pt, &n, err, sizeof err) < 0)
    fail_msg("series: %s", err);
  assert_int_equal(n, 3);
  assert_true(fabs(pt[0].bytes_per_s - 100.0 * MIB) < 1 && fabs(pt[1].bytes_per_s - 10.0 * MIB) < 1);
  assert_true(pt[2].ops_per_s == 0 && pt[2].bucket_ns == t0 + 2 * SEC);
  free(pt);
}

int main(int argc, char **argv) {
  g_argc = argc;
  g_argv = argv;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(charges),
      cmocka_unit_test(report),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
