/*
 * Record walker: the daemon's only parser of client bytes. A session hands
 * it the records of one BATCH frame; it checks every record against what is
 * left of the frame and against the wire bounds of siox_client_wire.h before
 * any other code looks at it. It never allocates.
 */
#include <errno.h>
#include <string.h>

#include <siox/siox_ontology.h>

#include "daemon.h"

#define PAD8(n) (((size_t)(n) + 7u) & ~(size_t)7u)

#define FAIL(msg)  \
  do {             \
    *why = (msg);  \
    return -EBADMSG; \
  } while (0)

int cw_frame_check(const struct siox_cw_frame_hdr *h, const char **why) {
  if (h->magic != SIOX_CW_MAGIC)
    FAIL("bad frame magic");
  if (h->version != SIOX_CW_VERSION)
    FAIL("unsupported frame version");
  if (h->type < SIOX_CW_HELLO || h->type > SIOX_CW_HINTS)
    FAIL("unknown frame type");
  if (h->length > SIOX_CW_MAX_PAYLOAD)
    FAIL("frame length above SIOX_CW_MAX_PAYLOAD");
  return 0;
}

/* Takes n string lengths laid out back to back after `off` bytes of body;
 * all must fit in body_len and each stay within max. */
static int take_strings(struct cw_rec *r, const uint8_t *body, size_t body_len, size_t off, unsigned n,
                        const uint32_t *lens, uint32_t max, const char **why) {
  for (unsigned i = 0; i < n; i++) {
    if (lens[i] > max)
      FAIL("string length above bound");
    if (lens[i] > body_len - off)
      FAIL("string runs past record end");
    r->str[i] = (const char *)body + off;
    r->len[i] = lens[i];
    off += lens[i];
  }
  return 0;
}

static bool numeric_vtype(uint32_t vt) { return vt == SIOX_VT_U64 || vt == SIOX_VT_I64 || vt == SIOX_VT_F64; }

static int walk_node(struct cw_rec *r, const uint8_t *body, size_t n, const char **why) {
  if (n < sizeof(struct siox_cw_node))
    FAIL("node record too short");
  const struct siox_cw_node *f = (const void *)body;
  uint32_t lens[3] = {f->hwid_len, f->swid_len, f->iid_len};
  return take_strings(r, body, n, sizeof *f, 3, lens, SIOX_CW_MAX_STR, why);
}

static int walk_type(struct cw_rec *r, const uint8_t *body, size_t n, const char **why) {
  if (n < sizeof(struct siox_cw_type))
    FAIL("type record too short");
  const struct siox_cw_type *f = (const void *)body;
  return take_strings(r, body, n, sizeof *f, 1, &f->name_len, SIOX_CW_MAX_STR, why);
}

static int walk_target(struct cw_rec *r, const uint8_t *body, size_t n, const char **why) {
  if (n < sizeof(struct siox_cw_target))
    FAIL("target record too short");
  const struct siox_cw_target *f = (const void *)body;
  uint32_t lens[2] = {f->hwid_len, f->swid_len};
  return take_strings(r, body, n, sizeof *f, 2, lens, SIOX_CW_MAX_STR, why);
}

static int walk_node_attr(struct cw_rec *r, const uint8_t *body, size_t n, const char **why) {
  if (n < sizeof(struct siox_cw_attr))
    FAIL("node attribute record too short");
  const struct siox_cw_attr *f = (const void *)body;
  if (f->vtype == SIOX_VT_STR || f->vtype == SIOX_VT_BYTES) {
    if (f->v.u64 > SIOX_CW_MAX_VALUE)
      FAIL("string length above bound");
    uint32_t len = (uint32_t)f->v.u64;
    return take_strings(r, body, n, sizeof *f, 1, &len, SIOX_CW_MAX_VALUE, why);
  }
  if (!numeric_vtype(f->vtype))
    FAIL("unknown value type");
  return 0;
}

static int walk_activity(struct cw_rec *r, const uint8_t *body, size_t n, const char **why) {
  if (n < sizeof(struct siox_cw_activity))
    FAIL("activity record too short");
  const struct siox_cw_activity *f = (const void *)body;
  if (f->nattr > SIOX_CW_MAX_ATTRS)
    FAIL("nattr above SIOX_CW_MAX_ATTRS");
  if ((size_t)f->nattr * sizeof(struct siox_cw_attr) > n - sizeof *f)
    FAIL("attributes run past record end");
  r->attrs = (const struct siox_cw_attr *)(body + sizeof *f);
  r->nattr = f->nattr;
  for (uint32_t i = 0; i < f->nattr; i++)
    if (!numeric_vtype(r->attrs[i].vtype))
      FAIL("activity attribute is not numeric");
  return 0;
}

static int walk_attr_str(struct cw_rec *r, const uint8_t *body, size_t n, const char **why) {
  if (n < sizeof(struct siox_cw_attr_str))
    FAIL("string attribute record too short");
  const struct siox_cw_attr_str *f = (const void *)body;
  return take_strings(r, body, n, sizeof *f, 1, &f->len, SIOX_CW_MAX_VALUE, why);
}

static int walk_desc(struct cw_rec *r, const uint8_t *body, size_t n, const char **why) {
  if (n < sizeof(struct siox_cw_desc))
    FAIL("descriptor record too short");
  const struct siox_cw_desc *f = (const void *)body;
  if (r->a < SIOX_DESC_CREATE || r->a > SIOX_DESC_RECEIVE)
    FAIL("unknown descriptor kind");
  if (f->ndesc != (r->a == SIOX_DESC_MAP ? 2u : 1u))
    FAIL("wrong descriptor value count");
  size_t off = sizeof *f;
  for (uint32_t i = 0; i < f->ndesc; i++) {
    if (n - off < sizeof(struct siox_cw_desc_value))
      FAIL("descriptor value runs past record end");
    const struct siox_cw_desc_value *v = (const void *)(body + off);
    off += sizeof *v;
    if (v->len > SIOX_CW_MAX_VALUE)
      FAIL("string length above bound");
    if (PAD8(v->len) > n - off)
      FAIL("string runs past record end");
    r->dv[i] = v;
    r->dv_bytes[i] = (const char *)body + off;
    off += PAD8(v->len);
  }
  return 0;
}

static int walk_one(struct cw_rec *r, const uint8_t *body, size_t n, const char **why) {
  switch (r->type) {
  case SIOX_REC_NODE:
    return walk_node(r, body, n, why);
  case SIOX_REC_EDGE:
    if (n < sizeof(struct siox_cw_edge))
      FAIL("edge record too short");
    return 0;
  case SIOX_REC_NODE_ATTR:
    return walk_node_attr(r, body, n, why);
  case SIOX_REC_TYPE:
    return walk_type(r, body, n, why);
  case SIOX_REC_TARGET:
    return walk_target(r, body, n, why);
  case SIOX_REC_ACTIVITY:
    return walk_activity(r, body, n, why);
  case SIOX_REC_ATTR_STR:
    return walk_attr_str(r, body, n, why);
  case SIOX_REC_DESC:
    return walk_desc(r, body, n, why);
  default:
    FAIL("unknown record type");
  }
}

int cw_walk(const uint8_t *p, size_t len, cw_visit_fn visit, void *ctx, const char **why) {
  if (len % 8 != 0)
    FAIL("record bytes not a multiple of 8");
  while (len > 0) {
    const struct siox_cw_rec_hdr *h = (const void *)p;
    if (h->words == 0)
      FAIL("record of zero words");
    size_t rec_len = (size_t)h->words * 8u;
    if (rec_len > len)
      FAIL("record runs past end of batch");
    struct cw_rec r;
    r.type = h->type;
    r.a = h->a;
    r.fixed = p + sizeof *h;
    int rc = walk_one(&r, p + sizeof *h, rec_len - sizeof *h, why);
    if (rc < 0)
      return rc;
    if (visit && (rc = visit(ctx, &r)) < 0)
      return rc;
    p += rec_len;
    len -= rec_len;
  }
  return 0;
}
