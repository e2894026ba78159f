/*
 * siox-daemon batcher: records of two processes, interleaved a thread
 * buffer at a time, become one block with a process entry per client,
 * activities grouped per buffer with converted timestamps, their numeric
 * attributes sliced in order, and dictionaries (nodes, types) kept.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>
#include <siox/siox_ontology.h>

#include "cw_synth.h"
#include "daemon.h"

static void rank_records(struct synth_buf *b, uint64_t first_aid, uint64_t off0, int n, bool with_dict) {
  if (with_dict) {
    synth_node(b, 1, "host1", "POSIX", "");
    synth_type(b, 2, 1, "write");
  }
  for (int i = 0; i < n; i++) {
    struct siox_cw_attr at[2] = {{SIOX_ATTR_IO_OFFSET, SIOX_VT_U64, {.u64 = off0 + (uint64_t)i * 8192}},
                                 {SIOX_ATTR_IO_BYTES, SIOX_VT_U64, {.u64 = 4096}}};
    uint64_t t = 3000 + (uint64_t)i * 300; /* TSC ticks */
    synth_activity(b, 2, first_aid + (uint64_t)i, 0, t, t + 30, 0, 2, at);
  }
}

/* One walk checks and adds: a frame whose last record is malformed must
 * leave nothing of itself in the block (process entry, dictionaries,
 * activities, attributes, strings, drop counts), and the next good frame
 * must be taken as if the bad one had never come. */
static void test_malformed_frame_adds_nothing(void **state) {
  (void)state;
  struct batcher bt;
  batcher_init(&bt);
  struct client_ident a = {100, 1000, 0xa, "nodeX", "/bin/ior", "ior -w", "j1"};
  struct batcher_slot sa = {0};
  struct daemon_counters ctr = {0};
  struct clock_conv cc;
  clock_conv_init(&cc, 0, 0, 0, 0, 0);
  struct synth_buf r = {0};
  rank_records(&r, 1, 0, 3, true);
  synth_activity(&r, 9, 7, 0, 1, 2, 0, 0, NULL); /* unregistered type: a validation drop */
  uint8_t *bad = synth_reserve(&r, 8);
  memset(bad, 0, 8);
  bad[0] = 99; /* record type 99, 1 word: unknown */
  bad[2] = 1;
  assert_int_equal(batcher_add_records(&bt, &sa, &a, &cc, r.p, r.len, &ctr), -EBADMSG);
  assert_string_equal(bt.why, "unknown record type");
  synth_buf_free(&r);
  const struct siox_block *k = &bt.block;
  assert_int_equal(k->n_processes, 0);
  assert_int_equal(k->n_nodes, 0);
  assert_int_equal(k->n_types, 0);
  assert_int_equal(k->n_activities, 0);
  assert_int_equal(k->n_attrs, 0);
  assert_int_equal(bt.activities, 0);
  assert_int_equal(sa.dropped_records, 0);
  assert_int_equal(ctr.records_dropped_validation, 0);

  rank_records(&r, 1, 0, 2, true);
  assert_int_equal(batcher_add_records(&bt, &sa, &a, &cc, r.p, r.len, &ctr), 0);
  synth_buf_free(&r);
  assert_int_equal(k->n_processes, 1);
  assert_string_equal(k->processes[0].exe, "/bin/ior");
  assert_int_equal(k->n_nodes, 1);
  assert_string_equal(k->nodes[0].hwid, "host1");
  assert_int_equal(k->n_types, 1);
  assert_string_equal(k->types[0].name, "write");
  assert_int_equal(k->n_activities, 2);
  assert_int_equal(k->n_attrs, 4);
  assert_int_equal(k->activities[0].proc, 0);
  assert_int_equal(bt.activities, 2);
  batcher_destroy(&bt);
  validate_free(&sa);
}

static void test_two_processes(void **state) {
  (void)state;
  struct batcher bt;
  batcher_init(&bt);
  struct client_ident a = {100, 1000, 0xa, "nodeX", "/bin/ior", "ior -w", "j1"};
  struct client_ident b = {200, 1001, 0xb, "nodeX", "/bin/ior", "ior -w", "j1"};
  struct batcher_slot sa = {0}, sb = {0};
  struct daemon_counters ctr = {0};
  struct clock_conv cc;
  /* 3 ticks per ns, so tick 3000 is ns 1000 + base. */
  clock_conv_init(&cc, SIOX_CW_CLOCK_TSC, 0, 1000000, 3000000, 2000000);
  struct synth_buf r = {0};
  rank_records(&r, 1, 0, 3, true);
  assert_int_equal(batcher_add_records(&bt, &sa, &a, &cc, r.p, r.len, &ctr), 0);
  synth_buf_free(&r);
  rank_records(&r, 1, 4096, 2, true);
  assert_int_equal(batcher_add_records(&bt, &sb, &b, &cc, r.p, r.len, &ctr), 0);
  synth_buf_free(&r);
  rank_records(&r, 4, 3 * 8192, 1, false);
  assert_int_equal(batcher_add_records(&bt, &sa, &a, &cc, r.p, r.len, &ctr), 0);
  synth_buf_free(&r);
  struct siox_cw_stats st = {6, 8, 3, 0};
  assert_int_equal(batcher_add_stats(&bt, &sb, &b, &st), 0);

  const struct siox_block *k = &bt.block;
  assert_int_equal(k->n_processes, 2);
  assert_int_equal(k->processes[0].pid, 100);
  assert_int_equal(k->processes[1].uid, 1001);
  assert_int_equal(k->processes[1].nonce, 0xb);
  assert_string_equal(k->processes[0].host, "nodeX");
  assert_string_equal(k->processes[0].args, "ior -w");
  assert_int_equal(k->n_nodes, 2);
  assert_string_equal(k->nodes[1].swid, "POSIX");
  assert_string_equal(k->nodes[1].iid, "");
  assert_int_equal(k->nodes[1].proc, 1);
  assert_int_equal(k->n_types, 2);
  assert_string_equal(k->types[0].name, "write");
  assert_int_equal(bt.activities, 6);
  assert_int_equal(k->n_activities, 6);
  uint32_t procs[6] = {0, 0, 0, 1, 1, 0};
  uint64_t aids[6] = {1, 2, 3, 1, 2, 4};
  for (int i = 0; i < 6; i++) {
    assert_int_equal(k->activities[i].proc, procs[i]);
    assert_int_equal(k->activities[i].aid, aids[i]);
    assert_int_equal(k->activities[i].nattr, 2);
    assert_int_equal(k->activities[i].attr_first, 2 * i);
  }
  assert_int_equal(k->activities[1].start_ns, 1000000 + 1100);
  assert_int_equal(k->activities[1].end_ns, 1000000 + 1110);
  assert_int_equal(k->attrs[2 * 3].attr, SIOX_ATTR_IO_OFFSET);
  assert_int_equal(k->attrs[2 * 3].v.u64, 4096);
  assert_int_equal(k->attrs[2 * 5].v.u64, 3 * 8192);
  assert_int_equal(k->attrs[2 * 5 + 1].v.u64, 4096);
  assert_int_equal(k->n_stats, 1);
  assert_int_equal(k->stats[0].proc, 1);
  assert_int_equal(k->stats[0].dropped, 3);

  /* After a seal, the next block registers each process afresh. */
  batcher_reset(&bt);
  assert_int_equal(bt.block.n_processes, 0);
  rank_records(&r, 5, 0, 1, false);
  assert_int_equal(batcher_add_records(&bt, &sb, &b, &cc, r.p, r.len, &ctr), 0);
  assert_int_equal(bt.block.n_processes, 1);
  assert_int_equal(bt.block.processes[0].pid, 200);
  assert_int_equal(bt.block.activities[0].proc, 0);
  synth_buf_free(&r);
  validate_free(&sa);
  validate_free(&sb);
  batcher_destroy(&bt);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_two_processes),
                                     cmocka_unit_test(test_malformed_frame_adds_nothing)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
