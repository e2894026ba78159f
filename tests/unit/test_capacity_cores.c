/*
 * A client's servers bounded by its node's cores (capacity/README.md,
 * "Bounding a client's servers by its node's cores"): a client seen with 8
 * requests in flight on a node of 2 cores serves 2 at once. A known case:
 * 8 ranks, each writing its own file in 4 requests of 1 ms of client (CPU)
 * work and no brick time: 4 ms with 8 servers, 16 ms (32 ms of work on 2
 * servers) with the bound. Times are exact: the model's constants.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

#include "siox_capacity.h"

#define MS 1000000
#define CHUNK 131072
#define RANKS 8

/* Brick 0 (no time of its own), client 1: 1 ms per write request, 8 seen in flight. */
static siox_cap_model *model(void) {
  siox_cap_model *m = siox_cap_model_new();
  int64_t b = siox_cap_model_comp(m, "h:/b1", SIOX_CAP_BRICK), c = siox_cap_model_comp(m, "client", SIOX_CAP_CLIENT);
  m->comp[b].fit[SIOX_CAP_WRITE] = (struct siox_cap_fit){.n = 10, .a_ns = 0};
  m->comp[c].fit[SIOX_CAP_WRITE] = (struct siox_cap_fit){.n = 10, .a_ns = MS};
  m->comp[b].servers = m->comp[c].servers = RANKS;
  m->comp[c].class_servers[SIOX_CAP_WRITE] = 1; /* per file: each rank has its own */
  m->chunk = CHUNK;
  return m;
}

/* File per process: rank r writes 4 chunks to file r. The job's I/O time. */
static int64_t fpp_job(const siox_cap_model *m) {
  siox_workload *w = siox_wl_new(SIOX_WL_TRACE, "t", RANKS);
  int32_t on_brick[RANKS];
  for (uint32_t r = 0; r < RANKS; r++) {
    char name[16];
    snprintf(name, sizeof name, "/f%u", r);
    siox_wl_add_file(w, name);
    on_brick[r] = 0;
    struct siox_wl_rec rec = {r, SIOX_WL_WRITE, r, 0, 4 * CHUNK, 0, 0, 0};
    assert_int_equal(siox_wl_add_rec(w, &rec), 0);
  }
  struct siox_cap_sim_opts o = {.copies = 1, .brick_of = on_brick, .client = 1};
  struct siox_cap_run run;
  char err[256] = "";
  if (siox_cap_simulate(m, w, &o, &run, err, sizeof err) != 0) fail_msg("simulate: %s", err);
  int64_t t = run.job_io_ns[0];
  siox_cap_run_free(&run);
  siox_wl_free(w);
  return t;
}

static void test_cores_bound_cpu_bound_client(void **state) {
  (void)state;
  siox_cap_model *m = model();
  int64_t unbounded = fpp_job(m);
  assert_int_equal(unbounded, 4 * MS);
  m->client_cores = 2;
  int64_t bounded = fpp_job(m);
  assert_int_equal(bounded, 16 * MS);
  assert_int_equal(bounded, 4 * unbounded);
  siox_cap_model *c = siox_cap_model_clone(m); /* what-if's scenarios run on clones */
  assert_non_null(c);
  assert_int_equal(fpp_job(c), 16 * MS);
  siox_cap_model_free(c);
  siox_cap_model_free(m);
}

/* The bound is a client's only, and only when below what was seen. */
static void test_servers_bounded_client_only(void **state) {
  (void)state;
  siox_cap_model *m = model();
  assert_int_equal(siox_cap_comp_servers(m, 1), RANKS);
  m->client_cores = 2;
  assert_int_equal(siox_cap_comp_servers(m, 1), 2);
  assert_int_equal(siox_cap_comp_servers(m, 0), RANKS); /* a brick: its own servers */
  double lo, hi; /* the capacity follows the servers: 2 x 128 KiB per ms */
  assert_true(siox_cap_comp_capacity(m, 1, SIOX_CAP_WRITE, &lo, &hi) == 2.0 * CHUNK / 1e-3);
  m->client_cores = 16;
  assert_int_equal(siox_cap_comp_servers(m, 1), RANKS);
  assert_int_equal(fpp_job(m), 4 * MS);
  siox_cap_model_free(m);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_cores_bound_cpu_bound_client),
      cmocka_unit_test(test_servers_bounded_client_only),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
