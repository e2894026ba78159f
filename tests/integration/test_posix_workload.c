/*
 * Workload for the POSIX-layer integration test (test_posix_trace.sh): run
 * with and without LD_PRELOAD=libsiox-posix.so. It forks (the child writes
 * to an inherited fd, then execs this program again), runs threads, uses
 * fds, dup, stdio, and exits normally. It tells the test what it did on
 * stdout (dprintf: not a wrapped call), from its own arithmetic:
 *   call PID NODE NAME            one line per wrapped call made
 *   io PID NAME OFFSET BYTES      the offset a data call must report
 *   map PID PATH FD               posix/path -> posix/fd at an open
 *   smap PID FD                   stdio/file -> posix/fd at fopen/fdopen
 *   err PID NAME ERRNO            a call that failed with ERRNO
 *   recv PID PATH OFFSET BYTES    a POSIX write made inside an MPI-IO call
 * Usage: test_posix_workload DIR   (DIR exists and is empty)
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "siox_posix_hooks.h"

static char dir[PATH_MAX];
static char buf[4096];

#define OUT(...) dprintf(STDOUT_FILENO, __VA_ARGS__)
#define CALL(node, name) OUT("call %d %s %s\n", (int)getpid(), node, name)
#define IO(name, off, n) OUT("io %d %s %lld %lld\n", (int)getpid(), name, (long long)(off), (long long)(n))

static void die(const char *what) {
  dprintf(STDERR_FILENO, "workload: %s: %s\n", what, strerror(errno));
  exit(2);
}

static const char *in_dir(const char *name, char *out) {
  snprintf(out, PATH_MAX, "%s/%s", dir, name);
  return out;
}

static int open_new(const char *name) {
  char p[PATH_MAX];
  int fd = open(in_dir(name, p), O_CREAT | O_WRONLY | O_TRUNC, 0644);
  CALL("POSIX", "open");
  if (fd < 0) die(name);
  OUT("map %d %s %d\n", (int)getpid(), p, fd);
  return fd;
}

static void write_at(int fd, size_t n, long long expect_off) {
  if (write(fd, buf, n) != (ssize_t)n) die("write");
  CALL("POSIX", "write");
  IO("write", expect_off, n);
}

static void do_close(int fd) {
  if (close(fd) < 0) die("close");
  CALL("POSIX", "close");
}

/* fds: sequential writes, lseek, dup (shared offset), pwrite, writev. */
static void fd_writes(void) {
  int fd = open_new("a.dat");
  for (int i = 0; i < 10; i++) write_at(fd, 100, i * 100);
  if (lseek(fd, 5000, SEEK_SET) != 5000) die("lseek");
  CALL("POSIX", "lseek");
  write_at(fd, 100, 5000);
  int fd2 = dup(fd);
  CALL("POSIX", "dup");
  write_at(fd2, 50, 5100);
  if (pwrite(fd, buf, 64, 20000) != 64) die("pwrite");
  CALL("POSIX", "pwrite");
  IO("pwrite", 20000, 64);
  if (pwrite64(fd, buf, 64, 30000) != 64) die("pwrite64");
  CALL("POSIX", "pwrite64");
  IO("pwrite64", 30000, 64);
  struct iovec iov[2] = {{buf, 30}, {buf + 30, 20}};
  if (writev(fd, iov, 2) != 50) die("writev");
  CALL("POSIX", "writev");
  IO("writev", 5150, 50);
  if (fsync(fd) < 0) die("fsync");
  CALL("POSIX", "fsync");
  if (ftruncate(fd, 40000) < 0) die("ftruncate");
  CALL("POSIX", "ftruncate");
  do_close(fd2);
  do_close(fd);
}

/* reads back, stat, fstat, dup2. */
static void fd_reads(void) {
  char p[PATH_MAX];
  struct stat st;
  if (stat(in_dir("a.dat", p), &st) < 0 || st.st_size != 40000) die("stat");
  CALL("POSIX", "stat");
  int fd = open(p, O_RDONLY);
  CALL("POSIX", "open");
  if (fd < 0) die("open a.dat");
  OUT("map %d %s %d\n", (int)getpid(), p, fd);
  if (read(fd, buf, 1000) != 1000) die("read");
  CALL("POSIX", "read");
  IO("read", 0, 1000);
  if (pread(fd, buf, 100, 5000) != 100) die("pread");
  CALL("POSIX", "pread");
  IO("pread", 5000, 100);
  struct iovec iov[2] = {{buf, 10}, {buf + 10, 90}};
  if (readv(fd, iov, 2) != 100) die("readv");
  CALL("POSIX", "readv");
  IO("readv", 1000, 100);
  if (fstat(fd, &st) < 0) die("fstat");
  CALL("POSIX", "fstat");
  if (dup2(fd, 50) != 50) die("dup2");
  CALL("POSIX", "dup2");
  if (read(50, buf, 10) != 10) die("read 50");
  CALL("POSIX", "read");
  IO("read", 1100, 10);
  do_close(50);
  do_close(fd);
}

/* stdio: stream offsets from the text written. */
static void stdio_work(void) {
  char p[PATH_MAX];
  FILE *f = fopen(in_dir("s.txt", p), "w+");
  CALL("stdio", "fopen");
  if (!f) die("fopen");
  OUT("map %d %s %d\nsmap %d %d\n", (int)getpid(), p, fileno(f), (int)getpid(), fileno(f));
  for (int i = 0; i < 5; i++) {
    if (fprintf(f, "line %d\n", i) != 7) die("fprintf");
    CALL("stdio", "fprintf");
    IO("fprintf", i * 7, 7);
  }
  if (fputs("hello\n", f) < 0) die("fputs");
  CALL("stdio", "fputs");
  IO("fputs", 35, 6);
  if (fwrite(buf, 1, 100, f) != 100) die("fwrite");
  CALL("stdio", "fwrite");
  IO("fwrite", 41, 100);
  if (fflush(f) != 0) die("fflush");
  CALL("stdio", "fflush");
  if (fseek(f, 0, SEEK_SET) != 0) die("fseek");
  CALL("stdio", "fseek");
  char line[64];
  for (int i = 0; i < 2; i++) {
    if (!fgets(line, sizeof line, f)) die("fgets");
    CALL("stdio", "fgets");
    IO("fgets", i * 7, 64); /* io/bytes of fgets: the buffer size asked */
  }
  int x = -1;
  if (fscanf(f, "line %d\n", &x) != 1 || x != 2) die("fscanf");
  CALL("stdio", "fscanf");
  IO("fscanf", 14, 7);
  if (ftell(f) != 21) die("ftell");
  CALL("stdio", "ftell");
  if (fread(buf, 1, 50, f) != 50) die("fread");
  CALL("stdio", "fread");
  IO("fread", 21, 50);
  if (fclose(f) != 0) die("fclose");
  CALL("stdio", "fclose");

  int fd = open_new("fd.txt");
  FILE *g = fdopen(fd, "w");
  CALL("stdio", "fdopen");
  if (!g) die("fdopen");
  OUT("smap %d %d\n", (int)getpid(), fd);
  if (fprintf(g, "%d\n", 42) != 3) die("fprintf g");
  CALL("stdio", "fprintf");
  IO("fprintf", 0, 3);
  if (fclose(g) != 0) die("fclose g");
  CALL("stdio", "fclose");
}

static void names(void) {
  char a[PATH_MAX], b[PATH_MAX];
  if (rename(in_dir("fd.txt", a), in_dir("fd2.txt", b)) < 0) die("rename");
  CALL("POSIX", "rename");
  if (mkdir(in_dir("sub", a), 0755) < 0) die("mkdir");
  CALL("POSIX", "mkdir");
  int fd = open_new("sub/gone");
  do_close(fd);
  if (unlink(in_dir("sub/gone", a)) < 0) die("unlink");
  CALL("POSIX", "unlink");
  errno = 0;
  if (open(in_dir("missing", a), O_RDONLY) >= 0 || errno != ENOENT) die("open missing");
  CALL("POSIX", "open");
  OUT("err %d open %d\n", (int)getpid(), ENOENT);
}

/* The MPI-IO hook: only the write inside enter/leave reports a receive. */
static void mpiio_hook(void) {
  char p[PATH_MAX];
  int fd = open_new("m.dat");
  siox_posix_hook_mpiio_enter();
  write_at(fd, 100, 0);
  siox_posix_hook_mpiio_leave();
  OUT("recv %d %s 0 100\n", (int)getpid(), in_dir("m.dat", p));
  write_at(fd, 50, 100);
  do_close(fd);
}

static void *thread_main(void *arg) {
  char name[32];
  snprintf(name, sizeof name, "thr%d.dat", (int)(long)arg);
  int fd = open_new(name);
  for (int i = 0; i < 20; i++) write_at(fd, 64, i * 64);
  do_close(fd);
  return NULL;
}

static void threads(void) {
  pthread_t t[2];
  for (long i = 0; i < 2; i++)
    if (pthread_create(&t[i], NULL, thread_main, (void *)i) != 0) die("pthread_create");
  for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
}

/* The child writes to an fd opened by the parent: its offset is shared. */
static void fork_and_exec(const char *self) {
  int fd = open_new("inherit.dat");
  write_at(fd, 100, 0);
  pid_t pid = fork();
  if (pid < 0) die("fork");
  if (pid == 0) {
    write_at(fd, 7, 100);
    int c = open_new("child.dat");
    for (int i = 0; i < 5; i++) write_at(c, 10, i * 10);
    do_close(c);
    execl(self, self, "--exec-child", dir, (char *)NULL);
    die("exec");
  }
  int status;
  if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
    die("child failed");
  write_at(fd, 3, 107);
  do_close(fd);
}

/* The exec'd image: stdio only. */
static int exec_child(void) {
  char p[PATH_MAX];
  FILE *f = fopen(in_dir("exec.txt", p), "w");
  CALL("stdio", "fopen");
  if (!f) die("fopen exec");
  OUT("map %d %s %d\nsmap %d %d\n", (int)getpid(), p, fileno(f), (int)getpid(), fileno(f));
  for (int i = 0; i < 3; i++) {
    if (fprintf(f, "exec %d\n", i) != 7) die("fprintf exec");
    CALL("stdio", "fprintf");
    IO("fprintf", i * 7, 7);
  }
  if (fclose(f) != 0) die("fclose exec");
  CALL("stdio", "fclose");
  return 0;
}

int main(int argc, char **argv) {
  for (size_t i = 0; i < sizeof buf; i++) buf[i] = (char)('a' + i % 26);
  if (argc == 3 && strcmp(argv[1], "--exec-child") == 0) {
    snprintf(dir, sizeof dir, "%s", argv[2]);
    return exec_child();
  }
  if (argc != 2) {
    dprintf(STDERR_FILENO, "usage: %s DIR\n", argv[0]);
    return 2;
  }
  snprintf(dir, sizeof dir, "%s", argv[1]);
  fd_writes();
  fd_reads();
  stdio_work();
  names();
  mpiio_hook();
  threads();
  fork_and_exec("/proc/self/exe");
  return 0;
}
