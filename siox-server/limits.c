/*
 * The server's memory and connection bounds (--memory-mb): what one peer,
 * authenticated or not, may make the server hold. Every limit a hostile or
 * broken peer could otherwise push to gigabytes lives here, so that net.c and
 * session.c only ask one question each:
 *   - how large a frame may this connection send (before authentication a
 *     Hello is tiny, so 64 KiB);
 *   - may this connection's buffer grow for a large frame (a global input
 *     budget shared by all connections);
 *   - may one more batch be decoded now (a few decode slots, each with an
 *     absolute memory bound passed to siox_block_decode_limited, held until
 *     the decoded block has been stored);
 *   - may one more connection be accepted (below the fd limit; when full the
 *     oldest unauthenticated connection makes room, and a refusal is logged);
 *   - has a connection said Hello in time, and does its frame progress.
 * The arithmetic is in siox-server/README.md ("Memory and connection bounds").
 */
#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "server.h"
#include "siox_frame.h"

#define PREAUTH_FRAME_MAX (64u << 10) /* a Hello, Ping or StatusRequest is < 1 KiB */
#define HELLO_TIMEOUT_NS (10 * 1000000000LL)
#define FRAME_TIMEOUT_NS (30 * 1000000000LL)
#define SWEEP_MS 1000
#define FD_RESERVE 64            /* PostgreSQL connections, log, epoll, signals, threadpool */
#define CONN_COST (192u << 10)   /* buffer (up to SIOX_CONN_SMALL_BUF) + write queue (SIOX_CONN_WRITE_MAX) */
#define DECODE_SLOTS 4
#define PER_ADDR_UNAUTH 64       /* connections without Hello from one address */
#define LOG_EVERY_NS 1000000000LL /* at most one refusal line per second, with the count since */

static int64_t mono_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t siox_limits_now(void) { return mono_ns(); }

/* The soft fd limit raised to the hard one: connections are bounded below
 * it by max_conns, not by accept() failing. */
static long raise_nofile(void) {
  struct rlimit r;
  if (getrlimit(RLIMIT_NOFILE, &r) != 0) return 1024;
  if (r.rlim_cur < r.rlim_max) {
    r.rlim_cur = r.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &r) != 0) getrlimit(RLIMIT_NOFILE, &r);
  }
  return r.rlim_cur == RLIM_INFINITY || r.rlim_cur > 1000000 ? 1000000 : (long)r.rlim_cur;
}

static void sweep(uv_timer_t *t);

void siox_limits_init(struct siox_server *s) {
  struct siox_limits *l = &s->lim;
  size_t m = (size_t)s->opt->memory_mb << 20;
  l->memory = m;
  /* M/2 for decoding: DECODE_SLOTS slots of M/8, each the max_mem of one
   * siox_block_decode_limited: the raw block and protobuf-c's allocations,
   * then the decoded block (about as large as the latter) that waits for
   * the database while the slot is held. A 64k-activity batch with 8
   * attributes needs 32 MiB, hence --memory-mb >= 256. */
  l->decode_slots = DECODE_SLOTS;
  l->decode_mem = m / 2 / DECODE_SLOTS;
  /* M/8 for frames larger than a connection's small buffer. */
  l->input_budget = m / 8;
  /* M/4 for connections at CONN_COST each, and never closer than FD_RESERVE
   * to the fd limit. */
  long nofile = raise_nofile();
  long by_fd = nofile - FD_RESERVE, by_mem = (long)(m / 4 / CONN_COST);
  l->max_conns = by_fd < by_mem ? by_fd : by_mem;
  if (l->max_conns < 8) l->max_conns = 8;
  uv_timer_init(s->loop, &l->sweep);
  l->sweep.data = s;
  uv_timer_start(&l->sweep, sweep, SWEEP_MS, SWEEP_MS);
  siox_log("memory bound %zu MiB: %d decode slots of %zu MiB, %zu MiB for large frames, at most %d connections"
           " (fd limit %ld)",
           m >> 20, l->decode_slots, l->decode_mem >> 20, l->input_budget >> 20, l->max_conns, nofile);
}

void siox_limits_stop(struct siox_server *s) {
  if (!uv_is_closing((uv_handle_t *)&s->lim.sweep)) uv_close((uv_handle_t *)&s->lim.sweep, NULL);
}

/* ---- frames and buffers ---------------------------------------------------- */

size_t siox_limits_frame_max(const struct siox_conn *c) {
  return c->authenticated ? SIOX_FRAME_MAX_PAYLOAD : PREAUTH_FRAME_MAX;
}

int siox_limits_grow(struct siox_conn *c, size_t need) {
  struct siox_limits *l = &c->srv->lim;
  if (need <= SIOX_CONN_SMALL_BUF || need <= c->granted) return 0;
  size_t more = need - (c->granted > SIOX_CONN_SMALL_BUF ? c->granted : SIOX_CONN_SMALL_BUF);
  if (l->input_used + more > l->input_budget) return -ENOBUFS;
  l->input_used += more;
  c->granted = need;
  return 0;
}

void siox_limits_shrunk(struct siox_conn *c) {
  if (c->granted > SIOX_CONN_SMALL_BUF) c->srv->lim.input_used -= c->granted - SIOX_CONN_SMALL_BUF;
  c->granted = 0;
}

/* ---- decode slots ------------------------------------------------------------ */

void siox_limits_decode_acquire(struct siox_server *s, struct siox_decode_wait *w) {
  struct siox_limits *l = &s->lim;
  w->next = NULL;
  if (l->decodes_busy < l->decode_slots && !l->wait_head) {
    l->decodes_busy++;
    w->start(w);
    return;
  }
  /* FIFO over all connections: an earlier batch of a connection always gets
   * its slot before a later one, which decode_done waits for. */
  if (l->wait_tail) l->wait_tail->next = w;
  else l->wait_head = w;
  l->wait_tail = w;
}

void siox_limits_decode_release(struct siox_server *s) {
  struct siox_limits *l = &s->lim;
  l->decodes_busy--;
  l->worked = 1;
  struct siox_decode_wait *w = l->wait_head;
  if (!w) return;
  if (!(l->wait_head = w->next)) l->wait_tail = NULL;
  l->decodes_busy++;
  w->start(w);
}

/* ---- connections ------------------------------------------------------------ */

/* One line per second at most, saying how many were refused since. */
static void log_limited(struct siox_limits *l, const char *what, const char *peer) {
  int64_t now = mono_ns();
  l->unlogged++;
  if (now - l->last_log_ns < LOG_EVERY_NS) return;
  siox_log("connection limit (%d, %d without Hello per address): %s %s (%llu such since the last line)",
           l->max_conns, PER_ADDR_UNAUTH, what, peer, (unsigned long long)l->unlogged);
  l->last_log_ns = now;
  l->unlogged = 0;
}

/* Length of the address part of a peer name "ADDR:PORT". */
static size_t addr_len(const char *peer) {
  const char *colon = strrchr(peer, ':');
  return colon ? (size_t)(colon - peer) : strlen(peer);
}

/* The oldest connection without a Hello, from c's address only (same) or
 * from anywhere; *n counts those from c's address. */
static struct siox_conn *oldest_unauth(struct siox_server *s, const struct siox_conn *c, int same, int *n) {
  struct siox_conn *oldest = NULL;
  size_t al = addr_len(c->peer);
  *n = 0;
  for (struct siox_conn *o = s->conns; o; o = o->next) { /* the list is newest first */
    if (o->authenticated) continue;
    int mine = addr_len(o->peer) == al && memcmp(o->peer, c->peer, al) == 0;
    *n += mine;
    if (mine || !same) oldest = o;
  }
  return oldest;
}

int siox_limits_admit(struct siox_server *s, struct siox_conn *c) {
  struct siox_limits *l = &s->lim;
  int n;
  c->accepted_ns = mono_ns();
  /* One address may not hold more than PER_ADDR_UNAUTH connections without
   * a Hello: a flood from one host evicts its own, not another host's. */
  struct siox_conn *own = oldest_unauth(s, c, 1, &n);
  if (n >= PER_ADDR_UNAUTH && own) {
    s->n.connections_evicted++;
    log_limited(l, "too many connections without Hello from one address; closing", own->peer);
    siox_conn_close(own);
  }
  if (s->n.connections < l->max_conns) return 1;
  struct siox_conn *oldest = oldest_unauth(s, c, 0, &n);
  if (!oldest) {
    s->n.connections_refused++;
    log_limited(l, "all connections authenticated; refusing", c->peer);
    return 0;
  }
  s->n.connections_evicted++;
  log_limited(l, "closing the oldest unauthenticated connection,", oldest->peer);
  siox_conn_close(oldest);
  return 1;
}

static void expire(struct siox_server *s, int64_t now) {
  struct siox_conn *next;
  for (struct siox_conn *c = s->conns; c; c = next) {
    next = c->next; /* closing unlinks c */
    if (!c->authenticated && now - c->accepted_ns > HELLO_TIMEOUT_NS) {
      s->n.connections_timed_out++;
      siox_log("%s: no Hello within %lld s; closing", c->peer, HELLO_TIMEOUT_NS / 1000000000);
      siox_conn_close(c);
    } else if (c->len && c->uv_reading && now - c->frame_start_ns > FRAME_TIMEOUT_NS) {
      s->n.connections_timed_out++;
      char why[128];
      snprintf(why, sizeof why, "frame still incomplete after %lld s (%zu bytes received)",
               FRAME_TIMEOUT_NS / 1000000000, c->len);
      siox_conn_refuse(c, SIOX__ERROR_KIND__ERROR_RETRY_LATER, 0, why); /* a timeout, not a malformed frame */
    }
  }
}

/* After a burst the freed batch memory stays in malloc's arenas: give it back
 * once the server is idle. */
static void trim_when_idle(struct siox_limits *l) {
  if (l->worked || l->decodes_busy) {
    l->worked = 0;
    l->trim_due = 1; /* trim after a whole sweep period without a batch */
    return;
  }
  if (!l->trim_due) return;
  l->trim_due = 0;
  malloc_trim(0);
}

static void sweep(uv_timer_t *t) {
  struct siox_server *s = t->data;
  expire(s, mono_ns());
  trim_when_idle(&s->lim);
}
