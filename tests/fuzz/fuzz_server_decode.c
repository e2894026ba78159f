/*
 * libFuzzer target: what siox-server does with the bytes a peer sends it.
 * The first input byte picks how the rest is read:
 *   0          a TCP stream of frames, cut and dispatched as siox-server's
 *              net.c/session.c do: header check (siox_frame_hdr_decode),
 *              protobuf-c unpack of Hello, Batch, Ping, HintQuery, and
 *              siox_block_decode() of every Batch's block;
 *   1          a Batch's block directly: 4 bytes raw_bytes (little endian),
 *              then the lz4 block;
 *   2          an uncompressed protobuf Block, which the target compresses
 *              itself, so that mutations reach the protobuf and the
 *              validation behind lz4;
 *   3          a recipe for a protobuf Block (fuzz_pb_recipe.h): every field
 *              of every message set directly, packed, compressed, decoded.
 * Every block the decoder accepts must hold its promises (indices in range,
 * strings bounded; fuzz_check_decoded) and must survive encode + decode
 * unchanged: the decoder accepts nothing the encoder would refuse.
 */
#include <errno.h>
#include <lz4.h>
#include <stdint.h>
#include <stdlib.h>

#include "fuzz_common.h"
#include "fuzz_pb_recipe.h"
#include "siox.pb-c.h"
#include "siox_block.h"
#include "siox_frame.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* siox-server decodes every Batch on a worker thread, then ingests it. */
static void decode_block(const uint8_t *z, size_t zlen, size_t raw) {
  struct siox_block b;
  const char *why = "unset";
  siox_block_init(&b);
  int rc = siox_block_decode(z, zlen, raw, &b, &why);
  if (rc == 0) {
    FUZZ_CHECK(why == NULL, "success with a reason");
    fuzz_check_decoded(&b);
    uint8_t *z2 = NULL;
    size_t zlen2 = 0, raw2 = 0;
    rc = siox_block_encode(&b, &z2, &zlen2, &raw2);
    /* -EOVERFLOW: a dense block can re-encode larger than the frame limit. */
    FUZZ_CHECK(rc == 0 || rc == -EOVERFLOW, "decoded block not encodable: %d", rc);
    if (rc == 0) free(z2), fuzz_encode_decode_same(&b);
  } else {
    FUZZ_CHECK(rc == -EBADMSG || rc == -ENOMEM, "unexpected rc %d", rc);
    FUZZ_CHECK(why != NULL, "refusal without a reason");
    FUZZ_CHECK(b.n_processes == 0 && b.n_activities == 0 && b.n_attrs == 0, "refused block not left empty");
  }
  siox_block_free(&b);
}

/* The state session.c keeps per connection that decides what a frame may do. */
struct conn {
  int hello_done, hint_link;
  uint64_t daemon_id;
};

/* One frame as siox_session_frame() dispatches it. Returns 0 to go on, -1
 * where the server would reject the connection. */
static int on_frame(struct conn *c, uint16_t type, const uint8_t *p, size_t len) {
  switch (type) {
  case SIOX_FRAME_HELLO: {
    if (c->hello_done) return -1;
    Siox__Hello *m = siox__hello__unpack(NULL, len, p);
    if (!m) return -1;
    c->hello_done = 1, c->hint_link = m->hint_link, c->daemon_id = m->daemon_id;
    siox__hello__free_unpacked(m, NULL);
    return 0;
  }
  case SIOX_FRAME_BATCH: {
    if (!c->hello_done || c->hint_link) return -1;
    Siox__Batch *m = siox__batch__unpack(NULL, len, p);
    if (!m) return -1;
    int ok = m->daemon_id == c->daemon_id;
    if (ok) decode_block(m->block.data, m->block.len, m->raw_bytes);
    siox__batch__free_unpacked(m, NULL);
    return ok ? 0 : -1;
  }
  case SIOX_FRAME_PING: {
    Siox__Ping *m = siox__ping__unpack(NULL, len, p);
    if (!m) return -1;
    siox__ping__free_unpacked(m, NULL);
    return 0;
  }
  case SIOX_FRAME_STATUS_REQUEST: return 0; /* payload ignored */
  case SIOX_FRAME_HINT_QUERY: {
    if (!c->hello_done) return -1;
    Siox__HintQuery *q = siox__hint_query__unpack(NULL, len, p);
    if (!q) return -1;
    siox__hint_query__free_unpacked(q, NULL);
    return 0;
  }
  default: return -1;
  }
}

/* net.c's drain_frames(): cut complete frames off the front of the stream. */
static void frame_stream(const uint8_t *p, size_t len) {
  struct conn c = {0};
  while (len >= SIOX_FRAME_HDR_LEN) {
    struct siox_frame_hdr h;
    const char *why = NULL;
    if (siox_frame_hdr_decode(p, &h, &why) != 0) {
      FUZZ_CHECK(why != NULL, "header refused without a reason");
      return;
    }
    FUZZ_CHECK(h.length <= SIOX_FRAME_MAX_PAYLOAD && h.type >= 1 && h.type <= SIOX_FRAME_TYPE_LAST,
               "header accepted out of bounds");
    if (len - SIOX_FRAME_HDR_LEN < h.length) return; /* the server waits for more */
    /* An exact-size copy, so that ASan sees any read past the payload. */
    uint8_t *payload = malloc(h.length ? h.length : 1);
    FUZZ_CHECK(payload != NULL, "malloc");
    memcpy(payload, p + SIOX_FRAME_HDR_LEN, h.length);
    int rc = on_frame(&c, h.type, payload, h.length);
    free(payload);
    if (rc) return;
    p += SIOX_FRAME_HDR_LEN + h.length;
    len -= SIOX_FRAME_HDR_LEN + h.length;
  }
}

static void lz4_block(const uint8_t *p, size_t len) {
  struct fuzz_reader r = {p, len};
  uint32_t raw = fuzz_u32(&r);
  uint8_t *z = malloc(r.left ? r.left : 1);
  FUZZ_CHECK(z != NULL, "malloc");
  memcpy(z, r.p, r.left);
  decode_block(z, r.left, raw);
  free(z);
}

static void protobuf_block(const uint8_t *p, size_t len) {
  int bound = LZ4_compressBound((int)len);
  uint8_t *z = malloc((size_t)bound);
  FUZZ_CHECK(z != NULL, "malloc");
  int zn = LZ4_compress_default((const char *)p, (char *)z, (int)len, bound);
  FUZZ_CHECK(zn > 0 || len == 0, "lz4 compress");
  decode_block(z, (size_t)zn, len);
  free(z);
}

static void recipe_block(const uint8_t *p, size_t len) {
  struct pb_recipe c = {.r = {p, len}};
  size_t n;
  uint8_t *pb = pb_recipe_pack(&c, &n);
  protobuf_block(pb, n);
  free(pb);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1 || size > (1u << 20)) return 0;
  switch (data[0] & 3) {
  case 0: frame_stream(data + 1, size - 1); break;
  case 1: lz4_block(data + 1, size - 1); break;
  case 2: protobuf_block(data + 1, size - 1); break;
  default: recipe_block(data + 1, size - 1); break;
  }
  return 0;
}
