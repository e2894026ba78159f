/*
 * The client node's page cache in the capacity simulation (capacity/README.md,
 * "The client's page cache"): a read of what the client wrote or read before
 * makes no brick request, a read of data it never moved does, a partly
 * cached read asks the brick only for the rest, and the cache is bounded
 * (least recently used out). Times are exact: the model's constants.
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

#define KIB 1024ull
#define MIB (1024ull * 1024)

/* One brick (reads and writes 1 ms + 1 ns/B, one server), a client channel
 * of 10 us per request; files "/a", "/b", "/c" all on the brick. */
static siox_cap_model *model(void) {
  siox_cap_model *m = siox_cap_model_new();
  int64_t b = siox_cap_model_comp(m, "h:/b1", SIOX_CAP_BRICK), c = siox_cap_model_comp(m, "client", SIOX_CAP_CLIENT);
  m->comp[b].fit[SIOX_CAP_WRITE] = (struct siox_cap_fit){.n = 10, .a_ns = 1e6, .b_ns = 1};
  m->comp[b].fit[SIOX_CAP_READ] = (struct siox_cap_fit){.n = 10, .a_ns = 1e6, .b_ns = 1};
  for (int k = 0; k < SIOX_CAP_NCLASS; k++) m->comp[c].fit[k] = (struct siox_cap_fit){.n = 10, .a_ns = 1e4};
  m->chunk = 128 * KIB;
  return m;
}

static siox_workload *workload(void) {
  siox_workload *w = siox_wl_new(SIOX_WL_TRACE, "t", 1);
  siox_wl_add_file(w, "/a");
  siox_wl_add_file(w, "/b");
  siox_wl_add_file(w, "/c");
  return w;
}

static void op(siox_workload *w, uint32_t op, uint32_t fid, uint64_t off, uint64_t bytes) {
  struct siox_wl_rec rec = {0, op, fid, off, bytes, 0, 0, 0};
  assert_int_equal(siox_wl_add_rec(w, &rec), 0);
}

static void simulate(const siox_cap_model *m, const siox_workload *w, struct siox_cap_run *run) {
  static const int32_t on_brick[3] = {0, 0, 0};
  struct siox_cap_sim_opts o = {.copies = 1, .brick_of = on_brick, .client = 1};
  char err[256] = "";
  if (siox_cap_simulate(m, w, &o, run, err, sizeof err) != 0) fail_msg("simulate: %s", err);
}

/* A brick read request of `bytes`: the channel, then the brick. */
static double brick_read(double bytes) { return 1e4 + 1e6 + bytes; }
static double cached(double bytes) { return SIOX_CAP_CACHE_READ_A_NS + SIOX_CAP_CACHE_READ_B_NS * bytes; }

static void test_read_back_is_cached(void **state) {
  (void)state;
  siox_cap_model *m = model();
  siox_workload *w = workload();
  op(w, SIOX_WL_WRITE, 0, 0, MIB);
  op(w, SIOX_WL_READ, 0, 0, MIB);
  op(w, SIOX_WL_READ, 0, 256 * KIB, 100); /* inside a cached page */
  struct siox_cap_run run;
  simulate(m, w, &run);
  assert_int_equal(run.stat[0].bytes_written, MIB);
  assert_int_equal(run.stat[0].bytes_read, 0);
  assert_int_equal(run.stat[0].requests, 8); /* the 8 writes' chunks, no read */
  assert_true(fabs((double)run.rec_ns[1] - cached(MIB)) < 1);
  assert_true(fabs((double)run.rec_ns[2] - cached(100)) < 1);
  siox_cap_run_free(&run);
  siox_wl_free(w);
  siox_cap_model_free(m);
}

/* A guard against caching too much: data the client never moved comes from
 * the brick (another file, and another range of the written one). */
static void test_unwritten_read_goes_to_brick(void **state) {
  (void)state;
  siox_cap_model *m = model();
  siox_workload *w = workload();
  op(w, SIOX_WL_WRITE, 0, 0, MIB);
  op(w, SIOX_WL_READ, 1, 0, 256 * KIB);
  op(w, SIOX_WL_READ, 0, 2 * MIB, 128 * KIB);
  struct siox_cap_run run;
  simulate(m, w, &run);
  assert_int_equal(run.stat[0].bytes_read, 384 * KIB);
  assert_int_equal(run.stat[0].requests, 8 + 3);
  assert_int_equal(run.rec_ns[1], (int64_t)(2 * brick_read(128 * KIB)));
  assert_int_equal(run.rec_ns[2], (int64_t)brick_read(128 * KIB));
  siox_cap_run_free(&run);
  siox_wl_free(w);
  siox_cap_model_free(m);
}

static void test_partial_hit_sends_the_rest(void **state) {
  (void)state;
  siox_cap_model *m = model();
  siox_workload *w = workload();
  op(w, SIOX_WL_WRITE, 0, 0, 512 * KIB);
  op(w, SIOX_WL_READ, 0, 256 * KIB, 512 * KIB); /* [256K, 512K) cached, [512K, 768K) not */
  /* A write that covers a page only in part leaves it out of the cache:
   * [100, 8292) caches the page [4096, 8192) alone. */
  op(w, SIOX_WL_WRITE, 1, 100, 8192);
  op(w, SIOX_WL_READ, 1, 0, 12 * KIB);
  struct siox_cap_run run;
  simulate(m, w, &run);
  assert_int_equal(run.stat[0].bytes_read, 256 * KIB + 8 * KIB);
  assert_int_equal(run.stat[0].requests, 4 + 2 + 1 + 2);
  assert_true(fabs((double)run.rec_ns[1] - (cached(256 * KIB) + 2 * brick_read(128 * KIB))) < 1);
  assert_true(fabs((double)run.rec_ns[3] - (cached(4 * KIB) + 2 * brick_read(4 * KIB))) < 1);
  siox_cap_run_free(&run);
  siox_wl_free(w);
  siox_cap_model_free(m);
}

/* Bounded at 2 MiB: writing a third 1 MiB file evicts the least recently
 * used one (b: a was read since), whose read then goes to the brick. */
static void test_bound_evicts_least_recently_used(void **state) {
  (void)state;
  siox_cap_model *m = model();
  m->client_cache_bytes = 2 * MIB;
  siox_workload *w = workload();
  op(w, SIOX_WL_WRITE, 0, 0, MIB);
  op(w, SIOX_WL_WRITE, 1, 0, MIB);
  op(w, SIOX_WL_READ, 0, 0, MIB);  /* cached; a is now the most recent */
  op(w, SIOX_WL_WRITE, 2, 0, MIB); /* 3 MiB > 2 MiB: b out */
  op(w, SIOX_WL_READ, 0, 0, MIB);  /* still cached */
  op(w, SIOX_WL_READ, 1, 0, MIB);  /* from the brick */
  struct siox_cap_run run;
  simulate(m, w, &run);
  assert_int_equal(run.stat[0].bytes_read, MIB);
  assert_true(fabs((double)run.rec_ns[4] - cached(MIB)) < 1);
  assert_int_equal(run.rec_ns[5], (int64_t)(8 * brick_read(128 * KIB)));
  siox_cap_run_free(&run);
  /* No cache (0): every read a request, as the model had it before. */
  m->client_cache_bytes = 0;
  simulate(m, w, &run);
  assert_int_equal(run.stat[0].bytes_read, 3 * MIB);
  siox_cap_run_free(&run);
  siox_wl_free(w);
  siox_cap_model_free(m);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_read_back_is_cached),
      cmocka_unit_test(test_unwritten_read_goes_to_brick),
      cmocka_unit_test(test_partial_hit_sends_the_rest),
      cmocka_unit_test(test_bound_evicts_least_recently_used),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
