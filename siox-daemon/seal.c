/*
 * Sealing off the loop. The open batch is taken at once (its block swapped
 * with a spare one, its seq given, a new journal file begun) and the loop
 * goes on reading clients into the next batch while libuv's thread pool
 * encodes the taken one (protobuf + lz4) and writes its spool file (tmp,
 * fdatasync, rename). Back on the loop the file enters the spool, the
 * batch's journal is unlinked and the uplink is offered the batch.
 *
 * Why: done on the loop, a seal of 65536 activities kept every client
 * unread for its whole wall time, 9-240 ms at load 20-28 (the encode
 * preempted, the fdatasync waiting for the disk), and a
 * client streaming ~50 MB/s of records fills its 4 MiB ring in ~80 ms and
 * then drops (counted) what it records (bench/bench_daemon_cpu.sh,
 * daemon_client_dropped_rounds). One seal at a time: the encoder and the
 * spare block are the pool's while one is busy, and a batch that fills
 * meanwhile is sealed right after it. A failed write keeps the taken batch
 * here (its journal too) and is retried on the batch timer, while new
 * client activities are discarded and counted (daemon_backpressure), as
 * when a seal on the loop failed.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "daemon.h"

static bool batch_empty(const struct batcher *b) { return b->block.n_processes == 0; }

/* Moves the open batch into d->sealing; the batcher starts the next one
 * with the spare block (its capacity kept from the seal before). */
static void take(struct daemon *d) {
  struct sealing *z = &d->sealing;
  struct batcher *bt = &d->batcher;
  /* Records of this batch held by the read in progress go to its journal
   * now: once next_seq moves on they would no longer be written. */
  journal_flush(d);
  struct siox_block open = bt->block;
  bt->block = z->block;
  z->block = open;
  z->sb = (struct spool_batch){.h = {.magic = SPOOL_MAGIC,
                                     .version = SPOOL_VERSION,
                                     .seq = d->spool.next_seq,
                                     .activities = (uint32_t)bt->activities}};
  batcher_reset(bt);
  d->spool.next_seq++;
  uv_timer_stop(&d->batch_timer);
  z->busy = true;
}

/* The pool's part: touches only z->block, z->sb, the encoder and the
 * spool's directory name, which the loop leaves alone while z->queued. */
static void seal_work(uv_work_t *w) {
  struct daemon *d = w->data;
  struct sealing *z = &d->sealing;
  size_t len, raw;
  spool_batch_free(&z->sb); /* a retry encodes again */
  z->rc = siox_block_encode_with(d->encoder, &z->block, &z->sb.block, &len, &raw);
  if (z->rc == 0) {
    z->sb.h.raw_bytes = (uint32_t)raw;
    z->sb.h.block_len = (uint32_t)len;
    z->rc = spool_write_file(&d->spool, &z->sb);
  }
}

static void seal_done(uv_work_t *w, int status) {
  struct daemon *d = w->data;
  struct sealing *z = &d->sealing;
  z->queued = false;
  int rc = status < 0 ? status : z->rc;
  if (rc == 0)
    rc = spool_commit(&d->spool, &z->sb);
  if (rc < 0) {
    /* Kept (and journaled): dropping it would lose data the clients
     * believe delivered. New activities are counted and discarded. */
    fprintf(stderr, "siox-daemon: sealing batch %" PRIu64 ": %s; will retry\n", z->sb.h.seq, strerror(-rc));
    d->spool_failed = true;
    daemon_backpressure(d);
    if (!d->closed)
      daemon_arm_batch_timer(d);
    return;
  }
  journal_sealed(d, z->sb.h.seq);
  d->ctr.batches_sealed++;
  d->spool_failed = false;
  if (d->uplink && !d->closed)
    uplink_offer(d->uplink, &z->sb);
  spool_batch_free(&z->sb);
  siox_block_reset(&z->block);
  z->busy = false;
  daemon_backpressure(d);
  bool again = z->again || d->stopping;
  z->again = false;
  if (d->closed)
    return;
  if (again)
    daemon_seal(d);
  else
    daemon_after_add(d); /* full meanwhile: seal; else the timer for what came */
}

static void queue(struct daemon *d) {
  struct sealing *z = &d->sealing;
  z->queued = true;
  z->work.data = d;
  if (uv_queue_work(d->loop, &z->work, seal_work, seal_done) < 0) { /* no pool: here, then */
    seal_work(&z->work);
    seal_done(&z->work, 0);
  }
}

int daemon_seal(struct daemon *d) {
  struct sealing *z = &d->sealing;
  if (z->busy) {
    z->again |= !batch_empty(&d->batcher);
    if (!z->queued) /* a failed one: retried first */
      queue(d);
    return 0;
  }
  if (batch_empty(&d->batcher))
    return 0;
  take(d);
  queue(d);
  return 0;
}

int daemon_seal_now(struct daemon *d) {
  struct sealing *z = &d->sealing;
  if (z->busy)
    return -EBUSY;
  if (batch_empty(&d->batcher))
    return 0;
  take(d);
  z->queued = true;
  z->work.data = d;
  seal_work(&z->work);
  seal_done(&z->work, 0);
  return z->busy ? (z->rc < 0 ? z->rc : -EIO) : 0;
}

bool daemon_seal_idle(const struct daemon *d) { return !d->sealing.busy && batch_empty(&d->batcher); }

void daemon_seal_free(struct daemon *d) {
  siox_block_free(&d->sealing.block);
  spool_batch_free(&d->sealing.sb);
}
