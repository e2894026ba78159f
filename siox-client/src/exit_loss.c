/*
 * What a process could not hand over when it exits. After the bounded exit
 * flush, the activities still in the rings and those the daemon never
 * acknowledged are lost: they are counted (dropped_exit) and, unless the
 * daemon acknowledged the final counters, the process leaves a loss file
 * for the daemon to report:
 *
 *   <socket>.lost/<pid>-<nonce>.loss  = one HELLO frame + one STATS frame
 *
 * (the very frames of the client wire, so the daemon reads them with the
 * code that reads a connection). The daemon creates that directory (mode
 * 1733: anyone may add a file, no one may read or remove another's), picks
 * the files up on start and every few seconds, and stores the counters as
 * the process's own. Writing it costs a few system calls: exit is not held
 * up beyond SIOX_EXIT_TIMEOUT_MS. If no daemon ever ran here (no directory),
 * the loss can only be counted in the process (siox_stats_get).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "client.h"

/* After the exit flush: the last counters and unacknowledged frames may
 * take this much longer to reach a daemon that is there. */
#define EXIT_HANDOVER_MS 200

static _Atomic uint64_t dropped_exit;

uint64_t siox__dropped_exit(void) {
  return atomic_load(&dropped_exit);
}

/* Activities still in the rings (the flusher has stopped). */
static uint64_t ring_leftovers(void) {
  uint64_t k = 0;
  pthread_mutex_lock(&siox__threads_lock);
  for (struct siox__thread *t = siox__threads; t; t = t->next) {
    uint64_t end = atomic_load_explicit(&t->pub_head, memory_order_acquire);
    for (uint64_t r = atomic_load(&t->tail); r < end;) {
      const struct siox_cw_rec_hdr *h = (const void *)(t->buf + (r & t->mask));
      if (h->words == 0) break;
      k += h->type == SIOX_REC_ACTIVITY;
      r += (uint64_t)h->words * 8;
    }
  }
  pthread_mutex_unlock(&siox__threads_lock);
  return k;
}

static int put_frame(int fd, uint16_t type, const void *p, uint32_t n) {
  struct siox_cw_frame_hdr h = {SIOX_CW_MAGIC, SIOX_CW_VERSION, type, n, 0};
  return write(fd, &h, sizeof h) == (ssize_t)sizeof h && write(fd, p, n) == (ssize_t)n ? 0 : -1;
}

/* Writes the loss file (under a temporary name, then renamed, so the daemon
 * never reads half of one). Returns 0 or -1. */
static int write_loss_file(void) {
  char tmp[sizeof siox__cfg.socket_path + 64], path[sizeof tmp];
  uint8_t *hello;
  uint32_t hlen;
  if (siox__hello_build(&hello, &hlen) < 0) return -1;
  struct siox_cw_hello h;
  memcpy(&h, hello, sizeof h);
  snprintf(path, sizeof path, "%s.lost/%ld-%016llx.loss", siox__cfg.socket_path, (long)getpid(),
           (unsigned long long)h.nonce);
  snprintf(tmp, sizeof tmp, "%s.lost/.%ld-%016llx.tmp", siox__cfg.socket_path, (long)getpid(),
           (unsigned long long)h.nonce);
  struct siox_cw_stats st;
  siox__stats_sum(&st.activities, &st.records, &st.dropped);
  st.dropped_exit = siox__dropped_exit();
  int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
  int rc = fd < 0 ? -1 : 0;
  if (rc == 0) rc = put_frame(fd, SIOX_CW_HELLO, hello, hlen);
  if (rc == 0) rc = put_frame(fd, SIOX_CW_STATS, &st, sizeof st);
  if (fd >= 0 && close(fd) < 0) rc = -1;
  if (rc == 0) rc = rename(tmp, path);
  if (rc < 0 && fd >= 0) unlink(tmp);
  free(hello);
  return rc;
}

/* Called by finalize after the flusher stopped; `delivered`: the exit flush
 * ended with everything acknowledged. What is still in the rings is lost;
 * while the daemon is there, the final counters (saying so) go to it with
 * what it has not acknowledged yet, within EXIT_HANDOVER_MS. Otherwise the
 * held frames are lost as well, and the loss file reports it all. */
void siox__exit_account(int delivered) {
  uint64_t ring = ring_leftovers();
  atomic_fetch_add(&dropped_exit, ring);
  int handed = delivered && ring == 0;
  if (!handed && siox__conn_connected()) {
    struct siox_cw_stats st;
    siox__stats_sum(&st.activities, &st.records, &st.dropped);
    st.dropped_exit = siox__dropped_exit();
    handed = siox__conn_handover(&st, EXIT_HANDOVER_MS);
  }
  if (handed) {
    siox__retain_clear(); /* acknowledged, all of it */
    siox__conn_close();
    return;
  }
  siox__conn_close(); /* what was not acknowledged moves to the held frames */
  atomic_fetch_add(&dropped_exit, siox__retain_activities());
  siox__retain_clear();
  int err = errno; /* an exit path the application may still look at */
  (void)write_loss_file();
  errno = err;
}
