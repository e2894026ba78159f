/*
 * Test kit, client side: builds client wire records and frames in memory
 * (see cw_synth.h). Used by daemon tests and bench_daemon only.
 */
#include "cw_synth.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#define PAD8(n) (((n) + 7u) & ~(size_t)7u)

void synth_buf_free(struct synth_buf *b) {
  free(b->p);
  b->p = NULL;
  b->len = b->cap = 0;
}

void *synth_reserve(struct synth_buf *b, size_t n) {
  if (b->len + n > b->cap) {
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->len + n)
      cap *= 2;
    uint8_t *p = realloc(b->p, cap);
    if (!p)
      abort();
    b->p = p;
    b->cap = cap;
  }
  void *at = b->p + b->len;
  memset(at, 0, n);
  b->len += n;
  return at;
}

/* Reserves a padded record of `body` bytes after the header; returns the body. */
static uint8_t *rec_begin(struct synth_buf *b, uint16_t type, uint32_t a, size_t body) {
  size_t total = PAD8(sizeof(struct siox_cw_rec_hdr) + body);
  struct siox_cw_rec_hdr *h = synth_reserve(b, total);
  h->type = type;
  h->words = (uint16_t)(total / 8);
  h->a = a;
  return (uint8_t *)(h + 1);
}

void synth_activity(struct synth_buf *b, uint32_t type, uint64_t aid, uint64_t parent, uint64_t t0, uint64_t t1,
                    int32_t err, uint32_t nattr, const struct siox_cw_attr *attrs) {
  size_t alen = nattr * sizeof *attrs;
  uint8_t *p = rec_begin(b, SIOX_REC_ACTIVITY, type, sizeof(struct siox_cw_activity) + alen);
  struct siox_cw_activity act = {aid, parent, t0, t1, err, nattr};
  memcpy(p, &act, sizeof act);
  if (alen)
    memcpy(p + sizeof act, attrs, alen);
}

void synth_node(struct synth_buf *b, uint32_t unid, const char *hwid, const char *swid, const char *iid) {
  struct siox_cw_node n = {(uint16_t)strlen(hwid), (uint16_t)strlen(swid), (uint16_t)strlen(iid), 0};
  uint8_t *p = rec_begin(b, SIOX_REC_NODE, unid, sizeof n + n.hwid_len + n.swid_len + n.iid_len);
  memcpy(p, &n, sizeof n);
  p += sizeof n;
  memcpy(p, hwid, n.hwid_len);
  memcpy(p + n.hwid_len, swid, n.swid_len);
  memcpy(p + n.hwid_len + n.swid_len, iid, n.iid_len);
}

void synth_type(struct synth_buf *b, uint32_t type_id, uint32_t unid, const char *name) {
  struct siox_cw_type t = {unid, (uint32_t)strlen(name)};
  uint8_t *p = rec_begin(b, SIOX_REC_TYPE, type_id, sizeof t + t.name_len);
  memcpy(p, &t, sizeof t);
  memcpy(p + sizeof t, name, t.name_len);
}

void synth_attr_str(struct synth_buf *b, uint32_t attr, uint64_t aid, const char *value) {
  struct siox_cw_attr_str s = {aid, (uint32_t)strlen(value), 0};
  uint8_t *p = rec_begin(b, SIOX_REC_ATTR_STR, attr, sizeof s + s.len);
  memcpy(p, &s, sizeof s);
  memcpy(p + sizeof s, value, s.len);
}

void synth_frame(struct synth_buf *out, uint16_t type, const void *payload, size_t len) {
  struct siox_cw_frame_hdr h = {SIOX_CW_MAGIC, SIOX_CW_VERSION, type, (uint32_t)len, 0};
  memcpy(synth_reserve(out, sizeof h), &h, sizeof h);
  if (len)
    memcpy(synth_reserve(out, len), payload, len);
}

void synth_hello(struct synth_buf *out, uint64_t nonce, uint32_t clock_flags, uint64_t tsc0, int64_t ns0,
                 const char *exe, const char *args, const char *job) {
  struct siox_cw_hello h = {.nonce = nonce, .tsc0 = tsc0, .ns0 = ns0, .clock_flags = clock_flags};
  h.exe_len = (uint16_t)strlen(exe);
  h.args_len = (uint16_t)strlen(args);
  h.job_len = (uint16_t)strlen(job);
  struct siox_cw_frame_hdr fh = {SIOX_CW_MAGIC, SIOX_CW_VERSION, SIOX_CW_HELLO,
                                 (uint32_t)(sizeof h + h.exe_len + h.args_len + h.job_len), 0};
  memcpy(synth_reserve(out, sizeof fh), &fh, sizeof fh);
  memcpy(synth_reserve(out, sizeof h), &h, sizeof h);
  memcpy(synth_reserve(out, h.exe_len), exe, h.exe_len);
  memcpy(synth_reserve(out, h.args_len), args, h.args_len);
  memcpy(synth_reserve(out, h.job_len), job, h.job_len);
}

void synth_batch(struct synth_buf *out, uint32_t thread, uint64_t tsc_ref, int64_t ns_ref, const struct synth_buf *recs) {
  struct siox_cw_batch b = {tsc_ref, ns_ref, thread, (uint32_t)recs->len};
  struct siox_cw_frame_hdr fh = {SIOX_CW_MAGIC, SIOX_CW_VERSION, SIOX_CW_BATCH, (uint32_t)(sizeof b + recs->len), 0};
  memcpy(synth_reserve(out, sizeof fh), &fh, sizeof fh);
  memcpy(synth_reserve(out, sizeof b), &b, sizeof b);
  if (recs->len)
    memcpy(synth_reserve(out, recs->len), recs->p, recs->len);
}

int synth_connect(const char *path) {
  struct sockaddr_un sa = {.sun_family = AF_UNIX};
  snprintf(sa.sun_path, sizeof sa.sun_path, "%s", path);
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return -errno;
  if (connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
    int e = errno;
    close(fd);
    return -e;
  }
  return fd;
}

int synth_write_all(int fd, const void *p, size_t n) {
  const uint8_t *c = p;
  while (n > 0) {
    ssize_t w = write(fd, c, n);
    if (w < 0 && errno == EINTR)
      continue;
    if (w < 0)
      return -errno;
    c += w;
    n -= (size_t)w;
  }
  return 0;
}
