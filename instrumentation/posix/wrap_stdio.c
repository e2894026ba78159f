/*
 * stdio wrappers (node "stdio"): fopen/fdopen/fclose, fread/fwrite,
 * fprintf/vfprintf, fscanf/vfscanf, fgets/fputs, fflush, fseek/ftell. The
 * stream position is tracked per fd like the POSIX one; stdio's own
 * buffered read()/write() happen inside libc and are not seen, so every
 * stream call marks the fd's POSIX position unknown (learned again if the
 * application mixes fd and FILE I/O). On a GlusterFS mount the calls that
 * may write the buffer out, or fill it, send those bytes to the file-system
 * client themselves (README.md, "Known limits").
 */
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio_ext.h>
#include <string.h>

#include "posix.h"

#define NOSYS_NULL (errno = ENOSYS, (void *)NULL)
#define NOSYS (errno = ENOSYS, -1)
#define UNKNOWN SXP_POS_UNKNOWN

static struct sxp_fd *stream_slot(FILE *f) {
  int fd = f ? fileno(f) : -1;
  return fd >= 0 ? sxp_fd_peek(fd) : NULL;
}

/* Where *moved bytes just went in f; *moved < 0 means "not known": it is
 * then worked out from the position before and after (one ftello). */
static uint64_t stream_track(FILE *f, struct sxp_fd *s, int64_t *moved) {
  if (!s || atomic_load_explicit(&s->snoseek, memory_order_relaxed)) return UNKNOWN;
  uint64_t before = sxp_stream_pos(s);
  if (*moved >= 0) {
    uint64_t p = sxp_stream_advance(s, (uint64_t)*moved);
    if (p != UNKNOWN) return p;
  }
  off_t cur = SXP_REAL(ftello)(f);
  if (cur < 0) {
    atomic_store_explicit(&s->snoseek, 1, memory_order_relaxed);
    return UNKNOWN;
  }
  sxp_stream_set(s, (uint64_t)cur);
  if (*moved >= 0) return (uint64_t)cur - (uint64_t)*moved;
  if (before != UNKNOWN) *moved = (int64_t)((uint64_t)cur - before);
  return before;
}

/* ---- GlusterFS: what a call hands to the file system -------------------- */

/* stdio writes its buffer to the fd inside the call that fills it (or in
 * fflush or fclose), out of sight of the POSIX wrappers. So on a GlusterFS
 * mount each call that may write sends, like a POSIX write, the range from
 * the first byte not yet written (the stream position less what stdio
 * holds, __fpending) to the position after it; the client fop made inside
 * the call then links to it (the matcher prefers the sender whose interval
 * holds the fop). The gfid is copied: fclose drops the fd's entry. */
struct stream_out {
  int on, reading; /* on GlusterFS, position known; a reading call */
  uint8_t gfid[16];
  uint64_t from, pos; /* first byte not yet handed over; the position before the call */
};

/* Reading is the mirror image: stdio fills its buffer from the fd inside
 * the call, ahead of the position. A reading call sends the range from the
 * first byte stdio has not yet fetched (the position plus what it holds
 * unread) to the same point after the call, so the client readv made for
 * the refill links to it. glibc has no call for "what it holds unread";
 * gnulib's freadahead reads the same two FILE fields. */
static uint64_t unread(FILE *f) {
  return __freading(f) && f->_IO_read_end > f->_IO_read_ptr ? (uint64_t)(f->_IO_read_end - f->_IO_read_ptr) : 0;
}

static struct stream_out gluster_begin(FILE *f, int reading) {
  struct stream_out w = {0};
  struct sxp_fd *s = stream_slot(f);
  struct sxp_ofd *o = s ? atomic_load_explicit(&s->ofd, memory_order_acquire) : NULL;
  if (SXP_LIKELY(!o || !(sxp_ofd_flags(o) & SXP_OFD_GLUSTER))) return w;
  size_t pending = reading ? 0 : __fpending(f);
  w.pos = sxp_stream_pos(s);
  if (w.pos == UNKNOWN || w.pos < pending) return w;
  w.on = 1, w.reading = reading;
  w.from = reading ? w.pos + unread(f) : w.pos - pending;
  memcpy(w.gfid, o->gfid, sizeof w.gfid);
  return w;
}

static struct stream_out out_begin(FILE *f) { return gluster_begin(f, 0); }
static struct stream_out in_begin(FILE *f) { return gluster_begin(f, 1); }

/* Sends [w->from, to) to the GlusterFS client under aid. */
static void out_send(siox_aid aid, const struct stream_out *w, uint64_t to) {
  if (!w->on || to == UNKNOWN || to <= w->from) return;
  siox_desc g = siox_desc_bytes(SIOX_ATTR_GLUSTERFS_GFID, w->gfid, sizeof w->gfid);
  siox_descriptor_send(aid, sxp__reg.gluster, &g, w->from, to - w->from);
}

/* After a data call at stream position pos: what it handed over ends at pos
 * (writing) or at pos plus what stdio now holds unread (reading). */
static uint64_t handed_to(FILE *f, const struct stream_out *w, uint64_t pos) {
  return pos == UNKNOWN || !w->reading ? pos : pos + unread(f);
}

/* Finishes a recorded stream data call: req bytes asked (UNKNOWN: report
 * what moved), moved bytes transferred (< 0: not known); w: what the call
 * may have handed to or fetched from GlusterFS. */
static void stream_done(siox_aid aid, FILE *f, const struct stream_out *w, uint64_t req, int64_t moved,
                        int64_t result, int failed, int err) {
  struct sxp_fd *s = stream_slot(f);
  uint64_t at = stream_track(f, s, &moved);
  if (w->on && s) out_send(aid, w, handed_to(f, w, sxp_stream_pos(s)));
  struct sxp_ofd *o = s ? atomic_load_explicit(&s->ofd, memory_order_acquire) : NULL;
  if (o && sxp_ofd_pos(o) != UNKNOWN) sxp_ofd_set(o, UNKNOWN);
  if (req == UNKNOWN && moved >= 0) req = (uint64_t)moved;
  siox_activity_attr_u64(aid, SIOX_ATTR_STDIO_FILE, (uint64_t)(uintptr_t)f);
  if (req != UNKNOWN) siox_activity_attr_u64(aid, SIOX_ATTR_IO_BYTES, req);
  if (at != UNKNOWN) siox_activity_attr_u64(aid, SIOX_ATTR_IO_OFFSET, at);
  sxp_end(aid, result, failed, err);
}

/* ---- open and close ------------------------------------------------------ */

static void stream_maps(siox_aid aid, FILE *f, int fd, const struct sxp_ofd *o) {
  siox_unid node = sxp__reg.node[SXP_NODE_STDIO];
  siox_desc sf = siox_desc_int(SIOX_ATTR_STDIO_FILE, (int64_t)(uintptr_t)f);
  siox_desc d = siox_desc_int(SIOX_ATTR_POSIX_FD, fd);
  if (o) {
    siox_desc p = {SIOX_ATTR_POSIX_PATH, o->pathlen, {.ptr = o->path}};
    siox_descriptor_map(node, aid, &p, &sf);
  }
  siox_descriptor_map(node, aid, &sf, &d);
  siox_activity_attr_u64(aid, SIOX_ATTR_STDIO_FILE, (uint64_t)(uintptr_t)f);
  siox_activity_attr_i64(aid, SIOX_ATTR_POSIX_FD, fd);
}

/* A new stream's position: 0, or unknown in append mode. */
static void stream_start(int fd, int append) {
  struct sxp_fd *s = sxp_fd_slot(fd);
  if (!s) return;
  sxp_stream_reset(s);
  if (!append) sxp_stream_set(s, 0);
}

#define DEFINE_FOPEN(name, T)                                                   \
  SXP_EXPORT FILE *name(const char *path, const char *mode) {                   \
    FILE *(*real)(const char *, const char *) = SXP_REAL(name);                 \
    if (SXP_UNLIKELY(!real)) return NOSYS_NULL;                                 \
    siox_aid aid = sxp_begin(SXP_T_##T);                                        \
    FILE *f = real(path, mode);                                                 \
    int err = errno, fd = f ? fileno(f) : -1, append = mode && strchr(mode, 'a'); \
    if (!aid) {                                                                 \
      if (fd >= 0) sxp_fd_detach(fd);                                           \
      errno = err;                                                              \
      return f;                                                                 \
    }                                                                           \
    if (fd >= 0) {                                                              \
      const struct sxp_ofd *o = sxp__fd_opened(aid, AT_FDCWD, path, fd, append ? O_APPEND : 0); \
      stream_start(fd, append);                                                 \
      stream_maps(aid, f, fd, o);                                               \
    } else {                                                                    \
      sxp__path_attr(aid, AT_FDCWD, path);                                      \
    }                                                                           \
    sxp_end(aid, f ? fd : -1, !f, err);                                         \
    return f;                                                                   \
  }
DEFINE_FOPEN(fopen, FOPEN)
DEFINE_FOPEN(fopen64, FOPEN64)

SXP_EXPORT FILE *fdopen(int fd, const char *mode) {
  FILE *(*real)(int, const char *) = SXP_REAL(fdopen);
  if (SXP_UNLIKELY(!real)) return NOSYS_NULL;
  siox_aid aid = sxp_begin(SXP_T_FDOPEN);
  FILE *f = real(fd, mode);
  int err = errno;
  if (f) stream_start(fd, 1); /* the fd may be anywhere: learn it */
  if (!aid) return errno = err, f;
  if (f) stream_maps(aid, f, fd, NULL);
  sxp_end(aid, f ? fd : -1, !f, err);
  return f;
}

SXP_EXPORT int fclose(FILE *f) {
  int (*real)(FILE *) = SXP_REAL(fclose);
  if (SXP_UNLIKELY(!real)) return NOSYS;
  siox_aid aid = sxp_begin(SXP_T_FCLOSE);
  int fd = f ? fileno(f) : -1;
  struct stream_out w = aid ? out_begin(f) : (struct stream_out){0};
  if (fd >= 0) sxp_fd_detach(fd); /* before the number is free again */
  int r = real(f), err = errno;
  if (!aid) return errno = err, r;
  out_send(aid, &w, w.pos);
  siox_desc sf = siox_desc_int(SIOX_ATTR_STDIO_FILE, (int64_t)(uintptr_t)f);
  siox_descriptor_release(sxp__reg.node[SXP_NODE_STDIO], aid, &sf);
  if (fd >= 0) sxp__fd_released(aid, fd);
  siox_activity_attr_u64(aid, SIOX_ATTR_STDIO_FILE, (uint64_t)(uintptr_t)f);
  sxp_end(aid, r, r != 0, err);
  return r;
}

/* ---- data ---------------------------------------------------------------- */

/* fread/fwrite: a short count leaves the bytes moved unknown (a partial
 * element still moves the position), so stream_track asks ftello. */
static size_t elems_done(siox_aid aid, FILE *f, const struct stream_out *w, size_t size, size_t n, size_t r,
                         int err) {
  int64_t moved = r == n ? (int64_t)(r * size) : -1;
  stream_done(aid, f, w, size * n, moved, (int64_t)r, r < n && ferror(f), err);
  return r;
}

SXP_EXPORT size_t fread(void *p, size_t size, size_t n, FILE *f) {
  size_t (*real)(void *, size_t, size_t, FILE *) = SXP_REAL(fread);
  if (SXP_UNLIKELY(!real)) return errno = ENOSYS, 0;
  siox_aid aid = sxp_begin(SXP_T_FREAD);
  if (!aid) return real(p, size, n, f);
  struct stream_out w = in_begin(f);
  size_t r = real(p, size, n, f);
  return elems_done(aid, f, &w, size, n, r, errno);
}

SXP_EXPORT size_t __fread_chk(void *p, size_t plen, size_t size, size_t n, FILE *f) {
  size_t (*real)(void *, size_t, size_t, size_t, FILE *) = SXP_REAL(__fread_chk);
  if (SXP_UNLIKELY(!real)) return errno = ENOSYS, 0;
  siox_aid aid = sxp_begin(SXP_T_FREAD);
  if (!aid) return real(p, plen, size, n, f);
  struct stream_out w = in_begin(f);
  size_t r = real(p, plen, size, n, f);
  return elems_done(aid, f, &w, size, n, r, errno);
}

SXP_EXPORT size_t fwrite(const void *p, size_t size, size_t n, FILE *f) {
  size_t (*real)(const void *, size_t, size_t, FILE *) = SXP_REAL(fwrite);
  if (SXP_UNLIKELY(!real)) return errno = ENOSYS, 0;
  siox_aid aid = sxp_begin(SXP_T_FWRITE);
  if (!aid) return real(p, size, n, f);
  struct stream_out w = out_begin(f);
  size_t r = real(p, size, n, f);
  return elems_done(aid, f, &w, size, n, r, errno);
}

/* The printf family: the bytes are what was formatted. */
static int printed(siox_aid aid, FILE *f, const struct stream_out *w, int r, int err) {
  stream_done(aid, f, w, UNKNOWN, r >= 0 ? r : -1, r, r < 0, err);
  return r;
}

SXP_EXPORT int vfprintf(FILE *f, const char *fmt, va_list ap) {
  int (*real)(FILE *, const char *, va_list) = SXP_REAL(vfprintf);
  if (SXP_UNLIKELY(!real)) return NOSYS;
  siox_aid aid = sxp_begin(SXP_T_VFPRINTF);
  if (!aid) return real(f, fmt, ap);
  struct stream_out w = out_begin(f);
  int r = real(f, fmt, ap);
  return printed(aid, f, &w, r, errno);
}

SXP_EXPORT int fprintf(FILE *f, const char *fmt, ...) {
  int (*real)(FILE *, const char *, va_list) = SXP_REAL(vfprintf);
  if (SXP_UNLIKELY(!real)) return NOSYS;
  va_list ap;
  va_start(ap, fmt);
  siox_aid aid = sxp_begin(SXP_T_FPRINTF);
  struct stream_out w = aid ? out_begin(f) : (struct stream_out){0};
  int r = real(f, fmt, ap), err = errno;
  va_end(ap);
  return aid ? printed(aid, f, &w, r, err) : (errno = err, r);
}

SXP_EXPORT int __vfprintf_chk(FILE *f, int flag, const char *fmt, va_list ap) {
  int (*real)(FILE *, int, const char *, va_list) = SXP_REAL(__vfprintf_chk);
  if (SXP_UNLIKELY(!real)) return NOSYS;
  siox_aid aid = sxp_begin(SXP_T_VFPRINTF);
  if (!aid) return real(f, flag, fmt, ap);
  struct stream_out w = out_begin(f);
  int r = real(f, flag, fmt, ap);
  return printed(aid, f, &w, r, errno);
}

SXP_EXPORT int __fprintf_chk(FILE *f, int flag, const char *fmt, ...) {
  int (*real)(FILE *, int, const char *, va_list) = SXP_REAL(__vfprintf_chk);
  if (SXP_UNLIKELY(!real)) return NOSYS;
  va_list ap;
  va_start(ap, fmt);
  siox_aid aid = sxp_begin(SXP_T_FPRINTF);
  struct stream_out w = aid ? out_begin(f) : (struct stream_out){0};
  int r = real(f, flag, fmt, ap), err = errno;
  va_end(ap);
  return aid ? printed(aid, f, &w, r, err) : (errno = err, r);
}

/* The scanf family: the bytes consumed are known only from the position. */
static int scanned(siox_aid aid, FILE *f, const struct stream_out *w, int r, int err) {
  stream_done(aid, f, w, UNKNOWN, -1, r, r == EOF && ferror(f), err);
  return r;
}

/* In gnu11 mode <stdio.h> renames fscanf/vfscanf to their __isoc99_ forms;
 * the asm labels give the plain (GNU) symbols wrappers of their own. */
#define DEFINE_VFSCANF(name, T)                                                 \
  SXP_EXPORT int sxp_##name(FILE *f, const char *fmt, va_list ap) __asm__(#name); \
  SXP_EXPORT int sxp_##name(FILE *f, const char *fmt, va_list ap) {             \
    int (*real)(FILE *, const char *, va_list) = SXP_REAL(name);                \
    if (SXP_UNLIKELY(!real)) return NOSYS;                                      \
    siox_aid aid = sxp_begin(SXP_T_##T);                                        \
    if (!aid) return real(f, fmt, ap);                                          \
    struct stream_out w = in_begin(f);                                          \
    int r = real(f, fmt, ap);                                                   \
    return scanned(aid, f, &w, r, errno);                                       \
  }
DEFINE_VFSCANF(vfscanf, VFSCANF)
DEFINE_VFSCANF(__isoc99_vfscanf, VFSCANF)

#define DEFINE_FSCANF(name, vreal, T)                                           \
  SXP_EXPORT int sxp_##name(FILE *f, const char *fmt, ...) __asm__(#name);      \
  SXP_EXPORT int sxp_##name(FILE *f, const char *fmt, ...) {                    \
    int (*real)(FILE *, const char *, va_list) = SXP_REAL(vreal);               \
    if (SXP_UNLIKELY(!real)) return NOSYS;                                      \
    va_list ap;                                                                 \
    va_start(ap, fmt);                                                          \
    siox_aid aid = sxp_begin(SXP_T_##T);                                        \
    struct stream_out w = aid ? in_begin(f) : (struct stream_out){0};           \
    int r = real(f, fmt, ap), err = errno;                                      \
    va_end(ap);                                                                 \
    return aid ? scanned(aid, f, &w, r, err) : (errno = err, r);                \
  }
DEFINE_FSCANF(fscanf, vfscanf, FSCANF)
DEFINE_FSCANF(__isoc99_fscanf, __isoc99_vfscanf, FSCANF)

/* fgets: io/result is the length of the line read, -1 for NULL. */
static char *got(siox_aid aid, FILE *f, const struct stream_out *w, int n, char *r, int err) {
  int64_t len = r ? (int64_t)strlen(r) : (ferror(f) ? -1 : 0);
  stream_done(aid, f, w, n > 0 ? (uint64_t)n : 0, len, r ? len : -1, !r && ferror(f), err);
  return r;
}

SXP_EXPORT char *fgets(char *s, int n, FILE *f) {
  char *(*real)(char *, int, FILE *) = SXP_REAL(fgets);
  if (SXP_UNLIKELY(!real)) return NOSYS_NULL;
  siox_aid aid = sxp_begin(SXP_T_FGETS);
  if (!aid) return real(s, n, f);
  struct stream_out w = in_begin(f);
  char *r = real(s, n, f);
  return got(aid, f, &w, n, r, errno);
}

SXP_EXPORT char *__fgets_chk(char *s, size_t size, int n, FILE *f) {
  char *(*real)(char *, size_t, int, FILE *) = SXP_REAL(__fgets_chk);
  if (SXP_UNLIKELY(!real)) return NOSYS_NULL;
  siox_aid aid = sxp_begin(SXP_T_FGETS);
  if (!aid) return real(s, size, n, f);
  struct stream_out w = in_begin(f);
  char *r = real(s, size, n, f);
  return got(aid, f, &w, n, r, errno);
}

SXP_EXPORT int fputs(const char *s, FILE *f) {
  int (*real)(const char *, FILE *) = SXP_REAL(fputs);
  if (SXP_UNLIKELY(!real)) return NOSYS;
  siox_aid aid = sxp_begin(SXP_T_FPUTS);
  if (!aid) return real(s, f);
  struct stream_out w = out_begin(f);
  int r = real(s, f), err = errno;
  int64_t len = (int64_t)strlen(s);
  stream_done(aid, f, &w, (uint64_t)len, r >= 0 ? len : -1, r, r < 0, err);
  return r;
}

/* ---- flush and position --------------------------------------------------- */

SXP_EXPORT int fflush(FILE *f) {
  int (*real)(FILE *) = SXP_REAL(fflush);
  if (SXP_UNLIKELY(!real)) return NOSYS;
  siox_aid aid = sxp_begin(SXP_T_FFLUSH);
  if (!aid) return real(f);
  struct stream_out w = out_begin(f); /* f NULL (flush all): no slot, nothing sent */
  int r = real(f), err = errno;
  out_send(aid, &w, w.pos);
  struct sxp_ofd *o = f ? sxp_fd_ofd(fileno(f)) : NULL;
  if (o) sxp_ofd_set(o, UNKNOWN); /* the kernel offset moved inside libc */
  siox_activity_attr_u64(aid, SIOX_ATTR_STDIO_FILE, (uint64_t)(uintptr_t)f);
  sxp_end(aid, r, r != 0, err);
  return r;
}

/* After a seek or tell: the stream's position is pos (< 0: not known). */
static void stream_at(siox_aid aid, FILE *f, int64_t pos) {
  struct sxp_fd *s = stream_slot(f);
  if (s && pos >= 0) sxp_stream_set(s, (uint64_t)pos);
  struct sxp_ofd *o = s ? atomic_load(&s->ofd) : NULL;
  if (o) sxp_ofd_set(o, UNKNOWN);
  siox_activity_attr_u64(aid, SIOX_ATTR_STDIO_FILE, (uint64_t)(uintptr_t)f);
  if (pos >= 0) siox_activity_attr_u64(aid, SIOX_ATTR_IO_OFFSET, (uint64_t)pos);
}

#define DEFINE_FSEEK(name, T, otype)                                            \
  SXP_EXPORT int name(FILE *f, otype off, int whence) {                         \
    int (*real)(FILE *, otype, int) = SXP_REAL(name);                           \
    if (SXP_UNLIKELY(!real)) return NOSYS;                                      \
    siox_aid aid = sxp_begin(SXP_T_##T);                                        \
    if (!aid) {                                                                 \
      struct sxp_fd *s = stream_slot(f);                                        \
      if (s) sxp_stream_reset(s);                                               \
      return real(f, off, whence);                                              \
    }                                                                           \
    int r = real(f, off, whence), err = errno;                                  \
    int64_t pos = r != 0 ? -1 : whence == SEEK_SET ? (int64_t)off : (int64_t)SXP_REAL(ftello)(f); \
    stream_at(aid, f, pos);                                                     \
    sxp_end(aid, r, r != 0, err);                                               \
    return r;                                                                   \
  }
DEFINE_FSEEK(fseek, FSEEK, long)
DEFINE_FSEEK(fseeko, FSEEKO, off_t)

#define DEFINE_FTELL(name, T, otype)                                            \
  SXP_EXPORT otype name(FILE *f) {                                              \
    otype (*real)(FILE *) = SXP_REAL(name);                                     \
    if (SXP_UNLIKELY(!real)) return NOSYS;                                      \
    siox_aid aid = sxp_begin(SXP_T_##T);                                        \
    if (!aid) return real(f);                                                   \
    otype r = real(f);                                                          \
    int err = errno;                                                            \
    stream_at(aid, f, (int64_t)r);                                              \
    sxp_end(aid, r, r < 0, err);                                                \
    return r;                                                                   \
  }
DEFINE_FTELL(ftell, FTELL, long)
DEFINE_FTELL(ftello, FTELLO, off_t)
