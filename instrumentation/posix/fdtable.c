/*
 * fd table of the POSIX layer (see fdtable.h): the wrappers consult it on
 * every read/write to report offsets without an lseek, and update it at
 * open, dup, close and fork. No system calls here; malloc only at open.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fdtable.h"

struct sxp_fd sxp__fd_chunk0[SXP_FD_CHUNK];
struct sxp_fd *_Atomic sxp__fd_dir[SXP_FD_DIR] = {sxp__fd_chunk0};

/* Chunks are published with a compare-and-swap so that two threads growing
 * the table at once agree on one chunk; the loser frees its copy. */
struct sxp_fd *sxp_fd_slot(int fd) {
  if (fd < 0 || (unsigned)fd >= SXP_FD_MAX) return NULL;
  struct sxp_fd *s = sxp_fd_peek(fd);
  if (s) return s;
  struct sxp_fd *_Atomic *d = &sxp__fd_dir[(unsigned)fd / SXP_FD_CHUNK];
  struct sxp_fd *c = calloc(SXP_FD_CHUNK, sizeof *c), *expect = NULL;
  if (!c) return NULL;
  if (!atomic_compare_exchange_strong(d, &expect, c)) {
    free(c);
    c = expect;
  }
  return &c[(unsigned)fd % SXP_FD_CHUNK];
}

struct sxp_ofd *sxp_ofd_create(const char *path, uint64_t pos, uint32_t flags) {
  size_t len = path ? strlen(path) : 0;
  struct sxp_ofd *o = malloc(sizeof *o + len + 1);
  if (!o) return NULL;
  atomic_init(&o->pos, pos);
  atomic_init(&o->refs, 1);
  atomic_init(&o->flags, flags);
  memset(o->gfid, 0, sizeof o->gfid);
  o->pathlen = (uint32_t)len;
  memcpy(o->path, path ? path : "", len + 1);
  return o;
}

void sxp_ofd_unref(struct sxp_ofd *o) {
  if (o && atomic_fetch_sub_explicit(&o->refs, 1, memory_order_acq_rel) == 1) free(o);
}

int sxp_fd_attach(int fd, struct sxp_ofd *o) {
  struct sxp_fd *s = sxp_fd_slot(fd);
  if (!s) {
    sxp_ofd_unref(o);
    return fd < 0 || (unsigned)fd >= SXP_FD_MAX ? -EBADF : -ENOMEM;
  }
  sxp_stream_reset(s);
  atomic_store_explicit(&s->oflags, o ? sxp_ofd_flags(o) : 0, memory_order_relaxed);
  sxp_ofd_unref(atomic_exchange_explicit(&s->ofd, o, memory_order_acq_rel));
  return 0;
}

int sxp_fd_dup(int oldfd, int newfd) {
  struct sxp_ofd *o = sxp_fd_ofd(oldfd);
  if (!o) {
    sxp_fd_detach(newfd);
    return -ENOENT;
  }
  atomic_fetch_add_explicit(&o->refs, 1, memory_order_relaxed);
  return sxp_fd_attach(newfd, o);
}

int sxp_fd_detach(int fd) {
  struct sxp_fd *s = sxp_fd_peek(fd);
  if (!s) return 0;
  sxp_stream_reset(s);
  struct sxp_ofd *o = atomic_exchange_explicit(&s->ofd, NULL, memory_order_acq_rel);
  sxp_ofd_unref(o);
  return o != NULL;
}

void sxp_fd_detach_range(unsigned first, unsigned last) {
  if (last >= SXP_FD_MAX) last = SXP_FD_MAX - 1;
  for (unsigned fd = first; fd <= last; fd++) {
    if (fd % SXP_FD_CHUNK == 0 && !atomic_load(&sxp__fd_dir[fd / SXP_FD_CHUNK])) {
      fd += SXP_FD_CHUNK - 1; /* a chunk never made holds nothing */
      continue;
    }
    sxp_fd_detach((int)fd);
  }
}

void sxp_fd_forget_positions(void) {
  for (unsigned c = 0; c < SXP_FD_DIR; c++) {
    struct sxp_fd *chunk = atomic_load(&sxp__fd_dir[c]);
    for (unsigned i = 0; chunk && i < SXP_FD_CHUNK; i++) {
      struct sxp_ofd *o = atomic_load(&chunk[i].ofd);
      if (o) sxp_ofd_set(o, SXP_POS_UNKNOWN);
      atomic_store(&chunk[i].spos, 0);
    }
  }
}
