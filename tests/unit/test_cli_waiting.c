/* waiting.c: what a call waited behind at one resource, on synthetic
 * interval sets: its own service, queued behind others (per origin, split
 * when several were served at once), unexplained, confidence. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "waiting.h"

#define MS 1000000LL
#define REQ(aid, s, e, pid, job, own) {aid, (s) * MS, (e) * MS, 131072, 1000 + (pid), pid, "n1", job, own}

/* The picture: a 900 ms call, its own request served in the last
 * 60 ms; before it the brick served 13 requests of three other ranks of the
 * same job, one after the other, 60 ms each (780 ms); 60 ms idle. */
static void queued_behind_other_ranks(void **state) {
  (void)state;
  struct siox_served s[14];
  for (int i = 0; i < 13; i++) s[i] = (struct siox_served)REQ(10 + i, 60 * i, 60 * (i + 1), 1 + i % 3, "J", false);
  s[13] = (struct siox_served)REQ(99, 840, 900, 0, "J", true);
  struct siox_wait w;
  assert_int_equal(siox_wait_analyze(0, 900 * MS, "J", s, 14, &w), 0);
  assert_int_equal(w.total_ns, 900 * MS);
  assert_int_equal(w.own_ns, 60 * MS);
  assert_int_equal(w.own_requests, 1);
  assert_int_equal(w.gap_ns, 840 * MS);
  assert_int_equal(w.queued_ns, 780 * MS);
  assert_int_equal(w.unexplained_ns, 60 * MS);
  assert_int_equal(w.others, 13);
  assert_int_equal(w.others_median_ns, 60 * MS);
  assert_int_equal(w.queued_same_job_ns, 780 * MS);
  assert_int_equal(w.queued_other_jobs_ns, 0);
  assert_int_equal(w.nby, 3);
  size_t req = 0;
  for (size_t i = 0; i < w.nby; i++) {
    req += w.by[i].requests;
    assert_true(w.by[i].same_job);
    assert_int_equal(w.by[i].median_service_ns, 60 * MS);
    /* busy 780 of the 840 ms gap, all queued ahead of the call's request */
    assert_true(w.by[i].confidence > 0.92 && w.by[i].confidence < 0.93);
  }
  assert_int_equal(req, 13);
  assert_int_equal(w.by[0].pid, 1); /* ranks 1 (5 requests), 2 and 3 (4 each) */
  assert_int_equal(w.by[0].charged_ns, 300 * MS);
  siox_wait_release(&w);
}

/* Two others served at once split the instant: neither alone held the call. */
static void concurrent_service_is_split(void **state) {
  (void)state;
  struct siox_served s[] = {REQ(1, 0, 100, 7, "B", false), REQ(2, 50, 100, 8, "C", false),
                            REQ(3, 100, 110, 0, "A", true)};
  struct siox_wait w;
  assert_int_equal(siox_wait_analyze(0, 110 * MS, "A", s, 3, &w), 0);
  assert_int_equal(w.queued_ns, 100 * MS);
  assert_int_equal(w.queued_other_jobs_ns, 100 * MS);
  assert_int_equal(w.nby, 2);
  assert_string_equal(w.by[0].job, "B");
  assert_int_equal(w.by[0].charged_ns, 75 * MS); /* 50 alone + 50 / 2 */
  assert_int_equal(w.by[1].charged_ns, 25 * MS);
  assert_true(w.by[0].share > 0.74 && w.by[0].share < 0.76);
  siox_wait_release(&w);
}

/* A request that reached the resource after the call's own first request
 * competed with it rather than queued ahead: half the confidence. Requests
 * outside the call and the call's own do not count. */
static void late_requests_and_outside(void **state) {
  (void)state;
  struct siox_served s[] = {REQ(1, -50, -10, 7, "B", false), REQ(2, 0, 10, 0, "A", true),
                            REQ(3, 5, 50, 8, "B", false), REQ(4, 50, 60, 0, "A", true),
                            REQ(5, 200, 300, 9, "B", false)};
  struct siox_wait w;
  assert_int_equal(siox_wait_analyze(0, 60 * MS, "A", s, 5, &w), 0);
  assert_int_equal(w.own_ns, 20 * MS);
  assert_int_equal(w.own_requests, 2);
  assert_int_equal(w.own_bytes, 2 * 131072);
  assert_int_equal(w.queued_ns, 40 * MS);
  assert_int_equal(w.unexplained_ns, 0);
  assert_int_equal(w.nby, 1);
  assert_int_equal(w.by[0].requests, 1);
  assert_true(w.by[0].confidence > 0.49 && w.by[0].confidence < 0.51);
  siox_wait_release(&w);
}

/* Nothing served: all of the gap is unexplained, nothing is charged. */
static void idle_resource(void **state) {
  (void)state;
  struct siox_served s[] = {REQ(2, 90, 100, 0, "A", true)};
  struct siox_wait w;
  assert_int_equal(siox_wait_analyze(0, 100 * MS, "A", s, 1, &w), 0);
  assert_int_equal(w.unexplained_ns, 90 * MS);
  assert_int_equal(w.queued_ns, 0);
  assert_int_equal(w.nby, 0);
  siox_wait_release(&w);
  assert_int_equal(siox_wait_analyze(10, 0, "A", s, 1, &w), -22);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(queued_behind_other_ranks),
      cmocka_unit_test(concurrent_service_is_split),
      cmocka_unit_test(late_requests_and_outside),
      cmocka_unit_test(idle_resource),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
