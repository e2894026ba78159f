/*
 * Listener: the daemon's unix socket, where local clients (libsiox-client,
 * `siox status`) connect. Each accepted connection becomes a session.
 * Sockets are world-connectable on purpose: any user's job may trace, and
 * SO_PEERCRED tells the daemon who is speaking.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "daemon.h"

static void on_connection(uv_stream_t *server, int status) {
  struct daemon *d = server->data;
  if (status < 0) {
    fprintf(stderr, "siox-daemon: accept: %s\n", uv_strerror(status));
    return;
  }
  int rc = session_accept(d, server);
  if (rc < 0)
    fprintf(stderr, "siox-daemon: accepting a client: %s\n", uv_strerror(rc));
}

/* A socket file left by a dead daemon blocks bind; one answered by a live
 * daemon must not be stolen. */
static int clear_stale_socket(const char *path) {
  struct stat st;
  if (lstat(path, &st) < 0)
    return 0;
  if (!S_ISSOCK(st.st_mode))
    return -EEXIST;
  struct sockaddr_un sa = {.sun_family = AF_UNIX};
  snprintf(sa.sun_path, sizeof sa.sun_path, "%s", path);
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return -errno;
  int live = connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0;
  close(fd);
  if (live)
    return -EADDRINUSE;
  return unlink(path) < 0 ? -errno : 0;
}

int listener_start(struct daemon *d) {
  const char *path = d->cfg.socket_path;
  char dir[4096];
  snprintf(dir, sizeof dir, "%s", path);
  char *slash = strrchr(dir, '/');
  if (slash && slash != dir) {
    *slash = '\0';
    state_mkdirs(dir, 0755); /* bind reports a real failure below */
  }
  uv_pipe_init(d->loop, &d->listener, 0);
  d->listener.data = d;
  int rc = clear_stale_socket(path);
  if (rc < 0)
    return rc;
  if ((rc = uv_pipe_bind(&d->listener, path)) < 0)
    return rc;
  chmod(path, 0777);
  return uv_listen((uv_stream_t *)&d->listener, 128, on_connection);
}

void listener_stop(struct daemon *d) {
  if (uv_is_closing((uv_handle_t *)&d->listener))
    return;
  uv_close((uv_handle_t *)&d->listener, NULL);
  unlink(d->cfg.socket_path);
}
