/*
 * Responses: JSON documents (json-c), errors as {"error": "..."} with their
 * HTTP status, and the bundled files. Nothing is cached by the browser for
 * the API (jobs change while they run).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "web.h"

enum MHD_Result web_reply_text(struct MHD_Connection *c, unsigned status, const char *type, const char *body,
                               size_t len, bool must_copy) {
  struct MHD_Response *r = MHD_create_response_from_buffer(len, (void *)body,
                                                           must_copy ? MHD_RESPMEM_MUST_COPY : MHD_RESPMEM_PERSISTENT);
  if (!r) return MHD_NO;
  MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
  MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
  /* the page loads nothing from elsewhere: say so to the browser */
  MHD_add_response_header(r, "Content-Security-Policy", "default-src 'self'; style-src 'self' 'unsafe-inline'");
  if (strncmp(type, "application/json", 16) == 0) MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
  enum MHD_Result rc = MHD_queue_response(c, status, r);
  MHD_destroy_response(r);
  return rc;
}

enum MHD_Result web_reply_json(struct MHD_Connection *c, unsigned status, json_object *doc) {
  const char *s = json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
  enum MHD_Result rc = web_reply_text(c, status, "application/json; charset=utf-8", s, strlen(s), true);
  json_object_put(doc);
  return rc;
}

enum MHD_Result web_reply_error(struct MHD_Connection *c, unsigned status, const char *fmt, ...) {
  char msg[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  json_object *o = json_object_new_object();
  json_object_object_add(o, "error", json_object_new_string(msg));
  json_object_object_add(o, "status", json_object_new_int((int)status));
  return web_reply_json(c, status, o);
}
