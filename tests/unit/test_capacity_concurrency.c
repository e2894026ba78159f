/*
 * What the capacity model calibrates per client class and per collective
 * MPI-IO call (capacity/README.md, "Concurrency per class", "Collective
 * open and close"): a synthetic trace of known concurrency gives that
 * concurrency (per file, over the activities' whole time); the simulation
 * holds a file's requests of a class to it; a collective open and close
 * recorded at a known length are predicted at that length. Times are
 * exact: the model's constants.
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

static struct siox_cap_sample sample(uint32_t comp, uint32_t cls, int64_t start, int64_t ns, int64_t span,
                                     int64_t object) {
  return (struct siox_cap_sample){comp, cls, 65536, start, ns, span, object, 0};
}

/* Writes on file 7 one after the other (back to back), one on file 8 while
 * they run: 1 per file, 2 in all. Three reads of file 7 at once, each with
 * 10 us of its own and 1 ms in all (the brick's part): 3. */
static void test_fit_counts_per_file_over_whole_activities(void **state) {
  (void)state;
  siox_cap_model *m = siox_cap_model_new();
  int64_t c = siox_cap_model_comp(m, "client", SIOX_CAP_CLIENT), b = siox_cap_model_comp(m, "h:/b1", SIOX_CAP_BRICK);
  struct siox_cap_sample s[] = {
      sample((uint32_t)c, SIOX_CAP_WRITE, 0, 50 * US, 100 * US, 7),
      sample((uint32_t)c, SIOX_CAP_WRITE, 100 * US, 50 * US, 100 * US, 7),
      sample((uint32_t)c, SIOX_CAP_WRITE, 200 * US, 50 * US, 100 * US, 7),
      sample((uint32_t)c, SIOX_CAP_WRITE, 50 * US, 50 * US, 100 * US, 8),
      sample((uint32_t)c, SIOX_CAP_READ, 0, 10 * US, MS, 7),
      sample((uint32_t)c, SIOX_CAP_READ, 100 * US, 10 * US, MS, 7),
      sample((uint32_t)c, SIOX_CAP_READ, 200 * US, 10 * US, MS, 7),
      sample((uint32_t)b, SIOX_CAP_WRITE, 0, 40 * US, 40 * US, 7),
      sample((uint32_t)b, SIOX_CAP_WRITE, 10 * US, 40 * US, 40 * US, 7),
  };
  assert_int_equal(siox_cap_model_fit(m, s, sizeof s / sizeof s[0]), 0);
  assert_int_equal(m->comp[c].class_servers[SIOX_CAP_WRITE], 1);
  assert_int_equal(m->comp[c].class_servers[SIOX_CAP_READ], 3);
  assert_int_equal(m->comp[c].class_servers[SIOX_CAP_LOOKUP], 0); /* never seen: no limit */
  assert_int_equal(m->comp[b].class_servers[SIOX_CAP_WRITE], 0);  /* bricks: servers only */
  assert_int_equal(m->comp[b].servers, 2);
  assert_int_equal(m->class_concurrency, 1);
  siox_cap_model_free(m);
}

/* A client of 4 servers (100 us per write) before a brick of 4 (1 ms);
 * writes limited to 1 per file. */
static siox_cap_model *model(void) {
  siox_cap_model *m = siox_cap_model_new();
  int64_t b = siox_cap_model_comp(m, "h:/b1", SIOX_CAP_BRICK), c = siox_cap_model_comp(m, "client", SIOX_CAP_CLIENT);
  m->comp[b].fit[SIOX_CAP_WRITE] = (struct siox_cap_fit){.n = 10, .a_ns = MS};
  m->comp[c].fit[SIOX_CAP_WRITE] = (struct siox_cap_fit){.n = 10, .a_ns = 100 * US};
  m->comp[b].servers = m->comp[c].servers = 4;
  m->comp[c].class_servers[SIOX_CAP_WRITE] = 1;
  m->chunk = 131072;
  return m;
}

/* Two ranks write 128 KiB each at once, to files fa and fb. */
static void run_two_writes(const siox_cap_model *m, uint32_t fa, uint32_t fb, struct siox_cap_run *run) {
  siox_workload *w = siox_wl_new(SIOX_WL_TRACE, "t", 2);
  siox_wl_add_file(w, "/a");
  siox_wl_add_file(w, "/b");
  struct siox_wl_rec r0 = {0, SIOX_WL_WRITE, fa, 0, 131072, 0, 0, 0}, r1 = {1, SIOX_WL_WRITE, fb, 131072, 131072, 0, 0, 0};
  assert_int_equal(siox_wl_add_rec(w, &r0), 0);
  assert_int_equal(siox_wl_add_rec(w, &r1), 0);
  static const int32_t on_brick[2] = {0, 0};
  struct siox_cap_sim_opts o = {.copies = 1, .brick_of = on_brick, .client = 1};
  char err[256] = "";
  if (siox_cap_simulate(m, w, &o, run, err, sizeof err) != 0) fail_msg("simulate: %s", err);
  siox_wl_free(w);
}

/* One file: the second write starts when the first one's brick part ends
 * (a guard: the one concurrency of the client lets both run at once). */
static void test_one_write_in_flight_per_file(void **state) {
  (void)state;
  siox_cap_model *m = model();
  struct siox_cap_run run;
  run_two_writes(m, 0, 0, &run);
  assert_int_equal(run.job_io_ns[0], 2 * (MS + 100 * US));
  assert_int_equal(run.rank_io_ns[0] + run.rank_io_ns[1], 3 * (MS + 100 * US));
  assert_true(fabs(run.stat[1].wait_ns - (MS + 100 * US)) < 1); /* the wait is the client's */
  siox_cap_run_free(&run);
  m->class_concurrency = 0; /* the model before: both at once */
  run_two_writes(m, 0, 0, &run);
  assert_int_equal(run.job_io_ns[0], MS + 100 * US);
  siox_cap_run_free(&run);
  siox_cap_model_free(m);
}

/* Two ranks write 256 KiB (2 requests) each at once to one file: a write
 * holds the file's place for its whole call (the kernel's inode lock), so
 * rank 0's two requests run back to back (2 x 1.1 ms) and rank 1's after
 * them (4.4 ms); with a place per request (the rule before) they alternate
 * and rank 0 ends at 3.3 ms. */
static void test_write_holds_place_for_call(void **state) {
  (void)state;
  siox_cap_model *m = model();
  siox_workload *w = siox_wl_new(SIOX_WL_TRACE, "t", 2);
  siox_wl_add_file(w, "/a");
  struct siox_wl_rec r0 = {0, SIOX_WL_WRITE, 0, 0, 262144, 0, 0, 0}, r1 = {1, SIOX_WL_WRITE, 0, 262144, 262144, 0, 0, 0};
  assert_int_equal(siox_wl_add_rec(w, &r0), 0);
  assert_int_equal(siox_wl_add_rec(w, &r1), 0);
  static const int32_t on_brick[1] = {0};
  struct siox_cap_sim_opts o = {.copies = 1, .brick_of = on_brick, .client = 1};
  struct siox_cap_run run;
  char err[256] = "";
  assert_int_equal(siox_cap_simulate(m, w, &o, &run, err, sizeof err), 0);
  assert_int_equal(run.rank_io_ns[0], 2 * (MS + 100 * US));
  assert_int_equal(run.rank_io_ns[1], 4 * (MS + 100 * US));
  siox_cap_run_free(&run);
  siox_wl_free(w);
  siox_cap_model_free(m);
}

/* Two files: each write has its file's place, both run at once. */
static void test_other_files_write_at_once(void **state) {
  (void)state;
  siox_cap_model *m = model();
  struct siox_cap_run run;
  run_two_writes(m, 0, 1, &run);
  assert_int_equal(run.rank_io_ns[0], MS + 100 * US);
  assert_int_equal(run.rank_io_ns[1], MS + 100 * US);
  siox_cap_run_free(&run);
  siox_cap_model_free(m);
}

/* Two copies of a one-rank job writing 128 KiB to file 0 (load=2: the
 * same file): the second copy's write waits for the first's. */
static void test_copies_share_the_file(void **state) {
  (void)state;
  siox_cap_model *m = model();
  siox_workload *w = siox_wl_new(SIOX_WL_TRACE, "t", 1);
  siox_wl_add_file(w, "/a");
  struct siox_wl_rec r0 = {0, SIOX_WL_WRITE, 0, 0, 131072, 0, 0, 0};
  assert_int_equal(siox_wl_add_rec(w, &r0), 0);
  static const int32_t on_brick[2] = {0, 0};
  struct siox_cap_sim_opts o = {.copies = 2, .brick_of = on_brick, .client = 1};
  struct siox_cap_run run;
  char err[256] = "";
  assert_int_equal(siox_cap_simulate(m, w, &o, &run, err, sizeof err), 0);
  assert_int_equal(run.job_io_ns[0] + run.job_io_ns[1], 3 * (MS + 100 * US));
  siox_cap_run_free(&run);
  siox_wl_free(w);
  siox_cap_model_free(m);
}

/* A job of 2 ranks that MPI-opens and closes a file; the model's requests
 * for them take 120 us (lookup + open) and 60 us (flush) with nothing
 * queued. */
static siox_workload *job(void) {
  siox_workload *w = siox_wl_new(SIOX_WL_TRACE, "t", 2);
  siox_wl_add_file(w, "/f");
  for (uint32_t r = 0; r < 2; r++) {
    struct siox_wl_rec o = {r, SIOX_WL_MPI_OPEN, 0, 0, 0, 0, 0, 0}, c = {r, SIOX_WL_MPI_CLOSE, 0, 0, 0, 0, 0, 0};
    assert_int_equal(siox_wl_add_rec(w, &o), 0);
    assert_int_equal(siox_wl_add_rec(w, &c), 0);
  }
  return w;
}

static siox_cap_model *meta_model(void) {
  siox_cap_model *m = siox_cap_model_new();
  int64_t b = siox_cap_model_comp(m, "h:/b1", SIOX_CAP_BRICK), c = siox_cap_model_comp(m, "client", SIOX_CAP_CLIENT);
  int cls[] = {SIOX_CAP_LOOKUP, SIOX_CAP_OPEN, SIOX_CAP_CLOSE};
  for (size_t i = 0; i < 3; i++) {
    m->comp[b].fit[cls[i]] = (struct siox_cap_fit){.n = 10, .a_ns = 50 * US};
    m->comp[c].fit[cls[i]] = (struct siox_cap_fit){.n = 10, .a_ns = 10 * US};
  }
  m->comp[b].servers = m->comp[c].servers = 2;
  return m;
}

static void predict(const siox_cap_model *m, const siox_workload *w, struct siox_cap_answer *a) {
  struct siox_cap_predict_opts o = {0};
  char err[256] = "";
  if (siox_cap_predict(m, w, NULL, 0, &o, a, err, sizeof err) != 0) fail_msg("predict: %s", err);
}

/* The window's collective open took 10 ms on each of its 4 ranks, its close
 * 2 ms: a job's open and close are predicted at those lengths. */
static void test_collective_open_close_at_recorded_length(void **state) {
  (void)state;
  siox_cap_model *m = meta_model();
  siox_workload *w = job();
  const int64_t opens[4] = {10 * MS, 10 * MS, 10 * MS, 10 * MS}, closes[4] = {2 * MS, 2 * MS, 2 * MS, 2 * MS};
  assert_int_equal(siox_cap_model_collective(m, opens, 4, closes, 4), 0);
  assert_true(fabs(m->mpi_open_ns - (10 * MS - 120 * US)) < 1);
  assert_true(fabs(m->mpi_close_ns - (2 * MS - 60 * US)) < 1);
  struct siox_cap_answer a;
  predict(m, w, &a);
  for (size_t i = 0; i < siox_wl_nrecs(w); i++)
    assert_int_equal(a.run.rec_ns[i], siox_wl_rec(w, i)->op == SIOX_WL_MPI_OPEN ? 10 * MS : 2 * MS);
  assert_int_equal(a.run.job_io_ns[0], 12 * MS);
  siox_cap_answer_free(&a);
  m->collective = 0; /* the model before: the requests alone */
  predict(m, w, &a);
  assert_int_equal(a.run.rec_ns[0], 120 * US);
  assert_int_equal(a.run.rec_ns[1], 60 * US);
  siox_cap_answer_free(&a);
  siox_wl_free(w);
  siox_cap_model_free(m);
}

/* The median over the calls: one slow collective among several is not the
 * answer; never below 0; no close in the window keeps the close's value. */
static void test_collective_median_and_none(void **state) {
  (void)state;
  siox_cap_model *m = meta_model();
  int64_t opens[16];
  for (int i = 0; i < 16; i++) opens[i] = i < 4 ? 328 * MS : i < 13 ? 6 * MS + 120 * US : 12 * MS + 120 * US;
  m->mpi_close_ns = 123;
  assert_int_equal(siox_cap_model_collective(m, opens, 16, NULL, 0), 0);
  assert_true(fabs(m->mpi_open_ns - 6 * MS) < 1);
  assert_true(fabs(m->mpi_close_ns - 123) < 1e-9);
  const int64_t fast[1] = {40 * US}; /* shorter than its requests */
  assert_int_equal(siox_cap_model_collective(m, fast, 1, NULL, 0), 0);
  assert_true(m->mpi_open_ns == 0);
  siox_cap_model_free(m);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_fit_counts_per_file_over_whole_activities),
      cmocka_unit_test(test_one_write_in_flight_per_file),
      cmocka_unit_test(test_write_holds_place_for_call),
      cmocka_unit_test(test_other_files_write_at_once),
      cmocka_unit_test(test_copies_share_the_file),
      cmocka_unit_test(test_collective_open_close_at_recorded_length),
      cmocka_unit_test(test_collective_median_and_none),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
