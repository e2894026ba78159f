/*
 * siox-daemon's client buffer bound (issue 9 part 5): 32 local connections
 * each announce a 15 MiB frame and send all but its last byte (before: the
 * daemon held 496 MB). With --memory-mb 128 the daemon's peak RSS must stay
 * under 128 MiB, the refusals must be logged, and a good client
 * must keep getting its activities to the (fake) server throughout.
 * Usage: test_daemon_limits PATH-TO-siox-daemon
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <siox/siox_ontology.h>

#include "cw_synth.h"
#include "fake_server.h"
#include "siox.pb-c.h"

#define MEMORY_MB 128
#define ATTACKERS 32
#define BIG_FRAME (15u << 20)
#define PER_FRAME 100

static int failures;
#define CHECK(cond, ...)                                   \
  do {                                                     \
    if (!(cond)) {                                         \
      fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
      fprintf(stderr, __VA_ARGS__);                        \
      fputc('\n', stderr);                                 \
      failures++;                                          \
    }                                                      \
  } while (0)

static char dir[64], sock[128], state[128], log_path[128];
static struct fake_server srv;

static pid_t start_daemon(const char *bin) {
  char server[64], mem[16];
  snprintf(server, sizeof server, "127.0.0.1:%d", srv.port);
  snprintf(mem, sizeof mem, "%d", MEMORY_MB);
  pid_t pid = fork();
  if (pid == 0) {
    int fd = open(log_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0)
      dup2(fd, 2), close(fd);
    execl(bin, bin, "--socket", sock, "--server", server, "--state-dir", state, "--batch-ms", "20", "--memory-mb", mem,
          "--auth", "none", (char *)NULL); /* the fake server checks no credential */
    _exit(127);
  }
  for (int i = 0; i < 500; i++) {
    int fd = synth_connect(sock);
    if (fd >= 0)
      return close(fd), pid;
    usleep(10000);
  }
  return -1;
}

static long status_kb(pid_t pid, const char *field) {
  char path[64], line[256];
  snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
  FILE *f = fopen(path, "r");
  long kb = -1;
  while (f && fgets(line, sizeof line, f))
    if (strncmp(line, field, strlen(field)) == 0)
      kb = atol(line + strlen(field));
  if (f)
    fclose(f);
  return kb;
}

static int log_has(const char *s) {
  char cmd[256];
  snprintf(cmd, sizeof cmd, "grep -q -- '%s' %s", s, log_path);
  return system(cmd) == 0;
}

static uint64_t stored(void) {
  pthread_mutex_lock(&srv.mu);
  uint64_t n = srv.activities_stored;
  pthread_mutex_unlock(&srv.mu);
  return n;
}

/* The good client sends one BATCH frame and waits until the server has it. */
static int good_fd;
static uint64_t good_aid = 1;
static void good_frame(const char *when) {
  struct synth_buf r = {0}, out = {0};
  if (good_aid == 1) { /* the daemon validates activities against the client's registrations */
    synth_node(&r, 1, "goodhost", "POSIX", "");
    synth_type(&r, 1, 1, "write");
  }
  for (int i = 0; i < PER_FRAME; i++, good_aid++) {
    struct siox_cw_attr at[1] = {{SIOX_ATTR_IO_BYTES, SIOX_VT_U64, {.u64 = 4096}}};
    synth_activity(&r, 1, good_aid, 0, 1000 + good_aid * 100, 1000 + good_aid * 100 + 50, 0, 1, at);
  }
  synth_batch(&out, 0, 1000 + good_aid * 100, 1700000000000000000ll + (int64_t)good_aid * 100, &r);
  CHECK(synth_write_all(good_fd, out.p, out.len) == 0, "good client write %s", when);
  synth_buf_free(&r);
  synth_buf_free(&out);
  for (int i = 0; i < 1000 && stored() < good_aid - 1; i++)
    usleep(10000);
  CHECK(stored() == good_aid - 1, "%lu of %lu good activities stored %s", (unsigned long)stored(),
        (unsigned long)(good_aid - 1), when);
}

/* An attacker: a HELLO header announcing BIG_FRAME bytes, then all but one. */
static int attack(void) {
  int fd = synth_connect(sock);
  if (fd < 0)
    return fd;
  struct timeval tv = {2, 0};
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  struct siox_cw_frame_hdr h = {SIOX_CW_MAGIC, SIOX_CW_VERSION, SIOX_CW_HELLO, BIG_FRAME, 0};
  static uint8_t zero[1 << 20];
  if (send(fd, &h, sizeof h, MSG_NOSIGNAL) < 0)
    return fd;
  for (size_t sent = 0; sent + 1 < BIG_FRAME;) {
    size_t n = BIG_FRAME - 1 - sent < sizeof zero ? BIG_FRAME - 1 - sent : sizeof zero;
    ssize_t w = send(fd, zero, n, MSG_NOSIGNAL);
    if (w <= 0)
      break; /* refused and closed, or not read (waiting for budget) */
    sent += (size_t)w;
  }
  return fd;
}

int main(int argc, char **argv) {
  if (argc < 2)
    return fprintf(stderr, "usage: %s SIOX_DAEMON\n", argv[0]), 2;
  snprintf(dir, sizeof dir, "/tmp/siox-dlim-XXXXXX");
  if (!mkdtemp(dir))
    return perror("mkdtemp"), 1;
  snprintf(sock, sizeof sock, "%s/d.sock", dir);
  snprintf(state, sizeof state, "%s/state", dir);
  snprintf(log_path, sizeof log_path, "%s/daemon.log", dir);
  if (fake_server_start(&srv, true, NULL, NULL) != 0)
    return fprintf(stderr, "fake server failed\n"), 1;
  pid_t pid = start_daemon(argv[1]);
  CHECK(pid > 0, "daemon did not start");
  if (pid <= 0)
    return 1;
  good_fd = synth_connect(sock);
  struct synth_buf hello = {0};
  synth_hello(&hello, 1, 0, 0, 0, "/bin/good", "good", "job");
  synth_write_all(good_fd, hello.p, hello.len);
  synth_buf_free(&hello);
  good_frame("before the attack");

  int fds[ATTACKERS];
  for (int i = 0; i < ATTACKERS; i++) {
    fds[i] = attack();
    if (i % 8 == 7)
      good_frame("during the attack");
  }
  good_frame("after the attack");
  long hwm = status_kb(pid, "VmHWM:");
  printf("daemon VmHWM %ld kB (bound %d MiB)\n", hwm, MEMORY_MB);
  CHECK(hwm > 0 && hwm < MEMORY_MB * 1024L, "daemon peak RSS %ld kB above --memory-mb %d", hwm, MEMORY_MB);
  CHECK(log_has("client buffers at"), "the bound is logged");
  for (int i = 0; i < ATTACKERS; i++)
    if (fds[i] >= 0)
      close(fds[i]);
  good_frame("after the attackers left");
  close(good_fd);
  kill(pid, SIGTERM);
  int st = 0;
  waitpid(pid, &st, 0);
  CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "daemon exit status %d", st);
  fake_server_stop(&srv);
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  if (failures == 0 && system(cmd) != 0)
    fprintf(stderr, "cannot remove %s\n", dir);
  printf("test_daemon_limits: %s\n", failures ? "FAILED" : "ok");
  return failures ? 1 : 0;
}
