/*
 * Wrappers of metadata and positioning calls: lseek (which also resets the
 * tracked position), fsync/fdatasync, ftruncate, the stat family (with the
 * __xstat ABI entry points that binaries built before glibc 2.33 call),
 * unlink, rename, mkdir.
 */
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "posix.h"

#define NOSYS (errno = ENOSYS, -1)

static off64_t seeked(siox_aid aid, int fd, off64_t off, off64_t r, int err) {
  if (r >= 0) sxp__pos_set(fd, r);
  siox_activity_attr_i64(aid, SIOX_ATTR_POSIX_FD, fd);
  siox_activity_attr_u64(aid, SIOX_ATTR_IO_OFFSET, (uint64_t)(r >= 0 ? r : off));
  sxp_end(aid, r, r < 0, err);
  return r;
}

/* Unrecorded seeks still move the tracked position (entry must exist). */
static off64_t seek_passthrough(int fd, off64_t r) {
  struct sxp_ofd *o = r >= 0 ? sxp_fd_ofd(fd) : NULL;
  if (o) sxp_ofd_set(o, (uint64_t)r);
  return r;
}

#define DEFINE_LSEEK(name, T, otype)                                            \
  SXP_EXPORT otype name(int fd, otype off, int whence) {                        \
    otype (*real)(int, otype, int) = SXP_REAL(name);                            \
    if (SXP_UNLIKELY(!real)) return (otype)syscall(SYS_lseek, fd, off, whence); \
    siox_aid aid = sxp_begin(SXP_T_##T);                                        \
    if (!aid) return (otype)seek_passthrough(fd, real(fd, off, whence));        \
    otype r = real(fd, off, whence);                                            \
    return (otype)seeked(aid, fd, off, r, errno);                               \
  }
DEFINE_LSEEK(lseek, LSEEK, off_t)
DEFINE_LSEEK(lseek64, LSEEK64, off64_t)

/* An fd call with no data: fd attribute (and io/offset when off >= 0). */
static int fd_done(siox_aid aid, int fd, int64_t off, int r, int err) {
  siox_activity_attr_i64(aid, SIOX_ATTR_POSIX_FD, fd);
  if (off >= 0) siox_activity_attr_u64(aid, SIOX_ATTR_IO_OFFSET, (uint64_t)off);
  sxp_end(aid, r, r < 0, err);
  return r;
}

/* A path call: posix/path attribute of path relative to dirfd. */
static int path_done(siox_aid aid, int dirfd, const char *path, int r, int err) {
  sxp__path_attr(aid, dirfd, path);
  sxp_end(aid, r, r < 0, err);
  return r;
}

#define DEFINE_FDCALL(name, T, params, args, fd, off)                           \
  SXP_EXPORT int name params {                                                  \
    int(*real) params = SXP_REAL(name);                                         \
    if (SXP_UNLIKELY(!real)) return NOSYS;                                      \
    siox_aid aid = sxp_begin(SXP_T_##T);                                        \
    if (!aid) return real args;                                                 \
    int r = real args;                                                          \
    return fd_done(aid, fd, off, r, errno);                                     \
  }

/* fsync and fdatasync also link to GlusterFS's fsync fop (sxp__file_send). */
static int synced(siox_aid aid, int fd, int r, int err) {
  sxp__file_send(aid, sxp_fd_ofd(fd));
  return fd_done(aid, fd, -1, r, err);
}

#define DEFINE_SYNCCALL(name, T)                                                \
  SXP_EXPORT int name(int fd) {                                                 \
    int (*real)(int) = SXP_REAL(name);                                          \
    if (SXP_UNLIKELY(!real)) return NOSYS;                                      \
    siox_aid aid = sxp_begin(SXP_T_##T);                                        \
    if (!aid) return real(fd);                                                  \
    int r = real(fd);                                                           \
    return synced(aid, fd, r, errno);                                           \
  }

#define DEFINE_PATHCALL(name, T, params, args, dirfd, path)                     \
  SXP_EXPORT int name params {                                                  \
    int(*real) params = SXP_REAL(name);                                         \
    if (SXP_UNLIKELY(!real)) return NOSYS;                                      \
    siox_aid aid = sxp_begin(SXP_T_##T);                                        \
    if (!aid) return real args;                                                 \
    int r = real args;                                                          \
    return path_done(aid, dirfd, path, r, errno);                               \
  }

/* The stat family: on a GlusterFS mount (by the result's device) also the
 * link to the client's lookup or stat fop. */
static int stat_done(siox_aid aid, int dirfd, const char *path, uint64_t dev, int r, int err) {
  if (r == 0 && sxp__gluster_dev(dev)) sxp__path_send(aid, dirfd, path);
  return path_done(aid, dirfd, path, r, err);
}

#define DEFINE_STATCALL(name, T, params, args, dirfd, path)                     \
  SXP_EXPORT int name params {                                                  \
    int(*real) params = SXP_REAL(name);                                         \
    if (SXP_UNLIKELY(!real)) return NOSYS;                                      \
    siox_aid aid = sxp_begin(SXP_T_##T);                                        \
    if (!aid) return real args;                                                 \
    int r = real args;                                                          \
    return stat_done(aid, dirfd, path, r == 0 ? (uint64_t)st->st_dev : 0, r, errno); \
  }

/* unlink: the gfid must be asked before the file is gone; only in a process
 * that has opened a GlusterFS file (one getxattr more per unlink there). */
SXP_EXPORT int unlink(const char *p) {
  int (*real)(const char *) = SXP_REAL(unlink);
  if (SXP_UNLIKELY(!real)) return NOSYS;
  siox_aid aid = sxp_begin(SXP_T_UNLINK);
  if (!aid) return real(p);
  if (sxp__gluster_seen()) sxp__path_send(aid, AT_FDCWD, p);
  int r = real(p);
  return path_done(aid, AT_FDCWD, p, r, errno);
}

DEFINE_SYNCCALL(fsync, FSYNC)
DEFINE_SYNCCALL(fdatasync, FDATASYNC)
DEFINE_FDCALL(ftruncate, FTRUNCATE, (int fd, off_t len), (fd, len), fd, len)
DEFINE_FDCALL(ftruncate64, FTRUNCATE64, (int fd, off64_t len), (fd, len), fd, len)
DEFINE_FDCALL(fstat, FSTAT, (int fd, struct stat *st), (fd, st), fd, -1)
DEFINE_FDCALL(fstat64, FSTAT64, (int fd, struct stat64 *st), (fd, st), fd, -1)
DEFINE_FDCALL(__fxstat, FSTAT, (int ver, int fd, struct stat *st), (ver, fd, st), fd, -1)
DEFINE_FDCALL(__fxstat64, FSTAT64, (int ver, int fd, struct stat64 *st), (ver, fd, st), fd, -1)

DEFINE_STATCALL(stat, STAT, (const char *p, struct stat *st), (p, st), AT_FDCWD, p)
DEFINE_STATCALL(lstat, LSTAT, (const char *p, struct stat *st), (p, st), AT_FDCWD, p)
DEFINE_STATCALL(stat64, STAT64, (const char *p, struct stat64 *st), (p, st), AT_FDCWD, p)
DEFINE_STATCALL(lstat64, LSTAT64, (const char *p, struct stat64 *st), (p, st), AT_FDCWD, p)
DEFINE_STATCALL(fstatat, FSTATAT, (int d, const char *p, struct stat *st, int fl), (d, p, st, fl), d, p)
DEFINE_STATCALL(fstatat64, FSTATAT64, (int d, const char *p, struct stat64 *st, int fl), (d, p, st, fl), d,
                p)
DEFINE_STATCALL(__xstat, STAT, (int v, const char *p, struct stat *st), (v, p, st), AT_FDCWD, p)
DEFINE_STATCALL(__lxstat, LSTAT, (int v, const char *p, struct stat *st), (v, p, st), AT_FDCWD, p)
DEFINE_STATCALL(__xstat64, STAT64, (int v, const char *p, struct stat64 *st), (v, p, st), AT_FDCWD, p)
DEFINE_STATCALL(__lxstat64, LSTAT64, (int v, const char *p, struct stat64 *st), (v, p, st), AT_FDCWD, p)
DEFINE_STATCALL(__fxstatat, FSTATAT, (int v, int d, const char *p, struct stat *st, int fl),
                (v, d, p, st, fl), d, p)
DEFINE_STATCALL(__fxstatat64, FSTATAT64, (int v, int d, const char *p, struct stat64 *st, int fl),
                (v, d, p, st, fl), d, p)
DEFINE_PATHCALL(mkdir, MKDIR, (const char *p, mode_t m), (p, m), AT_FDCWD, p)

/* rename: two posix/path attributes, the old name first. */
SXP_EXPORT int rename(const char *from, const char *to) {
  int (*real)(const char *, const char *) = SXP_REAL(rename);
  if (SXP_UNLIKELY(!real)) return NOSYS;
  siox_aid aid = sxp_begin(SXP_T_RENAME);
  if (!aid) return real(from, to);
  int r = real(from, to), err = errno;
  sxp__path_attr(aid, AT_FDCWD, from);
  return path_done(aid, AT_FDCWD, to, r, err);
}
