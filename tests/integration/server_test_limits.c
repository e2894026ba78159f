/*
 * Integration test: the server's memory stays under --memory-mb, and a good
 * daemon keeps storing, under the attacks of issue 9 part 5:
 *   - two lz4+protobuf bombs at once (263 KB each declaring 64 MiB of empty
 *     Process messages; before: 3.36 GB RSS each, 25 s CPU);
 *   - 16 unauthenticated connections each sending a 63 MiB Hello (1.04 GB);
 *   - 3M Pings whose Pongs are never read (728 MB);
 *   - 800 idle connections against a 600-fd limit (every new daemon and
 *     status query locked out, nothing logged);
 * then the idle unauthenticated connections are closed after the Hello
 * timeout. The server runs with RLIMIT_NOFILE 600 and --memory-mb 256; its
 * VmHWM is read from /proc at the end.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <lz4.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "server_harness.h"
#include "siox_frame.h"

#define T0 1700000000000000000LL
#define PER 500
#define MEMORY_MB 256
#define GOOD_ID 7

static struct harness h;
static int good_fd, good_seq;

/* One more batch from the good daemon, acknowledged and so stored. */
static void good_batch(const char *when) {
  struct siox_block b;
  siox_block_init(&b);
  block_spmd(&b, 1, 1, "good", 1 + (uint64_t)good_seq * PER, PER, T0 + good_seq * 1000000LL);
  good_seq++;
  CHECK(cli_batch(good_fd, GOOD_ID, (uint64_t)good_seq, 0, 0, &b) == 0, "good send %s", when);
  CHECK(cli_wait_ack(good_fd, (uint64_t)good_seq, 60000) == good_seq, "good ack %d %s", good_seq, when);
  siox_block_free(&b);
}

static void send_timeout(int fd, int ms) {
  struct timeval tv = {ms / 1000, (ms % 1000) * 1000};
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

/* Reads until the server closes the connection or timeout_ms pass; returns
 * 1 when an Error frame came and the connection was closed. */
static int rejected(int fd, int timeout_ms) {
  uint16_t type = 0;
  uint8_t *p = NULL;
  uint32_t len;
  int got_error = 0, rc;
  while ((rc = cli_recv(fd, &type, &p, &len, timeout_ms)) == 0) {
    got_error |= type == SIOX_FRAME_ERROR;
    free(p);
  }
  return got_error && rc == -1;
}

static void raw_header(uint8_t *hd, uint16_t type, uint32_t len) {
  uint32_t magic = htonl(SIOX_FRAME_MAGIC), l = htonl(len);
  uint16_t ver = htons(SIOX_FRAME_VERSION), ty = htons(type);
  memcpy(hd, &magic, 4), memcpy(hd + 4, &ver, 2), memcpy(hd + 6, &ty, 2), memcpy(hd + 8, &l, 4);
}

/* ---- the bomb --------------------------------------------------------------- */

static uint8_t *bomb;
static int bomb_len;
#define BOMB_RAW (64u << 20) - 4096

static void make_bomb(void) {
  uint8_t *raw = malloc(BOMB_RAW);
  for (size_t i = 0; i < BOMB_RAW; i += 2) raw[i] = 0x0a, raw[i + 1] = 0; /* processes = {} */
  bomb = malloc((size_t)LZ4_compressBound(BOMB_RAW));
  bomb_len = LZ4_compress_default((const char *)raw, (char *)bomb, BOMB_RAW, LZ4_compressBound(BOMB_RAW));
  free(raw);
  printf("bomb: %d bytes of lz4 declaring %u\n", bomb_len, (unsigned)BOMB_RAW);
}

static void *bomber(void *arg) {
  uint64_t id = (uint64_t)(uintptr_t)arg;
  int fd = cli_connect(h.port);
  CHECK(cli_hello(fd, id, "bomber", NULL) >= 0, "bomber hello");
  Siox__Batch m = SIOX__BATCH__INIT;
  m.daemon_id = id, m.seq = 1, m.activities = 1, m.raw_bytes = BOMB_RAW;
  m.block.data = bomb, m.block.len = (size_t)bomb_len;
  CHECK(cli_send(fd, SIOX_FRAME_BATCH, &m.base) == 0, "bomb sent");
  CHECK(rejected(fd, 60000), "bomb %llu refused", (unsigned long long)id);
  close(fd);
  return NULL;
}

static void bombs(void) {
  make_bomb();
  pthread_t t[2];
  for (uintptr_t i = 0; i < 2; i++) pthread_create(&t[i], NULL, bomber, (void *)(100 + i));
  good_batch("during the bombs");
  for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
  CHECK(harness_log_has(&h, "decode memory budget"), "bomb refused for its memory");
  free(bomb);
}

/* ---- unauthenticated buffers -------------------------------------------------- */

#define BIG_HELLO (63u << 20)

static void *big_hello(void *arg) {
  (void)arg;
  int fd = cli_connect(h.port);
  static uint8_t chunk[1 << 20];
  raw_header(chunk, SIOX_FRAME_HELLO, BIG_HELLO);
  send_timeout(fd, 5000);
  for (size_t sent = 0; sent < BIG_HELLO; sent += sizeof chunk)
    if (send(fd, chunk, sizeof chunk, MSG_NOSIGNAL) <= 0) break; /* refused and closed: expected */
  close(fd);
  return NULL;
}

static void unauth_buffers(void) {
  pthread_t t[16];
  for (int i = 0; i < 16; i++) pthread_create(&t[i], NULL, big_hello, NULL);
  good_batch("during the big Hellos");
  for (int i = 0; i < 16; i++) pthread_join(t[i], NULL);
  CHECK(harness_log_has(&h, "before Hello"), "big Hello refused");
}

/* ---- Ping flood ---------------------------------------------------------------- */

#define PINGS 3000000
#define PINGS_PER_SEND 100000

static void ping_flood(void) {
  Siox__Ping p = SIOX__PING__INIT;
  p.t1 = 1234567;
  size_t plen = protobuf_c_message_get_packed_size(&p.base), flen = SIOX_FRAME_HDR_LEN + plen;
  uint8_t *buf = malloc(flen * PINGS_PER_SEND);
  for (int i = 0; i < PINGS_PER_SEND; i++) {
    raw_header(buf + i * flen, SIOX_FRAME_PING, (uint32_t)plen);
    protobuf_c_message_pack(&p.base, buf + i * flen + SIOX_FRAME_HDR_LEN);
  }
  int fd = cli_connect(h.port);
  send_timeout(fd, 3000);
  long sent = 0;
  for (; sent < PINGS; sent += PINGS_PER_SEND)
    if (cli_send_raw(fd, buf, flen * PINGS_PER_SEND) != 0) break; /* the server stopped reading */
  printf("ping flood: %ld pings sent before the server stopped reading\n", sent);
  good_batch("during the ping flood");
  long rss = harness_server_kb(&h, "VmRSS:");
  CHECK(rss > 0 && rss < MEMORY_MB * 1024L, "RSS %ld kB during the ping flood", rss);
  close(fd);
  free(buf);
}

/* ---- fd exhaustion --------------------------------------------------------------- */

#define IDLE_CONNS 800

/* StatusRequest on a new connection, as `siox status` sends it. */
static int status_answers(void) {
  int fd = cli_connect(h.port);
  if (fd < 0) return 0;
  uint8_t hd[SIOX_FRAME_HDR_LEN];
  raw_header(hd, SIOX_FRAME_STATUS_REQUEST, 0);
  uint16_t type = 0;
  uint8_t *p = NULL;
  uint32_t len;
  int ok = cli_send_raw(fd, hd, sizeof hd) == 0 && cli_recv(fd, &type, &p, &len, 10000) == 0 &&
           type == SIOX_FRAME_STATUS_REPLY;
  free(p);
  close(fd);
  return ok;
}

static void fd_exhaustion(void) {
  static int idle[IDLE_CONNS];
  int opened = 0;
  for (int i = 0; i < IDLE_CONNS; i++)
    if ((idle[i] = cli_connect(h.port)) >= 0) opened++;
  usleep(500 * 1000); /* let the server accept them all */
  printf("fd exhaustion: %d idle connections opened\n", opened);
  CHECK(status_answers(), "status answers with %d idle connections", opened);
  struct siox_block b;
  siox_block_init(&b);
  block_spmd(&b, 2, 2, "newcomer", 1, PER, T0);
  CHECK(cli_send_block(h.port, 8, "newcomer", NULL, 1, &b) == 0, "a new daemon stores with %d idle connections",
        opened);
  siox_block_free(&b);
  good_batch("with idle connections");
  CHECK(harness_log_has(&h, "connection limit"), "the limit is logged");
  sleep(12); /* the Hello timeout (10 s) closes the rest */
  CHECK(harness_log_has(&h, "no Hello within"), "idle unauthenticated connections timed out");
  for (int i = 0; i < IDLE_CONNS; i++)
    if (idle[i] >= 0) close(idle[i]);
}

int main(int argc, char **argv) {
  char mem[16];
  snprintf(mem, sizeof mem, "%d", MEMORY_MB);
  const char *extra[] = {"--memory-mb", mem, NULL};
  harness_server_nofile = 600;
  if (harness_setup(&h, argc, argv, NULL, extra) != 0) return 1;
  good_fd = cli_connect(h.port);
  CHECK(cli_hello(good_fd, GOOD_ID, "good", NULL) == 0, "good hello");
  good_batch("at the start");
  bombs();
  unauth_buffers();
  ping_flood();
  fd_exhaustion();
  good_batch("at the end");
  long hwm = harness_server_kb(&h, "VmHWM:");
  printf("server VmHWM %ld kB (bound %d MiB)\n", hwm, MEMORY_MB);
  CHECK(hwm > 0 && hwm < MEMORY_MB * 1024L, "server peak RSS %ld kB above --memory-mb %d", hwm, MEMORY_MB);
  PGconn *c = harness_db(&h);
  CHECK(c && harness_scalar(c, "SELECT count(*) FROM activities") == (long long)(good_seq + 1) * PER,
        "every good activity stored (%d batches + the newcomer's)", good_seq);
  PQfinish(c);
  close(good_fd);
  return harness_finish(&h, "server_limits");
}
