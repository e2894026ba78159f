/*
 * JSON output for `siox graph`, `blame`, `top` and `status`: printing the
 * documents (built with json_build.h, libsiox-warehouse).
 */
#include "json_out.h"

#include <errno.h>
#include <stdio.h>

#include "cli.h"

int siox_json_present(json_object *doc, bool as_json, void (*text)(json_object *doc)) {
  if (!doc) return SIOX_EXIT_FAIL;
  if (as_json) return siox_json_print(doc) == 0 ? SIOX_EXIT_OK : SIOX_EXIT_FAIL;
  text(doc);
  json_object_put(doc);
  return SIOX_EXIT_OK;
}

int siox_json_print(json_object *obj) {
  if (!obj) return -ENOMEM;
  puts(json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
  json_object_put(obj);
  return 0;
}
