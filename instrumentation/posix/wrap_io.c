/*
 * Data wrappers on fds: read/write, pread/pwrite (+64, fortify), readv and
 * writev. The hot path: begin (guard, TLS, rdtsc), the real call, then
 * sxp__io_done (tracked offset, attributes, links, stop). No lseek, no
 * allocation, no lock per call.
 */
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "posix.h"

static size_t iov_bytes(const struct iovec *iov, int n) {
  size_t sum = 0;
  for (int i = 0; iov && i < n; i++) sum += iov[i].iov_len;
  return sum;
}

/* A call that moves the file position (read, write, readv, writev). */
#define DEFINE_SEQ(name, T, is_write, params, args, fd, req, fallback)          \
  SXP_EXPORT __attribute__((hot)) ssize_t name params {                         \
    ssize_t(*real) params = SXP_REAL(name);                                     \
    if (SXP_UNLIKELY(!real)) return fallback;                                   \
    siox_aid aid = sxp_begin(SXP_T_##T);                                        \
    if (SXP_UNLIKELY(!aid)) {                                                   \
      ssize_t r = real args;                                                    \
      sxp_pos_passthrough(fd, r, is_write);                                     \
      return r;                                                                 \
    }                                                                           \
    ssize_t r = real args;                                                      \
    sxp__io_done(aid, fd, req, SXP_AT_POS, r, is_write);                 \
    return r;                                                                   \
  }

/* A call at an explicit offset (pread, pwrite): the position stays. */
#define DEFINE_AT(name, T, params, args, fd, req, off, fallback)                \
  SXP_EXPORT __attribute__((hot)) ssize_t name params {                         \
    ssize_t(*real) params = SXP_REAL(name);                                     \
    if (SXP_UNLIKELY(!real)) return fallback;                                   \
    siox_aid aid = sxp_begin(SXP_T_##T);                                        \
    if (SXP_UNLIKELY(!aid)) return real args;                                   \
    ssize_t r = real args;                                                      \
    sxp__io_done(aid, fd, req, (off) < 0 ? -2 : (int64_t)(off), r, 0);   \
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
