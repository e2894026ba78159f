/*
 * bench_drain_serve: the benches' stand-in daemon (bench_drain.h) as a
 * process of its own, for scripts that run an unmodified program under the
 * preload (bench_instr.sh): prints its socket's path, then serves until
 * killed.
 */
#include <stdio.h>
#include <unistd.h>

#include "bench_drain.h"

int main(void) {
  char path[256];
  int rc = bench_drain_start("serve", path, sizeof path);
  if (rc < 0) return fprintf(stderr, "bench_drain_serve: cannot listen (%d)\n", rc), 1;
  printf("%s\n", path);
  fflush(stdout);
  for (;;) pause();
}
