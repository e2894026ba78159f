/*
 * Baselines (knowledge-base/src/baselines.c) on a synthetic warehouse:
 * percentiles, size classes, the per-byte model, incremental folding and the
 * settle time, with values that follow from the rows inserted.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <siox/siox_kb.h>
#include <siox/siox_kb_baselines.h>
#include <stdlib.h>

#include "test_kb_baseline_db.h"

static struct kbdb db;
static int g_argc;
static char **g_argv;

#define MS 1000000LL

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
  int n = siox_kb_baselines_update(db.c, 0, err, sizeof err);
  if (n < 0) fail_msg("siox_kb_baselines_update: %s", err);
  return n;
}

/* A value from the log-bucket histogram lies in the bucket of the true one:
 * within a factor 2^(1/4) (19 %). */
static void assert_near_bucket(double got, double want) {
  if (!(got >= want / 1.19 && got <= want * 1.19)) fail_msg("got %.0f ns, want %.0f ns within 19%%", got, want);
}

/* 90 writes of 1 ms and 10 of 100 ms: p50 is 1 ms, p99 100 ms; the count,
 * min and max are exact. A second batch is folded in without refolding the
 * first. */
static void percentiles_and_increments(void **state) {
  (void)state;
  int node = kbdb_node(&db, "brick1:/srv/b1", "GlusterFS-brick"), type = kbdb_type(&db, node, "WRITE");
  int proc = kbdb_proc(&db, "srv", "");
  int64_t t0 = kbdb_recent(&db, 2000 * MS);
  kbdb_acts(&db, proc, node, type, 90, t0, 10 * MS, 1 * MS, -1);
  kbdb_acts(&db, proc, node, type, 10, t0 + 5 * MS, 200 * MS, 100 * MS, -1);
  assert_int_equal(fold(), 100);
  const char *where = "FROM kb_baselines WHERE node_id = %d AND type_id = %d AND size_class = -1";
  char q[200];
  snprintf(q, sizeof q, "SELECT n %s", where);
  assert_int_equal((int)kbdb_num(&db, q, node, type), 100);
  snprintf(q, sizeof q, "SELECT min_ns %s", where);
  assert_int_equal((int64_t)kbdb_num(&db, q, node, type), 1 * MS);
  snprintf(q, sizeof q, "SELECT max_ns %s", where);
  assert_int_equal((int64_t)kbdb_num(&db, q, node, type), 100 * MS);
  snprintf(q, sizeof q, "SELECT p50_ns %s", where);
  assert_near_bucket(kbdb_num(&db, q, node, type), 1e6);
  snprintf(q, sizeof q, "SELECT p99_ns %s", where);
  assert_near_bucket(kbdb_num(&db, q, node, type), 1e8);

  /* Nothing new: nothing folded, nothing counted twice. */
  assert_int_equal(fold(), 0);
  kbdb_acts(&db, proc, node, type, 100, kbdb_recent(&db, 100 * MS), 0, 100 * MS, -1);
  assert_int_equal(fold(), 100);
  snprintf(q, sizeof q, "SELECT n %s", where);
  assert_int_equal((int)kbdb_num(&db, q, node, type), 200);
  /* Now half the samples are 100 ms: the median moved up to the boundary
   * region, p90 sits at 100 ms. */
  snprintf(q, sizeof q, "SELECT p90_ns %s", where);
  assert_near_bucket(kbdb_num(&db, q, node, type), 1e8);
  assert_int_equal((int)kbdb_num(&db, "SELECT sum(count) FROM kb_baseline_hist WHERE node_id = %d", node), 200);
}

/* Sizes land in their log2 class (4096 in 12, 4095 in 11); inside a class
 * the per-byte model recovers latency = 1000 ns + 2 ns/B exactly. */
static void size_classes_and_model(void **state) {
  (void)state;
  int node = kbdb_node(&db, "host1", "POSIX"), type = kbdb_type(&db, node, "write");
  int proc = kbdb_proc(&db, "host1", "job1");
  int64_t t0 = kbdb_recent(&db, 100 * MS);
  kbdb_acts(&db, proc, node, type, 5, t0, MS, 1000 + 2 * 4096, 4096);
  kbdb_acts(&db, proc, node, type, 5, t0 + 10 * MS, MS, 1000 + 2 * 6000, 6000);
  kbdb_acts(&db, proc, node, type, 3, t0 + 20 * MS, MS, 1000 + 2 * 4095, 4095);
  assert_int_equal(fold(), 13);
  assert_int_equal((int)kbdb_num(&db, "SELECT n FROM kb_baselines WHERE node_id = %d AND size_class = 12", node), 10);
  assert_int_equal((int)kbdb_num(&db, "SELECT n FROM kb_baselines WHERE node_id = %d AND size_class = 11", node), 3);
  double b = kbdb_num(&db, "SELECT b_ns_per_byte FROM kb_baseline_models WHERE node_id = %d AND size_class = 12", node);
  double a = kbdb_num(&db, "SELECT a_ns FROM kb_baseline_models WHERE node_id = %d AND size_class = 12", node);
  assert_true(fabs(b - 2.0) < 1e-6);
  assert_true(fabs(a - 1000.0) < 1e-3);
  /* One size only in class 11: no slope to fit. */
  assert_true(isnan(kbdb_num(&db, "SELECT b_ns_per_byte FROM kb_baseline_models WHERE node_id = %d AND size_class = 11",
                             node)));
}

/* An activity that ended within the settle time is left for a later fold,
 * then folded once settled. The caller's settle time (siox-server's
 * background folds) lengthens the table's, passed as a parameter. */
static void settle_time(void **state) {
  (void)state;
  int node = kbdb_node(&db, "host2", "POSIX"), type = kbdb_type(&db, node, "read");
  int proc = kbdb_proc(&db, "host2", "");
  kbdb_exec(&db, "UPDATE kb_fold_state SET settle_ns = 15000000000 WHERE name = 'baselines'");
  kbdb_acts(&db, proc, node, type, 1, kbdb_now_ns(&db) - MS, 0, MS / 2, 10);
  assert_int_equal(fold(), 0);
  assert_true(isnan(kbdb_num(&db, "SELECT max(n) FROM kb_baselines WHERE node_id = %d", node)));
  kbdb_exec(&db, "UPDATE kb_fold_state SET settle_ns = 0 WHERE name = 'baselines'");
  char err[256] = "";
  assert_int_equal(siox_kb_baselines_update(db.c, 15000000000LL, err, sizeof err), 0);
  assert_int_equal(fold(), 1);
  assert_int_equal((int)kbdb_num(&db, "SELECT n FROM kb_baselines WHERE node_id = %d", node), 1);
}

/* kb_hist_rank: a latency's percentile rank in a histogram. */
static void rank_function(void **state) {
  (void)state;
  /* 100 samples in 1 ms's bucket, none above: 10 ms ranks at 1.0, 100 us at 0. */
  assert_true(kbdb_num(&db, "SELECT kb_hist_rank(ARRAY[kb_hist_bucket(1e6)], ARRAY[100::bigint], 1e7)") == 1.0);
  assert_true(kbdb_num(&db, "SELECT kb_hist_rank(ARRAY[kb_hist_bucket(1e6)], ARRAY[100::bigint], 1e5)") == 0.0);
  /* Half the mass two octaves below, half above: the middle ranks at 0.5. */
  assert_true(fabs(kbdb_num(&db,
                            "SELECT kb_hist_rank(ARRAY[kb_hist_bucket(2.5e5), kb_hist_bucket(4e6)],"
                            " ARRAY[50::bigint, 50], 1e6)") -
                   0.5) < 1e-9);
}

/* 100 activities of (node, type) spread evenly from base_ns to 1.5x base_ns,
 * 4 KiB each, starting at t0 1 ms apart. Returns the first aid. */
static int64_t spread(int proc, int node, int type, int64_t t0, int64_t base_ns) {
  int64_t first = 0;
  for (int k = 0; k < 100; k++) {
    int64_t aid = kbdb_acts(&db, proc, node, type, 1, t0 + k * MS, 0, base_ns + k * base_ns / 200, 4096);
    if (!first) first = aid;
  }
  return first;
}

/* Two bricks with the same history; then brick "slow" takes 10x longer for
 * 150 writes while brick "ok" carries on. Although the slow writes are
 * folded into its baseline (and would be 60 % of it), the window is scored
 * against the history without them: percentile 100, abnormal; the other
 * brick's median ranks mid-baseline. */
static void anomaly_of_slowed_component(void **state) {
  (void)state;
  int ok = kbdb_node(&db, "brick-ok:/b", "GlusterFS-brick"), slow = kbdb_node(&db, "brick-slow:/b", "GlusterFS-brick");
  int tok = kbdb_type(&db, ok, "WRITE"), tslow = kbdb_type(&db, slow, "WRITE");
  int proc = kbdb_proc(&db, "srv2", "");
  int64_t t0 = kbdb_recent(&db, 300 * MS);
  spread(proc, ok, tok, t0, MS);
  spread(proc, slow, tslow, t0, MS);
  fold();
  int64_t since = kbdb_recent(&db, 300 * MS);
  int64_t ok_aid = spread(proc, ok, tok, since, MS);
  kbdb_acts(&db, proc, slow, tslow, 150, since, MS, 10 * MS, 4096);
  int64_t slow_aid = ((int64_t)proc << 32) | db.next_local;
  kbdb_recent(&db, 0);
  fold();

  struct siox_kb_anomaly *a = NULL;
  size_t n = 0;
  char err[256] = "";
  int abnormal = siox_kb_anomalies(db.c, since, kbdb_now_ns(&db), NULL, &a, &n, err, sizeof err);
  if (abnormal < 0) fail_msg("siox_kb_anomalies: %s", err);
  assert_int_equal(abnormal, 1);
  assert_int_equal(n, 2);
  assert_int_equal(a[0].node_id, slow);
  assert_true(a[0].abnormal);
  assert_int_equal(a[0].n, 150);
  assert_int_equal(a[0].base_n, 100);
  assert_int_equal(a[0].size_class, 12);
  assert_true(a[0].percentile > 99.9);
  assert_true(a[0].above_base_p99 > 0.99);
  assert_true(a[0].slowest_aids[0] != 0);
  assert_near_bucket(a[0].base_p50_ns, 1.25e6);
  assert_true(a[0].ratio > 7 && a[0].ratio < 10); /* 10 ms over the baseline's 1.25 ms median */
  assert_int_equal(a[1].node_id, ok);
  assert_false(a[1].abnormal);
  assert_true(a[1].percentile > 30 && a[1].percentile < 70);
  free(a);

  /* One activity each, as `siox blame` scores its culprit. */
  struct siox_kb_score sc;
  assert_int_equal(siox_kb_baseline_score(db.c, slow_aid, 0, 0, &sc, err, sizeof err), 1);
  assert_true(sc.found);
  assert_int_equal(sc.latency_ns, 10 * MS);
  assert_int_equal(sc.base_n, 249); /* its own baseline without itself */
  assert_true(sc.percentile > 39 && sc.percentile < 100);
  /* With the slow episode's window taken out, as blame does: the history
   * before it is all it is judged by, and it is above all of it. */
  assert_int_equal(siox_kb_baseline_score(db.c, slow_aid, since, kbdb_now_ns(&db), &sc, err, sizeof err), 1);
  assert_int_equal(sc.base_n, 100);
  assert_true(sc.percentile > 99.9);
  assert_int_equal(siox_kb_baseline_score(db.c, ok_aid, 0, 0, &sc, err, sizeof err), 1);
  /* The fastest of its kind: only the part of its own log bucket (19 % wide)
   * below it ranks lower. */
  assert_true(sc.percentile < 20);
  assert_int_equal(siox_kb_baseline_score(db.c, 999999999999LL, 0, 0, &sc, err, sizeof err), 0);
}

/* A 1.5x drift on a tight baseline ranks above p95 but stays below the
 * rule's default ratio of 2: not abnormal; with --ratio 1.2 it is. */
static void small_drift_is_not_abnormal(void **state) {
  (void)state;
  int node = kbdb_node(&db, "brick-drift:/b", "GlusterFS-brick"), type = kbdb_type(&db, node, "WRITE");
  int proc = kbdb_proc(&db, "srv3", "");
  kbdb_acts(&db, proc, node, type, 100, kbdb_recent(&db, 200 * MS), MS, MS, 4096);
  fold();
  int64_t since = kbdb_recent(&db, 100 * MS);
  kbdb_acts(&db, proc, node, type, 20, since, MS, 3 * MS / 2, 4096);
  kbdb_recent(&db, 0);
  struct siox_kb_anomaly *a = NULL;
  size_t n = 0;
  char err[256] = "";
  assert_int_equal(siox_kb_anomalies(db.c, since, kbdb_now_ns(&db), NULL, &a, &n, err, sizeof err), 0);
  assert_int_equal(n, 1);
  assert_true(a[0].percentile > 99.9);
  assert_true(a[0].ratio > 1.2 && a[0].ratio < 2);
  free(a);
  struct siox_kb_anomaly_rule lax = {.percentile = 95, .min_ratio = 1.2, .min_samples = 5};
  assert_int_equal(siox_kb_anomalies(db.c, since, kbdb_now_ns(&db), &lax, &a, &n, err, sizeof err), 1);
  free(a);
}

/* A component that is always slow (10-15 ms per write) is slow now too: not
 * abnormal, its median mid-baseline, and a typical call of it scores in the
 * middle of its own history: "normally this slow" for blame. */
static void always_slow_is_normal(void **state) {
  (void)state;
  int node = kbdb_node(&db, "brick-slowhw:/b", "GlusterFS-brick"), type = kbdb_type(&db, node, "WRITE");
  int proc = kbdb_proc(&db, "srv4", "");
  spread(proc, node, type, kbdb_recent(&db, 200 * MS), 10 * MS);
  fold();
  int64_t since = kbdb_recent(&db, 200 * MS);
  int64_t first = spread(proc, node, type, since, 10 * MS);
  kbdb_recent(&db, 0);
  fold();
  struct siox_kb_anomaly *a = NULL;
  size_t n = 0;
  char err[256] = "";
  assert_int_equal(siox_kb_anomalies(db.c, since, kbdb_now_ns(&db), NULL, &a, &n, err, sizeof err), 0);
  assert_int_equal(n, 1);
  assert_false(a[0].abnormal);
  assert_int_equal(a[0].base_n, 100);
  assert_true(a[0].percentile > 30 && a[0].percentile < 70);
  assert_true(a[0].ratio > 0.8 && a[0].ratio < 1.25);
  free(a);
  struct siox_kb_score sc;
  /* The 50th of the window's writes: 12.5 ms, the middle of the spread. */
  assert_int_equal(siox_kb_baseline_score(db.c, first + 50, since, kbdb_now_ns(&db), &sc, err, sizeof err), 1);
  assert_true(sc.found);
  assert_int_equal(sc.base_n, 100);
  assert_true(sc.percentile > 30 && sc.percentile < 70);
}

int main(int argc, char **argv) {
  g_argc = argc;
  g_argv = argv;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(percentiles_and_increments),
      cmocka_unit_test(size_classes_and_model),
      cmocka_unit_test(settle_time),
      cmocka_unit_test(rank_function),
      cmocka_unit_test(anomaly_of_slowed_component),
      cmocka_unit_test(small_drift_is_not_abnormal),
      cmocka_unit_test(always_slow_is_normal),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
