/*
 * Offsets and links of fd I/O: after the real read/write returns, work out
 * where it landed from the tracked position (no lseek on the common path),
 * attach the attributes, and report the cross-layer links of
 * instrumentation/README.md (GlusterFS send, MPI-IO receive): the rare
 * steps, out of line; the common ones are io_done.h's, inline in the
 * wrappers.
 */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "io_done.h"

struct sxp_ofd *sxp__adopt(int fd) {
  char link[64], path[PATH_MAX];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  ssize_t n = readlink(link, path, sizeof path - 1);
  path[n > 0 ? n : 0] = '\0';
  int fl = fcntl(fd, F_GETFL);
  uint32_t flags = (fl >= 0 && (fl & O_APPEND)) ? SXP_OFD_APPEND : 0;
  if (SXP_REAL(lseek)(fd, 0, SEEK_CUR) < 0) flags |= SXP_OFD_NOSEEK;
  struct sxp_ofd *o = sxp_ofd_create(path[0] == '/' ? path : NULL, SXP_POS_UNKNOWN, flags);
  if (o && sxp_fd_attach(fd, o) < 0) o = NULL;
  return o;
}

uint64_t sxp__learn(int fd, struct sxp_ofd *o) {
  off_t cur = SXP_REAL(lseek)(fd, 0, SEEK_CUR);
  if (cur < 0) {
    atomic_fetch_or(&o->flags, SXP_OFD_NOSEEK);
    return SXP_POS_UNKNOWN;
  }
  sxp_ofd_set(o, (uint64_t)cur);
  return (uint64_t)cur;
}

/* The links of README.md: the bytes go down to a GlusterFS client when fd
 * is on a GlusterFS FUSE mount; they came from an MPI-IO call above; a
 * shared-pointer MPI-IO call watching this file learns where they went. */
static void links(siox_aid aid, const struct sxp_ofd *o, uint32_t flags, uint64_t at, int64_t r) {
  if (flags & SXP_OFD_GLUSTER) {
    siox_desc g = siox_desc_bytes(SIOX_ATTR_GLUSTERFS_GFID, o->gfid, sizeof o->gfid);
    siox_descriptor_send(aid, sxp__reg.gluster, &g, at, (uint64_t)r);
  }
  /* Only the watched file: ROMIO's shared pointer lives in a file of its own. */
  if (sxp__mpiio_watch && at < sxp__mpiio_lowest && o->pathlen == sxp__mpiio_watch_len &&
      memcmp(o->path, sxp__mpiio_watch, o->pathlen) == 0)
    sxp__mpiio_lowest = at;
  if (sxp__mpiio_depth > 0 && o->pathlen) {
    siox_desc p = {SIOX_ATTR_POSIX_PATH, o->pathlen, {.ptr = o->path}};
    siox_descriptor_receive(aid, &p, at, (uint64_t)r);
  }
}

void sxp__io_record_slow(siox_type_id type, siox_aid aid, uint64_t t0, uint64_t now, int fd,
                                                     uint64_t req, int64_t r, uint64_t at, int32_t err) {
  struct siox_attr attrs[4] = {{SIOX_ATTR_POSIX_FD, SIOX_VT_I64, {.i64 = fd}},
                               {SIOX_ATTR_IO_BYTES, SIOX_VT_U64, {.u64 = req}},
                               {SIOX_ATTR_IO_RESULT, SIOX_VT_I64, {.i64 = r}},
                               {SIOX_ATTR_IO_OFFSET, SIOX_VT_U64, {.u64 = at}}};
  siox__leaf_slow(type, aid, t0, now, err, attrs, at != SXP_POS_UNKNOWN ? 4 : 3);
}

void sxp__io_linked(siox_type_id type, uint64_t t0, int fd, struct sxp_ofd *o,
                                                      uint64_t req, int64_t r, uint64_t at) {
  siox_aid aid = siox__leaf_aid();
  if (aid == 0) return;
  links(aid, o, sxp_ofd_flags(o), at, r);
  sxp__io_record_slow(type, aid, t0, siox__clock_now(), fd, req, r, at, 0);
}

void sxp__pos_set(int fd, int64_t pos) {
  struct sxp_ofd *o = sxp_fd_ofd(fd);
  if (!o) o = sxp__adopt(fd);
  if (o) sxp_ofd_set(o, (uint64_t)pos);
}
