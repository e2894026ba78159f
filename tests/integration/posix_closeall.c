/*
 * A launcher's child, as OpenMPI's orterun forks it: the child makes a few
 * traced calls (the library connects to the daemon), closes every
 * descriptor from 3 up to the soft limit, waits (the library notices and
 * reconnects), opens a file of its own and writes it, then execs itself;
 * the new image makes three calls and exits. Run under
 * LD_PRELOAD=libsiox-posix.so by test_posix_closeall.sh.
 *
 * usage: posix_closeall DIR        (the parent)
 *        posix_closeall DIR exec'd (the image after exec)
 * Prints "calls N": the POSIX calls the whole tree made (each is an
 * activity), and writes DIR/child2 with CHILD2_BYTES bytes 'z' (the file
 * the child opens after its closes: no byte of the library's may land in it).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#define CHILD2_BYTES 4096

static void put(const char *dir, const char *name, const char *data, size_t n) {
  char p[4096];
  snprintf(p, sizeof p, "%s/%s", dir, name);
  int fd = open(p, O_CREAT | O_WRONLY | O_TRUNC, 0644);
  if (fd < 0 || write(fd, data, n) != (ssize_t)n || close(fd) != 0) {
    perror(p);
    exit(1);
  }
}

/* The child: its calls and the closes, then exec (not a call). Its count
 * goes to the parent in DIR/child.calls, written before the closes. The
 * file it opens after the closes stays open across exec: it takes the
 * lowest free number, where the library's descriptors were. */
static void child(const char *self, const char *dir) {
  struct rlimit rl;
  getrlimit(RLIMIT_NOFILE, &rl);
  int top = rl.rlim_cur > 8192 ? 8192 : (int)rl.rlim_cur;
  char n[32], p[4096];
  snprintf(n, sizeof n, "%d", 3 + top - 3 + 2);
  put(dir, "child.calls", n, strlen(n));
  usleep(200000); /* the library connects and sends */
  for (int fd = 3; fd < top; fd++) close(fd); /* as orterun's child does */
  static char z[CHILD2_BYTES];
  memset(z, 'z', sizeof z);
  snprintf(p, sizeof p, "%s/child2", dir);
  int fd = open(p, O_CREAT | O_WRONLY | O_TRUNC, 0644);
  if (fd < 0 || write(fd, z, sizeof z) != (ssize_t)sizeof z) _exit(1);
  usleep(300000); /* the library reconnects if it lost its socket */
  execl(self, self, dir, "exec'd", (char *)NULL); /* flushes first */
  _exit(127);
}

int main(int argc, char **argv) {
  if (argc < 2) return fprintf(stderr, "usage: %s DIR\n", argv[0]), 2;
  if (argc > 2) { /* the image after exec: 3 calls */
    put(argv[1], "execd", "e", 1);
    return 0;
  }
  put(argv[1], "parent", "x", 1);
  pid_t c = fork();
  if (c < 0) return perror("fork"), 1;
  if (c == 0) child(argv[0], argv[1]);
  int st;
  if (waitpid(c, &st, 0) != c || !WIFEXITED(st) || WEXITSTATUS(st) != 0) return fprintf(stderr, "child failed\n"), 1;
  char p[4096], n[32] = "";
  snprintf(p, sizeof p, "%s/child.calls", argv[1]);
  int fd = open(p, O_RDONLY);
  if (fd < 0 || read(fd, n, sizeof n - 1) <= 0 || close(fd) != 0) return perror(p), 1;
  /* parent: put 3, open/read/close 3, the write below 1; the child's own
   * count; the exec'd image 3 */
  char out[64];
  int len = snprintf(out, sizeof out, "calls %d\n", 3 + 3 + 1 + atoi(n) + 3);
  return write(1, out, (size_t)len) == len ? 0 : 1;
}
