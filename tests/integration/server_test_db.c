/*
 * Integration test of `siox-server --db CONNINFO` (driven by server_db.sh,
 * which owns the throwaway PostgreSQL): the server migrates the site
 * database, stores a batch, and after a restart on the same database applies
 * no migration again, keeps the data and the daemon's acked_seq, and never
 * starts a cluster of its own. Usage: server_test_db SIOX_SERVER CONNINFO
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "server_harness.h"

#define PER 1000
#define T0 1700000000000000000LL

static int send_batch(const struct harness *h, uint64_t seq) {
  struct siox_block b;
  siox_block_init(&b);
  block_spmd(&b, 31, 7, "site1", 1 + (seq - 1) * PER, PER, T0 + (int64_t)seq * 10000000);
  int rc = cli_send_block(h->port, 11, "site1", NULL, seq, &b);
  siox_block_free(&b);
  return rc;
}

/* Every applied migration with its time stamp, as one string (malloc'd). */
static char *versions(PGconn *c) {
  PGresult *r = PQexec(c, "SELECT string_agg(version || ' ' || name || ' ' || applied_at, ';' ORDER BY version)"
                          " FROM schema_version");
  char *s = strdup(PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1 ? PQgetvalue(r, 0, 0) : "");
  PQclear(r);
  return s;
}

int main(int argc, char **argv) {
  struct harness h;
  if (argc < 3) return fprintf(stderr, "usage: %s SIOX_SERVER CONNINFO\n", argv[0]), 2;
  const char *const args[] = {"--db", argv[2], NULL};
  if (harness_setup(&h, 2, argv, NULL, args) != 0) return 1;
  PGconn *c = harness_db(&h); /* through DIR/conninfo, which must name the site database */
  CHECK(c != NULL, "DIR/conninfo names the --db database");
  if (!c) return harness_finish(&h, "server_db");
  long long nver = harness_scalar(c, "SELECT count(*) FROM schema_version");
  /* Numbers are assigned ahead (a gap is a migration of another branch). */
  CHECK(nver >= 4 && harness_scalar(c, "SELECT min(version) FROM schema_version") == 1 &&
            harness_scalar(c, "SELECT count(DISTINCT version) FROM schema_version") == nver,
        "migrations applied, each once");
  CHECK(harness_log_has(&h, "schema 001_init.sql applied"), "first start migrates");
  CHECK(harness_scalar(c, "SELECT count(*) FROM ontology") > 0, "ontology loaded");
  CHECK(send_batch(&h, 1) == 0, "batch 1 acked");
  CHECK(harness_scalar(c, "SELECT count(*) FROM activities") == PER, "batch 1 stored");
  char *before = versions(c);
  PQfinish(c);

  CHECK(harness_stop(&h) == 0, "clean stop");
  if (truncate(h.log, 0) != 0) perror("truncate");
  CHECK(harness_start(&h, args) == 0, "restart on the same database");
  c = harness_db(&h);
  CHECK(c != NULL, "db after restart");
  char *after = c ? versions(c) : strdup("");
  CHECK(before && after && strcmp(before, after) == 0, "migrations not re-applied: '%s' vs '%s'", before, after);
  CHECK(!harness_log_has(&h, "applied"), "no 'schema ... applied' after the restart");
  int fd = cli_connect(h.port);
  CHECK(cli_hello(fd, 11, "site1", NULL) == 1, "acked_seq survives the restart");
  close(fd);
  CHECK(send_batch(&h, 1) == 0, "resent batch 1 acked");
  CHECK(send_batch(&h, 2) == 0, "batch 2 acked");
  CHECK(c && harness_scalar(c, "SELECT count(*) FROM activities") == 2 * PER, "data intact, nothing twice");
  CHECK(c && harness_scalar(c, "SELECT count(DISTINCT aid) FROM activities") == 2 * PER, "distinct aids");
  struct stat st;
  char pgdir[400];
  snprintf(pgdir, sizeof pgdir, "%s/pg", h.data_dir);
  CHECK(stat(pgdir, &st) != 0, "no embedded cluster with --db");
  free(before), free(after);
  PQfinish(c);
  return harness_finish(&h, "server_db");
}
