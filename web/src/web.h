/*
 * What the files of libsiox-web share: the server's state, the access rule,
 * responses and the API handlers.
 */
#ifndef SIOX_WEB_INTERNAL_H
#define SIOX_WEB_INTERNAL_H

#include <json-c/json.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>

#include "siox/siox_web.h"
#include "siox/siox_wh.h"

#define WEB_MAX_NETS 16

/* One network of --allow, IPv4 or IPv6, as address and prefix length. */
struct web_net {
  int family;
  unsigned char addr[16];
  int prefix;
};

struct web_pool;

struct web {
  const struct siox_web_opts *o;
  struct web_pool *pool; /* warm connections for blame, graph, top, capacity (web_pool.c) */
  struct web_net nets[WEB_MAX_NETS];
  size_t nnets; /* 0: loopback only */
};

/* web_access.c: parses HOST:PORT into *addr (IPv4 or [IPv6]); 0 or -EINVAL. */
int web_parse_listen(const char *s, struct sockaddr_storage *addr, socklen_t *len, char *err, size_t errlen);
/* Parses --allow into w->nets. 0 or -EINVAL. */
int web_parse_allow(struct web *w, const char *s, char *err, size_t errlen);
/* MHD's accept policy: loopback always; others when in an --allow network. */
enum MHD_Result web_accept(void *cls, const struct sockaddr *addr, socklen_t addrlen);
bool web_is_loopback(const struct sockaddr *a);

/* web_reply.c: queue a JSON document (consumed), an error {"error": msg}, or bytes. */
enum MHD_Result web_reply_json(struct MHD_Connection *c, unsigned status, json_object *doc);
enum MHD_Result web_reply_error(struct MHD_Connection *c, unsigned status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
enum MHD_Result web_reply_text(struct MHD_Connection *c, unsigned status, const char *type, const char *body,
                               size_t len, bool must_copy);

/* web_assets.c (generated): the bundled front end. NULL when path is none. */
struct web_asset {
  const char *path, *type;
  const unsigned char *data;
  size_t len;
};
const struct web_asset *web_asset_find(const char *path);

/* The bins of the job page's heatmap: app.js asks /api/job?bins=80, and
 * web_warm.c computes that document ahead of the first view. */
#define WEB_JOB_PAGE_BINS 80

/* web_warm.c: a thread that computes the pages of the jobs a listing saw
 * end, before their first view. 0 or -1 (no thread: views compute them). */
struct web_warm;
int web_warm_start(const char *conninfo, struct web_warm **out);
/* Stops and joins it (after the job it is computing). NULL: nothing. */
void web_warm_stop(struct web_warm *w);

/* web_pool.c: warm warehouse connections, at most cap kept idle. 0 or -ENOMEM. */
int web_pool_new(const char *conninfo, size_t cap, struct web_pool **out);
/* Opens n connections ahead of the first request. 0 or siox_wh_open's error. */
int web_pool_fill(struct web_pool *p, size_t n, char *err, size_t errlen);
/* The warmest idle connection, else a new one (siox_wh_open's errors). */
int web_pool_take(struct web_pool *p, struct siox_wh **out, char *err, size_t errlen);
/* Gives wh back: kept when healthy and idle, closed otherwise. NULL: nothing. */
void web_pool_give(struct web_pool *p, struct siox_wh *wh);
/* Closes the idle connections (after one was found broken: so were they). */
void web_pool_flush(struct web_pool *p);
/* Closes the idle connections (none may be taken) and frees p. */
void web_pool_free(struct web_pool *p);

/* web_api.c: answers /api/...; path after "/api/". */
enum MHD_Result web_api(struct web *w, struct MHD_Connection *c, const char *path);

#endif
