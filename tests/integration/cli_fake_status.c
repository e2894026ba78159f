/*
 * A stand-in daemon and server for the `siox status` integration test: it
 * answers one status query on a unix socket (client wire, SIOX_CW_STATUS)
 * and one on a loopback TCP port (SIOX_FRAME_STATUS_REQUEST), then exits.
 * Usage: cli_fake_status SOCKET_PATH PORT_FILE  (writes the TCP port there)
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "siox.pb-c.h"
#include "siox_client_wire.h"
#include "siox_frame.h"

static int read_full(int fd, void *buf, size_t len) {
  for (uint8_t *p = buf; len;) {
    ssize_t n = read(fd, p, len);
    if (n <= 0) return -1;
    p += n;
    len -= (size_t)n;
  }
  return 0;
}

/* Packs a reply with a role and two counters; caller frees. */
static uint8_t *reply(const char *role, size_t *len) {
  Siox__Counter c1 = SIOX__COUNTER__INIT, c2 = SIOX__COUNTER__INIT, *cs[] = {&c1, &c2};
  Siox__StatusReply r = SIOX__STATUS_REPLY__INIT;
  c1.name = "batches_acked";
  c1.value = 42;
  c2.name = "spool_bytes";
  c2.value = 0;
  r.role = (char *)role;
  r.uptime_s = 3725;
  r.n_counters = 2;
  r.counters = cs;
  *len = siox__status_reply__get_packed_size(&r);
  uint8_t *buf = malloc(*len + 1);
  siox__status_reply__pack(&r, buf);
  return buf;
}

static int serve_unix(int lfd) {
  int fd = accept(lfd, NULL, NULL);
  struct siox_cw_frame_hdr h;
  if (fd < 0 || read_full(fd, &h, sizeof(h)) || h.magic != SIOX_CW_MAGIC || h.type != SIOX_CW_STATUS) return -1;
  size_t len;
  uint8_t *p = reply("daemon", &len);
  h.length = (uint32_t)len;
  int rc = write(fd, &h, sizeof(h)) == sizeof(h) && write(fd, p, len) == (ssize_t)len ? 0 : -1;
  free(p);
  close(fd);
  return rc;
}

static int serve_tcp(int lfd) {
  int fd = accept(lfd, NULL, NULL);
  uint8_t hdr[SIOX_FRAME_HDR_LEN];
  struct siox_frame_hdr h;
  const char *why;
  if (fd < 0 || read_full(fd, hdr, sizeof(hdr)) || siox_frame_hdr_decode(hdr, &h, &why) ||
      h.type != SIOX_FRAME_STATUS_REQUEST || h.length > 64)
    return -1;
  uint8_t skip[64];
  if (read_full(fd, skip, h.length)) return -1;
  size_t len;
  uint8_t *p = reply("server", &len);
  siox_frame_hdr_encode(hdr, SIOX_FRAME_STATUS_REPLY, (uint32_t)len);
  int rc = write(fd, hdr, sizeof(hdr)) == sizeof(hdr) && write(fd, p, len) == (ssize_t)len ? 0 : -1;
  free(p);
  close(fd);
  return rc;
}

static int listen_unix(const char *path) {
  struct sockaddr_un sa = {.sun_family = AF_UNIX};
  snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
  int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  unlink(path);
  if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 4)) return -1;
  return fd;
}

static int listen_tcp(const char *port_file) {
  struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t sl = sizeof(sa);
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 4) ||
      getsockname(fd, (struct sockaddr *)&sa, &sl))
    return -1;
  FILE *f = fopen(port_file, "w");
  if (!f) return -1;
  fprintf(f, "%u\n", ntohs(sa.sin_port));
  fclose(f);
  return fd;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s SOCKET_PATH PORT_FILE\n", argv[0]);
    return 2;
  }
  int u = listen_unix(argv[1]), t = listen_tcp(argv[2]);
  if (u < 0 || t < 0) {
    perror("listen");
    return 1;
  }
  struct pollfd p[2] = {{.fd = u, .events = POLLIN}, {.fd = t, .events = POLLIN}};
  int served = 0;
  while (served < 2) { /* bounded: the test gives up after 60 s */
    if (poll(p, 2, 60000) <= 0) return 1;
    for (int i = 0; i < 2; i++) {
      if (!(p[i].revents & POLLIN)) continue;
      if ((i == 0 ? serve_unix(u) : serve_tcp(t)) != 0) return 1;
      p[i].fd = -1;
      served++;
    }
  }
  unlink(argv[1]);
  return 0;
}
