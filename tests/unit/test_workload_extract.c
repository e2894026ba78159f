/*
 * The extractor on a synthetic warehouse (a real siox-server's schema, rows
 * inserted by SQL as the layers would store them): a 2-rank MPI job with a
 * collective write through ROMIO (the aggregator's pwrite below it), a
 * per-rank log written with POSIX calls, system files, stdout, and the
 * mpirun process. Checks ranks (from mpi/rank, not process order), files,
 * each rank's operations with offsets, sizes, gaps and durations, what is
 * left out and counted, the path filter and the anonymized names.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "siox_workload.h"
#include "test_kb_baseline_db.h"

static struct kbdb db;
static int argc_;
static char **argv_;
static int n_mpi, n_mpiio, n_posix;
static int t_init, t_fopen, t_wall, t_fclose, t_open, t_pwrite, t_close, t_write, t_read;
static const int64_t T0 = 1000000000000LL;

/* One activity; attrs "io/offset=0,io/bytes=4096" (ontology names). */
static int64_t act(int proc, int node, int type, int64_t parent, int64_t s, int64_t e, const char *path,
                   const char *attrs) {
  int64_t aid = ((int64_t)proc << 32) | ++db.next_local;
  char ids[1024] = "", vals[512] = "", buf[256];
  snprintf(buf, sizeof(buf), "%s", attrs);
  for (char *save, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
    char *eq = strchr(t, '=');
    *eq = '\0';
    size_t li = strlen(ids), lv = strlen(vals);
    snprintf(ids + li, sizeof(ids) - li, "%s(SELECT id FROM ontology WHERE name = '%s')", li ? "," : "", t);
    snprintf(vals + lv, sizeof(vals) - lv, "%s%s", lv ? "," : "", eq + 1);
  }
  kbdb_exec(&db,
            "INSERT INTO activities (aid, proc_id, parent_aid, node_id, type_id, start_ns, end_ns, attr_ids, attr_vals)"
            " VALUES (%lld, %d, %s, %d, %d, %lld, %lld, ARRAY[%s]::integer[], ARRAY[%s]::bigint[])",
            (long long)aid, proc, parent ? (snprintf(buf, sizeof(buf), "%lld", (long long)parent), buf) : "NULL",
            node, type, (long long)(T0 + s), (long long)(T0 + e), ids, vals);
  if (path)
    kbdb_exec(&db,
              "INSERT INTO activity_text_attrs (aid, attr_id, value)"
              " VALUES (%lld, (SELECT id FROM ontology WHERE name = 'posix/path'), '%s')",
              (long long)aid, path);
  return aid;
}

/* The remote-call send an MPI-IO access makes (names its file). */
static void send_path(int64_t aid, const char *path, int64_t off, int64_t len) {
  kbdb_exec(&db,
            "WITH o AS (INSERT INTO objects DEFAULT VALUES RETURNING object_id),"
            " d AS (INSERT INTO descriptors (scope_key, type, value, object_id)"
            "       SELECT '', (SELECT id FROM ontology WHERE name = 'posix/path'), '%s', object_id FROM o"
            "       ON CONFLICT (scope_key, type, value) WHERE NOT released DO UPDATE SET value = EXCLUDED.value"
            "       RETURNING desc_id, object_id)"
            " INSERT INTO remote_calls (aid, kind, object_id, desc_id, offset_b, length_b)"
            " SELECT %lld, 'S', object_id, desc_id, %lld, %lld FROM d",
            path, (long long)aid, (long long)off, (long long)len);
}

/* One rank: times in ns after T0 + base. */
static void rank_acts(int proc, int rank, int64_t base) {
  char a[128];
  snprintf(a, sizeof(a), "mpi/rank=%d,mpi/size=2", rank);
  act(proc, n_mpi, t_init, 0, base, base + 100, NULL, a);
  int64_t op = act(proc, n_mpiio, t_fopen, 0, base + 200, base + 300, "/data/shared.dat", "io/flags=37");
  act(proc, n_posix, t_open, op, base + 210, base + 220, "/data/shared.dat", "io/result=5");
  snprintf(a, sizeof(a), "io/offset=%d,io/bytes=4096,mpi/collective=1", rank * 4096);
  int64_t w = act(proc, n_mpiio, t_wall, 0, base + 400, base + 500, NULL, a);
  send_path(w, "/data/shared.dat", rank * 4096, 4096);
  if (rank == 0) /* the aggregator writes both ranks' data */
    act(proc, n_posix, t_pwrite, w, base + 450, base + 480, NULL, "posix/fd=5,io/offset=0,io/bytes=8192,io/result=8192");
  int64_t cl = act(proc, n_mpiio, t_fclose, 0, base + 600, base + 700, NULL, "");
  act(proc, n_posix, t_close, cl, base + 610, base + 620, NULL, "posix/fd=5,io/result=0");
  char log[64];
  snprintf(log, sizeof(log), "/data/rank%d.log", rank);
  act(proc, n_posix, t_open, 0, base + 800, base + 850, log, "io/result=7");
  act(proc, n_posix, t_write, 0, base + 1000, base + 1100, NULL, "posix/fd=7,io/offset=0,io/bytes=100,io/result=100");
  act(proc, n_posix, t_write, 0, base + 1200, base + 1300, NULL, "posix/fd=7,io/offset=100,io/bytes=50,io/result=50");
  act(proc, n_posix, t_close, 0, base + 1400, base + 1410, NULL, "posix/fd=7,io/result=0");
  /* system file, and stdout (never opened): left out, counted */
  act(proc, n_posix, t_open, 0, base + 1500, base + 1510, "/proc/self/maps", "io/result=8");
  act(proc, n_posix, t_read, 0, base + 1520, base + 1530, NULL, "posix/fd=8,io/offset=0,io/bytes=4096,io/result=900");
  act(proc, n_posix, t_write, 0, base + 1540, base + 1550, NULL, "posix/fd=1,io/bytes=12,io/result=12");
}

static int setup(void **state) {
  (void)state;
  if (kbdb_start(&db, argc_, argv_)) return -1;
  n_mpi = kbdb_node(&db, "h1", "MPI");
  n_mpiio = kbdb_node(&db, "h1", "MPI-IO");
  n_posix = kbdb_node(&db, "h1", "POSIX");
  t_init = kbdb_type(&db, n_mpi, "MPI_Init");
  t_fopen = kbdb_type(&db, n_mpiio, "MPI_File_open");
  t_wall = kbdb_type(&db, n_mpiio, "MPI_File_write_at_all");
  t_fclose = kbdb_type(&db, n_mpiio, "MPI_File_close");
  t_open = kbdb_type(&db, n_posix, "open");
  t_pwrite = kbdb_type(&db, n_posix, "pwrite64");
  t_close = kbdb_type(&db, n_posix, "close");
  t_write = kbdb_type(&db, n_posix, "write");
  t_read = kbdb_type(&db, n_posix, "read");
  int launcher = kbdb_proc(&db, "h1", "wl-job"); /* mpirun: no rank */
  act(launcher, n_posix, t_open, 0, 0, 10, "/data/hostfile", "io/result=3");
  int p1 = kbdb_proc(&db, "h1", "wl-job"), p0 = kbdb_proc(&db, "h1", "wl-job"); /* rank 1 first */
  rank_acts(p1, 1, 5);
  rank_acts(p0, 0, 0);
  int other = kbdb_proc(&db, "h1", "other-job");
  act(other, n_posix, t_open, 0, 0, 10, "/data/other", "io/result=3");
  return 0;
}

static int teardown(void **state) {
  (void)state;
  kbdb_stop(&db);
  return 0;
}

static const struct siox_wl_rec *nth(const siox_workload *w, uint32_t rank, size_t k) {
  for (size_t i = 0; i < siox_wl_nrecs(w); i++)
    if (siox_wl_rec(w, i)->rank == rank && k-- == 0) return siox_wl_rec(w, i);
  fail_msg("rank %u has fewer records", rank);
  return NULL;
}

static void expect(const siox_workload *w, uint32_t rank, size_t k, int op, const char *file, uint64_t off,
                   uint64_t bytes, int64_t gap, int64_t dur) {
  const struct siox_wl_rec *r = nth(w, rank, k);
  if (r->op != (uint32_t)op) fail_msg("rank %u record %zu is %s, want %s", rank, k, siox_wl_op_name((int)r->op),
                                      siox_wl_op_name(op));
  assert_string_equal(siox_wl_file_name(w, r->fid), file);
  assert_int_equal(r->offset, off);
  assert_int_equal(r->bytes, bytes);
  assert_int_equal(r->gap_ns, gap);
  assert_int_equal(r->dur_ns, dur);
}

static void job_trace(void **state) {
  (void)state;
  struct siox_wl_extract_opts o = {.job = "wl-job"};
  struct siox_wl_extract_stats st;
  siox_workload *w = NULL;
  char err[512] = "";
  int rc = siox_wl_extract(db.c, &o, &w, &st, err, sizeof(err));
  if (rc) fail_msg("extract: %s", err);
  assert_int_equal(siox_wl_ranks(w), 2);
  assert_int_equal(st.processes, 2);
  assert_int_equal(siox_wl_nfiles(w), 3); /* shared.dat, rank logs; not the hostfile, /proc, stdout */
  assert_int_equal(siox_wl_nrecs(w), 2 * 7);
  for (uint32_t r = 0; r < 2; r++) {
    char log[64];
    snprintf(log, sizeof(log), "/data/rank%u.log", r);
    expect(w, r, 0, SIOX_WL_MPI_OPEN, "/data/shared.dat", 0, 0, 100, 100);
    expect(w, r, 1, SIOX_WL_MPI_WRITE_ALL, "/data/shared.dat", r * 4096, 4096, 100, 100);
    expect(w, r, 2, SIOX_WL_MPI_CLOSE, "/data/shared.dat", 0, 0, 100, 100);
    expect(w, r, 3, SIOX_WL_OPEN, log, 0, 0, 100, 50);
    expect(w, r, 4, SIOX_WL_WRITE, log, 0, 100, 150, 100);
    expect(w, r, 5, SIOX_WL_WRITE, log, 100, 50, 100, 100);
    expect(w, r, 6, SIOX_WL_CLOSE, log, 0, 0, 100, 10);
  }
  assert_int_equal(st.inner, 3 + 2); /* the ROMIO open/close (and rank 0's pwrite) below MPI-IO calls */
  assert_int_equal(st.filtered, 2 * 2);
  assert_int_equal(st.unknown_file, 2);
  assert_int_equal(st.no_rank, 1);
  siox_wl_free(w);
}

static void prefix_and_anonymize(void **state) {
  (void)state;
  const char *const pre[] = {"/data/rank", NULL};
  struct siox_wl_extract_opts o = {.job = "wl-job", .prefixes = pre};
  struct siox_wl_extract_stats st;
  siox_workload *w = NULL;
  char err[512] = "";
  assert_int_equal(siox_wl_extract(db.c, &o, &w, &st, err, sizeof(err)), 0);
  assert_int_equal(siox_wl_nfiles(w), 2);
  assert_int_equal(siox_wl_nrecs(w), 2 * 4);
  assert_int_equal(siox_wl_anonymize(w), 0);
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  siox_wl_write(w, f);
  fclose(f);
  assert_null(strstr(buf, "rank0"));
  assert_null(strstr(buf, "/data"));
  assert_non_null(strstr(buf, "file 0 file0.log"));
  free(buf);
  siox_wl_free(w);
}

static void unknown_job(void **state) {
  (void)state;
  struct siox_wl_extract_opts o = {.job = "no-such-job"};
  struct siox_wl_extract_stats st;
  siox_workload *w = NULL;
  char err[512] = "";
  assert_int_equal(siox_wl_extract(db.c, &o, &w, &st, err, sizeof(err)), -ENOENT);
  assert_non_null(strstr(err, "no-such-job"));
}

/* A job id two users' processes carry names two jobs: refused, not mixed. */
static void job_of_two_users(void **state) {
  (void)state;
  int a = kbdb_proc(&db, "h1", "shared-id");
  int b = kbdb_proc(&db, "h1", "shared-id");
  kbdb_exec(&db, "UPDATE processes SET uid = 1001 WHERE proc_id = %d", b);
  act(a, n_posix, t_open, 0, 0, 10, "/data/a", "io/result=3");
  act(b, n_posix, t_open, 0, 0, 10, "/data/b", "io/result=3");
  struct siox_wl_extract_opts o = {.job = "shared-id"};
  struct siox_wl_extract_stats st;
  siox_workload *w = NULL;
  char err[512] = "";
  assert_int_equal(siox_wl_extract(db.c, &o, &w, &st, err, sizeof(err)), -EINVAL);
  assert_non_null(strstr(err, "several users"));
}

int main(int argc, char **argv) {
  argc_ = argc;
  argv_ = argv;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(job_trace),
      cmocka_unit_test(prefix_and_anonymize),
      cmocka_unit_test(unknown_job),
      cmocka_unit_test(job_of_two_users),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
