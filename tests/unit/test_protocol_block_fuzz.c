/*
 * Deterministic mutation fuzz of siox_block_decode(): 200k mutants (fixed
 * seed) of a valid payload, half mutated after lz4 (compressed bytes and the
 * declared raw size) and half before it (protobuf bytes, re-compressed, so the
 * mutants reach the protobuf parser and the validator). Each must decode
 * cleanly or be refused with -EBADMSG; never crash, never leak (run under
 * ASan), and whatever decodes must satisfy the block's invariants.
 */
#include <errno.h>
#include <lz4.h>
#include <stdio.h>
#include <stdlib.h>

#include "test_protocol_sample.h"

#define MUTANTS_PER_MODE 100000

static uint64_t rng_state = 0x5105f022u;

static uint64_t rnd(void) { /* xorshift64: fixed seed, same mutants every run */
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return rng_state;
}

/* Mutates buf[0..*len) in place (capacity cap): byte flips, random bytes,
 * truncation, a run of 0xff/0x00, or a duplicated slice. */
static void mutate(uint8_t *buf, size_t *len, size_t cap) {
  size_t n = *len;
  if (!n) return;
  switch (rnd() % 6) {
  case 0: buf[rnd() % n] ^= (uint8_t)(1u << (rnd() % 8)); break;
  case 1:
    for (int k = 1 + (int)(rnd() % 4); k > 0; k--) buf[rnd() % n] = (uint8_t)rnd();
    break;
  case 2: *len = rnd() % n; break;
  case 3: {
    size_t at = rnd() % n, run = 1 + rnd() % 8;
    memset(buf + at, rnd() % 2 ? 0xff : 0x00, at + run <= n ? run : n - at);
    break;
  }
  case 4: {
    size_t from = rnd() % n, run = 1 + rnd() % 16, to = rnd() % n;
    if (from + run > n) run = n - from;
    uint8_t slice[16];
    if (n + run > cap) break;
    memcpy(slice, buf + from, run);
    memmove(buf + to + run, buf + to, n - to);
    memcpy(buf + to, slice, run);
    *len = n + run;
    break;
  }
  default: buf[rnd() % n] = (uint8_t)(rnd() % 3 == 0 ? 0x80 : rnd()); break;
  }
}

/* Whatever decoded must be usable without further checks. */
static void check_invariants(const struct siox_block *b) {
  for (size_t i = 0; i < b->n_activities; i++) {
    const struct siox_block_activity *a = &b->activities[i];
    assert_true(a->proc < b->n_processes);
    assert_true((uint64_t)a->attr_first + a->nattr <= b->n_attrs);
  }
  for (size_t i = 0; i < b->n_attrs; i++) assert_true(b->attrs[i].vtype <= SIOX_VT_F64);
  for (size_t i = 0; i < b->n_descriptors; i++) {
    const struct siox_block_descriptor *d = &b->descriptors[i];
    assert_true(d->proc < b->n_processes && d->nvalues >= 1 && d->nvalues <= 2);
    for (uint32_t k = 0; k < d->nvalues; k++)
      if (d->values[k].vtype >= SIOX_VT_STR) assert_int_equal(d->values[k].bytes[d->values[k].len], 0);
  }
  for (size_t i = 0; i < b->n_nodes; i++) assert_true(strlen(b->nodes[i].hwid) <= SIOX_BLOCK_MAX_STR);
  for (size_t i = 0; i < b->n_string_attrs; i++)
    assert_int_equal(b->string_attrs[i].value.bytes[b->string_attrs[i].value.len], 0);
}

static void fuzz_sample(struct siox_block *b) {
  sample_block(b);
  for (uint32_t i = 0; i < 40; i++) { /* some volume so the columns are worth mutating */
    struct siox_block_activity *a = siox_block_add_activity(b);
    a->proc = i % 3, a->aid = 100 + i, a->parent = i % 5 ? 99 + i : 0, a->start_ns = 1000 * i, a->end_ns = 1000 * i + 700;
    struct siox_value *v = siox_block_add_attrs(b, a, 2);
    v[0].attr = SIOX_ATTR_IO_OFFSET, v[0].v.u64 = 4096ull * i;
    v[1].attr = SIOX_ATTR_IO_BYTES, v[1].vtype = i % 7 ? SIOX_VT_U64 : SIOX_VT_F64, v[1].v.u64 = 4096;
  }
}

static void decode_one(const uint8_t *z, size_t zlen, size_t raw, struct siox_block *out, size_t *ok, size_t *bad) {
  const char *why = NULL;
  int rc = siox_block_decode(z, zlen, raw, out, &why);
  if (rc == 0) {
    check_invariants(out);
    ++*ok;
    return;
  }
  if (rc != -EBADMSG) fail_msg("decode returned %d (%s)", rc, why ? why : "?");
  assert_non_null(why);
  ++*bad;
}

static void test_mutate_compressed(void **state) {
  (void)state;
  struct siox_block in, out;
  uint8_t *z;
  size_t zlen, raw, ok = 0, bad = 0;
  siox_block_init(&in), siox_block_init(&out);
  fuzz_sample(&in);
  assert_int_equal(siox_block_encode(&in, &z, &zlen, &raw), 0);
  size_t cap = zlen + 256;
  uint8_t *m = malloc(cap);
  for (int it = 0; it < MUTANTS_PER_MODE; it++) {
    size_t mlen = zlen, mraw = raw;
    memcpy(m, z, zlen);
    for (int k = 1 + (int)(rnd() % 3); k > 0; k--) mutate(m, &mlen, cap);
    if (rnd() % 8 == 0) mraw = rnd() % 4 ? raw + (rnd() % 9) - 4 : rnd() % (2 * raw + 1);
    decode_one(m, mlen, mraw, &out, &ok, &bad);
  }
  printf("compressed mutants: %zu decoded, %zu rejected\n", ok, bad);
  assert_true(bad > MUTANTS_PER_MODE / 2);
  free(m), free(z);
  siox_block_free(&in), siox_block_free(&out);
}

/* Recovers the protobuf bytes of a payload, to mutate below lz4. */
static uint8_t *raw_of(const struct siox_block *b, size_t *raw) {
  uint8_t *z;
  size_t zlen;
  assert_int_equal(siox_block_encode(b, &z, &zlen, raw), 0);
  uint8_t *r = malloc(*raw);
  assert_int_equal(LZ4_decompress_safe((char *)z, (char *)r, (int)zlen, (int)*raw), (int)*raw);
  free(z);
  return r;
}

static void test_mutate_protobuf(void **state) {
  (void)state;
  struct siox_block in, out;
  size_t raw, ok = 0, bad = 0;
  siox_block_init(&in), siox_block_init(&out);
  fuzz_sample(&in);
  uint8_t *r = raw_of(&in, &raw);
  size_t cap = raw + 256;
  uint8_t *m = malloc(cap);
  int zcap = LZ4_compressBound((int)cap);
  uint8_t *z = malloc((size_t)zcap);
  for (int it = 0; it < MUTANTS_PER_MODE; it++) {
    size_t mlen = raw;
    memcpy(m, r, raw);
    for (int k = 1 + (int)(rnd() % 3); k > 0; k--) mutate(m, &mlen, cap);
    int zn = LZ4_compress_default((char *)m, (char *)z, (int)mlen, zcap);
    assert_true(zn > 0);
    decode_one(z, (size_t)zn, mlen, &out, &ok, &bad);
  }
  printf("protobuf mutants: %zu decoded, %zu rejected\n", ok, bad);
  assert_true(bad > 0 && ok > 0); /* both paths were exercised */
  free(m), free(z), free(r);
  siox_block_free(&in), siox_block_free(&out);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_mutate_compressed),
      cmocka_unit_test(test_mutate_protobuf),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
