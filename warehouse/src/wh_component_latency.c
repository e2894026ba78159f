/*
 * The component page of `siox web`: a component's latency over time, binned
 * here (mean latency of its activities per time bin), for the components
 * whose label ("hwid swid#iid") contains a pattern, or of a role: brick,
 * client, device. The baseline it is drawn against is the knowledge base's
 * (libsiox-kb), added by the front end.
 */
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "siox/siox_wh.h"
#include "wh_pg.h"

static const char latency_sql[] =
    "WITH n AS (SELECT node_id, hwid, swid, iid, hwid || ' ' || swid || CASE WHEN iid <> '' THEN '#' || iid ELSE '' END"
    "           AS label FROM nodes),"
    " m AS (SELECT * FROM n WHERE CASE $1 WHEN 'brick' THEN swid = 'GlusterFS-brick'"
    "                                    WHEN 'client' THEN swid = 'GlusterFS-client'"
    "                                    WHEN 'device' THEN swid = 'device'"
    "                                    ELSE strpos(label, $1) > 0 END),"
    " a AS (SELECT a.node_id, a.start_ns, a.end_ns - a.start_ns AS ns FROM activities a JOIN m USING (node_id)"
    "        WHERE a.start_ns >= $2::bigint),"
    " r AS (SELECT min(start_ns) AS lo, max(start_ns) + 1 AS hi FROM a)"
    " SELECT m.node_id, m.label, width_bucket(a.start_ns, r.lo, r.hi, $3::int), count(*), avg(a.ns), r.lo, r.hi"
    "   FROM a JOIN m USING (node_id), r GROUP BY 1, 2, 3, r.lo, r.hi ORDER BY 2, 3";

int siox_wh_component_latency(struct siox_wh *wh, const char *pattern, int64_t since_ns, int bins,
                              struct json_object **out, char *err, size_t errlen) {
  if (bins < 1 || bins > 4096) {
    snprintf(err, errlen, "bins must be in 1..4096, not %d", bins);
    return -EINVAL;
  }
  char since[24], nb[16];
  snprintf(since, sizeof(since), "%lld", (long long)since_ns);
  snprintf(nb, sizeof(nb), "%d", bins);
  const char *params[] = {pattern, since, nb};
  PGconn *c = siox_wh_pg(wh);
  PGresult *res = siox_wh_query(c, "reading the components' latency", latency_sql, 3, params, err, errlen);
  if (!res) return -EIO;
  json_object *doc = json_object_new_object(), *arr = json_object_new_array(), *cur = NULL, *cbins = NULL;
  int64_t total = 0;
  for (int r = 0; r < PQntuples(res); r++) {
    const char *label = PQgetvalue(res, r, 1);
    if (!cur || strcmp(label, json_object_get_string(json_object_object_get(cur, "label"))) != 0) {
      if (cur) json_object_object_add(cur, "activities", json_object_new_int64(total));
      cur = json_object_new_object(), cbins = json_object_new_array(), total = 0;
      json_object_object_add(cur, "node_id", json_object_new_int64(strtoll(PQgetvalue(res, r, 0), NULL, 10)));
      json_object_object_add(cur, "label", json_object_new_string(label));
      json_object_object_add(cur, "first_ns", json_object_new_int64(strtoll(PQgetvalue(res, r, 5), NULL, 10)));
      json_object_object_add(cur, "last_ns", json_object_new_int64(strtoll(PQgetvalue(res, r, 6), NULL, 10)));
      json_object_object_add(cur, "bins", cbins);
      json_object_array_add(arr, cur);
    }
    int64_t lo = strtoll(PQgetvalue(res, r, 5), NULL, 10), hi = strtoll(PQgetvalue(res, r, 6), NULL, 10);
    int b = atoi(PQgetvalue(res, r, 2));
    int64_t n = strtoll(PQgetvalue(res, r, 3), NULL, 10);
    json_object *o = json_object_new_object();
    /* the bin's middle */
    json_object_object_add(o, "t_ns", json_object_new_int64(lo + (int64_t)(((double)b - 0.5) * (double)(hi - lo) / bins)));
    json_object_object_add(o, "n", json_object_new_int64(n));
    json_object_object_add(o, "mean_ns", json_object_new_double(strtod(PQgetvalue(res, r, 4), NULL)));
    json_object_array_add(cbins, o);
    total += n;
  }
  if (cur) json_object_object_add(cur, "activities", json_object_new_int64(total));
  PQclear(res);
  json_object_object_add(doc, "pattern", json_object_new_string(pattern));
  json_object_object_add(doc, "bins", json_object_new_int(bins));
  json_object_object_add(doc, "components", arr);
  *out = doc;
  return 0;
}
