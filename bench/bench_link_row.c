/*
 * What a link row costs PostgreSQL (issue 15 §1): the in-memory matcher's
 * link statement, sent as match_memory.c sends it (the savepoint and the
 * setting, then a binary COPY of a batch's 1000 links, one round trip per
 * batch, one transaction per batch), into causal_links and into copies of
 * it that each lack one part of a link's cost. The warehouse is a real
 * siox-server's embedded one (all migrations applied); nothing else runs.
 * Each round runs every variant once, interleaved, on an emptied table.
 *   link_row_cpu_us_V      backend CPU per link (user + system, from
 *                          log_statement_stats of the link statements
 *                          only), median over rounds [95 % interval]
 *   link_row_cpu_ratio_V   V / causal_links per round (paired), median
 *                          [95 % interval]
 *   link_row_wall_us_V     the statements' round trips per link, median
 * Variants: full (causal_links), clone (LIKE ... INCLUDING ALL and the
 * schema-035 insert trigger: the copies' baseline), no_capture (the clone
 * without the trigger: no transition table), link_id (the clone with
 * schema 011's link_id, a bigserial and its btree, which schema 037
 * dropped: the row before it; compare it with clone), link_id_brin (a BRIN
 * in place of that btree), heap_only (no index at all), chunk56 (causal_links, the links in
 * COPYs of 56 rows in the same round trip), unnest (causal_links, INSERT
 * ... SELECT FROM unnest() of binary arrays; the head in a round trip of
 * its own, not counted), unnest_pipeline (the head, that INSERT and the
 * setting's reset as one libpq pipeline: one round trip, all counted),
 * single (causal_links, the COPY with match_memory.c's volatile WHERE,
 * which makes PostgreSQL insert row by row instead of buffering 1000
 * rows: a tuple slot per buffered row, each pinning the table's
 * descriptor in the statement's resource owner, whose hashed array is
 * quadratic in equal pins). The s_ variants are inserted row by row as
 * single is, and print link_row_cpu_ratio_vs_single_V too: s_clone (the
 * clone), s_nodedup (the clone's btrees without deduplication), s_hash_child
 * (a hash index on child_aid in place of the btree), s_no_check (no CHECK
 * constraints), s_nonunique (a plain btree in place of the primary key),
 * s_pk_only (no child_aid index: what one btree costs), s_child_pk (the
 * primary key as (child_aid, parent_aid) and a btree on parent_aid),
 * s_shuffled (causal_links, each batch's links in a scrambled order
 * instead of ascending), s_no_capture (no trigger: no transition table),
 * s_senders (causal_links, the children ascending as a receiver's batch
 * brings them, their parents from 8 sender processes in turn, each
 * ascending), s_senders_sorted (those links sorted by (parent_aid,
 * child_aid)), s_no_flags (causal_links, the COPY without the flags
 * column: its default '').
 * With BENCH_LINK_ROW_ONLY=V[,V...] in the environment only those
 * variants run and only their link_row_cpu_us_V are printed, and with
 * single among them the s_ variants' ratios to it (for perf and for more
 * rounds of a few).
 * Usage: bench_link_row SIOX_SERVER [rounds]
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "median_ci.h"
#include "server_harness.h"

#define LINKS 1000
#define BATCHES 40
#define MAX_ROUNDS 31
#define HEAD "SAVEPOINT s; SET LOCAL siox.links_counted = on; UPDATE match_state SET unmatched = unmatched + 0;"
#define COLS " (parent_aid, child_aid, confidence, overlap_bytes, flags)"
#define COLS4 " (parent_aid, child_aid, confidence, overlap_bytes)" /* flags: its default */
#define SINGLE_WHERE " WHERE random() >= 0" /* as match_memory.c's LINK_COPY */

enum shape { COPY_ONE, COPY_56, UNNEST, PIPELINE, COPY_SINGLE, COPY_SHUFFLED, COPY_SENDERS, COPY_SENDERS_SORTED, COPY_NO_FLAGS };
static const struct variant {
  const char *name, *table;
  enum shape shape;
} variants[] = {
    {"full", "causal_links", COPY_ONE},        {"clone", "v_clone", COPY_ONE},
    {"no_capture", "v_nocap", COPY_ONE},       {"link_id", "v_linkid", COPY_ONE},
    {"link_id_brin", "v_brin", COPY_ONE},
    {"heap_only", "v_heap", COPY_ONE},         {"chunk56", "causal_links", COPY_56},
    {"unnest", "causal_links", UNNEST},        {"unnest_pipeline", "causal_links", PIPELINE},
    {"single", "causal_links", COPY_SINGLE},
    {"s_clone", "v_clone", COPY_SINGLE},       {"s_nodedup", "v_nodedup", COPY_SINGLE},
    {"s_hash_child", "v_hash", COPY_SINGLE},   {"s_no_check", "v_nocheck", COPY_SINGLE},
    {"s_nonunique", "v_nonuniq", COPY_SINGLE}, {"s_pk_only", "v_pkonly", COPY_SINGLE},
    {"s_child_pk", "v_childpk", COPY_SINGLE},  {"s_shuffled", "causal_links", COPY_SHUFFLED},
    {"s_no_capture", "v_nocap", COPY_SINGLE},
    {"s_senders", "causal_links", COPY_SENDERS},
    {"s_senders_sorted", "causal_links", COPY_SENDERS_SORTED},
    {"s_no_flags", "causal_links", COPY_NO_FLAGS},
};
#define NV (sizeof variants / sizeof *variants)
#define SINGLE 9 /* variants[SINGLE] is "single": the row-by-row variants' baseline */

/* causal_links' insert trigger (schema 035) on a copy */
#define CLONE_TRIGGER(T)                                                                                \
  "CREATE TRIGGER t AFTER INSERT ON " T " REFERENCING NEW TABLE AS cl_new FOR EACH STATEMENT"             \
  " WHEN (current_setting('siox.links_counted', true) IS DISTINCT FROM 'on') EXECUTE FUNCTION siox_link_unmatched();"
static const char setup_sql[] =
    "CREATE TABLE v_clone (LIKE causal_links INCLUDING ALL);" CLONE_TRIGGER("v_clone")
    "CREATE TABLE v_nocap (LIKE causal_links INCLUDING ALL);"
    "CREATE TABLE v_linkid (LIKE causal_links INCLUDING ALL); ALTER TABLE v_linkid ADD COLUMN link_id bigserial;"
    " CREATE INDEX ON v_linkid (link_id);" CLONE_TRIGGER("v_linkid")
    "CREATE TABLE v_brin (LIKE causal_links INCLUDING ALL); ALTER TABLE v_brin ADD COLUMN link_id bigserial;"
    " CREATE INDEX ON v_brin USING brin (link_id);" CLONE_TRIGGER("v_brin")
    "CREATE TABLE v_heap (LIKE causal_links INCLUDING DEFAULTS INCLUDING CONSTRAINTS);"
    "CREATE TABLE v_nodedup (LIKE causal_links INCLUDING ALL);" CLONE_TRIGGER("v_nodedup")
    " ALTER INDEX v_nodedup_pkey SET (deduplicate_items = off);"
    " ALTER INDEX v_nodedup_child_aid_idx SET (deduplicate_items = off);"
    "CREATE TABLE v_hash (LIKE causal_links INCLUDING DEFAULTS INCLUDING CONSTRAINTS, PRIMARY KEY (parent_aid, child_aid));"
    " CREATE INDEX ON v_hash USING hash (child_aid);" CLONE_TRIGGER("v_hash")
    "CREATE TABLE v_nocheck (LIKE causal_links INCLUDING DEFAULTS INCLUDING INDEXES);" CLONE_TRIGGER("v_nocheck")
    "CREATE TABLE v_nonuniq (LIKE causal_links INCLUDING DEFAULTS INCLUDING CONSTRAINTS);"
    " CREATE INDEX ON v_nonuniq (parent_aid, child_aid); CREATE INDEX ON v_nonuniq (child_aid);" CLONE_TRIGGER("v_nonuniq")
    "CREATE TABLE v_pkonly (LIKE causal_links INCLUDING DEFAULTS INCLUDING CONSTRAINTS, PRIMARY KEY (parent_aid, child_aid));"
    CLONE_TRIGGER("v_pkonly")
    "CREATE TABLE v_childpk (LIKE causal_links INCLUDING DEFAULTS INCLUDING CONSTRAINTS, PRIMARY KEY (child_aid, parent_aid));"
    " CREATE INDEX ON v_childpk (parent_aid);" CLONE_TRIGGER("v_childpk")
    "SET client_min_messages = log";

/* ---- the backend's CPU, from log_statement_stats notices ---------------------- */

static double cpu_s;
static int grab;

static void on_notice(void *arg, const PGresult *r) {
  (void)arg;
  const char *m = grab ? PQresultErrorField(r, PG_DIAG_MESSAGE_DETAIL) : NULL;
  const char *p = m ? strstr(m, "!\t") : NULL;
  double u, s;
  if (p && sscanf(p, "!\t%lf s user, %lf s system", &u, &s) == 2) cpu_s += u + s;
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ---- binary data -------------------------------------------------------------- */

struct buf {
  uint8_t p[1 << 17];
  size_t len;
};

static void put(struct buf *b, const void *p, size_t n) { memcpy(b->p + b->len, p, n), b->len += n; }
static void p16(struct buf *b, uint16_t v) { v = htons(v), put(b, &v, 2); }
static void p32(struct buf *b, uint32_t v) { v = htonl(v), put(b, &v, 4); }
static void p64(struct buf *b, uint64_t v) { p32(b, (uint32_t)(v >> 32)), p32(b, (uint32_t)v); }
static void copy_header(struct buf *b) { put(b, "PGCOPY\n\377\r\n\0", 11), p32(b, 0), p32(b, 0); }
static uint32_t half(void) {
  float f = 0.5f;
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}

/* Batch k's links as COPY streams of at most per rows; off[i] is where
 * stream i starts, off[n] the end. Returns n. */
/* Link t of batch k's in the order of shape: parent and child aid. */
#define SENDERS 8
static void link_at(int k, int t, enum shape shape, uint64_t *parent, uint64_t *child) {
  int j = shape == COPY_SHUFFLED ? t * 619 % LINKS /* 619: prime to LINKS */
          : shape == COPY_SENDERS_SORTED ? t % (LINKS / SENDERS) * SENDERS + t / (LINKS / SENDERS)
                                         : t;
  uint64_t i = (uint64_t)k * LINKS + (uint64_t)j + 1;
  *child = (200ull << 32) + i, *parent = (100ull << 32) + i;
  if (shape == COPY_SENDERS || shape == COPY_SENDERS_SORTED)
    *parent = ((100ull + (uint64_t)(j % SENDERS)) << 32) + (uint64_t)k * (LINKS / SENDERS) + (uint64_t)(j / SENDERS) + 1;
}

static size_t copy_rows(struct buf *b, int k, int per, enum shape shape, size_t *off) {
  size_t n = 0;
  b->len = 0, off[0] = 0, copy_header(b);
  for (int j = 0; j < LINKS; j++) {
    if (j && j % per == 0) p16(b, 0xffff), off[++n] = b->len, copy_header(b);
    uint64_t pa, ch;
    link_at(k, j, shape, &pa, &ch);
    p16(b, shape == COPY_NO_FLAGS ? 4 : 5), p32(b, 8), p64(b, pa), p32(b, 8), p64(b, ch);
    p32(b, 4), p32(b, half()), p32(b, 8), p64(b, 131072);
    if (shape != COPY_NO_FLAGS) p32(b, 0);
  }
  p16(b, 0xffff), off[++n] = b->len;
  return n;
}

/* Column a of batch k's links as a binary one-dimensional array. */
static void array_col(struct buf *b, int k, int a) {
  static const uint32_t oid[5] = {20, 20, 700, 20, 25};
  b->len = 0, p32(b, 1), p32(b, 0), p32(b, oid[a]), p32(b, LINKS), p32(b, 1);
  for (int j = 0; j < LINKS; j++) {
    uint64_t i = (uint64_t)k * LINKS + (uint64_t)j + 1;
    if (a < 2) p32(b, 8), p64(b, ((a ? 200ull : 100ull) << 32) + i);
    else if (a == 2) p32(b, 4), p32(b, half());
    else if (a == 3) p32(b, 8), p64(b, 131072);
    else p32(b, 0);
  }
}

/* ---- one variant ---------------------------------------------------------------- */

static int ok_cmd(PGresult *r) {
  int ok = PQresultStatus(r) == PGRES_COMMAND_OK || PQresultStatus(r) == PGRES_TUPLES_OK;
  if (!ok) fprintf(stderr, "bench: %s", PQresultErrorMessage(r));
  PQclear(r);
  return ok;
}

/* The copy statement(s) of one batch, in one round trip. */
static int send_copies(PGconn *c, const char *table, struct buf *b, int k, int per, enum shape shape, const char *where) {
  size_t off[LINKS + 1], n = copy_rows(b, k, per, shape, off), i = 0;
  char sql[16384];
  int len = snprintf(sql, sizeof sql, HEAD);
  for (size_t s = 0; s < n; s++)
    len += snprintf(sql + len, sizeof sql - (size_t)len, " COPY %s%s FROM STDIN (FORMAT binary)%s;", table,
                    shape == COPY_NO_FLAGS ? COLS4 : COLS, where);
  snprintf(sql + len, sizeof sql - (size_t)len, " SET LOCAL siox.links_counted = off");
  int ok = 1;
  for (PGresult *r = PQexec(c, sql); r; r = PQgetResult(c)) {
    if (PQresultStatus(r) == PGRES_COPY_IN && i < n) {
      ok = PQputCopyData(c, (const char *)b->p + off[i], (int)(off[i + 1] - off[i])) == 1 && ok;
      ok = PQputCopyEnd(c, NULL) == 1 && ok, i++;
      PQclear(r);
    } else ok = ok_cmd(r) && ok;
  }
  return ok && i == n ? 0 : -1;
}

static int send_unnest(PGconn *c, const char *table, int k, int pipeline) {
  static struct buf col[5];
  const char *v[5];
  int len[5], fmt[5] = {1, 1, 1, 1, 1};
  for (int a = 0; a < 5; a++) array_col(&col[a], k, a), v[a] = (const char *)col[a].p, len[a] = (int)col[a].len;
  char sql[256];
  snprintf(sql, sizeof sql,
           "INSERT INTO %s" COLS " SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::real[], $4::bigint[], $5::text[])",
           table);
  if (!pipeline) return ok_cmd(PQexecParams(c, sql, 5, NULL, v, len, fmt, 0)) ? 0 : -1;
  /* Each statement of the head on its own (a pipeline takes no multi-statement
   * string), then the INSERT and the reset, one sync: one round trip. */
  static const char *const stmt[] = {"SAVEPOINT s", "SET LOCAL siox.links_counted = on",
                                     "UPDATE match_state SET unmatched = unmatched + 0", NULL,
                                     "SET LOCAL siox.links_counted = off"};
  int ok = PQenterPipelineMode(c) == 1;
  for (int i = 0; ok && i < 5; i++)
    ok = stmt[i] ? PQsendQueryParams(c, stmt[i], 0, NULL, NULL, NULL, NULL, 0) == 1
                 : PQsendQueryParams(c, sql, 5, NULL, v, len, fmt, 0) == 1;
  ok = ok && PQpipelineSync(c) == 1;
  for (int i = 0; ok && i < 5; i++) {
    ok = ok_cmd(PQgetResult(c));
    PGresult *end = PQgetResult(c); /* NULL after each statement's result */
    ok = ok && !end;
    PQclear(end);
  }
  PGresult *sync = ok ? PQgetResult(c) : NULL;
  ok = ok && PQresultStatus(sync) == PGRES_PIPELINE_SYNC;
  PQclear(sync);
  return ok && PQexitPipelineMode(c) == 1 ? 0 : -1;
}

/* One run of a variant: BATCHES transactions. Fills CPU and wall seconds. */
static int run(PGconn *c, const struct variant *v, double *cpu, double *wall) {
  static struct buf b;
  char sql[128];
  snprintf(sql, sizeof sql, "TRUNCATE %s; CHECKPOINT", v->table);
  if (!ok_cmd(PQexec(c, sql))) return -1;
  cpu_s = 0, *wall = 0;
  for (int k = 0; k < BATCHES; k++) {
    int rc = ok_cmd(PQexec(c, "BEGIN")) ? 0 : -1;
    if (rc == 0 && v->shape == UNNEST) rc = ok_cmd(PQexec(c, HEAD)) ? 0 : -1;
    if (rc == 0) rc = ok_cmd(PQexec(c, "SET log_statement_stats = on")) ? 0 : -1;
    double t0 = now_s();
    grab = 1;
    if (rc == 0)
      rc = v->shape == UNNEST || v->shape == PIPELINE ? send_unnest(c, v->table, k, v->shape == PIPELINE)
                                                      : send_copies(c, v->table, &b, k, v->shape == COPY_56 ? 56 : LINKS,
                                                                    v->shape,
                                                                    v->shape >= COPY_SINGLE ? SINGLE_WHERE : "");
    grab = 0;
    *wall += now_s() - t0;
    if (rc == 0) rc = ok_cmd(PQexec(c, "RESET log_statement_stats")) ? 0 : -1;
    if (rc == 0 && v->shape == UNNEST) rc = ok_cmd(PQexec(c, "SET LOCAL siox.links_counted = off")) ? 0 : -1;
    if (rc || !ok_cmd(PQexec(c, "COMMIT"))) return -1;
  }
  *cpu = cpu_s;
  return 0;
}

static void print(const char *what, const char *name, double *v, int n, double scale, const char *unit) {
  struct median_ci e = median_ci(v, n);
  printf("link_row_%s_%s %.3f %s [%.3f, %.3f]\n", what, name, e.median * scale, unit, e.lo * scale, e.hi * scale);
}

/* Whether variant name is in the comma-separated list only (NULL: all). */
static int chosen(const char *only, const char *name) {
  if (!only) return 1;
  size_t n = strlen(name);
  for (const char *p = only; (p = strstr(p, name)); p += n)
    if ((p == only || p[-1] == ',') && (p[n] == ',' || !p[n])) return 1;
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 2) return fprintf(stderr, "usage: %s SIOX_SERVER [rounds]\n", argv[0]), 2;
  int rounds = argc > 2 ? atoi(argv[2]) : 9;
  if (rounds < 1 || rounds > MAX_ROUNDS) return fprintf(stderr, "bench: rounds 1..%d\n", MAX_ROUNDS), 2;
  struct harness h;
  const char *const args[] = {NULL};
  if (harness_init(&h, argv[1]) != 0 || harness_start(&h, args) != 0) return harness_cleanup(&h), 1;
  PGconn *c = harness_db(&h);
  int rc = c && ok_cmd(PQexec(c, setup_sql)) ? 0 : 1;
  if (c) PQsetNoticeReceiver(c, on_notice, NULL);
  static double cpu[NV][MAX_ROUNDS], wall[NV][MAX_ROUNDS], ratio[NV][MAX_ROUNDS];
  const char *only = getenv("BENCH_LINK_ROW_ONLY"); /* one variant, for profiling: no ratios */
  for (int r = 0; rc == 0 && r < rounds; r++)
    for (size_t i = 0; rc == 0 && i < NV; i++) {
      size_t v = r % 2 ? NV - 1 - i : i; /* each order half the rounds */
      if (!chosen(only, variants[v].name)) continue;
      rc = run(c, &variants[v], &cpu[v][r], &wall[v][r]) ? 1 : 0;
    }
  static double vs_single[NV][MAX_ROUNDS];
  for (size_t v = 0; v < NV; v++) /* before print() sorts cpu[0] */
    for (int r = 0; r < rounds; r++) ratio[v][r] = cpu[v][r] / cpu[0][r], vs_single[v][r] = cpu[v][r] / cpu[SINGLE][r];
  for (size_t v = 0; rc == 0 && v < NV; v++) {
    if (!chosen(only, variants[v].name)) continue;
    print("cpu_us", variants[v].name, cpu[v], rounds, 1e6 / (BATCHES * LINKS), "us");
    if (!only) print("cpu_ratio", variants[v].name, ratio[v], rounds, 1, "x");
    if (!only) print("wall_us", variants[v].name, wall[v], rounds, 1e6 / (BATCHES * LINKS), "us");
    if (variants[v].shape >= COPY_SINGLE && v != SINGLE && chosen(only, "single"))
      print("cpu_ratio_vs_single", variants[v].name, vs_single[v], rounds, 1, "x");
  }
  if (rc) fprintf(stderr, "bench: failed\n");
  if (c) PQfinish(c);
  harness_stop(&h);
  harness_cleanup(&h);
  return rc;
}
