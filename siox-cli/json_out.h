/*
 * JSON output of the `siox` subcommands: printing what json_build.h
 * (libsiox-warehouse) builds.
 */
#ifndef SIOX_CLI_JSON_OUT_H
#define SIOX_CLI_JSON_OUT_H

#include <json-c/json.h>
#include <stdbool.h>

#include "json_build.h"

/* Prints obj pretty to stdout and releases it. 0 or -ENOMEM (obj NULL). */
int siox_json_print(json_object *obj);

/* A document a library built, shown as JSON (as_json) or by text, then
 * released. SIOX_EXIT_OK, or SIOX_EXIT_FAIL when doc is NULL. */
int siox_json_present(json_object *doc, bool as_json, void (*text)(json_object *doc));

#endif
