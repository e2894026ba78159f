/*
 * The client node's CPU (capacity/README.md, "The client node's CPU"):
 * the client and the bricks on its node hold one of its cores for their
 * requests' CPU work, so their work queues for the same cores. Known cases,
 * times exact (the model's constants, FIFO stations):
 *  - 4 ranks, a file each on a brick of the client's node, one 128 KiB
 *    write of 1 ms of client and 1 ms of brick work, 2 cores: 8 ms of work
 *    on 2 cores, 4 ms; each component with its own servers (the model
 *    before, or the brick on another node): 3 ms;
 *  - a slowed brick (5 ms, the healthy one 1 ms) holds a core for the
 *    healthy brick's 1 ms only: the rest is its device's wait.
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

/* Client "n1" (1 ms per write, 8 seen in flight), brick 1 on host bhost
 * (1 ms per write), brick 2 on n1 (slow_ms per write); node marked. */
static siox_cap_model *model(const char *bhost, double slow_ms) {
  siox_cap_model *m = siox_cap_model_new();
  char name[64];
  snprintf(name, sizeof name, "%s:/b1", bhost);
  int64_t c = siox_cap_model_comp(m, "n1", SIOX_CAP_CLIENT), b1 = siox_cap_model_comp(m, name, SIOX_CAP_BRICK),
          b2 = siox_cap_model_comp(m, "n1:/b2", SIOX_CAP_BRICK);
  m->comp[c].fit[SIOX_CAP_WRITE] = (struct siox_cap_fit){.n = 10, .a_ns = MS};
  m->comp[b1].fit[SIOX_CAP_WRITE] = (struct siox_cap_fit){.n = 10, .a_ns = MS};
  m->comp[b2].fit[SIOX_CAP_WRITE] = (struct siox_cap_fit){.n = 10, .a_ns = slow_ms * MS};
  m->comp[c].servers = m->comp[b1].servers = m->comp[b2].servers = 8;
  m->comp[c].class_servers[SIOX_CAP_WRITE] = 1;
  m->chunk = CHUNK;
  m->client_cores = 2;
  /* The node's cores alone: ranks done before the others would poll on them
   * (test_capacity_polling checks that). */
  m->mpi_polling = 0;
  siox_cap_model_nodes(m);
  return m;
}

/* `ranks` ranks, rank r writing one chunk to its file r, on component
 * brick. The job's I/O time; the node's CPU time used in *cpu (may be NULL). */
static int64_t fpp_job_cpu(const siox_cap_model *m, uint32_t ranks, int32_t brick, double *cpu) {
  siox_workload *w = siox_wl_new(SIOX_WL_TRACE, "t", ranks);
  int32_t on_brick[8];
  for (uint32_t r = 0; r < ranks; r++) {
    char name[16];
    snprintf(name, sizeof name, "/f%u", r);
    siox_wl_add_file(w, name);
    on_brick[r] = brick;
    struct siox_wl_rec rec = {r, SIOX_WL_WRITE, r, 0, CHUNK, 0, 0, 0};
    assert_int_equal(siox_wl_add_rec(w, &rec), 0);
  }
  struct siox_cap_sim_opts o = {.copies = 1, .brick_of = on_brick, .client = 0};
  struct siox_cap_run run;
  char err[256] = "";
  if (siox_cap_simulate(m, w, &o, &run, err, sizeof err) != 0) fail_msg("simulate: %s", err);
  int64_t t = run.job_io_ns[0];
  if (cpu) *cpu = run.cpu_busy_ns;
  siox_cap_run_free(&run);
  siox_wl_free(w);
  return t;
}

static int64_t fpp_job(const siox_cap_model *m, uint32_t ranks, int32_t brick) {
  return fpp_job_cpu(m, ranks, brick, NULL);
}

static void test_nodes_by_host(void **state) {
  (void)state;
  siox_cap_model *m = model("n1", 1);
  assert_true(m->comp[0].on_client_node && m->comp[1].on_client_node && m->comp[2].on_client_node);
  siox_cap_model_free(m);
  m = model("n2", 1);
  assert_true(m->comp[0].on_client_node && !m->comp[1].on_client_node && m->comp[2].on_client_node);
  /* The host its processes report wins over the name: the testbed's bricks
   * are brickN:/dir, run by processes of the client's machine. */
  snprintf(m->comp[1].host, sizeof m->comp[1].host, "n1");
  siox_cap_model_nodes(m);
  assert_true(m->comp[1].on_client_node);
  snprintf(m->comp[2].host, sizeof m->comp[2].host, "n3");
  siox_cap_model_nodes(m);
  assert_false(m->comp[2].on_client_node);
  siox_cap_model_free(m);
}

static void test_client_and_brick_share_cores(void **state) {
  (void)state;
  siox_cap_model *m = model("n1", 1);
  double cpu;
  assert_int_equal(fpp_job_cpu(m, 4, 1, &cpu), 4 * MS);
  assert_true(cpu == 8.0 * MS);
  siox_cap_model *c = siox_cap_model_clone(m); /* what-if's scenarios run on clones */
  assert_non_null(c);
  assert_int_equal(fpp_job(c, 4, 1), 4 * MS);
  siox_cap_model_free(c);
  m->node_cpu = 0; /* the model before: the client's 2 servers, the brick's 8 */
  assert_int_equal(fpp_job(m, 4, 1), 3 * MS);
  m->node_cpu = 1;
  m->client_cores = 0; /* no core count: nothing to share */
  assert_int_equal(fpp_job(m, 4, 1), 2 * MS);
  siox_cap_model_free(m);
}

static void test_brick_on_other_node_not_shared(void **state) {
  (void)state;
  siox_cap_model *m = model("n2", 1);
  double cpu;
  assert_int_equal(fpp_job_cpu(m, 4, 1, &cpu), 3 * MS);
  assert_true(cpu == 4.0 * MS); /* the client's only */
  siox_cap_model_free(m);
}

/* 2 ranks on the slowed brick, 1 core. Rank 0: client 0-1, brick's core
 * 2-3 (rank 1's client had it 1-2), its wait 3-7. Rank 1: client 1-2,
 * brick's core 3-4, wait 4-8: 8 ms. Holding the core for all 5 ms: 12. */
static void test_slow_brick_holds_core_for_cpu_part(void **state) {
  (void)state;
  siox_cap_model *m = model("n1", 5);
  assert_true(siox_cap_comp_cpu_ns(m, 2, SIOX_CAP_WRITE, CHUNK, 5.0 * MS) == 1.0 * MS);
  assert_true(siox_cap_comp_cpu_ns(m, 1, SIOX_CAP_WRITE, CHUNK, 1.0 * MS) == 1.0 * MS);
  assert_true(siox_cap_comp_cpu_ns(m, 0, SIOX_CAP_WRITE, CHUNK, 3.0 * MS) == 3.0 * MS); /* a client: all */
  m->client_cores = 1;
  assert_int_equal(fpp_job(m, 2, 2), 8 * MS);
  m->node_cpu = 0;
  assert_int_equal(fpp_job(m, 2, 2), 7 * MS);
  siox_cap_model_free(m);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_nodes_by_host),
      cmocka_unit_test(test_client_and_brick_share_cores),
      cmocka_unit_test(test_brick_on_other_node_not_shared),
      cmocka_unit_test(test_slow_brick_holds_core_for_cpu_part),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
