/*
 * libsiox-web: `siox web`, the explorer over the warehouse (README.md). An
 * HTTP server (libmicrohttpd) that serves a single-page application, bundled
 * into the binary at build time, and a JSON API whose documents are the
 * `siox` CLI's --json ones.
 */
#ifndef SIOX_WEB_H
#define SIOX_WEB_H

#include <stddef.h>

struct siox_web_opts {
  const char *listen;   /* HOST:PORT, default 127.0.0.1:8080 */
  const char *allow;    /* CIDR[,CIDR...]: the clients served; required beyond loopback */
  const char *conninfo; /* the warehouse; a request opens its own connection (blame, graph, top, capacity: a
                           pooled one) */
  int threads;          /* request threads (default 4) */
};

/* Serves until SIGINT or SIGTERM. Prints "siox web: listening on
 * http://HOST:PORT/" on stdout once it accepts. 0, or -errno with err set
 * (bad --listen or --allow, a non-loopback --listen without --allow, the
 * port taken). */
int siox_web_run(const struct siox_web_opts *o, char *err, size_t errlen);

#endif
