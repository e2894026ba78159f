/*
 * siox_block_encode_with() and its reusable siox_block_encoder: the payload
 * is protobuf-c's canonical encoding (unpack + pack of it gives the same
 * bytes) for the sample block, random activities with extreme values (which
 * also decode to what was encoded) and the empty block; the pack buffer,
 * sized by a bound rather than by protobuf-c's get_packed_size(), holds the
 * longest varints (under ASan an overrun fails here). A reused encoder gives
 * the bytes a fresh one gives, after a larger block and after a refused one;
 * refused blocks stay refused.
 */
#include <errno.h>
#include <stdint.h>
#include <lz4.h>
#include <stdlib.h>

#include "siox.pb-c.h"
#include "test_protocol_sample.h"

static uint64_t seed = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void) {
  seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
  return seed;
}

/* Extreme values half of the time: deltas then cover every varint length. */
static uint64_t wild(void) {
  switch (rnd() % 6) {
  case 0: return 0;
  case 1: return UINT64_MAX - rnd() % 3;
  case 2: return (uint64_t)1 << (rnd() % 64);
  default: return rnd() >> (rnd() % 64);
  }
}

static void random_activities(struct siox_block *b, int n) {
  for (int i = 0; i < 3; i++) {
    struct siox_block_process *p = siox_block_add_process(b);
    p->pid = (uint32_t)i + 1;
  }
  for (int i = 0; i < n; i++) {
    struct siox_block_activity *a = siox_block_add_activity(b);
    a->proc = (uint32_t)(rnd() % 3), a->type_id = (uint32_t)wild();
    a->aid = wild(), a->parent = rnd() % 4 ? wild() : 0;
    if (a->parent == a->aid) a->parent = 0; /* would travel as a root */
    a->start_ns = (int64_t)wild(), a->end_ns = (int64_t)wild(), a->err = (int32_t)wild();
    uint32_t k = (uint32_t)(rnd() % 4);
    struct siox_value *v = siox_block_add_attrs(b, a, k);
    for (uint32_t j = 0; j < k; j++) {
      v[j].attr = (uint32_t)(rnd() % 5 ? rnd() % 8 : wild());
      v[j].vtype = SIOX_VT_U64 + (uint32_t)(rnd() % 3);
      v[j].v.u64 = wild();
    }
  }
}

/* The uncompressed payload of b, encoded with e. */
static uint8_t *raw_payload(struct siox_block_encoder *e, const struct siox_block *b, size_t *raw) {
  uint8_t *z;
  size_t zlen;
  assert_int_equal(siox_block_encode_with(e, b, &z, &zlen, raw), 0);
  uint8_t *r = malloc(*raw ? *raw : 1);
  assert_int_equal(LZ4_decompress_safe((char *)z, (char *)r, (int)zlen, (int)*raw), (int)*raw);
  free(z);
  return r;
}

static void assert_canonical(const struct siox_block *b) {
  struct siox_block_encoder *e = siox_block_encoder_create();
  size_t raw;
  uint8_t *r = raw_payload(e, b, &raw);
  Siox__Block *pb = siox__block__unpack(NULL, raw, r);
  assert_non_null(pb);
  assert_non_null(pb->activities); /* always sent, even without activities */
  assert_int_equal(pb->activities->n_duration, b->n_activities);
  size_t n = siox__block__get_packed_size(pb);
  assert_int_equal(n, raw);
  uint8_t *again = malloc(n ? n : 1);
  siox__block__pack(pb, again);
  assert_memory_equal(again, r, raw);
  siox__block__free_unpacked(pb, NULL);
  free(again), free(r);
  siox_block_encoder_destroy(e);
}

static void test_sample_is_canonical(void **state) {
  (void)state;
  struct siox_block b;
  siox_block_init(&b);
  sample_block(&b);
  assert_canonical(&b);
  siox_block_free(&b);
}

static void test_empty_is_canonical(void **state) {
  (void)state;
  struct siox_block b;
  siox_block_init(&b);
  assert_canonical(&b);
  siox_block_free(&b);
}

/* ... and decode to the same activities: every delta, including those of
 * attribute ids many activities apart and across the growth of the map of
 * previous values. */
static void test_random_is_canonical(void **state) {
  (void)state;
  for (int round = 0; round < 50; round++) {
    struct siox_block b, back;
    siox_block_init(&b), siox_block_init(&back);
    random_activities(&b, 1 + (int)(rnd() % 2000));
    assert_canonical(&b);
    uint8_t *z;
    size_t zlen, raw;
    const char *why = NULL;
    assert_int_equal(siox_block_encode(&b, &z, &zlen, &raw), 0);
    assert_int_equal(siox_block_decode(z, zlen, raw, &back, &why), 0);
    assert_activities_same(&b, &back);
    free(z);
    siox_block_free(&b), siox_block_free(&back);
  }
}

/* Every column at its longest varint: the bounded pack buffer (exactly the
 * bound, for a fresh encoder) must hold it; ASan fails an overrun. */
static void test_longest_varints_fit(void **state) {
  (void)state;
  struct siox_block b;
  siox_block_init(&b);
  siox_block_add_process(&b), siox_block_add_process(&b);
  for (int i = 0; i < 1000; i++) {
    struct siox_block_activity *a = siox_block_add_activity(&b);
    int odd = i & 1;
    a->proc = (uint32_t)odd, a->type_id = odd ? UINT32_MAX : 0;
    a->aid = odd ? (uint64_t)1 << 63 : 0, a->parent = odd ? 1 : (uint64_t)1 << 63;
    a->start_ns = odd ? INT64_MIN : INT64_MAX, a->end_ns = odd ? INT64_MAX : INT64_MIN;
    a->err = odd ? INT32_MIN : INT32_MAX;
    struct siox_value *v = siox_block_add_attrs(&b, a, 3);
    v[0].attr = UINT32_MAX, v[0].vtype = SIOX_VT_U64, v[0].v.u64 = odd ? (uint64_t)1 << 63 : 0;
    v[1].attr = UINT32_MAX - 1, v[1].vtype = SIOX_VT_I64, v[1].v.i64 = odd ? INT64_MIN : INT64_MAX;
    v[2].attr = UINT32_MAX - 2, v[2].vtype = SIOX_VT_F64, v[2].v.f64 = -0.0;
  }
  assert_canonical(&b);
  siox_block_free(&b);
}

/* A reused encoder's bytes equal a fresh one's: after a larger block, and
 * after a block it refused half-way through its activities. */
static void test_reused_encoder(void **state) {
  (void)state;
  struct siox_block big, bad, small;
  siox_block_init(&big), siox_block_init(&bad), siox_block_init(&small);
  random_activities(&big, 5000);
  random_activities(&bad, 100);
  bad.activities[60].proc = 3; /* no such process */
  random_activities(&small, 10);
  struct siox_block_encoder *e = siox_block_encoder_create();
  size_t raw_big, raw_small, raw_fresh;
  free(raw_payload(e, &big, &raw_big));
  uint8_t *z;
  size_t zlen, raw;
  assert_int_equal(siox_block_encode_with(e, &bad, &z, &zlen, &raw), -EINVAL);
  uint8_t *reused = raw_payload(e, &small, &raw_small);
  struct siox_block_encoder *f = siox_block_encoder_create();
  uint8_t *fresh = raw_payload(f, &small, &raw_fresh);
  assert_int_equal(raw_small, raw_fresh);
  assert_memory_equal(reused, fresh, raw_small);
  free(reused), free(fresh);
  siox_block_encoder_destroy(e), siox_block_encoder_destroy(f);
  siox_block_free(&big), siox_block_free(&bad), siox_block_free(&small);
}

/* What the decoder would refuse, found in the column pass. */
static void test_bad_activity_refused(void **state) {
  (void)state;
  struct siox_block b;
  uint8_t *z;
  size_t zlen, raw;
  struct siox_block_encoder *e = siox_block_encoder_create();
  for (int k = 0; k < 3; k++) {
    siox_block_init(&b);
    random_activities(&b, 50);
    struct siox_block_activity *a = &b.activities[49];
    struct siox_value *v = siox_block_add_attrs(&b, a, 1);
    v->vtype = SIOX_VT_U64;
    if (k == 0) a->proc = 3;
    if (k == 1) a->nattr = 2; /* slice past the end of attrs */
    if (k == 2) v->vtype = SIOX_VT_STR;
    assert_int_equal(siox_block_encode_with(e, &b, &z, &zlen, &raw), -EINVAL);
    siox_block_free(&b);
  }
  siox_block_encoder_destroy(e);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_sample_is_canonical), cmocka_unit_test(test_empty_is_canonical),
      cmocka_unit_test(test_random_is_canonical), cmocka_unit_test(test_longest_varints_fit),
      cmocka_unit_test(test_reused_encoder),
      cmocka_unit_test(test_bad_activity_refused),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
