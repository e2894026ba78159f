/*
 * Data wrappers on fds: read/write, pread/pwrite (+64, fortify), readv and
 * writev. The hot path: sxp_leaf_begin (guard, TLS, the clock), the real
 * call, then sxp_io_done (tracked offset, attributes, links, the record).
 * Each call is a leaf activity (siox-client/src/leaf.h): never on the
 * thread's stack, written whole after the call. No lseek, no allocation,
 * no lock per call.
 */
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "io_done.h"

/* Returns the type of a leaf activity to record (guard raised; the caller
 * then reads the clock, calls the real function and sxp_io_done), or 0:
 * call the real function and record nothing. */
static inline __attribute__((always_inline)) siox_type_id sxp_leaf_begin(enum sxp_type t) {
  siox_type_id type = sxp_type_to_record(t);
  if (type == 0) return 0;
  sxp__guard = 1; /* before the thread's first attach, which may do I/O */
  if (SXP_UNLIKELY(siox__leaf_thread() == NULL)) return sxp__guard = 0;
  return type;
}

/* Not split into hot and cold parts: gcc moved the common return of the
 * inlined sxp_io_done into .text.unlikely, a jump there and back on every
 * call. */
#if defined(__clang__)
#define SXP_WRAPPER SXP_EXPORT __attribute__((hot)) /* clang has no such split to turn off */
#else
#define SXP_WRAPPER SXP_EXPORT __attribute__((hot, optimize("no-reorder-blocks-and-partition")))
#endif

static size_t iov_bytes(const struct iovec *iov, int n) {
  size_t sum = 0;
  for (int i = 0; iov && i < n; i++) sum += iov[i].iov_len;
  return sum;
}

/* A call that moves the file position (read, write, readv, writev). */
#define DEFINE_SEQ(name, T, is_write, params, args, fd, req, fallback)          \
  SXP_WRAPPER ssize_t name params {                                             \
    ssize_t(*real) params = SXP_REAL(name);                                     \
    if (SXP_UNLIKELY(!real)) return fallback;                                   \
    siox_type_id type = sxp_leaf_begin(SXP_T_##T);                              \
    if (SXP_UNLIKELY(!type)) {                                                  \
      ssize_t r = real args;                                                    \
      sxp_pos_passthrough(fd, r, is_write);                                     \
      return r;                                                                 \
    }                                                                           \
    uint64_t t0 = siox__clock_now();                                            \
    ssize_t r = real args;                                                      \
    sxp_io_done(type, t0, fd, req, (is_write) ? SXP_AT_POS_WRITE : SXP_AT_POS, r);  \
    return r;                                                                   \
  }

/* A call at an explicit offset (pread, pwrite): the position stays. */
#define DEFINE_AT(name, T, params, args, fd, req, off, fallback)                \
  SXP_WRAPPER ssize_t name params {                                             \
    ssize_t(*real) params = SXP_REAL(name);                                     \
    if (SXP_UNLIKELY(!real)) return fallback;                                   \
    siox_type_id type = sxp_leaf_begin(SXP_T_##T);                              \
    if (SXP_UNLIKELY(!type)) return real args;                                  \
    uint64_t t0 = siox__clock_now();                                            \
    ssize_t r = real args;                                                      \
    sxp_io_done(type, t0, fd, req, (off) < 0 ? -2 : (int64_t)(off), r);         \
    return r;                                                                   \
  }

#define NOSYS (errno = ENOSYS, -1)

DEFINE_SEQ(read, READ, 0, (int fd, void *buf, size_t n), (fd, buf, n), fd, n,
           syscall(SYS_read, fd, buf, n))
DEFINE_SEQ(__read_chk, READ, 0, (int fd, void *buf, size_t n, size_t buflen), (fd, buf, n, buflen), fd,
           n, NOSYS)
DEFINE_SEQ(write, WRITE, 1, (int fd, const void *buf, size_t n), (fd, buf, n), fd, n,
           syscall(SYS_write, fd, buf, n))
DEFINE_SEQ(readv, READV, 0, (int fd, const struct iovec *iov, int cnt), (fd, iov, cnt), fd,
           iov_bytes(iov, cnt), syscall(SYS_readv, fd, iov, cnt))
DEFINE_SEQ(writev, WRITEV, 1, (int fd, const struct iovec *iov, int cnt), (fd, iov, cnt), fd,
           iov_bytes(iov, cnt), syscall(SYS_writev, fd, iov, cnt))

DEFINE_AT(pread, PREAD, (int fd, void *buf, size_t n, off_t off), (fd, buf, n, off), fd, n, off,
          syscall(SYS_pread64, fd, buf, n, off))
DEFINE_AT(pread64, PREAD64, (int fd, void *buf, size_t n, off64_t off), (fd, buf, n, off), fd, n, off,
          syscall(SYS_pread64, fd, buf, n, off))
DEFINE_AT(__pread_chk, PREAD, (int fd, void *buf, size_t n, off_t off, size_t buflen),
          (fd, buf, n, off, buflen), fd, n, off, NOSYS)
DEFINE_AT(__pread64_chk, PREAD64, (int fd, void *buf, size_t n, off64_t off, size_t buflen),
          (fd, buf, n, off, buflen), fd, n, off, NOSYS)
DEFINE_AT(pwrite, PWRITE, (int fd, const void *buf, size_t n, off_t off), (fd, buf, n, off), fd, n, off,
          syscall(SYS_pwrite64, fd, buf, n, off))
DEFINE_AT(pwrite64, PWRITE64, (int fd, const void *buf, size_t n, off64_t off), (fd, buf, n, off), fd, n,
          off, syscall(SYS_pwrite64, fd, buf, n, off))
