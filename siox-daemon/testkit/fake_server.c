/*
 * Test kit, server side: a blocking one-connection-at-a-time stand-in for
 * siox-server (see fake_server.h). It runs in its own thread and never
 * talks to anything but loopback.
 */
#include "fake_server.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "siox.pb-c.h"
#include "siox_frame.h"

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int send_msg(int fd, uint16_t type, const ProtobufCMessage *m) {
  uint8_t buf[256];
  size_t n = protobuf_c_message_get_packed_size(m);
  if (n + SIOX_FRAME_HDR_LEN > sizeof buf)
    return -EMSGSIZE;
  siox_frame_hdr_encode(buf, type, (uint32_t)n);
  protobuf_c_message_pack(m, buf + SIOX_FRAME_HDR_LEN);
  size_t len = n + SIOX_FRAME_HDR_LEN, off = 0;
  while (off < len) {
    ssize_t w = send(fd, buf + off, len - off, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR)
      continue;
    if (w < 0)
      return -errno;
    off += (size_t)w;
  }
  return 0;
}

/* Stores one batch if it is the next in seq order (dedupe as a server would). */
static void on_batch(struct fake_server *s, int fd, const uint8_t *p, size_t n) {
  Siox__Batch *b = siox__batch__unpack(NULL, n, p);
  if (!b)
    return;
  int mode = atomic_load(&s->mode);
  pthread_mutex_lock(&s->mu);
  s->batches_received++;
  s->activities_seen += b->activities;
  s->wire_bytes += n;
  bool store = mode != FAKE_DISCARD;
  if (b->seq <= s->committed_seq) {
    s->batches_dup++;
    store = false;
  } else if (b->seq != s->committed_seq + 1 && store) {
    s->seq_gaps++;
  }
  if (store) {
    if (s->decode) {
      struct siox_block blk;
      const char *why;
      siox_block_init(&blk);
      if (siox_block_decode(b->block.data, b->block.len, b->raw_bytes, &blk, &why) < 0)
        s->decode_errors++;
      else if (s->on_batch)
        s->on_batch(s->ctx, b->seq, &blk);
      siox_block_free(&blk);
    }
    s->committed_seq = b->seq;
    s->activities_stored += b->activities;
  }
  uint64_t ack = s->committed_seq;
  pthread_mutex_unlock(&s->mu);
  siox__batch__free_unpacked(b, NULL);
  if (mode == FAKE_ACK) {
    Siox__Ack a = SIOX__ACK__INIT;
    a.seq = ack;
    send_msg(fd, SIOX_FRAME_ACK, &a.base);
  }
}

/* Returns -1 for a daemon's hint link: this stand-in serves batches only,
 * so it hangs up on it (the daemon answers hint queries "server down"). */
static int on_hello(struct fake_server *s, int fd, const uint8_t *p, size_t n) {
  Siox__Hello *h = siox__hello__unpack(NULL, n, p);
  Siox__HelloReply r = SIOX__HELLO_REPLY__INIT;
  if (h && h->hint_link) {
    siox__hello__free_unpacked(h, NULL);
    return -1;
  }
  pthread_mutex_lock(&s->mu);
  s->connections++;
  if (h)
    s->daemon_id = h->daemon_id;
  r.acked_seq = s->committed_seq;
  pthread_mutex_unlock(&s->mu);
  siox__hello__free_unpacked(h, NULL);
  r.server_version = "fake";
  send_msg(fd, SIOX_FRAME_HELLO_REPLY, &r.base);
  return 0;
}

static void on_ping(struct fake_server *s, int fd, const uint8_t *p, size_t n) {
  Siox__Ping *m = siox__ping__unpack(NULL, n, p);
  if (!m)
    return;
  Siox__Pong r = SIOX__PONG__INIT;
  r.t1 = m->t1;
  r.t2 = r.t3 = now_ns();
  siox__ping__free_unpacked(m, NULL);
  pthread_mutex_lock(&s->mu);
  s->pings++;
  pthread_mutex_unlock(&s->mu);
  send_msg(fd, SIOX_FRAME_PONG, &r.base);
}

/* Serves one connection until EOF, a bad frame, drop_now or stop. */
static void serve(struct fake_server *s, int fd) {
  size_t cap = 1 << 20, len = 0;
  uint8_t *buf = malloc(cap);
  while (buf && !atomic_load(&s->stop) && !atomic_exchange(&s->drop_now, 0)) {
    struct pollfd pf = {fd, POLLIN, 0};
    if (poll(&pf, 1, 20) <= 0)
      continue;
    ssize_t r = recv(fd, buf + len, cap - len, 0);
    if (r <= 0)
      break;
    len += (size_t)r;
    size_t off = 0;
    struct siox_frame_hdr h;
    const char *why;
    while (len - off >= SIOX_FRAME_HDR_LEN) {
      if (siox_frame_hdr_decode(buf + off, &h, &why) < 0)
        goto out;
      size_t total = SIOX_FRAME_HDR_LEN + h.length;
      if (len - off < total) {
        if (total > cap) { /* grow for a large batch */
          uint8_t *nb = realloc(buf, total);
          if (!nb)
            goto out;
          buf = nb;
          cap = total;
        }
        break;
      }
      const uint8_t *p = buf + off + SIOX_FRAME_HDR_LEN;
      if (h.type == SIOX_FRAME_HELLO && on_hello(s, fd, p, h.length) < 0)
        goto out;
      else if (h.type == SIOX_FRAME_BATCH)
        on_batch(s, fd, p, h.length);
      else if (h.type == SIOX_FRAME_PING)
        on_ping(s, fd, p, h.length);
      off += total;
    }
    memmove(buf, buf + off, len - off);
    len -= off;
  }
out:
  free(buf);
  close(fd);
}

static void *run(void *arg) {
  struct fake_server *s = arg;
  while (!atomic_load(&s->stop)) {
    struct pollfd pf = {s->listen_fd, POLLIN, 0};
    if (poll(&pf, 1, 20) <= 0)
      continue;
    int fd = accept(s->listen_fd, NULL, NULL);
    if (fd < 0)
      continue;
    atomic_store(&s->drop_now, 0);
    serve(s, fd);
  }
  return NULL;
}

int fake_server_start(struct fake_server *s, bool decode, fake_batch_fn cb, void *ctx) {
  memset(s, 0, sizeof *s);
  s->decode = decode;
  s->on_batch = cb;
  s->ctx = ctx;
  pthread_mutex_init(&s->mu, NULL);
  s->listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t sl = sizeof sa;
  if (s->listen_fd < 0 || bind(s->listen_fd, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(s->listen_fd, 4) < 0 ||
      getsockname(s->listen_fd, (struct sockaddr *)&sa, &sl) < 0)
    return -errno;
  s->port = ntohs(sa.sin_port);
  return -pthread_create(&s->thread, NULL, run, s);
}

void fake_server_stop(struct fake_server *s) {
  atomic_store(&s->stop, 1);
  pthread_join(s->thread, NULL);
  close(s->listen_fd);
  pthread_mutex_destroy(&s->mu);
}
