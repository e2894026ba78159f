/* Unit test: implicit-link confidence (siox-server/link.c): 1.0 only for a
 * single covering sender, byte-proportional splits, low and flagged links
 * for receives that start before their sender or outlive it, never zero,
 * never dropped. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "link.h"

static void test_single_covering_sender_is_certain(void **state) {
  (void)state;
  struct siox_link_cand c[] = {{11, SIOX_LINK_INSIDE, 4096, 1, 1, 0}};
  struct siox_link out[1];
  assert_int_equal(siox_link_confidence(c, 1, 4096, out), 1);
  assert_int_equal(out[0].parent, 11);
  assert_true(out[0].confidence == 1.0);
  assert_string_equal(out[0].flags, "");
}

static void test_partial_single_sender_is_not_certain(void **state) {
  (void)state;
  struct siox_link_cand c[] = {{11, SIOX_LINK_INSIDE, 1024, 0, 1, 0}};
  struct siox_link out[1];
  assert_int_equal(siox_link_confidence(c, 1, 4096, out), 1);
  assert_float_equal(out[0].confidence, 0.25, 1e-9);
}

static void test_split_by_overlapping_bytes(void **state) {
  (void)state;
  /* An aggregator write of 4 KiB covering three ranks' ranges. */
  struct siox_link_cand c[] = {{1, SIOX_LINK_INSIDE, 1024, 0, 1, 0}, {2, SIOX_LINK_INSIDE, 1024, 0, 1, 0}, {3, SIOX_LINK_INSIDE, 2048, 0, 1, 0}};
  struct siox_link out[3];
  assert_int_equal(siox_link_confidence(c, 3, 4096, out), 3);
  assert_float_equal(out[0].confidence, 0.25, 1e-9);
  assert_float_equal(out[1].confidence, 0.25, 1e-9);
  assert_float_equal(out[2].confidence, 0.5, 1e-9);
}

static void test_two_covering_senders_share(void **state) {
  (void)state;
  struct siox_link_cand c[] = {{1, SIOX_LINK_INSIDE, 4096, 1, 1, 0}, {2, SIOX_LINK_INSIDE, 4096, 1, 1, 0}};
  struct siox_link out[2];
  assert_int_equal(siox_link_confidence(c, 2, 4096, out), 2);
  assert_float_equal(out[0].confidence, 0.5, 1e-9);
  assert_float_equal(out[1].confidence, 0.5, 1e-9);
}

static void test_before_parent_is_low_and_flagged(void **state) {
  (void)state;
  struct siox_link_cand c[] = {{5, SIOX_LINK_BEFORE, 4096, 1, 1, 0}};
  struct siox_link out[1];
  assert_int_equal(siox_link_confidence(c, 1, 4096, out), 1);
  assert_true(out[0].confidence <= SIOX_LINK_BEFORE_MAX);
  assert_true(out[0].confidence > 0);
  assert_string_equal(out[0].flags, "before-parent");
}

static void test_inside_beats_before(void **state) {
  (void)state;
  struct siox_link_cand c[] = {{5, SIOX_LINK_BEFORE, 4096, 1, 1, 0}, {6, SIOX_LINK_INSIDE, 4096, 1, 1, 0}};
  struct siox_link out[2];
  assert_int_equal(siox_link_confidence(c, 2, 4096, out), 1);
  assert_int_equal(out[0].parent, 6);
  assert_true(out[0].confidence == 1.0);
}

static void test_after_parent_is_low_and_flagged(void **state) {
  (void)state;
  /* Write-behind: the aggregator's write starts after the rank's call ended. */
  struct siox_link_cand c[] = {{7, SIOX_LINK_AFTER, 4096, 1, 1, 0}};
  struct siox_link out[1];
  assert_int_equal(siox_link_confidence(c, 1, 4096, out), 1);
  assert_int_equal(out[0].parent, 7);
  assert_true(out[0].confidence <= SIOX_LINK_AFTER_MAX);
  assert_true(out[0].confidence > 0);
  assert_string_equal(out[0].flags, "after-parent");
}

static void test_after_parent_split(void **state) {
  (void)state;
  /* Asynchronous aggregation of two ranks' halves: shared, each still low. */
  struct siox_link_cand c[] = {{1, SIOX_LINK_AFTER, 2048, 0, 1, 0}, {2, SIOX_LINK_AFTER, 2048, 0, 1, 0}};
  struct siox_link out[2];
  assert_int_equal(siox_link_confidence(c, 2, 4096, out), 2);
  assert_float_equal(out[0].confidence, 0.5 * SIOX_LINK_AFTER_MAX, 1e-9);
  assert_float_equal(out[1].confidence, 0.5 * SIOX_LINK_AFTER_MAX, 1e-9);
  assert_string_equal(out[1].flags, "after-parent");
}

static void test_in_window_beats_late(void **state) {
  (void)state;
  struct siox_link_cand c[] = {{5, SIOX_LINK_AFTER, 4096, 1, 1, 0}, {6, SIOX_LINK_INSIDE, 4096, 1, 1, 0}, {8, SIOX_LINK_BEFORE, 4096, 1, 1, 0}};
  struct siox_link out[3];
  assert_int_equal(siox_link_confidence(c, 3, 4096, out), 1);
  assert_int_equal(out[0].parent, 6);
  assert_true(out[0].confidence == 1.0);
  assert_string_equal(out[0].flags, "");
  /* Without an inside candidate, read-ahead beats lateness. */
  struct siox_link_cand guesses[] = {{5, SIOX_LINK_AFTER, 4096, 1, 1, 0}, {8, SIOX_LINK_BEFORE, 4096, 1, 1, 0}};
  assert_int_equal(siox_link_confidence(guesses, 2, 4096, out), 1);
  assert_int_equal(out[0].parent, 8);
  assert_string_equal(out[0].flags, "before-parent");
}

static void test_ranges_unknown(void **state) {
  (void)state;
  struct siox_link_cand none[] = {{1, SIOX_LINK_INSIDE, 0, 1, 0, 0}, {2, SIOX_LINK_INSIDE, 0, 1, 0, 0}};
  struct siox_link out[2];
  assert_int_equal(siox_link_confidence(none, 2, 0, out), 2); /* R names no range: equal shares */
  assert_float_equal(out[0].confidence, 0.5, 1e-9);
  struct siox_link_cand unranged[] = {{1, SIOX_LINK_INSIDE, 0, 0, 0, 0}};
  assert_int_equal(siox_link_confidence(unranged, 1, 4096, out), 1); /* S names none */
  assert_true(out[0].confidence <= SIOX_LINK_UNRANGED_MAX);
  assert_int_equal(siox_link_confidence(unranged, 0, 4096, out), 0);
}

/* A client flush (no range) inside its own close (no range) and inside
 * another process's concurrent pwrite to the same file (ranged): the close
 * alone. A brick writev (ranged) inside its client writev and a concurrent
 * client fsync of the file: the writev alone, certain. Either kind stands
 * in when R's own is missing. Without the rule the flush was split 0.5/0.5
 * and the writev capped. */
/* A brick lookup (unranged) inside the widened intervals of the client's
 * lookup and of the open right after it, strictly inside the lookup's own:
 * the lookup made it. With neither strict (clocks of two hosts), both stand. */
static void test_strictly_inside_first(void **state) {
  (void)state;
  struct siox_link out[2];
  struct siox_link_cand c[] = {{1, SIOX_LINK_INSIDE, 0, 1, 0, 1}, {2, SIOX_LINK_INSIDE, 0, 1, 0, 0}};
  assert_int_equal(siox_link_confidence(c, 2, 0, out), 1);
  assert_int_equal(out[0].parent, 1);
  assert_true(out[0].confidence == 1.0);
  c[0].strict = 0;
  assert_int_equal(siox_link_confidence(c, 2, 0, out), 2);
  assert_true(out[0].confidence == 0.5 && out[1].confidence == 0.5);
  /* a ranged R keeps splitting by bytes, strict or not */
  struct siox_link_cand w[] = {{3, SIOX_LINK_INSIDE, 2048, 0, 1, 1}, {4, SIOX_LINK_INSIDE, 2048, 0, 1, 0}};
  assert_int_equal(siox_link_confidence(w, 2, 4096, out), 2);
}

static void test_same_kind_of_range_first(void **state) {
  (void)state;
  struct siox_link out[2];
  struct siox_link_cand flush[] = {{1, SIOX_LINK_INSIDE, 0, 1, 1, 0}, {2, SIOX_LINK_INSIDE, 0, 1, 0, 0}};
  assert_int_equal(siox_link_confidence(flush, 2, 0, out), 1);
  assert_int_equal(out[0].parent, 2);
  assert_true(out[0].confidence == 1.0);
  struct siox_link_cand writev[] = {{3, SIOX_LINK_INSIDE, 0, 0, 0, 0}, {4, SIOX_LINK_INSIDE, 4096, 1, 1, 0}};
  assert_int_equal(siox_link_confidence(writev, 2, 4096, out), 1);
  assert_int_equal(out[0].parent, 4);
  assert_true(out[0].confidence == 1.0);
  /* only the other kind: it stands in, as before */
  assert_int_equal(siox_link_confidence(flush, 1, 0, out), 1);
  assert_int_equal(out[0].parent, 1);
  assert_int_equal(siox_link_confidence(writev, 1, 4096, out), 1);
  assert_true(out[0].confidence <= SIOX_LINK_UNRANGED_MAX);
  /* R's kind, though only late, beats the other kind inside */
  struct siox_link_cand late[] = {{5, SIOX_LINK_INSIDE, 0, 1, 1, 0}, {6, SIOX_LINK_AFTER, 0, 1, 0, 0}};
  assert_int_equal(siox_link_confidence(late, 2, 0, out), 1);
  assert_int_equal(out[0].parent, 6);
  assert_string_equal(out[0].flags, "after-parent");
}

/* A sender with several records on R's object is one candidate: its best
 * record, by a total order, so the SQL matcher's row order does not decide
 * (the in-memory matcher's property test found two servers that did). */
static void test_best_record_of_a_sender(void **state) {
  (void)state;
  /* an unranged R inside a sender that sent with and without a range */
  struct siox_link_cand unranged = {7, SIOX_LINK_INSIDE, 0, 1, 0, 1}, ranged = {7, SIOX_LINK_INSIDE, 0, 1, 1, 1};
  assert_true(siox_link_cand_better(&unranged, &ranged, 0));
  assert_false(siox_link_cand_better(&ranged, &unranged, 0));
  /* the class first, then the overlapping bytes */
  struct siox_link_cand before = {7, SIOX_LINK_BEFORE, 4096, 1, 1, 0}, inside = {7, SIOX_LINK_INSIDE, 1024, 0, 1, 0};
  assert_true(siox_link_cand_better(&inside, &before, 4096));
  struct siox_link_cand more = {7, SIOX_LINK_INSIDE, 2048, 0, 1, 0};
  assert_true(siox_link_cand_better(&more, &inside, 4096));
  /* strictly inside, then containing, break the remaining ties */
  struct siox_link_cand strict = {7, SIOX_LINK_INSIDE, 0, 1, 0, 1}, widened = {7, SIOX_LINK_INSIDE, 0, 1, 0, 0};
  assert_true(siox_link_cand_better(&strict, &widened, 0));
  assert_false(siox_link_cand_better(&widened, &strict, 0));
  assert_false(siox_link_cand_better(&strict, &strict, 0));
}

static void test_never_zero(void **state) {
  (void)state;
  struct siox_link_cand c[] = {{1, SIOX_LINK_BEFORE, 1, 0, 1, 0}, {2, SIOX_LINK_BEFORE, 1u << 30, 1, 1, 0}};
  struct siox_link out[2];
  assert_int_equal(siox_link_confidence(c, 2, 1u << 30, out), 2);
  assert_true(out[0].confidence > 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_single_covering_sender_is_certain),
      cmocka_unit_test(test_partial_single_sender_is_not_certain),
      cmocka_unit_test(test_split_by_overlapping_bytes),
      cmocka_unit_test(test_two_covering_senders_share),
      cmocka_unit_test(test_before_parent_is_low_and_flagged),
      cmocka_unit_test(test_inside_beats_before),
      cmocka_unit_test(test_after_parent_is_low_and_flagged),
      cmocka_unit_test(test_after_parent_split),
      cmocka_unit_test(test_in_window_beats_late),
      cmocka_unit_test(test_ranges_unknown),
      cmocka_unit_test(test_same_kind_of_range_first),
      cmocka_unit_test(test_strictly_inside_first),
      cmocka_unit_test(test_best_record_of_a_sender),
      cmocka_unit_test(test_never_zero),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
