/* waiting.c: what a call waited behind at one resource, on synthetic
 * interval sets: its own service, queued behind others (per origin, split
 * when several were served at once), unexplained, confidence. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "blame_class.h"
#include "waiting.h"

#define MS 1000000LL
#define REQ(aid, s, e, pid, job, own) {aid, (s) * MS, (e) * MS, 131072, 1000 + (pid), pid, "n1", job, own, 0, 0, 0, 0}
/* An own request that joined the resource's queue at q ms (exact windows),
 * wound by node 1 (the client). */
#define OWNQ(aid, q, s, e, job) {aid, (s) * MS, (e) * MS, 4096, 1000, 0, "n1", job, true, 0, (q) * MS, 0, 1}
/* Another's request wound at q ms by node `node`, served s-e. */
#define WOUND(aid, q, node, s, e, pid, job) \
  {aid, (s) * MS, (e) * MS, 131072, 1000 + (pid), pid, "n1", job, false, 0, (q) * MS, 0, node}

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

/* Exact queue windows. A 100 ms call: its request reached the FUSE client
 * at 60 ms, joined the brick's connection at 70 (the client fop's wind)
 * and was served 90-100. Job B's request was served by the brick 0-50,
 * while the call was still in the kernel (e.g. behind the inode lock), and
 * job C's 70-90. Inferred from the gap alone, B holds most of the wait
 * (interference by B); with the windows only C was ahead of the call at
 * the brick, and 0-70 is not the brick's. */
static void exact_windows(void **state) {
  (void)state;
  struct siox_served s[] = {REQ(1, 0, 50, 7, "B", false), REQ(2, 70, 90, 8, "C", false),
                            REQ(3, 90, 100, 0, "A", true)};
  struct siox_wait w;
  assert_int_equal(siox_wait_analyze(0, 100 * MS, "A", s, 3, &w), 0); /* inferred */
  assert_false(w.exact);
  assert_int_equal(w.queued_ns, 70 * MS);
  assert_string_equal(w.by[0].job, "B");
  siox_wait_release(&w);
  s[2] = (struct siox_served)OWNQ(3, 70, 90, 100, "A");
  assert_int_equal(siox_wait_analyze(0, 100 * MS, "A", s, 3, &w), 0); /* exact */
  assert_true(w.exact);
  assert_int_equal(w.own_ns, 10 * MS);
  assert_int_equal(w.queued_ns, 20 * MS);
  assert_int_equal(w.unexplained_ns, 70 * MS);
  assert_int_equal(w.nby, 1);
  assert_string_equal(w.by[0].job, "C");
  assert_int_equal(w.by[0].charged_ns, 20 * MS);
  siox_wait_release(&w);
}

/* A reply window: the call's client fop (0-100) had its brick part end at
 * 20, then waited 20-100 for the client process, which worked on job B's
 * fops 10-100. Without the window that is the fop's own service in the
 * channel; with it, 80 ms queued behind B. */
static void reply_window(void **state) {
  (void)state;
  struct siox_served s[] = {REQ(1, 10, 100, 7, "B", false), OWNQ(2, 0, 0, 100, "A")};
  struct siox_wait w;
  assert_int_equal(siox_wait_analyze(0, 100 * MS, "A", s, 2, &w), 0);
  assert_int_equal(w.own_ns, 100 * MS);
  assert_int_equal(w.queued_ns, 0);
  siox_wait_release(&w);
  s[1].queue_from_ns = 0;
  s[1].reply_from_ns = 20 * MS;
  assert_int_equal(siox_wait_analyze(0, 100 * MS, "A", s, 2, &w), 0);
  assert_true(w.exact);
  assert_int_equal(w.own_ns, 20 * MS);
  assert_int_equal(w.queued_ns, 80 * MS);
  assert_int_equal(w.nby, 1);
  assert_string_equal(w.by[0].job, "B");
  siox_wait_release(&w);
  /* an own request alone with both windows: six breakpoints for one request */
  struct siox_served alone[] = {OWNQ(3, 5, 10, 90, "A")};
  alone[0].reply_from_ns = 50 * MS;
  assert_int_equal(siox_wait_analyze(0, 100 * MS, "A", alone, 1, &w), 0);
  assert_int_equal(w.own_ns, 40 * MS);
  assert_int_equal(w.queued_ns, 0);
  assert_int_equal(w.unexplained_ns, 60 * MS);
  siox_wait_release(&w);
}

/* Queues in tandem (scenario (f) of issue 10): a 100 ms write waited
 * 0-40 in the FUSE channel, where job B's fops were in flight while the
 * brick was idle (the client process starved), then 40-90 at the brick,
 * which served B 40-60 and was idle 60-90 while the call sat in the
 * connection behind B's fops. Each queue alone explains < 50% of the call
 * (the class would be normal); merged, 60 ms (60%) queued behind B. */
static void tandem_queues(void **state) {
  (void)state;
  struct siox_served chan[] = {REQ(1, -10, 90, 7, "B", false), OWNQ(2, 0, 40, 100, "A")};
  struct siox_served brick[] = {REQ(3, 40, 60, 7, "B", false), OWNQ(4, 40, 90, 100, "A")};
  struct siox_wait c, b, t;
  assert_int_equal(siox_wait_analyze(0, 100 * MS, "A", chan, 2, &c), 0);
  assert_int_equal(siox_wait_analyze(0, 100 * MS, "A", brick, 2, &b), 0);
  assert_int_equal(c.queued_ns, 40 * MS);
  assert_int_equal(b.queued_ns, 20 * MS);
  assert_int_equal(siox_wait_merge(&b, &c, &t), 0);
  assert_int_equal(t.total_ns, 100 * MS);
  assert_int_equal(t.own_ns, 10 * MS);
  assert_int_equal(t.queued_ns, 60 * MS);
  assert_int_equal(t.queued_other_jobs_ns, 60 * MS);
  assert_int_equal(t.unexplained_ns, 30 * MS);
  assert_int_equal(t.nby, 1); /* one origin, both queues */
  assert_int_equal(t.by[0].requests, 2);
  assert_true(t.by[0].share > 0.66 && t.by[0].share < 0.67); /* 60 of the 90 ms gap */
  assert_true(t.exact);
  /* The class: a brick that served normally; the brick's queue alone says
   * the call did not wait (normal), the tandem says interference. */
  struct siox_class_input in = {.peers = 0, .kind = -1, .baseline = -1, .ops_ratio = 1.0, .ops = 10, .ratio = 3,
                                .wait = &b, .wait_share = 0.5};
  assert_int_equal(siox_classify(&in).cls, SIOX_CLASS_NORMAL);
  in.wait = &c;
  assert_int_equal(siox_classify(&in).cls, SIOX_CLASS_NORMAL);
  in.wait = &t;
  assert_int_equal(siox_classify(&in).cls, SIOX_CLASS_INTERFERENCE);
  siox_wait_release(&c);
  siox_wait_release(&b);
  siox_wait_release(&t);
}

/* Ahead in the connection (scenario (f), seen in a bench round): job A's
 * 4 KiB write joined the client's connection to the brick at 10 ms and
 * reached the brick at 70; job B's two 128 KiB writes, wound by the same
 * client at 1 and 5, reached the brick only at 40 and 60 (the connection
 * held them: the brick idle 10-40 and 50-60). The brick's service alone
 * explains 20 of the call's 80 ms (the class was `transient`); with the
 * requests ahead of A in the connection, 60 ms queued behind B. A request
 * wound later than A's (C at 20), or by another client (D, node 2), was
 * not ahead of it, though both reached the brick no later. */
static void ahead_in_connection(void **state) {
  (void)state;
  struct siox_served s[] = {WOUND(1, 1, 1, 40, 50, 7, "B"),  WOUND(2, 5, 1, 60, 70, 8, "B"),
                            WOUND(3, 20, 1, 70, 75, 9, "C"), WOUND(4, 1, 2, 70, 72, 6, "D"),
                            OWNQ(5, 10, 70, 80, "A")};
  struct siox_wait w;
  assert_int_equal(siox_wait_analyze(0, 80 * MS, "A", s, 5, &w), 0);
  assert_true(w.exact);
  assert_int_equal(w.own_ns, 10 * MS);
  assert_int_equal(w.queued_ns, 60 * MS);
  assert_int_equal(w.queued_other_jobs_ns, 60 * MS);
  assert_int_equal(w.unexplained_ns, 10 * MS); /* 0-10: not in the connection yet */
  /* 10-40 both ahead (15 each), 40-50 the first served, 50-60 the second
   * ahead, 60-70 it is served. */
  assert_int_equal(w.nby, 2);
  assert_int_equal(w.by[0].pid, 8);
  assert_int_equal(w.by[0].charged_ns, 35 * MS);
  assert_int_equal(w.by[1].pid, 7);
  assert_int_equal(w.by[1].charged_ns, 25 * MS);
  siox_wait_release(&w);
  /* The same requests without their wind (not recorded): only the brick's
   * service of others in A's window counts, 20 ms. */
  for (int i = 0; i < 4; i++) s[i].queue_from_ns = 0;
  assert_int_equal(siox_wait_analyze(0, 80 * MS, "A", s, 5, &w), 0);
  assert_int_equal(w.queued_ns, 20 * MS);
  siox_wait_release(&w);
}

/* Service per request with concurrent service shared out: a healthy brick
 * serving 4 requests of a hammering job at once takes 40 ms for each, yet
 * 10 ms per request (judged by whole times, 4x a 10 ms model: a fault;
 * shared, 1x: it is only busy); a slowed brick serving one at a time keeps
 * its 60 ms; a partial overlap splits only the shared part. */
static void shared_service(void **state) {
  (void)state;
  struct siox_served busy[] = {REQ(1, 0, 40, 7, "B", false), REQ(2, 0, 40, 7, "B", false),
                               REQ(3, 0, 40, 8, "B", false), REQ(4, 0, 40, 8, "B", false)};
  struct siox_served serial[] = {REQ(5, 0, 60, 7, "J", false), REQ(6, 60, 120, 8, "J", false)};
  struct siox_served part[] = {REQ(7, 0, 10, 7, "J", false), REQ(8, 5, 15, 8, "J", false)};
  int64_t out[4];
  assert_int_equal(siox_served_shared_ns(busy, 4, out), 0);
  for (int i = 0; i < 4; i++) assert_int_equal(out[i], 10 * MS);
  assert_int_equal(siox_served_shared_ns(serial, 2, out), 0);
  assert_int_equal(out[0], 60 * MS);
  assert_int_equal(out[1], 60 * MS);
  assert_int_equal(siox_served_shared_ns(part, 2, out), 0);
  assert_int_equal(out[0], 7500000);
  assert_int_equal(out[1], 7500000);
  struct siox_kind_model m = {.have = true, .a_s = 0.010};
  struct siox_kind_sample whole[4], shared[4];
  assert_int_equal(siox_served_shared_ns(busy, 4, out), 0);
  for (int i = 0; i < 4; i++) {
    whole[i] = (struct siox_kind_sample){.node_id = 1, .ns = 40 * MS, .bytes = -1};
    shared[i] = (struct siox_kind_sample){.node_id = 1, .ns = out[i], .bytes = -1};
  }
  assert_true(siox_kind_model_median_ratio(&m, whole, 4) >= 3.0);
  assert_true(siox_kind_model_median_ratio(&m, shared, 4) < 1.01);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(queued_behind_other_ranks),
      cmocka_unit_test(concurrent_service_is_split),
      cmocka_unit_test(late_requests_and_outside),
      cmocka_unit_test(idle_resource),
      cmocka_unit_test(exact_windows),
      cmocka_unit_test(reply_window),
      cmocka_unit_test(tandem_queues),
      cmocka_unit_test(ahead_in_connection),
      cmocka_unit_test(shared_service),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
