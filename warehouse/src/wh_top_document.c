/*
 * The document `siox top --json` prints and siox web's /api/top serves
 * (documents.h): the slowest activities with their identity, start, duration
 * and bytes (null when the layer does not report them).
 */
#include <errno.h>
#include <stdio.h>

#include "documents.h"
#include "format.h"
#include "json_build.h"

static json_object *row_json(const struct siox_top_row *r) {
  char when[64];
  json_object *o = json_object_new_object();
  siox_json_int(o, "aid", r->aid);
  siox_json_str(o, "host", r->host);
  siox_json_str(o, "hwid", r->hwid);
  siox_json_str(o, "swid", r->swid);
  siox_json_str(o, "name", r->name);
  siox_json_str(o, "job", r->job);
  siox_json_str(o, "start", siox_fmt_iso(r->start_ns, when, sizeof(when)));
  siox_json_int(o, "start_ns", r->start_ns);
  siox_json_int(o, "duration_ns", r->duration_ns);
  siox_json_dbl(o, "duration_s", (double)r->duration_ns / 1e9);
  json_object_object_add(o, "bytes", r->bytes >= 0 ? json_object_new_int64(r->bytes) : NULL);
  siox_json_int(o, "err", r->err);
  return o;
}

int siox_wh_top_document(PGconn *c, const struct siox_top_query *q, json_object **out, char *err, size_t errlen) {
  struct siox_top t = {0};
  *out = NULL;
  int rc = siox_wh_top(c, q, &t, err, errlen);
  if (rc) return rc;
  json_object *arr = json_object_new_array();
  for (size_t i = 0; arr && i < t.n; i++) json_object_array_add(arr, row_json(&t.rows[i]));
  siox_wh_top_free(&t);
  if (arr && (*out = json_object_new_object()) != NULL) {
    json_object_object_add(*out, "activities", arr);
    return 0;
  }
  json_object_put(arr);
  snprintf(err, errlen, "out of memory");
  return -ENOMEM;
}
