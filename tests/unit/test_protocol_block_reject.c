/*
 * siox_block_decode() refuses every malformed payload with -EBADMSG and a
 * reason, and leaves the block empty. Bad protobufs are built directly with
 * the generated protobuf-c API so that each check is hit on its own; a valid
 * fixture decodes (positive control) before each one is broken.
 */
#include <errno.h>
#include <lz4.h>
#include <stdlib.h>

#include "siox.pb-c.h"
#include "siox_frame.h"
#include "test_protocol_sample.h"

/* A small valid Block: 2 processes, one of each dictionary record, 3
 * activities with 2 attribute entries each (one float). */
struct fx {
  Siox__Block blk;
  Siox__Process proc[2];
  Siox__Process *procp[2];
  Siox__Node node;
  Siox__Node *nodep;
  Siox__Edge edge;
  Siox__Edge *edgep;
  Siox__ActivityType type;
  Siox__ActivityType *typep;
  Siox__Target target;
  Siox__Target *targetp;
  Siox__Value nav, dv[2];
  Siox__Value *dvp[2];
  Siox__NodeAttr na;
  Siox__NodeAttr *nap;
  Siox__StringAttr sa;
  Siox__StringAttr *sap;
  Siox__Descriptor desc;
  Siox__Descriptor *descp;
  Siox__Stats stats;
  Siox__Stats *statsp;
  Siox__Activities act;
  int64_t proc_delta[3], aid_delta[3], parent_back[3], type_delta[3], start_delta[3];
  uint64_t duration[3];
  int32_t err[3];
  uint32_t nattr[3], attr_id[6], attr_vtype[6];
  int64_t attr_delta[6];
  protobuf_c_boolean is_f64[6];
  double f64[3];
};

#define LINK1(f, m, p) (f)->blk.n_##m = 1, (f)->blk.m = &(f)->p

static void fx_dicts(struct fx *f) {
  siox__block__init(&f->blk);
  for (int i = 0; i < 2; i++) siox__process__init(&f->proc[i]), f->procp[i] = &f->proc[i];
  f->blk.n_processes = 2, f->blk.processes = f->procp;
  siox__node__init(&f->node), f->node.proc = 1, f->nodep = &f->node, LINK1(f, nodes, nodep);
  siox__edge__init(&f->edge), f->edge.proc = 1, f->edgep = &f->edge, LINK1(f, edges, edgep);
  siox__activity_type__init(&f->type), f->type.proc = 1, f->typep = &f->type, LINK1(f, types, typep);
  siox__target__init(&f->target), f->target.proc = 1, f->targetp = &f->target, LINK1(f, targets, targetp);
  siox__value__init(&f->nav), f->nav.v_case = SIOX__VALUE__V_U;
  siox__node_attr__init(&f->na), f->na.proc = 1, f->na.value = &f->nav, f->nap = &f->na, LINK1(f, node_attrs, nap);
  siox__string_attr__init(&f->sa), f->sa.proc = 1, f->sap = &f->sa, LINK1(f, string_attrs, sap);
  for (int i = 0; i < 2; i++) siox__value__init(&f->dv[i]), f->dv[i].v_case = SIOX__VALUE__V_I, f->dvp[i] = &f->dv[i];
  siox__descriptor__init(&f->desc), f->desc.proc = 1, f->desc.kind = SIOX_DESC_MAP;
  f->desc.n_values = 2, f->desc.values = f->dvp, f->descp = &f->desc, LINK1(f, descriptors, descp);
  siox__stats__init(&f->stats), f->stats.proc = 1, f->statsp = &f->stats, LINK1(f, stats, statsp);
}

static void fx_activities(struct fx *f) {
  Siox__Activities *a = &f->act;
  siox__activities__init(a);
  a->n_proc_delta = a->n_aid_delta = a->n_parent_back = a->n_type_delta = 3;
  a->n_start_delta = a->n_duration = a->n_err = a->n_nattr = 3;
  a->proc_delta = f->proc_delta, a->aid_delta = f->aid_delta, a->parent_back = f->parent_back;
  a->type_delta = f->type_delta, a->start_delta = f->start_delta, a->duration = f->duration;
  a->err = f->err, a->nattr = f->nattr;
  a->n_attr_id = a->n_attr_vtype = a->n_attr_delta = a->n_attr_is_f64 = 6;
  a->attr_id = f->attr_id, a->attr_vtype = f->attr_vtype, a->attr_delta = f->attr_delta;
  a->attr_is_f64 = f->is_f64, a->n_attr_f64 = 3, a->attr_f64 = f->f64;
  for (int i = 0; i < 3; i++) {
    f->proc_delta[i] = i == 1, f->aid_delta[i] = 1, f->type_delta[i] = 0, f->start_delta[i] = -100;
    f->nattr[i] = 2;
  }
  for (int j = 0; j < 6; j++) {
    f->attr_id[j] = (uint32_t)(1 + j % 2), f->attr_vtype[j] = j % 2 ? SIOX_VT_F64 : SIOX_VT_U64;
    f->is_f64[j] = j % 2, f->attr_delta[j] = j % 2 ? 0 : -4096;
  }
  f->blk.activities = a;
}

static struct fx *fx_new(void) {
  struct fx *f = calloc(1, sizeof *f);
  assert_non_null(f);
  fx_dicts(f);
  fx_activities(f);
  return f;
}

/* Packs + compresses pb (malloc'd result), as the daemon would. */
static uint8_t *compress_pb(const Siox__Block *pb, size_t *zlen, size_t *raw) {
  *raw = siox__block__get_packed_size(pb);
  uint8_t *buf = malloc(*raw + 1), *z = malloc((size_t)LZ4_compressBound((int)*raw) + 1);
  assert_non_null(buf), assert_non_null(z);
  siox__block__pack(pb, buf);
  int n = LZ4_compress_default((char *)buf, (char *)z, (int)*raw, LZ4_compressBound((int)*raw));
  assert_true(n > 0);
  *zlen = (size_t)n;
  free(buf);
  return z;
}

/* Decodes into a block that held data, expecting rc; on rejection the reason
 * must contain `about` and the block must be empty. */
static void expect_decode(const uint8_t *z, size_t zlen, size_t raw, int rc, const char *about) {
  struct siox_block b;
  const char *why = NULL;
  siox_block_init(&b);
  sample_block(&b);
  assert_int_equal(siox_block_decode(z, zlen, raw, &b, &why), rc);
  if (rc) {
    assert_non_null(why);
    if (!strstr(why, about)) fail_msg("reason \"%s\" does not mention \"%s\"", why, about);
    assert_int_equal(b.n_processes + b.n_activities + b.n_attrs + b.n_descriptors + b.n_nodes, 0);
  }
  siox_block_free(&b);
}

static void expect_pb(const Siox__Block *pb, int rc, const char *about) {
  size_t zlen, raw;
  uint8_t *z = compress_pb(pb, &zlen, &raw);
  expect_decode(z, zlen, raw, rc, about);
  free(z);
}

static void test_fixture_is_valid(void **state) {
  (void)state;
  struct fx *f = fx_new();
  expect_pb(&f->blk, 0, NULL);
  f->blk.activities = NULL; /* no Activities message at all: zero activities */
  expect_pb(&f->blk, 0, NULL);
  free(f);
}

static void test_lz4_level(void **state) {
  (void)state;
  struct fx *f = fx_new();
  size_t zlen, raw;
  uint8_t *z = compress_pb(&f->blk, &zlen, &raw);
  expect_decode(z, zlen - 1, raw, -EBADMSG, "lz4");
  expect_decode(z, zlen / 2, raw, -EBADMSG, "lz4");
  expect_decode(z, 0, raw, -EBADMSG, "lz4");
  expect_decode(z, zlen, raw + 1, -EBADMSG, "shorter");
  expect_decode(z, zlen, raw - 1, -EBADMSG, "lz4");
  expect_decode(z, zlen, 0, -EBADMSG, "lz4");
  expect_decode(z, zlen, SIOX_FRAME_MAX_PAYLOAD + 1ul, -EBADMSG, "raw size");
  static const uint8_t garbage[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0x00, 0x13, 0x37, 0xff, 0xff};
  expect_decode(garbage, sizeof garbage, 100, -EBADMSG, "lz4");
  free(z);
  free(f);
}

/* An lz4 bomb (2-byte empty Process messages, ~255x compression) is refused
 * under siox_block_decode_limited's absolute bound, whatever the factor
 * budget would allow; a declared size lz4 cannot reach is refused before it
 * is allocated; a normal block decodes under a small bound. */
static void test_decode_memory_bound(void **state) {
  (void)state;
  const size_t raw = 8u << 20;
  uint8_t *pb = malloc(raw), *z = malloc((size_t)LZ4_compressBound((int)raw));
  for (size_t i = 0; i < raw; i += 2) pb[i] = 0x0a, pb[i + 1] = 0;
  int zlen = LZ4_compress_default((char *)pb, (char *)z, (int)raw, LZ4_compressBound((int)raw));
  assert_true(zlen > 0 && (size_t)zlen < raw / 200);
  struct siox_block b;
  siox_block_init(&b);
  const char *why = NULL;
  assert_int_equal(siox_block_decode_limited(z, (size_t)zlen, raw, 4u << 20, &b, &why), -EBADMSG);
  assert_non_null(strstr(why, "decode memory budget"));
  assert_int_equal(siox_block_decode_limited(z, (size_t)zlen, raw, 32u << 20, &b, &why), -EBADMSG);
  assert_non_null(strstr(why, "budget"));
  assert_int_equal(siox_block_decode_limited(z, 100, raw, SIZE_MAX, &b, &why), -EBADMSG);
  assert_non_null(strstr(why, "lz4 can expand"));
  struct fx *f = fx_new();
  size_t flen, fraw;
  uint8_t *fz = compress_pb(&f->blk, &flen, &fraw);
  assert_int_equal(siox_block_decode_limited(fz, flen, fraw, 4u << 20, &b, &why), 0);
  siox_block_free(&b);
  free(fz);
  free(f);
  free(z);
  free(pb);
}

/* Valid lz4 around bytes that are no Block. */
static void test_protobuf_garbage(void **state) {
  (void)state;
  static const char junk[] = "\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01"; /* overlong varint tag */
  static const char trunc[] = "\x0a\x40\x08\x01";                             /* submessage longer than input */
  const char *cases[] = {junk, trunc};
  size_t lens[] = {sizeof junk - 1, sizeof trunc - 1};
  for (int i = 0; i < 2; i++) {
    char z[64];
    int n = LZ4_compress_default(cases[i], z, (int)lens[i], sizeof z);
    assert_true(n > 0);
    expect_decode((uint8_t *)z, (size_t)n, lens[i], -EBADMSG, "protobuf");
  }
}

static void test_unequal_columns(void **state) {
  (void)state;
  struct fx *f = fx_new();
  f->act.n_aid_delta = 2;
  expect_pb(&f->blk, -EBADMSG, "columns of unequal length");
  f->act.n_aid_delta = 3, f->act.n_err = 2;
  expect_pb(&f->blk, -EBADMSG, "columns of unequal length");
  f->act.n_err = 3, f->act.n_attr_vtype = 5;
  expect_pb(&f->blk, -EBADMSG, "attribute columns");
  f->act.n_attr_vtype = 6, f->nattr[2] = 3;
  expect_pb(&f->blk, -EBADMSG, "nattr");
  f->nattr[2] = 1;
  expect_pb(&f->blk, -EBADMSG, "nattr");
  free(f);
}

static void test_float_flags(void **state) {
  (void)state;
  struct fx *f = fx_new();
  f->is_f64[0] = 1;
  expect_pb(&f->blk, -EBADMSG, "attr_is_f64");
  f->is_f64[0] = 0, f->act.n_attr_f64 = 2;
  expect_pb(&f->blk, -EBADMSG, "attr_f64 length");
  f->act.n_attr_f64 = 3, f->attr_delta[1] = 5;
  expect_pb(&f->blk, -EBADMSG, "float attribute");
  f->attr_delta[1] = 0, f->attr_vtype[0] = SIOX_VT_STR;
  expect_pb(&f->blk, -EBADMSG, "not numeric");
  free(f);
}

static void test_activity_ranges(void **state) {
  (void)state;
  struct fx *f = fx_new();
  f->proc_delta[2] = 1; /* 0, 1, 2: only 2 processes */
  expect_pb(&f->blk, -EBADMSG, "proc index");
  f->proc_delta[2] = 0, f->proc_delta[0] = -1; /* wraps to UINT64_MAX */
  expect_pb(&f->blk, -EBADMSG, "proc index");
  f->proc_delta[0] = 0, f->type_delta[1] = (int64_t)UINT32_MAX + 1;
  expect_pb(&f->blk, -EBADMSG, "type id");
  free(f);
}

static void test_dictionary_proc_index(void **state) {
  (void)state;
  uint32_t *procs[8];
  struct fx *f = fx_new();
  procs[0] = &f->node.proc, procs[1] = &f->edge.proc, procs[2] = &f->type.proc, procs[3] = &f->target.proc;
  procs[4] = &f->na.proc, procs[5] = &f->sa.proc, procs[6] = &f->desc.proc, procs[7] = &f->stats.proc;
  for (int i = 0; i < 8; i++) {
    *procs[i] = 2;
    expect_pb(&f->blk, -EBADMSG, "proc index");
    *procs[i] = 1;
  }
  free(f);
}

static void test_values_and_descriptors(void **state) {
  (void)state;
  struct fx *f = fx_new();
  f->na.value = NULL;
  expect_pb(&f->blk, -EBADMSG, "node attribute: value");
  f->na.value = &f->nav, f->nav.v_case = SIOX__VALUE__V__NOT_SET;
  expect_pb(&f->blk, -EBADMSG, "node attribute: value");
  f->nav.v_case = SIOX__VALUE__V_U, f->dv[1].v_case = SIOX__VALUE__V__NOT_SET;
  expect_pb(&f->blk, -EBADMSG, "descriptor: value");
  f->dv[1].v_case = SIOX__VALUE__V_I;
  uint32_t kinds[] = {0, 6, SIOX_DESC_CREATE, SIOX_DESC_SEND};
  for (int i = 0; i < 4; i++) {
    f->desc.kind = kinds[i];
    expect_pb(&f->blk, -EBADMSG, i < 2 ? "kind" : "number of values");
  }
  f->desc.kind = SIOX_DESC_MAP, f->desc.n_values = 1;
  expect_pb(&f->blk, -EBADMSG, "number of values");
  free(f);
}

static void test_string_lengths(void **state) {
  (void)state;
  struct fx *f = fx_new();
  size_t n = SIOX_BLOCK_MAX_STR + 1;
  char *s = malloc(n + 1);
  memset(s, 'a', n), s[n] = 0;
  f->proc[0].host = s;
  expect_pb(&f->blk, -EBADMSG, "process string");
  f->proc[0].host = (char *)protobuf_c_empty_string, f->node.iid = s;
  expect_pb(&f->blk, -EBADMSG, "node string");
  f->node.iid = (char *)protobuf_c_empty_string, f->type.name = s;
  expect_pb(&f->blk, -EBADMSG, "type name");
  f->type.name = (char *)protobuf_c_empty_string, f->sa.value.len = n, f->sa.value.data = (uint8_t *)s;
  expect_pb(&f->blk, -EBADMSG, "string attribute");
  f->sa.value.len = 0, f->dv[0].v_case = SIOX__VALUE__V_B, f->dv[0].b.len = n, f->dv[0].b.data = (uint8_t *)s;
  expect_pb(&f->blk, -EBADMSG, "descriptor: value");
  f->dv[0].b.len = n - 1; /* exactly the limit is fine */
  expect_pb(&f->blk, 0, NULL);
  free(s);
  free(f);
}

/* The encoder refuses what the decoder would refuse, so a daemon bug shows
 * up at the daemon rather than as a poisoned batch on the server. */
static void test_encode_rejects_invalid_blocks(void **state) {
  (void)state;
  struct siox_block b;
  uint8_t *z = NULL;
  size_t zlen, raw;
  siox_block_init(&b);
  sample_block(&b);
  assert_int_equal(siox_block_encode(&b, &z, &zlen, &raw), 0);
  free(z);
  b.activities[0].proc = 3;
  assert_int_equal(siox_block_encode(&b, &z, &zlen, &raw), -EINVAL);
  b.activities[0].proc = 0, b.activities[1].attr_first = (uint32_t)b.n_attrs;
  assert_int_equal(siox_block_encode(&b, &z, &zlen, &raw), -EINVAL);
  b.activities[1].attr_first = 0, b.attrs[0].vtype = SIOX_VT_STR;
  assert_int_equal(siox_block_encode(&b, &z, &zlen, &raw), -EINVAL);
  b.attrs[0].vtype = SIOX_VT_U64, b.descriptors[0].kind = 9;
  assert_int_equal(siox_block_encode(&b, &z, &zlen, &raw), -EINVAL);
  b.descriptors[0].kind = SIOX_DESC_MAP; /* with 1 value */
  assert_int_equal(siox_block_encode(&b, &z, &zlen, &raw), -EINVAL);
  b.descriptors[0].kind = SIOX_DESC_CREATE, b.string_attrs[0].value.len = SIOX_BLOCK_MAX_STR + 1;
  assert_int_equal(siox_block_encode(&b, &z, &zlen, &raw), -EINVAL);
  b.string_attrs[0].value.len = 0, b.stats[0].proc = 99;
  assert_int_equal(siox_block_encode(&b, &z, &zlen, &raw), -EINVAL);
  siox_block_free(&b);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_fixture_is_valid),       cmocka_unit_test(test_lz4_level),
      cmocka_unit_test(test_protobuf_garbage),       cmocka_unit_test(test_unequal_columns),
      cmocka_unit_test(test_float_flags),            cmocka_unit_test(test_activity_ranges),
      cmocka_unit_test(test_dictionary_proc_index),  cmocka_unit_test(test_values_and_descriptors),
      cmocka_unit_test(test_string_lengths),         cmocka_unit_test(test_encode_rejects_invalid_blocks),
      cmocka_unit_test(test_decode_memory_bound),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
