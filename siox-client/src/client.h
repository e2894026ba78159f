/*
 * Internal interface between the files of libsiox-client (libuv's "uv__"
 * tier: names are siox__*, hidden from the shared object's exports).
 * Data path: hot path (activity.c) -> per-thread ring (this header) ->
 * flusher (flusher.c) -> connection send buffer (conn.c) -> daemon socket.
 */
#ifndef SIOX_CLIENT_INTERNAL_H
#define SIOX_CLIENT_INTERNAL_H

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include <siox/siox.h>
#include <siox/siox_internal.h>
#include <siox_client_wire.h>

#define SIOX_HIDDEN __attribute__((visibility("hidden")))
#define SIOX_LIKELY(x) __builtin_expect(!!(x), 1)
#define SIOX_UNLIKELY(x) __builtin_expect(!!(x), 0)
/* The functions every recorded call runs go to .text.hot, which the linker
 * lays out together: after a system call (the TLB flushed under PTI
 * without PCID) each code page the call touches costs a page walk, and
 * start, stop and the wrappers were spread over four pages. */
#define SIOX_HOT __attribute__((hot))
/* The library is meant for LD_PRELOAD: initial-exec TLS costs one
 * %fs-relative load, where the dynamic model would call __tls_get_addr. */
#define SIOX_TLS __thread __attribute__((tls_model("initial-exec")))

#define SIOX_STACK_DEPTH 64
#define SIOX_AID_BLOCK 4096u
#define SIOX_RING_MIN (64u << 10)
#define SIOX_RING_MAX (1u << 30)
#define SIOX_RING_DEFAULT_KB 4096u /* see README, "Buffers and their lifetimes" */
/* Detached activities: a process-wide pool of this many slots (README). */
#define SIOX_ENV_DETACHED "SIOX_DETACHED_SLOTS"
/* 1: the flusher starts late (README "Fork and threads"); default 0. */
#define SIOX_ENV_LATE_FLUSHER "SIOX_LATE_FLUSHER"
#define SIOX_DETACHED_DEFAULT 4096u
#define SIOX_DETACHED_MAX (1u << 20)
#define SIOX_REC_MAX_BYTES (sizeof(struct siox_cw_rec_hdr) + sizeof(struct siox_cw_desc) + \
                            2 * (sizeof(struct siox_cw_desc_value) + SIOX_CW_MAX_VALUE))

/* One open activity, already laid out as its ACTIVITY wire record so that
 * stop is a single copy into the ring. */
struct siox__open {
  struct siox_cw_rec_hdr hdr;
  struct siox_cw_activity act;
  struct siox_cw_attr attrs[SIOX_CW_MAX_ATTRS];
};

/* Per-thread state, allocated page-aligned. Layout is for the hot path:
 * every field start/stop touches (head, pub_head, the counters, the first
 * ~20 stack entries) lies in the first 4 KiB page, so a call after a system
 * call (TLB flushed under PTI) costs one TLB miss for this state, not two or
 * three. The owning thread alone writes the owner lines; the flusher reads
 * pub_head (acquire) and the counters (relaxed), and alone writes the
 * flusher line, which has its own cache line so that neither side's writes
 * invalidate the other's hot line. Freed by the flusher once the thread has
 * exited (closed) and the ring is drained. */
struct siox__thread {
  /* owner, hot: one cache line */
  _Alignas(64) uint8_t *buf; /* ring bytes, size mask + 1 (a power of two) */
  uint64_t mask;
  uint64_t head;             /* owner's copy of pub_head */
  _Atomic uint64_t pub_head; /* release by owner; the flusher's only read
                                of this line, at most once per cycle */
  uint64_t tail_cache;       /* owner's last view of tail */
  uint64_t aid_next, aid_end;
  uint32_t depth;
  volatile int busy;         /* set while in the library: a signal handler that
                                re-enters drops its record instead of corrupting */
  /* owner, written per activity; the flusher reads them for STATS */
  _Alignas(64) uint64_t n_activities; /* relaxed atomic stores, as the two below */
  uint64_t n_records, n_dropped;
  _Atomic int kicked; /* owner sets it when it woke the flusher; the flusher clears */

  /* flusher: its own line (the owner reads tail only when the ring looks full) */
  _Alignas(64) _Atomic uint64_t tail;  /* release by flusher */
  uint64_t snap_head;                  /* flusher: head seen this cycle */
  uint64_t populated;                  /* flusher: ring bytes it has faulted in */
  struct siox__thread *next;           /* list under siox__threads_lock */
  _Atomic int closed;                  /* thread has exited (owner, once) */
  uint32_t index;                      /* BATCH.thread, >= 1 */

  /* owner: open activities, bottom first (the top is what start/stop touch) */
  _Alignas(64) struct siox__open stack[SIOX_STACK_DEPTH];
};
#define SIOX_THREAD_ALIGN 4096u
/* A field added to the hot line must not push pub_head or the stack off the
 * first page (see above). */
_Static_assert(offsetof(struct siox__thread, n_activities) == 64, "owner hot fields: one cache line");
_Static_assert(offsetof(struct siox__thread, stack) <= 256, "stack bottom in the first page");

extern SIOX_TLS struct siox__thread *siox__self SIOX_HIDDEN;
extern SIOX_TLS int siox__in_lib SIOX_HIDDEN;

/* ---- clock.c ---- */
extern int siox__clock_tsc SIOX_HIDDEN; /* 1: timestamps are TSC ticks */
SIOX_HIDDEN void siox__clock_init(void);
SIOX_HIDDEN void siox__clock_pair(uint64_t *tsc, int64_t *ns);
SIOX_HIDDEN uint64_t siox__clock_slow(void);

static inline __attribute__((always_inline)) uint64_t siox__clock_now(void) {
#if defined(__x86_64__)
  if (SIOX_LIKELY(siox__clock_tsc)) {
    uint32_t lo, hi;
    __asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
    return ((uint64_t)hi << 32) | lo;
  }
#endif
  return siox__clock_slow();
}

/* ---- lifecycle.c ---- */
struct siox__config {
  char socket_path[108];
  size_t buffer_bytes;
  unsigned flush_interval_ms;
  unsigned exit_timeout_ms;
  unsigned detached_slots; /* size of the detached-activity pool */
  uint64_t start_ticks;    /* the flusher's start after the first attach: 0, or SIOX_START_TICKS */
};
extern struct siox__config siox__cfg SIOX_HIDDEN;
/* Initialises from the environment if needed; returns 1 when recording is
 * enabled, 0 when disabled or finalized. */
SIOX_HIDDEN int siox__ensure(void);

/* ---- thread.c ---- */
extern pthread_mutex_t siox__threads_lock SIOX_HIDDEN;
extern struct siox__thread *siox__threads SIOX_HIDDEN;
SIOX_HIDDEN struct siox__thread *siox__thread_attach(void);
SIOX_HIDDEN int siox__aid_refill(struct siox__thread *t);
SIOX_HIDDEN void siox__thread_retire(struct siox__thread *t);
SIOX_HIDDEN void siox__threads_after_fork_child(void);
SIOX_HIDDEN void siox__stats_sum(uint64_t *activities, uint64_t *records, uint64_t *dropped);
SIOX_HIDDEN void siox__count_drop_global(void);

static inline __attribute__((always_inline)) void siox__bump(uint64_t *c) {
  __atomic_store_n(c, *c + 1, __ATOMIC_RELAXED);
}

/* Takes the next activity id of t's block (refilling the block when used
 * up); returns 0 when the process has used up the 2^32 ids. */
static inline __attribute__((always_inline)) siox_aid siox__aid_take(struct siox__thread *t) {
  if (SIOX_UNLIKELY(t->aid_next == t->aid_end && siox__aid_refill(t) < 0)) return 0;
  return t->aid_next++;
}

/* ---- the flusher's start (flusher.c; README "The flusher starts with the
 * first record") The first attach arms siox__start_by (clock units) at now
 * plus siox__cfg.start_ticks: 0 by default, so the first record starts the
 * flusher; SIOX_START_TICKS with SIOX_LATE_FLUSHER=1, so a short-lived
 * process (a few calls, then exit) hands its records over at exit from the
 * exiting thread and never pays for a thread. The first record written at
 * or after siox__start_by, or by a thread whose ring holds
 * SIOX_START_BYTES, starts it. 0: nothing due (the flusher runs, or no
 * thread has attached yet). Zero-initialised, so that it lies
 * in .bss on the page of the other globals the hot path reads (thread.c):
 * after a system call each page a call touches costs a page walk. */
#define SIOX_START_TICKS (1ull << 27) /* ~64 ms of a 2.1 GHz TSC; 134 ms in ns */
#define SIOX_START_BYTES (128u << 10)
SIOX_HIDDEN extern _Atomic uint64_t siox__start_by;
SIOX_HIDDEN void siox__start_due(void) __attribute__((cold));

/* Called after each record of t written at `now`: one relaxed load and a
 * compare once the flusher runs. */
static inline __attribute__((always_inline)) void siox__start_check(const struct siox__thread *t, uint64_t now) {
  uint64_t by = atomic_load_explicit(&siox__start_by, memory_order_relaxed);
  if (SIOX_UNLIKELY(by != 0) && (now >= by || t->head >= SIOX_START_BYTES)) siox__start_due();
}

/* Returns the calling thread's state, attaching it on first use; NULL when
 * recording is off (disabled, finalized, thread exiting, out of memory). */
static inline __attribute__((always_inline)) struct siox__thread *siox__thread_get(void) {
  struct siox__thread *t = siox__self;
  if (SIOX_UNLIKELY(t == NULL)) t = siox__thread_attach();
  return t;
}

/* own_fd.c: set (by the flusher thread) when it needs a descriptor made;
 * the next record written by an application thread calls siox__fd_assist,
 * which makes it. Keeps errno. */
SIOX_HIDDEN extern _Atomic int siox__fd_wanted;
SIOX_HIDDEN void siox__fd_assist(void) __attribute__((cold));
SIOX_HIDDEN void siox__fd_after_fork_child(void);

/* The ring of t may be past its fill mark (an eighth of it): refreshes
 * t->tail_cache and, when it is, wakes the flusher once (until the flusher
 * has visited t). Keeps errno. */
#define SIOX_RING_MARK_SHIFT 3
SIOX_HIDDEN void siox__ring_past_mark(struct siox__thread *t);
/* The rare steps after a ring write (flusher.c): siox__ring_past_mark when
 * past is set, siox__fd_assist when a descriptor is wanted. Keeps errno. */
SIOX_HIDDEN void siox__ring_rare(struct siox__thread *t, int past) __attribute__((cold));

/* Copies a record of `bytes` (a multiple of 8) with inline moves: a libc
 * memcpy call for ~80 bytes cost more than the copy itself. */
static inline void siox__copy_words(uint8_t *dst, const uint8_t *src, uint64_t bytes) {
  /* 16-byte steps: records are 48 bytes plus 16 per attribute, so this
   * loop has no remainder to mop up but the 8-byte string padding. */
  for (; bytes >= 16; bytes -= 16, dst += 16, src += 16) __builtin_memcpy(dst, src, 16);
  if (bytes) __builtin_memcpy(dst, src, 8);
}

/* Publishes the bytes just copied into t's ring up to head_new. buf, mask
 * and tail are the caller's copies of t's fields, read before its stores
 * into the ring (a byte store may alias t, so the compiler would otherwise
 * load each field again after the copy). Keeps errno. */
SIOX_HOT static inline __attribute__((always_inline)) void siox__ring_publish(struct siox__thread *t, uint8_t *buf,
                                                                         uint64_t mask, uint64_t tail,
                                                                         uint64_t head_new) {
  t->head = head_new;
  atomic_store_explicit(&t->pub_head, head_new, memory_order_release);
  siox__bump(&t->n_records);
  /* The next record's lines: fetched for writing now, while the caller
   * does its I/O, instead of stalling the next call on a store miss (the
   * ring is bigger than the caches, and the flusher read these lines last;
   * measured: the stores were ~90% of the ring write's samples under a
   * 4 KiB pwrite loop). A prefetch never faults. */
  __builtin_prefetch(buf + ((head_new + 64) & mask), 1, 3);
  __builtin_prefetch(buf + ((head_new + 128) & mask), 1, 3);
  /* Possibly past the fill mark (tail lags): a thread that streams
   * records wakes the flusher itself, rather than the flusher polling it
   * (flusher.c, STREAM_WAIT_MS), and a burst does not overrun the ring.
   * One test for both rare cases, both loads made (no short circuit):
   * otherwise gcc moved the second test into .text.unlikely and jumped
   * there and back on every record. */
  int past = head_new - tail > (mask + 1) >> SIOX_RING_MARK_SHIFT;
  int wanted = atomic_load_explicit(&siox__fd_wanted, memory_order_relaxed) != 0;
  if (SIOX_UNLIKELY(past | wanted)) siox__ring_rare(t, past);
}

/* Copies one record, made of the a_len bytes at a followed by the b_len
 * bytes at b (both multiples of 8; b may be NULL when b_len is 0), into the
 * owner's ring and publishes it: the record's fixed part and the attributes
 * a wrapper passes need no assembling first. Returns 0, or -ENOBUFS
 * (counted as dropped) when the ring has no room. */
SIOX_HOT static inline int siox__ring_write2(struct siox__thread *t, const void *a, uint32_t a_len, const void *b,
                                    uint32_t b_len) {
  uint8_t *buf = t->buf;
  uint64_t head = t->head, mask = t->mask, size = mask + 1, bytes = (uint64_t)a_len + b_len;
  if (SIOX_UNLIKELY(size - (head - t->tail_cache) < bytes)) {
    t->tail_cache = atomic_load_explicit(&t->tail, memory_order_acquire);
    if (size - (head - t->tail_cache) < bytes) {
      siox__bump(&t->n_dropped);
      return -ENOBUFS;
    }
  }
  uint64_t tail = t->tail_cache, off = head & mask, first = size - off;
  if (SIOX_LIKELY(first >= bytes)) {
    siox__copy_words(buf + off, a, a_len);
    if (b_len) siox__copy_words(buf + off + a_len, b, b_len);
  } else { /* the record wraps: byte-wise around the end */
    for (uint64_t i = 0; i < bytes; i++)
      buf[(off + i) & mask] = i < a_len ? ((const uint8_t *)a)[i] : ((const uint8_t *)b)[i - a_len];
  }
  siox__ring_publish(t, buf, mask, tail, head + bytes);
  return 0;
}

static inline int siox__ring_write(struct siox__thread *t, const void *rec, uint32_t bytes) {
  return siox__ring_write2(t, rec, bytes, NULL, 0);
}

/* Signal-safety guard around every per-thread write. */
static inline __attribute__((always_inline)) int siox__enter(struct siox__thread *t) {
  if (SIOX_UNLIKELY(t->busy)) {
    siox__bump(&t->n_dropped);
    return 0;
  }
  t->busy = 1;
  atomic_signal_fence(memory_order_seq_cst);
  return 1;
}
static inline __attribute__((always_inline)) void siox__leave(struct siox__thread *t) {
  atomic_signal_fence(memory_order_seq_cst);
  t->busy = 0;
}

/* ---- detached.c ---- */
SIOX_HIDDEN void siox__detached_fork_prepare(void);
SIOX_HIDDEN void siox__detached_fork_parent(void);
SIOX_HIDDEN void siox__detached_after_fork_child(void);

/* ---- registry.c ---- */
extern _Atomic uint32_t siox__ntypes SIOX_HIDDEN;
SIOX_HIDDEN int siox__node_valid(siox_unid node);
SIOX_HIDDEN int siox__target_valid(siox_target_id target);
/* Copies the registration bytes in [from, end) to dst (NULL: only reports
 * the end). Returns the log's current end. */
SIOX_HIDDEN uint64_t siox__reglog_read(uint64_t from, uint8_t *dst, uint64_t max);
SIOX_HIDDEN void siox__registry_after_fork_child(void);
SIOX_HIDDEN void siox__registry_fork_prepare(void);
SIOX_HIDDEN void siox__registry_fork_parent(void);

/* ---- identity.c ---- */
/* Builds the HELLO payload into a malloc'd buffer the caller frees. */
SIOX_HIDDEN int siox__hello_build(uint8_t **out, uint32_t *len);
SIOX_HIDDEN void siox__identity_init(void);
SIOX_HIDDEN void siox__identity_prepare(void); /* application threads: reads exe and args once */
/* The command line as HELLO sends it (NULs -> spaces, cut like HELLO's);
 * returns its length (not NUL-terminated). */
SIOX_HIDDEN size_t siox__identity_args(char *buf, size_t cap);

/* ---- conn.c ---- */
/* own_fd.c: the library's descriptors, moved high and guarded from the
 * application's close/dup2 (siox_internal_owns_fd). */
/* SIOX__FD_OFFER: a connected socket an application thread made and the
 * flusher has not taken yet (conn.c). */
/* SIOX__FD_STALE: the application's copy of a connection the flusher (with
 * its own table) closed, for an application thread to close. */
enum { SIOX__FD_SOCKET, SIOX__FD_WAKE, SIOX__FD_OFFER, SIOX__FD_STALE, SIOX__FD_SLOTS };
SIOX_HIDDEN int siox__own_fd_take(int slot, int fd);
SIOX_HIDDEN void siox__own_fd_drop(int slot);
SIOX_HIDDEN void siox__own_fd_set(int slot, int fd); /* fd, already high, now guarded as slot */
SIOX_HIDDEN void siox__own_fd_stale(int fd);
SIOX_HIDDEN void siox__own_fd_close_stale(void);
SIOX_HIDDEN int siox__fd_assist_hold(void);
SIOX_HIDDEN void siox__fd_assist_release(void);

/* own_table.c: the flusher thread's own descriptor table. */
extern SIOX_TLS int siox__own_table SIOX_HIDDEN; /* this thread has it */
SIOX_HIDDEN void siox__own_table_start(void);
SIOX_HIDDEN int siox__own_table_due(int timeout_ms);
SIOX_HIDDEN void siox__own_table_leave(void);
SIOX_HIDDEN int siox__own_table_active(void);
SIOX_HIDDEN void siox__own_table_after_fork_child(void);

SIOX_HIDDEN int siox__conn_connected(void);
/* may_open: the caller may make the socket itself (an application thread,
 * or the flusher with its own table, which makes it there); otherwise the
 * flusher takes the one offered, or asks for one. */
SIOX_HIDDEN int siox__conn_try_connect(int force, int may_open);
SIOX_HIDDEN int siox__conn_offer(void); /* application threads: a connected socket for the flusher */
SIOX_HIDDEN uint8_t *siox__conn_frame(uint16_t type, uint32_t payload);
SIOX_HIDDEN uint8_t *siox__conn_frame_seq(uint16_t type, uint32_t payload, uint32_t seq);
SIOX_HIDDEN size_t siox__conn_pending(void);
SIOX_HIDDEN int siox__conn_write(void);
SIOX_HIDDEN int siox__conn_fd(void);
SIOX_HIDDEN void siox__conn_reg_inflight(uint64_t reg_end);
SIOX_HIDDEN uint64_t siox__conn_reg_shipped(void);
SIOX_HIDDEN uint64_t siox__conn_bytes_sent(void);
SIOX_HIDDEN void siox__conn_close(void);
SIOX_HIDDEN void siox__conn_close_private(void); /* the flusher, last: its own table's socket */
SIOX_HIDDEN void siox__conn_check_peer(void);
SIOX_HIDDEN void siox__conn_after_fork_child(void);
SIOX_HIDDEN int siox__conn_all_acked(void);
SIOX_HIDDEN int siox__conn_recently_up(void);
SIOX_HIDDEN int siox__conn_handover(const struct siox_cw_stats *st, unsigned timeout_ms);

/* ---- retain.c: written frames the daemon has not acknowledged ---- */
#define SIOX_RETAIN_MAX (16u << 20) /* held bytes; no new ring data beyond */
SIOX_HIDDEN uint32_t siox__frame_activities(const uint8_t *frame);
SIOX_HIDDEN void siox__retain_written(const uint8_t *frames, size_t bytes, uint64_t base);
SIOX_HIDDEN void siox__retain_ack(uint64_t consumed);
SIOX_HIDDEN void siox__retain_lost(const uint8_t *frames, size_t bytes);
SIOX_HIDDEN uint64_t siox__retain_requeue(void);
SIOX_HIDDEN size_t siox__retain_bytes(void);
SIOX_HIDDEN int siox__retain_resend_pending(void);
SIOX_HIDDEN uint64_t siox__retain_activities(void);
SIOX_HIDDEN void siox__retain_clear(void);
SIOX_HIDDEN const uint8_t *siox__retain_frames(size_t *bytes);

/* ---- exit_loss.c: what could not be handed over at exit ---- */
SIOX_HIDDEN void siox__exit_account(int delivered);
SIOX_HIDDEN uint64_t siox__dropped_exit(void);

/* ---- flusher.c ---- */
SIOX_HIDDEN int siox__flusher_ensure(void);
SIOX_HIDDEN int siox__flusher_started(void); /* ever, in this process */
SIOX_HIDDEN int siox__flusher_send_here(void); /* application threads, no flusher yet */
SIOX_HIDDEN int siox__flusher_flush(unsigned timeout_ms);
SIOX_HIDDEN int siox__flusher_flush_here(unsigned timeout_ms); /* flusher stopped */
SIOX_HIDDEN void siox__flusher_stop(void);
SIOX_HIDDEN void siox__flusher_fork_prepare(void);
SIOX_HIDDEN void siox__flusher_fork_parent(void);
SIOX_HIDDEN void siox__flusher_after_fork_child(void);
SIOX_HIDDEN void siox__exec_restart(void); /* application threads: the flusher again after a failed exec */
SIOX_HIDDEN void siox__flusher_assist(int offered); /* application threads: a new wake-up fd if lost; wakes the flusher if offered */

#endif
