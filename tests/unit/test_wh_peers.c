/*
 * siox_wh_peers (warehouse/src/wh_peers.c), blame's peer samples (issue
 * 10, blame latency): read ring by ring around the suspect, they must be
 * exactly the samples one read of the whole window gives (the statement
 * blame ran before), in the same order: the nearest `limit` by distance,
 * then aid; other nodes and the suspect's own; server-side processes and
 * the call's job, not another job; names of the nodes. Checked on a real
 * siox-server's warehouse for limits met in the first ring, in a later
 * one, and never (fewer samples than the limit), with ties in distance, a
 * window that reaches farther on one side, and that a limit met near the
 * suspect reads only the inner ring (the ring's bound in libpq's trace).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <siox/siox_wh.h>

#include "test_kb_baseline_db.h"

#define T0 1700000000000000000LL
#define MS 1000000LL

static struct kbdb db;
static int argc_;
static char **argv_;
static int64_t call_aid; /* an activity of job A's process */
static int job_b;        /* the other job's process */

/* One read of the whole window, as blame read its peers before the rings. */
static const char whole_sql[] =
    "SELECT a.aid, a.node_id, a.end_ns - a.start_ns,"
    "       coalesce(a.attr_vals[array_position(a.attr_ids, (SELECT id FROM ontology WHERE name = 'io/bytes'))], -1)"
    "  FROM activities a LEFT JOIN processes p ON p.proc_id = a.proc_id"
    " WHERE a.type_id = ANY (ARRAY(SELECT ty.type_id FROM activity_types ty JOIN nodes tn ON tn.node_id = ty.node_id"
    "                              WHERE tn.swid = $1 AND ty.name = $2))"
    "   AND (coalesce(p.job, '') = ''"
    "        OR (p.job = $3 AND p.uid = (SELECT uid FROM processes WHERE proc_id = ($8::bigint >> 32))))"
    "   AND a.start_ns BETWEEN $4::bigint AND $5::bigint"
    " ORDER BY abs(a.start_ns - $6::bigint), a.aid LIMIT $7::bigint";

/* Three bricks serving every job, dense, less dense and sparse; a client
 * node with job A's and job B's processes; two samples at the same
 * distance on either side of the suspect and two starting together. */
static int setup(void **state) {
  (void)state;
  if (kbdb_start(&db, argc_, argv_) != 0) return -1;
  const char *bricks[] = {"b1", "b2", "b3"};
  int type[3];
  for (int i = 0; i < 3; i++) type[i] = kbdb_type(&db, kbdb_node(&db, bricks[i], "GlusterFS-brick"), "WRITEV");
  int node[3];
  for (int i = 0; i < 3; i++) node[i] = (int)kbdb_num(&db, "SELECT node_id FROM activity_types WHERE type_id = %d", type[i]);
  int srv[3];
  for (int i = 0; i < 3; i++) srv[i] = kbdb_proc(&db, bricks[i], "");
  kbdb_acts(&db, srv[0], node[0], type[0], 400, T0, 1 * MS, 2 * MS, 65536);
  kbdb_acts(&db, srv[1], node[1], type[1], 300, T0 + MS / 2, 13 * MS / 10, 3 * MS, 131072);
  kbdb_acts(&db, srv[2], node[2], type[2], 50, T0, 20 * MS, 4 * MS, -1);
  /* The same distance from the suspect (T0 + 200 ms), either side; two
   * starting at the same time. */
  kbdb_acts(&db, srv[2], node[2], type[2], 1, T0 + 200 * MS + 7 * MS / 10, 0, MS, 4096);
  kbdb_acts(&db, srv[1], node[1], type[1], 1, T0 + 200 * MS - 7 * MS / 10, 0, MS, 4096);
  kbdb_acts(&db, srv[0], node[0], type[0], 2, T0 + 450 * MS + 3, 0, MS, 4096);
  int client = kbdb_type(&db, kbdb_node(&db, "c1", "GlusterFS-brick"), "WRITEV");
  int cnode = (int)kbdb_num(&db, "SELECT node_id FROM activity_types WHERE type_id = %d", client);
  int job_a = kbdb_proc(&db, "c1", "A");
  job_b = kbdb_proc(&db, "c1", "B");
  call_aid = kbdb_acts(&db, job_a, cnode, client, 100, T0 + MS / 3, 2 * MS, MS, 8192);
  kbdb_acts(&db, job_b, cnode, client, 100, T0 + MS / 4, 2 * MS, MS, 8192);
  kbdb_exec(&db, "ANALYZE activities");
  return 0;
}

static int teardown(void **state) {
  (void)state;
  kbdb_stop(&db);
  return 0;
}

/* The whole window's nearest `limit` samples (aid, node, ns, bytes), in
 * order, into *rows. */
static size_t whole(const struct siox_peer_query *q, int64_t (**rows)[4]) {
  char p[8][32];
  snprintf(p[0], 32, "%s", q->swid);
  snprintf(p[1], 32, "%s", q->name);
  snprintf(p[2], 32, "%s", q->job);
  snprintf(p[3], 32, "%lld", (long long)q->from_ns);
  snprintf(p[4], 32, "%lld", (long long)q->to_ns);
  snprintf(p[5], 32, "%lld", (long long)q->mid_ns);
  snprintf(p[6], 32, "%ld", q->limit);
  snprintf(p[7], 32, "%lld", (long long)q->call_aid);
  const char *params[8];
  for (int i = 0; i < 8; i++) params[i] = p[i];
  PGresult *r = PQexecParams(db.c, whole_sql, 8, NULL, params, NULL, NULL, 0);
  assert_int_equal(PQresultStatus(r), PGRES_TUPLES_OK);
  size_t n = (size_t)PQntuples(r);
  *rows = calloc(n + 1, sizeof(**rows));
  assert_non_null(*rows);
  for (size_t i = 0; i < n; i++)
    for (int k = 0; k < 4; k++) (*rows)[i][k] = strtoll(PQgetvalue(r, (int)i, k), NULL, 10);
  PQclear(r);
  return n;
}

/* siox_wh_peers equals the whole window's read, aid by aid, each sample
 * named after its node. Returns how many samples. */
static size_t check(int64_t from_ns, int64_t to_ns, int64_t mid_ns, long limit) {
  struct siox_peer_query q = {.swid = "GlusterFS-brick", .name = "WRITEV", .job = "A", .call_aid = call_aid,
                              .from_ns = from_ns, .to_ns = to_ns, .limit = limit, .mid_ns = mid_ns};
  struct siox_peer_set s;
  char err[512] = "";
  if (siox_wh_peers(db.c, &q, &s, err, sizeof err) != 0) fail_msg("siox_wh_peers: %s", err);
  int64_t(*want)[4];
  size_t n = whole(&q, &want);
  if (s.n != n) fail_msg("limit %ld: %zu samples, the whole window gives %zu", limit, s.n, n);
  for (size_t i = 0; i < n; i++) {
    if (s.s[i].aid != want[i][0])
      fail_msg("limit %ld: sample %zu is aid %lld, the whole window's is %lld", limit, i, (long long)s.s[i].aid,
               (long long)want[i][0]);
    /* Read in binary: the numbers as the server has them (bytes -1: none). */
    assert_int_equal(s.s[i].node_id, want[i][1]);
    assert_int_equal(s.s[i].ns, want[i][2]);
    assert_int_equal(s.s[i].bytes, want[i][3]);
    if (s.s[i].aid >> 32 == job_b) fail_msg("limit %ld: sample %zu is job B's", limit, i);
    if (i < 20)
      assert_int_equal((int)kbdb_num(&db, "SELECT count(*) FROM nodes WHERE node_id = %d AND hwid = '%s'",
                                     s.s[i].node_id, s.s[i].hwid),
                       1);
  }
  free(want);
  siox_wh_peers_free(&s);
  return n;
}

static void same_as_one_read(void **state) {
  (void)state;
  int64_t from = T0 - 100 * MS, to = T0 + 900 * MS, mid = T0 + 200 * MS;
  /* Met in the first ring (reach 700 ms: 175 ms), in a later one, at the
   * ties, and never (every sample of the window: fewer than the limit). */
  long limits[] = {1, 2, 3, 10, 100, 400, 600, 700, 800, 900, 20000};
  size_t all = 0;
  for (size_t i = 0; i < sizeof limits / sizeof *limits; i++) all = check(from, to, mid, limits[i]);
  /* The last limit is never met: every sample of the window was read. */
  assert_true(all > 800 && all < 20000);
  /* The suspect at the window's edge, and a window reaching one side only. */
  assert_int_equal(check(T0, T0 + 500 * MS, T0, 20000) > 0, 1);
  check(T0, T0 + 500 * MS, T0 + 500 * MS, 300);
  check(T0 + 450 * MS, T0 + 450 * MS, T0 + 450 * MS, 20000);
}

/* Bind messages in a protocol trace that carry the parameter text. */
static int binds_with(FILE *trace, const char *param) {
  char line[8192];
  int n = 0;
  rewind(trace);
  while (fgets(line, sizeof line, trace))
    if (strncmp(line, "F", 1) == 0 && strstr(line, "Bind") && strstr(line, param)) n++;
  return n;
}

static void near_limit_reads_the_inner_ring(void **state) {
  (void)state;
  struct siox_peer_query q = {.swid = "GlusterFS-brick", .name = "WRITEV", .job = "A", .call_aid = call_aid,
                              .from_ns = T0 - 100 * MS, .to_ns = T0 + 900 * MS, .limit = 50, .mid_ns = T0 + 200 * MS};
  struct siox_peer_set s;
  char err[512] = "";
  FILE *trace = tmpfile();
  assert_non_null(trace);
  PQtrace(db.c, trace);
  PQsetTraceFlags(db.c, PQTRACE_SUPPRESS_TIMESTAMPS);
  int rc = siox_wh_peers(db.c, &q, &s, err, sizeof err);
  PQuntrace(db.c);
  if (rc != 0) fail_msg("siox_wh_peers: %s", err);
  assert_int_equal(s.n, 50);
  siox_wh_peers_free(&s);
  /* The reach is 700 ms; the first ring's outer bound is a quarter of it,
   * and no read reaches farther. */
  if (binds_with(trace, "'175000000'") != 1 || binds_with(trace, "'700000000'") != 0)
    fail_msg("a limit met within 175 ms of the suspect read beyond that ring");
  fclose(trace);
}

int main(int argc, char **argv) {
  argc_ = argc;
  argv_ = argv;
  const struct CMUnitTest tests[] = {cmocka_unit_test(same_as_one_read),
                                     cmocka_unit_test(near_limit_reads_the_inner_ring)};
  return cmocka_run_group_tests(tests, setup, teardown);
}
