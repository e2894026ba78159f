/*
 * Resolution of the real libc functions (real.h): each entry on its first
 * use, with the re-entrancy guard raised so that whatever dlsym does
 * internally passes straight through. Nothing is resolved at load: a
 * preloaded process that calls no wrapped function makes no dlsym (75 of
 * them took ~0.1 ms of every process start).
 */
#include <dlfcn.h>
#include <stdatomic.h>
#include <stddef.h>

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

void sxp__resolve_one(int i) {
  if (resolving || atomic_load_explicit(&looked[i], memory_order_acquire)) return;
  resolving = 1;
  sxp__guard++;
  void *f = dlsym(RTLD_NEXT, names[i]);
  /* Function and data pointers have one representation on POSIX systems
   * (dlsym relies on it); the entry is a function pointer of its own type. */
  void **slot = (void **)((char *)&sxp__real + offsets[i]);
  if (f) __atomic_store_n(slot, f, __ATOMIC_RELAXED);
  atomic_store_explicit(&looked[i], 1, memory_order_release);
  sxp__guard--;
  resolving = 0;
}
