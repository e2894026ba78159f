/*
 * Timestamps of the hot path. Activities carry raw TSC ticks when the CPU has
 * an invariant TSC; the flusher pairs the TSC with CLOCK_REALTIME in HELLO and
 * every BATCH so that the daemon converts ticks to ns by interpolation.
 */
#include <time.h>
#if defined(__x86_64__) && __has_include(<sys/platform/x86.h>)
#include <sys/platform/x86.h> /* the loader's cpuid copy */
#endif
#if defined(__x86_64__) && defined(CPU_FEATURE_PRESENT) /* glibc >= 2.33; 2.32's header has another API */
#define SIOX_CPU_FEATURES 1
#elif defined(__x86_64__)
#include <cpuid.h>
#endif

#include "client.h"

int siox__clock_tsc;

/* Why: rdtsc costs ~11 ns here against ~26 ns for clock_gettime, and an
 * activity needs two reads. Without an invariant TSC (cpuid 0x80000007 EDX
 * bit 8) ticks may change rate or stop in deep C-states, so we fall back.
 * The bit is read from the copy of cpuid the dynamic loader made at start:
 * in a VM each cpuid instruction traps to the hypervisor (measured ~11 us
 * per instruction on the 2-vCPU test VM, three of them per process start). */
void siox__clock_init(void) {
  siox__clock_tsc = 0;
#if defined(SIOX_CPU_FEATURES)
  siox__clock_tsc = CPU_FEATURE_PRESENT(INVARIANT_TSC) ? 1 : 0;
#elif defined(__x86_64__)
  unsigned a, b, c, d;
  /* gcc's cpuid.h returns unsigned, clang's int: compare as unsigned. */
  if ((unsigned)__get_cpuid_max(0x80000000u, NULL) >= 0x80000007u && __get_cpuid(0x80000007u, &a, &b, &c, &d))
    siox__clock_tsc = (d >> 8) & 1u;
#endif
}

uint64_t siox__clock_slow(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Takes a (clock, realtime ns) pair: the tick value is the midpoint of two
 * reads around clock_gettime, so the pair is off by at most half the time
 * between them. A thread preempted in between (a loaded node, a VM's stolen
 * vCPU) would move every time the daemon converts with the pair by half the
 * preemption, milliseconds at worst: of PAIR_TRIES reads the tightest is
 * kept. A pair is taken per flushed buffer, not per activity. */
#define PAIR_TRIES 3
void siox__clock_pair(uint64_t *tsc, int64_t *ns) {
  uint64_t best = UINT64_MAX;
  for (int i = 0; i < PAIR_TRIES; i++) {
    uint64_t t0 = siox__clock_now();
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t t1 = siox__clock_now();
    if (t1 - t0 >= best)
      continue;
    best = t1 - t0;
    *ns = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
    *tsc = siox__clock_tsc ? t0 + (t1 - t0) / 2 : (uint64_t)*ns;
  }
}
