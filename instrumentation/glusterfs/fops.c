/*
 * The fop wrappers of debug/siox-client and debug/siox-brick: each fop
 * starts a detached SIOX activity when it is wound to the child and stops
 * it when the child unwinds (often on another thread: an epoll or io
 * thread), then passes everything through unchanged.
 *
 * The activity travels in the wind cookie (STACK_WIND_COOKIE), not in
 * frame->local: GlusterFS mem_put()s frame->local when it destroys a frame,
 * and our handles do not come from its pools. lookup, create and open pass
 * a struct pathcall that also keeps the path (the caller's loc is not ours
 * to read after the wind); readv, writev, fsync, stat, flush and unlink a
 * struct filecall
 * with the file (and the range of readv/writev). Link records are written
 * at unwind: readv/writev with their range; lookup (of anything but a
 * directory), create, open, fsync, stat, flush and unlink with none.
 */
#include "sx_xlator.h"

#include <stdlib.h>

#include <glusterfs/timespec.h>

/* How long the fop was in this process before we wind it: GlusterFS
 * stamps each call stack when it creates it (frame->root->tv, with its
 * timespec_now clock, when ctx->measure_latency is on, the glusterfsd
 * default): on the client when fuse-bridge read the request from
 * /dev/fuse, on the brick when protocol/server decoded the RPC. Read with
 * the same function, so the clocks match. */
static void mark_queued(siox_detached *a, call_frame_t *frame) {
  if (!a || !frame || !frame->root) return;
  struct timespec now;
  timespec_now(&now);
  sx_fop_queued(a, sx_queued_ns(frame->root->tv.tv_sec, frame->root->tv.tv_nsec, now.tv_sec, now.tv_nsec));
}

struct pathcall {
  siox_detached *act;
  char path[]; /* loc->path at wind time, "" when it had none */
};

/* Starts a path fop's activity; the caller frees the result in its
 * callback (pathcall_stop). NULL when SIOX records nothing. */
static struct pathcall *pathcall_start(call_frame_t *frame, xlator_t *this, enum sx_fop fop, const loc_t *loc,
                                       int32_t flags) {
  const struct sx_priv *p = this->private;
  size_t n = loc->path ? strlen(loc->path) + 1 : 1;
  struct pathcall *c = malloc(sizeof *c + n);
  if (!c) return NULL;
  c->act = sx_fop_start(&p->node, fop);
  if (!c->act) {
    free(c);
    return NULL;
  }
  mark_queued(c->act, frame);
  memcpy(c->path, loc->path ? loc->path : "", n);
  if (fop != SX_LOOKUP) siox_detached_attr_u64(c->act, SIOX_ATTR_IO_FLAGS, (uint32_t)flags);
  return c;
}

/* Reports path -> gfid once per inode and path: the inode remembers the
 * hash of the path last reported, so repeated lookups cost no record. */
static void map_once(xlator_t *this, struct pathcall *c, inode_t *inode, const uint8_t *gfid) {
  const struct sx_priv *p = this->private;
  uint64_t h = sx_path_hash(c->path), old = 0;
  if (inode && inode_ctx_get(inode, this, &old) == 0 && old == h) return;
  if (sx_map_path(&p->node, c->act, c->path, gfid) == 0 && inode) inode_ctx_set(inode, this, &h);
}

/* link: record the file link (create, open; a lookup links itself, only
 * for files). */
static void pathcall_stop(xlator_t *this, struct pathcall *c, int32_t op_ret, int32_t op_errno, inode_t *inode,
                          const uint8_t *gfid, int link) {
  if (!c) return;
  if (op_ret >= 0 && gfid) map_once(this, c, inode, gfid);
  if (link && op_ret >= 0 && gfid) {
    const struct sx_priv *p = this->private;
    sx_file_link(&p->node, c->act, gfid);
  }
  sx_fop_stop(c->act, op_ret, op_errno);
  free(c);
}

/* ---------------------------------------------------------------- lookup */
/* A lookup is linked client -> brick like stat: it is what FUSE sends for
 * stat(2) of a path once the kernel's entry cache expired. Directories are
 * left out: every path walk revalidates the root (and its parents) on every
 * brick, which would add records and ambiguous candidates on a few hot
 * objects and tell nothing about a file. */
static int32_t sx_lookup_cbk(call_frame_t *frame, void *cookie, xlator_t *this, int32_t op_ret, int32_t op_errno,
                             inode_t *inode, struct iatt *buf, dict_t *xdata, struct iatt *postparent) {
  struct pathcall *c = cookie;
  if (c && op_ret >= 0 && buf && buf->ia_type != IA_IFDIR) {
    const struct sx_priv *p = this->private;
    sx_file_link(&p->node, c->act, buf->ia_gfid);
  }
  pathcall_stop(this, c, op_ret, op_errno, inode, buf ? buf->ia_gfid : NULL, 0);
  STACK_UNWIND_STRICT(lookup, frame, op_ret, op_errno, inode, buf, xdata, postparent);
  return 0;
}

static int32_t sx_lookup(call_frame_t *frame, xlator_t *this, loc_t *loc, dict_t *xdata) {
  struct pathcall *c = pathcall_start(frame, this, SX_LOOKUP, loc, 0);
  STACK_WIND_COOKIE(frame, sx_lookup_cbk, c, FIRST_CHILD(this), FIRST_CHILD(this)->fops->lookup, loc, xdata);
  return 0;
}

/* ---------------------------------------------------------------- create */
static int32_t sx_create_cbk(call_frame_t *frame, void *cookie, xlator_t *this, int32_t op_ret, int32_t op_errno,
                             fd_t *fd, inode_t *inode, struct iatt *buf, struct iatt *preparent,
                             struct iatt *postparent, dict_t *xdata) {
  pathcall_stop(this, cookie, op_ret, op_errno, inode, buf ? buf->ia_gfid : NULL, 1);
  STACK_UNWIND_STRICT(create, frame, op_ret, op_errno, fd, inode, buf, preparent, postparent, xdata);
  return 0;
}

static int32_t sx_create(call_frame_t *frame, xlator_t *this, loc_t *loc, int32_t flags, mode_t mode, mode_t umask,
                         fd_t *fd, dict_t *xdata) {
  struct pathcall *c = pathcall_start(frame, this, SX_CREATE, loc, flags);
  STACK_WIND_COOKIE(frame, sx_create_cbk, c, FIRST_CHILD(this), FIRST_CHILD(this)->fops->create, loc, flags, mode,
                    umask, fd, xdata);
  return 0;
}

/* ------------------------------------------------------------------ open */
static int32_t sx_open_cbk(call_frame_t *frame, void *cookie, xlator_t *this, int32_t op_ret, int32_t op_errno,
                           fd_t *fd, dict_t *xdata) {
  inode_t *inode = fd ? fd->inode : NULL;
  pathcall_stop(this, cookie, op_ret, op_errno, inode, inode ? inode->gfid : NULL, 1);
  STACK_UNWIND_STRICT(open, frame, op_ret, op_errno, fd, xdata);
  return 0;
}

static int32_t sx_open(call_frame_t *frame, xlator_t *this, loc_t *loc, int32_t flags, fd_t *fd, dict_t *xdata) {
  struct pathcall *c = pathcall_start(frame, this, SX_OPEN, loc, flags);
  STACK_WIND_COOKIE(frame, sx_open_cbk, c, FIRST_CHILD(this), FIRST_CHILD(this)->fops->open, loc, flags, fd, xdata);
  return 0;
}

/* ------------------------------------------- readv, writev, fsync, stat */
/* What a file fop's callback needs to record its links: the file and, for
 * readv/writev, the range as wound (the callbacks get neither the fd nor
 * the range). */
struct filecall {
  siox_detached *act;
  int ranged; /* readv/writev: linked with [offset, offset+len) */
  uint64_t offset, len;
  uint8_t gfid[SX_GFID_BYTES];
};

/* Starts the activity of a fop on the file with gfid (NULL: unknown yet);
 * readv/writev also get io/offset and io/bytes. The callback frees the
 * result (file_stop). NULL when SIOX records nothing. */
static struct filecall *file_start(call_frame_t *frame, xlator_t *this, enum sx_fop fop, const uint8_t *gfid,
                                   uint64_t offset, uint64_t len) {
  const struct sx_priv *p = this->private;
  struct filecall *c = malloc(sizeof *c);
  if (!c) return NULL;
  c->ranged = fop == SX_READV || fop == SX_WRITEV;
  c->act = c->ranged ? sx_io_start(&p->node, fop, offset, len) : sx_fop_start(&p->node, fop);
  if (!c->act) {
    free(c);
    return NULL;
  }
  mark_queued(c->act, frame);
  c->offset = offset;
  c->len = len;
  if (gfid) memcpy(c->gfid, gfid, SX_GFID_BYTES);
  else memset(c->gfid, 0, SX_GFID_BYTES);
  return c;
}

static int gfid_null(const uint8_t *gfid) {
  static const uint8_t zero[SX_GFID_BYTES];
  return memcmp(gfid, zero, SX_GFID_BYTES) == 0;
}

static const uint8_t *gfid_of_fd(const fd_t *fd) { return fd && fd->inode ? fd->inode->gfid : NULL; }

/* A loc's gfid: its inode's once resolved (the brick's protocol/server
 * resolves before it winds), else the one the caller filled in. */
static const uint8_t *gfid_of_loc(const loc_t *loc) {
  if (loc->inode && !gfid_null(loc->inode->gfid)) return loc->inode->gfid;
  return gfid_null(loc->gfid) ? NULL : loc->gfid;
}

/* Records the links and stops. buf (may be NULL) is the iatt the fop
 * returned: it names the file when the wind did not know it, and a
 * directory's stat gets no link (see lookup). */
static void file_stop(xlator_t *this, struct filecall *c, int32_t op_ret, int32_t op_errno, const struct iatt *buf) {
  if (!c) return;
  const struct sx_priv *p = this->private;
  if (gfid_null(c->gfid) && op_ret >= 0 && buf) memcpy(c->gfid, buf->ia_gfid, SX_GFID_BYTES);
  if (c->ranged) sx_io_link(&p->node, c->act, c->gfid, c->offset, c->len);
  else if (!(op_ret >= 0 && buf && buf->ia_type == IA_IFDIR)) sx_file_link(&p->node, c->act, c->gfid);
  sx_fop_stop(c->act, op_ret, op_errno);
  free(c);
}

static int32_t sx_readv_cbk(call_frame_t *frame, void *cookie, xlator_t *this, int32_t op_ret, int32_t op_errno,
                            struct iovec *vector, int32_t count, struct iatt *stbuf, struct iobref *iobref,
                            dict_t *xdata) {
  file_stop(this, cookie, op_ret, op_errno, NULL);
  STACK_UNWIND_STRICT(readv, frame, op_ret, op_errno, vector, count, stbuf, iobref, xdata);
  return 0;
}

static int32_t sx_readv(call_frame_t *frame, xlator_t *this, fd_t *fd, size_t size, off_t offset, uint32_t flags,
                        dict_t *xdata) {
  struct filecall *c = file_start(frame, this, SX_READV, gfid_of_fd(fd), (uint64_t)offset, size);
  STACK_WIND_COOKIE(frame, sx_readv_cbk, c, FIRST_CHILD(this), FIRST_CHILD(this)->fops->readv, fd, size, offset,
                    flags, xdata);
  return 0;
}

static int32_t sx_writev_cbk(call_frame_t *frame, void *cookie, xlator_t *this, int32_t op_ret, int32_t op_errno,
                             struct iatt *prebuf, struct iatt *postbuf, dict_t *xdata) {
  file_stop(this, cookie, op_ret, op_errno, NULL);
  STACK_UNWIND_STRICT(writev, frame, op_ret, op_errno, prebuf, postbuf, xdata);
  return 0;
}

static int32_t sx_writev(call_frame_t *frame, xlator_t *this, fd_t *fd, struct iovec *vector, int32_t count,
                         off_t offset, uint32_t flags, struct iobref *iobref, dict_t *xdata) {
  struct filecall *c =
      file_start(frame, this, SX_WRITEV, gfid_of_fd(fd), (uint64_t)offset, iov_length(vector, count));
  STACK_WIND_COOKIE(frame, sx_writev_cbk, c, FIRST_CHILD(this), FIRST_CHILD(this)->fops->writev, fd, vector, count,
                    offset, flags, iobref, xdata);
  return 0;
}

static int32_t sx_fsync_cbk(call_frame_t *frame, void *cookie, xlator_t *this, int32_t op_ret, int32_t op_errno,
                            struct iatt *prebuf, struct iatt *postbuf, dict_t *xdata) {
  file_stop(this, cookie, op_ret, op_errno, NULL);
  STACK_UNWIND_STRICT(fsync, frame, op_ret, op_errno, prebuf, postbuf, xdata);
  return 0;
}

static int32_t sx_fsync(call_frame_t *frame, xlator_t *this, fd_t *fd, int32_t datasync, dict_t *xdata) {
  struct filecall *c = file_start(frame, this, SX_FSYNC, gfid_of_fd(fd), 0, 0);
  STACK_WIND_COOKIE(frame, sx_fsync_cbk, c, FIRST_CHILD(this), FIRST_CHILD(this)->fops->fsync, fd, datasync, xdata);
  return 0;
}

static int32_t sx_stat_cbk(call_frame_t *frame, void *cookie, xlator_t *this, int32_t op_ret, int32_t op_errno,
                           struct iatt *buf, dict_t *xdata) {
  file_stop(this, cookie, op_ret, op_errno, buf);
  STACK_UNWIND_STRICT(stat, frame, op_ret, op_errno, buf, xdata);
  return 0;
}

static int32_t sx_stat(call_frame_t *frame, xlator_t *this, loc_t *loc, dict_t *xdata) {
  struct filecall *c = file_start(frame, this, SX_STAT, gfid_of_loc(loc), 0, 0);
  STACK_WIND_COOKIE(frame, sx_stat_cbk, c, FIRST_CHILD(this), FIRST_CHILD(this)->fops->stat, loc, xdata);
  return 0;
}

/* close(2) reaches the file system as FLUSH (then RELEASE, which has no
 * reply to time and is not recorded). */
static int32_t sx_flush_cbk(call_frame_t *frame, void *cookie, xlator_t *this, int32_t op_ret, int32_t op_errno,
                            dict_t *xdata) {
  file_stop(this, cookie, op_ret, op_errno, NULL);
  STACK_UNWIND_STRICT(flush, frame, op_ret, op_errno, xdata);
  return 0;
}

static int32_t sx_flush(call_frame_t *frame, xlator_t *this, fd_t *fd, dict_t *xdata) {
  struct filecall *c = file_start(frame, this, SX_FLUSH, gfid_of_fd(fd), 0, 0);
  STACK_WIND_COOKIE(frame, sx_flush_cbk, c, FIRST_CHILD(this), FIRST_CHILD(this)->fops->flush, fd, xdata);
  return 0;
}

/* The file's gfid is the loc's (resolved by FUSE's lookup on the client,
 * by protocol/server on the brick) and must be taken at wind: the reply
 * only describes the parent. */
static int32_t sx_unlink_cbk(call_frame_t *frame, void *cookie, xlator_t *this, int32_t op_ret, int32_t op_errno,
                             struct iatt *preparent, struct iatt *postparent, dict_t *xdata) {
  file_stop(this, cookie, op_ret, op_errno, NULL);
  STACK_UNWIND_STRICT(unlink, frame, op_ret, op_errno, preparent, postparent, xdata);
  return 0;
}

static int32_t sx_unlink(call_frame_t *frame, xlator_t *this, loc_t *loc, int xflags, dict_t *xdata) {
  struct filecall *c = file_start(frame, this, SX_UNLINK, gfid_of_loc(loc), 0, 0);
  STACK_WIND_COOKIE(frame, sx_unlink_cbk, c, FIRST_CHILD(this), FIRST_CHILD(this)->fops->unlink, loc, xflags,
                    xdata);
  return 0;
}

/* Every other fop goes through the defaults (pass-through). */
struct xlator_fops sx_fops = {
    .lookup = sx_lookup,
    .create = sx_create,
    .open = sx_open,
    .readv = sx_readv,
    .writev = sx_writev,
    .fsync = sx_fsync,
    .stat = sx_stat,
    .flush = sx_flush,
    .unlink = sx_unlink,
};

struct xlator_cbks sx_cbks = {0};
