/*
 * The stand-in daemon of the client benches: reads, discards, acknowledges
 * (bench_drain.h). One poll loop, at most MAX_CONN clients at a time.
 */
#include "bench_drain.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "siox_client_wire.h"

#define MAX_CONN 64

struct conn {
  int fd;
  uint64_t consumed; /* bytes of this connection's stream read so far */
};

/* Reads what fd has; acknowledges it all. Returns 0, or -1 when it closed. */
static int serve(struct conn *c) {
  static char buf[1 << 20];
  ssize_t n = read(c->fd, buf, sizeof buf);
  if (n <= 0) return -1;
  c->consumed += (uint64_t)n;
  struct {
    struct siox_cw_frame_hdr h;
    struct siox_cw_ack a;
  } ack = {{SIOX_CW_MAGIC, SIOX_CW_VERSION, SIOX_CW_ACK, sizeof(struct siox_cw_ack), 0}, {c->consumed}};
  /* A status or hint connection ignores it; a full socket gets a later one. */
  (void)send(c->fd, &ack, sizeof ack, MSG_DONTWAIT | MSG_NOSIGNAL);
  return 0;
}

static void *loop(void *arg) {
  int lfd = (int)(intptr_t)arg;
  struct pollfd p[MAX_CONN + 1] = {{.fd = lfd, .events = POLLIN}};
  struct conn c[MAX_CONN + 1];
  int n = 1;
  for (;;) {
    if (poll(p, (nfds_t)n, -1) < 0) continue;
    for (int i = 1; i < n; i++) {
      if (!(p[i].revents & (POLLIN | POLLHUP | POLLERR)) || serve(&c[i]) == 0) continue;
      close(p[i].fd);
      p[i] = p[n - 1], c[i] = c[n - 1];
      n--, i--;
    }
    if ((p[0].revents & POLLIN) && n <= MAX_CONN) {
      int fd = accept(lfd, NULL, NULL);
      if (fd >= 0) p[n] = (struct pollfd){.fd = fd, .events = POLLIN}, c[n++] = (struct conn){fd, 0};
    }
  }
  return NULL;
}

int bench_drain_start(const char *name, char *path, size_t cap) {
  struct sockaddr_un a = {.sun_family = AF_UNIX};
  snprintf(path, cap, "/tmp/siox-bench-%s.%d.sock", name, (int)getpid());
  snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
  unlink(path);
  int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  if (fd < 0) return -errno;
  if (bind(fd, (struct sockaddr *)&a, sizeof a) < 0 || listen(fd, 16) < 0) {
    int e = errno;
    close(fd);
    return -e;
  }
  pthread_t t;
  int rc = pthread_create(&t, NULL, loop, (void *)(intptr_t)fd);
  if (rc) {
    close(fd);
    return -rc;
  }
  pthread_detach(t);
  return 0;
}
