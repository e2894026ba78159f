/*
 * Binary COPY row builder (see copybuf.h): the last step before activity
 * rows leave the server for PostgreSQL. Format: PostgreSQL docs, "COPY ...
 * Binary Format" (header, int16 field count per row, int32 length + bytes per
 * field, -1 for NULL, int16 -1 trailer).
 */
#include "copybuf.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

void siox_copybuf_init(struct siox_copybuf *c) { memset(c, 0, sizeof *c); }

void siox_copybuf_free(struct siox_copybuf *c) {
  free(c->p);
  siox_copybuf_init(c);
}

static uint8_t *room(struct siox_copybuf *c, size_t n) {
  if (c->err) return NULL;
  if (c->len + n > c->cap) {
    size_t ncap = c->cap ? c->cap : 1 << 16;
    while (ncap < c->len + n) ncap *= 2;
    uint8_t *np = realloc(c->p, ncap);
    if (!np) {
      c->err = -ENOMEM;
      return NULL;
    }
    c->p = np;
    c->cap = ncap;
  }
  uint8_t *at = c->p + c->len;
  c->len += n;
  return at;
}

static void put16(struct siox_copybuf *c, uint16_t v) {
  uint8_t *p = room(c, 2);
  if (p) v = htons(v), memcpy(p, &v, 2);
}

static void put32(struct siox_copybuf *c, uint32_t v) {
  uint8_t *p = room(c, 4);
  if (p) v = htonl(v), memcpy(p, &v, 4);
}

static void put64(struct siox_copybuf *c, uint64_t v) {
  put32(c, (uint32_t)(v >> 32));
  put32(c, (uint32_t)v);
}

void siox_copybuf_start(struct siox_copybuf *c) {
  static const uint8_t sig[11] = {'P', 'G', 'C', 'O', 'P', 'Y', '\n', 0xff, '\r', '\n', 0};
  c->len = 0;
  c->err = 0;
  uint8_t *p = room(c, sizeof sig);
  if (p) memcpy(p, sig, sizeof sig);
  put32(c, 0); /* flags: no oids */
  put32(c, 0); /* header extension length */
}

int siox_copybuf_finish(struct siox_copybuf *c) {
  put16(c, 0xffff);
  return c->err;
}

void siox_copybuf_row(struct siox_copybuf *c, uint16_t nfields) { put16(c, nfields); }

void siox_copybuf_null(struct siox_copybuf *c) { put32(c, 0xffffffffu); }

void siox_copybuf_i32(struct siox_copybuf *c, int32_t v) {
  put32(c, 4);
  put32(c, (uint32_t)v);
}

void siox_copybuf_bool(struct siox_copybuf *c, int v) {
  put32(c, 1);
  uint8_t *p = room(c, 1);
  if (p) *p = v != 0;
}

void siox_copybuf_i64(struct siox_copybuf *c, int64_t v) {
  put32(c, 8);
  put64(c, (uint64_t)v);
}

void siox_copybuf_f32(struct siox_copybuf *c, float v) {
  uint32_t bits;
  memcpy(&bits, &v, sizeof bits);
  put32(c, 4);
  put32(c, bits);
}

void siox_copybuf_f64(struct siox_copybuf *c, double v) {
  uint64_t bits;
  memcpy(&bits, &v, sizeof bits);
  put32(c, 8);
  put64(c, bits);
}

void siox_copybuf_text(struct siox_copybuf *c, const char *s, size_t len) {
  put32(c, (uint32_t)len);
  uint8_t *p = room(c, len);
  if (p && len) memcpy(p, s, len);
}

void siox_copybuf_array(struct siox_copybuf *c, uint32_t elem_oid, uint32_t n, uint32_t elem_size) {
  /* An empty array has no dimension: ndim 0 and no (size, lbound) pair. */
  uint32_t body = 12 + (n ? 8 : 0) + n * (4 + elem_size);
  put32(c, body);
  put32(c, n ? 1 : 0); /* ndim */
  put32(c, 0);         /* no NULL elements */
  put32(c, elem_oid);
  if (n) {
    put32(c, n);
    put32(c, 1); /* lower bound */
  }
}
