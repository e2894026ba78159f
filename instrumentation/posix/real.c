/*
 * Resolution of the real libc functions (real.h): each entry on its first
 * use, with the re-entrancy guard raised so that whatever dlsym does
 * internally passes straight through. Nothing is resolved at load: a
 * preloaded process that calls no wrapped function makes no dlsym (75 of
 * them took ~0.1 ms of every process start).
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "posix.h"

struct sxp_real sxp__real;

#define SXP_REAL_NAME(name, ret, args) #name,
static const char *const names[SXP_RI_COUNT] = {SXP_REAL_LIST(SXP_REAL_NAME)};
#undef SXP_REAL_NAME
#define SXP_REAL_OFFSET(name, ret, args) offsetof(struct sxp_real, name),
static const size_t offsets[SXP_RI_COUNT] = {SXP_REAL_LIST(SXP_REAL_OFFSET)};
#undef SXP_REAL_OFFSET

static SXP_TLS int resolving;
static _Atomic unsigned char looked[SXP_RI_COUNT]; /* a symbol libc lacks stays NULL: look once */

/* pread and pwrite straight to the kernel. glibc runs every cancellable
 * system call between an enable and a disable of asynchronous
 * cancellation (two atomic read-modify-writes, ~17-30 ns per call here)
 * once the process has a second thread, and the flusher is one: a cost
 * SIOX put on every pwrite of a single-threaded program. These keep the
 * call a cancellation point: a cancel request made before the call acts
 * at its entry (pthread_testcancel); one made while it runs acts at the
 * thread's next cancellation point, not inside the call. pread and
 * pwrite take a file offset, so the file is seekable (a regular file or a
 * block device) and the call does not wait for a peer. */
static ssize_t direct_pread(int fd, void *buf, size_t n, off_t off) {
  pthread_testcancel();
  return syscall(SYS_pread64, fd, buf, n, off);
}

static ssize_t direct_pwrite(int fd, const void *buf, size_t n, off_t off) {
  pthread_testcancel();
  return syscall(SYS_pwrite64, fd, buf, n, off);
}

/* The direct call for entry i when f, the next definition, is libc's own
 * (another interposer behind this library keeps its call); else f. */
static void *direct_for(int i, void *f) {
#if __SIZEOF_LONG__ == 8 /* off_t is the system call's 64-bit offset */
  void *direct = i == SXP_RI_pread || i == SXP_RI_pread64     ? (void *)direct_pread
                 : i == SXP_RI_pwrite || i == SXP_RI_pwrite64 ? (void *)direct_pwrite
                                                              : NULL;
  void *libc = direct && f ? dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD) : NULL;
  if (libc) {
    if (dlsym(libc, names[i]) == f) f = direct;
    dlclose(libc);
  }
#else
  (void)i;
#endif
  return f;
}

void sxp__resolve_one(int i) {
  if (resolving || atomic_load_explicit(&looked[i], memory_order_acquire)) return;
  resolving = 1;
  sxp__guard++;
  void *f = direct_for(i, dlsym(RTLD_NEXT, names[i]));
  /* Function and data pointers have one representation on POSIX systems
   * (dlsym relies on it); the entry is a function pointer of its own type. */
  void **slot = (void **)((char *)&sxp__real + offsets[i]);
  if (f) __atomic_store_n(slot, f, __ATOMIC_RELAXED);
  atomic_store_explicit(&looked[i], 1, memory_order_release);
  sxp__guard--;
  resolving = 0;
}
