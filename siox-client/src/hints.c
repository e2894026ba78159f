/*
 * Hint query: the client end of hint delivery. Called by the MPI-IO layer
 * at MPI_File_open (on the application's thread, so everything here is
 * bounded by one deadline): a short unix-socket connection to the daemon,
 * one SIOX_CW_HINTS frame out, one back (protocol/siox_client_wire.h). A
 * daemon that is gone, stopped or slow costs at most the timeout.
 */
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "client.h"

#define ARGS_CAP 32768u /* identity.c's HELLO limit: the same bytes, the same app */

_Static_assert((int)SIOX_HINT_NONE == (int)SIOX_HINTS_NONE && (int)SIOX_HINT_FOUND == (int)SIOX_HINTS_FOUND &&
                   (int)SIOX_HINT_SERVER_DOWN == (int)SIOX_HINTS_SERVER_DOWN && (int)SIOX_HINT_DISABLED == (int)SIOX_HINTS_DISABLED &&
                   (int)SIOX_HINT_ERROR == (int)SIOX_HINTS_ERROR && (int)SIOX_HINT_TIMEOUT == (int)SIOX_HINTS_TIMEOUT &&
                   (int)SIOX_HINT_NO_DAEMON == (int)SIOX_HINTS_NO_DAEMON,
               "siox_internal.h mirrors the wire's status values");
_Static_assert(SIOX_HINT_MAX == SIOX_CW_MAX_HINTS, "hint count");

const char *siox_hint_status_name(int status) {
  static const char *const names[] = {"none", "found", "server-down", "disabled", "error", "timeout", "no-daemon"};
  return status >= 0 && status < (int)(sizeof names / sizeof names[0]) ? names[status] : "error";
}

static int64_t mono_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Waits for events on fd until the deadline: 1 ready, 0 timed out, -1 error. */
static int wait_fd(int fd, short events, int64_t deadline) {
  for (;;) {
    int64_t left = deadline - mono_ms();
    if (left <= 0) return 0;
    struct pollfd p = {.fd = fd, .events = events};
    int rc = poll(&p, 1, (int)left);
    if (rc > 0) return 1;
    if (rc == 0) return 0;
    if (errno != EINTR) return -1;
  }
}

/* Connects to the daemon socket: SIOX_HINT_FOUND stands for "connected". */
static int connect_daemon(int fd, int64_t deadline) {
  const char *path = siox__cfg.socket_path[0] ? siox__cfg.socket_path : getenv(SIOX_ENV_SOCKET);
  struct sockaddr_un sa = {.sun_family = AF_UNIX};
  if (!path || !*path) path = SIOX_DEFAULT_SOCKET;
  if (strlen(path) >= sizeof sa.sun_path) return SIOX_HINT_NO_DAEMON;
  strcpy(sa.sun_path, path);
  for (;;) {
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0) return SIOX_HINT_FOUND;
    /* A unix socket says EAGAIN while the listener's backlog is full (a
     * stopped daemon accepts nothing): try again until the deadline. */
    if (errno != EAGAIN && errno != EINTR) return SIOX_HINT_NO_DAEMON;
    if (mono_ms() >= deadline) return SIOX_HINT_TIMEOUT;
    poll(NULL, 0, 10);
  }
}

/* Moves n bytes in or out (dir 0: send) before the deadline: 0, or a status. */
static int move_all(int fd, uint8_t *p, size_t n, int dir, int64_t deadline) {
  while (n > 0) {
    ssize_t k = dir == 0 ? send(fd, p, n, MSG_NOSIGNAL) : recv(fd, p, n, 0);
    if (k > 0) {
      p += k;
      n -= (size_t)k;
      continue;
    }
    if (k == 0) return SIOX_HINT_ERROR; /* the daemon hung up mid-answer */
    if (errno == EINTR) continue;
    if (errno != EAGAIN) return SIOX_HINT_ERROR;
    int w = wait_fd(fd, dir == 0 ? POLLOUT : POLLIN, deadline);
    if (w <= 0) return w == 0 ? SIOX_HINT_TIMEOUT : SIOX_HINT_ERROR;
  }
  return 0;
}

/* The request frame (malloc'd, caller frees) for this process's identity. */
static uint8_t *build_query(const char *path, const char *component, size_t *len) {
  char exe[4096];
  ssize_t exe_len = readlink("/proc/self/exe", exe, sizeof exe);
  if (exe_len < 0 || exe_len == (ssize_t)sizeof exe) exe_len = 0;
  size_t plen = strlen(path), clen = strlen(component);
  size_t fixed = sizeof(struct siox_cw_frame_hdr) + sizeof(struct siox_cw_hint_query);
  uint8_t *buf = malloc(fixed + (size_t)exe_len + ARGS_CAP + plen + clen);
  if (!buf) return NULL;
  char *s = (char *)buf + fixed;
  memcpy(s, exe, (size_t)exe_len);
  size_t alen = siox__identity_args(s + exe_len, ARGS_CAP);
  memcpy(s + exe_len + alen, path, plen);
  memcpy(s + exe_len + alen + plen, component, clen);
  struct siox_cw_hint_query q = {(uint16_t)exe_len, (uint16_t)alen, (uint16_t)plen, (uint16_t)clen};
  *len = fixed + (size_t)exe_len + alen + plen + clen;
  struct siox_cw_frame_hdr h = {SIOX_CW_MAGIC, SIOX_CW_VERSION, SIOX_CW_HINTS,
                                (uint32_t)(*len - sizeof h), 0};
  memcpy(buf, &h, sizeof h);
  memcpy(buf + sizeof h, &q, sizeof q);
  return buf;
}

/* Reads and checks the answer frame into *out: 0, or a status. */
static int read_answer(int fd, int64_t deadline, struct siox_hint_answer *out) {
  struct siox_cw_frame_hdr h;
  struct siox_cw_hint_reply r;
  int rc = move_all(fd, (uint8_t *)&h, sizeof h, 1, deadline);
  if (rc) return rc;
  if (h.magic != SIOX_CW_MAGIC || h.version != SIOX_CW_VERSION || h.type != SIOX_CW_HINTS || h.length < sizeof r)
    return SIOX_HINT_ERROR;
  if ((rc = move_all(fd, (uint8_t *)&r, sizeof r, 1, deadline))) return rc;
  if (r.n > SIOX_HINT_MAX || h.length != sizeof r + r.n * sizeof(struct siox_cw_hint) || r.status > SIOX_HINT_ERROR)
    return SIOX_HINT_ERROR;
  struct siox_cw_hint hs[SIOX_CW_MAX_HINTS];
  if ((rc = move_all(fd, (uint8_t *)hs, r.n * sizeof hs[0], 1, deadline))) return rc;
  out->status = (int)r.status;
  out->hint_set_id = r.hint_set_id;
  memcpy(out->component, r.component, sizeof out->component);
  out->component[sizeof out->component - 1] = '\0';
  for (uint32_t i = 0; i < r.n; i++) {
    memcpy(out->hints[i].key, hs[i].key, sizeof hs[i].key);
    memcpy(out->hints[i].value, hs[i].value, sizeof hs[i].value);
    out->hints[i].key[sizeof hs[i].key - 1] = out->hints[i].value[sizeof hs[i].value - 1] = '\0';
  }
  out->n = r.n;
  return 0;
}

static int ask(const char *path, const char *component, int64_t deadline, struct siox_hint_answer *out) {
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return SIOX_HINT_ERROR;
  size_t len = 0;
  uint8_t *q = NULL;
  int rc = connect_daemon(fd, deadline);
  if (rc == SIOX_HINT_FOUND) rc = (q = build_query(path, component, &len)) ? 0 : SIOX_HINT_ERROR;
  if (rc == 0) rc = move_all(fd, q, len, 0, deadline);
  if (rc == 0) rc = read_answer(fd, deadline, out);
  free(q);
  close(fd);
  return rc;
}

int siox_hints_query(const char *path, const char *component, unsigned timeout_ms, struct siox_hint_answer *out) {
  if (!path || !component || !out || strlen(path) >= SIOX_CW_MAX_VALUE || strlen(component) >= 32) return -EINVAL;
  memset(out, 0, sizeof *out);
  int64_t deadline = mono_ms() + (int64_t)timeout_ms;
  /* Our own socket traffic is not the application's I/O. */
  siox__in_lib++;
  int rc = ask(path, component, deadline, out);
  siox__in_lib--;
  if (rc) {
    memset(out, 0, sizeof *out);
    out->status = rc;
  }
  return 0;
}
