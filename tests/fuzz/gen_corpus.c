/*
 * Writes the seed corpus of the fuzz targets (tests/fuzz/corpus/<target>/)
 * from real encoder output: blocks built with the builders
 * (tests/unit/test_protocol_sample.h) and by the daemon's batcher from client
 * records made with the daemon test kit (siox-daemon/testkit), framed as
 * daemon and server frame them; plus a few malformed inputs of each kind.
 * Deterministic: running it again rewrites the same files.
 *   build-fuzz/tests/fuzz_gen_corpus tests/fuzz/corpus
 * Regression seeds (inputs that once crashed a target) are committed next to
 * these under their own names and are not written here.
 */
#include <errno.h>
#include <lz4.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cw_synth.h"
#include "daemon.h"
#include "siox.pb-c.h"
#include "siox_frame.h"
#include "test_protocol_sample.h"

static const char *out_dir;

static void die(const char *what) {
  fprintf(stderr, "fuzz_gen_corpus: %s: %s\n", what, strerror(errno));
  exit(1);
}

static void write_seed(const char *target, const char *name, const void *p, size_t len) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", out_dir, target);
  if (mkdir(path, 0755) < 0 && errno != EEXIST) die(path);
  snprintf(path, sizeof path, "%s/%s/%s", out_dir, target, name);
  FILE *f = fopen(path, "wb");
  if (!f || (len && fwrite(p, 1, len, f) != len) || fclose(f) != 0) die(path);
}

static void put(struct synth_buf *b, const void *p, size_t len) {
  if (len) memcpy(synth_reserve(b, len), p, len);
}

/* ---- client records (the test kit has no edge/target/node attribute/desc) -- */

#define PAD8(n) (((n) + 7u) & ~(size_t)7u)

static uint8_t *rec(struct synth_buf *b, uint16_t type, uint32_t a, size_t body) {
  size_t total = PAD8(sizeof(struct siox_cw_rec_hdr) + body);
  struct siox_cw_rec_hdr *h = synth_reserve(b, total);
  h->type = type, h->words = (uint16_t)(total / 8), h->a = a;
  return (uint8_t *)(h + 1);
}

static void rec_edge(struct synth_buf *b, uint32_t from, uint32_t to) {
  struct siox_cw_edge e = {to, 0};
  memcpy(rec(b, SIOX_REC_EDGE, from, sizeof e), &e, sizeof e);
}

static void rec_target(struct synth_buf *b, uint32_t id, const char *hwid, const char *swid) {
  struct siox_cw_target t = {(uint16_t)strlen(hwid), (uint16_t)strlen(swid), 0};
  uint8_t *p = rec(b, SIOX_REC_TARGET, id, sizeof t + t.hwid_len + t.swid_len);
  memcpy(p, &t, sizeof t);
  memcpy(p + sizeof t, hwid, t.hwid_len);
  memcpy(p + sizeof t + t.hwid_len, swid, t.swid_len);
}

static void rec_node_attr(struct synth_buf *b, uint32_t unid, uint32_t attr, uint32_t vtype, uint64_t v,
                          const char *s) {
  struct siox_cw_attr at = {attr, vtype, {.u64 = s ? strlen(s) : v}};
  size_t slen = s ? strlen(s) : 0;
  uint8_t *p = rec(b, SIOX_REC_NODE_ATTR, unid, sizeof at + slen);
  memcpy(p, &at, sizeof at);
  if (slen) memcpy(p + sizeof at, s, slen);
}

/* A descriptor with one value (two for MAP: a path, then an fd). */
static void rec_desc(struct synth_buf *b, uint32_t kind, uint64_t aid, uint32_t node, const char *path) {
  uint32_t n = kind == SIOX_DESC_MAP ? 2 : 1;
  size_t plen = strlen(path), body = sizeof(struct siox_cw_desc) + n * sizeof(struct siox_cw_desc_value) + PAD8(plen);
  uint8_t *p = rec(b, SIOX_REC_DESC, kind, body);
  struct siox_cw_desc d = {aid, node, n, 4096, 65536};
  memcpy(p, &d, sizeof d);
  p += sizeof d;
  struct siox_cw_desc_value v = {SIOX_ATTR_POSIX_PATH, (uint32_t)plen, 0};
  memcpy(p, &v, sizeof v);
  memcpy(p + sizeof v, path, plen);
  p += sizeof v + PAD8(plen);
  if (n == 2) {
    struct siox_cw_desc_value fd = {SIOX_ATTR_POSIX_FD, 0, 3};
    memcpy(p, &fd, sizeof fd);
  }
}

/* What the POSIX layer writes for a few writes of one process. */
static void records_io(struct synth_buf *b, int n, uint64_t aid0) {
  synth_node(b, 1, "node01", "POSIX", "");
  synth_type(b, 2, 1, "write");
  for (int i = 0; i < n; i++) {
    struct siox_cw_attr at[3] = {{SIOX_ATTR_IO_OFFSET, SIOX_VT_U64, {.u64 = (uint64_t)i * 4096}},
                                 {SIOX_ATTR_IO_BYTES, SIOX_VT_U64, {.u64 = 4096}},
                                 {SIOX_ATTR_IO_RESULT, SIOX_VT_I64, {.i64 = 4096}}};
    uint64_t t = 1000000 + (uint64_t)i * 5000;
    synth_activity(b, 2, aid0 + (uint64_t)i, i ? aid0 : 0, t, t + 1200, 0, 3, at);
    if (i % 4 == 0) synth_attr_str(b, SIOX_ATTR_POSIX_PATH, aid0 + (uint64_t)i, "/scratch/out.dat");
  }
}

/* Every record kind the client wire has. */
static void records_all(struct synth_buf *b) {
  synth_node(b, 1, "node01", "POSIX", "");
  synth_node(b, 3, "node01", "GlusterFS-client", "vol0");
  rec_edge(b, 1, 3);
  synth_type(b, 2, 1, "open");
  rec_target(b, 9, "", "GlusterFS-brick");
  rec_node_attr(b, 3, SIOX_ATTR_NODE_CAPACITY, SIOX_VT_U64, 1ull << 40, NULL);
  rec_node_attr(b, 3, SIOX_ATTR_NODE_CAPABILITIES, SIOX_VT_STR, 0, "striping,replica");
  for (uint32_t k = SIOX_DESC_CREATE; k <= SIOX_DESC_RECEIVE; k++) rec_desc(b, k, 100 + k, k == SIOX_DESC_SEND ? 9 : 1, "/scratch/f");
  struct siox_cw_attr f = {SIOX_ATTR_IO_BYTES, SIOX_VT_F64, {.f64 = 0.5}};
  synth_activity(b, 2, 101, 0, 10, 20, -2, 1, &f);
  synth_activity(b, 2, 102, 101, 15, 18, 0, 0, NULL);
  synth_attr_str(b, SIOX_ATTR_POSIX_PATH, 101, "/scratch/f");
}

static void hello(struct synth_buf *out, uint32_t clock_flags) {
  synth_hello(out, 0x5eed, clock_flags, 1000, 1700000000000000000, "/usr/bin/ior", "ior -w -b 4m", "job.42");
}

static void stats(struct synth_buf *out) {
  struct siox_cw_stats st = {16, 40, 0, 0};
  synth_frame(out, SIOX_CW_STATS, &st, sizeof st);
}

static void client_seeds(void) {
  const char *t = "fuzz_client_records";
  struct synth_buf out = {0}, r = {0};
  hello(&out, 0);
  records_io(&r, 12, 1000);
  synth_batch(&out, 0, 0, 0, &r);
  stats(&out);
  write_seed(t, "io_batch_stats", out.p, out.len);

  out.len = r.len = 0;
  hello(&out, 0);
  records_all(&r);
  synth_batch(&out, 1, 0, 0, &r);
  write_seed(t, "every_record_kind", out.p, out.len);

  out.len = r.len = 0;
  hello(&out, SIOX_CW_CLOCK_TSC); /* TSC ticks converted between two clock pairs */
  records_io(&r, 4, 1);
  synth_batch(&out, 0, 3000000, 1700000000001000000, &r);
  r.len = 0;
  records_io(&r, 4, 100);
  synth_batch(&out, 1, 6000000, 1700000000002000000, &r);
  stats(&out);
  write_seed(t, "tsc_two_batches", out.p, out.len);

  out.len = 0;
  hello(&out, 0);
  r.len = 0;
  synth_batch(&out, 0, 0, 0, &r); /* an empty batch */
  stats(&out);
  write_seed(t, "empty_batch", out.p, out.len);

  /* Malformed: each breaks one rule of the walker or the session. */
  static const struct {
    const char *name;
    size_t at;      /* byte offset into the records */
    uint64_t value; /* written there */
    unsigned width;
  } bad[] = {
      {"bad_words_zero", 2, 0, 2},           /* first record header: words = 0 */
      {"bad_words_past_end", 2, 0xffff, 2},  /* record runs past the batch */
      {"bad_record_type", 0, 99, 2},         /* unknown record type */
      {"bad_node_strlen", 8, 0xff, 2},       /* hwid longer than the record */
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    out.len = r.len = 0;
    hello(&out, 0);
    records_io(&r, 2, 7);
    memcpy(r.p + bad[i].at, &bad[i].value, bad[i].width);
    synth_batch(&out, 0, 0, 0, &r);
    write_seed(t, bad[i].name, out.p, out.len);
  }
  out.len = r.len = 0;
  hello(&out, 0);
  struct siox_cw_attr at[SIOX_CW_MAX_ATTRS + 1] = {{0}};
  synth_activity(&r, 2, 1, 0, 1, 2, 0, SIOX_CW_MAX_ATTRS + 1, at);
  synth_batch(&out, 0, 0, 0, &r);
  write_seed(t, "bad_too_many_attrs", out.p, out.len);

  out.len = r.len = 0;
  records_io(&r, 2, 7);
  synth_batch(&out, 0, 0, 0, &r); /* no HELLO first */
  write_seed(t, "bad_batch_before_hello", out.p, out.len);

  out.len = 0;
  hello(&out, 0);
  out.p[0] ^= 0xff; /* bad magic */
  write_seed(t, "bad_magic", out.p, out.len);
  synth_buf_free(&out);
  synth_buf_free(&r);
}

/* ---- blocks and server frames ------------------------------------------ */

/* A block the daemon's batcher makes of real client records. */
static void daemon_block(struct siox_block *b, int all_kinds) {
  struct batcher bt;
  struct synth_buf r = {0};
  struct client_ident who = {4242, 1000, 0x5eed, "node01", "/usr/bin/ior", "ior -w -b 4m", "job.42"};
  struct batcher_slot slot = {0};
  struct clock_conv cc;
  clock_conv_init(&cc, 0, 0, 0, 0, 0);
  batcher_init(&bt);
  if (all_kinds) records_all(&r);
  else records_io(&r, 24, 5000);
  struct daemon_counters ctr = {0};
  if (batcher_add_records(&bt, &slot, &who, &cc, r.p, r.len, &ctr) < 0) die("batcher_add_records");
  struct siox_cw_stats st = {24, 50, 1, 0};
  if (batcher_add_stats(&bt, &slot, &who, &st) < 0) die("batcher_add_stats");
  validate_free(&slot);
  *b = bt.block; /* the caller frees it */
  synth_buf_free(&r);
}

struct encoded {
  uint8_t *z, *raw;
  size_t zlen, rawlen;
};

static struct encoded encode(const struct siox_block *b) {
  struct encoded e;
  if (siox_block_encode(b, &e.z, &e.zlen, &e.rawlen) != 0) die("siox_block_encode");
  if (!(e.raw = malloc(e.rawlen + 1))) die("malloc");
  if (LZ4_decompress_safe((const char *)e.z, (char *)e.raw, (int)e.zlen, (int)e.rawlen) != (int)e.rawlen)
    die("LZ4_decompress_safe");
  return e;
}

static void frame(struct synth_buf *out, uint16_t type, const ProtobufCMessage *m) {
  size_t n = protobuf_c_message_get_packed_size(m);
  uint8_t hdr[SIOX_FRAME_HDR_LEN];
  siox_frame_hdr_encode(hdr, type, (uint32_t)n);
  put(out, hdr, sizeof hdr);
  protobuf_c_message_pack(m, synth_reserve(out, n));
}

static void server_hello(struct synth_buf *out, int hint_link) {
  Siox__Hello h = SIOX__HELLO__INIT;
  h.daemon_id = 0x1234567890ull, h.hostname = "node01", h.version = 1, h.hint_link = hint_link;
  frame(out, SIOX_FRAME_HELLO, &h.base);
}

static void server_batch(struct synth_buf *out, uint64_t seq, const struct encoded *e) {
  Siox__Batch m = SIOX__BATCH__INIT;
  m.daemon_id = 0x1234567890ull, m.seq = seq, m.clock_offset_ns = -1500, m.clock_uncertainty_ns = 80;
  m.activities = 24, m.raw_bytes = (uint32_t)e->rawlen, m.block.data = e->z, m.block.len = e->zlen;
  frame(out, SIOX_FRAME_BATCH, &m.base);
}

/* The ways fuzz_server_decode reads its input (its first byte). */
static void seed_mode(struct synth_buf *out, uint8_t mode) {
  out->len = 0;
  put(out, &mode, 1);
}

static void seed_lz4(const char *t, const char *name, const struct encoded *e) {
  struct synth_buf out = {0};
  seed_mode(&out, 1);
  uint32_t raw = (uint32_t)e->rawlen;
  put(&out, &raw, sizeof raw);
  put(&out, e->z, e->zlen);
  write_seed(t, name, out.p, out.len);
  synth_buf_free(&out);
}

static void seed_pb(const char *t, const char *name, const uint8_t *p, size_t len) {
  struct synth_buf out = {0};
  seed_mode(&out, 2);
  put(&out, p, len);
  write_seed(t, name, out.p, out.len);
  synth_buf_free(&out);
}

/* Blocks the encoder would never make (it refuses them): built as protobuf. */
static void bad_pb_seeds(const char *t) {
  Siox__Block b = SIOX__BLOCK__INIT;
  Siox__Process p = SIOX__PROCESS__INIT, *pp = &p;
  Siox__Node n = SIOX__NODE__INIT, *np = &n;
  n.proc = 1, n.hwid = "node01", n.swid = "POSIX", n.iid = "";
  b.n_processes = 1, b.processes = &pp, b.n_nodes = 1, b.nodes = &np;
  uint8_t buf[512];
  seed_pb(t, "pb_bad_node_proc", buf, siox__block__pack(&b, buf));

  Siox__Activities a = SIOX__ACTIVITIES__INIT;
  int64_t d[2] = {0, 1};
  uint64_t dur[2] = {5, 5};
  int32_t err[2] = {0, 0};
  uint32_t nattr[2] = {0, 0};
  a.n_proc_delta = a.n_aid_delta = a.n_parent_back = a.n_type_delta = a.n_start_delta = 2;
  a.proc_delta = a.aid_delta = a.parent_back = a.type_delta = a.start_delta = d;
  a.n_duration = 2, a.duration = dur, a.n_err = 2, a.err = err, a.n_nattr = 1, a.nattr = nattr;
  b.n_nodes = 0, b.activities = &a;
  seed_pb(t, "pb_bad_columns", buf, siox__block__pack(&b, buf)); /* nattr column short */
  a.n_nattr = 2, d[1] = 1;
  seed_pb(t, "pb_bad_activity_proc", buf, siox__block__pack(&b, buf)); /* proc 0 then 1 of 1 */
}

/* Mode 3 reads any bytes as a recipe for a protobuf Block: a few
 * pseudo-random ones (fixed seed) to start from. */
static void recipe_block_seeds(const char *t) {
  struct synth_buf out = {0};
  uint64_t x = 0x2545f4914f6cdd1dull;
  static const size_t sizes[] = {64, 256, 1024};
  for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
    seed_mode(&out, 3);
    for (size_t i = 0; i < sizes[s]; i++) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      uint8_t byte = (uint8_t)x;
      put(&out, &byte, 1);
    }
    char name[32];
    snprintf(name, sizeof name, "recipe_random_%zu", sizes[s]);
    write_seed(t, name, out.p, out.len);
  }
  synth_buf_free(&out);
}

static void server_seeds(void) {
  const char *t = "fuzz_server_decode";
  struct siox_block sample, io, all, empty;
  siox_block_init(&sample);
  siox_block_init(&empty);
  sample_block(&sample);
  daemon_block(&io, 0);
  daemon_block(&all, 1);
  struct encoded es = encode(&sample), ei = encode(&io), ea = encode(&all), ee = encode(&empty);
  struct synth_buf out = {0};

  seed_mode(&out, 0);
  server_hello(&out, 0);
  server_batch(&out, 1, &ei);
  server_batch(&out, 2, &ea);
  write_seed(t, "frames_hello_batches", out.p, out.len);

  seed_mode(&out, 0);
  server_hello(&out, 0);
  Siox__Ping ping = SIOX__PING__INIT;
  ping.t1 = 1700000000000000000;
  frame(&out, SIOX_FRAME_PING, &ping.base);
  Siox__StatusRequest sr = SIOX__STATUS_REQUEST__INIT;
  frame(&out, SIOX_FRAME_STATUS_REQUEST, &sr.base);
  server_batch(&out, 1, &es);
  server_batch(&out, 2, &ee);
  write_seed(t, "frames_ping_status_batches", out.p, out.len);

  seed_mode(&out, 0);
  server_hello(&out, 1);
  Siox__HintQuery q = SIOX__HINT_QUERY__INIT;
  q.id = 1, q.uid = 1000, q.exe = "/usr/bin/ior", q.args = "ior -w", q.path = "/scratch/f", q.component = "romio";
  frame(&out, SIOX_FRAME_HINT_QUERY, &q.base);
  write_seed(t, "frames_hint_link", out.p, out.len);

  /* Malformed streams. */
  seed_mode(&out, 0);
  server_batch(&out, 1, &ei);
  write_seed(t, "bad_batch_before_hello", out.p, out.len);
  seed_mode(&out, 0);
  server_hello(&out, 0);
  out.p[1] ^= 0x20; /* magic */
  write_seed(t, "bad_magic", out.p, out.len);
  seed_mode(&out, 0);
  server_hello(&out, 0);
  uint8_t hdr[SIOX_FRAME_HDR_LEN];
  siox_frame_hdr_encode(hdr, SIOX_FRAME_BATCH, SIOX_FRAME_MAX_PAYLOAD + 1);
  put(&out, hdr, sizeof hdr);
  write_seed(t, "bad_length", out.p, out.len);
  ei.z[ei.zlen / 2] ^= 0x55; /* corrupt lz4 inside a valid frame */
  seed_mode(&out, 0);
  server_hello(&out, 0);
  server_batch(&out, 1, &ei);
  write_seed(t, "bad_lz4_in_batch", out.p, out.len);
  ei.z[ei.zlen / 2] ^= 0x55;

  /* Blocks alone: lz4 with its raw size, and the protobuf inside. */
  seed_lz4(t, "lz4_sample", &es);
  seed_lz4(t, "lz4_daemon_io", &ei);
  seed_lz4(t, "lz4_daemon_all_kinds", &ea);
  seed_lz4(t, "lz4_empty", &ee);
  ei.rawlen += 1;
  seed_lz4(t, "bad_lz4_raw_size", &ei);
  ei.rawlen -= 1;
  seed_pb(t, "pb_sample", es.raw, es.rawlen);
  seed_pb(t, "pb_daemon_io", ei.raw, ei.rawlen);
  seed_pb(t, "pb_daemon_all_kinds", ea.raw, ea.rawlen);
  bad_pb_seeds(t);
  recipe_block_seeds(t);

  struct encoded *all_enc[] = {&es, &ei, &ea, &ee};
  for (size_t i = 0; i < 4; i++) free(all_enc[i]->z), free(all_enc[i]->raw);
  siox_block_free(&sample), siox_block_free(&io), siox_block_free(&all), siox_block_free(&empty);
  synth_buf_free(&out);
}

/* ---- round-trip recipes ------------------------------------------------- */

/* fuzz_block_roundtrip reads any bytes as a recipe: one step per opcode
 * byte, values after it. Seeds: each step kind in turn, and pseudo-random
 * recipes of a few sizes (fixed seed). */
static void recipe_seeds(void) {
  const char *t = "fuzz_block_roundtrip";
  struct synth_buf out = {0};
  uint8_t v = 1;
  for (uint8_t op = 0; op < 12; op++) {
    put(&out, &op, 1);
    for (int i = 0; i < 48; i++, v = (uint8_t)(v * 37 + 11)) put(&out, &v, 1);
  }
  write_seed(t, "every_step", out.p, out.len);
  uint64_t x = 0x9e3779b97f4a7c15ull;
  static const size_t sizes[] = {32, 96, 256, 512, 1024, 2048};
  for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
    out.len = 0;
    for (size_t i = 0; i < sizes[s]; i++) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      uint8_t byte = (uint8_t)x;
      put(&out, &byte, 1);
    }
    char name[32];
    snprintf(name, sizeof name, "random_%zu", sizes[s]);
    write_seed(t, name, out.p, out.len);
  }
  synth_buf_free(&out);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s CORPUS_DIR   (writes CORPUS_DIR/<target>/<seed>)\n", argv[0]);
    return 2;
  }
  out_dir = argv[1];
  if (mkdir(out_dir, 0755) < 0 && errno != EEXIST) die(out_dir);
  client_seeds();
  server_seeds();
  recipe_seeds();
  return 0;
}
