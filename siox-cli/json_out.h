/*
 * JSON output of the `siox` subcommands, built with json-c: activities (with
 * their subtree for `siox graph --format json`) and printing.
 */
#ifndef SIOX_CLI_JSON_OUT_H
#define SIOX_CLI_JSON_OUT_H

#include <json-c/json.h>
#include <stdbool.h>

#include "graph.h"

/* A new object describing a (and its subtree when with_children); the
 * caller owns it (json_object_put). NULL on ENOMEM. */
json_object *siox_json_act(const struct siox_act *a, const struct siox_act *root, bool with_children);

/* Prints obj pretty to stdout and releases it. 0 or -ENOMEM (obj NULL). */
int siox_json_print(json_object *obj);

/* A document a library built, shown as JSON (as_json) or by text, then
 * released. SIOX_EXIT_OK, or SIOX_EXIT_FAIL when doc is NULL. */
int siox_json_present(json_object *doc, bool as_json, void (*text)(json_object *doc));

/* json-c setters that keep building code short. */
void siox_json_str(json_object *o, const char *key, const char *val);
void siox_json_int(json_object *o, const char *key, int64_t val);
void siox_json_dbl(json_object *o, const char *key, double val);

#endif
