/*
 * One warehouse as shard k of a site: schema 023's siox_shard_setup (id
 * ranges, the siox_shard views the coordinator imports), run under the
 * migration lock so that a server starting and a coordinator building
 * take turns.
 */
#include <errno.h>
#include <stdio.h>

#include "siox/siox_wh.h"
#include "wh_pg.h"


int siox_wh_shard_setup(PGconn *c, int k, int n, char *err, size_t errlen) {
  if (k < 1 || n < k || n > SIOX_WH_SHARDS_MAX) {
    snprintf(err, errlen, "shard %d/%d: need 1 <= K <= N <= %d", k, n, SIOX_WH_SHARDS_MAX);
    return -EINVAL;
  }
  PGresult *r = siox_wh_query(c, "taking the migration lock", SIOX_WH_MIGRATE_LOCK, 0, NULL, err, errlen);
  if (!r) return -EIO;
  PQclear(r);
  char ks[16], ns[16];
  snprintf(ks, sizeof ks, "%d", k);
  snprintf(ns, sizeof ns, "%d", n);
  const char *p[] = {ks, ns};
  r = siox_wh_query(c, "making this warehouse a shard", "SELECT siox_shard_setup($1, $2)", 2, p, err, errlen);
  int rc = r ? 0 : -EIO;
  PQclear(r);
  PQclear(PQexec(c, SIOX_WH_MIGRATE_UNLOCK));
  return rc;
}
