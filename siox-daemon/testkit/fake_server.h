/*
 * Test kit, server side: a minimal siox-server stand-in on 127.0.0.1 for
 * daemon tests and bench_daemon. It speaks the daemon <-> server frames
 * (Hello/HelloReply, Batch/Ack, Ping/Pong), dedupes by batch seq as a real
 * server does, and can withhold acks or drop the connection on command.
 */
#ifndef SIOX_DAEMON_FAKE_SERVER_H
#define SIOX_DAEMON_FAKE_SERVER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "siox_block.h"

enum fake_mode {
  FAKE_ACK = 0,     /* store and acknowledge every batch */
  FAKE_SILENT = 1,  /* store, but send no ack (the ack is "lost") */
  FAKE_DISCARD = 2, /* neither store nor ack (server crashed before storing) */
};

struct fake_server;
/* Called under the server's lock for every stored batch, in seq order. */
typedef void (*fake_batch_fn)(void *ctx, uint64_t seq, const struct siox_block *b);

struct fake_server {
  int listen_fd, port;
  pthread_t thread;
  pthread_mutex_t mu;
  atomic_int mode;     /* enum fake_mode */
  atomic_int drop_now; /* set to close the current connection */
  atomic_int stop;
  bool decode;         /* decode blocks and call on_batch */
  fake_batch_fn on_batch;
  void *ctx;
  /* Results, under mu. */
  uint64_t committed_seq, batches_received, batches_dup, seq_gaps, decode_errors;
  uint64_t connections, activities_stored, activities_seen, wire_bytes, pings;
  uint64_t daemon_id;
};

/* Listens on 127.0.0.1 (port 0: any free port; s->port tells) and starts
 * the serving thread. Returns 0 or -errno. */
int fake_server_start(struct fake_server *s, bool decode, fake_batch_fn on_batch, void *ctx);
void fake_server_stop(struct fake_server *s); /* joins the thread */

#endif
