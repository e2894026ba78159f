/*
 * The workload file format (workload/README.md): a written workload reads
 * back identical; a truncated, foreign, newer or malformed file is rejected
 * with a message naming the line and the reason.
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

static siox_workload *sample_trace(void) {
  siox_workload *w = siox_wl_new(SIOX_WL_TRACE, "job 42%", 2);
  assert_non_null(w);
  assert_int_equal(siox_wl_add_file(w, "/data/out put.h5"), 0);
  assert_int_equal(siox_wl_add_file(w, "/data/tab\there"), 1);
  const struct siox_wl_rec recs[] = {
      {0, SIOX_WL_MPI_OPEN, 0, 0, 0, 10, 500, 0},
      {0, SIOX_WL_MPI_VIEW, 0, 4096, 4096, 0, 70, 16384},
      {0, SIOX_WL_MPI_WRITE_ALL, 0, 4096, 4096, 20, 900, 0},
      {0, SIOX_WL_BARRIER, SIOX_WL_NOFILE, 0, 0, 0, 30, 0},
      {1, SIOX_WL_OPEN, 1, 0, 0, 0, 40, 0},
      {1, SIOX_WL_WRITE, 1, 123456789012ULL, 7, 1000000000LL, 50, 0},
      {1, SIOX_WL_SEEK, 1, 99, 0, 0, 1, 0},
  };
  for (size_t i = 0; i < sizeof(recs) / sizeof(recs[0]); i++) assert_int_equal(siox_wl_add_rec(w, &recs[i]), 0);
  return w;
}

/* A copy of the memstream's buffer: returned as is, gcc 12 at -O3 takes
 * pointers into it for pointers to the local `buf` (whose address went to
 * open_memstream) and fails the build with -Wdangling-pointer. */
static char *to_text(const siox_workload *w) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  assert_int_equal(siox_wl_write(w, f), 0);
  fclose(f);
  char *text = strdup(buf);
  free(buf);
  assert_non_null(text);
  return text;
}

static int from_text(const char *text, siox_workload **out) {
  FILE *f = fmemopen((void *)text, strlen(text), "r");
  assert_non_null(f);
  int rc = siox_wl_read(f, out, err, sizeof(err));
  fclose(f);
  return rc;
}

static void trace_round_trip(void **state) {
  (void)state;
  siox_workload *w = sample_trace(), *r = NULL;
  char *text = to_text(w);
  assert_int_equal(from_text(text, &r), 0);
  assert_int_equal(siox_wl_form(r), SIOX_WL_TRACE);
  assert_string_equal(siox_wl_job(r), "job 42%");
  assert_int_equal(siox_wl_ranks(r), 2);
  assert_int_equal(siox_wl_nfiles(r), 2);
  assert_string_equal(siox_wl_file_name(r, 0), "/data/out put.h5");
  assert_string_equal(siox_wl_file_name(r, 1), "/data/tab\there");
  assert_int_equal(siox_wl_nrecs(r), siox_wl_nrecs(w));
  for (size_t i = 0; i < siox_wl_nrecs(w); i++)
    assert_memory_equal(siox_wl_rec(r, i), siox_wl_rec(w, i), sizeof(struct siox_wl_rec));
  char *again = to_text(r);
  assert_string_equal(text, again);
  free(again);
  free(text);
  siox_wl_free(w);
  siox_wl_free(r);
}

static void characterization_round_trip(void **state) {
  (void)state;
  siox_workload *w = sample_trace(), *c = NULL, *r = NULL;
  assert_int_equal(siox_wl_characterize(w, &c), 0);
  char *text = to_text(c);
  assert_int_equal(from_text(text, &r), 0);
  assert_int_equal(siox_wl_form(r), SIOX_WL_CHARACTERIZATION);
  assert_int_equal(siox_wl_ncounters(r), siox_wl_ncounters(c));
  for (size_t i = 0; i < siox_wl_ncounters(c); i++)
    assert_memory_equal(siox_wl_counters_at(r, i), siox_wl_counters_at(c, i), sizeof(struct siox_wl_counters));
  for (uint32_t k = 0; k < 2; k++)
    assert_memory_equal(siox_wl_rank_info(r, k), siox_wl_rank_info(c, k), sizeof(struct siox_wl_rank));
  free(text);
  siox_wl_free(w);
  siox_wl_free(c);
  siox_wl_free(r);
}

/* Every proper prefix of a valid file is refused (a replay of part of a
 * job would be wrong without anyone noticing). */
static void truncated_rejected(void **state) {
  (void)state;
  siox_workload *w = sample_trace(), *r = NULL;
  char *text = to_text(w);
  size_t n = strlen(text);
  for (size_t cut = 0; cut < n; cut++) {
    char *part = strndup(text, cut);
    int rc = part[0] ? from_text(part, &r) : (snprintf(err, sizeof(err), "empty"), -22);
    if (rc == 0) fail_msg("a file cut at byte %zu of %zu was accepted", cut, n);
    assert_true(err[0] != '\0');
    free(part);
  }
  /* the message says so */
  char *part = strndup(text, n - 4);
  assert_int_not_equal(from_text(part, &r), 0);
  assert_non_null(strstr(err, "truncated"));
  free(part);
  free(text);
  siox_wl_free(w);
}

static void expect_reject(const char *text, const char *words) {
  siox_workload *r = NULL;
  int rc = from_text(text, &r);
  if (rc == 0) fail_msg("accepted: %s", text);
  if (!strstr(err, words)) fail_msg("message '%s' lacks '%s'", err, words);
}

#define HDR "siox-workload 1 trace\njob j\nranks 2\nfile 0 /a\n"

static void foreign_and_malformed_rejected(void **state) {
  (void)state;
  expect_reject("root:x:0:0:root:/root:/bin/bash\n", "not a SIOX workload file");
  expect_reject("\x89PNG\r\n\x1a\n", "not a SIOX workload file");
  expect_reject("siox-workload 4 trace\njob j\nranks 1\nend 0 0\n", "newer");
  expect_reject("siox-workload 1 movie\njob j\nranks 1\nend 0 0\n", "unknown form");
  expect_reject(HDR "r 0 wrte 0 0 1 0 0\nend 1 1\n", "line 5: unknown operation 'wrte'");
  expect_reject(HDR "r 2 write 0 0 1 0 0\nend 1 1\n", "rank '2'");
  expect_reject(HDR "r 0 write 1 0 1 0 0\nend 1 1\n", "file id '1'");
  expect_reject(HDR "r 0 write 0 0 1 0\nend 1 1\n", "7 fields");
  expect_reject(HDR "r 0 write 0 -5 1 0 0\nend 1 1\n", "offset");
  expect_reject(HDR "r 0 write 0 0 1 0 0\nend 1 2\n", "damaged");
  expect_reject(HDR "r 0 write 0 0 1 0 0\nend 1 1\nr 0 write 0 0 1 0 0\n", "after the end");
  expect_reject(HDR "r 0 barrier 0 0 0 0 0\nend 1 1\n", "barriers take '-'");
  expect_reject(HDR "c 0 0 mpi=0\nend 1 1\n", "unexpected 'c'");
  expect_reject("siox-workload 1 characterization\njob j\nranks 1\nfile 0 /a\nc 0 0 mpi=0 opens=1\nend 1 1\n",
                "missing");
}

/* Replaces the first " KEY=VALUE" of text (a counter) with nothing. */
static void drop_counter(char *text, const char *key) {
  char *k = strstr(text, key);
  assert_non_null(k);
  char *end = strchr(k, ' ');
  memmove(k - 1, end ? end : k + strlen(k), strlen(end ? end : k + strlen(k)) + 1);
}

/* Version 2 counts MPI opens and closes apart (a file one rank opened
 * with MPI and again with POSIX); a version 1 file, without them, still
 * reads, and a version 2 line without them does not. */
static void mpi_opens_by_version(void **state) {
  (void)state;
  siox_workload *w = sample_trace(), *c = NULL, *r = NULL;
  assert_int_equal(siox_wl_characterize(w, &c), 0);
  const struct siox_wl_counters *x = siox_wl_counters_at(c, 0);
  assert_int_equal(x->mpi_split, 1);
  assert_int_equal(x->mpi_opens, 1);
  char *text = to_text(c);
  assert_non_null(strstr(text, "siox-workload 3 characterization\n"));
  char *v2 = strdup(text);
  char *v2b = strdup(text);
  drop_counter(v2b, "mpi_opens=");
  expect_reject(v2b, "'mpi_opens' missing");
  free(v2b);
  text[strlen("siox-workload ")] = '1';
  expect_reject(text, "unknown counter 'mpi_opens'");
  drop_counter(text, "mpi_opens=");
  drop_counter(text, "mpi_closes=");
  drop_counter(text, "mpi_opens=");
  drop_counter(text, "mpi_closes=");
  assert_int_equal(from_text(text, &r), 0);
  assert_int_equal(siox_wl_counters_at(r, 0)->mpi_split, 0);
  assert_int_equal(siox_wl_counters_at(r, 0)->mpi_opens, 0);
  assert_int_equal(siox_wl_counters_at(r, 0)->opens, x->opens);
  free(text);
  siox_wl_free(r);
  siox_wl_free(c);
  siox_wl_free(w);
  char *over = strstr(v2, "mpi_opens=1");
  assert_non_null(over);
  over[strlen("mpi_opens=")] = '9';
  expect_reject(v2, "exceeds");
  free(v2);
}

/* Format 3's mpi_view (MPI_File_set_view) has an eighth field, the tile
 * step; a block 0 (a view the layer could not describe) goes with step 0. */
#define HDR3 "siox-workload 3 trace\njob j\nranks 1\nfile 0 /a\n"
static void mpi_view_checked(void **state) {
  (void)state;
  siox_workload *r = NULL;
  assert_int_equal(from_text(HDR3 "r 0 mpi_view 0 100 4096 0 5 16384\nr 0 mpi_view 0 0 0 0 5 0\nend 1 2\n", &r), 0);
  assert_int_equal(siox_wl_rec(r, 0)->extent, 16384);
  assert_int_equal(siox_wl_rec(r, 0)->offset, 100);
  assert_int_equal(siox_wl_rec(r, 0)->bytes, 4096);
  siox_wl_free(r);
  expect_reject(HDR3 "r 0 mpi_view 0 100 4096 0 5\nend 1 1\n", "8 fields");
  expect_reject(HDR3 "r 0 write 0 0 1 0 0 7\nend 1 1\n", "7 fields");
  expect_reject(HDR3 "r 0 mpi_view 0 0 8192 0 5 4096\nend 1 1\n", "bad view");
  expect_reject(HDR3 "r 0 mpi_view 0 0 4096 0 5 0\nend 1 1\n", "bad view");
  expect_reject("siox-workload 2 trace\njob j\nranks 1\nfile 0 /a\nr 0 mpi_view 0 0 1 0 5 2\nend 1 1\n",
                "new in format version 3");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(trace_round_trip),
      cmocka_unit_test(characterization_round_trip),
      cmocka_unit_test(mpi_view_checked),
      cmocka_unit_test(truncated_rejected),
      cmocka_unit_test(foreign_and_malformed_rejected),
      cmocka_unit_test(mpi_opens_by_version),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
