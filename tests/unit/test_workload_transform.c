/*
 * The workload transformations of what-if questions about the application
 * (wl_transform.c): weak scaling to more or fewer ranks, and shared files
 * split into one file per process. Each keeps every operation's size, gap
 * and duration; a shared file's replicas never overlap; per-process files
 * are copied per replica.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "siox_workload.h"

static char err[512];

/* 2 ranks: both MPI-write 100 bytes of a shared file (rank r at 100 r), rank
 * 0 also writes its own log; a barrier each. */
static siox_workload *two_ranks(void) {
  siox_workload *w = siox_wl_new(SIOX_WL_TRACE, "j", 2);
  assert_int_equal(siox_wl_add_file(w, "/m/shared.dat"), 0);
  assert_int_equal(siox_wl_add_file(w, "/m/own.log"), 1);
  const struct siox_wl_rec recs[] = {
      {0, SIOX_WL_MPI_OPEN, 0, 0, 0, 1, 10, 0},     {0, SIOX_WL_MPI_WRITE, 0, 0, 100, 2, 20, 0},
      {0, SIOX_WL_WRITE, 1, 0, 50, 3, 7, 0},        {0, SIOX_WL_BARRIER, SIOX_WL_NOFILE, 0, 0, 0, 3, 0},
      {1, SIOX_WL_MPI_OPEN, 0, 0, 0, 1, 11, 0},     {1, SIOX_WL_MPI_WRITE, 0, 100, 100, 2, 21, 0},
      {1, SIOX_WL_BARRIER, SIOX_WL_NOFILE, 0, 0, 0, 4, 0},
  };
  for (size_t i = 0; i < sizeof(recs) / sizeof(recs[0]); i++) assert_int_equal(siox_wl_add_rec(w, &recs[i]), 0);
  return w;
}

static const struct siox_wl_rec *nth_of_rank(const siox_workload *w, uint32_t rank, size_t n) {
  for (size_t i = 0; i < siox_wl_nrecs(w); i++)
    if (siox_wl_rec(w, i)->rank == rank && n-- == 0) return siox_wl_rec(w, i);
  fail_msg("rank %u has too few records", rank);
  return NULL;
}

static void more_ranks(void **state) {
  (void)state;
  siox_workload *w = two_ranks(), *x = NULL;
  assert_int_equal(siox_wl_scale_ranks(w, 5, &x, err, sizeof err), 0);
  assert_int_equal(siox_wl_ranks(x), 5);
  /* shared kept; own.log copied for replicas 1 and 2 */
  assert_int_equal(siox_wl_nfiles(x), 4);
  assert_string_equal(siox_wl_file_name(x, 0), "/m/shared.dat");
  assert_string_equal(siox_wl_file_name(x, 1), "/m/own.log");
  assert_string_equal(siox_wl_file_name(x, 2), "/m/own.log.r1");
  assert_string_equal(siox_wl_file_name(x, 3), "/m/own.log.r2");
  assert_int_equal(siox_wl_nrecs(x), 4 + 3 + 4 + 3 + 4);
  /* rank 3 = replica 1 of rank 1: shared file, 200 bytes (the extent) further */
  const struct siox_wl_rec *r = nth_of_rank(x, 3, 1);
  assert_int_equal(r->op, SIOX_WL_MPI_WRITE);
  assert_int_equal(r->fid, 0);
  assert_int_equal(r->offset, 300);
  assert_int_equal(r->bytes, 100);
  assert_int_equal(r->gap_ns, 2);
  assert_int_equal(r->dur_ns, 21);
  /* rank 4 = replica 2 of rank 0: its own copy of the log, offset kept */
  r = nth_of_rank(x, 4, 2);
  assert_int_equal(r->op, SIOX_WL_WRITE);
  assert_int_equal(r->fid, 3);
  assert_int_equal(r->offset, 0);
  /* rank 4's shared-file write: 2 extents further */
  assert_int_equal(nth_of_rank(x, 4, 1)->offset, 400);
  siox_wl_free(x);
  siox_wl_free(w);
}

/* A shared file under strided views (2 ranks: 4 KiB blocks every 8 KiB
 * from rank x 4 KiB, 64 KiB each): an access reaches 15 steps + a block past
 * its first byte (rank 1 to 128 KiB), so the replica's views and accesses
 * move by an extent past that, together, and never overlap the original. */
static void more_ranks_with_views(void **state) {
  (void)state;
  siox_workload *w = siox_wl_new(SIOX_WL_TRACE, "j", 2), *x = NULL;
  assert_int_equal(siox_wl_add_file(w, "/m/strided.dat"), 0);
  for (uint32_t r = 0; r < 2; r++) {
    const struct siox_wl_rec recs[] = {
        {r, SIOX_WL_MPI_OPEN, 0, 0, 0, 1, 10, 0},
        {r, SIOX_WL_MPI_VIEW, 0, r * 4096, 4096, 1, 10, 8192},
        {r, SIOX_WL_MPI_WRITE, 0, r * 4096, 65536, 2, 20, 0},
    };
    for (size_t i = 0; i < 3; i++) assert_int_equal(siox_wl_add_rec(w, &recs[i]), 0);
  }
  assert_int_equal(siox_wl_scale_ranks(w, 4, &x, err, sizeof err), 0);
  const struct siox_wl_rec *v = nth_of_rank(x, 2, 1), *a = nth_of_rank(x, 2, 2);
  assert_int_equal(v->op, SIOX_WL_MPI_VIEW);
  assert_int_equal(v->bytes, 4096);
  assert_int_equal(v->extent, 8192);
  assert_true(v->offset >= 128 * 1024); /* past rank 1's last block */
  assert_int_equal(a->offset, v->offset); /* the access still starts at its view's first byte */
  assert_int_equal(nth_of_rank(x, 3, 1)->offset, v->offset + 4096);
  siox_wl_free(x);
  siox_wl_free(w);
}

static void fewer_ranks(void **state) {
  (void)state;
  siox_workload *w = two_ranks(), *x = NULL;
  assert_int_equal(siox_wl_scale_ranks(w, 1, &x, err, sizeof err), 0);
  assert_int_equal(siox_wl_ranks(x), 1);
  assert_int_equal(siox_wl_nrecs(x), 4);
  assert_int_equal(nth_of_rank(x, 0, 1)->offset, 0);
  siox_wl_free(x);
  assert_int_equal(siox_wl_scale_ranks(w, 0, &x, err, sizeof err), -22);
  assert_non_null(strstr(err, "rank count"));
  siox_wl_free(w);
}

static void file_per_process(void **state) {
  (void)state;
  siox_workload *w = two_ranks(), *x = NULL;
  assert_int_equal(siox_wl_file_per_process(w, &x, err, sizeof err), 0);
  assert_int_equal(siox_wl_ranks(x), 2);
  assert_int_equal(siox_wl_nfiles(x), 3);
  assert_string_equal(siox_wl_file_name(x, 0), "/m/shared.dat.r0");
  assert_string_equal(siox_wl_file_name(x, 1), "/m/shared.dat.r1");
  assert_string_equal(siox_wl_file_name(x, 2), "/m/own.log");
  assert_int_equal(siox_wl_nrecs(x), siox_wl_nrecs(w));
  const struct siox_wl_rec *r = nth_of_rank(x, 1, 1);
  assert_int_equal(r->fid, 1);
  assert_int_equal(r->offset, 100);
  assert_int_equal(nth_of_rank(x, 0, 1)->fid, 0);
  assert_int_equal(nth_of_rank(x, 0, 2)->fid, 2);
  assert_int_equal(nth_of_rank(x, 1, 2)->fid, SIOX_WL_NOFILE);
  siox_wl_free(x);
  siox_wl_free(w);
}

static void characterization_refused(void **state) {
  (void)state;
  siox_workload *w = siox_wl_new(SIOX_WL_CHARACTERIZATION, "j", 2), *x = NULL;
  assert_int_equal(siox_wl_file_per_process(w, &x, err, sizeof err), -22);
  assert_non_null(strstr(err, "needs a trace"));
  assert_int_equal(siox_wl_scale_ranks(w, 4, &x, err, sizeof err), -22);
  assert_null(x);
  siox_wl_free(w);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(more_ranks),
      cmocka_unit_test(more_ranks_with_views),
      cmocka_unit_test(fewer_ranks),
      cmocka_unit_test(file_per_process),
      cmocka_unit_test(characterization_refused),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
