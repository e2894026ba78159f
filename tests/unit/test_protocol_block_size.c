/*
 * Wire size of an SPMD I/O pattern: 4 processes x 50k writes of one type,
 * offsets strided by 4096 * nprocs, 4096 bytes each, start deltas 1-3 us and
 * durations 0.5-1.5 us with jitter, 2 numeric attributes. Asserts that the
 * block round-trips; prints (never asserts) compressed bytes per activity,
 * for the order the daemon uses (by process) and for a time-interleaved one.
 */
#include <stdio.h>
#include <stdlib.h>

#include "test_protocol_sample.h"

#define NPROCS 4
#define PER_PROC 50000

static uint64_t rng = 88172645463325252ull;
static uint64_t rnd(void) {
  rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
  return rng;
}

struct act {
  uint32_t proc;
  uint64_t aid;
  int64_t start, end;
};

static void add(struct siox_block *b, const struct act *x) {
  struct siox_block_activity *a = siox_block_add_activity(b);
  assert_non_null(a);
  a->proc = x->proc, a->type_id = 5, a->aid = x->aid;
  a->start_ns = x->start, a->end_ns = x->end;
  struct siox_value *v = siox_block_add_attrs(b, a, 2);
  assert_non_null(v);
  uint64_t i = x->aid - 1;
  v[0].attr = SIOX_ATTR_IO_OFFSET, v[0].vtype = SIOX_VT_U64, v[0].v.u64 = (i * NPROCS + x->proc) * 4096;
  v[1].attr = SIOX_ATTR_IO_BYTES, v[1].vtype = SIOX_VT_U64, v[1].v.u64 = 4096;
}

static void spmd(struct act *acts) {
  for (uint32_t p = 0; p < NPROCS; p++) {
    int64_t t = 1700000000000000000ll + p * 137;
    for (uint64_t i = 0; i < PER_PROC; i++) {
      struct act *x = &acts[p * PER_PROC + i];
      t += 1000 + (int64_t)(rnd() % 2000);
      x->proc = p, x->aid = i + 1, x->start = t, x->end = t + 500 + (int64_t)(rnd() % 1000);
    }
  }
}

static int by_start(const void *a, const void *b) {
  const struct act *x = a, *y = b;
  return (x->start > y->start) - (x->start < y->start);
}

/* Encodes acts[0..n) in batches of `batch`, checks the round trip, and
 * prints compressed and raw bytes per activity. */
static void measure(const char *name, const struct act *acts, size_t n, size_t batch) {
  struct siox_block b, d;
  size_t zsum = 0, rsum = 0;
  siox_block_init(&b), siox_block_init(&d);
  for (size_t first = 0; first < n; first += batch) {
    siox_block_reset(&b);
    for (uint32_t p = 0; p < NPROCS; p++) siox_block_add_process(&b)->pid = 100 + p;
    for (size_t i = first; i < n && i < first + batch; i++) add(&b, &acts[i]);
    uint8_t *z;
    size_t zlen, raw;
    const char *why;
    assert_int_equal(siox_block_encode(&b, &z, &zlen, &raw), 0);
    assert_int_equal(siox_block_decode(z, zlen, raw, &d, &why), 0);
    assert_blocks_same(&b, &d);
    zsum += zlen, rsum += raw;
    free(z);
  }
  printf("%s_lz4 %.2f bytes/activity\n%s_raw %.2f bytes/activity\n", name, (double)zsum / n, name, (double)rsum / n);
  siox_block_free(&b), siox_block_free(&d);
}

static void test_spmd_bytes_per_activity(void **state) {
  (void)state;
  size_t n = NPROCS * PER_PROC;
  struct act *acts = malloc(n * sizeof *acts);
  assert_non_null(acts);
  spmd(acts);
  measure("spmd_by_proc_block200k", acts, n, n);
  measure("spmd_by_proc_batch65536", acts, n, 65536);
  qsort(acts, n, sizeof *acts, by_start);
  measure("spmd_by_time_block200k", acts, n, n);
  free(acts);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_spmd_bytes_per_activity)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
