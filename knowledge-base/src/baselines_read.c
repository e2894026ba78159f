/*
 * A component's baseline as the front ends draw it (the component page of
 * `siox web`): the median latency of its kb_baselines classes, weighted by
 * their sample counts: one line to hold its latency over time against.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "siox/siox_kb.h"

int siox_kb_node_baseline(PGconn *c, int64_t node_id, double *p50_ns, int64_t *samples, char *err, size_t errcap) {
  char id[24];
  snprintf(id, sizeof(id), "%lld", (long long)node_id);
  const char *params[] = {id};
  PGresult *res = PQexecParams(c,
                               "SELECT coalesce(sum(n * p50_ns) / nullif(sum(n), 0), 0), coalesce(sum(n), 0)"
                               "  FROM kb_baselines WHERE node_id = $1::int",
                               1, NULL, params, NULL, NULL, 0);
  if (PQresultStatus(res) != PGRES_TUPLES_OK) {
    if (err) snprintf(err, errcap, "reading the baseline of node %s: %s", id, PQerrorMessage(c));
    if (err) err[strcspn(err, "\n")] = '\0';
    PQclear(res);
    return -1;
  }
  *p50_ns = strtod(PQgetvalue(res, 0, 0), NULL);
  *samples = strtoll(PQgetvalue(res, 0, 1), NULL, 10);
  PQclear(res);
  return 0;
}
