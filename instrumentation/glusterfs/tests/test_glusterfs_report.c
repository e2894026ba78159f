/*
 * Unit test of the GlusterFS translators' reporting logic (sx_report.c)
 * against a recording stub of the libsiox-client API: which records one fop
 * produces on the client and on the brick side, without a file system.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "sx_report.h"

/* ---------------------------------------------------------- the stub */
struct siox_detached {
  siox_aid aid;
  siox_type_id type;
};
static struct siox_detached acts[8];
static int n_acts, n_stops;
static char calls[4096]; /* one line per recorded call */

static void rec(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  size_t n = strlen(calls);
  vsnprintf(calls + n, sizeof calls - n, fmt, ap);
  va_end(ap);
  strncat(calls, "\n", sizeof calls - strlen(calls) - 1);
}

static const char *desc_str(const siox_desc *d) {
  static char s[80];
  if (d->type == SIOX_ATTR_POSIX_PATH) snprintf(s, sizeof s, "path:%.*s", (int)d->len, (const char *)d->v.ptr);
  else snprintf(s, sizeof s, "gfid:%02x..%02x/%u", ((const uint8_t *)d->v.ptr)[0], ((const uint8_t *)d->v.ptr)[15], d->len);
  return s;
}

int siox_node_register(const char *hwid, const char *swid, const char *iid, siox_unid *out) {
  rec("node %s %s %s", hwid, swid, iid ? iid : "-");
  *out = strcmp(swid, SX_SWID_BRICK) == 0 ? 20 : 10;
  return 0;
}
int siox_edge_register(siox_unid from, siox_unid to) { rec("edge %u %u", from, to); return 0; }
int siox_target_register(const char *hwid, const char *swid, siox_target_id *out) {
  rec("target %s %s", hwid, swid);
  *out = 7;
  return 0;
}
int siox_activity_type_register(siox_unid node, const char *name, siox_type_id *out) {
  (void)name;
  static siox_type_id next = 1;
  *out = node * 100 + next++;
  return 0;
}
siox_detached *siox_activity_start_detached(siox_type_id type, siox_aid parent) {
  rec("start parent=%llu", (unsigned long long)parent);
  acts[n_acts] = (struct siox_detached){(siox_aid)(n_acts + 1), type};
  return &acts[n_acts++];
}
siox_aid siox_detached_aid(const siox_detached *a) { return a->aid; }
void siox_detached_attr_u64(siox_detached *a, uint32_t attr, uint64_t v) {
  rec("attr %llu %s=%llu", (unsigned long long)a->aid, siox_attr_lookup(attr)->name, (unsigned long long)v);
}
void siox_detached_attr_i64(siox_detached *a, uint32_t attr, int64_t v) {
  rec("attr %llu %s=%lld", (unsigned long long)a->aid, siox_attr_lookup(attr)->name, (long long)v);
}
void siox_detached_error(siox_detached *a, int32_t err) { rec("error %llu %d", (unsigned long long)a->aid, err); }
void siox_detached_stop(siox_detached *a) { rec("stop %llu", (unsigned long long)a->aid); n_stops++; }
int siox_descriptor_receive(siox_aid aid, const siox_desc *d, uint64_t off, uint64_t len) {
  rec("recv %llu %s %llu+%llu", (unsigned long long)aid, desc_str(d), (unsigned long long)off, (unsigned long long)len);
  return 0;
}
int siox_descriptor_send(siox_aid aid, siox_target_id t, const siox_desc *d, uint64_t off, uint64_t len) {
  rec("send %llu t=%u %s %llu+%llu", (unsigned long long)aid, t, desc_str(d), (unsigned long long)off,
      (unsigned long long)len);
  return 0;
}
int siox_descriptor_map(siox_unid node, siox_aid aid, const siox_desc *from, const siox_desc *to) {
  char f[80];
  snprintf(f, sizeof f, "%s", desc_str(from));
  rec("map %u %llu %s -> %s", node, (unsigned long long)aid, f, desc_str(to));
  return 0;
}

/* ---------------------------------------------------------- the tests */
static const uint8_t G[SX_GFID_BYTES] = {0xab, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 0xcd};

static int reset(void **state) {
  (void)state;
  calls[0] = 0;
  n_acts = n_stops = 0;
  return 0;
}

static void test_client_node_names_brick(void **state) {
  (void)state;
  struct sx_node n;
  assert_int_equal(sx_node_init(&n, SX_CLIENT, "host1", "brick2:/srv/b2"), 0);
  assert_string_equal(calls, "node host1 GlusterFS-client brick2:/srv/b2\n"
                             "node brick2:/srv/b2 GlusterFS-brick -\n"
                             "edge 10 20\n"
                             "target brick2:/srv/b2 GlusterFS-brick\n");
  assert_int_equal(n.node, 10);
  assert_int_equal(n.brick, 7);
  for (int f = 0; f < SX_NFOPS; f++) assert_int_not_equal(n.type[f], 0);
}

static void test_brick_node_is_the_brick(void **state) {
  (void)state;
  struct sx_node n;
  assert_int_equal(sx_node_init(&n, SX_BRICK, NULL, "brick2:/srv/b2"), 0);
  assert_string_equal(calls, "node brick2:/srv/b2 GlusterFS-brick -\n");
  assert_int_equal(sx_node_init(&n, SX_BRICK, NULL, ""), -EINVAL);
  assert_int_equal(sx_node_init(&n, SX_CLIENT, NULL, "b"), -EINVAL);
}

static void test_client_writev_receives_and_sends(void **state) {
  (void)state;
  struct sx_node n;
  sx_node_init(&n, SX_CLIENT, "h", "b1");
  calls[0] = 0;
  siox_detached *a = sx_io_start(&n, SX_WRITEV, 65536, 4096);
  assert_non_null(a);
  assert_int_equal(a->type, n.type[SX_WRITEV]);
  assert_string_equal(calls, "start parent=0\n"
                             "attr 1 io/offset=65536\n"
                             "attr 1 io/bytes=4096\n");
  calls[0] = 0;
  sx_io_link(&n, a, G, 65536, 4096);
  sx_fop_stop(a, 4096, 0);
  assert_string_equal(calls, "recv 1 gfid:ab..cd/16 65536+4096\n"
                             "send 1 t=7 gfid:ab..cd/16 65536+4096\n"
                             "attr 1 io/result=4096\nstop 1\n");
}

static void test_brick_readv_only_receives(void **state) {
  (void)state;
  struct sx_node n;
  sx_node_init(&n, SX_BRICK, NULL, "b1");
  calls[0] = 0;
  siox_detached *a = sx_io_start(&n, SX_READV, 0, 131072);
  assert_int_equal(a->type, n.type[SX_READV]);
  sx_io_link(&n, a, G, 0, 131072);
  assert_null(strstr(calls, "send"));
  assert_non_null(strstr(calls, "recv 1 gfid:ab..cd/16 0+131072\n"));
}

/* The metadata fops name the whole file: no range; the client receives
 * (from the POSIX call above: open, creat, stat, fsync, close, unlink send
 * to it) and sends to its brick. */
static void test_file_fops_link_without_range(void **state) {
  (void)state;
  struct sx_node c, b;
  sx_node_init(&c, SX_CLIENT, "h", "b1");
  sx_node_init(&b, SX_BRICK, NULL, "b1");
  calls[0] = 0;
  siox_detached *a = sx_fop_start(&c, SX_FSYNC);
  assert_int_equal(a->type, c.type[SX_FSYNC]);
  sx_file_link(&c, a, G);
  sx_fop_stop(a, 0, 0);
  assert_string_equal(calls, "start parent=0\n"
                             "recv 1 gfid:ab..cd/16 0+0\n"
                             "send 1 t=7 gfid:ab..cd/16 0+0\n"
                             "attr 1 io/result=0\nstop 1\n");
  calls[0] = 0;
  a = sx_fop_start(&b, SX_STAT);
  sx_file_link(&b, a, G);
  sx_file_link(&b, a, NULL);
  sx_file_link(&b, NULL, G);
  assert_string_equal(calls, "start parent=0\n"
                             "recv 2 gfid:ab..cd/16 0+0\n");
  static const enum sx_fop meta[] = {SX_LOOKUP, SX_CREATE, SX_OPEN, SX_FLUSH, SX_UNLINK};
  static const char *const names[] = {"lookup", "create", "open", "flush", "unlink"};
  for (size_t i = 0; i < sizeof meta / sizeof *meta; i++) {
    calls[0] = 0;
    a = sx_fop_start(&c, meta[i]);
    assert_non_null(a);
    assert_int_equal(a->type, c.type[meta[i]]);
    assert_string_equal(sx_fop_name(meta[i]), names[i]);
    sx_file_link(&c, a, G);
    assert_non_null(strstr(calls, "recv"));
    assert_non_null(strstr(calls, "send"));
    sx_fop_stop(a, 0, 0);
  }
}

static void test_null_gfid_gives_no_link(void **state) {
  (void)state;
  static const uint8_t zero[SX_GFID_BYTES];
  struct sx_node n;
  sx_node_init(&n, SX_CLIENT, "h", "b1");
  calls[0] = 0;
  siox_detached *a = sx_io_start(&n, SX_WRITEV, 0, 1);
  assert_non_null(a);
  sx_io_link(&n, a, zero, 0, 1);
  sx_io_link(&n, a, NULL, 0, 1);
  sx_io_link(&n, NULL, G, 0, 1);
  assert_null(strstr(calls, "recv"));
  assert_null(strstr(calls, "send"));
}

static void test_failed_fop_records_errno(void **state) {
  (void)state;
  struct sx_node n;
  sx_node_init(&n, SX_BRICK, NULL, "b1");
  siox_detached *a = sx_fop_start(&n, SX_FSYNC);
  calls[0] = 0;
  sx_fop_stop(a, -1, EIO);
  char want[64];
  snprintf(want, sizeof want, "attr 1 io/result=-1\nerror 1 %d\nstop 1\n", EIO);
  assert_string_equal(calls, want);
  sx_fop_stop(NULL, 0, 0); /* nothing recorded, no crash */
  assert_int_equal(n_stops, 1);
}

/* The time a fop was in its process before the wind: from the call
 * stack's stamp to now, nothing when the process does not stamp (zero). */
static void test_queued_time(void **state) {
  (void)state;
  assert_int_equal(sx_queued_ns(10, 900000000, 11, 100000000), 200000000);
  assert_int_equal(sx_queued_ns(0, 0, 11, 100000000), 0);   /* not stamped */
  assert_int_equal(sx_queued_ns(12, 0, 11, 100000000), 0);  /* after now */
  struct sx_node n;
  sx_node_init(&n, SX_BRICK, NULL, "b1");
  siox_detached *a = sx_fop_start(&n, SX_WRITEV);
  calls[0] = 0;
  sx_fop_queued(a, 250);
  sx_fop_queued(a, 0);
  sx_fop_queued(NULL, 5);
  assert_string_equal(calls, "attr 1 glusterfs/queued_ns=250\n");
}

static void test_unregistered_node_records_nothing(void **state) {
  (void)state;
  struct sx_node n;
  memset(&n, 0, sizeof n); /* what init leaves after a failed registration */
  assert_null(sx_fop_start(&n, SX_LOOKUP));
  assert_null(sx_io_start(&n, SX_WRITEV, 0, 1));
  assert_string_equal(calls, "");
}

static void test_map_skips_what_names_no_file(void **state) {
  (void)state;
  static const uint8_t zero[SX_GFID_BYTES];
  struct sx_node n;
  sx_node_init(&n, SX_CLIENT, "h", "b1");
  calls[0] = 0;
  assert_int_equal(sx_map_path(&n, NULL, "<gfid:0102>/x", G), -EINVAL);
  assert_int_equal(sx_map_path(&n, NULL, "", G), -EINVAL);
  assert_int_equal(sx_map_path(&n, NULL, NULL, G), -EINVAL);
  assert_int_equal(sx_map_path(&n, NULL, "/d/f", zero), -EINVAL);
  assert_string_equal(calls, "");
  siox_detached *a = sx_fop_start(&n, SX_LOOKUP);
  assert_int_equal(sx_map_path(&n, a, "/d/f", G), 0);
  assert_non_null(strstr(calls, "map 10 1 path:/d/f -> gfid:ab..cd/16\n"));
}

static void test_path_hash_tells_paths_apart(void **state) {
  (void)state;
  assert_int_equal(sx_path_hash("/a"), sx_path_hash("/a"));
  assert_int_not_equal(sx_path_hash("/a"), sx_path_hash("/b"));
  assert_int_not_equal(sx_path_hash(""), 0);
  assert_string_equal(sx_fop_name(SX_WRITEV), "writev");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup(test_client_node_names_brick, reset),
      cmocka_unit_test_setup(test_brick_node_is_the_brick, reset),
      cmocka_unit_test_setup(test_client_writev_receives_and_sends, reset),
      cmocka_unit_test_setup(test_brick_readv_only_receives, reset),
      cmocka_unit_test_setup(test_file_fops_link_without_range, reset),
      cmocka_unit_test_setup(test_null_gfid_gives_no_link, reset),
      cmocka_unit_test_setup(test_failed_fop_records_errno, reset),
      cmocka_unit_test_setup(test_queued_time, reset),
      cmocka_unit_test_setup(test_unregistered_node_records_nothing, reset),
      cmocka_unit_test_setup(test_map_skips_what_names_no_file, reset),
      cmocka_unit_test_setup(test_path_hash_tells_paths_apart, reset),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
