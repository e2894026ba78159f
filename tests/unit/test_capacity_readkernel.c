/*
 * The kernel's part of a read per brick that served it (capacity/README.md,
 * "The read-back's kernel part"): behind a slow brick's requests the
 * kernel's work between a read call's requests is hidden, behind a healthy
 * brick's it is not, so a read pays the part of the reads its brick served,
 * and a healed or new brick's reads the healthy bricks'. Synthetic traces of
 * known answer; times are exact. With the pooled rule (the model before,
 * kernel_pooled) every read pays the slow brick's majority: the tests fail
 * with it.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

#include "siox_capacity.h"

#define US 1000
#define MS 1000000

struct trace {
  struct siox_cap_sample s[64];
  struct siox_cap_posix_op p[64];
  size_t ns, np;
};

/* A read call of client c at t, len long, with one 128 KiB request to
 * brick b from t + 100 us, req long (a call without a request when req 0). */
static void read_call(struct trace *t, uint32_t c, int64_t b, int64_t at, int64_t len, int64_t req) {
  t->p[t->np++] = (struct siox_cap_posix_op){c, SIOX_CAP_READ, 1048576, at, at + len};
  if (req)
    t->s[t->ns++] = (struct siox_cap_sample){c, SIOX_CAP_READ, 131072, at + 100 * US, req / 2, req, 1, (uint32_t)(b + 1)};
}

static void set_read_line(siox_cap_model *m, int64_t b, double ns) {
  m->comp[b].fit[SIOX_CAP_READ] = (struct siox_cap_fit){.n = 10, .a_ns = ns};
}

/* 40 reads on the slow brick S, each 5.2 ms with a 5 ms request in it:
 * 0.2 ms with none in flight; 10 on healthy brick H1, each 3 ms with a
 * 0.2 ms request: 2.8 ms. Per brick: S 0.2 ms, H1 2.8 ms; the client's
 * pooled estimate 0.2 ms (the robust rule leaves the minority out). */
static siox_cap_model *two_kinds(int64_t *c, int64_t *s, int64_t *h1, int64_t *h2) {
  siox_cap_model *m = siox_cap_model_new();
  *c = siox_cap_model_comp(m, "node", SIOX_CAP_CLIENT);
  *s = siox_cap_model_comp(m, "h:/slow", SIOX_CAP_BRICK);
  *h1 = siox_cap_model_comp(m, "h:/b1", SIOX_CAP_BRICK);
  *h2 = siox_cap_model_comp(m, "h:/b2", SIOX_CAP_BRICK);
  set_read_line(m, *s, 5 * MS);
  set_read_line(m, *h1, 100 * US);
  set_read_line(m, *h2, 90 * US); /* healthy, but no read call was traced through it */
  static struct trace t;
  t.ns = t.np = 0;
  for (int i = 0; i < 40; i++) read_call(&t, (uint32_t)*c, *s, i * 10 * MS, 5200 * US, 5 * MS);
  for (int i = 0; i < 10; i++) read_call(&t, (uint32_t)*c, *h1, (400 + i * 10) * (int64_t)MS, 3 * MS, 200 * US);
  assert_int_equal(siox_cap_model_kernel(m, t.p, t.np, t.s, t.ns), 0);
  return m;
}

static void test_read_kernel_per_brick(void **state) {
  (void)state;
  int64_t c, s, h1, h2;
  siox_cap_model *m = two_kinds(&c, &s, &h1, &h2);
  assert_true(fabs(m->comp[c].kernel_call_ns[SIOX_CAP_READ] - 200 * US) < 1e-6); /* pooled: the slow brick's */
  assert_int_equal(m->comp[s].kernel_fit[SIOX_CAP_READ].n, 40);
  assert_int_equal(m->comp[h1].kernel_fit[SIOX_CAP_READ].n, 10);
  assert_int_equal(m->comp[h2].kernel_fit[SIOX_CAP_READ].n, 0);
  assert_true(fabs(m->comp[s].kernel_call_ns[SIOX_CAP_READ] - 200 * US) < 1e-6);
  assert_true(fabs(m->comp[h1].kernel_call_ns[SIOX_CAP_READ] - 2800 * US) < 1e-6);
  /* a read pays its brick's; a brick without calls, or none, the client's */
  assert_true(fabs(siox_cap_kernel_ns(m, (uint32_t)c, h1, SIOX_CAP_READ) - 2800 * US) < 1e-6);
  assert_true(fabs(siox_cap_kernel_ns(m, (uint32_t)c, s, SIOX_CAP_READ) - 200 * US) < 1e-6);
  assert_true(fabs(siox_cap_kernel_ns(m, (uint32_t)c, h2, SIOX_CAP_READ) - 200 * US) < 1e-6);
  assert_true(fabs(siox_cap_kernel_ns(m, (uint32_t)c, -1, SIOX_CAP_READ) - 200 * US) < 1e-6);
  /* the model before: every read the client's pooled estimate */
  m->kernel_pooled = 1;
  assert_true(fabs(siox_cap_kernel_ns(m, (uint32_t)c, h1, SIOX_CAP_READ) - 200 * US) < 1e-6);
  /* writes stay the client's */
  m->kernel_pooled = 0;
  assert_true(siox_cap_kernel_ns(m, (uint32_t)c, h1, SIOX_CAP_WRITE) == 0);
  siox_cap_model *k = siox_cap_model_clone(m);
  assert_non_null(k);
  assert_true(fabs(siox_cap_kernel_ns(k, (uint32_t)c, h1, SIOX_CAP_READ) - 2800 * US) < 1e-6);
  siox_cap_model_free(k);
  siox_cap_model_free(m);
}

/* A call whose request started before it (readahead) or with none: no brick. */
static void test_call_without_its_own_request(void **state) {
  (void)state;
  siox_cap_model *m = siox_cap_model_new();
  int64_t c = siox_cap_model_comp(m, "node", SIOX_CAP_CLIENT), b = siox_cap_model_comp(m, "h:/b1", SIOX_CAP_BRICK);
  set_read_line(m, b, 100 * US);
  struct trace t = {.ns = 0};
  read_call(&t, (uint32_t)c, b, 0, MS, 0);
  t.s[t.ns++] = (struct siox_cap_sample){(uint32_t)c, SIOX_CAP_READ, 131072, -50 * US, 25 * US, 50 * US, 1, (uint32_t)(b + 1)};
  assert_int_equal(siox_cap_model_kernel(m, t.p, t.np, t.s, t.ns), 0);
  assert_true(fabs(m->comp[c].kernel_call_ns[SIOX_CAP_READ] - MS) < 1e-6);
  assert_int_equal(m->comp[b].kernel_fit[SIOX_CAP_READ].n, 0);
  siox_cap_model_free(m);
}

/* A healed or new brick's reads: the healthy bricks' part (the lower median
 * by read service among bricks with one: H1's, not the slow brick's). */
static void test_healthy_read_kernel(void **state) {
  (void)state;
  int64_t c, s, h1, h2;
  siox_cap_model *m = two_kinds(&c, &s, &h1, &h2);
  assert_int_equal(siox_cap_model_healthy_read_kernel(m), h1);
  assert_int_equal(siox_cap_model_healthy_brick(m, SIOX_CAP_READ), h1); /* 90, 100 us, 5 ms: the lower median */
  siox_cap_model_free(m);
  siox_cap_model *e = siox_cap_model_new();
  assert_int_equal(siox_cap_model_healthy_read_kernel(e), -1);
  siox_cap_model_free(e);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_read_kernel_per_brick),
      cmocka_unit_test(test_call_without_its_own_request),
      cmocka_unit_test(test_healthy_read_kernel),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
