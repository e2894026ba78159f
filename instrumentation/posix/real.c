/*
 * Resolution of the real libc functions (real.h). Runs in the constructor,
 * or earlier on the first wrapped call, with the re-entrancy guard raised so
 * that whatever dlsym does internally passes straight through.
 */
#include <dlfcn.h>
#include <stdatomic.h>

#include "posix.h"

struct sxp_real sxp__real;

static SXP_TLS int resolving;
static _Atomic int resolved; /* a symbol libc lacks stays NULL: look once */

int sxp__resolve(void) {
  if (atomic_load_explicit(&resolved, memory_order_acquire)) return 1;
  if (resolving) return 0;
  resolving = 1;
  sxp__guard++;
#define SXP_REAL_RESOLVE(name, ret, args)                                       \
  if (!__atomic_load_n(&sxp__real.name, __ATOMIC_RELAXED))                      \
    __atomic_store_n(&sxp__real.name, (ret(*) args)dlsym(RTLD_NEXT, #name), __ATOMIC_RELAXED);
  SXP_REAL_LIST(SXP_REAL_RESOLVE)
#undef SXP_REAL_RESOLVE
  sxp__guard--;
  resolving = 0;
  atomic_store_explicit(&resolved, 1, memory_order_release);
  return 1;
}
