/*
 * What the SIOX GlusterFS translators tell libsiox-client, kept apart from
 * the GlusterFS glue so it can be unit-tested without a file system: one
 * node per translator instance, one detached activity per fop (a fop is
 * wound on one thread and unwound on another), the descriptor send/receive
 * records of the cross-process links, and the path <-> gfid mappings.
 */
#ifndef SIOX_GLUSTERFS_SX_REPORT_H
#define SIOX_GLUSTERFS_SX_REPORT_H

#include <stdint.h>

#include <siox/siox.h>

#define SX_SWID_CLIENT "GlusterFS-client"
#define SX_SWID_BRICK "GlusterFS-brick"
#define SX_GFID_BYTES 16

enum sx_role { SX_CLIENT, SX_BRICK };

/* The fops reported; the names are the activity type names. */
enum sx_fop { SX_LOOKUP, SX_CREATE, SX_OPEN, SX_READV, SX_WRITEV, SX_FSYNC, SX_STAT, SX_FLUSH, SX_UNLINK, SX_NFOPS };

/* One translator instance's identity in SIOX (registered once at init). */
struct sx_node {
  enum sx_role role;
  siox_unid node;          /* this instance's node */
  siox_target_id brick;    /* client only: the brick node it sends to */
  siox_type_id type[SX_NFOPS];
};

/* Registers the node of one translator instance. The client's node is
 * (host, GlusterFS-client, brick_name) and it names the brick
 * (brick_name, GlusterFS-brick) as target and as edge; the brick's node is
 * (brick_name, GlusterFS-brick). Returns 0 or a negative errno. */
int sx_node_init(struct sx_node *n, enum sx_role role, const char *host, const char *brick_name);

/* Name of a fop as reported ("writev"). */
const char *sx_fop_name(enum sx_fop fop);

/* Starts a fop's activity at wind time. Returns NULL when SIOX records
 * nothing (disabled, or no slot free: counted as a drop by the library). */
siox_detached *sx_fop_start(const struct sx_node *n, enum sx_fop fop);

/* Starts a readv/writev activity for bytes [offset, offset+len) with the
 * attributes io/offset and io/bytes. NULL as sx_fop_start. */
siox_detached *sx_io_start(const struct sx_node *n, enum sx_fop fop, uint64_t offset, uint64_t len);

/* Nanoseconds from arrived to now (both from the same monotonic clock, as
 * {seconds, nanoseconds}), or 0 when arrived is unknown (all zero: the
 * process does not stamp its call stacks) or after now. */
uint64_t sx_queued_ns(int64_t arrived_s, long arrived_ns, int64_t now_s, long now_ns);

/* Records on a (at wind) how long the fop was in this process before the
 * translator wound it: glusterfs/queued_ns, so that arrival = start -
 * queued (README.md "Queue times"). Nothing when queued_ns is 0 or a is
 * NULL. */
void sx_fop_queued(siox_detached *a, uint64_t queued_ns);

/* Records the links of a readv/writev on file gfid: the receiving side of
 * the link from the layer above and, on the client, the sending side of the
 * link to the brick. Called at unwind, right before sx_fop_stop, so that
 * these records and the activity leave in the same batch: the server links
 * a remote call only once its activity is there. A NULL or null gfid, or a
 * NULL a, records nothing. */
void sx_io_link(const struct sx_node *n, siox_detached *a, const uint8_t gfid[SX_GFID_BYTES], uint64_t offset,
                uint64_t len);

/* Records the link of a fop on a whole file, with no byte range (the
 * metadata fops: lookup, create, open, stat, fsync, flush, unlink): a
 * receive of (gfid, no range), from the POSIX call above on the client
 * (open, creat, stat, fsync, close, unlink send it) and from the client on
 * the brick, and on the client a send of it to its brick. Called at
 * unwind, before sx_fop_stop, like sx_io_link; a NULL or null gfid, or a
 * NULL a, records nothing. */
void sx_file_link(const struct sx_node *n, siox_detached *a, const uint8_t gfid[SX_GFID_BYTES]);

/* Ends the activity at unwind time with io/result = op_ret and, when the
 * fop failed, op_errno as its error. Frees the handle; a is NULL-safe. */
void sx_fop_stop(siox_detached *a, int32_t op_ret, int32_t op_errno);

/* Reports posix/path -> glusterfs/gfid on the node, attributed to a (may be
 * NULL). path is reported as the translator saw it (volume-relative);
 * NULL, empty, "<gfid:...>" paths and a null gfid are skipped (returns
 * -EINVAL), as they name no file a user could see. */
int sx_map_path(const struct sx_node *n, siox_detached *a, const char *path, const uint8_t gfid[SX_GFID_BYTES]);

/* 64-bit FNV-1a of a path: lets a translator remember cheaply which path it
 * last reported for an inode and report the mapping again only on change. */
uint64_t sx_path_hash(const char *path);

#endif
