/*
 * Offsets and links of fd I/O: after the real read/write returns, work out
 * where it landed from the tracked position (no lseek on the common path),
 * attach the attributes, and report the cross-layer links of
 * instrumentation/README.md (GlusterFS send, MPI-IO receive).
 */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "posix.h"
#include "leaf.h"

/* Makes a table entry for an fd this layer did not see open (inherited,
 * opened inside libc, stdin/out/err). Runs once per such fd. */
static struct sxp_ofd *adopt(int fd) {
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

/* Asks the kernel where fd is now; the next calls run on the tracked copy. */
static uint64_t learn(int fd, struct sxp_ofd *o) {
  off_t cur = SXP_REAL(lseek)(fd, 0, SEEK_CUR);
  if (cur < 0) {
    atomic_fetch_or(&o->flags, SXP_OFD_NOSEEK);
    return SXP_POS_UNKNOWN;
  }
  sxp_ofd_set(o, (uint64_t)cur);
  return (uint64_t)cur;
}

/* The offset where r bytes were just moved on fd, or SXP_POS_UNKNOWN. */
static uint64_t track(int fd, struct sxp_ofd *o, int64_t r, int is_write) {
  uint32_t flags = sxp_ofd_flags(o);
  if (flags & SXP_OFD_NOSEEK) return SXP_POS_UNKNOWN;
  if (r <= 0) {
    uint64_t p = sxp_ofd_pos(o);
    return p != SXP_POS_UNKNOWN ? p : learn(fd, o);
  }
  /* An O_APPEND write lands at an end only the kernel knows. */
  uint64_t p = (is_write && (flags & SXP_OFD_APPEND)) ? SXP_POS_UNKNOWN : sxp_ofd_advance(o, (uint64_t)r);
  if (p != SXP_POS_UNKNOWN) return p;
  p = learn(fd, o);
  return p == SXP_POS_UNKNOWN ? p : p - (uint64_t)r;
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

/* io_record's record when the inline path declines it (leaf.h), or when
 * its id was taken before (io_linked): out of line, so that its attribute
 * array costs the common path no stack. */
static __attribute__((noinline)) void io_record_slow(siox_type_id type, siox_aid aid, uint64_t t0, uint64_t now, int fd,
                                                     uint64_t req, int64_t r, uint64_t at, int32_t err) {
  struct siox_attr attrs[4] = {{SIOX_ATTR_POSIX_FD, SIOX_VT_I64, {.i64 = fd}},
                               {SIOX_ATTR_IO_BYTES, SIOX_VT_U64, {.u64 = req}},
                               {SIOX_ATTR_IO_RESULT, SIOX_VT_I64, {.i64 = r}},
                               {SIOX_ATTR_IO_OFFSET, SIOX_VT_U64, {.u64 = at}}};
  siox__leaf_slow(type, aid, t0, now, err, attrs, at != SXP_POS_UNKNOWN ? 4 : 3);
}

/* The leaf's record (siox-client/src/leaf.h): fd, bytes asked, result and,
 * when known, the offset, stored straight into the ring. */
static inline __attribute__((always_inline)) void io_record(siox_type_id type, uint64_t t0, int fd, uint64_t req,
                                                            int64_t r, uint64_t at, int32_t err) {
  uint64_t now = siox__clock_now();
  struct siox__thread *t = siox__self;
  if (SXP_UNLIKELY(t == NULL)) return; /* only after a fork or exit inside the call: begin saw one */
  uint32_t n = at != SXP_POS_UNKNOWN ? 4 : 3;
  struct siox__leaf w;
  uint8_t *a = siox__leaf_open(&w, t, type, 0, t0, now, err, n);
  if (SXP_UNLIKELY(a == NULL)) {
    io_record_slow(type, 0, t0, now, fd, req, r, at, err);
    return;
  }
  siox__leaf_attr(a, 0, SIOX_ATTR_POSIX_FD, SIOX_VT_I64, (uint64_t)(int64_t)fd);
  siox__leaf_attr(a, 1, SIOX_ATTR_IO_BYTES, SIOX_VT_U64, req);
  siox__leaf_attr(a, 2, SIOX_ATTR_IO_RESULT, SIOX_VT_I64, (uint64_t)r);
  if (n == 4) siox__leaf_attr(a, 3, SIOX_ATTR_IO_OFFSET, SIOX_VT_U64, at);
  siox__leaf_close(&w);
}

/* A successful call with links to report (GlusterFS, MPI-IO): its id is
 * taken first, for the descriptor records, then its record. Without an id
 * (ids used up, or a signal handler inside the client: counted dropped)
 * no record either. */
static __attribute__((noinline, cold)) void io_linked(siox_type_id type, uint64_t t0, int fd, struct sxp_ofd *o,
                                                      uint64_t req, int64_t r, uint64_t at) {
  siox_aid aid = siox__leaf_aid();
  if (aid == 0) return;
  links(aid, o, sxp_ofd_flags(o), at, r);
  io_record_slow(type, aid, t0, siox__clock_now(), fd, req, r, at, 0);
}

/* Not split into hot and cold parts: gcc moved the common return into
 * .text.unlikely, a jump to another page and back on every call. */
__attribute__((optimize("no-reorder-blocks-and-partition"))) void sxp__io_done(siox_type_id type, uint64_t t0, int fd, uint64_t req, int64_t off, int64_t r) {
  int is_write = off == SXP_AT_POS_WRITE, err = r < 0 ? errno : 0, clobbered = 0;
  if (is_write) off = SXP_AT_POS;
  struct sxp_fd *s = sxp_fd_peek(fd);
  /* Only the pointer: at an explicit offset the ofd is not touched. */
  struct sxp_ofd *o = s ? atomic_load_explicit(&s->ofd, memory_order_acquire) : NULL;
  if (SXP_UNLIKELY(!o) && r >= 0) {
    err = errno, clobbered = 1; /* adopt() makes system calls */
    o = adopt(fd);
    s = o ? sxp_fd_peek(fd) : NULL; /* adopt attached it */
  }
  uint64_t at = off >= 0 ? (uint64_t)off : SXP_POS_UNKNOWN;
  if (off == SXP_AT_POS && o) {
    if (SXP_UNLIKELY(sxp_ofd_pos(o) == SXP_POS_UNKNOWN) && !clobbered) err = errno, clobbered = 1; /* learn() */
    at = track(fd, o, r, is_write);
  }
  int linked = o && r > 0 && at != SXP_POS_UNKNOWN &&
               SXP_UNLIKELY(sxp_fd_gluster(s) || sxp__mpiio_depth > 0 || sxp__mpiio_watch);
  if (SXP_LIKELY(!linked)) io_record(type, t0, fd, req, r, at, r < 0 ? err : 0);
  else io_linked(type, t0, fd, o, req, r, at);
  sxp__guard = 0;
  if (SXP_UNLIKELY(clobbered || r < 0)) errno = err;
}

void sxp__pos_set(int fd, int64_t pos) {
  struct sxp_ofd *o = sxp_fd_ofd(fd);
  if (!o) o = adopt(fd);
  if (o) sxp_ofd_set(o, (uint64_t)pos);
}
