/*
 * The common steps after a read/write-like call's real function returned
 * (wrap_io.c): where it landed, its leaf record, the guard and errno.
 * Inline in each wrapper; the rare steps (adopting an fd, asking the kernel
 * for a position, links, the slow record) are track.c's.
 */
#ifndef SIOX_POSIX_IO_DONE_H
#define SIOX_POSIX_IO_DONE_H

#include "posix.h"
#include "leaf.h"

/* `off` of sxp_io_done for calls that use the file position: a read, or a
 * write (which lands at the end under O_APPEND). */
#define SXP_AT_POS ((int64_t)-1)
#define SXP_AT_POS_WRITE ((int64_t)-3)

/* Makes a table entry for an fd this layer did not see open (inherited,
 * opened inside libc, stdin/out/err). Runs once per such fd. */
SXP_HIDDEN struct sxp_ofd *sxp__adopt(int fd) __attribute__((cold));
/* Asks the kernel where fd is now; the next calls run on the tracked copy. */
SXP_HIDDEN uint64_t sxp__learn(int fd, struct sxp_ofd *o) __attribute__((cold));
/* sxp_io_record's record when the inline path declines it (leaf.h), or
 * when its id was taken before (sxp__io_linked): out of line, so that its
 * attribute array costs the common path no stack. */
SXP_HIDDEN void sxp__io_record_slow(siox_type_id type, siox_aid aid, uint64_t t0, uint64_t now, int fd, uint64_t req,
                                    int64_t r, uint64_t at, int32_t err) __attribute__((cold));
/* A successful call with links to report (GlusterFS, MPI-IO): its id is
 * taken first, for the descriptor records, then its record. Without an id
 * (ids used up, or a signal handler inside the client: counted dropped)
 * no record either. */
SXP_HIDDEN void sxp__io_linked(siox_type_id type, uint64_t t0, int fd, struct sxp_ofd *o, uint64_t req, int64_t r,
                               uint64_t at) __attribute__((cold));

/* The offset where r bytes were just moved on fd, or SXP_POS_UNKNOWN. */
static inline uint64_t sxp_track(int fd, struct sxp_ofd *o, int64_t r, int is_write) {
  uint32_t flags = sxp_ofd_flags(o);
  if (flags & SXP_OFD_NOSEEK) return SXP_POS_UNKNOWN;
  if (r <= 0) {
    uint64_t p = sxp_ofd_pos(o);
    return p != SXP_POS_UNKNOWN ? p : sxp__learn(fd, o);
  }
  /* An O_APPEND write lands at an end only the kernel knows. */
  uint64_t p = (is_write && (flags & SXP_OFD_APPEND)) ? SXP_POS_UNKNOWN : sxp_ofd_advance(o, (uint64_t)r);
  if (p != SXP_POS_UNKNOWN) return p;
  p = sxp__learn(fd, o);
  return p == SXP_POS_UNKNOWN ? p : p - (uint64_t)r;
}

/* The leaf's record (siox-client/src/leaf.h): fd, bytes asked, result and,
 * when known, the offset, stored straight into the ring. */
static inline __attribute__((always_inline)) void sxp_io_record(siox_type_id type, uint64_t t0, int fd, uint64_t req,
                                                            int64_t r, uint64_t at, int32_t err) {
  uint64_t now = siox__clock_now();
  struct siox__thread *t = siox__self;
  if (SXP_UNLIKELY(t == NULL)) return; /* only after a fork or exit inside the call: begin saw one */
  uint32_t n = at != SXP_POS_UNKNOWN ? 4 : 3;
  struct siox__leaf w;
  uint8_t *a = siox__leaf_open(&w, t, type, 0, t0, now, err, n);
  if (SXP_UNLIKELY(a == NULL)) {
    sxp__io_record_slow(type, 0, t0, now, fd, req, r, at, err);
    return;
  }
  siox__leaf_attr(a, 0, SIOX_ATTR_POSIX_FD, SIOX_VT_I64, (uint64_t)(int64_t)fd);
  siox__leaf_attr(a, 1, SIOX_ATTR_IO_BYTES, SIOX_VT_U64, req);
  siox__leaf_attr(a, 2, SIOX_ATTR_IO_RESULT, SIOX_VT_I64, (uint64_t)r);
  if (n == 4) siox__leaf_attr(a, 3, SIOX_ATTR_IO_OFFSET, SIOX_VT_U64, at);
  siox__leaf_close(&w);
}

/* Records a read/write-like call on fd, begun at clock t0 as a leaf
 * activity of type (wrap_io.c), that asked for req bytes and returned r
 * (errno holds the error when r < 0): at offset off >= 0 (pread, pwrite;
 * -2: a negative offset, recorded as unknown), or at the file position
 * (SXP_AT_POS, SXP_AT_POS_WRITE: read, write, readv, writev), which it
 * advances. Reports the GlusterFS send and the MPI-IO receive, then writes
 * the activity with errno as the call left it and lowers the guard. Inline
 * in each wrapper: one function's entry, register saves and exit, not two. */
static inline __attribute__((always_inline)) void sxp_io_done(siox_type_id type, uint64_t t0, int fd, uint64_t req,
                                                              int64_t off, int64_t r) {
  int is_write = off == SXP_AT_POS_WRITE, err = r < 0 ? errno : 0, clobbered = 0;
  if (is_write) off = SXP_AT_POS;
  struct sxp_fd *s = sxp_fd_peek(fd);
  /* Only the pointer: at an explicit offset the ofd is not touched. */
  struct sxp_ofd *o = s ? atomic_load_explicit(&s->ofd, memory_order_acquire) : NULL;
  if (SXP_UNLIKELY(!o) && r >= 0) {
    err = errno, clobbered = 1; /* adopt() makes system calls */
    o = sxp__adopt(fd);
    s = o ? sxp_fd_peek(fd) : NULL; /* adopt attached it */
  }
  uint64_t at = off >= 0 ? (uint64_t)off : SXP_POS_UNKNOWN;
  if (off == SXP_AT_POS && o) {
    if (SXP_UNLIKELY(sxp_ofd_pos(o) == SXP_POS_UNKNOWN) && !clobbered) err = errno, clobbered = 1; /* learn() */
    at = sxp_track(fd, o, r, is_write);
  }
  int linked = o && r > 0 && at != SXP_POS_UNKNOWN &&
               SXP_UNLIKELY(sxp_fd_gluster(s) || sxp__mpiio_depth > 0 || sxp__mpiio_watch);
  if (SXP_LIKELY(!linked)) sxp_io_record(type, t0, fd, req, r, at, r < 0 ? err : 0);
  else sxp__io_linked(type, t0, fd, o, req, r, at);
  sxp__guard = 0;
  if (SXP_UNLIKELY(clobbered || r < 0)) errno = err;
}

#endif
