/*
 * siox-daemon end to end against a fake server: the real binary receives
 * synthesized client frames over its unix socket; the server withholds acks
 * and drops the connection mid-stream, and later the daemon is killed with
 * -9 while batches are unacknowledged. After each, every activity must reach
 * the server exactly once and in order (dedupe by seq, as a server does).
 * Last, the daemon is killed with -9 while its open batch holds activities
 * whose type the clients registered in an earlier, sealed batch: the
 * journal replay must validate them against those registrations (journaled
 * with the session), not drop them as naming an unknown type.
 * Usage: test_daemon_replay PATH-TO-siox-daemon
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <siox/siox_ontology.h>

#include "cw_synth.h"
#include "fake_server.h"
#include "siox.pb-c.h"

#define CLIENTS 2
#define PER_FRAME 20

static int failures;
#define CHECK(cond, ...)                                      \
  do {                                                        \
    if (!(cond)) {                                            \
      fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);    \
      fprintf(stderr, __VA_ARGS__);                           \
      fputc('\n', stderr);                                    \
      failures++;                                             \
    }                                                         \
  } while (0)

/* What the server stored, per client (by nonce 1..CLIENTS). */
struct seen {
  uint64_t next_aid[CLIENTS + 1];
  uint64_t count[CLIENTS + 1], order_errors, bad_proc;
};

static void on_batch(void *ctx, uint64_t seq, const struct siox_block *b) {
  (void)seq;
  struct seen *s = ctx;
  for (size_t i = 0; i < b->n_activities; i++) {
    uint64_t nonce = b->processes[b->activities[i].proc].nonce;
    if (nonce < 1 || nonce > CLIENTS) {
      s->bad_proc++;
      continue;
    }
    if (b->activities[i].aid != s->next_aid[nonce])
      s->order_errors++;
    s->next_aid[nonce] = b->activities[i].aid + 1;
    s->count[nonce]++;
  }
}

static char dir[64], sock[128], state[128], daemon_path[4096];
static struct fake_server srv;
static struct seen seen;

static const char *batch_activities = "50", *batch_ms = "20";

static pid_t start_daemon(void) {
  char server[64];
  snprintf(server, sizeof server, "127.0.0.1:%d", srv.port);
  pid_t pid = fork();
  if (pid == 0) {
    /* --auth none: the fake server checks no credential (the real one's
     * authentication is tested in server_auth and daemon_auth). */
    execl(daemon_path, daemon_path, "--socket", sock, "--server", server, "--state-dir", state, "--batch-activities",
          batch_activities, "--batch-ms", batch_ms, "--auth", "none", (char *)NULL);
    _exit(127);
  }
  for (int i = 0; i < 500; i++) { /* wait for the socket (up to 5 s) */
    int fd = synth_connect(sock);
    if (fd >= 0) {
      close(fd);
      return pid;
    }
    usleep(10000);
  }
  return -1;
}

static void sleep_ms(int ms) { usleep((useconds_t)ms * 1000); }

/* Waits up to 20 s for *v (read under the server lock) to reach want. */
static bool wait_for(uint64_t *v, uint64_t want) {
  for (int i = 0; i < 2000; i++) {
    pthread_mutex_lock(&srv.mu);
    uint64_t now = *v;
    pthread_mutex_unlock(&srv.mu);
    if (now >= want)
      return true;
    sleep_ms(10);
  }
  return false;
}

static int client_open(uint64_t nonce) {
  int fd = synth_connect(sock);
  if (fd < 0)
    return fd;
  struct synth_buf b = {0};
  synth_hello(&b, nonce, SIOX_CW_CLOCK_TSC, 1000, 1700000000000000000ll, "/bin/test", "test -x", "job1");
  /* The node and activity type the activities name, as libsiox-client
   * registers them on every connection (the daemon drops activities of a
   * type their client never registered, as the server would refuse them). */
  struct synth_buf r = {0};
  synth_node(&r, 1, "host1", "POSIX", "");
  synth_type(&r, 1, 1, "write");
  synth_batch(&b, 0, 1000, 1700000000000000000ll, &r);
  synth_buf_free(&r);
  synth_write_all(fd, b.p, b.len);
  synth_buf_free(&b);
  return fd;
}

/* Sends `frames` BATCH frames of PER_FRAME activities, aids from *aid on. */
static void client_send(int fd, uint64_t *aid, int frames) {
  for (int f = 0; f < frames; f++) {
    struct synth_buf r = {0}, out = {0};
    for (int i = 0; i < PER_FRAME; i++, (*aid)++) {
      struct siox_cw_attr at[2] = {{SIOX_ATTR_IO_OFFSET, SIOX_VT_U64, {.u64 = *aid * 4096}},
                                   {SIOX_ATTR_IO_BYTES, SIOX_VT_U64, {.u64 = 4096}}};
      synth_activity(&r, 1, *aid, 0, 1000 + *aid * 100, 1000 + *aid * 100 + 50, 0, 2, at);
    }
    synth_batch(&out, 0, 1000 + *aid * 100, 1700000000000000000ll + (int64_t)*aid * 33, &r);
    CHECK(synth_write_all(fd, out.p, out.len) == 0, "client write failed");
    synth_buf_free(&r);
    synth_buf_free(&out);
  }
}

/* Reads one counter from the daemon's StatusReply; -1 when unavailable. */
static int64_t status_counter(const char *name) {
  int fd = synth_connect(sock);
  if (fd < 0)
    return -1;
  struct siox_cw_frame_hdr h = {SIOX_CW_MAGIC, SIOX_CW_VERSION, SIOX_CW_STATUS, 0, 0};
  synth_write_all(fd, &h, sizeof h);
  uint8_t buf[4096];
  size_t n = 0;
  ssize_t r;
  while ((r = read(fd, buf + n, sizeof buf - n)) > 0)
    n += (size_t)r;
  close(fd);
  int64_t v = -1;
  if (n < sizeof h)
    return -1;
  Siox__StatusReply *sr = siox__status_reply__unpack(NULL, n - sizeof h, buf + sizeof h);
  for (size_t i = 0; sr && i < sr->n_counters; i++)
    if (strcmp(sr->counters[i]->name, name) == 0)
      v = sr->counters[i]->value;
  siox__status_reply__free_unpacked(sr, NULL);
  return v;
}

static void check_all_stored(uint64_t per_client) {
  CHECK(wait_for(&srv.activities_stored, per_client * CLIENTS), "server stored %lu of %lu activities",
        (unsigned long)srv.activities_stored, (unsigned long)(per_client * CLIENTS));
  pthread_mutex_lock(&srv.mu);
  for (int c = 1; c <= CLIENTS; c++)
    CHECK(seen.count[c] == per_client, "client %d: %lu activities stored, want %lu", c, (unsigned long)seen.count[c],
          (unsigned long)per_client);
  CHECK(seen.order_errors == 0, "%lu activities out of order or duplicated", (unsigned long)seen.order_errors);
  CHECK(srv.seq_gaps == 0, "%lu seq gaps", (unsigned long)srv.seq_gaps);
  CHECK(srv.decode_errors == 0, "%lu undecodable batches", (unsigned long)srv.decode_errors);
  pthread_mutex_unlock(&srv.mu);
}

/* Phase 1: acks withheld (first stored silently, then discarded), the
 * connection dropped mid-stream, then acks resumed. */
static void phase_drop(int *fds, uint64_t *aid) {
  atomic_store(&srv.mode, FAKE_SILENT);
  for (int c = 0; c < CLIENTS; c++)
    client_send(fds[c], &aid[c], 5);
  CHECK(wait_for(&srv.batches_received, 2), "server received no batches");
  atomic_store(&srv.mode, FAKE_DISCARD);
  for (int c = 0; c < CLIENTS; c++)
    client_send(fds[c], &aid[c], 5);
  sleep_ms(100);
  /* The server "restarts": it loses the discarded batches with the
   * connection, and acks again from the next connection on. */
  atomic_store(&srv.drop_now, 1);
  for (int c = 0; c < CLIENTS; c++)
    client_send(fds[c], &aid[c], 3);
  for (int i = 0; i < 500 && atomic_load(&srv.drop_now); i++)
    sleep_ms(10);
  atomic_store(&srv.mode, FAKE_ACK);
  for (int c = 0; c < CLIENTS; c++)
    client_send(fds[c], &aid[c], 2);
  check_all_stored(aid[0] - 1);
  CHECK(srv.connections >= 2, "daemon did not reconnect");
}

/* A client that breaks the protocol is dropped; the others carry on. */
static void phase_bad_client(void) {
  int fd = synth_connect(sock);
  struct siox_cw_frame_hdr h = {0xdeadbeef, SIOX_CW_VERSION, SIOX_CW_HELLO, 0, 0};
  synth_write_all(fd, &h, sizeof h);
  char c;
  CHECK(read(fd, &c, 1) == 0, "daemon kept a client with a bad magic");
  close(fd);
  CHECK(status_counter("bad_frames") == 1, "bad_frames is not 1");
}

/* Phase 2: batches spooled and unacknowledged when the daemon dies by
 * SIGKILL are replayed by the next daemon on the same state dir. */
static pid_t phase_kill(pid_t pid, int *fds, uint64_t *aid) {
  uint64_t seen_before = srv.activities_seen;
  atomic_store(&srv.mode, FAKE_DISCARD);
  for (int c = 0; c < CLIENTS; c++)
    client_send(fds[c], &aid[c], 10);
  CHECK(wait_for(&srv.activities_seen, seen_before + 10 * PER_FRAME * CLIENTS), "batches never left the daemon");
  kill(pid, SIGKILL);
  waitpid(pid, NULL, 0);
  for (int c = 0; c < CLIENTS; c++)
    close(fds[c]);
  atomic_store(&srv.mode, FAKE_ACK);
  pid = start_daemon();
  CHECK(pid > 0, "daemon did not restart");
  check_all_stored(aid[0] - 1);
  return pid;
}

/* Waits up to 5 s for the daemon to have received `want` activities. */
static bool wait_received(int64_t want) {
  int64_t got = -1;
  for (int i = 0; i < 500 && (got = status_counter("activities_received")) < want; i++)
    sleep_ms(10);
  if (got != want)
    fprintf(stderr, "daemon received %lld activities, want %lld\n", (long long)got, (long long)want);
  return got == want;
}

/* Phase 3: a new session per client registers, fills one batch (sealed at
 * --batch-activities) and leaves one frame in the open batch (--batch-ms
 * far away); kill -9; the next daemon replays the journal. */
static pid_t phase_journal(pid_t pid, uint64_t *aid) {
  kill(pid, SIGTERM);
  waitpid(pid, NULL, 0);
  batch_activities = "80"; /* = 2 frames of each client */
  batch_ms = "600000";
  pid = start_daemon();
  CHECK(pid > 0, "daemon did not restart");
  int fds[CLIENTS];
  for (int c = 0; c < CLIENTS; c++) {
    fds[c] = client_open((uint64_t)c + 1);
    client_send(fds[c], &aid[c], 2); /* sealed, with the registrations */
  }
  CHECK(wait_received(2 * PER_FRAME * CLIENTS), "daemon did not take the first frames");
  for (int c = 0; c < CLIENTS; c++)
    client_send(fds[c], &aid[c], 1); /* open, journaled */
  CHECK(wait_received(3 * PER_FRAME * CLIENTS), "daemon did not take the last frames");
  kill(pid, SIGKILL);
  waitpid(pid, NULL, 0);
  for (int c = 0; c < CLIENTS; c++)
    close(fds[c]);
  pid = start_daemon();
  CHECK(pid > 0, "daemon did not restart after kill -9");
  check_all_stored(aid[0] - 1);
  return pid;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s PATH-TO-siox-daemon\n", argv[0]);
    return 2;
  }
  snprintf(daemon_path, sizeof daemon_path, "%s", argv[1]);
  snprintf(dir, sizeof dir, "/tmp/siox-daemon-it-XXXXXX");
  if (!mkdtemp(dir))
    return 1;
  snprintf(sock, sizeof sock, "%s/d.sock", dir);
  snprintf(state, sizeof state, "%s/state", dir);
  for (int c = 1; c <= CLIENTS; c++)
    seen.next_aid[c] = 1;
  if (fake_server_start(&srv, true, on_batch, &seen) < 0)
    return 1;
  pid_t pid = start_daemon();
  CHECK(pid > 0, "daemon did not start");
  int fds[CLIENTS];
  uint64_t aid[CLIENTS];
  for (int c = 0; c < CLIENTS; c++) {
    fds[c] = client_open((uint64_t)c + 1);
    aid[c] = 1;
  }
  if (pid > 0 && fds[0] >= 0) {
    phase_drop(fds, aid);
    phase_bad_client();
    CHECK(status_counter("activities_received") == (int64_t)(2 * (aid[0] - 1)), "activities_received wrong");
    pid = phase_kill(pid, fds, aid);
    if (pid > 0)
      pid = phase_journal(pid, aid);
  }
  int st = -1;
  if (pid > 0) {
    kill(pid, SIGTERM);
    waitpid(pid, &st, 0);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "daemon did not exit 0 on SIGTERM (status %d)", st);
  }
  fake_server_stop(&srv);
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0)
    failures++;
  printf("%s: %d failure(s)\n", failures ? "FAIL" : "PASS", failures);
  return failures ? 1 : 0;
}
