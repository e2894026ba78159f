/*
 * Frames the daemon has not acknowledged yet. A record written to the
 * socket is not safe until the daemon has journaled it: a kill -9 of the
 * daemon loses what sits in the kernel's socket buffer and in the daemon's
 * read buffer. So every activity BATCH frame stays here, in stream order,
 * until an ACK (siox_cw_ack.consumed, bytes of the connection's stream)
 * covers its end. When the connection breaks, whatever is left is sent
 * again, first thing after the registrations, on the next connection, each
 * frame with its header as first sent. A frame the daemon had taken but not
 * yet acknowledged (journaled, then the daemon was killed before its ACK;
 * or the ACK was never read) thus arrives twice; its seq (the flusher
 * numbers the frames of a process incarnation, siox_cw_frame_hdr.seq) lets
 * the daemon drop the copy (siox-daemon/frameseq.c). The server could not:
 * a frame of a long activity's records alone (a send, a text attribute, a
 * MAP) has no key there, and would be stored twice.
 * Only the flusher thread calls in here (and finalize, after it stopped).
 */
#include <stdlib.h>

#include "client.h"

struct held {
  uint64_t end;      /* stream offset of the frame's end (this connection) */
  uint32_t bytes;    /* header + payload */
  uint32_t activities;
};

static uint8_t *buf; /* frames back to back, from `head` */
static size_t head, len, cap;
static struct held *ents;
static size_t ehead, n, ecap;
static uint64_t held_activities;

/* Activity records in the records of a BATCH frame's payload. */
static uint32_t count_activities(const uint8_t *recs, size_t bytes) {
  uint32_t k = 0;
  for (size_t r = 0; r + sizeof(struct siox_cw_rec_hdr) <= bytes;) {
    struct siox_cw_rec_hdr rh;
    memcpy(&rh, recs + r, sizeof rh);
    if (rh.words == 0) break;
    k += rh.type == SIOX_REC_ACTIVITY;
    r += (size_t)rh.words * 8;
  }
  return k;
}

uint32_t siox__frame_activities(const uint8_t *frame) {
  struct siox_cw_frame_hdr h;
  struct siox_cw_batch b;
  memcpy(&h, frame, sizeof h);
  if (h.type != SIOX_CW_BATCH || h.length < sizeof b) return 0;
  memcpy(&b, frame + sizeof h, sizeof b);
  return b.thread == 0 ? 0 : count_activities(frame + sizeof h + sizeof b, b.bytes);
}

static int is_activity_batch(const uint8_t *frame) {
  struct siox_cw_frame_hdr h;
  struct siox_cw_batch b;
  memcpy(&h, frame, sizeof h);
  if (h.type != SIOX_CW_BATCH || h.length < sizeof b) return 0;
  memcpy(&b, frame + sizeof h, sizeof b);
  return b.thread != 0;
}

/* Compacts both arrays once their dead fronts are half of them. */
static void compact(void) {
  if (head > 0 && head >= len / 2) {
    memmove(buf, buf + head, len - head);
    len -= head;
    head = 0;
  }
  if (ehead > 0 && ehead >= n / 2) {
    memmove(ents, ents + ehead, (n - ehead) * sizeof *ents);
    n -= ehead;
    ehead = 0;
  }
}

static int push(const uint8_t *frame, uint32_t bytes, uint64_t end) {
  compact();
  if (len + bytes > cap) {
    size_t c = cap ? cap : 4096;
    while (c < len + bytes) c *= 2;
    uint8_t *p = realloc(buf, c);
    if (!p) return -ENOMEM;
    buf = p, cap = c;
  }
  if (n == ecap) {
    size_t c = ecap ? ecap * 2 : 64;
    struct held *p = realloc(ents, c * sizeof *p);
    if (!p) return -ENOMEM;
    ents = p, ecap = c;
  }
  memcpy(buf + len, frame, bytes);
  len += bytes;
  uint32_t k = siox__frame_activities(frame);
  ents[n++] = (struct held){end, bytes, k};
  held_activities += k;
  return 0;
}

/* Keeps the activity frames of `bytes` just written, which began at stream
 * offset `base`. A frame that cannot be kept (out of memory) is counted as
 * dropped, since a broken connection could not resend it. */
void siox__retain_written(const uint8_t *frames, size_t bytes, uint64_t base) {
  for (size_t off = 0; off + sizeof(struct siox_cw_frame_hdr) <= bytes;) {
    struct siox_cw_frame_hdr h;
    memcpy(&h, frames + off, sizeof h);
    size_t end = off + sizeof h + h.length;
    if (is_activity_batch(frames + off) && push(frames + off, (uint32_t)(end - off), base + end) < 0)
      for (uint32_t k = siox__frame_activities(frames + off); k > 0; k--) siox__count_drop_global();
    off = end;
  }
}

/* The daemon has taken the stream up to `consumed`. */
void siox__retain_ack(uint64_t consumed) {
  while (ehead < n && ents[ehead].end <= consumed) {
    head += ents[ehead].bytes;
    held_activities -= ents[ehead].activities;
    ehead++;
  }
  if (ehead == n) head = len = ehead = n = 0;
}

/* The connection broke with `bytes` of frames in the send buffer, written
 * or not: keep their activity frames too, behind the held ones, for the
 * next connection (the registration log is re-sent whole). */
void siox__retain_lost(const uint8_t *frames, size_t bytes) {
  siox__retain_written(frames, bytes, 0);
  for (size_t i = ehead; i < n; i++) ents[i].end = UINT64_MAX; /* never acked on a new stream */
}

/* Moves every held frame into the send buffer (a new connection: after its
 * registrations). Returns the record bytes queued. */
uint64_t siox__retain_requeue(void) {
  uint64_t moved = 0;
  size_t off = head;
  for (size_t i = ehead; i < n; i++) {
    struct siox_cw_frame_hdr h;
    memcpy(&h, buf + off, sizeof h);
    uint8_t *p = siox__conn_frame_seq(h.type, h.length, h.seq); /* the same frame: the same seq */
    if (!p) break; /* out of memory: the rest stays held for the next try */
    memcpy(p, buf + off + sizeof h, h.length);
    moved += h.length;
    held_activities -= ents[i].activities;
    head += ents[i].bytes;
    off += ents[i].bytes;
    ehead = i + 1;
  }
  if (ehead == n) head = len = ehead = n = 0;
  return moved;
}

size_t siox__retain_bytes(void) {
  return len - head;
}

/* Held frames that were written on a connection now gone (must be resent). */
int siox__retain_resend_pending(void) {
  return ehead < n && ents[ehead].end == UINT64_MAX;
}

uint64_t siox__retain_activities(void) {
  return held_activities;
}

/* Forgets everything (fork child: the parent's frames are the parent's;
 * exit: counted as lost by the caller first). */
void siox__retain_clear(void) {
  head = len = ehead = n = 0;
  held_activities = 0;
}

/* The held frames, back to back (exit: spilled to the loss file). */
const uint8_t *siox__retain_frames(size_t *bytes) {
  *bytes = len - head;
  return buf + head;
}
