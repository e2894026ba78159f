/*
 * A record the server would refuse costs only itself (issue 9, part 1),
 * through the real siox-daemon and siox-server:
 *  - poison pill: client A sends good activities among three the server
 *    would refuse (aid >= 2^32, an unknown attribute id, a type A never
 *    registered), client B only good ones. Every good activity of both is
 *    stored; the three are dropped by the daemon, counted (daemon status,
 *    and A's client_stats.daemon_dropped_invalid in the warehouse) and logged
 *    with A's pid and uid.
 *  - quarantine: a batch the server rejects can no longer come from a
 *    client (the daemon's validation stops it), so the test writes one
 *    straight into the daemon's spool, between two good ones. The daemon
 *    quarantines it (<state>/quarantine/2.sxb + 2.reason), counts it, skips
 *    it at the server (quarantined_batches, with its activity count), and
 *    the batch after it is stored.
 * argv[1]: siox-server, argv[2]: siox-daemon.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <siox/siox_ontology.h>

#include "cw_synth.h"
#include "daemon.h"
#include "server_harness.h"
#include "siox.pb-c.h"

#define GOOD_A 60
#define GOOD_B 40
#define SPOOLED 10 /* activities per crafted spool batch */

static char state[400], sock[400], dlog[400];

/* Writes a spool file as the daemon would (spool.c's format). */
static int spool_batch(uint64_t seq, const struct siox_block *b) {
  uint8_t *buf;
  size_t len, raw;
  if (siox_block_encode(b, &buf, &len, &raw) != 0) return -1;
  struct spool_hdr h = {SPOOL_MAGIC, SPOOL_VERSION, seq, (uint32_t)b->n_activities, (uint32_t)raw, (uint32_t)len, 0};
  char path[512];
  snprintf(path, sizeof path, "%s/spool/%llu.sxb", state, (unsigned long long)seq);
  FILE *f = fopen(path, "w");
  int rc = f && fwrite(&h, sizeof h, 1, f) == 1 && fwrite(buf, len, 1, f) == 1 ? 0 : -1;
  if (f && fclose(f) != 0) rc = -1;
  free(buf);
  return rc;
}

/* Spool: 1 good, 2 with an aid the server refuses, 3 good. */
static void craft_spool(void) {
  char dir[450];
  snprintf(dir, sizeof dir, "%s/spool", state);
  CHECK(mkdir(state, 0700) == 0 && mkdir(dir, 0700) == 0, "mkdir %s", dir);
  for (uint64_t seq = 1; seq <= 3; seq++) {
    struct siox_block b;
    siox_block_init(&b);
    block_spmd(&b, 900 + (uint32_t)seq, seq, "spoolhost", 1, SPOOLED, 1700000000000000000ll);
    if (seq == 2) b.activities[3].aid = 1ull << 32;
    CHECK(spool_batch(seq, &b) == 0, "writing spool batch %llu", (unsigned long long)seq);
    siox_block_free(&b);
  }
}

static pid_t start_daemon(int port) {
  char server[64];
  snprintf(server, sizeof server, "127.0.0.1:%d", port);
  pid_t pid = fork();
  if (pid == 0) {
    int fd = open(dlog, O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd >= 0) dup2(fd, 2), close(fd);
    execl(getenv("SIOX_TEST_DAEMON"), "siox-daemon", "--socket", sock, "--server", server, "--state-dir", state,
          "--batch-activities", "50", "--batch-ms", "20", "--munge-socket", harness_munge_socket, (char *)NULL);
    _exit(127);
  }
  for (int i = 0; i < 500; i++) {
    int fd = synth_connect(sock);
    if (fd >= 0) return close(fd), pid;
    usleep(10000);
  }
  return -1;
}

static int client_open(uint64_t nonce) {
  int fd = synth_connect(sock);
  if (fd < 0) return fd;
  struct synth_buf b = {0}, r = {0};
  synth_hello(&b, nonce, 0, 0, 0, "/bin/poison-test", "poison-test", "job-p");
  synth_node(&r, 1, "clienthost", "POSIX", "");
  synth_type(&r, 1, 1, "write");
  synth_batch(&b, 0, 0, 0, &r);
  synth_write_all(fd, b.p, b.len);
  synth_buf_free(&b);
  synth_buf_free(&r);
  return fd;
}

static void activity(struct synth_buf *r, uint32_t type, uint64_t aid, uint32_t attr) {
  struct siox_cw_attr at[2] = {{SIOX_ATTR_IO_OFFSET, SIOX_VT_U64, {.u64 = aid * 4096}}, {attr, SIOX_VT_U64, {.u64 = 4096}}};
  uint64_t t = 1700000000000000000ull + aid * 1000;
  synth_activity(r, type, aid, 0, t, t + 500, 0, 2, at);
}

/* good activities (aids 1..good) with the three poison records among them
 * (when poison), in frames of 20, then STATS. */
static void client_send(int fd, int good, int poison) {
  struct synth_buf r = {0}, out = {0};
  for (int i = 1; i <= good; i++) {
    activity(&r, 1, (uint64_t)i, SIOX_ATTR_IO_BYTES);
    if (poison && i == 10) activity(&r, 1, 1ull << 32, SIOX_ATTR_IO_BYTES); /* aid beyond 32 bits */
    if (poison && i == 25) activity(&r, 1, 1000, 9999);                     /* unknown attribute */
    if (poison && i == 40) activity(&r, 7, 1001, SIOX_ATTR_IO_BYTES);       /* type never registered */
    if (i % 20 == 0 || i == good) {
      synth_batch(&out, 1, 0, 0, &r);
      synth_buf_free(&r);
      r = (struct synth_buf){0};
    }
  }
  struct siox_cw_stats st = {(uint64_t)good + (poison ? 3 : 0), (uint64_t)good, 0, 0};
  synth_frame(&out, SIOX_CW_STATS, &st, sizeof st);
  CHECK(synth_write_all(fd, out.p, out.len) == 0, "client write");
  synth_buf_free(&out);
}

static int64_t daemon_counter(const char *name) {
  int fd = synth_connect(sock);
  if (fd < 0) return -1;
  struct siox_cw_frame_hdr h = {SIOX_CW_MAGIC, SIOX_CW_VERSION, SIOX_CW_STATUS, 0, 0};
  synth_write_all(fd, &h, sizeof h);
  uint8_t buf[8192];
  size_t n = 0;
  ssize_t k;
  while ((k = read(fd, buf + n, sizeof buf - n)) > 0) n += (size_t)k;
  close(fd);
  int64_t v = -1;
  Siox__StatusReply *sr = n > sizeof h ? siox__status_reply__unpack(NULL, n - sizeof h, buf + sizeof h) : NULL;
  for (size_t i = 0; sr && i < sr->n_counters; i++)
    if (strcmp(sr->counters[i]->name, name) == 0) v = sr->counters[i]->value;
  siox__status_reply__free_unpacked(sr, NULL);
  return v;
}

static int file_has(const char *path, const char *s) {
  char buf[65536];
  FILE *f = fopen(path, "r");
  size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
  if (f) fclose(f);
  buf[n] = '\0';
  return strstr(buf, s) != NULL;
}

int main(int argc, char **argv) {
  struct harness h;
  if (argc < 3) return fprintf(stderr, "usage: %s SIOX_SERVER SIOX_DAEMON\n", argv[0]), 2;
  setenv("SIOX_TEST_DAEMON", argv[2], 1);
  if (harness_setup(&h, argc, argv, NULL, NULL) != 0) return 1;
  snprintf(state, sizeof state, "%s/daemon", h.dir);
  snprintf(sock, sizeof sock, "%s/d.sock", h.dir);
  snprintf(dlog, sizeof dlog, "%s/daemon.log", h.dir);
  craft_spool();
  pid_t d = start_daemon(h.port);
  CHECK(d > 0, "daemon did not start");
  PGconn *db = harness_db(&h);
  CHECK(db != NULL, "warehouse");
  if (d > 0 && db) {
    int a = client_open(11), b = client_open(12);
    CHECK(a >= 0 && b >= 0, "clients connect");
    client_send(a, GOOD_A, 1);
    client_send(b, GOOD_B, 0);
    long long want = GOOD_A + GOOD_B + 2 * SPOOLED, n = 0;
    for (int i = 0; i < 600 && (n = harness_scalar(db, "SELECT count(*) FROM activities")) < want; i++) usleep(100000);
    usleep(500000); /* nothing more may arrive */
    n = harness_scalar(db, "SELECT count(*) FROM activities");
    CHECK(n == want, "stored %lld activities, want %lld (A %d, B %d, spool batches 1 and 3)", n, want, GOOD_A, GOOD_B);
    CHECK(harness_scalar(db, "SELECT count(*) FROM activities a JOIN processes p USING (proc_id) WHERE p.nonce = 11") ==
              GOOD_A, "every good activity of the poisoning client stored");
    CHECK(harness_scalar(db, "SELECT count(*) FROM activities a JOIN processes p USING (proc_id) WHERE p.nonce = 12") ==
              GOOD_B, "every activity of the other client stored");
    /* The Stats frame follows the BATCH frames, so it carries all three. */
    long long dv = -1;
    for (int i = 0; i < 100; i++) {
      dv = harness_scalar(db, "SELECT daemon_dropped_invalid FROM client_stats JOIN processes USING (proc_id) WHERE nonce = 11");
      if (dv == 3) break;
      usleep(100000);
    }
    CHECK(dv == 3, "A's client_stats.daemon_dropped_invalid %lld, want 3", dv);
    CHECK(harness_scalar(db, "SELECT daemon_dropped_invalid FROM client_stats JOIN processes USING (proc_id) WHERE nonce = 12") == 0,
          "B dropped nothing");
    CHECK(daemon_counter("activities_dropped_validation") == 3, "daemon counts 3 dropped activities");
    char who[64];
    snprintf(who, sizeof who, "client pid %d uid %u: record", (int)getpid(), (unsigned)getuid());
    CHECK(file_has(dlog, who) && file_has(dlog, "daemon_validation"), "drop logged with the client's pid and uid");

    char q[500];
    snprintf(q, sizeof q, "%s/quarantine/2.sxb", state);
    CHECK(access(q, F_OK) == 0, "batch 2 quarantined in %s", q);
    snprintf(q, sizeof q, "%s/quarantine/2.reason", state);
    CHECK(file_has(q, "32 bits"), "quarantine reason names the refused aid");
    CHECK(daemon_counter("batches_quarantined") == 1 && daemon_counter("activities_quarantined") == SPOOLED,
          "daemon counts the quarantined batch and its activities");
    CHECK(harness_scalar(db, "SELECT activities FROM quarantined_batches WHERE seq = 2 AND reason LIKE '%32 bits%'") ==
              SPOOLED, "the server records the skipped batch with its activities and reason");
    CHECK(harness_scalar(db, "SELECT count(*) FROM activities a JOIN processes p USING (proc_id) WHERE p.pid = 903") ==
              SPOOLED, "the batch after the quarantined one is stored");
    close(a), close(b);
  }
  if (d > 0) {
    int st = -1;
    kill(d, SIGTERM), waitpid(d, &st, 0);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "daemon exit status %d", st);
  }
  if (harness_failures) {
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "tail -n 30 %s >&2; tail -n 30 %s >&2", dlog, h.log);
    if (system(cmd) != 0) fprintf(stderr, "(no logs)\n");
  }
  PQfinish(db);
  return harness_finish(&h, "test_ingest_poison");
}
