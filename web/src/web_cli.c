/*
 * The documents the CLI makes itself: graph, top and capacity are built by
 * the `siox` subcommands (siox-cli/cmd_graph.c, cmd_top.c, cmd_capacity.c),
 * so the server runs the same executable and hands on what it prints
 * (blame's document is libsiox-warehouse's: web_api.c builds it itself).
 * The web's document is then the CLI's --json byte for byte, whatever
 * either side changes. The warehouse goes to the child in SIOX_DB (the environment:
 * no conninfo on a command line that `ps` shows).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "web.h"

extern char **environ;

/* environ with SIOX_DB=conninfo in place of any SIOX_DB; NULL on ENOMEM. */
static char **child_env(const char *conninfo, char **dbvar) {
  size_t n = 0;
  while (environ[n]) n++;
  char **env = calloc(n + 2, sizeof(*env));
  if (!env || asprintf(dbvar, "SIOX_DB=%s", conninfo) < 0) {
    free(env);
    *dbvar = NULL;
    return NULL;
  }
  size_t k = 0;
  for (size_t i = 0; i < n; i++)
    if (strncmp(environ[i], "SIOX_DB=", 8) != 0) env[k++] = environ[i];
  env[k++] = *dbvar;
  return env;
}

struct buf {
  char *p;
  size_t n, cap;
};

static int buf_read(struct buf *b, int fd) {
  if (b->cap - b->n < 65536) {
    size_t cap = b->cap ? 2 * b->cap : 131072;
    char *p = realloc(b->p, cap + 1);
    if (!p) return -ENOMEM;
    b->p = p, b->cap = cap;
  }
  ssize_t r = read(fd, b->p + b->n, b->cap - b->n);
  if (r < 0) return errno == EINTR ? 1 : -errno;
  b->n += (size_t)r;
  b->p[b->n] = '\0';
  return r > 0;
}

/* Reads both pipes until both end. 0 or -errno. */
static int drain(int out, int errfd, struct buf *o, struct buf *e) {
  struct pollfd p[2] = {{.fd = out, .events = POLLIN}, {.fd = errfd, .events = POLLIN}};
  int open = 2, rc = 0;
  while (open > 0 && rc >= 0) {
    if (poll(p, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return -errno;
    }
    for (int i = 0; i < 2; i++) {
      if (p[i].fd < 0 || !(p[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      rc = buf_read(i == 0 ? o : e, p[i].fd);
      if (rc == 0) p[i].fd = -1, open--;
    }
  }
  return rc < 0 ? rc : 0;
}

int web_cli_json(const struct web *w, const char *const *args, json_object **out, char *err, size_t errlen) {
  const char *argv[32] = {w->o->cli};
  size_t n = 1;
  for (; args[n - 1] && n < 31; n++) argv[n] = args[n - 1];
  argv[n] = NULL;
  int po[2] = {-1, -1}, pe[2] = {-1, -1};
  char *dbvar = NULL, **env = child_env(w->o->conninfo, &dbvar);
  if (!env || pipe2(po, O_CLOEXEC) || pipe2(pe, O_CLOEXEC)) {
    free(env), free(dbvar);
    snprintf(err, errlen, "cannot run %s: %s", w->o->cli, strerror(errno ? errno : ENOMEM));
    return -EIO;
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, po[1], 1);
  posix_spawn_file_actions_adddup2(&fa, pe[1], 2);
  pid_t pid;
  int src = posix_spawn(&pid, w->o->cli, &fa, NULL, (char *const *)argv, env);
  posix_spawn_file_actions_destroy(&fa);
  close(po[1]), close(pe[1]);
  free(env), free(dbvar);
  struct buf o = {0}, e = {0};
  int rc = src ? -src : drain(po[0], pe[0], &o, &e);
  close(po[0]), close(pe[0]);
  int status = 0;
  if (!src) while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
  if (rc) {
    snprintf(err, errlen, "running %s %s: %s", w->o->cli, args[0], strerror(-rc));
  } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    const char *msg = e.p ? e.p : "no message";
    if (strncmp(msg, "siox: ", 6) == 0) msg += 6;
    snprintf(err, errlen, "%.*s", (int)strcspn(msg, "\n"), msg);
    rc = 1;
  } else if (!(*out = json_tokener_parse(o.p ? o.p : ""))) {
    snprintf(err, errlen, "siox %s printed no JSON document", args[0]);
    rc = -EIO;
  }
  free(o.p);
  free(e.p);
  return rc;
}
