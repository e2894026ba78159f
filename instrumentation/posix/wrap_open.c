/*
 * Wrappers that make and drop file descriptors: open/openat/creat (+64 and
 * fortify variants), close, dup/dup2/dup3, and the bookkeeping-only
 * close_range/closedir. The table entry follows the fd whether or not the
 * call is recorded, so offsets stay true.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdarg.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "posix.h"

#define NEEDS_MODE(flags) (((flags) & O_CREAT) || ((flags) & O_TMPFILE) == O_TMPFILE)

/* Finishes a recorded open-like call; returns fd. */
static int opened(siox_aid aid, int dirfd, const char *path, int flags, int fd, int err) {
  siox_activity_attr_u64(aid, SIOX_ATTR_IO_FLAGS, (uint64_t)(unsigned)flags);
  if (fd >= 0) {
    siox_activity_attr_i64(aid, SIOX_ATTR_POSIX_FD, fd);
    sxp__fd_opened(aid, dirfd, path, fd, flags);
    sxp__file_send(aid, sxp_fd_ofd(fd));
  } else {
    sxp__path_attr(aid, dirfd, path);
  }
  sxp_end(aid, fd, fd < 0, err);
  return fd;
}

/* An fd that came back unrecorded may reuse a number whose close this
 * layer did not see: drop any stale entry; it is adopted on first I/O. */
static int unrecorded(int fd) {
  if (fd >= 0) sxp_fd_detach(fd);
  return fd;
}

#define DEFINE_OPEN(name, T)                                                    \
  SXP_EXPORT int name(const char *path, int flags, ...) {                       \
    mode_t mode = 0;                                                            \
    if (NEEDS_MODE(flags)) {                                                    \
      va_list ap;                                                               \
      va_start(ap, flags);                                                      \
      mode = va_arg(ap, mode_t);                                                \
      va_end(ap);                                                               \
    }                                                                           \
    int (*real)(const char *, int, ...) = SXP_REAL(name);                       \
    if (SXP_UNLIKELY(!real)) return (int)syscall(SYS_openat, AT_FDCWD, path, flags, mode); \
    siox_aid aid = sxp_begin(SXP_T_##T);                                        \
    if (!aid) return unrecorded(real(path, flags, mode));                       \
    int fd = real(path, flags, mode);                                           \
    return opened(aid, AT_FDCWD, path, flags, fd, errno);                       \
  }
DEFINE_OPEN(open, OPEN)
DEFINE_OPEN(open64, OPEN64)

#define DEFINE_OPENAT(name, T)                                                  \
  SXP_EXPORT int name(int dirfd, const char *path, int flags, ...) {            \
    mode_t mode = 0;                                                            \
    if (NEEDS_MODE(flags)) {                                                    \
      va_list ap;                                                               \
      va_start(ap, flags);                                                      \
      mode = va_arg(ap, mode_t);                                                \
      va_end(ap);                                                               \
    }                                                                           \
    int (*real)(int, const char *, int, ...) = SXP_REAL(name);                  \
    if (SXP_UNLIKELY(!real)) return (int)syscall(SYS_openat, dirfd, path, flags, mode); \
    siox_aid aid = sxp_begin(SXP_T_##T);                                        \
    if (!aid) return unrecorded(real(dirfd, path, flags, mode));                \
    int fd = real(dirfd, path, flags, mode);                                    \
    return opened(aid, dirfd, path, flags, fd, errno);                          \
  }
DEFINE_OPENAT(openat, OPENAT)
DEFINE_OPENAT(openat64, OPENAT64)

/* _FORTIFY_SOURCE entry points (no mode: the flags need none). */
#define DEFINE_OPEN_2(name, T)                                                  \
  SXP_EXPORT int name(const char *path, int flags) {                            \
    int (*real)(const char *, int) = SXP_REAL(name);                            \
    if (SXP_UNLIKELY(!real)) return (int)syscall(SYS_openat, AT_FDCWD, path, flags, 0); \
    siox_aid aid = sxp_begin(SXP_T_##T);                                        \
    if (!aid) return unrecorded(real(path, flags));                             \
    int fd = real(path, flags);                                                 \
    return opened(aid, AT_FDCWD, path, flags, fd, errno);                       \
  }
DEFINE_OPEN_2(__open_2, OPEN)
DEFINE_OPEN_2(__open64_2, OPEN64)

#define DEFINE_OPENAT_2(name, T)                                                \
  SXP_EXPORT int name(int dirfd, const char *path, int flags) {                 \
    int (*real)(int, const char *, int) = SXP_REAL(name);                       \
    if (SXP_UNLIKELY(!real)) return (int)syscall(SYS_openat, dirfd, path, flags, 0); \
    siox_aid aid = sxp_begin(SXP_T_##T);                                        \
    if (!aid) return unrecorded(real(dirfd, path, flags));                      \
    int fd = real(dirfd, path, flags);                                          \
    return opened(aid, dirfd, path, flags, fd, errno);                          \
  }
DEFINE_OPENAT_2(__openat_2, OPENAT)
DEFINE_OPENAT_2(__openat64_2, OPENAT64)

#define DEFINE_CREAT(name, T)                                                   \
  SXP_EXPORT int name(const char *path, mode_t mode) {                          \
    int flags = O_CREAT | O_WRONLY | O_TRUNC;                                   \
    int (*real)(const char *, mode_t) = SXP_REAL(name);                         \
    if (SXP_UNLIKELY(!real)) return (int)syscall(SYS_openat, AT_FDCWD, path, flags, mode); \
    siox_aid aid = sxp_begin(SXP_T_##T);                                        \
    if (!aid) return unrecorded(real(path, mode));                              \
    int fd = real(path, mode);                                                  \
    return opened(aid, AT_FDCWD, path, flags, fd, errno);                       \
  }
DEFINE_CREAT(creat, CREAT)
DEFINE_CREAT(creat64, CREAT64)

/* One of libsiox-client's own descriptors (its daemon socket, its eventfd),
 * named by the application: to the application that number is not open.
 * (A launcher's child closes every fd before exec; before this guard the
 * library lost its connection, and the number's reuse mixed the library's
 * bytes with the application's: see siox-client/src/own_fd.c.) */
static int library_fd(int fd) {
  return SXP_UNLIKELY(siox_internal_owns_fd(fd)) && !siox_internal_in_library();
}

/* The entry goes before the real close: once the kernel frees the number,
 * another thread's open may take it and install its own entry. */
SXP_EXPORT int close(int fd) {
  int (*real)(int) = SXP_REAL(close);
  if (SXP_UNLIKELY(!real)) return library_fd(fd) ? (errno = EBADF, -1) : (int)syscall(SYS_close, fd);
  siox_aid aid = sxp_begin(SXP_T_CLOSE);
  /* The file, for the link to GlusterFS's flush: the entry dies with the
   * detach. */
  int own = library_fd(fd);
  uint8_t gfid[16];
  struct sxp_ofd *o = aid && !own ? sxp_fd_ofd(fd) : NULL;
  int gluster = o && (sxp_ofd_flags(o) & SXP_OFD_GLUSTER);
  if (gluster) memcpy(gfid, o->gfid, sizeof gfid);
  int had = own ? 0 : sxp_fd_detach(fd);
  int r = own ? (errno = EBADF, -1) : real(fd), err = errno;
  if (!aid) return r;
  siox_activity_attr_i64(aid, SIOX_ATTR_POSIX_FD, fd);
  if (had || r == 0) sxp__fd_released(aid, fd);
  if (gluster) sxp__gfid_send(aid, gfid);
  sxp_end(aid, r, r < 0, err);
  return r;
}

/* Finishes a recorded dup-like call; returns r. */
static int duped(siox_aid aid, int oldfd, int r, int err) {
  siox_activity_attr_i64(aid, SIOX_ATTR_POSIX_FD, oldfd);
  if (r >= 0) sxp__fd_duped(aid, oldfd, r);
  sxp_end(aid, r, r < 0, err);
  return r;
}

SXP_EXPORT int dup(int fd) {
  int (*real)(int) = SXP_REAL(dup);
  if (SXP_UNLIKELY(!real)) return (int)syscall(SYS_dup, fd);
  siox_aid aid = sxp_begin(SXP_T_DUP);
  int r = real(fd);
  if (!aid) {
    if (r >= 0) sxp__fd_duped(0, fd, r);
    return r;
  }
  return duped(aid, fd, r, errno);
}

/* dup2/dup3 silently close newfd first: release it when it was open. */
static int dup_onto(siox_aid aid, int oldfd, int newfd, int was_open, int r, int err) {
  if (r >= 0 && oldfd != newfd) {
    if (was_open) sxp__fd_released(aid, newfd);
    sxp__fd_duped(aid, oldfd, newfd);
  }
  if (!aid) {
    errno = err;
    return r;
  }
  siox_activity_attr_i64(aid, SIOX_ATTR_POSIX_FD, oldfd);
  sxp_end(aid, r, r < 0, err);
  return r;
}

SXP_EXPORT int dup2(int oldfd, int newfd) {
  int (*real)(int, int) = SXP_REAL(dup2);
  if (SXP_UNLIKELY(!real)) return library_fd(newfd) ? (errno = EBADF, -1) : (int)syscall(SYS_dup2, oldfd, newfd);
  siox_aid aid = sxp_begin(SXP_T_DUP2);
  int was_open = aid && oldfd != newfd && sxp_fd_ofd(newfd);
  /* The library's own number: not the application's to replace. */
  int r = library_fd(newfd) ? (errno = EBADF, -1) : real(oldfd, newfd);
  return dup_onto(aid, oldfd, newfd, was_open, r, errno);
}

SXP_EXPORT int dup3(int oldfd, int newfd, int flags) {
  int (*real)(int, int, int) = SXP_REAL(dup3);
  if (SXP_UNLIKELY(!real)) return library_fd(newfd) ? (errno = EBADF, -1) : (int)syscall(SYS_dup3, oldfd, newfd, flags);
  siox_aid aid = sxp_begin(SXP_T_DUP3);
  int was_open = aid && oldfd != newfd && sxp_fd_ofd(newfd);
  int r = library_fd(newfd) ? (errno = EBADF, -1) : real(oldfd, newfd, flags);
  return dup_onto(aid, oldfd, newfd, was_open, r, errno);
}

static int real_close_range(unsigned first, unsigned last, int flags) {
  int (*real)(unsigned, unsigned, int) = SXP_REAL(close_range);
  if (SXP_UNLIKELY(!real)) return (int)syscall(SYS_close_range, first, last, flags);
  return real(first, last, flags);
}

/* close_range over [first, last] in pieces that skip the library's own
 * descriptors (SIOX_INTERNAL_OWN_FDS_MAX). */
static int close_range_around(unsigned first, unsigned last, int flags) {
  int own[SIOX_INTERNAL_OWN_FDS_MAX], n = siox_internal_in_library() ? 0 : siox_internal_own_fds(own);
  unsigned from = first;
  for (int i = 0; i < n; i++) {
    unsigned fd = (unsigned)own[i];
    if (fd < from || fd > last) continue;
    if (fd > from && real_close_range(from, fd - 1, flags) < 0) return -1;
    from = fd + 1;
  }
  return from > last ? 0 : real_close_range(from, last, flags);
}

/* Not recorded: only keeps the table free of closed fds. */
SXP_EXPORT int close_range(unsigned first, unsigned last, int flags) {
  if (!(flags & CLOSE_RANGE_CLOEXEC)) sxp_fd_detach_range(first, last);
  return close_range_around(first, last, flags);
}

/* glibc's closefrom calls close_range inside libc, past this layer. */
SXP_EXPORT void closefrom(int lowfd) {
  unsigned from = lowfd < 0 ? 0 : (unsigned)lowfd;
  sxp_fd_detach_range(from, ~0u);
  if (close_range_around(from, ~0u, 0) < 0)
    for (int fd = (int)from, max = (int)sysconf(_SC_OPEN_MAX); fd < max; fd++) close(fd); /* no close_range */
}

SXP_EXPORT int closedir(DIR *d) {
  int (*real)(DIR *) = SXP_REAL(closedir);
  if (SXP_UNLIKELY(!real)) {
    errno = ENOSYS;
    return -1;
  }
  sxp_fd_detach(dirfd(d));
  return real(d);
}
