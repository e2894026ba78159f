/*
 * The connection to the node daemon: a nonblocking unix stream socket and
 * one send buffer of whole frames. Only the flusher thread calls in here.
 * A frame is appended whole and written in as many send() calls as the
 * socket needs, so frames never interleave and partial writes resume.
 */
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "client.h"

#define RETRY_NS 1000000000ll /* reconnect at most once a second */

static int sock = -1;
static uint8_t *sbuf; /* owned: frames not yet fully written */
static size_t slen, ssent, scap;
static uint64_t reg_shipped;  /* registration log bytes the daemon has */
static uint64_t reg_inflight; /* ... once the current buffer is written */
static int reg_pending;
static int64_t last_try = INT64_MIN / 2;
static _Atomic uint64_t bytes_sent;
static _Atomic int connected;

static int64_t mono_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int siox__conn_connected(void) {
  return atomic_load(&connected);
}

int siox__conn_fd(void) {
  return sock;
}

size_t siox__conn_pending(void) {
  return slen - ssent;
}

uint64_t siox__conn_bytes_sent(void) {
  return atomic_load(&bytes_sent);
}

uint64_t siox__conn_reg_shipped(void) {
  return reg_shipped;
}

/* The registration bytes up to reg_end count as shipped once everything now
 * in the send buffer is written; a lost connection re-sends them. */
void siox__conn_reg_inflight(uint64_t reg_end) {
  reg_inflight = reg_end;
  reg_pending = 1;
}

/* Returns a pointer to `payload` bytes for the caller to fill, after a frame
 * header already written; NULL when out of memory. */
uint8_t *siox__conn_frame(uint16_t type, uint32_t payload) {
  size_t need = slen + sizeof(struct siox_cw_frame_hdr) + payload;
  if (need > scap) {
    size_t cap = scap ? scap : 65536;
    while (cap < need) cap *= 2;
    uint8_t *p = realloc(sbuf, cap);
    if (!p) return NULL;
    sbuf = p;
    scap = cap;
  }
  struct siox_cw_frame_hdr h = {SIOX_CW_MAGIC, SIOX_CW_VERSION, type, payload, 0};
  memcpy(sbuf + slen, &h, sizeof h);
  slen = need;
  return sbuf + need - payload;
}

/* Counts the activity-ring records in frames not fully written: they are
 * lost with the connection (registration frames are re-sent instead). */
static uint64_t unsent_records(void) {
  uint64_t lost = 0;
  for (size_t off = 0; off + sizeof(struct siox_cw_frame_hdr) <= slen;) {
    struct siox_cw_frame_hdr h;
    memcpy(&h, sbuf + off, sizeof h);
    size_t end = off + sizeof h + h.length;
    struct siox_cw_batch b;
    memcpy(&b, sbuf + off + sizeof h, h.type == SIOX_CW_BATCH ? sizeof b : 0);
    if (end > ssent && h.type == SIOX_CW_BATCH && b.thread != 0)
      for (size_t r = off + sizeof h + sizeof b; r < end; lost++) {
        struct siox_cw_rec_hdr rh;
        memcpy(&rh, sbuf + r, sizeof rh);
        r += (size_t)rh.words * 8;
      }
    off = end;
  }
  return lost;
}

void siox__conn_close(void) {
  if (sock < 0) return;
  for (uint64_t n = unsent_records(); n > 0; n--) siox__count_drop_global();
  close(sock);
  sock = -1;
  slen = ssent = 0;
  reg_pending = 0;
  /* The next connection may be a new daemon session, which validates each
   * activity against the nodes and types this process registered on it:
   * re-send the whole registration log there (the server's upserts make
   * the repeat harmless). */
  reg_shipped = 0;
  atomic_store(&connected, 0);
}

static int open_socket(void) {
  struct sockaddr_un sa = {.sun_family = AF_UNIX};
  memcpy(sa.sun_path, siox__cfg.socket_path, sizeof sa.sun_path);
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return -errno;
  /* A unix connect either completes at once or fails (EAGAIN: backlog full). */
  if (connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
    int err = errno;
    close(fd);
    return -err;
  }
  return fd;
}

/* Connects unless connected or a try was made less than a second ago
 * (force: try now). Queues HELLO first. Returns 0 when connected. */
int siox__conn_try_connect(int force) {
  if (sock >= 0) return 0;
  int64_t now = mono_ns();
  if (!force && now - last_try < RETRY_NS) return -EAGAIN;
  last_try = now;
  int fd = open_socket();
  if (fd < 0) return fd;
  uint8_t *hello;
  uint32_t len;
  int rc = siox__hello_build(&hello, &len);
  uint8_t *p = rc == 0 ? siox__conn_frame(SIOX_CW_HELLO, len) : NULL;
  if (!p) {
    free(rc == 0 ? hello : NULL);
    close(fd);
    slen = ssent = 0;
    return -ENOMEM;
  }
  memcpy(p, hello, len);
  free(hello);
  sock = fd;
  atomic_store(&connected, 1);
  return 0;
}

/* Writes what the socket takes now. Returns 0 (maybe with bytes left), or a
 * negative errno after the connection was lost and closed. */
int siox__conn_write(void) {
  while (sock >= 0 && ssent < slen) {
    ssize_t n = send(sock, sbuf + ssent, slen - ssent, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      ssent += (size_t)n;
      atomic_fetch_add(&bytes_sent, (uint64_t)n);
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      return 0;
    } else {
      int err = n < 0 ? -errno : -EPIPE;
      siox__conn_close();
      return err;
    }
  }
  if (sock >= 0 && ssent == slen) {
    slen = ssent = 0;
    if (reg_pending) reg_shipped = reg_inflight;
    reg_pending = 0;
  }
  return sock >= 0 ? 0 : -ENOTCONN;
}

/* The child of fork() shares the parent's socket: drop our copy of it and
 * of the unsent bytes (the parent sends them), and re-ship registrations. */
void siox__conn_after_fork_child(void) {
  if (sock >= 0) close(sock);
  sock = -1;
  slen = ssent = 0;
  reg_shipped = reg_inflight = 0;
  reg_pending = 0;
  last_try = INT64_MIN / 2;
  atomic_store(&bytes_sent, 0);
  atomic_store(&connected, 0);
}

/* The daemon sends nothing; readable means it closed or failed. */
void siox__conn_check_peer(void) {
  char scratch[256];
  if (sock < 0) return;
  ssize_t n = recv(sock, scratch, sizeof scratch, MSG_DONTWAIT);
  if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) siox__conn_close();
}
