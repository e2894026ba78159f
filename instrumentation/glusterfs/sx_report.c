/*
 * GlusterFS translators -> libsiox-client: the records a fop produces.
 * Called from the fop wrappers in fops.c (wind and unwind) and from init;
 * knows nothing of GlusterFS structures, only gfids, ranges and results.
 */
#include "sx_report.h"

#include <errno.h>
#include <string.h>

static const char *const fop_names[SX_NFOPS] = {
    [SX_LOOKUP] = "lookup", [SX_CREATE] = "create", [SX_OPEN] = "open",   [SX_READV] = "readv",
    [SX_WRITEV] = "writev", [SX_FSYNC] = "fsync",   [SX_STAT] = "stat", [SX_FLUSH] = "flush",
    [SX_UNLINK] = "unlink",
};

const char *sx_fop_name(enum sx_fop fop) {
  return (unsigned)fop < SX_NFOPS ? fop_names[fop] : "?";
}

static int register_types(struct sx_node *n) {
  for (int f = 0; f < SX_NFOPS; f++) {
    int rc = siox_activity_type_register(n->node, fop_names[f], &n->type[f]);
    if (rc < 0) return rc;
  }
  return 0;
}

/* The client also registers the brick's node (same triple as the brick
 * process registers, so the warehouse holds one node) for the edge. */
static int register_client(struct sx_node *n, const char *host, const char *brick_name) {
  siox_unid brick_node;
  int rc = siox_node_register(host, SX_SWID_CLIENT, brick_name, &n->node);
  if (rc == 0) rc = siox_node_register(brick_name, SX_SWID_BRICK, NULL, &brick_node);
  if (rc == 0) rc = siox_edge_register(n->node, brick_node);
  if (rc == 0) rc = siox_target_register(brick_name, SX_SWID_BRICK, &n->brick);
  return rc;
}

int sx_node_init(struct sx_node *n, enum sx_role role, const char *host, const char *brick_name) {
  if (!n || !brick_name || !*brick_name || (role == SX_CLIENT && (!host || !*host))) return -EINVAL;
  memset(n, 0, sizeof *n);
  n->role = role;
  int rc = role == SX_CLIENT ? register_client(n, host, brick_name)
                             : siox_node_register(brick_name, SX_SWID_BRICK, NULL, &n->node);
  return rc < 0 ? rc : register_types(n);
}

static int gfid_is_null(const uint8_t gfid[SX_GFID_BYTES]) {
  static const uint8_t zero[SX_GFID_BYTES];
  return memcmp(gfid, zero, SX_GFID_BYTES) == 0;
}

siox_detached *sx_fop_start(const struct sx_node *n, enum sx_fop fop) {
  if ((unsigned)fop >= SX_NFOPS || n->type[fop] == 0) return NULL;
  return siox_activity_start_detached(n->type[fop], 0);
}

siox_detached *sx_io_start(const struct sx_node *n, enum sx_fop fop, uint64_t offset, uint64_t len) {
  siox_detached *a = sx_fop_start(n, fop);
  if (!a) return NULL;
  siox_detached_attr_u64(a, SIOX_ATTR_IO_OFFSET, offset);
  siox_detached_attr_u64(a, SIOX_ATTR_IO_BYTES, len);
  return a;
}

uint64_t sx_queued_ns(int64_t arrived_s, long arrived_ns, int64_t now_s, long now_ns) {
  if (arrived_s == 0 && arrived_ns == 0) return 0;
  int64_t d = (now_s - arrived_s) * 1000000000 + (now_ns - arrived_ns);
  return d > 0 ? (uint64_t)d : 0;
}

void sx_fop_queued(siox_detached *a, uint64_t queued_ns) {
  if (a && queued_ns > 0) siox_detached_attr_u64(a, SIOX_ATTR_GLUSTERFS_QUEUED_NS, queued_ns);
}

void sx_io_link(const struct sx_node *n, siox_detached *a, const uint8_t gfid[SX_GFID_BYTES], uint64_t offset,
                uint64_t len) {
  if (!a || !gfid || gfid_is_null(gfid)) return; /* names no file: nothing to link */
  siox_desc d = siox_desc_bytes(SIOX_ATTR_GLUSTERFS_GFID, gfid, SX_GFID_BYTES);
  siox_aid aid = siox_detached_aid(a);
  /* Errors here are counted by the library; the fop must go on regardless. */
  (void)siox_descriptor_receive(aid, &d, offset, len);
  if (n->role == SX_CLIENT) (void)siox_descriptor_send(aid, n->brick, &d, offset, len);
}

void sx_file_link(const struct sx_node *n, siox_detached *a, const uint8_t gfid[SX_GFID_BYTES]) {
  if (!a || !gfid || gfid_is_null(gfid)) return;
  siox_desc d = siox_desc_bytes(SIOX_ATTR_GLUSTERFS_GFID, gfid, SX_GFID_BYTES);
  siox_aid aid = siox_detached_aid(a);
  /* Length 0 is "no byte range" to the server's matcher. */
  (void)siox_descriptor_receive(aid, &d, 0, 0);
  if (n->role == SX_CLIENT) (void)siox_descriptor_send(aid, n->brick, &d, 0, 0);
}

void sx_fop_stop(siox_detached *a, int32_t op_ret, int32_t op_errno) {
  if (!a) return;
  siox_detached_attr_i64(a, SIOX_ATTR_IO_RESULT, op_ret);
  if (op_ret < 0) siox_detached_error(a, op_errno);
  siox_detached_stop(a);
}

int sx_map_path(const struct sx_node *n, siox_detached *a, const char *path, const uint8_t gfid[SX_GFID_BYTES]) {
  /* protocol/server names files it cannot resolve "<gfid:UUID>/name". */
  if (!path || !*path || strncmp(path, "<gfid:", 6) == 0 || !gfid || gfid_is_null(gfid)) return -EINVAL;
  siox_desc from = siox_desc_str(SIOX_ATTR_POSIX_PATH, path);
  siox_desc to = siox_desc_bytes(SIOX_ATTR_GLUSTERFS_GFID, gfid, SX_GFID_BYTES);
  return siox_descriptor_map(n->node, a ? siox_detached_aid(a) : 0, &from, &to);
}

uint64_t sx_path_hash(const char *path) {
  uint64_t h = 14695981039346656037ull;
  for (const unsigned char *p = (const unsigned char *)path; *p; p++) h = (h ^ *p) * 1099511628211ull;
  return h;
}
