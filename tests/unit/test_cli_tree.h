/* Synthetic causal trees for the siox-cli unit tests (graph.c, blame.c). */
#ifndef TEST_CLI_TREE_H
#define TEST_CLI_TREE_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "blame.h"
#include "graph.h"

#define MS 1000000LL
#define MIB (1024LL * 1024)

/* Adds one activity; node_id names the node for peer grouping. */
static inline void tree_add(struct siox_tree *t, int64_t aid, int64_t parent, const char *hwid, const char *swid,
                            const char *name, int32_t node_id, int64_t start, int64_t end) {
  struct siox_act_info in = {.aid = aid, .parent = parent, .link = parent ? SIOX_LINK_EXPLICIT : SIOX_LINK_ROOT,
                             .confidence = 1.0, .node_id = node_id, .hwid = hwid, .swid = swid, .name = name,
                             .job = "job42", .start_ns = start, .end_ns = end};
  assert_int_equal(siox_tree_add(t, &in), 0);
}

static inline void tree_bytes(struct siox_tree *t, int64_t aid, int64_t bytes) {
  struct siox_act *a = siox_tree_find(t, aid);
  assert_non_null(a);
  assert_int_equal(siox_act_add_num(a, "io/bytes", "B", SIOX_AV_U64, bytes, 0), 0);
}

/* app write -> fs-client write -> (implicit) brick WRITE -> device write on
 * `dev`, taking dev_ns in the device; aids 1..4. Caller destroys. */
static inline struct siox_tree *io_chain(const char *dev, int32_t dev_node, int64_t dev_ns, int64_t bytes) {
  struct siox_tree *t = siox_tree_create();
  assert_non_null(t);
  int64_t s = 1000 * MS;
  tree_add(t, 1, 0, "host0", "POSIX", "write", 1, s, s + dev_ns + 400000);
  tree_add(t, 2, 1, "host0", "GlusterFS-client", "writev", 2, s + 50000, s + dev_ns + 350000);
  tree_add(t, 3, 2, "srv", "GlusterFS-brick", "WRITE", 3, s + 100000, s + dev_ns + 300000);
  tree_add(t, 4, 3, dev, "device", "write", dev_node, s + 150000, s + 150000 + dev_ns);
  t->acts[2].link = SIOX_LINK_IMPLICIT;
  assert_int_equal(siox_tree_finish(t, 1), 0);
  for (int64_t aid = 1; aid <= 4; aid++) tree_bytes(t, aid, bytes);
  return t;
}

#endif
