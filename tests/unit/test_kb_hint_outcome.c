/*
 * Applied hint sets judged against the runs without them (issue 11 items 1
 * and 2), on a real siox-server's warehouse filled by SQL: jobs of one
 * application whose ranks open /mnt/out.<n>.dat (recording mpi/hint_set when
 * SIOX applied a set) and make collective writes of known durations. The
 * analysis of a run that applied a set measures it: a set measured slower
 * is withdrawn and the set it superseded is served again; an experiment is
 * made live by a measured gain and withdrawn without one; a set without
 * runs to compare stays "not measured"; values once withdrawn are not
 * suggested again.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <siox/siox_kb.h>

#include "test_kb_baseline_db.h"

#define NPROC 4
#define CALLS 16
#define BYTES 65536
#define EXE "/opt/bench/ior"

static struct kbdb db;
static int mpiio, t_open, t_coll;
static uint64_t seed = 7;
static int njobs;

/* +-share, a fixed pseudo-random sequence. */
static double jitter(double share) {
  seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
  return 1 + share * ((double)(seed >> 11) / (double)(1ULL << 52) - 1.0);
}

static int64_t act(int proc, int type, int64_t start, int64_t dur, int64_t bytes) {
  int64_t aid = ((int64_t)proc << 32) | ++db.next_local;
  kbdb_exec(&db,
            "INSERT INTO activities (aid, proc_id, node_id, type_id, start_ns, end_ns, attr_ids, attr_vals)"
            " SELECT %lld, %d, %d, %d, %lld, %lld, CASE WHEN %lld >= 0 THEN ARRAY[(SELECT id FROM ontology WHERE"
            " name = 'io/bytes'), (SELECT id FROM ontology WHERE name = 'mpi/collective')] ELSE '{}' END,"
            " CASE WHEN %lld >= 0 THEN ARRAY[%lld::bigint, 1] ELSE '{}' END",
            (long long)aid, proc, mpiio, type, (long long)start, (long long)(start + dur), (long long)bytes,
            (long long)bytes, (long long)bytes);
  return aid;
}

/* A run of the application: NPROC ranks open /mnt/out.<n>.dat, applying
 * set (0: none), and make CALLS collective writes of BYTES taking about
 * call_ns (+-noise). */
static void run(const char *job, int64_t set, double call_ns, double noise) {
  int64_t t0 = kbdb_now_ns(&db) - 30LL * 1000000000 + (int64_t)njobs++ * 1000000000;
  for (int r = 0; r < NPROC; r++) {
    int proc = kbdb_proc(&db, "h0", job);
    kbdb_exec(&db, "UPDATE processes SET exe = '%s', args = '-w -t 64k' WHERE proc_id = %d", EXE, proc);
    int64_t open = act(proc, t_open, t0, 1000, -1), t = t0 + 2000;
    kbdb_exec(&db, "INSERT INTO activity_text_attrs SELECT %lld, id, '/mnt/out.%d.dat' FROM ontology"
                   " WHERE name = 'posix/path'", (long long)open, njobs);
    if (set)
      kbdb_exec(&db,
                "UPDATE activities SET attr_ids = attr_ids || (SELECT id FROM ontology WHERE name = 'mpi/hint_set'),"
                " attr_vals = attr_vals || %lld::bigint WHERE aid = %lld",
                (long long)set, (long long)open);
    for (int k = 0; k < CALLS; k++) {
      int64_t d = (int64_t)(call_ns * jitter(noise));
      act(proc, t_coll, t, d, BYTES);
      t += d + 1000;
    }
  }
}

static int64_t app_id(void) {
  return (int64_t)kbdb_num(&db,
                           "INSERT INTO kb_apps (exe, args_hash, args) VALUES ('%s', %lld, '-w -t 64k')"
                           " ON CONFLICT (exe, args_hash) DO UPDATE SET args = EXCLUDED.args RETURNING app_id",
                           EXE, (long long)(int64_t)siox_kb_args_hash("-w -t 64k"));
}

/* A hint set for the app and /mnt/out.#.dat; returns its id. */
static int64_t set(const char *hints, const char *status, int64_t previous, int superseded) {
  char prev[32] = "NULL";
  if (previous) snprintf(prev, sizeof prev, "%lld", (long long)previous);
  return (int64_t)kbdb_num(&db,
                           "INSERT INTO kb_hint_sets (app_id, file_pattern, component, hints, status, previous_set_id,"
                           " superseded, expected_gain_s) VALUES (%lld, '/mnt/out.#.dat', 'romio321', '%s'::jsonb,"
                           " '%s', %s, %s, 0) RETURNING hint_set_id",
                           (long long)app_id(), hints, status, prev, superseded ? "true" : "false");
}

static void clear(void) {
  kbdb_exec(&db, "UPDATE kb_findings SET hint_set_id = NULL");
  kbdb_exec(&db, "DELETE FROM kb_hint_sets");
  kbdb_exec(&db, "DELETE FROM kb_findings");
  kbdb_exec(&db, "DELETE FROM activity_text_attrs");
  kbdb_exec(&db, "DELETE FROM activities");
  kbdb_exec(&db, "DELETE FROM processes WHERE proc_id > 0");
}

/* The set served to run ("<uid>:<job>", "" for a process without a job). */
static int64_t served_to(const char *run) {
  struct siox_kb_hintset hs;
  char err[256];
  int rc = siox_kb_hints_lookup(db.c, EXE, "-w -t 64k", "/mnt/out.99.dat", "romio321", run, &hs, err, sizeof err);
  assert_true(rc >= 0);
  return rc ? hs.hint_set_id : 0;
}

static int64_t served(void) { return served_to("1000:next"); }

static void analyze(const char *job) {
  char err[512] = "";
  int n = siox_kb_analyze_job(db.c, job, err, sizeof err);
  if (n < 0) fprintf(stderr, "analysis of %s: %s\n", job, err);
  assert_true(n >= 0);
}

static double num(const char *expr, int64_t id) {
  return kbdb_num(&db, "SELECT %s FROM kb_hint_sets WHERE hint_set_id = %lld", expr, (long long)id);
}

/* The case: runs at 1 ms per call, the hinted one at 3 ms. */
static void harmful_set_is_withdrawn(void **st) {
  (void)st;
  clear();
  int64_t prev = set("{\"romio_cb_write\": \"enable\"}", "live", 0, 1);
  int64_t bad = set("{\"cb_nodes\": \"1\", \"cb_buffer_size\": \"4096\", \"romio_cb_write\": \"enable\"}", "live", prev, 0);
  assert_int_equal(served(), bad);
  run("plain-1", 0, 1e6, 0.2);
  run("plain-2", 0, 1e6, 0.2);
  run("hinted-1", bad, 3e6, 0.2);
  analyze("hinted-1");
  assert_int_equal(num("(status = 'withdrawn')::int", bad), 1);
  assert_int_equal(num("(outcome->>'verdict' = 'slower')::int", bad), 1);
  double sp = num("(outcome->>'speedup')::float8", bad), hi = num("(outcome->>'ci_high')::float8", bad);
  assert_true(sp > 0.25 && sp < 0.45 && hi < 1);
  assert_int_equal(num("(outcome->>'runs_with')::int", bad), 1);
  assert_int_equal(num("(outcome->>'runs_without')::int", bad), 2);
  assert_int_equal(num("(outcome->>'calls_with')::int", bad), NPROC * CALLS);
  /* later opens get the previous set; the evidence stays */
  assert_int_equal(num("superseded::int", prev), 0);
  assert_int_equal(served(), prev);
  assert_int_equal(kbdb_num(&db, "SELECT count(*) FROM kb_findings WHERE job = 'hinted-1' AND kind = 'hint_set_withdrawn'"), 1);
  assert_int_equal(kbdb_num(&db, "SELECT count(*) FROM kb_hint_sets"), 2);
}

/* A slower figure within the noise of the runs is not withdrawn. */
static void noise_is_not_withdrawn(void **st) {
  (void)st;
  clear();
  int64_t s = set("{\"romio_cb_write\": \"enable\"}", "live", 0, 0);
  run("plain-1", 0, 1e6, 0.9);
  run("plain-2", 0, 1.6e6, 0.9);
  run("plain-3", 0, 0.7e6, 0.9);
  run("hinted-1", s, 1.1e6, 0.9);
  run("hinted-2", s, 1.4e6, 0.9);
  analyze("hinted-2");
  assert_int_equal(num("(status = 'live')::int", s), 1);
  assert_int_equal(num("(outcome->>'verdict' = 'no_change')::int", s), 1);
  assert_int_equal(num("(outcome->>'runs_with')::int", s), 2);
  assert_true(num("(outcome->>'ci_low')::float8", s) < 1 && num("(outcome->>'ci_high')::float8", s) > 1);
  assert_int_equal(served(), s);
}

/* Nothing to compare with: "not measured", still served. */
static void no_plain_runs_is_not_measured(void **st) {
  (void)st;
  clear();
  int64_t s = set("{\"romio_cb_write\": \"enable\"}", "live", 0, 0);
  run("hinted-1", s, 1e6, 0.1);
  analyze("hinted-1");
  assert_int_equal(num("(outcome->>'verdict' = 'not_measured')::int", s), 1);
  assert_true(isnan(num("(outcome->>'speedup')::float8", s)));
  assert_int_equal(served(), s);
  /* a plain run later makes the comparison */
  run("plain-1", 0, 0.5e6, 0.1);
  analyze("plain-1");
  assert_int_equal(num("(outcome->>'verdict' = 'slower')::int", s), 1);
  assert_int_equal(num("(status = 'withdrawn')::int", s), 1);
  assert_int_equal(served(), 0);
}

/* An experiment is judged on its one run: live when faster, withdrawn
 * when no gain is measured. */
static void experiments(void **st) {
  (void)st;
  clear();
  int64_t e = set("{\"romio_cb_write\": \"enable\"}", "experiment", 0, 0);
  run("plain-1", 0, 2e6, 0.1);
  run("plain-2", 0, 2e6, 0.1);
  run("exp-1", e, 1e6, 0.1);
  analyze("exp-1");
  assert_int_equal(num("(status = 'live')::int", e), 1);
  assert_int_equal(num("(outcome->>'verdict' = 'faster')::int", e), 1);
  clear();
  e = set("{\"romio_cb_write\": \"disable\"}", "experiment", 0, 0);
  run("plain-1", 0, 2e6, 0.3);
  run("plain-2", 0, 2e6, 0.3);
  run("exp-1", e, 2e6, 0.3);
  analyze("exp-1");
  assert_int_equal(num("(status = 'withdrawn')::int", e), 1);
  assert_int_equal(num("(outcome->>'verdict' = 'no_change')::int", e), 1);
  assert_int_equal(served(), 0);
}

/* An experiment is tried on one run: the first run that asks gets it, on
 * every open; other runs, and processes without a job id, get the live set
 * it superseded (or none), until the experiment is judged live. */
static void experiment_goes_to_one_run(void **st) {
  (void)st;
  clear();
  int64_t prev = set("{\"cb_nodes\": \"2\"}", "live", 0, 1);
  int64_t e = set("{\"romio_cb_write\": \"enable\"}", "experiment", prev, 0);
  assert_int_equal(served_to("1000:exp-1"), e);
  assert_int_equal(served_to("1000:exp-1"), e); /* its other ranks */
  assert_int_equal(served_to("1000:exp-2"), prev);
  assert_int_equal(served_to("1001:exp-1"), prev); /* same job id, another user */
  assert_int_equal(served_to(""), prev);
  kbdb_exec(&db, "UPDATE kb_hint_sets SET status = 'withdrawn' WHERE hint_set_id = %lld", (long long)prev);
  assert_int_equal(served_to("1000:exp-2"), 0);
  kbdb_exec(&db, "UPDATE kb_hint_sets SET status = 'live' WHERE hint_set_id = %lld", (long long)e);
  assert_int_equal(served_to("1000:exp-2"), e);
}

/* A run that claimed an experiment and never ended (or was never analysed)
 * holds it for a day, then the next run that asks gets it. */
static void experiment_claim_lapses(void **st) {
  (void)st;
  clear();
  int64_t prev = set("{\"cb_nodes\": \"2\"}", "live", 0, 1);
  int64_t e = set("{\"romio_cb_write\": \"enable\"}", "experiment", prev, 0);
  assert_int_equal(served_to("1000:stuck"), e);
  kbdb_exec(&db, "UPDATE kb_hint_sets SET experiment_claimed_at = now() - interval '23 hours' WHERE hint_set_id = %lld",
            (long long)e);
  assert_int_equal(served_to("1000:next"), prev); /* still held */
  kbdb_exec(&db, "UPDATE kb_hint_sets SET experiment_claimed_at = now() - interval '25 hours' WHERE hint_set_id = %lld",
            (long long)e);
  assert_int_equal(served_to("1000:next"), e); /* lapsed: claimed anew */
  assert_int_equal(served_to("1000:next"), e);
  assert_int_equal(served_to("1000:stuck"), prev); /* the old claim is gone */
}

static int setup(void **state) {
  (void)state;
  if (kbdb_start(&db, 2, (char *[]){"x", getenv("SIOX_TEST_SERVER"), NULL}) != 0) return -1;
  mpiio = kbdb_node(&db, "h0", "MPI-IO");
  t_open = kbdb_type(&db, mpiio, "MPI_File_open");
  t_coll = kbdb_type(&db, mpiio, "MPI_File_write_all");
  return 0;
}

static int teardown(void **state) {
  (void)state;
  kbdb_stop(&db);
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s SIOX_SERVER\n", argv[0]);
    return 2;
  }
  setenv("SIOX_TEST_SERVER", argv[1], 1);
  const struct CMUnitTest tests[] = {cmocka_unit_test(harmful_set_is_withdrawn), cmocka_unit_test(noise_is_not_withdrawn),
                                     cmocka_unit_test(no_plain_runs_is_not_measured), cmocka_unit_test(experiments),
                                     cmocka_unit_test(experiment_goes_to_one_run), cmocka_unit_test(experiment_claim_lapses)};
  return cmocka_run_group_tests_name("kb_hint_outcome", tests, setup, teardown);
}
