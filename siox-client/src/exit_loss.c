/*
 * What a process could not hand over when it exits. After the bounded exit
 * flush, the activities still in the rings and those the daemon never
 * acknowledged are lost: they are counted (dropped_exit) and, unless the
 * daemon acknowledged the final counters, the process leaves a loss file
 * for the daemon to report:
 *
 *   <socket>.lost/<pid>-<nonce>-<n>.loss = one HELLO frame, the spilled
 *                                           records, one STATS frame
 *
 * (the very frames of the client wire, so the daemon reads them with the
 * code that reads a connection). The daemon creates that directory (mode
 * 1733: anyone may add a file, no one may read or remove another's), picks
 * the files up on start and every few seconds, and stores the counters as
 * the process's own. A process writes one at every exec whose flush
 * failed (siox_internal_before_exec) and one at exit: n keeps them apart,
 * and the server keeps the greatest of each cumulative counter, so the
 * order the daemon reads them in does not matter. Writing it costs a few system calls: exit is not held
 * up beyond SIOX_EXIT_TIMEOUT_MS. If no daemon ever ran here (no directory),
 * the loss can only be counted in the process (siox_stats_get).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/uio.h>
#include <unistd.h>

#include "client.h"

/* After the exit flush: the last counters and unacknowledged frames may
 * take this much longer to reach a daemon that is there. */
#define EXIT_HANDOVER_MS 200
/* Bytes of records a loss file may carry (it lives where the socket does,
 * often a tmpfs); beyond that, records are counted as dropped at exit. */
#define SPILL_MAX (32u << 20)
#define SPILL_FRAME (256u << 10)

static _Atomic uint64_t dropped_exit;
static unsigned loss_files; /* written by this process incarnation */

uint64_t siox__dropped_exit(void) {
  return atomic_load(&dropped_exit);
}

/* Activities still in the rings (the flusher has stopped). discard: they
 * are given up, the tails moved past them, so that what is counted lost
 * here is never shipped too (an exec that fails goes on recording and
 * flushing). */
static uint64_t leftovers(int discard) {
  uint64_t k = 0;
  pthread_mutex_lock(&siox__threads_lock);
  for (struct siox__thread *t = siox__threads; t; t = t->next) {
    uint64_t end = atomic_load_explicit(&t->pub_head, memory_order_acquire), r = atomic_load(&t->tail);
    for (; r < end;) {
      const struct siox_cw_rec_hdr *h = (const void *)(t->buf + (r & t->mask));
      if (h->words == 0) break;
      k += h->type == SIOX_REC_ACTIVITY;
      r += (uint64_t)h->words * 8;
    }
    if (discard) atomic_store(&t->tail, r);
  }
  pthread_mutex_unlock(&siox__threads_lock);
  return k;
}

static uint64_t ring_leftovers(void) {
  return leftovers(0);
}

static int put_frame2(int fd, uint16_t type, const void *a, uint32_t alen, const void *b, uint32_t blen) {
  struct siox_cw_frame_hdr h = {SIOX_CW_MAGIC, SIOX_CW_VERSION, type, alen + blen, 0};
  struct iovec v[3] = {{&h, sizeof h}, {(void *)a, alen}, {(void *)b, blen}};
  return writev(fd, v, 3) == (ssize_t)(sizeof h + alen + blen) ? 0 : -1;
}

static int put_frame(int fd, uint16_t type, const void *p, uint32_t n) {
  return put_frame2(fd, type, p, n, NULL, 0);
}

/* The whole registration log as one BATCH of thread 0: the daemon must be
 * able to resolve every node and type the spilled records name. */
static int spill_registrations(int fd, uint64_t tsc, int64_t ns) {
  uint64_t end = siox__reglog_read(0, NULL, 0);
  if (end == 0 || end > SPILL_MAX) return end == 0 ? 0 : -1;
  uint8_t *buf = malloc(end);
  if (!buf) return -1;
  siox__reglog_read(0, buf, end);
  struct siox_cw_batch b = {tsc, ns, 0, (uint32_t)end};
  int rc = put_frame2(fd, SIOX_CW_BATCH, &b, sizeof b, buf, (uint32_t)end);
  free(buf);
  return rc;
}

/* One thread's ring leftovers as BATCH frames of whole records. */
static int spill_ring(int fd, struct siox__thread *t, uint64_t tsc, int64_t ns, size_t *budget) {
  uint64_t from = atomic_load(&t->tail), end = atomic_load_explicit(&t->pub_head, memory_order_acquire);
  uint8_t *buf = malloc(SPILL_FRAME);
  if (!buf) return -1;
  int rc = 0;
  while (rc == 0 && from < end) {
    uint64_t n = 0;
    for (;;) { /* whole records, up to SPILL_FRAME bytes */
      const struct siox_cw_rec_hdr *h = (const void *)(t->buf + ((from + n) & t->mask));
      uint64_t len = (uint64_t)h->words * 8;
      if (from + n >= end || h->words == 0 || n + len > SPILL_FRAME) break;
      for (uint64_t i = 0; i < len; i++) buf[n + i] = t->buf[(from + n + i) & t->mask];
      n += len;
    }
    if (n == 0 || n + 64 > *budget) {
      rc = -1;
      break;
    }
    struct siox_cw_batch b = {tsc, ns, t->index, (uint32_t)n};
    rc = put_frame2(fd, SIOX_CW_BATCH, &b, sizeof b, buf, (uint32_t)n);
    if (rc == 0) {
      *budget -= n + 64;
      from += n;
      atomic_store(&t->tail, from); /* spilled: no longer a leftover */
    }
  }
  free(buf);
  return rc;
}

/* Writes everything not handed over into the loss file: the registrations,
 * the frames the daemon never acknowledged, the rings' leftovers. What fits
 * (SPILL_MAX) is no longer lost: the daemon stores it from the file. */
static int spill(int fd) {
  uint64_t tsc;
  int64_t ns;
  siox__clock_pair(&tsc, &ns); /* after every record was written */
  size_t budget = SPILL_MAX, held;
  const uint8_t *frames = siox__retain_frames(&held);
  if (spill_registrations(fd, tsc, ns) < 0) return -1;
  if (held > budget || (held && write(fd, frames, held) != (ssize_t)held)) return -1;
  budget -= held;
  siox__retain_clear();
  int rc = 0;
  pthread_mutex_lock(&siox__threads_lock);
  for (struct siox__thread *t = siox__threads; t && rc == 0; t = t->next) rc = spill_ring(fd, t, tsc, ns, &budget);
  pthread_mutex_unlock(&siox__threads_lock);
  return rc;
}

/* Writes the loss file (under a temporary name, then renamed, so the daemon
 * never reads half of one): HELLO, the spilled records, then STATS counting
 * as lost only what did not fit. Returns 0 or -1. */
static int write_loss_file(void) {
  char tmp[sizeof siox__cfg.socket_path + 64], path[sizeof tmp];
  uint8_t *hello;
  uint32_t hlen;
  if (siox__hello_build(&hello, &hlen) < 0) return -1;
  struct siox_cw_hello h;
  memcpy(&h, hello, sizeof h);
  unsigned n = loss_files++;
  snprintf(path, sizeof path, "%s.lost/%ld-%016llx-%u.loss", siox__cfg.socket_path, (long)getpid(),
           (unsigned long long)h.nonce, n);
  snprintf(tmp, sizeof tmp, "%s.lost/.%ld-%016llx-%u.tmp", siox__cfg.socket_path, (long)getpid(),
           (unsigned long long)h.nonce, n);
  int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
  int rc = fd < 0 ? -1 : put_frame(fd, SIOX_CW_HELLO, hello, hlen);
  if (rc == 0) (void)spill(fd); /* a partial spill is fine: the rest is counted */
  /* Whatever is still held or in the rings now is lost. */
  atomic_fetch_add(&dropped_exit, siox__retain_activities() + leftovers(1));
  siox__retain_clear();
  struct siox_cw_stats st;
  siox__stats_sum(&st.activities, &st.records, &st.dropped);
  st.dropped_exit = siox__dropped_exit();
  if (rc == 0) rc = put_frame(fd, SIOX_CW_STATS, &st, sizeof st);
  if (fd >= 0 && close(fd) < 0) rc = -1;
  if (rc == 0) rc = rename(tmp, path);
  if (rc < 0 && fd >= 0) unlink(tmp);
  free(hello);
  return rc;
}

/* Called by finalize after the flusher stopped; `delivered`: the exit flush
 * ended with everything acknowledged. While the daemon is there, the final
 * counters and what it has not acknowledged get EXIT_HANDOVER_MS more.
 * Otherwise everything not handed over goes into the loss file (spilled);
 * what cannot go there is counted as dropped at exit. */
void siox__exit_account(int delivered) {
  int handed = delivered && ring_leftovers() == 0;
  if (!handed && siox__conn_connected()) {
    struct siox_cw_stats st;
    siox__stats_sum(&st.activities, &st.records, &st.dropped);
    st.dropped_exit = siox__dropped_exit();
    /* The rings' leftovers are not in this connection's stream: only a
     * handover that leaves none is complete. */
    handed = ring_leftovers() == 0 && siox__conn_handover(&st, EXIT_HANDOVER_MS);
  }
  if (handed) {
    siox__retain_clear(); /* acknowledged, all of it */
    siox__conn_close();
    return;
  }
  siox__conn_close(); /* what was not acknowledged moves to the held frames */
  int err = errno;    /* an exit path the application may still look at */
  if (write_loss_file() < 0) {
    /* Only what write_loss_file has not counted (and given up) already. */
    atomic_fetch_add(&dropped_exit, siox__retain_activities() + leftovers(1));
    siox__retain_clear();
  }
  errno = err;
}
