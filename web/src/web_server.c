/*
 * `siox web`'s HTTP server: libmicrohttpd with a pool of request threads,
 * GET only; "/" and the bundled files, "/api/NAME" the JSON API. Runs until
 * SIGINT or SIGTERM (waited for with sigwait: the signals are blocked in
 * every thread).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "web.h"

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                              const char *version, const char *upload, size_t *upload_size, void **req) {
  struct web *w = cls;
  (void)version, (void)upload, (void)req;
  if (*upload_size) return MHD_NO; /* GET only: nothing is uploaded */
  if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 && strcmp(method, MHD_HTTP_METHOD_HEAD) != 0)
    return web_reply_error(c, MHD_HTTP_METHOD_NOT_ALLOWED, "%s: only GET is served", method);
  if (strncmp(url, "/api/", 5) == 0) return web_api(w, c, url + 5);
  const struct web_asset *a = web_asset_find(strcmp(url, "/") == 0 ? "/index.html" : url);
  if (!a) return web_reply_error(c, MHD_HTTP_NOT_FOUND, "no such page: %s", url);
  return web_reply_text(c, MHD_HTTP_OK, a->type, (const char *)a->data, a->len, false);
}

static void log_mhd(void *cls, const char *fmt, va_list ap) {
  (void)cls;
  fputs("siox web: ", stderr);
  vfprintf(stderr, fmt, ap);
}

int siox_web_run(const struct siox_web_opts *o, char *err, size_t errlen) {
  struct web w = {.o = o};
  struct sockaddr_storage addr;
  socklen_t alen;
  int rc = web_parse_listen(o->listen ? o->listen : "127.0.0.1:8080", &addr, &alen, err, errlen);
  if (!rc && o->allow) rc = web_parse_allow(&w, o->allow, err, errlen);
  if (rc) return rc;
  if (!web_is_loopback((struct sockaddr *)&addr) && !o->allow) {
    snprintf(err, errlen,
             "--listen %s is beyond loopback: say who may connect with --allow CIDR[,CIDR...] (see --help)",
             o->listen);
    return -EPERM;
  }
  size_t nthreads = (size_t)(o->threads > 0 ? o->threads : 4);
  if (web_pool_new(o->conninfo, nthreads, &w.pool)) {
    snprintf(err, errlen, "out of memory");
    return -ENOMEM;
  }
  sigset_t sigs;
  sigemptyset(&sigs);
  sigaddset(&sigs, SIGINT);
  sigaddset(&sigs, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &sigs, NULL); /* before MHD's threads exist: they inherit it */
  unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG | MHD_USE_POLL;
  if (addr.ss_family == AF_INET6) flags |= MHD_USE_IPv6;
  struct MHD_Daemon *d = MHD_start_daemon(
      flags, 0, web_accept, &w, handle, &w, MHD_OPTION_EXTERNAL_LOGGER, log_mhd, NULL, MHD_OPTION_SOCK_ADDR,
      (struct sockaddr *)&addr, MHD_OPTION_THREAD_POOL_SIZE, (unsigned)nthreads,
      MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)300, MHD_OPTION_END);
  if (!d) {
    int e = errno ? errno : EADDRINUSE;
    web_pool_free(w.pool);
    snprintf(err, errlen, "cannot listen on %s: %s (is the port taken?)", o->listen ? o->listen : "127.0.0.1:8080",
             strerror(e));
    return -EADDRINUSE;
  }
  const union MHD_DaemonInfo *port = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
  char host[256];
  snprintf(host, sizeof(host), "%s", o->listen ? o->listen : "127.0.0.1:8080");
  *strrchr(host, ':') = '\0';
  printf("siox web: listening on http://%s:%u/\n", host, port ? port->port : 0);
  fflush(stdout);
  /* One warm connection per request thread, opened now: the first blame
   * does not pay the connection (a warehouse down now: opened per request). */
  char perr[1024];
  if (web_pool_fill(w.pool, nthreads, perr, sizeof(perr)))
    fprintf(stderr, "siox web: no warm warehouse connections yet (%s); requests open them\n", perr);
  struct web_warm *warm = NULL;
  if (web_warm_start(o->conninfo, &warm))
    fputs("siox web: cannot start the thread that computes job pages ahead of their view; views compute them\n",
          stderr);
  int sig;
  while (sigwait(&sigs, &sig) != 0) {}
  web_warm_stop(warm);
  MHD_stop_daemon(d);
  web_pool_free(w.pool);
  return 0;
}
