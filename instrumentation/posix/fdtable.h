/*
 * The POSIX layer's picture of the process's file descriptors: fd -> open
 * file description (position, flags, path, gfid), and fd -> stdio stream
 * position. Read lock-free on every I/O call; written at open/dup/close.
 * Pure bookkeeping: no system calls, so unit tests drive it directly.
 */
#ifndef SIOX_POSIX_FDTABLE_H
#define SIOX_POSIX_FDTABLE_H

#include <stdatomic.h>
#include <stdint.h>

/* Position not known (never seen, O_APPEND, after fork): learn it lazily. */
#define SXP_POS_UNKNOWN UINT64_MAX

/* Chunks of fds, allocated on first use and never moved or freed, so a
 * reader needs no lock. The first chunk is static: the common fds cost no
 * allocation, and calls made before constructors ran find a table. */
#define SXP_FD_CHUNK 1024
#define SXP_FD_DIR 1024
#define SXP_FD_MAX (SXP_FD_CHUNK * SXP_FD_DIR) /* fds above are not tracked */

enum sxp_ofd_flags {
  SXP_OFD_APPEND = 1u,  /* O_APPEND: every write lands at the end */
  SXP_OFD_NOSEEK = 2u,  /* pipe, socket, tty: no offsets */
  SXP_OFD_GLUSTER = 4u, /* on a FUSE mount with a GlusterFS gfid */
};

/* One open file description, shared by the fds dup'ed from one open, as
 * the kernel shares the file offset between them. Owned by its references:
 * the last fd that drops it frees it. */
struct sxp_ofd {
  _Atomic uint64_t pos;
  _Atomic uint32_t refs;
  _Atomic uint32_t flags;
  uint8_t gfid[16];
  uint32_t pathlen; /* 0: path not known */
  char path[];      /* absolute, normalised, NUL-terminated */
};

struct sxp_fd {
  struct sxp_ofd *_Atomic ofd;
  _Atomic uint64_t spos;    /* stdio stream position + 1; 0: not known */
  _Atomic uint32_t snoseek; /* 1: the stream cannot tell its position */
  /* The ofd's flags when it was attached. SXP_OFD_GLUSTER is only set
   * before (open.c), so a read/write at an explicit offset learns whether
   * it has links to report without touching the ofd: after a system call
   * (TLB flushed) every page costs a walk, and the ofd is on the heap. */
  _Atomic uint32_t oflags;
};

extern struct sxp_fd *_Atomic sxp__fd_dir[SXP_FD_DIR];
extern struct sxp_fd sxp__fd_chunk0[SXP_FD_CHUNK];

/* The slot of fd, or NULL when its chunk does not exist (never used) or fd
 * is out of range. Lock-free. Low fds skip the directory: after a system
 * call (PTI without PCID flushes the TLB) every page touched costs a walk. */
static inline struct sxp_fd *sxp_fd_peek(int fd) {
  if (__builtin_expect((unsigned)fd < SXP_FD_CHUNK, 1)) return &sxp__fd_chunk0[fd];
  if ((unsigned)fd >= SXP_FD_MAX) return NULL;
  struct sxp_fd *c = atomic_load_explicit(&sxp__fd_dir[(unsigned)fd / SXP_FD_CHUNK], memory_order_acquire);
  return c ? &c[(unsigned)fd % SXP_FD_CHUNK] : NULL;
}

/* Whether fd's I/O has GlusterFS links to report (see oflags). */
static inline int sxp_fd_gluster(const struct sxp_fd *s) {
  return (atomic_load_explicit(&s->oflags, memory_order_relaxed) & SXP_OFD_GLUSTER) != 0;
}
/* The ofd of fd, or NULL. */
static inline struct sxp_ofd *sxp_fd_ofd(int fd) {
  struct sxp_fd *s = sxp_fd_peek(fd);
  return s ? atomic_load_explicit(&s->ofd, memory_order_acquire) : NULL;
}

/* The slot of fd, allocating its chunk if needed (slow path). NULL when fd
 * is out of range or memory is short. */
struct sxp_fd *sxp_fd_slot(int fd);

/* Allocates an ofd with one reference, position pos and flags; path may be
 * NULL. The caller owns the reference (hand it to sxp_fd_attach). */
struct sxp_ofd *sxp_ofd_create(const char *path, uint64_t pos, uint32_t flags);
/* Drops one reference; frees the ofd with the last. */
void sxp_ofd_unref(struct sxp_ofd *o);

/* Installs o (taking over the caller's reference) as fd's description,
 * dropping the one fd had. Returns 0, or -EBADF/-ENOMEM (o is then
 * dropped). The stream fields of fd are reset. */
int sxp_fd_attach(int fd, struct sxp_ofd *o);
/* Makes newfd share oldfd's description (dup); newfd's old one is dropped.
 * Returns 0, -ENOENT when oldfd has none (newfd is then cleared). */
int sxp_fd_dup(int oldfd, int newfd);
/* Forgets fd (close). Returns 1 when fd had a description. */
int sxp_fd_detach(int fd);
/* Forgets every fd in [first, last]. */
void sxp_fd_detach_range(unsigned first, unsigned last);
/* After fork the child shares every offset with its parent: mark all
 * positions unknown so that they are learned again. */
void sxp_fd_forget_positions(void);

/* Advances o's position by n (> 0) and returns where the access started,
 * or SXP_POS_UNKNOWN when the position is not known. */
static inline uint64_t sxp_ofd_advance(struct sxp_ofd *o, uint64_t n) {
  uint64_t p = atomic_load_explicit(&o->pos, memory_order_relaxed);
  if (p == SXP_POS_UNKNOWN) return p;
  return atomic_fetch_add_explicit(&o->pos, n, memory_order_relaxed);
}
static inline void sxp_ofd_set(struct sxp_ofd *o, uint64_t pos) {
  atomic_store_explicit(&o->pos, pos, memory_order_relaxed);
}
static inline uint64_t sxp_ofd_pos(struct sxp_ofd *o) {
  return atomic_load_explicit(&o->pos, memory_order_relaxed);
}
static inline uint32_t sxp_ofd_flags(struct sxp_ofd *o) {
  return atomic_load_explicit(&o->flags, memory_order_relaxed);
}

/* The stdio stream position on fd, same contract as sxp_ofd_advance. It is
 * stored plus one, so that a zeroed slot (stdin/out/err, fds not seen open)
 * reads as "not known". */
static inline uint64_t sxp_stream_advance(struct sxp_fd *s, uint64_t n) {
  uint64_t p = atomic_load_explicit(&s->spos, memory_order_relaxed);
  if (p == 0) return SXP_POS_UNKNOWN;
  return atomic_fetch_add_explicit(&s->spos, n, memory_order_relaxed) - 1;
}
static inline uint64_t sxp_stream_pos(struct sxp_fd *s) {
  return atomic_load_explicit(&s->spos, memory_order_relaxed) - 1; /* 0 - 1: unknown */
}
static inline void sxp_stream_set(struct sxp_fd *s, uint64_t pos) {
  atomic_store_explicit(&s->spos, pos + 1, memory_order_relaxed); /* unknown + 1 = 0 */
}
/* A new stream on fd (fopen, fdopen) or none (fclose): position unknown. */
static inline void sxp_stream_reset(struct sxp_fd *s) {
  atomic_store_explicit(&s->spos, 0, memory_order_relaxed);
  atomic_store_explicit(&s->snoseek, 0, memory_order_relaxed);
}

#endif
