/*
 * The background flusher: the one thread that moves records out of the
 * per-thread rings (and the registration log) into BATCH frames on the
 * daemon connection, keeps reconnecting while the daemon is away, frees the
 * state of exited threads, and answers siox_flush().
 */
#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "client.h"

#define FRAME_MAX (256u << 10)  /* record bytes per BATCH frame */
#define CYCLE_MAX (1u << 20)    /* record bytes moved per cycle */
#define STREAM_BYTES (16u << 10) /* a cycle this full found a thread streaming records */
#define STREAM_WAIT_MS 200       /* ... which wakes the flusher at its fill mark, or this */
#define RESTART_POLL_MS 10      /* a flush waits for a restarting daemon */
#define POPULATE_AHEAD (4u << 20) /* ring bytes faulted in ahead of the owner */

static pthread_mutex_t fl_lock = PTHREAD_MUTEX_INITIALIZER;
/* Held by the flusher thread for each cycle, and by fork()'s prepare
 * handler: the child is never forked while the flusher is mid-cycle, inside
 * the allocator (GCC 12's ASan allocator has no fork handlers, so the
 * child would deadlock in its first malloc) or with a frame half built.
 * Taken before fl_lock and siox__threads_lock, never while holding them. */
static pthread_mutex_t cycle_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t fl_cond;
static pthread_t fl_thread;
static int running, stopping, started;
static int entered; /* the thread runs flusher_main: past its start-up mallocs (fork_prepare) */
static _Atomic int wake_fd = -1; /* read by wake() in any thread */
static uint64_t flush_req, flush_done; /* under fl_lock */
static int flush_rc;
static uint64_t filled_req; /* flusher only: requests covered by a full fill */
static int backlog;         /* flusher only: the last fill left records behind */

/* ---------------------------------------------------------------------------
 * Moving records: rings -> send buffer
 * ------------------------------------------------------------------------- */
static void ring_copy(const struct siox__thread *t, uint64_t from, uint64_t n, uint8_t *dst) {
  uint64_t off = from & t->mask, first = t->mask + 1 - off;
  if (first >= n) {
    memcpy(dst, t->buf + off, n);
  } else {
    memcpy(dst, t->buf + off, first);
    memcpy(dst + first, t->buf, n - first);
  }
}

/* End of the longest run of whole records from `from` within `cap` bytes. */
static uint64_t ring_cut(const struct siox__thread *t, uint64_t from, uint64_t to, uint64_t cap) {
  uint64_t end = from;
  while (end < to) {
    const struct siox_cw_rec_hdr *h = (const void *)(t->buf + (end & t->mask));
    uint64_t len = (uint64_t)h->words * 8;
    if (end - from + len > cap) break;
    end += len;
  }
  return end;
}

/* The last frame seq of this process incarnation (siox_cw_frame_hdr.seq):
 * the daemon tells a frame sent again after a reconnect from a new one by
 * it. Stamped here, once per frame, not on the records' path. */
static uint32_t frame_seq;

/* One BATCH frame with the given clock pair; returns 0 or -ENOMEM. A ring's
 * frame (thread != 0) gets the next seq; registrations (thread 0) are sent
 * whole again on every connection by design, and carry none. */
static int batch_frame(uint32_t thread, uint32_t bytes, uint64_t tsc, int64_t ns, uint8_t **recs) {
  uint32_t seq = thread == 0 ? 0 : frame_seq + 1 == 0 ? 1 : frame_seq + 1;
  uint8_t *p = siox__conn_frame_seq(SIOX_CW_BATCH, (uint32_t)sizeof(struct siox_cw_batch) + bytes, seq);
  if (!p) return -ENOMEM;
  if (seq) frame_seq = seq;
  struct siox_cw_batch b = {tsc, ns, thread, bytes};
  memcpy(p, &b, sizeof b);
  *recs = p + sizeof b;
  return 0;
}

/* Ships new registration records (BATCH thread 0) ahead of any ring data.
 * Returns the bytes queued, or -ENOMEM when they could not be. */
static int64_t fill_registrations(uint64_t tsc, int64_t ns) {
  uint64_t from = siox__conn_reg_shipped();
  uint64_t end = siox__reglog_read(from, NULL, 0);
  uint8_t *recs;
  if (end <= from) return 0;
  if (batch_frame(0, (uint32_t)(end - from), tsc, ns, &recs) < 0) return -ENOMEM;
  siox__reglog_read(from, recs, end - from);
  siox__conn_reg_inflight(end);
  return (int64_t)(end - from);
}

/* Faults t's ring in up to POPULATE_AHEAD bytes (at most as many as it has
 * written so far) past what its owner has written, so that the owner's stores do not trap into the kernel once per
 * page (a page fault here costs ~1-2 us: 1024 of them for a 4 MiB ring,
 * a per-process cost inside the application's loop). MADV_POPULATE_WRITE
 * maps the pages writable without touching their bytes, so it may race
 * with the owner's stores. Until the ring has wrapped once, untouched pages
 * stay untouched beyond that window (memory only for what is written, plus
 * the window). Kernels before 5.14 refuse it (EINVAL): then the owner
 * faults them in as before. The window was 1 MiB: a 4 KiB pwrite loop
 * writes that in ~5 ms, and a flusher kept off the cores that long (a
 * loaded node) left the owner 300-600 faults per process in its first
 * 4 MiB (perf, page-faults in siox__ring_write2); with 4 MiB the default
 * ring is mapped whole once its owner has written half of it. */
static void populate_ahead(struct siox__thread *t) {
  /* The window grows with what the thread wrote: a short-lived process
   * that made a few records must not pay for 1 MiB of faults. */
  uint64_t ahead = t->snap_head < POPULATE_AHEAD ? t->snap_head : POPULATE_AHEAD;
  uint64_t size = t->mask + 1, want = (t->snap_head + ahead + 4095) & ~(uint64_t)4095;
  /* The pages up to the owner's write index are mapped already (it wrote
   * them): a process of a few records makes no madvise for its one page. */
  uint64_t written = t->snap_head < size ? (t->snap_head + 4095) & ~(uint64_t)4095 : size;
  if (t->populated < written) t->populated = written;
  if (t->populated >= size || t->populated >= want) return;
  uint64_t end = want < size ? want : size;
  if (madvise(t->buf + t->populated, end - t->populated, MADV_POPULATE_WRITE) == 0) t->populated = end;
  else t->populated = size; /* not supported: leave it to the owner */
}

/* Ships up to *budget bytes of t's ring; returns 1 when t has more. */
static int fill_ring(struct siox__thread *t, uint64_t tsc, int64_t ns, uint64_t *budget) {
  uint64_t tail = atomic_load_explicit(&t->tail, memory_order_relaxed);
  populate_ahead(t);
  if (atomic_load_explicit(&t->kicked, memory_order_relaxed)) atomic_store_explicit(&t->kicked, 0, memory_order_relaxed);
  while (tail < t->snap_head && *budget > 0) {
    uint64_t cap = *budget < FRAME_MAX ? *budget : FRAME_MAX;
    uint64_t end = ring_cut(t, tail, t->snap_head, cap);
    uint8_t *recs;
    if (end == tail || batch_frame(t->index, (uint32_t)(end - tail), tsc, ns, &recs) < 0) return 1;
    ring_copy(t, tail, end - tail, recs);
    *budget -= end - tail;
    tail = end;
    atomic_store_explicit(&t->tail, tail, memory_order_release);
  }
  return tail < t->snap_head;
}

/* Frees exited threads whose rings are empty; threads lock held. */
static void retire_drained(void) {
  for (struct siox__thread **pp = &siox__threads; *pp;) {
    struct siox__thread *t = *pp;
    if (atomic_load_explicit(&t->closed, memory_order_acquire) &&
        atomic_load(&t->tail) == atomic_load_explicit(&t->pub_head, memory_order_acquire)) {
      *pp = t->next;
      siox__thread_retire(t);
    } else {
      pp = &t->next;
    }
  }
}

/* Sends the process counters when they changed since the last STATS (so
 * the final ones reach the daemon with the exit flush). */
static void stats_frame(int force) {
  static struct siox_cw_stats last;
  struct siox_cw_stats st;
  siox__stats_sum(&st.activities, &st.records, &st.dropped);
  st.dropped_exit = siox__dropped_exit();
  if (!force && memcmp(&st, &last, sizeof st) == 0) return;
  uint8_t *p = siox__conn_frame(SIOX_CW_STATS, sizeof st);
  if (!p) return;
  memcpy(p, &st, sizeof st);
  last = st;
}

/* Fills the send buffer. Write indices are read first and the clock pair
 * after them, so every shipped record predates the pair; the registration
 * log is read after the indices, so it holds every node and type those
 * records name. Returns bytes moved; *more is set when rings hold more. */
static uint64_t fill(int *more) {
  uint64_t tsc, budget = CYCLE_MAX, moved;
  int64_t ns;
  *more = 0;
  pthread_mutex_lock(&siox__threads_lock);
  for (struct siox__thread *t = siox__threads; t; t = t->next)
    t->snap_head = atomic_load_explicit(&t->pub_head, memory_order_acquire);
  siox__clock_pair(&tsc, &ns);
  int64_t regs = fill_registrations(tsc, ns);
  moved = regs > 0 ? (uint64_t)regs : 0;
  /* Frames a broken connection left unacknowledged go first after the
   * registrations, so the daemon sees every process's records in order.
   * Never before them: the daemon validates an activity against the types
   * registered on its connection, which starts with the whole log again. */
  if (regs >= 0 && siox__retain_resend_pending()) moved += siox__retain_requeue();
  /* Past the bound of held frames (a daemon that does not acknowledge),
   * new records wait in the rings, and are dropped and counted there; so
   * do they while held frames could not be queued (out of memory). */
  if (siox__retain_bytes() < SIOX_RETAIN_MAX && !siox__retain_resend_pending())
    for (struct siox__thread *t = siox__threads; t; t = t->next) *more |= fill_ring(t, tsc, ns, &budget);
  retire_drained();
  pthread_mutex_unlock(&siox__threads_lock);
  moved += CYCLE_MAX - budget;
  stats_frame(moved > 0);
  return moved;
}

/* ---------------------------------------------------------------------------
 * The thread
 * ------------------------------------------------------------------------- */
static void report_done(uint64_t req, int rc) {
  pthread_mutex_lock(&fl_lock);
  if (req > flush_done) {
    flush_done = req;
    flush_rc = rc;
    pthread_cond_broadcast(&fl_cond);
  }
  pthread_mutex_unlock(&fl_lock);
}

/* The wait after a cycle that found records streaming in. Their threads
 * wake the flusher when a ring passes its fill mark (siox__ring_past_mark),
 * so the timer only bounds how long records wait. Polled every 20 ms, and
 * again 1 ms after each cycle of 64 KiB, the flushers of 4 IOR-like ranks
 * on 2 cores ran 50-100 cycles a second each, every one a wake-up of the
 * flusher and one of the daemon on the cores the ranks share
 * (instrumentation/mpi/README.md). Never shorter than the flush interval
 * the application asked for. */
static int stream_wait_ms(void) {
  return siox__cfg.flush_interval_ms > STREAM_WAIT_MS ? (int)siox__cfg.flush_interval_ms : STREAM_WAIT_MS;
}

/* One pass; returns the poll timeout to use before the next (0: at once). */
static int cycle(uint64_t req, uint64_t done, int may_open) {
  /* A connection made in this cycle holds only its HELLO: the records go
   * into the same write, so that a short-lived process's exit costs one
   * round trip to the daemon (its ACK), not one for the HELLO first. */
  int fresh = 0;
  if (!siox__conn_connected()) fresh = siox__conn_try_connect(req > done, may_open) == 0;
  if (!siox__conn_connected()) {
    /* No daemon: a flush fails at once, unless the daemon was there a
     * moment ago (restarting): then it is tried again until the flush's
     * own timeout, so that an exit during a restart loses nothing. */
    if (req > done && !siox__conn_recently_up()) report_done(req, -ENOTCONN);
    return req > done ? RESTART_POLL_MS : (int)siox__cfg.flush_interval_ms;
  }
  uint64_t moved = 0;
  siox__conn_check_peer(); /* ACKs; a closed daemon is noticed here too */
  if (!siox__conn_connected()) return 0;
  if (siox__conn_pending() == 0 || fresh) {
    moved = fill(&backlog);
    if (!backlog) filled_req = req;
  }
  if (siox__conn_write() < 0) return 0; /* lost: reconnect (forced if a flush waits) */
  if (siox__conn_pending() > 0) return (int)siox__cfg.flush_interval_ms; /* poll waits for POLLOUT */
  /* A flush is done once the daemon has acknowledged everything. */
  if (filled_req > done && siox__conn_all_acked()) report_done(filled_req, 0);
  if (backlog) return 0;
  return moved >= STREAM_BYTES ? stream_wait_ms() : (int)siox__cfg.flush_interval_ms;
}

/* A new wake-up eventfd, high and guarded (own_fd.c). */
static int wake_fd_open(void) {
  return siox__own_fd_take(SIOX__FD_WAKE, eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
}

/* Waits on the wake-up fd and the socket, either of which may be missing
 * (poll skips a negative fd). acks: an ACK is awaited (a flush); otherwise
 * the daemon's ACKs do not wake the flusher: they are read at its next
 * cycle. Woken by every ACK, a busy process's flusher ran a cycle per ACK,
 * each sending the few records written since and drawing the next ACK:
 * ~47 records per send and four system calls per cycle in a 4 KiB pwrite
 * loop. A closed connection still wakes it (POLLHUP is always reported). */
static void wait_for_work(int timeout_ms, int acks) {
  int fd = siox__conn_fd(), wfd = atomic_load(&wake_fd);
  short sev = siox__conn_pending() ? POLLOUT : acks ? POLLIN : 0;
  struct pollfd p[2] = {{wfd, POLLIN, 0}, {fd, sev, 0}};
  if (poll(p, 2, timeout_ms) <= 0) return;
  uint64_t v;
  if (p[0].revents & POLLIN && read(wfd, &v, sizeof v) < 0) v = 0;
  /* Closed behind the library's back (a close the POSIX layer did not
   * see): dropped, or the flusher would spin on POLLNVAL; an application
   * thread makes the new one (own_fd.c), meanwhile the timeout wakes us. */
  if (p[0].revents & POLLNVAL) {
    siox__own_fd_drop(SIOX__FD_WAKE);
    atomic_store(&wake_fd, -1);
    atomic_store(&siox__fd_wanted, 1);
  }
  if (fd >= 0 && p[1].revents & (POLLIN | POLLHUP | POLLERR | POLLNVAL)) siox__conn_check_peer();
}

static void *flusher_main(void *arg) {
  (void)arg;
  siox__in_lib = 1; /* everything this thread does is the library's own */
  /* A table of its own once the process has made enough calls for the
   * copy to pay (own_table.c), so that the application's keeps the
   * kernel's fast path (one user: no reference count per system call). */
  siox__own_table_start();
  pthread_mutex_lock(&fl_lock);
  entered = 1;
  pthread_cond_broadcast(&fl_cond);
  pthread_mutex_unlock(&fl_lock);
  for (;;) {
    pthread_mutex_lock(&fl_lock);
    int stop = stopping;
    uint64_t req = flush_req, done = flush_done;
    pthread_mutex_unlock(&fl_lock);
    if (stop) break;
    int table_wait = siox__own_table_due(stream_wait_ms()); /* holding no lock */
    pthread_mutex_lock(&cycle_lock);
    /* With its own table it makes its sockets there itself (own_table.c). */
    int timeout = cycle(req, done, siox__own_table);
    pthread_mutex_unlock(&cycle_lock);
    if (timeout > table_wait) timeout = table_wait;
    if (timeout > 0) wait_for_work(timeout, req > done);
  }
  /* Its own table dies with it: so does a socket only it holds. */
  pthread_mutex_lock(&cycle_lock);
  siox__conn_close_private();
  pthread_mutex_unlock(&cycle_lock);
  siox__own_table_leave();
  return NULL;
}

static void wake(void) {
  uint64_t one = 1;
  int fd = atomic_load(&wake_fd);
  if (fd >= 0 && write(fd, &one, sizeof one) < 0) one = 0;
}

void siox__ring_past_mark(struct siox__thread *t) {
  /* Not started yet (a small ring filled before its time): start it now. */
  if (atomic_load_explicit(&siox__start_by, memory_order_relaxed) != 0) siox__start_due();
  /* Already told: no cross-core load of tail until the flusher has come. */
  if (atomic_load_explicit(&t->kicked, memory_order_relaxed)) return;
  t->tail_cache = atomic_load_explicit(&t->tail, memory_order_acquire);
  if (t->head - t->tail_cache <= (t->mask + 1) >> SIOX_RING_MARK_SHIFT) return;
  atomic_store_explicit(&t->kicked, 1, memory_order_relaxed);
  int err = errno; /* inside a wrapper: the application's errno */
  siox__in_lib++;  /* a preloaded write() wrapper must not trace this one */
  wake();
  siox__in_lib--;
  errno = err;
}

void siox__ring_rare(struct siox__thread *t, int past) {
  if (past) siox__ring_past_mark(t);
  if (atomic_load_explicit(&siox__fd_wanted, memory_order_relaxed)) siox__fd_assist();
}

/* Application threads, while no flusher thread runs (lifecycle.c,
 * siox__start_due): one cycle on the calling thread, without waiting for
 * the daemon: connect if need be (HELLO, registrations, records and STATS
 * in one write), then send what the rings hold. The daemon's ACKs are read
 * later, by the flusher or the exit flush; the frames stay held until
 * then. Returns 1 when every record written so far is on the socket, 0
 * when the flusher thread is needed (no daemon, a full socket, another
 * thread at it). trylock: the caller may be a signal handler that
 * interrupted a cycle. */
int siox__flusher_send_here(void) {
  if (pthread_mutex_trylock(&cycle_lock) != 0) return 0;
  int sent = 0, fresh = !siox__conn_connected() && siox__conn_try_connect(0, 1) == 0;
  if (siox__conn_connected() && (siox__conn_pending() == 0 || fresh)) { /* fresh: its HELLO waits */
    int more;
    fill(&more);
    sent = !more && siox__conn_write() == 0 && siox__conn_pending() == 0;
  }
  pthread_mutex_unlock(&cycle_lock);
  return sent;
}

int siox__flusher_started(void) {
  pthread_mutex_lock(&fl_lock);
  int s = started;
  pthread_mutex_unlock(&fl_lock);
  return s;
}

/* Starts the flusher unless it runs; returns 0 or a negative errno. */
int siox__flusher_ensure(void) {
  int rc = 0;
  pthread_mutex_lock(&fl_lock);
  if (!running) {
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&fl_cond, &ca);
    pthread_condattr_destroy(&ca);
    if (atomic_load(&wake_fd) < 0) atomic_store(&wake_fd, wake_fd_open());
    /* The first connection is made here, on the application's thread: the
     * flusher makes no descriptor (own_fd.c). Through siox__fd_assist, so
     * that no other thread makes one at the same time. */
    siox__fd_assist();
    /* The flusher blocks every signal: the application's handlers must run
     * on the application's threads. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    rc = atomic_load(&wake_fd) < 0 ? -errno : -pthread_create(&fl_thread, NULL, flusher_main, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    running = rc == 0;
    entered = 0;
    started |= running;
    /* Nothing is due any more; nor when the thread cannot be made: then
     * the records wait for the exit hand-over (or a siox_flush). */
    atomic_store_explicit(&siox__start_by, 0, memory_order_relaxed);
    stopping = 0;
  }
  pthread_mutex_unlock(&fl_lock);
  return rc;
}

/* Waits for the flusher in slices of RESTART_POLL_MS, making what it asks
 * for meanwhile: the caller may be the only application thread left to
 * make a socket for a restarted daemon. */
int siox__flusher_flush(unsigned timeout_ms) {
  if (!siox__conn_connected()) siox__fd_assist(); /* a daemon that came since: try now, not in a second */
  struct timespec dl;
  clock_gettime(CLOCK_MONOTONIC, &dl);
  int64_t end = (int64_t)dl.tv_sec * 1000000000 + dl.tv_nsec + (int64_t)timeout_ms * 1000000;
  pthread_mutex_lock(&fl_lock);
  if (!running) {
    pthread_mutex_unlock(&fl_lock);
    return -ENOTCONN;
  }
  uint64_t mine = ++flush_req;
  wake();
  for (;;) {
    if (flush_done >= mine) break;
    if (atomic_load(&siox__fd_wanted)) {
      pthread_mutex_unlock(&fl_lock);
      siox__fd_assist();
      pthread_mutex_lock(&fl_lock);
      if (flush_done >= mine) break;
    }
    clock_gettime(CLOCK_MONOTONIC, &dl);
    int64_t now = (int64_t)dl.tv_sec * 1000000000 + dl.tv_nsec, slice = now + RESTART_POLL_MS * 1000000ll;
    if (now >= end) break;
    if (slice > end) slice = end;
    dl.tv_sec = slice / 1000000000;
    dl.tv_nsec = slice % 1000000000;
    pthread_cond_timedwait(&fl_cond, &fl_lock, &dl);
  }
  int rc = flush_done >= mine ? flush_rc : (siox__conn_connected() ? -ETIMEDOUT : -ENOTCONN);
  pthread_mutex_unlock(&fl_lock);
  return rc;
}

/* The exit flush, in the calling thread once the flusher has stopped (it
 * is then the only thread on the connection and the retained frames): the
 * same cycles, without the hand-overs to and from the flusher thread that
 * each cost a scheduling delay on a loaded node (wake it, wait for its
 * report). Same result as siox__flusher_flush. */
int siox__flusher_flush_here(unsigned timeout_ms) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  int64_t end = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000 + timeout_ms;
  siox__own_fd_close_stale(); /* the copy of a connection the flusher closed */
  pthread_mutex_lock(&fl_lock);
  uint64_t mine = ++flush_req;
  pthread_mutex_unlock(&fl_lock);
  for (;;) {
    pthread_mutex_lock(&fl_lock);
    uint64_t done = flush_done;
    int rc = flush_rc;
    pthread_mutex_unlock(&fl_lock);
    if (done >= mine) return rc;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    int64_t left = end - ((int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
    if (left <= 0) return siox__conn_connected() ? -ETIMEDOUT : -ENOTCONN;
    int timeout = cycle(mine, done, 1);
    /* The cycle that saw the last ACK reported the flush done: return now,
     * not after the poll timeout (an idle 20 ms at every exit). */
    pthread_mutex_lock(&fl_lock);
    done = flush_done;
    pthread_mutex_unlock(&fl_lock);
    if (timeout > 0 && done < mine) wait_for_work(timeout < left ? timeout : (int)left, 1);
  }
}

void siox__flusher_stop(void) {
  pthread_mutex_lock(&fl_lock);
  int was = running;
  stopping = 1;
  wake();
  pthread_mutex_unlock(&fl_lock);
  if (was) pthread_join(fl_thread, NULL);
  pthread_mutex_lock(&fl_lock);
  running = 0;
  pthread_mutex_unlock(&fl_lock);
  /* The connection stays: finalize hands over what it can (exit_loss.c). */
}

/* Application threads (own_fd.c): a new wake-up fd when the flusher lost
 * its own, then a wake-up only when a socket was offered (the flusher
 * waits for it). Not otherwise: the flusher asks for a socket every
 * RETRY_NS while no daemon runs, and a wake-up for an offer that failed
 * was an eventfd write (a system call on the application's call path) and
 * a flusher cycle for nothing; a new wake-up fd is polled from the
 * flusher's next wait anyway. trylock: the caller may be a signal handler
 * that interrupted a holder of fl_lock; then the flusher asks again. */
void siox__flusher_assist(int offered) {
  if (atomic_load(&wake_fd) < 0) {
    if (pthread_mutex_trylock(&fl_lock) != 0) {
      atomic_store(&siox__fd_wanted, 1);
      return;
    }
    if (running && atomic_load(&wake_fd) < 0) atomic_store(&wake_fd, wake_fd_open());
    pthread_mutex_unlock(&fl_lock);
  }
  if (offered) wake();
}

/* Also waits for a flusher thread still starting: the thread library
 * allocates on its side of pthread_create too. */
void siox__flusher_fork_prepare(void) {
  pthread_mutex_lock(&cycle_lock);
  pthread_mutex_lock(&fl_lock);
  while (running && !entered) pthread_cond_wait(&fl_cond, &fl_lock);
}

void siox__flusher_fork_parent(void) {
  pthread_mutex_unlock(&fl_lock);
  pthread_mutex_unlock(&cycle_lock);
}

/* No thread survives fork() but the caller: the child starts its own flusher
 * on its next SIOX call, with its own wake-up fd. */
void siox__flusher_after_fork_child(void) {
  pthread_mutex_init(&fl_lock, NULL);
  pthread_mutex_init(&cycle_lock, NULL);
  siox__own_fd_drop(SIOX__FD_WAKE);
  if (atomic_load(&wake_fd) >= 0) close(atomic_load(&wake_fd));
  atomic_store(&wake_fd, -1);
  running = stopping = started = entered = 0;
  atomic_store(&siox__start_by, 0); /* the child's first attach arms it */
  flush_req = flush_done = filled_req = 0;
  frame_seq = 0; /* a new incarnation (new nonce): its frames count from 1 */
  backlog = 0;
  flush_rc = 0;
}
