/*
 * ROMIO's data sieving in the capacity simulation (capacity/README.md,
 * "Views and data sieving"): an independent MPI-IO write under a strided
 * view reads its whole span and writes it back; an independent read reads
 * the span (up to the end of the file so far: a file the job makes grows
 * as it is written); a collective access, or one under the byte view,
 * moves its own bytes. Bytes are exact.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

#include "siox_capacity.h"

#define KIB 1024ull

/* One brick (1 ms + 1 ns/B), a client channel of 10 us a request. */
static siox_cap_model *model(void) {
  siox_cap_model *m = siox_cap_model_new();
  int64_t b = siox_cap_model_comp(m, "h:/b1", SIOX_CAP_BRICK), c = siox_cap_model_comp(m, "client", SIOX_CAP_CLIENT);
  m->comp[b].fit[SIOX_CAP_WRITE] = (struct siox_cap_fit){.n = 10, .a_ns = 1e6, .b_ns = 1};
  m->comp[b].fit[SIOX_CAP_READ] = (struct siox_cap_fit){.n = 10, .a_ns = 1e6, .b_ns = 1};
  for (int k = 0; k < SIOX_CAP_NCLASS; k++) m->comp[c].fit[k] = (struct siox_cap_fit){.n = 10, .a_ns = 1e4};
  m->chunk = 128 * KIB;
  return m;
}

static void rec(siox_workload *w, uint32_t op, uint64_t off, uint64_t bytes, uint64_t extent) {
  struct siox_wl_rec r = {0, op, 0, off, bytes, 0, 0, extent};
  assert_int_equal(siox_wl_add_rec(w, &r), 0);
}

/* One rank opens /a, sets a view (8 KiB blocks every 32 KiB from 4 KiB,
 * or the byte view), then makes `op` of 64 KiB at the view's first byte
 * (its 8 blocks span 7 x 32 + 8 = 232 KiB), and a second one `again` KiB
 * further (0: none); with `existing`, a last POSIX read of 1 MiB makes /a a
 * file that was there before (read past its writes). No page cache. */
static void simulate(uint32_t op, uint64_t block, uint64_t extent, uint64_t again, int existing,
                     struct siox_cap_run *run) {
  siox_cap_model *m = model();
  m->client_cache_bytes = 0;
  siox_workload *w = siox_wl_new(SIOX_WL_TRACE, "t", 1);
  siox_wl_add_file(w, "/a");
  rec(w, SIOX_WL_MPI_OPEN, 0, 0, 0);
  rec(w, SIOX_WL_MPI_VIEW, 4 * KIB, block, extent);
  rec(w, op, 4 * KIB, 64 * KIB, 0);
  if (again) rec(w, op, 4 * KIB + again * KIB, 64 * KIB, 0);
  if (existing) rec(w, SIOX_WL_READ, 0, 1024 * KIB, 0);
  static const int32_t on_brick[1] = {0};
  struct siox_cap_sim_opts o = {.copies = 1, .brick_of = on_brick, .client = 1};
  char err[256] = "";
  if (siox_cap_simulate(m, w, &o, run, err, sizeof err) != 0) fail_msg("simulate: %s", err);
  siox_wl_free(w);
  siox_cap_model_free(m);
}

static void test_sieved_write_reads_and_writes_the_span(void **state) {
  (void)state;
  struct siox_cap_run run;
  simulate(SIOX_WL_MPI_WRITE, 8 * KIB, 32 * KIB, 0, 1, &run);
  assert_int_equal(run.stat[0].bytes_read, 232 * KIB + 1024 * KIB);
  assert_int_equal(run.stat[0].bytes_written, 232 * KIB);
  siox_cap_run_free(&run);
}

/* A file the job makes grows as it is written: a sieving read past its end
 * reads nothing, one over what was written reads that part. The second
 * write starts 128 KiB on: [132 KiB, 236 KiB) of its span was written. */
static void test_sieving_a_growing_file(void **state) {
  (void)state;
  struct siox_cap_run run;
  simulate(SIOX_WL_MPI_WRITE, 8 * KIB, 32 * KIB, 128, 0, &run);
  assert_int_equal(run.stat[0].bytes_read, 104 * KIB);
  assert_int_equal(run.stat[0].bytes_written, 2 * 232 * KIB);
  siox_cap_run_free(&run);
}

static void test_sieved_read_reads_the_span(void **state) {
  (void)state;
  struct siox_cap_run run;
  simulate(SIOX_WL_MPI_READ, 8 * KIB, 32 * KIB, 0, 1, &run);
  assert_int_equal(run.stat[0].bytes_read, 232 * KIB + 1024 * KIB);
  assert_int_equal(run.stat[0].bytes_written, 0);
  siox_cap_run_free(&run);
}

/* Guards against sieving too much: the byte view, a contiguous view and a
 * collective write move the access's own bytes. */
static void test_unsieved_move_their_bytes(void **state) {
  (void)state;
  struct siox_cap_run run;
  simulate(SIOX_WL_MPI_WRITE, 0, 0, 0, 1, &run);
  assert_int_equal(run.stat[0].bytes_written, 64 * KIB);
  assert_int_equal(run.stat[0].bytes_read, 1024 * KIB);
  siox_cap_run_free(&run);
  simulate(SIOX_WL_MPI_WRITE, 32 * KIB, 32 * KIB, 0, 1, &run);
  assert_int_equal(run.stat[0].bytes_written, 64 * KIB);
  siox_cap_run_free(&run);
  simulate(SIOX_WL_MPI_WRITE_ALL, 8 * KIB, 32 * KIB, 0, 1, &run);
  assert_int_equal(run.stat[0].bytes_written, 64 * KIB);
  assert_int_equal(run.stat[0].bytes_read, 1024 * KIB);
  siox_cap_run_free(&run);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_sieved_write_reads_and_writes_the_span),
      cmocka_unit_test(test_sieving_a_growing_file),
      cmocka_unit_test(test_sieved_read_reads_the_span),
      cmocka_unit_test(test_unsieved_move_their_bytes),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
