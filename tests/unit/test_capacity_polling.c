/*
 * Ranks waiting in MPI (capacity/README.md, "Ranks waiting in MPI"): a rank
 * at a synchronization point, or done and waiting for the others of its
 * job, polls in MPI's progress loop and shares the client node's cores with
 * the I/O path's CPU work. Known cases, times exact (the model's constants,
 * processor sharing at the share a CPU part gets when it starts):
 *  - 4 ranks, 2 cores: rank 0 reads one 128 KiB request of 1 ms of client
 *    work while ranks 1-3 wait at a barrier: 4 runnable on 2 cores, the
 *    read takes 2 ms with --polling (1 ms with mpi_polling 0, the default, or without
 *    the node's CPU);
 *  - 2 ranks, 2 cores: one waiting and one reading fit the cores: 1 ms;
 *  - ranks with nothing left to do (done, waiting for the job's end) poll
 *    as well: 2 ms; 1 core and one rank waiting: 2 ms.
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

/* Client "n1" (1 ms per read), brick "n1:/b1" on its node (no read cost),
 * `cores` cores. */
static siox_cap_model *model(uint32_t cores) {
  siox_cap_model *m = siox_cap_model_new();
  int64_t c = siox_cap_model_comp(m, "n1", SIOX_CAP_CLIENT), b = siox_cap_model_comp(m, "n1:/b1", SIOX_CAP_BRICK);
  m->comp[c].fit[SIOX_CAP_READ] = (struct siox_cap_fit){.n = 10, .a_ns = MS};
  m->comp[c].servers = m->comp[b].servers = 8;
  m->chunk = CHUNK;
  m->client_cores = cores;
  siox_cap_model_nodes(m);
  return m;
}

/* `ranks` ranks: rank 0 reads one chunk of file 0 (on the brick); with
 * `barrier`, then every rank meets at a barrier (the others wait there from
 * the start), else the others have nothing to do. Rank 0's I/O time. */
static int64_t read_while_others_wait(const siox_cap_model *m, uint32_t ranks, int barrier) {
  siox_workload *w = siox_wl_new(SIOX_WL_TRACE, "t", ranks);
  siox_wl_add_file(w, "/f0");
  struct siox_wl_rec rd = {0, SIOX_WL_READ, 0, 0, CHUNK, 0, 0, 0};
  assert_int_equal(siox_wl_add_rec(w, &rd), 0);
  for (uint32_t r = 0; barrier && r < ranks; r++) {
    struct siox_wl_rec b = {r, SIOX_WL_BARRIER, SIOX_WL_NOFILE, 0, 0, 0, 0, 0};
    assert_int_equal(siox_wl_add_rec(w, &b), 0);
  }
  int32_t on_brick[1] = {1};
  struct siox_cap_sim_opts o = {.copies = 1, .brick_of = on_brick, .client = 0};
  struct siox_cap_run run;
  char err[256] = "";
  if (siox_cap_simulate(m, w, &o, &run, err, sizeof err) != 0) fail_msg("simulate: %s", err);
  int64_t t = run.rank_io_ns[0];
  siox_cap_run_free(&run);
  siox_wl_free(w);
  return t;
}

static void test_waiting_ranks_share_the_cores(void **state) {
  (void)state;
  siox_cap_model *m = model(2);
  assert_false(m->mpi_polling); /* off by default (capacity/README.md) */
  m->mpi_polling = 1;            /* --polling */
  assert_int_equal(read_while_others_wait(m, 4, 1), 2 * MS);
  siox_cap_model *c = siox_cap_model_clone(m); /* what-if's scenarios run on clones */
  assert_non_null(c);
  assert_int_equal(read_while_others_wait(c, 4, 1), 2 * MS);
  siox_cap_model_free(c);
  m->mpi_polling = 0; /* the model before */
  assert_int_equal(read_while_others_wait(m, 4, 1), 1 * MS);
  m->mpi_polling = 1;
  m->node_cpu = 0; /* no shared cores: nothing to share them with */
  assert_int_equal(read_while_others_wait(m, 4, 1), 1 * MS);
  siox_cap_model_free(m);
}

static void test_enough_cores_no_slowdown(void **state) {
  (void)state;
  siox_cap_model *m = model(2);
  m->mpi_polling = 1;
  assert_int_equal(read_while_others_wait(m, 2, 1), 1 * MS);
  assert_int_equal(read_while_others_wait(m, 1, 1), 1 * MS);
  siox_cap_model_free(m);
}

static void test_done_ranks_poll(void **state) {
  (void)state;
  siox_cap_model *m = model(2);
  m->mpi_polling = 1;
  assert_int_equal(read_while_others_wait(m, 4, 0), 2 * MS);
  siox_cap_model_free(m);
  m = model(1);
  m->mpi_polling = 1;
  assert_int_equal(read_while_others_wait(m, 2, 0), 2 * MS);
  m->mpi_polling = 0;
  assert_int_equal(read_while_others_wait(m, 2, 0), 1 * MS);
  siox_cap_model_free(m);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_waiting_ranks_share_the_cores),
      cmocka_unit_test(test_enough_cores_no_slowdown),
      cmocka_unit_test(test_done_ranks_poll),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
