/*
 * Session: one client connection on the unix socket. It reassembles frames
 * from the byte stream, checks each header (magic, version, type, length),
 * insists on HELLO first, and passes BATCH records through the walker into
 * the batcher. Any violation is logged and closes this client only. A
 * connection whose first frame is STATUS gets a StatusReply instead; one
 * whose first frame is HINTS gets a hint answer (hints.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "daemon.h"

#define READ_CHUNK (256u << 10)
#define HDR_LEN sizeof(struct siox_cw_frame_hdr)

struct session {
  struct session *next, **pprev; /* daemon's intrusive list */
  struct daemon *d;
  uv_pipe_t pipe;
  uint8_t *buf; /* owned: bytes read but not yet consumed */
  size_t cap, len;
  bool hello_seen, closing, counted, hint_waiting;
  bool acked;     /* the last ACK was sent whole (not skipped) */
  bool clean_end; /* EOF after whole frames, all acknowledged (frameseq.c) */
  bool budget_waiting, budget_refused; /* budget.c said wait / refuse */
  int64_t frame_start_ns;              /* when the frame in progress could first be read */
  struct client_ident ident;
  char *strs; /* owned: exe, args, claimed job NUL-terminated back to back */
  char job[JOB_ID_MAX]; /* the job id used: job_id.c */
  uint32_t clock_flags;
  uint64_t tsc0;
  int64_t ns0;
  struct batcher_slot slot;
  uint64_t dropped; /* latest STATS.dropped */
  uint64_t consumed; /* stream bytes taken (ACK) */
  struct loss_state loss; /* loss.c, journal.c */
};

/* ---------------------------------------------------------------------------
 * Lifetime
 * ------------------------------------------------------------------------- */
static void on_closed(uv_handle_t *h) {
  struct session *s = h->data;
  budget_put(s->d, s->cap);
  free(s->buf);
  free(s->strs);
  validate_free(&s->slot);
  free(s);
}

static void session_close(struct session *s) {
  if (s->closing)
    return;
  s->closing = true;
  if (s->hint_waiting)
    hints_session_gone(s->d, s);
  if (s->budget_waiting)
    s->d->budget.waiting--;
  if ((*s->pprev = s->next))
    s->next->pprev = s->pprev;
  if (s->hello_seen)
    frameseq_close(s->d, s->ident.uid, s->ident.nonce, s->clean_end && s->acked);
  if (s->counted) {
    s->d->ctr.clients--;
    s->d->ctr.client_dropped_closed += s->dropped;
  }
  uv_close((uv_handle_t *)&s->pipe, on_closed);
}

/* Logs why the client's bytes were refused and drops the client. */
static int violation(struct session *s, const char *why) {
  fprintf(stderr, "siox-daemon: client pid %u uid %u: %s; closing it\n", s->ident.pid, s->ident.uid, why);
  s->d->ctr.bad_frames++;
  session_close(s);
  return -EBADMSG;
}

void sessions_close_all(struct daemon *d) {
  while (d->sessions)
    session_close(d->sessions);
}

/* ---------------------------------------------------------------------------
 * Frames
 * ------------------------------------------------------------------------- */
static int on_hello(struct session *s, const uint8_t *p, uint32_t len) {
  struct siox_cw_hello h;
  if (s->hello_seen)
    return violation(s, "second HELLO");
  if (len < sizeof h)
    return violation(s, "HELLO too short");
  memcpy(&h, p, sizeof h);
  if ((size_t)sizeof h + h.exe_len + h.args_len + h.job_len != len)
    return violation(s, "HELLO string lengths do not match the frame");
  if (!(s->strs = malloc((size_t)h.exe_len + h.args_len + h.job_len + 3)))
    return violation(s, "out of memory");
  const char *src = (const char *)p + sizeof h;
  char *dst = s->strs;
  const char **slots[3] = {&s->ident.exe, &s->ident.args, &s->ident.job};
  uint16_t lens[3] = {h.exe_len, h.args_len, h.job_len};
  for (int i = 0; i < 3; i++) {
    memcpy(dst, src, lens[i]);
    dst[lens[i]] = '\0';
    *slots[i] = dst;
    dst += lens[i] + 1;
    src += lens[i];
  }
  if (job_id_of_peer(s->ident.pid, s->ident.uid, s->ident.job, s->job, sizeof s->job) == JOB_CLAIMED)
    fprintf(stderr, "siox-daemon: client pid %u uid %u: job id only claimed in its HELLO: stored as %s\n",
            s->ident.pid, s->ident.uid, s->job);
  s->ident.job = s->job;
  s->ident.nonce = h.nonce;
  s->clock_flags = h.clock_flags;
  s->tsc0 = h.tsc0;
  s->ns0 = h.ns0;
  loss_hello(s->d, &s->loss, h.clock_flags, h.tsc0, h.ns0);
  frameseq_open(s->d, s->ident.uid, h.nonce);
  s->hello_seen = s->counted = true;
  s->d->ctr.clients++;
  return 0;
}

/* seq: the frame header's (siox_cw_frame_hdr.seq), 0 for none. */
static int on_batch(struct session *s, uint32_t seq, const uint8_t *p, uint32_t len) {
  struct siox_cw_batch b;
  const char *why;
  if (len < sizeof b)
    return violation(s, "BATCH too short");
  memcpy(&b, p, sizeof b);
  if (b.bytes != len - sizeof b)
    return violation(s, "BATCH byte count does not match the frame");
  /* Taken before (its ACK was lost with a killed daemon or a closed
   * connection): a copy, stored or counted already. */
  if (frameseq_resent(s->d, s->ident.uid, s->ident.nonce, seq))
    return 0;
  const uint8_t *recs = p + sizeof b;
  /* Spool full: take the frame off the socket anyway, so that what comes
   * behind it (STATS) gets through, and count its activities as dropped
   * here. Registrations (thread 0) are kept: they are small. */
  if (s->d->reading_paused && b.thread != 0) {
    if (cw_walk(recs, b.bytes, NULL, NULL, &why) < 0)
      return violation(s, why);
    return loss_drop_frame(s->d, &s->loss, &s->slot, &s->ident, seq, recs, b.bytes) < 0
               ? violation(s, "out of memory counting a drop")
               : 0;
  }
  journal_session(s->d, &s->loss, &s->slot, &s->ident);
  struct clock_conv cc;
  clock_conv_init(&cc, s->clock_flags, s->tsc0, s->ns0, b.tsc_ref, b.ns_ref);
  clock_conv_shift(&cc, s->d->cfg.test_clock_shift_ns);
  struct batcher *bt = &s->d->batcher;
  uint64_t before = bt->activities, invalid = s->slot.dropped_validation;
  /* The walk checks every record; a bad one leaves no part of the frame in
   * the batch (nor in the journal). */
  int rc = batcher_add_records(bt, &s->slot, &s->ident, &cc, recs, b.bytes, &s->d->ctr);
  if (rc == -EBADMSG)
    return violation(s, bt->why);
  if (rc < 0)
    return violation(s, "out of memory adding records");
  journal_batch(s->d, &s->loss, &s->slot, &s->ident, seq, p, len);
  frameseq_take(s->d, s->ident.uid, s->ident.nonce, seq);
  if (s->d->cfg.test_kill_frames && b.thread != 0 && b.bytes && bt->activities == before &&
      ++s->d->test_frames == s->d->cfg.test_kill_frames)
    s->d->test_kill_seq = s->d->spool.next_seq;
  s->d->ctr.activities_received += bt->activities - before;
  /* Activities validation refused (batcher.c logged them) reach the
   * warehouse in this client's Stats, as daemon_dropped_invalid. */
  if (loss_drop(s->d, &s->loss, &s->slot, &s->ident, LOSS_INVALID, s->slot.dropped_validation - invalid) < 0)
    return violation(s, "out of memory counting a drop");
  daemon_after_add(s->d);
  return 0;
}

static int on_stats(struct session *s, const uint8_t *p, uint32_t len) {
  int rc = loss_on_stats(s->d, &s->loss, &s->slot, &s->ident, p, len, &s->dropped);
  if (rc == -EBADMSG)
    return violation(s, "STATS of wrong size");
  return rc < 0 ? violation(s, "out of memory adding stats") : 0;
}

struct final_write {
  uv_write_t w;
  struct siox_cw_frame_hdr h;
  uint8_t payload[]; /* owned until the write completes */
};

static void on_final_written(uv_write_t *w, int status) {
  (void)status;
  struct session *s = w->data;
  free(w);
  session_close(s);
}

void session_reply_and_close(struct session *s, uint16_t type, const void *payload, size_t n) {
  if (s->closing)
    return;
  struct final_write *req = malloc(sizeof *req + n);
  uv_read_stop((uv_stream_t *)&s->pipe);
  if (!req) {
    session_close(s);
    return;
  }
  req->h = (struct siox_cw_frame_hdr){SIOX_CW_MAGIC, SIOX_CW_VERSION, type, (uint32_t)n, 0};
  memcpy(req->payload, payload, n);
  req->w.data = s;
  uv_buf_t bufs[2] = {uv_buf_init((char *)&req->h, HDR_LEN), uv_buf_init((char *)req->payload, (unsigned)n)};
  if (uv_write(&req->w, (uv_stream_t *)&s->pipe, bufs, 2, on_final_written) < 0) {
    free(req);
    session_close(s);
  }
}

void session_set_hint_waiting(struct session *s, bool waiting) { s->hint_waiting = waiting; }

/* Answers a status query with one frame, then closes the connection. */
static int on_status(struct session *s) {
  uint8_t *payload;
  size_t n;
  if (status_build(s->d, &payload, &n) < 0)
    return violation(s, "cannot build status");
  session_reply_and_close(s, SIOX_CW_STATUS, payload, n);
  free(payload);
  return -ECANCELED; /* no further frames from this connection */
}

/* A hint query: answered now or when the server replies (hints.c). */
static int on_hints(struct session *s, const uint8_t *p, uint32_t len) {
  uv_read_stop((uv_stream_t *)&s->pipe);
  /* No HELLO on this connection: the job comes from the asking process
   * itself, which the kernel named (an experiment set goes to one job). */
  job_id_of_peer(s->ident.pid, s->ident.uid, "", s->job, sizeof s->job);
  if (hints_query(s->d, s, s->ident.uid, s->job, p, len) < 0)
    return violation(s, "malformed hint query");
  return -ECANCELED; /* no further frames from this connection */
}

static int handle_frame(struct session *s, const struct siox_cw_frame_hdr *h, const uint8_t *p) {
  if (!s->hello_seen && h->type == SIOX_CW_STATUS)
    return on_status(s);
  if (!s->hello_seen && h->type == SIOX_CW_HINTS)
    return on_hints(s, p, h->length);
  if (!s->hello_seen && h->type != SIOX_CW_HELLO)
    return violation(s, "first frame is not HELLO");
  switch (h->type) {
  case SIOX_CW_HELLO:
    return on_hello(s, p, h->length);
  case SIOX_CW_BATCH:
    return on_batch(s, h->seq, p, h->length);
  case SIOX_CW_STATS:
    return on_stats(s, p, h->length);
  default:
    return violation(s, "STATUS or HINTS after HELLO");
  }
}

/* ---------------------------------------------------------------------------
 * Reading
 * ------------------------------------------------------------------------- */

/* Consumes every complete frame in s->buf. Returns < 0 once the session is
 * closed or must read no more. */
static int consume(struct session *s) {
  size_t off = 0;
  int rc = 0;
  while (rc == 0 && s->len - off >= HDR_LEN) {
    if ((uintptr_t)(s->buf + off) % 8 != 0) {
      /* HELLO strings are unpadded: realign so records can be read in place.
       * The journal references the frames before off: written first. */
      journal_flush(s->d);
      memmove(s->buf, s->buf + off, s->len - off);
      s->len -= off;
      off = 0;
    }
    struct siox_cw_frame_hdr h;
    const char *why;
    memcpy(&h, s->buf + off, HDR_LEN);
    if (cw_frame_check(&h, &why) < 0)
      return violation(s, why);
    if (s->len - off < HDR_LEN + h.length)
      break;
    rc = handle_frame(s, &h, s->buf + off + HDR_LEN);
    off += HDR_LEN + h.length;
    s->consumed += HDR_LEN + h.length;
  }
  if (rc < 0)
    return rc;
  if (off > 0 && off < s->len) {
    journal_flush(s->d); /* it references the consumed frames */
    memmove(s->buf, s->buf + off, s->len - off);
  }
  s->len -= off;
  return 0;
}

/* Asks budget.c for the growth of s's buffer to want; false when the
 * session must wait or its frame is refused (on_read acts on the flags). */
static bool session_budget(struct session *s, size_t want) {
  size_t frame = want;
  if (s->len >= HDR_LEN) {
    struct siox_cw_frame_hdr fh;
    memcpy(&fh, s->buf, HDR_LEN);
    frame = fh.length;
  }
  int rc = budget_take(s->d, s->cap, want, frame, s->ident.pid);
  if (rc == -ENOBUFS)
    s->budget_refused = true;
  if (rc == -EAGAIN && !s->budget_waiting) {
    s->budget_waiting = true;
    s->d->budget.waiting++;
  }
  if (rc == 0 && s->budget_waiting) {
    s->budget_waiting = false;
    s->d->budget.waiting--;
  }
  return rc == 0;
}

/* Room for the rest of the frame in progress (its header tells how much),
 * at least READ_CHUNK. Frames are bounded, so is the buffer. */
static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *out) {
  (void)suggested;
  struct session *s = h->data;
  size_t want = s->len + READ_CHUNK;
  if (s->len >= HDR_LEN) {
    struct siox_cw_frame_hdr fh;
    memcpy(&fh, s->buf, HDR_LEN);
    if (fh.length <= SIOX_CW_MAX_PAYLOAD && HDR_LEN + fh.length > s->len)
      want = HDR_LEN + fh.length > want ? HDR_LEN + fh.length : want;
  }
  if (want > s->cap && !session_budget(s, want)) {
    *out = uv_buf_init(NULL, 0); /* libuv reports UV_ENOBUFS to on_read */
    return;
  }
  if (want > s->cap) {
    uint8_t *nb = realloc(s->buf, want);
    if (!nb) {
      budget_put(s->d, want - s->cap);
      *out = uv_buf_init(NULL, 0);
      return;
    }
    s->buf = nb;
    s->cap = want;
  }
  *out = uv_buf_init((char *)s->buf + s->len, (unsigned)(s->cap - s->len));
}

static void on_read(uv_stream_t *st, ssize_t nread, const uv_buf_t *buf) {
  (void)buf;
  struct session *s = st->data;
  if (s->closing)
    return;
  if (nread == UV_ENOBUFS && s->budget_refused)
    return (void)violation(s, "frame refused: client buffers at the daemon's --memory-mb bound");
  if (nread == UV_ENOBUFS && s->budget_waiting)
    return (void)uv_read_stop(st); /* sessions_budget_resume restarts it */
  if (nread < 0) {
    if (nread != UV_EOF)
      fprintf(stderr, "siox-daemon: client pid %u: %s\n", s->ident.pid, uv_strerror((int)nread));
    s->clean_end = nread == UV_EOF && s->len == 0;
    session_close(s);
    return;
  }
  size_t before = s->len + (size_t)nread;
  if (s->len == 0)
    s->frame_start_ns = clock_realtime_ns();
  s->len = before;
  /* Clients are read while the spool is full too: on_batch discards and
   * counts their activities (loss.c). What this read journals is written
   * at once, before the ACK below (and before a session closed for a bad
   * frame goes). */
  struct daemon *d = s->d;
  journal_hold(d);
  int rc = consume(s);
  journal_commit(d);
  bool withhold = daemon_test_kill(d, 0); /* tests only: the window between journal and ACK */
  if (rc < 0)
    return;
  if (s->len != before)
    s->frame_start_ns = clock_realtime_ns(); /* a frame completed: the next one starts */
  if (s->len == 0 && s->cap > 2 * READ_CHUNK) { /* a large frame is done: give its buffer back */
    budget_put(s->d, s->cap);
    free(s->buf);
    s->buf = NULL;
    s->cap = 0;
  }
  /* Every frame taken is journaled, counted or refused by now: tell the
   * client, which holds its frames until then (loss.c). */
  if (s->hello_seen && !withhold)
    s->acked = loss_ack(st, s->consumed);
}

void sessions_budget_resume(struct daemon *d) {
  for (struct session *s = d->sessions; s; s = s->next) {
    if (!s->budget_waiting)
      continue;
    s->frame_start_ns = clock_realtime_ns();
    uv_read_start((uv_stream_t *)&s->pipe, on_alloc, on_read); /* on_alloc asks the budget again */
  }
}

/* A partial frame that could be read but has not completed in this time is
 * a stalled or hostile client holding budget. Only enforced while the budget
 * is under pressure: a job suspended (SIGSTOP) in the middle of a write loses
 * nothing while memory is plentiful. */
#define FRAME_TIMEOUT_NS (30 * 1000000000LL)

void sessions_expire(struct daemon *d, int64_t now) {
  struct session *next;
  if (!d->budget.waiting && d->budget.used <= d->budget.limit / 2)
    return;
  for (struct session *s = d->sessions; s; s = next) {
    next = s->next;
    bool readable = !s->budget_waiting && !s->hint_waiting;
    if (s->len && readable && now - s->frame_start_ns > FRAME_TIMEOUT_NS)
      violation(s, "frame incomplete 30 s after it could be read");
  }
}

/* Identity is the kernel's: pid and uid from SO_PEERCRED, host our own. */
static int peer_identity(struct session *s) {
  uv_os_fd_t fd;
  struct ucred cred;
  socklen_t len = sizeof cred;
  int rc = uv_fileno((uv_handle_t *)&s->pipe, &fd);
  if (rc < 0)
    return rc;
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
    return -errno;
  s->ident.pid = (uint32_t)cred.pid;
  s->ident.uid = (uint32_t)cred.uid;
  s->ident.host = s->d->hostname;
  return 0;
}

/* Accepts one client; the session owns itself and is freed when closed. */
int session_accept(struct daemon *d, uv_stream_t *server) {
  struct session *s = calloc(1, sizeof *s);
  if (!s)
    return -ENOMEM;
  s->d = d;
  s->ident.exe = s->ident.args = s->ident.job = "";
  uv_pipe_init(d->loop, &s->pipe, 0);
  s->pipe.data = s;
  if ((s->next = d->sessions))
    s->next->pprev = &s->next;
  d->sessions = s;
  s->pprev = &d->sessions;
  int rc = uv_accept(server, (uv_stream_t *)&s->pipe);
  if (rc == 0)
    rc = peer_identity(s);
  if (rc == 0)
    rc = uv_read_start((uv_stream_t *)&s->pipe, on_alloc, on_read);
  if (rc < 0)
    session_close(s);
  return rc;
}

/* Sum of the clients' own drop counts: gone clients plus the latest STATS of
 * every live one. */
uint64_t daemon_client_dropped(const struct daemon *d) {
  uint64_t sum = d->ctr.client_dropped_closed;
  for (const struct session *s = d->sessions; s; s = s->next)
    sum += s->dropped;
  return sum;
}
