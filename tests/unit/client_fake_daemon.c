/*
 * Test-side stand-in for siox-daemon (see client_fake_daemon.h): it sits
 * where the daemon sits on the client's data path, reads frames from every
 * connected client, validates them strictly and keeps decoded records.
 */
#include "client_fake_daemon.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define MAX_CLIENTS 32
#define PAD8(n) (((size_t)(n) + 7u) & ~(size_t)7u)

struct client {
  int fd;
  uint8_t *buf;
  size_t len, cap;
  int hello;
  size_t conn; /* index into d->conns */
  uint64_t nonce, tsc0;
  int64_t ns0;
  uint32_t flags;
  uint64_t consumed; /* stream bytes taken, for ACK */
  uint32_t *types;   /* activity types registered on this connection */
  size_t ntypes, types_cap;
};

/* As siox-daemon's validation does: an activity is only good if its type
 * was registered on the same connection, before it. */
static int type_known(const struct client *c, uint32_t type) {
  for (size_t i = 0; i < c->ntypes; i++)
    if (c->types[i] == type) return 1;
  return 0;
}

static void type_add(struct client *c, uint32_t type) {
  if (type_known(c, type)) return;
  if (c->ntypes == c->types_cap) {
    c->types_cap = c->types_cap ? c->types_cap * 2 : 16;
    c->types = realloc(c->types, c->types_cap * sizeof *c->types);
  }
  c->types[c->ntypes++] = type;
}

static void bad(struct fake_daemon *d, const char *why) {
  d->bad_frames++;
  snprintf(d->bad_why, sizeof d->bad_why, "%s", why);
  fprintf(stderr, "fake daemon: %s\n", why);
}

static int64_t to_ns(const struct client *c, uint64_t t, uint64_t tsc_ref, int64_t ns_ref) {
  if (!(c->flags & SIOX_CW_CLOCK_TSC)) return (int64_t)t;
  if (tsc_ref == c->tsc0) return c->ns0;
  long double slope = (long double)(ns_ref - c->ns0) / (long double)(int64_t)(tsc_ref - c->tsc0);
  return c->ns0 + (int64_t)((long double)(int64_t)(t - c->tsc0) * slope);
}

static struct fk_reg *new_reg(struct fake_daemon *d, const struct client *c, uint16_t type, uint32_t a) {
  if (d->nregs == d->regs_cap) {
    d->regs_cap = d->regs_cap ? d->regs_cap * 2 : 256;
    d->regs = realloc(d->regs, d->regs_cap * sizeof *d->regs);
  }
  struct fk_reg *r = &d->regs[d->nregs++];
  memset(r, 0, sizeof *r);
  r->nonce = c->nonce;
  r->rtype = type;
  r->a = a;
  return r;
}

static void copy_str(char *dst, const uint8_t *src, size_t len) {
  if (len > 511) len = 511;
  memcpy(dst, src, len);
  dst[len] = '\0';
}

static int decode_activity(struct fake_daemon *d, const struct client *c, const struct siox_cw_batch *b,
                           uint32_t type, const uint8_t *p, size_t n) {
  struct siox_cw_activity a;
  if (n < sizeof a) return -1;
  memcpy(&a, p, sizeof a);
  if (a.nattr > SIOX_CW_MAX_ATTRS || n != sizeof a + a.nattr * sizeof(struct siox_cw_attr)) return -1;
  if (d->nacts == d->acts_cap) {
    d->acts_cap = d->acts_cap ? d->acts_cap * 2 : 4096;
    d->acts = realloc(d->acts, d->acts_cap * sizeof *d->acts);
  }
  struct fk_activity *x = &d->acts[d->nacts++];
  *x = (struct fk_activity){c->nonce, b->thread, type, a.aid, a.parent,
                            to_ns(c, a.t_start, b->tsc_ref, b->ns_ref), to_ns(c, a.t_end, b->tsc_ref, b->ns_ref),
                            a.err, a.nattr, {{0}}};
  memcpy(x->attrs, p + sizeof a, a.nattr * sizeof(struct siox_cw_attr));
  return 0;
}

static int decode_desc(struct fake_daemon *d, const struct client *c, uint32_t kind, const uint8_t *p, size_t n) {
  struct siox_cw_desc f;
  if (n < sizeof f) return -1;
  memcpy(&f, p, sizeof f);
  if (f.ndesc != (kind == SIOX_DESC_MAP ? 2u : 1u)) return -1;
  struct fk_reg *r = new_reg(d, c, SIOX_REC_DESC, kind);
  r->aid = f.aid, r->x = f.node, r->ndesc = f.ndesc, r->offset = f.offset, r->length = f.length;
  size_t off = sizeof f;
  for (uint32_t i = 0; i < f.ndesc; i++) {
    struct siox_cw_desc_value v;
    if (n - off < sizeof v) return -1;
    memcpy(&v, p + off, sizeof v);
    off += sizeof v;
    if (PAD8(v.len) > n - off) return -1;
    r->dtypes[i] = v.type;
    r->values[i] = v.value;
    copy_str(r->s[i], p + off, v.len);
    off += PAD8(v.len);
  }
  return off == n ? 0 : -1;
}

/* Strings back to back after a fixed part of flen bytes. */
static int take_strs(struct fk_reg *r, const uint8_t *p, size_t n, size_t flen, const uint32_t *lens, int k) {
  size_t off = flen;
  for (int i = 0; i < k; i++) {
    if (lens[i] > n - off) return -1;
    copy_str(r->s[i], p + off, lens[i]);
    off += lens[i];
  }
  return PAD8(off) == PAD8(n) ? 0 : -1;
}

static int decode_reg(struct fake_daemon *d, const struct client *c, uint16_t type, uint32_t a, const uint8_t *p,
                      size_t n) {
  struct fk_reg *r = new_reg(d, c, type, a);
  switch (type) {
  case SIOX_REC_NODE: {
    struct siox_cw_node f;
    if (n < sizeof f) return -1;
    memcpy(&f, p, sizeof f);
    uint32_t l[3] = {f.hwid_len, f.swid_len, f.iid_len};
    return take_strs(r, p, n, sizeof f, l, 3);
  }
  case SIOX_REC_TYPE: {
    struct siox_cw_type f;
    if (n < sizeof f) return -1;
    memcpy(&f, p, sizeof f);
    r->x = f.unid;
    return take_strs(r, p, n, sizeof f, &f.name_len, 1);
  }
  case SIOX_REC_TARGET: {
    struct siox_cw_target f;
    if (n < sizeof f) return -1;
    memcpy(&f, p, sizeof f);
    uint32_t l[2] = {f.hwid_len, f.swid_len};
    return take_strs(r, p, n, sizeof f, l, 2);
  }
  case SIOX_REC_EDGE: {
    struct siox_cw_edge f;
    if (n != sizeof f) return -1;
    memcpy(&f, p, sizeof f);
    r->x = f.to;
    return 0;
  }
  case SIOX_REC_NODE_ATTR: {
    struct siox_cw_attr f;
    if (n < sizeof f) return -1;
    memcpy(&f, p, sizeof f);
    r->x = f.attr;
    r->values[0] = f.v.u64;
    uint32_t l = (uint32_t)f.v.u64;
    return f.vtype == 3 ? take_strs(r, p, n, sizeof f, &l, 1) : (n == sizeof f ? 0 : -1);
  }
  case SIOX_REC_ATTR_STR: {
    struct siox_cw_attr_str f;
    if (n < sizeof f) return -1;
    memcpy(&f, p, sizeof f);
    r->aid = f.aid;
    return take_strs(r, p, n, sizeof f, &f.len, 1);
  }
  default:
    return -1;
  }
}

static void on_batch(struct fake_daemon *d, struct client *c, const uint8_t *p, uint32_t len) {
  struct siox_cw_batch b;
  if (len < sizeof b) return bad(d, "short BATCH");
  memcpy(&b, p, sizeof b);
  if (b.bytes != len - sizeof b || b.bytes % 8) return bad(d, "BATCH byte count");
  for (size_t off = sizeof b; off < len;) {
    struct siox_cw_rec_hdr h;
    memcpy(&h, p + off, sizeof h);
    size_t rl = (size_t)h.words * 8;
    if (h.words == 0 || rl > len - off) return bad(d, "record length");
    const uint8_t *body = p + off + sizeof h;
    size_t n = rl - sizeof h;
    if (h.type == SIOX_REC_TYPE) type_add(c, h.a);
    if (h.type == SIOX_REC_ACTIVITY && !type_known(c, h.a)) d->unregistered++;
    int rc = h.type == SIOX_REC_ACTIVITY ? decode_activity(d, c, &b, h.a, body, n)
             : h.type == SIOX_REC_DESC   ? decode_desc(d, c, h.a, body, n)
                                         : decode_reg(d, c, h.type, h.a, body, n);
    if (rc < 0) return bad(d, "bad record");
    off += rl;
  }
}

static void on_hello(struct fake_daemon *d, struct client *c, const uint8_t *p, uint32_t len) {
  struct siox_cw_hello h;
  if (c->hello) return bad(d, "second HELLO");
  if (len < sizeof h) return bad(d, "short HELLO");
  memcpy(&h, p, sizeof h);
  if (sizeof h + (size_t)h.exe_len + h.args_len + h.job_len != len) return bad(d, "HELLO lengths");
  if (d->nconns == 64) return bad(d, "too many connections");
  c->hello = 1, c->nonce = h.nonce, c->tsc0 = h.tsc0, c->ns0 = h.ns0, c->flags = h.clock_flags;
  c->conn = d->nconns++;
  struct fk_conn *k = &d->conns[c->conn];
  memset(k, 0, sizeof *k);
  k->nonce = h.nonce;
  k->clock_flags = h.clock_flags;
  const uint8_t *s = p + sizeof h;
  copy_str(k->exe, s, h.exe_len < 511 ? h.exe_len : 511);
  copy_str(k->args, s + h.exe_len, h.args_len < 511 ? h.args_len : 511);
  copy_str(k->job, s + h.exe_len + h.args_len, h.job_len < 127 ? h.job_len : 127);
}

static void on_frame(struct fake_daemon *d, struct client *c, const struct siox_cw_frame_hdr *h, const uint8_t *p) {
  if (h->type == SIOX_CW_HELLO) return on_hello(d, c, p, h->length);
  if (!c->hello) return bad(d, "frame before HELLO");
  if (h->type == SIOX_CW_BATCH && d->nframe_seqs < FK_SEQS && h->length >= sizeof(struct siox_cw_batch)) {
    struct siox_cw_batch b;
    memcpy(&b, p, sizeof b);
    d->frame_seqs[d->nframe_seqs].seq = h->seq;
    d->frame_seqs[d->nframe_seqs++].thread = b.thread;
  }
  if (h->type == SIOX_CW_BATCH) return on_batch(d, c, p, h->length);
  if (h->type != SIOX_CW_STATS || h->length != sizeof(struct siox_cw_stats)) return bad(d, "bad frame type/len");
  /* fields past the first three: loss accounting, kept by the daemon */
  struct siox_cw_stats st;
  memcpy(&st, p, sizeof st);
  d->conns[c->conn].stats_dropped = st.dropped;
  d->conns[c->conn].stats_activities = st.activities;
  d->conns[c->conn].stats_seen = 1;
}

/* Consumes whole frames from c's buffer; returns -1 to close the client. */
static int drain(struct fake_daemon *d, struct client *c) {
  size_t off = 0;
  while (c->len - off >= sizeof(struct siox_cw_frame_hdr)) {
    struct siox_cw_frame_hdr h;
    memcpy(&h, c->buf + off, sizeof h);
    if (h.magic != SIOX_CW_MAGIC || h.version != SIOX_CW_VERSION || h.length > SIOX_CW_MAX_PAYLOAD) {
      bad(d, "bad frame header");
      return -1;
    }
    if (c->len - off - sizeof h < h.length) break;
    on_frame(d, c, &h, c->buf + off + sizeof h);
    off += sizeof h + h.length;
  }
  memmove(c->buf, c->buf + off, c->len - off);
  c->len -= off;
  c->consumed += off;
  /* As siox-daemon does: acknowledge what was taken, once per read, unless
   * the test asked this fake to play a daemon that never acknowledges. */
  if (off > 0 && c->hello && !d->no_acks) {
    struct {
      struct siox_cw_frame_hdr h;
      struct siox_cw_ack a;
    } ack = {{SIOX_CW_MAGIC, SIOX_CW_VERSION, SIOX_CW_ACK, sizeof(struct siox_cw_ack), 0}, {c->consumed}};
    if (send(c->fd, &ack, sizeof ack, MSG_DONTWAIT | MSG_NOSIGNAL) < 0) return 0; /* a later ack covers it */
  }
  return 0;
}

static int client_read(struct fake_daemon *d, struct client *c) {
  if (c->cap - c->len < 65536) {
    c->cap = c->cap ? c->cap * 2 : (1u << 20);
    c->buf = realloc(c->buf, c->cap);
  }
  ssize_t n = read(c->fd, c->buf + c->len, c->cap - c->len);
  if (n <= 0) return n < 0 && errno == EINTR ? 0 : -1;
  c->len += (size_t)n;
  return drain(d, c);
}

static void *serve(void *arg) {
  struct fake_daemon *d = arg;
  struct client cl[MAX_CLIENTS];
  int ncl = 0;
  while (!d->stop) {
    struct pollfd p[MAX_CLIENTS + 2] = {{d->listen_fd, POLLIN, 0}, {d->wake[0], POLLIN, 0}};
    for (int i = 0; i < ncl; i++) p[i + 2] = (struct pollfd){cl[i].fd, POLLIN, 0};
    if (poll(p, (nfds_t)ncl + 2, 1000) < 0) continue;
    /* All work between polls under d->lock, so a test that holds it
     * (fake_daemon_hold) knows this thread is in no malloc. */
    pthread_mutex_lock(&d->lock);
    if (p[0].revents & POLLIN && ncl < MAX_CLIENTS) {
      int fd = accept(d->listen_fd, NULL, NULL);
      if (fd >= 0) cl[ncl++] = (struct client){.fd = fd};
    }
    for (int i = ncl - 1; i >= 0; i--) {
      if (!(p[i + 2].revents & (POLLIN | POLLHUP | POLLERR)) || client_read(d, &cl[i]) == 0) continue;
      close(cl[i].fd);
      free(cl[i].buf);
      free(cl[i].types);
      cl[i] = cl[--ncl];
    }
    pthread_mutex_unlock(&d->lock);
  }
  for (int i = 0; i < ncl; i++) close(cl[i].fd), free(cl[i].buf), free(cl[i].types);
  return NULL;
}

struct fake_daemon *fake_daemon_start(const char *path) {
  struct fake_daemon *d = calloc(1, sizeof *d);
  struct sockaddr_un sa = {.sun_family = AF_UNIX};
  snprintf(d->path, sizeof d->path, "%s", path);
  snprintf(sa.sun_path, sizeof sa.sun_path, "%s", path);
  unlink(path);
  pthread_mutex_init(&d->lock, NULL);
  d->listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (d->listen_fd < 0 || bind(d->listen_fd, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(d->listen_fd, 64) < 0 ||
      pipe(d->wake) < 0 || pthread_create(&d->thread, NULL, serve, d) != 0) {
    free(d);
    return NULL;
  }
  return d;
}

void fake_daemon_hold(struct fake_daemon *d) {
  pthread_mutex_lock(&d->lock);
}

void fake_daemon_release(struct fake_daemon *d) {
  pthread_mutex_unlock(&d->lock);
}

void fake_daemon_stop(struct fake_daemon *d) {
  d->stop = 1;
  if (write(d->wake[1], "x", 1) < 0) perror("fake daemon wake");
  pthread_join(d->thread, NULL);
  close(d->listen_fd);
  close(d->wake[0]);
  close(d->wake[1]);
  unlink(d->path);
  free(d->acts);
  free(d->regs);
  free(d);
}

size_t fake_daemon_wait(struct fake_daemon *d, size_t n, unsigned timeout_ms) {
  size_t have = 0;
  for (unsigned waited = 0;; waited += 5) {
    pthread_mutex_lock(&d->lock);
    have = d->nacts;
    pthread_mutex_unlock(&d->lock);
    if (have >= n || waited >= timeout_ms) return have;
    nanosleep(&(struct timespec){0, 5000000}, NULL);
  }
}

size_t fake_daemon_count(struct fake_daemon *d, uint64_t nonce, uint32_t type) {
  size_t k = 0;
  pthread_mutex_lock(&d->lock);
  for (size_t i = 0; i < d->nacts; i++) k += d->acts[i].nonce == nonce && (!type || d->acts[i].type == type);
  pthread_mutex_unlock(&d->lock);
  return k;
}

const struct fk_activity *fake_daemon_find(struct fake_daemon *d, uint64_t nonce, uint64_t aid) {
  for (size_t i = 0; i < d->nacts; i++)
    if (d->acts[i].aid == aid && (!nonce || d->acts[i].nonce == nonce)) return &d->acts[i];
  return NULL;
}

void fake_daemon_tmp_path(char *buf, size_t cap, const char *tag) {
  snprintf(buf, cap, "/tmp/siox-test-%s-%d.sock", tag, (int)getpid());
}

void fake_client_setup(const char *path, unsigned exit_timeout_ms, siox_type_id *t) {
  struct siox_options o = {.socket_path = path, .exit_timeout_ms = exit_timeout_ms};
  siox_unid node;
  if (siox_init(&o) != 0 || siox_node_register("h", "TEST", NULL, &node) != 0 ||
      siox_activity_type_register(node, "op", t) != 0) {
    fprintf(stderr, "fake_client_setup: siox_init or a registration failed\n");
    abort();
  }
}

void fake_client_record_until(siox_type_id t, int want) {
  struct siox_stats s;
  for (int i = 0; i < 2000; i++) {
    siox_activity_stop(siox_activity_start(t));
    siox_stats_get(&s);
    if (s.connected == want) return;
    nanosleep(&(struct timespec){0, 5000000}, NULL);
  }
  fprintf(stderr, "fake_client_record_until: the client never became %s\n", want ? "connected" : "disconnected");
  abort();
}
