/*
 * Integration test (b): malformed input is rejected per connection. Garbage,
 * a truncated frame, an oversized length, a wrong version, an undecodable
 * Batch, an undecodable block and a batch with an unknown attribute id each
 * get an Error and a closed connection with the reason in the server log,
 * while a good daemon on a parallel connection keeps getting its batches
 * acknowledged and stored.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "server_harness.h"
#include "siox/siox_ontology.h"
#include "siox_frame.h"

#define T0 1700000000000000000LL
#define PER 500

/* Reads until the server closes; returns 1 if an Error frame came first. */
static int rejected(int fd) {
  uint16_t type = 0;
  uint8_t *p = NULL;
  uint32_t len;
  int got_error = 0;
  while (cli_recv(fd, &type, &p, &len, 20000) == 0) {
    got_error |= type == SIOX_FRAME_ERROR;
    free(p);
  }
  char c;
  int closed = recv(fd, &c, 1, 0) == 0;
  close(fd);
  return got_error && closed;
}

static void raw_header(uint8_t *h, uint32_t magic, uint16_t ver, uint16_t type, uint32_t len) {
  magic = htonl(magic), ver = htons(ver), type = htons(type), len = htonl(len);
  memcpy(h, &magic, 4), memcpy(h + 4, &ver, 2), memcpy(h + 6, &type, 2), memcpy(h + 8, &len, 4);
}

static int good_seq;
static void good_batch(int fd) {
  struct siox_block b;
  siox_block_init(&b);
  block_spmd(&b, 1, 1, "good", 1 + (uint64_t)good_seq * PER, PER, T0 + good_seq * 1000000LL);
  good_seq++;
  CHECK(cli_batch(fd, 7, (uint64_t)good_seq, 0, 0, &b) == 0, "good send");
  CHECK(cli_wait_ack(fd, (uint64_t)good_seq, 60000) == good_seq, "good ack %d", good_seq);
  siox_block_free(&b);
}

static void bad_batch(int port, const char *what, uint8_t *block, size_t len, uint32_t raw, uint32_t nact) {
  int fd = cli_connect(port);
  CHECK(cli_hello(fd, 9, "bad", NULL) >= 0, "bad hello");
  Siox__Batch m = SIOX__BATCH__INIT;
  m.daemon_id = 9, m.seq = 1, m.activities = nact, m.raw_bytes = raw;
  m.block.data = block, m.block.len = len;
  cli_send(fd, SIOX_FRAME_BATCH, &m.base);
  CHECK(rejected(fd), "%s rejected", what);
}

static void unknown_attr(int port) {
  struct siox_block b;
  siox_block_init(&b);
  block_spmd(&b, 2, 2, "bad", 1, 10, T0);
  b.attrs[3].attr = 9999;
  uint8_t *out;
  size_t out_len, raw;
  CHECK(siox_block_encode(&b, &out, &out_len, &raw) == 0, "encode");
  bad_batch(port, "unknown attribute", out, out_len, (uint32_t)raw, 10);
  free(out);
  siox_block_free(&b);
}

int main(int argc, char **argv) {
  struct harness h;
  if (harness_setup(&h, argc, argv, NULL, NULL) != 0) return 1;
  int good = cli_connect(h.port);
  CHECK(cli_hello(good, 7, "good", NULL) == 0, "good hello");
  good_batch(good);

  int fd = cli_connect(h.port);
  cli_send_raw(fd, "GET / HTTP/1.1\r\nHost: x\r\n\r\n", 27);
  CHECK(rejected(fd), "garbage");
  good_batch(good);

  uint8_t hdr[SIOX_FRAME_HDR_LEN + 50];
  memset(hdr, 0, sizeof hdr);
  fd = cli_connect(h.port);
  raw_header(hdr, SIOX_FRAME_MAGIC, SIOX_FRAME_VERSION, SIOX_FRAME_PING, 100);
  cli_send_raw(fd, hdr, sizeof hdr);
  shutdown(fd, SHUT_WR);
  CHECK(rejected(fd), "truncated");
  good_batch(good);

  fd = cli_connect(h.port);
  raw_header(hdr, SIOX_FRAME_MAGIC, SIOX_FRAME_VERSION, SIOX_FRAME_BATCH, SIOX_FRAME_MAX_PAYLOAD + 1);
  cli_send_raw(fd, hdr, SIOX_FRAME_HDR_LEN);
  CHECK(rejected(fd), "oversized");

  fd = cli_connect(h.port);
  raw_header(hdr, SIOX_FRAME_MAGIC, SIOX_FRAME_VERSION + 1, SIOX_FRAME_HELLO, 0);
  cli_send_raw(fd, hdr, SIOX_FRAME_HDR_LEN);
  CHECK(rejected(fd), "wrong version");
  good_batch(good);

  fd = cli_connect(h.port);
  CHECK(cli_hello(fd, 9, "bad", NULL) >= 0, "hello");
  raw_header(hdr, SIOX_FRAME_MAGIC, SIOX_FRAME_VERSION, SIOX_FRAME_BATCH, 8);
  memcpy(hdr + SIOX_FRAME_HDR_LEN, "\xff\xff\xff\xff\xff\xff\xff\xff", 8);
  cli_send_raw(fd, hdr, SIOX_FRAME_HDR_LEN + 8);
  CHECK(rejected(fd), "undecodable Batch");

  uint8_t junk[64];
  for (size_t i = 0; i < sizeof junk; i++) junk[i] = (uint8_t)(i * 37 + 11);
  bad_batch(h.port, "undecodable block", junk, sizeof junk, 4096, 1);
  good_batch(good);
  unknown_attr(h.port);
  good_batch(good);

  CHECK(harness_log_has(&h, "bad frame magic"), "garbage logged");
  CHECK(harness_log_has(&h, "truncated frame"), "truncation logged");
  CHECK(harness_log_has(&h, "too large"), "oversize logged");
  CHECK(harness_log_has(&h, "unsupported frame version"), "version logged");
  CHECK(harness_log_has(&h, "undecodable Batch"), "bad protobuf logged");
  CHECK(harness_log_has(&h, "undecodable block"), "bad block logged");
  CHECK(harness_log_has(&h, "unknown attribute id 9999"), "unknown attribute logged");
  PGconn *c = harness_db(&h);
  CHECK(c && harness_scalar(c, "SELECT count(*) FROM activities") == good_seq * PER, "only good rows stored");
  CHECK(c && harness_scalar(c, "SELECT count(*) FROM daemons WHERE daemon_id = 9 AND acked_seq > 0") == 0, "bad not acked");
  PQfinish(c);
  close(good);
  return harness_finish(&h, "server_badinput");
}
