/*
 * bench_pwrite: the plain C program a user would time, with nothing of SIOX
 * in it (bench_user runs it bare and under LD_PRELOAD of libsiox-posix).
 *   bench_pwrite loop PATH CALLS   CALLS pwrite(4 KiB) at offsets cycling
 *                                  over 1 MiB of PATH (page cache, no
 *                                  growth); prints the loop's
 *                                  CLOCK_MONOTONIC ns
 *   bench_pwrite once PATH         open, one 4 KiB write, close: the
 *                                  smallest program that does I/O
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define BLOCK 4096
#define SPAN (256L * BLOCK)

static long long now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(int argc, char **argv) {
  static char data[BLOCK];
  memset(data, 'x', sizeof data);
  if (argc == 3 && strcmp(argv[1], "once") == 0) {
    int fd = open(argv[2], O_CREAT | O_WRONLY | O_TRUNC, 0600);
    if (fd < 0 || write(fd, data, BLOCK) != BLOCK || close(fd) != 0) return perror(argv[2]), 1;
    return 0;
  }
  if (argc != 4 || strcmp(argv[1], "loop") != 0) {
    fprintf(stderr, "usage: %s loop PATH CALLS | once PATH\n", argv[0]);
    return 2;
  }
  long calls = atol(argv[3]);
  int fd = open(argv[2], O_CREAT | O_RDWR | O_TRUNC, 0600);
  if (fd < 0) return perror(argv[2]), 1;
  long long t0 = now_ns();
  for (long i = 0; i < calls; i++)
    if (pwrite(fd, data, BLOCK, (i * BLOCK) % SPAN) != BLOCK) return perror("pwrite"), 1;
  long long t1 = now_ns();
  close(fd);
  printf("%lld\n", t1 - t0);
  return 0;
}
