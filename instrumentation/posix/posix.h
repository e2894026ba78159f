/*
 * Internals shared by the files of libsiox-posix (hidden "sxp__" tier): the
 * re-entrancy guard, the registered nodes and activity types, and the
 * begin/end steps every wrapper takes around the real call.
 * Data path: application call -> wrapper (wrap_*.c) -> real libc function,
 * with one activity recorded through libsiox-client around it.
 */
#ifndef SIOX_POSIX_POSIX_H
#define SIOX_POSIX_POSIX_H

#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>

#include <siox/siox.h>
#include <siox/siox_internal.h>

#include "fdtable.h"
#include "real.h"

#define SXP_HIDDEN __attribute__((visibility("hidden")))
#define SXP_EXPORT __attribute__((visibility("default")))
#define SXP_LIKELY(x) __builtin_expect(!!(x), 1)
#define SXP_UNLIKELY(x) __builtin_expect(!!(x), 0)
/* Preloaded library: initial-exec TLS is one %fs-relative access. */
#define SXP_TLS __thread __attribute__((tls_model("initial-exec")))

/* Raised while this thread is inside a wrapper or inside SIOX setup: any
 * wrapped call it makes then (dlsym, allocator, signal handler, SIOX's own
 * I/O) goes straight to libc and records nothing. */
extern SXP_TLS int sxp__guard SXP_HIDDEN;
/* > 0 while an MPI-IO data access is open in this thread (hooks.c). */
extern SXP_TLS int sxp__mpiio_depth SXP_HIDDEN;
/* While an MPI-IO access watches a file (siox_posix_mpiio_watch until
 * siox_posix_mpiio_lowest): its path (borrowed) and the lowest offset this
 * thread read or wrote in it. */
extern SXP_TLS const char *sxp__mpiio_watch SXP_HIDDEN;
extern SXP_TLS uint32_t sxp__mpiio_watch_len SXP_HIDDEN;
extern SXP_TLS uint64_t sxp__mpiio_lowest SXP_HIDDEN;

/* Activity types: (enum, function name, node). Names are what the
 * application called: the fortify (__read_chk), ABI (__xstat) and C99
 * (__isoc99_fscanf) entry points report the plain name. */
#define SXP_TYPE_LIST(X)                                                        \
  X(OPEN, "open", POSIX) X(OPEN64, "open64", POSIX) X(OPENAT, "openat", POSIX)  \
  X(OPENAT64, "openat64", POSIX) X(CREAT, "creat", POSIX)                       \
  X(CREAT64, "creat64", POSIX) X(CLOSE, "close", POSIX) X(DUP, "dup", POSIX)    \
  X(DUP2, "dup2", POSIX) X(DUP3, "dup3", POSIX) X(READ, "read", POSIX)          \
  X(WRITE, "write", POSIX) X(PREAD, "pread", POSIX)                             \
  X(PREAD64, "pread64", POSIX) X(PWRITE, "pwrite", POSIX)                       \
  X(PWRITE64, "pwrite64", POSIX) X(READV, "readv", POSIX)                       \
  X(WRITEV, "writev", POSIX) X(LSEEK, "lseek", POSIX)                           \
  X(LSEEK64, "lseek64", POSIX) X(FSYNC, "fsync", POSIX)                         \
  X(FDATASYNC, "fdatasync", POSIX) X(FTRUNCATE, "ftruncate", POSIX)             \
  X(FTRUNCATE64, "ftruncate64", POSIX) X(STAT, "stat", POSIX)                   \
  X(LSTAT, "lstat", POSIX) X(FSTAT, "fstat", POSIX) X(FSTATAT, "fstatat", POSIX) \
  X(STAT64, "stat64", POSIX) X(LSTAT64, "lstat64", POSIX)                       \
  X(FSTAT64, "fstat64", POSIX) X(FSTATAT64, "fstatat64", POSIX)                 \
  X(UNLINK, "unlink", POSIX) X(RENAME, "rename", POSIX) X(MKDIR, "mkdir", POSIX) \
  X(FOPEN, "fopen", STDIO) X(FOPEN64, "fopen64", STDIO)                         \
  X(FDOPEN, "fdopen", STDIO) X(FCLOSE, "fclose", STDIO)                         \
  X(FREAD, "fread", STDIO) X(FWRITE, "fwrite", STDIO)                           \
  X(FPRINTF, "fprintf", STDIO) X(VFPRINTF, "vfprintf", STDIO)                   \
  X(FSCANF, "fscanf", STDIO) X(VFSCANF, "vfscanf", STDIO)                       \
  X(FGETS, "fgets", STDIO) X(FPUTS, "fputs", STDIO) X(FFLUSH, "fflush", STDIO)  \
  X(FSEEK, "fseek", STDIO) X(FSEEKO, "fseeko", STDIO) X(FTELL, "ftell", STDIO)  \
  X(FTELLO, "ftello", STDIO)

#define SXP_TYPE_ENUM(e, name, node) SXP_T_##e,
enum sxp_type { SXP_TYPE_LIST(SXP_TYPE_ENUM) SXP_T_COUNT };
#undef SXP_TYPE_ENUM

enum { SXP_NODE_POSIX, SXP_NODE_STDIO, SXP_NODE_COUNT };
enum { SXP_STATE_NONE, SXP_STATE_BUSY, SXP_STATE_ON, SXP_STATE_OFF };

/* What setup.c registered: the nodes and target before the first type,
 * each type on its first call (a type reads non-zero once registered). */
struct sxp_reg {
  siox_unid node[SXP_NODE_COUNT];
  siox_type_id type[SXP_T_COUNT];
  siox_target_id gluster; /* (*, "GlusterFS-client") */
};
extern struct sxp_reg sxp__reg SXP_HIDDEN;
extern _Atomic int sxp__state SXP_HIDDEN;
/* This process's pid, renewed in fork children (not in vfork children). */
extern int sxp__pid SXP_HIDDEN;

/* Sets the layer up once per process (SIOX_DISABLE, fork handlers).
 * Returns 1 when recording is on; 0 when disabled or another thread is at
 * it. */
SXP_HIDDEN int sxp__setup(void);
/* Registers type t (and, the first time, the nodes, their edge and the
 * GlusterFS target); returns its id, or 0 when the client records nothing. */
SXP_HIDDEN siox_type_id sxp__type_slow(enum sxp_type t) __attribute__((cold));

/* ---- the steps of one instrumented call ---------------------------------
 * sxp_begin returns the new activity (guard raised) or 0: then the wrapper
 * calls the real function and records nothing. Every non-zero begin is
 * followed by exactly one sxp_end (which lowers the guard). */
/* The type to record a call of kind t as, or 0 when this call records
 * nothing (inside the layer, not set up, no type): the first step of
 * sxp_begin and of the read/write wrappers' leaf path (wrap_io.c). */
static inline __attribute__((always_inline)) siox_type_id sxp_type_to_record(enum sxp_type t) {
  if (SXP_UNLIKELY(sxp__guard)) return 0;
  if (SXP_UNLIKELY(atomic_load_explicit(&sxp__state, memory_order_acquire) != SXP_STATE_ON) &&
      !sxp__setup())
    return 0;
  siox_type_id type = __atomic_load_n(&sxp__reg.type[t], __ATOMIC_ACQUIRE);
  if (SXP_UNLIKELY(type == 0) && (type = sxp__type_slow(t)) == 0) return 0;
  return type;
}

static inline siox_aid sxp_begin(enum sxp_type t) {
  siox_type_id type = sxp_type_to_record(t);
  if (type == 0) return 0;
  sxp__guard = 1;
  siox_aid aid = siox_activity_start(type); /* 0 inside libsiox-client too */
  if (SXP_UNLIKELY(aid == 0)) sxp__guard = 0;
  return aid;
}

/* Records io/result (and the error when failed is set), stops the activity,
 * lowers the guard and puts err back into errno. */
static inline void sxp_end(siox_aid aid, int64_t result, int failed, int err) {
  siox_activity_attr_i64(aid, SIOX_ATTR_IO_RESULT, result);
  if (SXP_UNLIKELY(failed)) siox_activity_error(aid, err);
  siox_activity_stop(aid);
  sxp__guard = 0;
  errno = err;
}

/* ---- track.c: positions, descriptors and links of fd I/O (io_done.h) ---- */
/* The tracked position of fd after the application moved it to pos. */
SXP_HIDDEN void sxp__pos_set(int fd, int64_t pos);

/* Position bookkeeping for a read/write that records nothing (guard up,
 * e.g. a signal handler inside a wrapper): keeps the tracked offset true.
 * Lock-free and allocation-free, so safe in a signal handler. */
static inline void sxp_pos_passthrough(int fd, int64_t r, int is_write) {
  struct sxp_ofd *o = r > 0 ? sxp_fd_ofd(fd) : NULL;
  if (!o) return;
  if (is_write && (sxp_ofd_flags(o) & SXP_OFD_APPEND)) sxp_ofd_set(o, SXP_POS_UNKNOWN);
  else sxp_ofd_advance(o, (uint64_t)r);
}

/* ---- open.c: new descriptors -------------------------------------------- */
/* After a successful open of path (relative to dirfd) returning fd: records
 * the path attribute and posix/path -> posix/fd (and -> glusterfs/gfid on a
 * GlusterFS FUSE mount) under aid, and makes fd's table entry, which it
 * returns (NULL when out of memory or the path is unknown to it). */
SXP_HIDDEN const struct sxp_ofd *sxp__fd_opened(siox_aid aid, int dirfd, const char *path, int fd, int flags);
/* The link of a metadata call on an open GlusterFS file (open, creat,
 * fsync, close): a send of (gfid, no range) to the GlusterFS client, whose
 * lookup/create/open/fsync/flush fop inside the call receives it. o NULL
 * or not on a GlusterFS mount: nothing. */
SXP_HIDDEN void sxp__file_send(siox_aid aid, const struct sxp_ofd *o);
/* The same send for a file known by its gfid (close: the entry is gone). */
SXP_HIDDEN void sxp__gfid_send(siox_aid aid, const uint8_t gfid[16]);
/* The same send for a path (stat, unlink): asks the mount for the gfid
 * (a getxattr the glusterfs process answers); nothing when it has none. */
SXP_HIDDEN void sxp__path_send(siox_aid aid, int dirfd, const char *path);
/* Whether dev is a GlusterFS mount this process opened a file on, and
 * whether there is any. */
SXP_HIDDEN int sxp__gluster_dev(uint64_t dev);
SXP_HIDDEN int sxp__gluster_seen(void);
/* Records the path argument of a path call as a posix/path attribute. */
SXP_HIDDEN void sxp__path_attr(siox_aid aid, int dirfd, const char *path);
/* posix/fd `fd` is gone (close, fclose): releases it under aid. */
SXP_HIDDEN void sxp__fd_released(siox_aid aid, int fd);
/* newfd was derived from oldfd (dup family): maps fd -> fd under aid (0:
 * record nothing) and shares the table entry. */
SXP_HIDDEN void sxp__fd_duped(siox_aid aid, int oldfd, int newfd);

#endif
