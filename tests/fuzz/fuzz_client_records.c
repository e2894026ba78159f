/*
 * libFuzzer target: what siox-daemon does with the bytes a local client
 * writes to its unix socket. The input is the client stream (frame header,
 * payload, repeated), cut as siox-daemon/session.c cuts it: cw_frame_check()
 * on each header; HELLO, BATCH and STATS handled as the session does; every
 * BATCH's records validated by cw_walk() and, once valid, added to a batcher
 * (batcher_add_records). Checks:
 *   - every cw_rec the walker hands a visitor lies inside the records it was
 *     given (its strings, attributes and descriptor values included);
 *   - what the walker accepted the batcher takes, and the batcher's block
 *     encodes, decodes and comes back equal: a record the daemon accepts is
 *     never one that makes the server refuse the whole batch.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "daemon.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define HDR_LEN sizeof(struct siox_cw_frame_hdr)

struct span {
  const uint8_t *lo, *hi;
};

static void in_span(const struct span *s, const void *p, size_t n, const char *what) {
  const uint8_t *q = p;
  FUZZ_CHECK(q >= s->lo && q <= s->hi && n <= (size_t)(s->hi - q), "%s outside the records", what);
}

/* Visitor: the walker's promise that a record is safe to read in place. */
static int check_rec(void *ctx, const struct cw_rec *r) {
  const struct span *s = ctx;
  in_span(s, r->fixed, 0, "fixed part");
  switch (r->type) {
  case SIOX_REC_NODE:
  case SIOX_REC_TYPE:
  case SIOX_REC_TARGET:
  case SIOX_REC_ATTR_STR: {
    unsigned n = r->type == SIOX_REC_NODE ? 3 : r->type == SIOX_REC_TARGET ? 2 : 1;
    for (unsigned i = 0; i < n; i++) in_span(s, r->str[i], r->len[i], "string");
    break;
  }
  case SIOX_REC_NODE_ATTR: {
    const struct siox_cw_attr *f = r->fixed;
    in_span(s, f, sizeof *f, "node attribute");
    if (fuzz_is_bytes(f->vtype)) in_span(s, r->str[0], r->len[0], "node attribute string");
    break;
  }
  case SIOX_REC_ACTIVITY:
    in_span(s, r->fixed, sizeof(struct siox_cw_activity), "activity");
    FUZZ_CHECK(r->nattr <= SIOX_CW_MAX_ATTRS, "nattr %u", r->nattr);
    in_span(s, r->attrs, r->nattr * sizeof *r->attrs, "activity attributes");
    break;
  case SIOX_REC_DESC: {
    const struct siox_cw_desc *f = r->fixed;
    in_span(s, f, sizeof *f, "descriptor");
    for (uint32_t i = 0; i < f->ndesc; i++) {
      in_span(s, r->dv[i], sizeof *r->dv[i], "descriptor value");
      in_span(s, r->dv_bytes[i], r->dv[i]->len, "descriptor bytes");
    }
    break;
  }
  case SIOX_REC_EDGE: in_span(s, r->fixed, sizeof(struct siox_cw_edge), "edge"); break;
  default: FUZZ_CHECK(0, "walker passed record type %u", r->type);
  }
  return 0;
}

/* What a session knows about its client. */
struct session {
  int hello_seen;
  char *strs;
  struct client_ident ident;
  uint32_t clock_flags;
  uint64_t tsc0;
  int64_t ns0;
  struct batcher_slot slot;
};

/* session.c's on_hello(). */
static int on_hello(struct session *s, const uint8_t *p, uint32_t len) {
  struct siox_cw_hello h;
  if (s->hello_seen || len < sizeof h) return -1;
  memcpy(&h, p, sizeof h);
  if ((size_t)sizeof h + h.exe_len + h.args_len + h.job_len != len) return -1;
  char *dst = s->strs = malloc((size_t)h.exe_len + h.args_len + h.job_len + 3);
  FUZZ_CHECK(dst != NULL, "malloc");
  const char *src = (const char *)p + sizeof h;
  const char **slots[3] = {&s->ident.exe, &s->ident.args, &s->ident.job};
  uint16_t lens[3] = {h.exe_len, h.args_len, h.job_len};
  for (int i = 0; i < 3; i++) {
    memcpy(dst, src, lens[i]);
    dst[lens[i]] = '\0';
    *slots[i] = dst;
    dst += lens[i] + 1;
    src += lens[i];
  }
  s->ident.nonce = h.nonce;
  s->clock_flags = h.clock_flags, s->tsc0 = h.tsc0, s->ns0 = h.ns0;
  s->hello_seen = 1;
  return 0;
}

/* session.c's on_batch(): validate the whole frame, then add it. */
static int on_batch(struct session *s, struct batcher *bt, const uint8_t *p, uint32_t len) {
  struct siox_cw_batch b;
  const char *why = NULL;
  if (len < sizeof b) return -1;
  memcpy(&b, p, sizeof b);
  if (b.bytes != len - sizeof b) return -1;
  const uint8_t *recs = p + sizeof b;
  struct span span = {recs, recs + b.bytes};
  int rc = cw_walk(recs, b.bytes, check_rec, &span, &why);
  if (rc < 0) {
    FUZZ_CHECK(rc == -EBADMSG && why != NULL, "walker refused without a reason: %d", rc);
    return -1;
  }
  struct clock_conv cc;
  clock_conv_init(&cc, s->clock_flags, s->tsc0, s->ns0, b.tsc_ref, b.ns_ref);
  size_t before = bt->block.n_activities;
  struct daemon_counters ctr = {0};
  rc = batcher_add_records(bt, &s->slot, &s->ident, &cc, recs, b.bytes, &ctr);
  FUZZ_CHECK(rc == 0, "batcher refused records the walker accepted: %d", rc);
  FUZZ_CHECK(bt->block.n_activities >= before, "activities went missing");
  return 0;
}

static int on_stats(struct session *s, struct batcher *bt, const uint8_t *p, uint32_t len) {
  struct siox_cw_stats st;
  if (len != sizeof st) return -1;
  memcpy(&st, p, sizeof st);
  FUZZ_CHECK(batcher_add_stats(bt, &s->slot, &s->ident, &st) == 0, "batcher_add_stats");
  return 0;
}

static int on_frame(struct session *s, struct batcher *bt, const struct siox_cw_frame_hdr *h, const uint8_t *p) {
  if (!s->hello_seen && h->type != SIOX_CW_HELLO) return -1; /* STATUS, HINTS: not records */
  switch (h->type) {
  case SIOX_CW_HELLO: return on_hello(s, p, h->length);
  case SIOX_CW_BATCH: return on_batch(s, bt, p, h->length);
  case SIOX_CW_STATS: return on_stats(s, bt, p, h->length);
  default: return -1;
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  struct session s = {.ident = {.pid = 4242, .uid = 1000, .host = "fuzzhost"}};
  struct batcher bt;
  batcher_init(&bt);
  while (size >= HDR_LEN) {
    struct siox_cw_frame_hdr h;
    const char *why = NULL;
    memcpy(&h, data, HDR_LEN);
    if (cw_frame_check(&h, &why) < 0) {
      FUZZ_CHECK(why != NULL, "frame refused without a reason");
      break;
    }
    if (size - HDR_LEN < h.length) break; /* the daemon waits for more */
    /* An exact-size, 8-aligned copy (the session realigns its buffer too),
     * so that ASan sees any read past the frame. */
    uint8_t *p = malloc(h.length ? h.length : 1);
    FUZZ_CHECK(p != NULL, "malloc");
    memcpy(p, data + HDR_LEN, h.length);
    int rc = on_frame(&s, &bt, &h, p);
    free(p);
    if (rc) break;
    data += HDR_LEN + h.length;
    size -= HDR_LEN + h.length;
  }
  /* The daemon seals what it collected; the server must take it as it is. */
  if (bt.block.n_processes) fuzz_encode_decode_same(&bt.block);
  batcher_destroy(&bt);
  validate_free(&s.slot);
  free(s.strs);
  return 0;
}
