/*
 * The daemon: wires listener, sessions, batcher, spool and uplink together
 * on one libuv loop. It decides when the open batch is sealed (size or age),
 * has client activities discarded and counted while the spool is full, and
 * runs the orderly shutdown: seal, spool, flush to the server for up to
 * ~2 s, exit.
 */
#include <errno.h>
#include <signal.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"

#define STOP_FLUSH_MS 2000
#define STOP_POLL_MS 20

/* ---------------------------------------------------------------------------
 * Sealing and backpressure
 * ------------------------------------------------------------------------- */
void daemon_backpressure(struct daemon *d) {
  bool full = spool_full(&d->spool) || d->spool_failed;
  if (full == d->reading_paused)
    return;
  d->reading_paused = full;
  /* Clients are still read: their activities are discarded and counted
   * (loss.c), their counters kept, so the loss is reported. */
  fprintf(stderr, "siox-daemon: %s client activities (spool %" PRIu64 " of %" PRIu64 " bytes%s)\n",
          full ? "spool full: counting and discarding" : "spool has room: accepting", d->spool.bytes,
          d->spool.max_bytes, d->spool_failed ? ", write failed" : "");
}

static void on_batch_timer(uv_timer_t *t) {
  struct daemon *d = t->data;
  /* A full spool takes no batch: the counters and registrations wait in
   * the open one (journaled) until acks make room. A failed write retries. */
  if (spool_full(&d->spool) && !d->spool_failed && !d->stopping) {
    uv_timer_start(&d->batch_timer, on_batch_timer, d->cfg.batch_ms, 0);
    return;
  }
  daemon_seal(d);
}

void daemon_arm_batch_timer(struct daemon *d) {
  uv_timer_start(&d->batch_timer, on_batch_timer, d->cfg.batch_ms, 0);
}

void daemon_after_add(struct daemon *d) {
  if (d->batcher.activities >= d->cfg.batch_activities) {
    daemon_seal(d);
    return;
  }
  /* The timer starts with the batch's first record, so no record waits
   * longer than --batch-ms to be sealed. */
  if (d->batcher.block.n_processes != 0 && !uv_is_active((uv_handle_t *)&d->batch_timer))
    daemon_arm_batch_timer(d);
}

/* ---------------------------------------------------------------------------
 * Shutdown
 * ------------------------------------------------------------------------- */
static void close_all(struct daemon *d) {
  d->closed = true; /* a seal still in the pool ends without timers or uplink */
  uv_close((uv_handle_t *)&d->batch_timer, NULL);
  uv_close((uv_handle_t *)&d->stop_timer, NULL);
  uv_close((uv_handle_t *)&d->sig_term, NULL);
  uv_close((uv_handle_t *)&d->sig_int, NULL);
  budget_close(d);
  if (d->uplink)
    uplink_stop(d->uplink);
  hints_stop(d);
  loss_dir_stop(d);
}

static void on_stop_poll(uv_timer_t *t) {
  struct daemon *d = t->data;
  bool timeout = clock_realtime_ns() - d->stop_started_ns >= (int64_t)STOP_FLUSH_MS * 1000000;
  bool drained = daemon_seal_idle(d) && (!d->uplink || uplink_drained(d->uplink));
  if (!drained && !timeout)
    return;
  if (!drained)
    fprintf(stderr, "siox-daemon: exiting with %zu unacknowledged batches spooled\n", d->spool.n);
  close_all(d);
}

static void begin_stop(struct daemon *d) {
  if (d->stopping)
    return;
  d->stopping = true;
  fprintf(stderr, "siox-daemon: stopping\n");
  listener_stop(d);
  sessions_close_all(d);
  daemon_seal(d);
  d->stop_started_ns = clock_realtime_ns();
  uv_timer_start(&d->stop_timer, on_stop_poll, 0, STOP_POLL_MS);
}

static void on_signal(uv_signal_t *s, int signum) {
  (void)signum;
  begin_stop(s->data);
}

/* ---------------------------------------------------------------------------
 * Start
 * ------------------------------------------------------------------------- */

/* Reads the shared secret (trailing newline dropped) into d->token. */
static int read_token(struct daemon *d, const char *path) {
  FILE *f = fopen(path, "r");
  if (!f)
    return -errno;
  uint8_t buf[4096];
  size_t n = fread(buf, 1, sizeof buf, f);
  fclose(f);
  while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
    n--;
  if (!(d->token = malloc(n ? n : 1)))
    return -ENOMEM;
  memcpy(d->token, buf, n);
  d->token_len = n;
  return 0;
}

static int open_state(struct daemon *d) {
  const struct daemon_config *c = &d->cfg;
  int rc = state_mkdirs(c->state_dir, 0700);
  if (rc == 0)
    rc = state_daemon_id(c->state_dir, &d->daemon_id);
  if (rc == 0 && c->server_list) rc = daemon_route(&d->cfg, d->daemon_id);
  if (rc == 0 && c->token_file)
    rc = read_token(d, c->token_file);
  if (rc == 0)
    rc = spool_open(&d->spool, c->state_dir, c->spool_max_bytes);
  if (rc < 0)
    fprintf(stderr, "siox-daemon: state dir %s: %s\n", c->state_dir, strerror(-rc));
  return rc;
}

int daemon_start(struct daemon *d, uv_loop_t *loop, const struct daemon_config *cfg) {
  memset(d, 0, sizeof *d);
  d->loop = loop;
  d->cfg = *cfg;
  d->start_ns = clock_realtime_ns();
  if (gethostname(d->hostname, sizeof d->hostname - 1) < 0)
    snprintf(d->hostname, sizeof d->hostname, "unknown");
  batcher_init(&d->batcher);
  if (!(d->encoder = siox_block_encoder_create()))
    return -ENOMEM;
  int rc = open_state(d);
  if (rc == 0)
    rc = tls_link_init(d);
  if (rc < 0)
    return rc;
  fprintf(stderr, "siox-daemon: id %016" PRIx64 ", %zu spooled batches to replay, next seq %" PRIu64 "\n",
          d->daemon_id, d->spool.n, d->spool.next_seq);
  if (cfg->test_clock_shift_ns)
    fprintf(stderr, "siox-daemon: TESTING: this host's clock is taken as %+" PRId64 " ms off (--test-clock-shift-ms)\n",
            cfg->test_clock_shift_ns / 1000000);
  uv_timer_init(loop, &d->batch_timer);
  uv_timer_init(loop, &d->stop_timer);
  uv_signal_init(loop, &d->sig_term);
  uv_signal_init(loop, &d->sig_int);
  d->batch_timer.data = d->stop_timer.data = d->sig_term.data = d->sig_int.data = d;
  uv_signal_start(&d->sig_term, on_signal, SIGTERM);
  uv_signal_start(&d->sig_int, on_signal, SIGINT);
  budget_init(d);
  /* Before any client: the open batch of a killed daemon goes first. */
  if ((rc = journal_replay(d)) < 0)
    fprintf(stderr, "siox-daemon: journal: %s; batches open at a kill are not replayed\n", strerror(-rc));
  if ((rc = hints_start(d)) < 0 || (rc = listener_start(d)) < 0 || (rc = loss_dir_start(d)) < 0) {
    fprintf(stderr, "siox-daemon: socket %s: %s\n", cfg->socket_path, uv_strerror(rc));
    begin_stop(d);
    return rc;
  }
  if ((rc = uplink_start(d)) < 0)
    begin_stop(d);
  daemon_backpressure(d);
  return rc;
}

bool daemon_test_kill(struct daemon *d, uint64_t sealed_seq) {
  if (!d->cfg.test_kill_frames || d->test_frames < d->cfg.test_kill_frames)
    return false;
  if (d->cfg.test_kill_sealed && (sealed_seq == 0 || sealed_seq < d->test_kill_seq))
    return true;
  fprintf(stderr, "siox-daemon: TESTING: killed after %u activity-less frames (--test-kill-after-frames%s)\n",
          d->test_frames, d->cfg.test_kill_sealed ? ", --test-kill-after-seal" : "");
  raise(SIGKILL);
  return true;
}

/* Frees what the daemon owns; the loop has closed every handle by now. */
void daemon_close(struct daemon *d) {
  uplink_free(d->uplink);
  hints_free(d);
  batcher_destroy(&d->batcher);
  daemon_seal_free(d);
  siox_block_encoder_destroy(d->encoder);
  spool_close(&d->spool);
  journal_close(d);
  frameseq_free(d);
  free(d->loss_dir);
  tls_link_free(d);
  free(d->token);
}
