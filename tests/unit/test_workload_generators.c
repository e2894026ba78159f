/*
 * The characterization of a known trace (counts, histogram, sequential and
 * consecutive shares, common sizes, per-rank compute) and the generator
 * "from characterization": the stream it synthesizes has the same counters.
 * Anonymized names keep only the extension.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "siox_workload.h"

static void add(siox_workload *w, uint32_t rank, int op, uint32_t fid, uint64_t off, uint64_t bytes, int64_t gap,
                int64_t dur) {
  struct siox_wl_rec r = {rank, (uint32_t)op, fid, off, bytes, gap, dur, 0};
  assert_int_equal(siox_wl_add_rec(w, &r), 0);
}

/* rank 0: 4 consecutive 1 KiB writes, one 50-byte write that jumps ahead,
 * one that goes back; rank 1: collective MPI writes, a barrier. */
static siox_workload *known(void) {
  siox_workload *w = siox_wl_new(SIOX_WL_TRACE, "j", 2);
  siox_wl_add_file(w, "/x/a.dat");
  siox_wl_add_file(w, "/x/b.h5");
  add(w, 0, SIOX_WL_OPEN, 0, 0, 0, 100, 10);
  for (int i = 0; i < 4; i++) add(w, 0, SIOX_WL_WRITE, 0, (uint64_t)i * 1024, 1024, 100, 20);
  add(w, 0, SIOX_WL_WRITE, 0, 10000, 50, 100, 20);
  add(w, 0, SIOX_WL_WRITE, 0, 0, 50, 100, 20);
  add(w, 0, SIOX_WL_CLOSE, 0, 0, 0, 100, 10);
  add(w, 1, SIOX_WL_MPI_OPEN, 1, 0, 0, 0, 5);
  add(w, 1, SIOX_WL_MPI_WRITE_ALL, 1, 4096, 4096, 7, 30);
  add(w, 1, SIOX_WL_MPI_WRITE_ALL, 1, 8192, 4096, 7, 30);
  add(w, 1, SIOX_WL_MPI_READ, 1, 4096, 200000, 7, 30);
  add(w, 1, SIOX_WL_BARRIER, SIOX_WL_NOFILE, 0, 0, 1, 1);
  add(w, 1, SIOX_WL_MPI_CLOSE, 1, 0, 0, 0, 5);
  return w;
}

static const struct siox_wl_counters *row(const siox_workload *c, uint32_t rank, uint32_t fid) {
  for (size_t i = 0; i < siox_wl_ncounters(c); i++)
    if (siox_wl_counters_at(c, i)->rank == rank && siox_wl_counters_at(c, i)->fid == fid)
      return siox_wl_counters_at(c, i);
  fail_msg("no counters for rank %u file %u", rank, fid);
  return NULL;
}

static void counters_of_known_trace(void **state) {
  (void)state;
  siox_workload *t = known(), *c = NULL;
  assert_int_equal(siox_wl_characterize(t, &c), 0);
  assert_int_equal(siox_wl_ncounters(c), 2);
  const struct siox_wl_counters *a = row(c, 0, 0), *b = row(c, 1, 1);
  assert_int_equal(a->opens, 1);
  assert_int_equal(a->closes, 1);
  assert_int_equal(a->mpi, 0);
  assert_int_equal(a->wr.count, 6);
  assert_int_equal(a->wr.bytes, 4 * 1024 + 100);
  assert_int_equal(a->wr.seq, 4);    /* 3 consecutive + the jump ahead */
  assert_int_equal(a->wr.consec, 3);
  assert_int_equal(a->wr.hist[1], 0);
  assert_int_equal(a->wr.hist[0], 2);  /* 50 B */
  assert_int_equal(a->wr.hist[2], 4);  /* 1 KiB is in [1K, 10K) */
  assert_int_equal(a->wr.common_size[0], 1024);
  assert_int_equal(a->wr.common_count[0], 4);
  assert_int_equal(a->wr.common_size[1], 50);
  assert_int_equal(a->wr.common_count[1], 2);
  assert_int_equal(a->wr.max_end, 10050);
  assert_int_equal(a->wr.time_ns, 120);
  assert_int_equal(a->meta_ns, 20);
  assert_int_equal(b->mpi, 1);
  assert_int_equal(b->wr.coll, 2);
  assert_int_equal(b->rd.count, 1);
  assert_int_equal(b->rd.hist[4], 1); /* 200000 in [100K, 1M) */
  assert_int_equal(b->rd.coll, 0);
  const struct siox_wl_rank *r0 = siox_wl_rank_info(c, 0), *r1 = siox_wl_rank_info(c, 1);
  assert_int_equal(r0->ops, 8);
  assert_int_equal(r0->compute_ns, 800);
  assert_int_equal(r0->io_ns, 140);
  assert_int_equal(r1->barriers, 1);
  assert_int_equal(r1->compute_ns, 22);
  siox_wl_free(t);
  siox_wl_free(c);
}

static void synthesized_keeps_counters(void **state) {
  (void)state;
  siox_workload *t = known(), *c = NULL, *s = NULL, *c2 = NULL;
  char err[256];
  assert_int_equal(siox_wl_characterize(t, &c), 0);
  assert_int_equal(siox_wl_synthesize(c, &s, err, sizeof(err)), 0);
  assert_int_equal(siox_wl_nrecs(s), siox_wl_nrecs(t));
  assert_int_equal(siox_wl_characterize(s, &c2), 0);
  assert_int_equal(siox_wl_ncounters(c2), siox_wl_ncounters(c));
  for (size_t i = 0; i < siox_wl_ncounters(c); i++) {
    const struct siox_wl_counters *x = siox_wl_counters_at(c, i), *y = row(c2, x->rank, x->fid);
    assert_int_equal(x->opens, y->opens);
    assert_int_equal(x->closes, y->closes);
    assert_int_equal(x->mpi, y->mpi);
    const struct siox_wl_dir *dx[2] = {&x->rd, &x->wr}, *dy[2] = {&y->rd, &y->wr};
    for (int k = 0; k < 2; k++) {
      assert_int_equal(dx[k]->count, dy[k]->count);
      assert_int_equal(dx[k]->bytes, dy[k]->bytes);
      assert_int_equal(dx[k]->coll, dy[k]->coll);
      assert_int_equal(dx[k]->seq, dy[k]->seq);
      assert_int_equal(dx[k]->consec, dy[k]->consec);
      assert_int_equal(dx[k]->first_offset, dy[k]->first_offset);
      assert_memory_equal(dx[k]->hist, dy[k]->hist, sizeof(dx[k]->hist));
    }
  }
  for (uint32_t r = 0; r < 2; r++) {
    assert_int_equal(siox_wl_rank_info(c2, r)->barriers, siox_wl_rank_info(c, r)->barriers);
    assert_int_equal(siox_wl_rank_info(c2, r)->ops, siox_wl_rank_info(c, r)->ops);
  }
  siox_wl_free(t);
  siox_wl_free(c);
  siox_wl_free(s);
  siox_wl_free(c2);
}

static void contradictory_counters_rejected(void **state) {
  (void)state;
  siox_workload *c = siox_wl_new(SIOX_WL_CHARACTERIZATION, "j", 1), *s = NULL;
  siox_wl_add_file(c, "/a");
  struct siox_wl_counters k = {.rank = 0, .fid = 0};
  k.wr.count = 2;
  k.wr.bytes = 10;
  k.wr.common_size[0] = 100; /* 3 x 100 B > 10 B in 2 writes */
  k.wr.common_count[0] = 3;
  assert_int_equal(siox_wl_add_counters(c, &k), 0);
  char err[256] = "";
  assert_int_not_equal(siox_wl_synthesize(c, &s, err, sizeof(err)), 0);
  assert_non_null(strstr(err, "contradict"));
  siox_wl_free(c);
}

/* Counters that would need more operations than fit in memory, or whose
 * common sizes overflow 64 bits, are refused, not attempted. */
static void huge_counters_rejected(void **state) {
  (void)state;
  siox_workload *c = siox_wl_new(SIOX_WL_CHARACTERIZATION, "j", 1), *s = NULL;
  siox_wl_add_file(c, "/a");
  struct siox_wl_counters k = {.rank = 0, .fid = 0};
  k.wr.count = 1ULL << 40;
  k.wr.bytes = 1ULL << 40;
  assert_int_equal(siox_wl_add_counters(c, &k), 0);
  char err[256] = "";
  assert_int_equal(siox_wl_synthesize(c, &s, err, sizeof(err)), -EINVAL);
  assert_non_null(strstr(err, "more than"));
  siox_wl_free(c);
  c = siox_wl_new(SIOX_WL_CHARACTERIZATION, "j", 1);
  siox_wl_add_file(c, "/a");
  struct siox_wl_counters o = {.rank = 0, .fid = 0};
  o.wr.count = 2;
  o.wr.bytes = 0; /* what the wrapped product would "match" */
  o.wr.common_size[0] = 1ULL << 63; /* 2 x 2^63 wraps to 0 */
  o.wr.common_count[0] = 2;
  assert_int_equal(siox_wl_add_counters(c, &o), 0);
  assert_int_equal(siox_wl_synthesize(c, &s, err, sizeof(err)), -EINVAL);
  siox_wl_free(c);
}

static void anonymized_names(void **state) {
  (void)state;
  siox_workload *t = known();
  siox_wl_add_file(t, "/home/alice/secret-project/run 7");
  siox_wl_add_file(t, "/home/alice/x.tar_alice_gz");
  assert_int_equal(siox_wl_anonymize(t), 0);
  assert_string_equal(siox_wl_file_name(t, 0), "file0.dat");
  assert_string_equal(siox_wl_file_name(t, 1), "file1.h5");
  assert_string_equal(siox_wl_file_name(t, 2), "file2");
  assert_string_equal(siox_wl_file_name(t, 3), "file3");
  siox_wl_free(t);
}

/* The strided job: every rank opens the shared file with MPI once, rank 0
 * then opens it again with POSIX to read it back. MPI_File_open is
 * collective: the synthesized trace must give every rank the same number
 * of mpi_open/mpi_close (one), the extra ones POSIX (replaying two
 * MPI opens on rank 0 against one elsewhere hung siox-replay). */
static void collective_opens_match_across_ranks(void **state) {
  (void)state;
  siox_workload *t = siox_wl_new(SIOX_WL_TRACE, "j", 2), *c = NULL, *s = NULL;
  siox_wl_add_file(t, "/x/shared");
  for (uint32_t r = 0; r < 2; r++) {
    add(t, r, SIOX_WL_MPI_OPEN, 0, 0, 0, 1, 1);
    add(t, r, SIOX_WL_MPI_WRITE, 0, r * 4096, 4096, 1, 1);
    add(t, r, SIOX_WL_MPI_CLOSE, 0, 0, 0, 1, 1);
  }
  add(t, 0, SIOX_WL_OPEN, 0, 0, 0, 1, 1);
  add(t, 0, SIOX_WL_READ, 0, 0, 8192, 1, 1);
  add(t, 0, SIOX_WL_CLOSE, 0, 0, 0, 1, 1);
  assert_int_equal(siox_wl_characterize(t, &c), 0);
  char err[256] = "";
  assert_int_equal(siox_wl_synthesize(c, &s, err, sizeof(err)), 0);
  int n[2][SIOX_WL_NOPS] = {{0}};
  int open_mpi = 0; /* rank 0: is the MPI file open at each MPI access? */
  for (size_t i = 0; i < siox_wl_nrecs(s); i++) {
    const struct siox_wl_rec *r = siox_wl_rec(s, i);
    n[r->rank][r->op]++;
    if (r->rank == 0 && r->op == SIOX_WL_MPI_OPEN) open_mpi = 1;
    if (r->rank == 0 && r->op == SIOX_WL_MPI_CLOSE) open_mpi = 0;
    if (r->rank == 0 && (r->op == SIOX_WL_MPI_WRITE || r->op == SIOX_WL_MPI_READ)) assert_true(open_mpi);
  }
  for (int r = 0; r < 2; r++) {
    assert_int_equal(n[r][SIOX_WL_MPI_OPEN], 1);
    assert_int_equal(n[r][SIOX_WL_MPI_CLOSE], 1);
  }
  assert_int_equal(n[0][SIOX_WL_OPEN], 1);
  assert_int_equal(n[0][SIOX_WL_CLOSE], 1);
  siox_wl_free(s);
  siox_wl_free(c);
  siox_wl_free(t);
}

/* File per process: each rank opens its own file with MPI (over
 * MPI_COMM_SELF), rank 0 opens its file again with POSIX to read it back.
 * The synthesized rank 0 must make one mpi_open and one mpi_close, the
 * second pair POSIX: with one rank per file, the fewest opens of any rank
 * is 2, and the replay closed the MPI file twice ("Bad file descriptor"). */
static void file_per_process_reopen_stays_posix(void **state) {
  (void)state;
  siox_workload *t = siox_wl_new(SIOX_WL_TRACE, "j", 2), *c = NULL, *s = NULL;
  siox_wl_add_file(t, "/x/out.0");
  siox_wl_add_file(t, "/x/out.1");
  for (uint32_t r = 0; r < 2; r++) {
    add(t, r, SIOX_WL_MPI_OPEN, r, 0, 0, 1, 1);
    add(t, r, SIOX_WL_MPI_WRITE, r, 0, 4096, 1, 1);
    add(t, r, SIOX_WL_MPI_CLOSE, r, 0, 0, 1, 1);
  }
  add(t, 0, SIOX_WL_OPEN, 0, 0, 0, 1, 1);
  add(t, 0, SIOX_WL_READ, 0, 0, 4096, 1, 1);
  add(t, 0, SIOX_WL_CLOSE, 0, 0, 0, 1, 1);
  assert_int_equal(siox_wl_characterize(t, &c), 0);
  char err[256] = "";
  assert_int_equal(siox_wl_synthesize(c, &s, err, sizeof(err)), 0);
  int n[2][SIOX_WL_NOPS] = {{0}};
  for (size_t i = 0; i < siox_wl_nrecs(s); i++) n[siox_wl_rec(s, i)->rank][siox_wl_rec(s, i)->op]++;
  for (int r = 0; r < 2; r++) {
    assert_int_equal(n[r][SIOX_WL_MPI_OPEN], 1);
    assert_int_equal(n[r][SIOX_WL_MPI_CLOSE], 1);
  }
  assert_int_equal(n[0][SIOX_WL_OPEN], 1);
  assert_int_equal(n[0][SIOX_WL_CLOSE], 1);
  siox_wl_free(s);
  siox_wl_free(c);
  siox_wl_free(t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(collective_opens_match_across_ranks),
      cmocka_unit_test(file_per_process_reopen_stays_posix),
      cmocka_unit_test(counters_of_known_trace),
      cmocka_unit_test(synthesized_keeps_counters),
      cmocka_unit_test(contradictory_counters_rejected),
      cmocka_unit_test(huge_counters_rejected),
      cmocka_unit_test(anonymized_names),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
