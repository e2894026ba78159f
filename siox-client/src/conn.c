/*
 * The connection to the node daemon: a nonblocking unix stream socket and
 * one send buffer of whole frames. Only the flusher thread calls in here
 * (or, once it has stopped, the exiting thread), except for
 * siox__conn_offer: the socket itself is made by an application thread
 * (own_fd.c says why) and handed over through `offered`.
 * A frame is appended whole and written in as many send() calls as the
 * socket needs, so frames never interleave and partial writes resume.
 * Written activity frames are held (retain.c) until the daemon's ACK says
 * it has them; the daemon sends nothing else on this connection.
 */
#include <poll.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "client.h"

/* Reconnect at most 10 times a second: a restarted daemon (kill -9, then
 * the service manager) is found before the rings overflow, and a connect()
 * to a missing socket costs microseconds. */
#define RETRY_NS 100000000ll
/* A connection lost this recently: the daemon is probably restarting, and
 * a flush waiting for it keeps trying until its own timeout. */
#define RESTART_GRACE_NS 5000000000ll

static int sock = -1;
static int sock_private; /* sock is in the flusher's own table only (own_table.c) */
static _Atomic int offered = -1; /* connected, made by an application thread, not yet taken */
static uint8_t *sbuf; /* owned: frames not yet fully written */
static size_t slen, ssent, scap;
static uint64_t reg_shipped;  /* registration log bytes the daemon has */
static uint64_t reg_inflight; /* ... once the current buffer is written */
static int reg_pending;
static int64_t last_try = INT64_MIN / 2;
static _Atomic uint64_t bytes_sent;
static _Atomic int connected;
static int64_t last_up = INT64_MIN / 2; /* when a connection was last up */
static uint64_t stream_base; /* stream bytes before sbuf[0], this connection */
static uint64_t acked;       /* stream bytes the daemon has taken (ACK) */
static uint8_t rbuf[4 * sizeof(struct siox_cw_frame_hdr)]; /* ACK frames being read */
static size_t rlen;

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

/* Everything written on this connection has been acknowledged. */
int siox__conn_all_acked(void) {
  return sock >= 0 && slen == 0 && acked >= stream_base;
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
 * header already written (seq: siox_cw_frame_hdr.seq); NULL when out of
 * memory. */
uint8_t *siox__conn_frame_seq(uint16_t type, uint32_t payload, uint32_t seq) {
  size_t need = slen + sizeof(struct siox_cw_frame_hdr) + payload;
  if (need > scap) {
    size_t cap = scap ? scap : 4096; /* a short-lived process sends a few records: one heap page */
    while (cap < need) cap *= 2;
    uint8_t *p = realloc(sbuf, cap);
    if (!p) return NULL;
    sbuf = p;
    scap = cap;
  }
  struct siox_cw_frame_hdr h = {SIOX_CW_MAGIC, SIOX_CW_VERSION, type, payload, seq};
  memcpy(sbuf + slen, &h, sizeof h);
  slen = need;
  return sbuf + need - payload;
}

uint8_t *siox__conn_frame(uint16_t type, uint32_t payload) {
  return siox__conn_frame_seq(type, payload, 0);
}

int siox__conn_recently_up(void) {
  return mono_ns() - last_up < RESTART_GRACE_NS;
}

/* Closes the connection's socket in the calling thread's table. A flusher
 * with its own table closes its own copy of a shared socket, shuts the
 * connection down (the application's copy would keep it open) and leaves
 * that copy to an application thread (own_table.c). Raw closes there: the
 * POSIX layer's close() would take the number for the application's. */
static void release_socket(void) {
  if (sock_private) {
    syscall(SYS_close, sock);
  } else if (siox__own_table) {
    shutdown(sock, SHUT_RDWR);
    syscall(SYS_close, sock);
    siox__own_fd_stale(sock);
    siox__own_fd_drop(SIOX__FD_SOCKET);
  } else {
    siox__own_fd_drop(SIOX__FD_SOCKET);
    close(sock);
  }
  sock_private = 0;
}

/* The connection is gone: every activity frame not acknowledged, held or
 * still in the send buffer, is sent again on the next connection, after the
 * whole registration log (the daemon may have lost any of it). */
void siox__conn_close(void) {
  if (sock < 0) return;
  last_up = mono_ns();
  siox__retain_lost(sbuf, slen);
  release_socket();
  sock = -1;
  slen = ssent = 0;
  rlen = 0;
  reg_pending = 0;
  /* The next connection may be a new daemon session, which validates each
   * activity against the nodes and types this process registered on it:
   * re-send the whole registration log there (the server's upserts make
   * the repeat harmless). */
  reg_shipped = reg_inflight = 0;
  atomic_store(&connected, 0);
}

/* Connects fd to the daemon; 0 or -errno. A unix connect either completes
 * at once or fails (EAGAIN: backlog full). */
static int connect_daemon(int fd) {
  struct sockaddr_un sa = {.sun_family = AF_UNIX};
  memcpy(sa.sun_path, siox__cfg.socket_path, sizeof sa.sun_path);
  return connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0 ? -errno : 0;
}

/* The socket's send buffer, asked for at 1 MiB (the kernel doubles it,
 * capped at net.core.wmem_max). A unix stream socket holds at most its
 * sender's buffer, by default 208 KiB: the daemon read that much per
 * wake-up, and a streaming client moved its records in 208 KiB steps,
 * each a wake-up of the flusher and one of the daemon; under load those
 * waits, not the daemon's CPU, set the rate, and the ring filled (counted
 * drops in bench/bench_daemon_cpu.sh at load 15-30). Best effort: a
 * refusal leaves the default. */
#define SNDBUF_BYTES (1 << 20)

static int new_fd(void) {
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0), v = SNDBUF_BYTES;
  if (fd >= 0) (void)setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &v, sizeof v);
  return fd;
}

/* A connected socket, high and guarded as slot (own_fd.c), or -errno. */
static int open_socket(int slot) {
  int fd = new_fd();
  if (fd < 0) return -errno;
  fd = siox__own_fd_take(slot, fd);
  int rc = connect_daemon(fd);
  if (rc < 0) {
    siox__own_fd_drop(slot);
    close(fd);
    return rc;
  }
  return fd;
}

/* The flusher with its own table: a connected socket there, at whatever
 * number (the application's numbers are not in that table), or -errno. */
static int open_private_socket(void) {
  int fd = new_fd();
  if (fd < 0) return -errno;
  int rc = connect_daemon(fd);
  if (rc < 0) {
    syscall(SYS_close, fd);
    return rc;
  }
  return fd;
}

/* Application threads: a connected socket for the flusher to take, unless
 * one waits or the connection is up. Without a daemon, nothing is offered
 * and the flusher asks again RETRY_NS later. Returns 1 when this call
 * offered a socket (the flusher is worth waking), else 0. */
int siox__conn_offer(void) {
  if (atomic_load(&connected) || atomic_load(&offered) >= 0) return 0;
  int fd = open_socket(SIOX__FD_OFFER), none = -1;
  if (fd < 0) return 0;
  if (!atomic_compare_exchange_strong(&offered, &none, fd)) { /* another offer won */
    siox__own_fd_drop(SIOX__FD_OFFER);
    close(fd);
    return 0;
  }
  return 1;
}

/* A socket for a new connection: the one offered, else (may_open) a new
 * one, else a request to the application threads for one. Returns the fd
 * or a negative errno; *priv is set when it is in the flusher's own table
 * only (the one offered was made before that table was copied). */
static int new_socket(int force, int may_open, int *priv) {
  *priv = 0;
  int fd = atomic_exchange(&offered, -1);
  if (fd >= 0) {
    siox__own_fd_set(SIOX__FD_SOCKET, fd); /* guarded as the connection from now on */
    siox__own_fd_drop(SIOX__FD_OFFER);
    return fd;
  }
  int64_t now = mono_ns();
  if (!force && now - last_try < RETRY_NS) return -EAGAIN;
  last_try = now;
  if (!may_open) {
    atomic_store(&siox__fd_wanted, 1);
    return -EAGAIN;
  }
  if (siox__own_table) {
    *priv = 1;
    return open_private_socket();
  }
  siox__identity_prepare();
  return open_socket(SIOX__FD_SOCKET);
}

/* Connects unless connected or a try was made less than RETRY_NS ago
 * (force: try now). Queues HELLO first. Returns 0 when connected. */
int siox__conn_try_connect(int force, int may_open) {
  if (sock >= 0) return 0;
  int priv;
  int fd = new_socket(force, may_open, &priv);
  if (fd < 0) return fd;
  uint8_t *hello;
  uint32_t len;
  int rc = siox__hello_build(&hello, &len);
  uint8_t *p = rc == 0 ? siox__conn_frame(SIOX_CW_HELLO, len) : NULL;
  if (!p) {
    free(rc == 0 ? hello : NULL);
    sock = fd;
    sock_private = priv;
    release_socket();
    sock = -1;
    slen = ssent = 0;
    return -ENOMEM;
  }
  memcpy(p, hello, len);
  free(hello);
  sock = fd;
  sock_private = priv;
  stream_base = acked = 0;
  rlen = 0;
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
    siox__retain_written(sbuf, slen, stream_base);
    stream_base += slen;
    siox__retain_ack(acked); /* ACKs may have come while the buffer was being written */
    slen = ssent = 0;
    if (reg_pending) reg_shipped = reg_inflight;
    reg_pending = 0;
  }
  return sock >= 0 ? 0 : -ENOTCONN;
}

/* The child of fork() shares the parent's socket: drop our copy of it and
 * of the unsent bytes (the parent sends them), and re-ship registrations. */
void siox__conn_after_fork_child(void) {
  siox__own_fd_drop(SIOX__FD_SOCKET);
  /* A socket in the flusher's own table is not in the child's: that
   * number may be one of the application's. */
  if (sock >= 0 && !sock_private) close(sock);
  sock_private = 0;
  int o = atomic_exchange(&offered, -1);
  siox__own_fd_drop(SIOX__FD_OFFER);
  if (o >= 0) close(o);
  sock = -1;
  slen = ssent = 0;
  reg_shipped = reg_inflight = 0;
  reg_pending = 0;
  rlen = 0;
  siox__retain_clear();
  last_try = INT64_MIN / 2;
  atomic_store(&bytes_sent, 0);
  atomic_store(&connected, 0);
}

/* The flusher with its own table, before it ends: a socket only it holds
 * dies with it, so it is closed now (frames not acknowledged are sent
 * again on the next connection, which the exiting thread makes). */
void siox__conn_close_private(void) {
  if (sock >= 0 && sock_private) siox__conn_close();
}

/* Takes the ACK frames in rbuf; returns -EBADMSG on anything else. */
static int take_acks(void) {
  size_t off = 0;
  const size_t ack_len = sizeof(struct siox_cw_frame_hdr) + sizeof(struct siox_cw_ack);
  while (rlen - off >= ack_len) {
    struct siox_cw_frame_hdr h;
    struct siox_cw_ack a;
    memcpy(&h, rbuf + off, sizeof h);
    if (h.magic != SIOX_CW_MAGIC || h.type != SIOX_CW_ACK || h.length != sizeof a) return -EBADMSG;
    memcpy(&a, rbuf + off + sizeof h, sizeof a);
    siox__retain_ack(a.consumed);
    if (a.consumed > acked) acked = a.consumed;
    off += ack_len;
  }
  memmove(rbuf, rbuf + off, rlen - off);
  rlen -= off;
  return 0;
}

/* Reads the daemon's ACKs; end of stream or an error means it closed or
 * failed. */
void siox__conn_check_peer(void) {
  while (sock >= 0) {
    size_t room = sizeof rbuf - rlen;
    ssize_t n = recv(sock, rbuf + rlen, room, MSG_DONTWAIT);
    if (n > 0) {
      rlen += (size_t)n;
      if (take_acks() < 0) siox__conn_close(); /* not a daemon we understand */
      /* Less than asked for: a unix stream socket's recv takes all it
       * holds, so it is empty now; one more recv would only say EAGAIN
       * (a system call in every flusher cycle). */
      if ((size_t)n < room) return;
      continue;
    }
    if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) siox__conn_close();
    return;
  }
}

/* Exit, the flusher stopped: queues one last STATS and waits up to
 * timeout_ms for everything to be written and acknowledged. Returns 1 when
 * the daemon has it all, else 0 (the connection is still open). */
int siox__conn_handover(const struct siox_cw_stats *st, unsigned timeout_ms) {
  if (sock < 0) return 0;
  uint8_t *p = siox__conn_frame(SIOX_CW_STATS, sizeof *st);
  if (!p) return 0;
  memcpy(p, st, sizeof *st);
  int64_t end = mono_ns() + (int64_t)timeout_ms * 1000000;
  while (sock >= 0 && !siox__conn_all_acked()) {
    int64_t left = end - mono_ns();
    if (left <= 0 || siox__conn_write() < 0) return 0;
    struct pollfd pf = {sock, siox__conn_pending() ? POLLOUT : POLLIN, 0};
    if (poll(&pf, 1, (int)(left / 1000000) + 1) > 0 && pf.revents & (POLLIN | POLLHUP | POLLERR))
      siox__conn_check_peer();
  }
  return sock >= 0;
}
