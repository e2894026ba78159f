/*
 * JSON building with json-c, shared by the library's documents (blame) and
 * the `siox` subcommands: activities (with their subtree for `siox graph
 * --format json`) and setters that keep building code short.
 */
#ifndef SIOX_WH_JSON_BUILD_H
#define SIOX_WH_JSON_BUILD_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>

#include "graph.h"

/* A new object describing a (and its subtree when with_children); the
 * caller owns it (json_object_put). NULL on ENOMEM. */
json_object *siox_json_act(const struct siox_act *a, const struct siox_act *root, bool with_children);

/* A new object naming activity a: aid, hwid, swid, iid, name (in that
 * order, the first keys of blame's culprit and resource documents).
 * NULL on ENOMEM; the caller owns it. */
json_object *siox_json_act_id(const struct siox_act *a);

/* json-c setters; val NULL (str) is "", a non-finite double null. */
void siox_json_str(json_object *o, const char *key, const char *val);
void siox_json_int(json_object *o, const char *key, int64_t val);
void siox_json_dbl(json_object *o, const char *key, double val);

#endif
