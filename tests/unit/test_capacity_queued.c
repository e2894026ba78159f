/*
 * A client's read line from the reads that did not queue behind another
 * request (capacity/cap_model.c, README "Reads queued behind another"), on
 * synthetic samples with known answers: reads of 300 us of client service
 * and, in the majority, reads that started while an earlier request of the
 * client to the same brick was in flight and hold a 6 ms wait for it. The
 * rule before (all reads, robust) takes the majority's 6 ms; the rule takes
 * 300 us and counts the queued ones. A request to another brick, and one
 * that ended at the read's start, do not queue it; an earlier write to the
 * same brick does. Under 5 reads not queued, all are fitted; without the
 * serving brick (via 0) none is judged queued; --read-all puts the rule
 * before back.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "siox_capacity.h"

#define US 1000LL
#define MS 1000000LL
#define ALONE_NS (300 * US)
#define WAIT_NS (6 * MS)
#define CHUNK 131072

static struct siox_cap_sample rd(int64_t c, int64_t brick, int64_t start, int64_t ns, int64_t span) {
  return (struct siox_cap_sample){(uint32_t)c, SIOX_CAP_READ, CHUNK, start, ns, span, 1,
                                  brick < 0 ? 0 : (uint32_t)brick + 1};
}

struct fixture {
  siox_cap_model *m;
  int64_t c, b1, b2;
};

static struct fixture setup(void) {
  struct fixture f = {.m = siox_cap_model_new()};
  f.c = siox_cap_model_comp(f.m, "client", SIOX_CAP_CLIENT);
  f.b1 = siox_cap_model_comp(f.m, "h:/b1", SIOX_CAP_BRICK);
  f.b2 = siox_cap_model_comp(f.m, "h:/b2", SIOX_CAP_BRICK);
  return f;
}

/* groups of one read alone and two behind it, to brick `brick` (-1: not
 * known), 50 ms apart; the alone one's service varies by 0-2 us, the waits
 * by 0-40 us. Returns the samples written. */
static size_t slow_brick_reads(struct fixture *f, int64_t brick, size_t groups, struct siox_cap_sample *s) {
  size_t n = 0;
  for (size_t g = 0; g < groups; g++) {
    int64_t t = (int64_t)g * 50 * MS;
    s[n++] = rd(f->c, brick, t, ALONE_NS + (int64_t)(g % 3) * US, 5 * MS);
    s[n++] = rd(f->c, brick, t + 100 * US, WAIT_NS + (int64_t)(g % 5) * 10 * US, 11 * MS);
    s[n++] = rd(f->c, brick, t + 200 * US, WAIT_NS + (int64_t)(g % 4) * 10 * US, 16 * MS);
  }
  return n;
}

static void test_queued_reads_left_out(void **state) {
  (void)state;
  struct fixture f = setup();
  struct siox_cap_sample s[60];
  size_t n = slow_brick_reads(&f, f.b1, 20, s);
  assert_int_equal(siox_cap_model_fit(f.m, s, n), 0);
  const struct siox_cap_fit *r = &f.m->comp[f.c].fit[SIOX_CAP_READ];
  assert_int_equal(r->queued, 40);
  assert_int_equal(r->n + r->left_out, 20);
  assert_true(fabs(siox_cap_fit_eval(r, CHUNK) - (ALONE_NS + 1 * US)) < 1 * US);
  /* The rule before: the waits, in the majority, make the line. */
  const struct siox_cap_fit *all = &f.m->comp[f.c].read_all;
  assert_int_equal(all->queued, 0);
  assert_true(siox_cap_fit_eval(all, CHUNK) > WAIT_NS);
  siox_cap_model_read_all(f.m);
  assert_true(f.m->read_all);
  assert_true(siox_cap_fit_eval(&f.m->comp[f.c].fit[SIOX_CAP_READ], CHUNK) > WAIT_NS);
  siox_cap_model_free(f.m);
}

/* Per group: a write to b1 for 1 ms; a read to b2 while it runs (another
 * brick: not queued), a read to b1 while it runs (queued), a read to b1
 * at its end (not queued). */
static void test_same_brick_only(void **state) {
  (void)state;
  struct fixture f = setup();
  struct siox_cap_sample s[40];
  size_t n = 0;
  for (int64_t g = 0; g < 10; g++) {
    int64_t t = g * 50 * MS;
    s[n++] = (struct siox_cap_sample){(uint32_t)f.c, SIOX_CAP_WRITE, CHUNK, t, 100 * US, MS, 1, (uint32_t)f.b1 + 1};
    s[n++] = rd(f.c, f.b2, t + 100 * US, ALONE_NS, 400 * US);
    s[n++] = rd(f.c, f.b1, t + 200 * US, WAIT_NS, 7 * MS);
    s[n++] = rd(f.c, f.b1, t + 7200 * US, ALONE_NS + 2 * US, 400 * US);
  }
  assert_int_equal(siox_cap_model_fit(f.m, s, n), 0);
  const struct siox_cap_fit *r = &f.m->comp[f.c].fit[SIOX_CAP_READ];
  assert_int_equal(r->queued, 10);
  assert_int_equal(r->n + r->left_out, 20);
  assert_true(fabs(siox_cap_fit_eval(r, CHUNK) - (ALONE_NS + 1 * US)) < 1.5 * US);
  assert_int_equal(f.m->comp[f.c].fit[SIOX_CAP_WRITE].queued, 0);
  siox_cap_model_free(f.m);
}

/* Under 5 reads not queued: all are fitted, none counted queued. */
static void test_few_alone_fit_all(void **state) {
  (void)state;
  struct fixture f = setup();
  struct siox_cap_sample s[12];
  size_t n = slow_brick_reads(&f, f.b1, 4, s);
  assert_int_equal(siox_cap_model_fit(f.m, s, n), 0);
  const struct siox_cap_fit *r = &f.m->comp[f.c].fit[SIOX_CAP_READ];
  assert_int_equal(r->queued, 0);
  assert_int_equal(r->n + r->left_out, 12);
  assert_true(r->a_ns == f.m->comp[f.c].read_all.a_ns);
  siox_cap_model_free(f.m);
}

/* The serving brick not known: no read is judged queued. */
static void test_no_brick_not_judged(void **state) {
  (void)state;
  struct fixture f = setup();
  struct siox_cap_sample s[60];
  size_t n = slow_brick_reads(&f, -1, 20, s);
  assert_int_equal(siox_cap_model_fit(f.m, s, n), 0);
  const struct siox_cap_fit *r = &f.m->comp[f.c].fit[SIOX_CAP_READ];
  assert_int_equal(r->queued, 0);
  assert_true(siox_cap_fit_eval(r, CHUNK) > WAIT_NS);
  siox_cap_model_free(f.m);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_queued_reads_left_out), cmocka_unit_test(test_same_brick_only),
      cmocka_unit_test(test_few_alone_fit_all), cmocka_unit_test(test_no_brick_not_judged),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
