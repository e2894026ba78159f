/*
 * posix_cancel FILE: a thread that only calls pwrite, then pread, on FILE
 * (no other cancellation point) is cancelled by the main thread with
 * pthread_cancel (deferred) and must end within 10 s. Run under
 * LD_PRELOAD=libsiox-posix.so: its pread/pwrite wrappers must stay
 * cancellation points (instrumentation/posix/README.md, "pread/pwrite keep
 * glibc's call"). Exit 0 when both threads were cancelled.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

static int fd;
static _Atomic long calls;

/* Not on the thread's stack: in an ASan build the forced unwind of the
 * cancellation skips the epilogue that unpoisons a local array's redzones,
 * and ASan reports the thread's exit as a stack overflow. */
static char b[4096];

static void *writer(void *arg) {
  for (long i = 0;; i++) {
    ssize_t r = arg ? pread(fd, b, sizeof b, 0) : pwrite(fd, b, sizeof b, (i % 16) * 4096);
    if (r < 0) return NULL;
    atomic_fetch_add(&calls, 1);
  }
}

/* 0 when a thread doing only `pread` (rd) or `pwrite` calls ends cancelled. */
static int cancelled(int rd) {
  pthread_t t;
  atomic_store(&calls, 0);
  if (pthread_create(&t, NULL, writer, rd ? (void *)1 : NULL) != 0) return -1;
  while (atomic_load(&calls) < 1000) usleep(1000);
  pthread_cancel(t);
  struct timespec dl;
  clock_gettime(CLOCK_REALTIME, &dl);
  dl.tv_sec += 10;
  void *res = NULL;
  if (pthread_timedjoin_np(t, &res, &dl) != 0) {
    fprintf(stderr, "posix_cancel: a thread in a %s loop was not cancelled within 10 s\n", rd ? "pread" : "pwrite");
    return -1;
  }
  return res == PTHREAD_CANCELED ? 0 : -1;
}

int main(int argc, char **argv) {
  if (argc != 2) return 2;
  fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0600);
  if (fd < 0) return perror(argv[1]), 2;
  int rc = cancelled(0) == 0 && cancelled(1) == 0 ? 0 : 1;
  close(fd);
  return rc;
}
