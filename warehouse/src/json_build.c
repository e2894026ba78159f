/*
 * JSON building shared by the documents the library makes (blame) and the
 * `siox` subcommands, with json-c. Times come twice: exact integer
 * nanoseconds and seconds as a double (`*_s`), which is what scripts
 * usually want.
 */
#include "json_build.h"

#include <math.h>
#include <stdio.h>

#include "format.h"

void siox_json_str(json_object *o, const char *key, const char *val) {
  json_object_object_add(o, key, json_object_new_string(val ? val : ""));
}

void siox_json_int(json_object *o, const char *key, int64_t val) {
  json_object_object_add(o, key, json_object_new_int64(val));
}

/* 15 significant digits: exact for the ns-resolution durations we print,
 * without json-c's default 17-digit noise (5.0000000000000002e-05). */
void siox_json_dbl(json_object *o, const char *key, double val) {
  char s[40];
  if (!isfinite(val)) { /* JSON has no NaN or infinity */
    json_object_object_add(o, key, NULL);
    return;
  }
  snprintf(s, sizeof(s), "%.15g", val);
  json_object_object_add(o, key, json_object_new_double_s(val, s));
}

static const char *link_name(enum siox_link_kind k) {
  return k == SIOX_LINK_EXPLICIT ? "explicit" : k == SIOX_LINK_IMPLICIT ? "implicit" : "root";
}

static json_object *attrs_json(const struct siox_act *a) {
  json_object *o = json_object_new_object();
  for (size_t i = 0; i < a->nattrs; i++) {
    const struct siox_attr *at = &a->attrs[i];
    json_object *v = NULL;
    switch (at->kind) {
    case SIOX_AV_I64: v = json_object_new_int64(at->v.i); break;
    case SIOX_AV_U64: v = json_object_new_uint64(at->v.u); break;
    case SIOX_AV_F64: {
      char s[40];
      if (!isfinite(at->v.f)) break; /* stays NULL: JSON null */
      snprintf(s, sizeof(s), "%.15g", at->v.f);
      v = json_object_new_double_s(at->v.f, s);
      break;
    }
    case SIOX_AV_TEXT: v = json_object_new_string(at->v.text); break;
    }
    json_object_object_add(o, at->name, v);
  }
  return o;
}

static json_object *link_json(const struct siox_act *a) {
  json_object *o = json_object_new_object();
  siox_json_str(o, "kind", link_name(a->link));
  siox_json_dbl(o, "confidence", a->confidence);
  if (a->flags[0]) siox_json_str(o, "flags", a->flags);
  return o;
}

json_object *siox_json_act(const struct siox_act *a, const struct siox_act *root, bool with_children) {
  char iso[64];
  json_object *o = json_object_new_object();
  if (!o) return NULL;
  siox_json_int(o, "aid", a->aid);
  if (a->parent) siox_json_int(o, "parent", a->parent);
  siox_json_str(o, "hwid", a->hwid);
  siox_json_str(o, "swid", a->swid);
  if (a->iid[0]) siox_json_str(o, "iid", a->iid);
  siox_json_str(o, "name", a->name);
  siox_json_str(o, "host", a->host);
  siox_json_int(o, "pid", a->pid);
  siox_json_str(o, "job", a->job);
  siox_json_str(o, "start", siox_fmt_iso(a->start_ns, iso, sizeof(iso)));
  siox_json_int(o, "start_ns", a->start_ns);
  siox_json_int(o, "end_ns", a->end_ns);
  siox_json_dbl(o, "offset_s", (double)(a->start_ns - root->start_ns) / 1e9);
  siox_json_int(o, "inclusive_ns", a->inclusive_ns);
  siox_json_int(o, "exclusive_ns", a->exclusive_ns);
  siox_json_dbl(o, "inclusive_s", (double)a->inclusive_ns / 1e9);
  siox_json_dbl(o, "exclusive_s", (double)a->exclusive_ns / 1e9);
  siox_json_int(o, "err", a->err);
  json_object_object_add(o, "critical", json_object_new_boolean(a->critical));
  json_object_object_add(o, "link", link_json(a));
  json_object_object_add(o, "attributes", attrs_json(a));
  if (with_children) {
    json_object *ch = json_object_new_array();
    for (size_t i = 0; i < a->nchildren; i++) json_object_array_add(ch, siox_json_act(a->children[i], root, true));
    json_object_object_add(o, "children", ch);
  }
  return o;
}

json_object *siox_json_act_id(const struct siox_act *a) {
  json_object *o = json_object_new_object();
  if (!o) return NULL;
  siox_json_int(o, "aid", a->aid);
  siox_json_str(o, "hwid", a->hwid);
  siox_json_str(o, "swid", a->swid);
  siox_json_str(o, "iid", a->iid);
  siox_json_str(o, "name", a->name);
  return o;
}
