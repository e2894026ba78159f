/*
 * The client node's kernel part in the capacity model (capacity/README.md,
 * "The kernel's part"): the time the node's POSIX reads and writes on the
 * volume were in progress while no request of its GlusterFS client was,
 * per call (not per byte), calibrated from synthetic traces of known
 * answer, and paid once per read/write operation, by its first request's
 * client stage in the simulation. Times are exact. Per call the estimate is
 * robust: a few stalled calls are left out, not averaged in (the plain mean
 * the model had before is what --kernel-mean gives).
 */
#include <errno.h>
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
#define MIB 1048576.0

static struct siox_cap_sample span(uint32_t comp, int64_t start, int64_t len) {
  return (struct siox_cap_sample){comp, SIOX_CAP_WRITE, 131072, start, len / 2, len, 1, 0};
}

/* Client requests in [0, 1 ms) and [2, 3 ms); writes of 1 MiB in [0, 4 ms)
 * and (another rank's, of 3 MiB, overlapping: counted once) [1, 4 ms): 2 ms
 * with no request, over 2 calls: 1 ms per call whatever their bytes. A read
 * in [5, 6 ms) of 1 MiB with none: 1 ms. */
static void test_time_without_requests_per_call(void **state) {
  (void)state;
  siox_cap_model *m = siox_cap_model_new();
  int64_t c = siox_cap_model_comp(m, "node", SIOX_CAP_CLIENT), b = siox_cap_model_comp(m, "h:/b1", SIOX_CAP_BRICK);
  struct siox_cap_sample s[] = {span((uint32_t)c, 0, MS), span((uint32_t)c, 2 * MS, MS),
                                span((uint32_t)b, 3 * MS, 2 * MS)}; /* a brick's: not the client's */
  struct siox_cap_posix_op p[] = {{(uint32_t)c, SIOX_CAP_WRITE, 1048576, 0, 4 * MS},
                                  {(uint32_t)c, SIOX_CAP_WRITE, 3 * 1048576, MS, 4 * MS},
                                  {(uint32_t)c, SIOX_CAP_READ, 1048576, 5 * MS, 6 * MS}};
  assert_int_equal(siox_cap_model_kernel(m, p, 3, s, 3), 0);
  assert_true(fabs(m->comp[c].kernel_call_ns[SIOX_CAP_WRITE] - MS) < 1e-6);
  assert_true(fabs(m->comp[c].kernel_call_ns[SIOX_CAP_READ] - MS) < 1e-6);
  assert_true(m->comp[b].kernel_call_ns[SIOX_CAP_WRITE] == 0);
  /* Calls fully covered by requests: nothing. */
  struct siox_cap_posix_op q = {(uint32_t)c, SIOX_CAP_WRITE, 1048576, 100 * US, 900 * US};
  assert_int_equal(siox_cap_model_kernel(m, &q, 1, s, 3), 0);
  assert_true(m->comp[c].kernel_call_ns[SIOX_CAP_WRITE] == 0);
  /* A call naming a brick is refused. */
  struct siox_cap_posix_op bad = {(uint32_t)b, SIOX_CAP_WRITE, 1, 0, 1};
  assert_int_equal(siox_cap_model_kernel(m, &bad, 1, s, 3), -EINVAL);
  siox_cap_model_free(m);
}

/* A 128 KiB write: the client's 100 us, the kernel's 131072 ns per call, the brick's 1 ms. */
static void test_request_pays_kernel_part(void **state) {
  (void)state;
  siox_cap_model *m = siox_cap_model_new();
  int64_t b = siox_cap_model_comp(m, "h:/b1", SIOX_CAP_BRICK), c = siox_cap_model_comp(m, "node", SIOX_CAP_CLIENT);
  m->comp[b].fit[SIOX_CAP_WRITE] = (struct siox_cap_fit){.n = 10, .a_ns = MS};
  m->comp[c].fit[SIOX_CAP_WRITE] = (struct siox_cap_fit){.n = 10, .a_ns = 100 * US};
  m->comp[c].kernel_call_ns[SIOX_CAP_WRITE] = 131072;
  m->chunk = 131072;
  siox_workload *w = siox_wl_new(SIOX_WL_TRACE, "t", 1);
  siox_wl_add_file(w, "/a");
  struct siox_wl_rec r = {0, SIOX_WL_WRITE, 0, 0, 131072, 0, 0, 0};
  assert_int_equal(siox_wl_add_rec(w, &r), 0);
  static const int32_t on_brick[1] = {0};
  struct siox_cap_sim_opts o = {.copies = 1, .brick_of = on_brick, .client = 1};
  struct siox_cap_run run;
  char err[256] = "";
  assert_int_equal(siox_cap_simulate(m, w, &o, &run, err, sizeof err), 0);
  assert_int_equal(run.job_io_ns[0], 100 * US + 131072 + MS);
  assert_true(fabs(run.stat[1].busy_ns - (100 * US + 131072)) < 1); /* the client's station holds it */
  siox_cap_run_free(&run);
  m->kernel_path = 0; /* the model before */
  assert_int_equal(siox_cap_simulate(m, w, &o, &run, err, sizeof err), 0);
  assert_int_equal(run.job_io_ns[0], 100 * US + MS);
  siox_cap_run_free(&run);
  siox_wl_free(w);
  siox_cap_model_free(m);
}

/* A 1 MiB write is 8 requests of 128 KiB and one call: the kernel's part
 * is paid once (by the first request), not per request or per byte: 8 x
 * (client 100 us + brick 1 ms) + 500 us. Two such writes: twice that. A
 * 1 MiB read the page cache holds whole makes no request and pays none. */
static void test_operation_pays_kernel_once(void **state) {
  (void)state;
  siox_cap_model *m = siox_cap_model_new();
  int64_t b = siox_cap_model_comp(m, "h:/b1", SIOX_CAP_BRICK), c = siox_cap_model_comp(m, "node", SIOX_CAP_CLIENT);
  for (int k = SIOX_CAP_READ; k <= SIOX_CAP_WRITE; k++) {
    m->comp[b].fit[k] = (struct siox_cap_fit){.n = 10, .a_ns = MS};
    m->comp[c].fit[k] = (struct siox_cap_fit){.n = 10, .a_ns = 100 * US};
    m->comp[c].kernel_call_ns[k] = 500 * US;
  }
  m->chunk = 131072;
  m->cache_read = (struct siox_cap_fit){.n = 1}; /* a cached read costs 0 here */
  siox_workload *w = siox_wl_new(SIOX_WL_TRACE, "t", 1);
  siox_wl_add_file(w, "/a");
  struct siox_wl_rec r = {0, SIOX_WL_WRITE, 0, 0, 1048576, 0, 0, 0};
  assert_int_equal(siox_wl_add_rec(w, &r), 0);
  static const int32_t on_brick[1] = {0};
  struct siox_cap_sim_opts o = {.copies = 1, .brick_of = on_brick, .client = 1};
  struct siox_cap_run run;
  char err[256] = "";
  assert_int_equal(siox_cap_simulate(m, w, &o, &run, err, sizeof err), 0);
  assert_int_equal(run.job_io_ns[0], 8 * (100 * US + MS) + 500 * US);
  siox_cap_run_free(&run);
  r.offset = 1048576;
  assert_int_equal(siox_wl_add_rec(w, &r), 0);
  r = (struct siox_wl_rec){0, SIOX_WL_READ, 0, 0, 1048576, 0, 0, 0}; /* written just before: cached */
  assert_int_equal(siox_wl_add_rec(w, &r), 0);
  assert_int_equal(siox_cap_simulate(m, w, &o, &run, err, sizeof err), 0);
  assert_int_equal(run.job_io_ns[0], 2 * (8 * (100 * US + MS) + 500 * US));
  siox_cap_run_free(&run);
  siox_wl_free(w);
  siox_cap_model_free(m);
}

/* 96 write calls of 1 MiB, one after another, each with a client request
 * for its first 2 ms and then 0.9, 1.0 or 1.1 ms (in turn) with no request:
 * 1 ms per call; and 4 calls stalled 250 ms with no request (a writer
 * descheduled, the page cache written back). Known answer: 1 ms per call,
 * the 4 stalls left out and their excess kept apart; the plain mean over
 * the 100 calls, the estimate before, is 10.96 ms. */
static int stalled(int i) { return i == 9 || i == 39 || i == 70 || i == 98; }

static size_t stalled_trace(uint32_t c, struct siox_cap_posix_op *p, struct siox_cap_sample *s) {
  static const int64_t gap[3] = {900 * US, MS, 1100 * US};
  size_t n = 0;
  for (int i = 0; i < 100; i++) {
    int64_t t = (int64_t)i * 300 * MS, k = stalled(i) ? 250 * MS : gap[i % 3];
    s[n] = span(c, t, 2 * MS);
    p[n++] = (struct siox_cap_posix_op){c, SIOX_CAP_WRITE, 1048576, t, t + 2 * MS + k};
  }
  return n;
}

static void test_stalled_calls_left_out(void **state) {
  (void)state;
  siox_cap_model *m = siox_cap_model_new();
  uint32_t c = (uint32_t)siox_cap_model_comp(m, "node", SIOX_CAP_CLIENT);
  struct siox_cap_posix_op p[100];
  struct siox_cap_sample s[100];
  size_t n = stalled_trace(c, p, s);
  /* the normal calls' gaps must average 1 ms exactly: 32 of each */
  int normal[3] = {0};
  for (int i = 0; i < 100; i++)
    if (!stalled(i)) normal[i % 3]++;
  assert_int_equal(normal[0], 32);
  assert_int_equal(normal[1], 32);
  assert_int_equal(normal[2], 32);
  assert_int_equal(siox_cap_model_kernel(m, p, n, s, n), 0);
  const struct siox_cap_fit *f = &m->comp[c].kernel_fit[SIOX_CAP_WRITE];
  assert_true(fabs(m->comp[c].kernel_call_ns[SIOX_CAP_WRITE] - MS) < 1e-3); /* the plain mean: 10.96 ms */
  assert_int_equal(f->n, 96);
  assert_int_equal(f->left_out, 4);
  /* its uncertainty: the SD of 0.9/1.0/1.1 ms in equal parts over 96 calls, over sqrt(96) */
  double sd = sqrt(64.0 * (100.0 * US) * (100.0 * US) / 95.0);
  assert_true(fabs(f->sd_ns - sd) < 1e-3);
  assert_true(fabs(f->se_a - sd / sqrt(96.0)) < 1e-3);
  /* the excess: what the stalls add per call, over all 100; with it, the plain mean */
  assert_true(fabs(f->excess_ns - (10.96 * MS - MS)) < 1e-3);
  assert_true(fabs(siox_cap_kernel_ns(m, c, -1, SIOX_CAP_WRITE) - MS) < 1e-3);
  m->kernel_mean = 1;
  assert_true(fabs(siox_cap_kernel_ns(m, c, -1, SIOX_CAP_WRITE) - 10.96 * MS) < 1e-3);
  m->kernel_mean = 0;
  m->with_delays = 1;
  assert_true(fabs(siox_cap_kernel_ns(m, c, -1, SIOX_CAP_WRITE) - 10.96 * MS) < 1e-3);
  m->kernel_path = 0;
  assert_true(siox_cap_kernel_ns(m, c, -1, SIOX_CAP_WRITE) == 0);
  siox_cap_model_free(m);
}

/* The same calls simulated: a 1 MiB write of 8 requests (client 100 us,
 * brick 1 ms, as above) pays the robust 1 ms once; with --kernel-mean the
 * plain mean (10.96 ms), also through a scenario's clone of the model. */
static void test_simulation_pays_robust_part(void **state) {
  (void)state;
  siox_cap_model *m = siox_cap_model_new();
  int64_t b = siox_cap_model_comp(m, "h:/b1", SIOX_CAP_BRICK), c = siox_cap_model_comp(m, "node", SIOX_CAP_CLIENT);
  struct siox_cap_posix_op p[100];
  struct siox_cap_sample s[100];
  size_t n = stalled_trace((uint32_t)c, p, s);
  assert_int_equal(siox_cap_model_kernel(m, p, n, s, n), 0);
  m->comp[b].fit[SIOX_CAP_WRITE] = (struct siox_cap_fit){.n = 10, .a_ns = MS};
  m->comp[c].fit[SIOX_CAP_WRITE] = (struct siox_cap_fit){.n = 10, .a_ns = 100 * US};
  m->chunk = 131072;
  siox_workload *w = siox_wl_new(SIOX_WL_TRACE, "t", 1);
  siox_wl_add_file(w, "/a");
  struct siox_wl_rec r = {0, SIOX_WL_WRITE, 0, 0, 1048576, 0, 0, 0};
  assert_int_equal(siox_wl_add_rec(w, &r), 0);
  static const int32_t on_brick[1] = {0};
  struct siox_cap_sim_opts o = {.copies = 1, .brick_of = on_brick, .client = 1};
  struct siox_cap_run run;
  char err[256] = "";
  assert_int_equal(siox_cap_simulate(m, w, &o, &run, err, sizeof err), 0);
  assert_true(llabs(run.job_io_ns[0] - (8 * (100 * US + MS) + MS)) <= 1);
  siox_cap_run_free(&run);
  m->kernel_mean = 1;
  siox_cap_model *mm = siox_cap_model_clone(m);
  assert_non_null(mm);
  assert_int_equal(siox_cap_simulate(mm, w, &o, &run, err, sizeof err), 0);
  assert_true(llabs(run.job_io_ns[0] - (8 * (100 * US + MS) + 10960 * US)) <= 1);
  siox_cap_run_free(&run);
  siox_cap_model_free(mm);
  siox_wl_free(w);
  siox_cap_model_free(m);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_time_without_requests_per_call),
      cmocka_unit_test(test_operation_pays_kernel_once),
      cmocka_unit_test(test_request_pays_kernel_part),
      cmocka_unit_test(test_stalled_calls_left_out),
      cmocka_unit_test(test_simulation_pays_robust_part),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
