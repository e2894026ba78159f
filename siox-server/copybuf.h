/*
 * Rows for PostgreSQL's binary COPY format, built in one growing buffer
 * that ingest.c hands to PQputCopyData. Binary rather than text because
 * PostgreSQL then parses no numbers and no array literals (measured in
 * README.md). All integers are written in network byte order.
 */
#ifndef SIOX_COPYBUF_H
#define SIOX_COPYBUF_H

#include <stddef.h>
#include <stdint.h>

/* Element type oids of the arrays we write (pg_type.oid, stable). */
#define SIOX_PG_INT4_OID 23u
#define SIOX_PG_INT8_OID 20u
#define SIOX_PG_FLOAT8_OID 701u

struct siox_copybuf {
  uint8_t *p;
  size_t len, cap;
  int err; /* sticky: -ENOMEM once any append failed */
};

void siox_copybuf_init(struct siox_copybuf *c);
void siox_copybuf_free(struct siox_copybuf *c);
/* Empties the buffer (keeps capacity) and writes the COPY file header. */
void siox_copybuf_start(struct siox_copybuf *c);
/* Writes the end-of-data marker. Returns 0 or the sticky error. */
int siox_copybuf_finish(struct siox_copybuf *c);

void siox_copybuf_row(struct siox_copybuf *c, uint16_t nfields);
void siox_copybuf_null(struct siox_copybuf *c);
void siox_copybuf_i32(struct siox_copybuf *c, int32_t v);
void siox_copybuf_i64(struct siox_copybuf *c, int64_t v);
void siox_copybuf_bool(struct siox_copybuf *c, int v);
void siox_copybuf_f32(struct siox_copybuf *c, float v);
void siox_copybuf_f64(struct siox_copybuf *c, double v);
void siox_copybuf_text(struct siox_copybuf *c, const char *s, size_t len);
/* Starts a one-dimensional array field of n elements of elem_size bytes;
 * the caller then appends exactly n elements with _i32/_i64/_f64. */
void siox_copybuf_array(struct siox_copybuf *c, uint32_t elem_oid, uint32_t n, uint32_t elem_size);

#endif
