/*
 * The client's part of a request per brick that served it (capacity/
 * cap_model.c, README "The client's part per brick"), on known answers: a
 * client whose requests to a slow brick take 200 us beyond the brick's part
 * and to a fast one 80 us gets those two lines (its one line is their mix);
 * requests queued behind an earlier one of the client to the same brick
 * (5.2 ms: a whole slow brick request waited for) are left out of the
 * brick's client line even when they are most of its samples; a healed
 * brick gets the healthy bricks' client line; the simulation serves a
 * request's client stage with the line of the brick it goes to, and with
 * the client's one line when asked (client_per_brick 0).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "siox_capacity.h"

#define KIB128 (128 * 1024)
#define FAST_NS 80000.0  /* the client's part of a request to the fast brick */
#define SLOW_NS 200000.0 /* ... to the slow brick */
#define QUEUED_NS 5.2e6  /* a request that waited for the slow brick's previous one */

struct two {
  siox_cap_model *m;
  int64_t client, fast, slow;
};

static struct two two_bricks(void) {
  struct two t = {.m = siox_cap_model_new()};
  t.client = siox_cap_model_comp(t.m, "vm", SIOX_CAP_CLIENT);
  t.fast = siox_cap_model_comp(t.m, "h:/fast", SIOX_CAP_BRICK);
  t.slow = siox_cap_model_comp(t.m, "h:/slow", SIOX_CAP_BRICK);
  return t;
}

/* A client write of 128 KiB at start, exclusive ns, span (client + brick) span, to brick b. */
static struct siox_cap_sample req(const struct two *t, int64_t b, int64_t start, double ns, int64_t span) {
  return (struct siox_cap_sample){(uint32_t)t->client, SIOX_CAP_WRITE, KIB128, start, (int64_t)ns, span, 1,
                                  (uint32_t)b + 1};
}

/* 40 requests to each brick, one after another (none queued). */
static size_t unqueued(const struct two *t, struct siox_cap_sample *s) {
  size_t n = 0;
  for (int64_t i = 0; i < 40; i++) {
    s[n++] = req(t, t->fast, i * 20000000, FAST_NS, 1000000);
    s[n++] = req(t, t->slow, i * 20000000 + 10000000, SLOW_NS, 6000000);
  }
  return n;
}

static void test_line_per_brick(void **state) {
  (void)state;
  struct two t = two_bricks();
  struct siox_cap_sample s[80];
  size_t n = unqueued(&t, s);
  assert_int_equal(siox_cap_model_fit(t.m, s, n), 0);
  const struct siox_cap_fit *f = &t.m->comp[t.fast].client_fit[SIOX_CAP_WRITE];
  const struct siox_cap_fit *g = &t.m->comp[t.slow].client_fit[SIOX_CAP_WRITE];
  assert_int_equal(f->n, 40);
  assert_int_equal(g->n, 40);
  assert_true(fabs(siox_cap_fit_eval(f, KIB128) - FAST_NS) < 1);
  assert_true(fabs(siox_cap_fit_eval(g, KIB128) - SLOW_NS) < 1);
  /* The client's one line (the model before) is their mix. */
  assert_true(fabs(siox_cap_fit_eval(&t.m->comp[t.client].fit[SIOX_CAP_WRITE], KIB128) - (FAST_NS + SLOW_NS) / 2) < 1);
  siox_cap_model_free(t.m);
}

static void test_queued_left_out(void **state) {
  (void)state;
  struct two t = two_bricks();
  struct siox_cap_sample s[200];
  size_t n = unqueued(&t, s);
  /* 60 more to the slow brick, each started while the one before it (an
   * unqueued one, 6 ms long) was in flight: more than half its samples. */
  for (int64_t i = 0; i < 40; i++) s[n++] = req(&t, t.slow, i * 20000000 + 11000000, QUEUED_NS, 10000000);
  for (int64_t i = 0; i < 20; i++) s[n++] = req(&t, t.slow, i * 20000000 + 12000000, QUEUED_NS, 10000000);
  assert_int_equal(siox_cap_model_fit(t.m, s, n), 0);
  const struct siox_cap_fit *g = &t.m->comp[t.slow].client_fit[SIOX_CAP_WRITE];
  assert_int_equal(g->n, 40);
  assert_true(fabs(siox_cap_fit_eval(g, KIB128) - SLOW_NS) < 1);
  siox_cap_model_free(t.m);
}

static void test_healed_gets_healthy_line(void **state) {
  (void)state;
  struct two t = two_bricks();
  struct siox_cap_sample s[80];
  size_t n = unqueued(&t, s);
  assert_int_equal(siox_cap_model_fit(t.m, s, n), 0);
  struct siox_cap_fit h;
  siox_cap_model_healthy_client(t.m, SIOX_CAP_WRITE, &h);
  assert_true(fabs(siox_cap_fit_eval(&h, KIB128) - FAST_NS) < 1);
  siox_cap_model_free(t.m);
}

/* One rank writes 128 KiB to a file on the slow brick: client stage + brick. */
static void test_simulation_uses_the_brick_line(void **state) {
  (void)state;
  struct two t = two_bricks();
  struct siox_cap_sample s[80];
  size_t n = unqueued(&t, s);
  assert_int_equal(siox_cap_model_fit(t.m, s, n), 0);
  t.m->comp[t.slow].fit[SIOX_CAP_WRITE] = (struct siox_cap_fit){.n = 10, .a_ns = 5e6};
  t.m->chunk = KIB128;
  siox_workload *w = siox_wl_new(SIOX_WL_TRACE, "t", 1);
  siox_wl_add_file(w, "/a");
  struct siox_wl_rec rec = {0, SIOX_WL_WRITE, 0, 0, KIB128, 0, 0};
  assert_int_equal(siox_wl_add_rec(w, &rec), 0);
  const int32_t on_brick[1] = {(int32_t)t.slow};
  struct siox_cap_sim_opts o = {.copies = 1, .brick_of = on_brick, .client = t.client};
  char err[256] = "";
  for (int per_brick = 0; per_brick < 2; per_brick++) {
    t.m->client_per_brick = per_brick;
    siox_cap_model *mc = siox_cap_model_clone(t.m); /* a scenario's copy keeps the switch */
    struct siox_cap_run run;
    assert_int_equal(siox_cap_simulate(mc, w, &o, &run, err, sizeof err), 0);
    double want = 5e6 + (per_brick ? SLOW_NS : (FAST_NS + SLOW_NS) / 2);
    assert_true(fabs((double)run.job_io_ns[0] - want) < 2);
    siox_cap_run_free(&run);
    siox_cap_model_free(mc);
  }
  siox_wl_free(w);
  siox_cap_model_free(t.m);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_line_per_brick),
      cmocka_unit_test(test_queued_left_out),
      cmocka_unit_test(test_healed_gets_healthy_line),
      cmocka_unit_test(test_simulation_uses_the_brick_line),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
