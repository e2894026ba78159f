/* blame_class.c: the kind's latency model and the class of a verdict, on
 * synthetic evidence. Each class test is a case one rule alone gets wrong:
 * waiting alone calls a slowed brick's queue self-inflicted, the peer rule
 * alone calls a lone outlier or a hammered healthy brick a fault. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>

#include "blame_class.h"

#define MS 1000000LL
#define KIB 1024LL

/* Healthy components: 0.1 ms + 3.5 ms per MiB. */
static int64_t healthy_ns(int64_t bytes) { return (int64_t)(0.1e6 + 3.5e6 * (double)bytes / 1048576.0); }

/* Three healthy bricks and one slow one (60 ms each) that has ten times
 * their samples: the model follows the healthy ones. */
static void kind_model_robust_to_a_slow_component(void **state) {
  (void)state;
  struct siox_kind_sample s[600];
  size_t n = 0;
  int64_t sizes[] = {4 * KIB, 64 * KIB, 128 * KIB, 1024 * KIB};
  for (int node = 1; node <= 3; node++)
    for (int k = 0; k < 4; k++)
      for (int r = 0; r < 3; r++) s[n++] = (struct siox_kind_sample){node, healthy_ns(sizes[k]) + r * 1000, sizes[k]};
  for (int r = 0; r < 400; r++) s[n++] = (struct siox_kind_sample){4, 60 * MS, sizes[r % 4]};
  struct siox_kind_model m;
  assert_int_equal(siox_kind_model_fit(s, n, &m), 0);
  assert_true(m.have);
  assert_int_equal(m.nodes, 4);
  double e = siox_kind_model_expect_s(&m, 256 * KIB);
  assert_true(fabs(e - healthy_ns(256 * KIB) / 1e9) < 0.0002);
  /* the slow brick's operations: far above the model; a healthy one's: ~1x */
  struct siox_kind_sample slow[] = {{4, 60 * MS, 128 * KIB}, {4, 61 * MS, 128 * KIB}, {4, 59 * MS, 4 * KIB}};
  assert_true(siox_kind_model_median_ratio(&m, slow, 3) > 50);
  struct siox_kind_sample ok[] = {{1, healthy_ns(64 * KIB), 64 * KIB}};
  assert_true(fabs(siox_kind_model_median_ratio(&m, ok, 1) - 1) < 0.1);
}

/* Seen in bench/run blame: two slowed bricks (earlier jobs) served HDF5's
 * small metadata writes, in seven size classes no other brick saw, 60 ms
 * each; eight healthy bricks served only 64 and 128 KiB writes. Each size
 * class is one point of the line: seven slow points outvoted two healthy
 * ones and the model read 60 ms + 0/byte, so a slowed brick looked normal.
 * A class now needs a quarter of the components. */
static void kind_model_ignores_sizes_few_components_served(void **state) {
  (void)state;
  struct siox_kind_sample s[200];
  size_t n = 0;
  int64_t small[] = {40, 96, 120, 272, 328, 544, 1992};
  for (int node = 1; node <= 2; node++) {
    for (int k = 0; k < 7; k++) s[n++] = (struct siox_kind_sample){node, 60 * MS, small[k]};
    for (int r = 0; r < 4; r++) s[n++] = (struct siox_kind_sample){node, 60 * MS, 128 * KIB};
  }
  for (int node = 3; node <= 10; node++)
    for (int r = 0; r < 6; r++)
      s[n++] = (struct siox_kind_sample){node, healthy_ns(r % 2 ? 64 * KIB : 128 * KIB), r % 2 ? 64 * KIB : 128 * KIB};
  struct siox_kind_model m;
  assert_int_equal(siox_kind_model_fit(s, n, &m), 0);
  assert_true(m.have);
  assert_int_equal(m.nodes, 10);
  assert_int_equal(m.points, 2);
  assert_true(fabs(siox_kind_model_expect_s(&m, 128 * KIB) - healthy_ns(128 * KIB) / 1e9) < 0.0002);
  struct siox_kind_sample slow[] = {{1, 60 * MS, 128 * KIB}};
  assert_true(siox_kind_model_median_ratio(&m, slow, 1) > 50);
}

/* One component's history is its baseline, not a model of its kind. */
static void kind_model_needs_two_components(void **state) {
  (void)state;
  struct siox_kind_sample s[] = {{1, MS, 4096}, {1, 2 * MS, 8192}, {1, 3 * MS, 16384}};
  struct siox_kind_model m;
  assert_int_equal(siox_kind_model_fit(s, 3, &m), 0);
  assert_false(m.have);
  assert_int_equal(m.nodes, 1);
  /* metadata (no sizes): a fixed cost from two components */
  struct siox_kind_sample md[] = {{1, 2 * MS, -1}, {2, 2 * MS, -1}, {3, 50 * MS, -1}, {3, 50 * MS, -1}};
  assert_int_equal(siox_kind_model_fit(md, 4, &m), 0);
  assert_true(m.have);
  assert_true(fabs(siox_kind_model_expect_s(&m, -1) - 0.002) < 1e-9); /* the median of 2, 2 and 50 ms per component */
}

static struct siox_wait queued(int64_t total, int64_t same, int64_t other) {
  return (struct siox_wait){.total_ns = total, .queued_ns = same + other, .queued_same_job_ns = same,
                            .queued_other_jobs_ns = other, .gap_ns = total};
}

#define INPUT(p, k, b, ops_r, n_ops, w) \
  ((struct siox_class_input){.peers = p, .kind = k, .baseline = b, .ops_ratio = ops_r, .ops = n_ops, .ratio = 3, \
                             .wait = w, .wait_share = 0.5})

/* All ranks on the slowed brick: the call queued behind its own job (waiting
 * alone: self-inflicted), but the brick serves everyone 140x slower than its
 * kind: a fault. */
static void slowed_brick_queue_is_a_fault(void **state) {
  (void)state;
  struct siox_wait w = queued(900 * MS, 780 * MS, 0);
  struct siox_class_input in = INPUT(-1, 1, -1, 140, 30, &w);
  struct siox_class_verdict v = siox_classify(&in);
  assert_int_equal(v.cls, SIOX_CLASS_FAULT);
  assert_int_equal(v.by, SIOX_EVIDENCE_KIND);
}

/* A healthy brick hammered by another job: the call's request itself came
 * out slow against its peers (the peer rule alone: fault), but the brick's
 * operations are normal for their size and the call queued behind job B. */
static void hammered_healthy_brick_is_interference(void **state) {
  (void)state;
  struct siox_wait w = queued(50 * MS, 2 * MS, 40 * MS);
  struct siox_class_input in = INPUT(1, 1, -1, 1.2, 200, &w);
  struct siox_class_verdict v = siox_classify(&in);
  assert_int_equal(v.cls, SIOX_CLASS_INTERFERENCE);
  assert_true(v.slow_service);
}

/* A healthy brick serving 4 of job B's requests at once: each takes 4x
 * its kind's model whole (the operations rule alone: a fault), 1x per
 * request once concurrent service is shared out, and the call queued
 * behind B: interference. A slowed brick serving one at a time (shared =
 * whole) stays a fault; so does one whose shared-out service is slow even
 * though B queued ahead (a faulty brick another job also uses). */
static void concurrent_load_is_not_a_fault(void **state) {
  (void)state;
  struct siox_wait w = queued(100 * MS, 0, 80 * MS);
  struct siox_class_input in = INPUT(1, 1, -1, 4.0, 200, &w);
  assert_int_equal(siox_classify(&in).cls, SIOX_CLASS_FAULT); /* shared ratio unknown: as before */
  in.ops_shared_ratio = 1.0;
  assert_int_equal(siox_classify(&in).cls, SIOX_CLASS_INTERFERENCE);
  in.ops_shared_ratio = 4.0;
  assert_int_equal(siox_classify(&in).cls, SIOX_CLASS_FAULT);
  struct siox_wait own = queued(100 * MS, 80 * MS, 0); /* its own job's load: no excuse, as before */
  in.wait = &own;
  in.ops_shared_ratio = 1.0;
  assert_int_equal(siox_classify(&in).cls, SIOX_CLASS_FAULT);
}

/* The slowest call is an outlier by selection: 21x the peers' line, while
 * the component's 127 other operations had a median of 1.33x. Transient. */
static void lone_outlier_is_transient(void **state) {
  (void)state;
  struct siox_wait w = queued(5 * MS, 0, 0);
  struct siox_class_input in = INPUT(1, 1, -1, 1.33, 127, &w);
  struct siox_class_verdict v = siox_classify(&in);
  assert_int_equal(v.cls, SIOX_CLASS_TRANSIENT);
  assert_int_equal(v.by, SIOX_EVIDENCE_PEERS);
  /* with too few operations to judge the component, the evidence stands */
  in.ops = 2;
  assert_int_equal(siox_classify(&in).cls, SIOX_CLASS_FAULT);
}

static void own_job_queue_is_self_inflicted(void **state) {
  (void)state;
  struct siox_wait w = queued(100 * MS, 70 * MS, 10 * MS);
  struct siox_class_input in = INPUT(0, 0, -1, 1.1, 50, &w);
  assert_int_equal(siox_classify(&in).cls, SIOX_CLASS_SELF);
  /* a short wait is no story: normal */
  w = queued(100 * MS, 20 * MS, 10 * MS);
  assert_int_equal(siox_classify(&in).cls, SIOX_CLASS_NORMAL);
}

/* Without peers the kind's model decides; without a model the baseline;
 * without any, no verdict. */
static void evidence_order(void **state) {
  (void)state;
  struct siox_class_input in = INPUT(-1, -1, 1, 0, 0, NULL);
  struct siox_class_verdict v = siox_classify(&in);
  assert_int_equal(v.cls, SIOX_CLASS_FAULT);
  assert_int_equal(v.by, SIOX_EVIDENCE_BASELINE);
  in.kind = 0; /* the model says normal: it outranks the baseline */
  v = siox_classify(&in);
  assert_int_equal(v.cls, SIOX_CLASS_NORMAL);
  assert_int_equal(v.by, SIOX_EVIDENCE_KIND);
  in = INPUT(-1, -1, -1, 0, 0, NULL);
  v = siox_classify(&in);
  assert_int_equal(v.cls, SIOX_CLASS_NONE);
  assert_int_equal(v.by, SIOX_EVIDENCE_NONE);
  assert_string_equal(siox_class_name(SIOX_CLASS_SELF), "self-inflicted");
  assert_string_equal(siox_evidence_name(SIOX_EVIDENCE_KIND), "kind-model");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(kind_model_robust_to_a_slow_component),
      cmocka_unit_test(kind_model_needs_two_components),
      cmocka_unit_test(kind_model_ignores_sizes_few_components_served),
      cmocka_unit_test(slowed_brick_queue_is_a_fault),
      cmocka_unit_test(hammered_healthy_brick_is_interference),
      cmocka_unit_test(concurrent_load_is_not_a_fault),
      cmocka_unit_test(lone_outlier_is_transient),
      cmocka_unit_test(own_job_queue_is_self_inflicted),
      cmocka_unit_test(evidence_order),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
