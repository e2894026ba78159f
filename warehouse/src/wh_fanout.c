/*
 * One query per shard, for what a coordinator cannot push down through its
 * partitioned tables (issue 15 §2): postgres_fdw ships a LIMIT, and the
 * joins under it, only for a query on one foreign server's tables, never
 * below the Append of a partitioned parent. So a statement that needs the
 * first rows of each shard names each shard's own foreign tables
 * (siox_shard_K.T, wh_coordinator.c) in a UNION ALL branch of its own,
 * and each shard runs the branch whole (joins, WHERE, ORDER BY, LIMIT);
 * on a single warehouse the branch names public's tables, unchanged. The
 * shards are read off the coordinator's schemas, so no list can drift
 * from what its build made.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wh_pg.h"

#define MARK "{S}"

/* Appends branch to out[*len..] with each MARK replaced by prefix. */
static void put_branch(char *out, size_t *len, const char *branch, const char *prefix) {
  const char *p = branch, *m;
  size_t pl = strlen(prefix);
  while ((m = strstr(p, MARK))) {
    memcpy(out + *len, p, (size_t)(m - p));
    *len += (size_t)(m - p);
    memcpy(out + *len, prefix, pl);
    *len += pl;
    p = m + strlen(MARK);
  }
  size_t rest = strlen(p);
  memcpy(out + *len, p, rest + 1);
  *len += rest;
}

static size_t count_marks(const char *s) {
  size_t n = 0;
  for (const char *m = s; (m = strstr(m, MARK)); m += strlen(MARK)) n++;
  return n;
}

char *siox_wh_fanout_or(PGconn *c, const char *one, const char *branch, char *err, size_t errlen) {
  PGresult *r = siox_wh_query(c, "finding the site's shards",
                              "SELECT nspname FROM pg_namespace WHERE nspname ~ '^siox_shard_[0-9]+$'"
                              " ORDER BY substr(nspname, 12)::int",
                              0, NULL, err, errlen);
  if (!r) return NULL;
  int n = PQntuples(r);
  size_t marks = count_marks(branch), cap = strlen(one) + strlen(branch) + 3;
  for (int i = 0; i < n; i++) cap += strlen(branch) + marks * (strlen(PQgetvalue(r, i, 0)) + 1) + 16;
  char *out = malloc(cap);
  if (!out) {
    PQclear(r);
    snprintf(err, errlen, "out of memory");
    return NULL;
  }
  size_t len = 0;
  out[0] = '\0';
  if (n == 0) put_branch(out, &len, one, "");
  for (int i = 0; i < n; i++) {
    char prefix[80];
    snprintf(prefix, sizeof prefix, "%s.", PQgetvalue(r, i, 0));
    if (i) len += (size_t)sprintf(out + len, " UNION ALL ");
    put_branch(out, &len, branch, prefix);
  }
  PQclear(r);
  return out;
}

char *siox_wh_fanout(PGconn *c, const char *branch, char *err, size_t errlen) {
  return siox_wh_fanout_or(c, branch, branch, err, errlen);
}
