/*
 * Life cycle of the library in a process: lazy or explicit initialisation
 * from options and environment, SIOX_DISABLE, fork handlers, the flush at
 * exit (a destructor), and the process counters.
 */
#include <stdlib.h>

#include "client.h"

enum { ST_NONE, ST_ON, ST_OFF }; /* ST_OFF: disabled or finalized */

struct siox__config siox__cfg;
SIOX_TLS int siox__in_lib;
static _Atomic int state = ST_NONE;
static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;
static int atfork_done;
/* Exec attempts (see siox_internal_before_exec). */
static int exec_handed;            /* init_lock: handed over, exec failed, no record since */
static uint64_t exec_mark;         /* init_lock: records + drops at that hand-over */
static _Atomic int restart_wanted; /* the flusher waits for the next record to restart */
/* Records sent by their writer before the flusher thread starts (see
 * siox__start_due): each send costs its writer a system call (~5 us here)
 * and the daemon a wake-up, the thread ~0.1 ms of CPU and a join at exit;
 * most short commands make fewer records than this. */
#define EAGER_SENDS 16
static unsigned eager_sends; /* init_lock */

int siox_internal_in_library(void) {
  return siox__in_lib != 0;
}

static unsigned env_uint(const char *name, unsigned dflt) {
  const char *v = getenv(name);
  char *end;
  unsigned long n = v && *v ? strtoul(v, &end, 10) : 0;
  return (v && *v && *end == '\0' && n > 0 && n < (1ul << 31)) ? (unsigned)n : dflt;
}

static size_t pow2_at_least(size_t n) {
  size_t p = SIOX_RING_MIN;
  while (p < n) p <<= 1;
  return p;
}

/* Fills siox__cfg from options, then environment, then defaults. */
static int configure(const struct siox_options *o) {
  const char *path = o && o->socket_path ? o->socket_path : getenv(SIOX_ENV_SOCKET);
  if (!path || !*path) path = SIOX_DEFAULT_SOCKET;
  if (strlen(path) >= sizeof siox__cfg.socket_path) return -EINVAL;
  size_t buf = o && o->buffer_bytes ? o->buffer_bytes : (size_t)env_uint(SIOX_ENV_BUFFER, SIOX_RING_DEFAULT_KB) << 10;
  if (buf > SIOX_RING_MAX) return -EINVAL;
  memset(&siox__cfg, 0, sizeof siox__cfg);
  strcpy(siox__cfg.socket_path, path);
  /* A power of two keeps the ring index a mask; never below one max record. */
  siox__cfg.buffer_bytes = pow2_at_least(buf);
  siox__cfg.flush_interval_ms = o && o->flush_interval_ms ? o->flush_interval_ms : 20;
  siox__cfg.exit_timeout_ms =
      o && o->exit_timeout_ms ? o->exit_timeout_ms : env_uint(SIOX_ENV_EXIT_TIMEOUT, 1000);
  unsigned slots = env_uint(SIOX_ENV_DETACHED, SIOX_DETACHED_DEFAULT);
  siox__cfg.detached_slots = slots < SIOX_DETACHED_MAX ? slots : SIOX_DETACHED_MAX;
  /* Late only when asked: a process that records at its start and is then
   * killed while quiet would lose those records uncounted (README). */
  siox__cfg.start_ticks = env_uint(SIOX_ENV_LATE_FLUSHER, 0) ? SIOX_START_TICKS : 0;
  return 0;
}

static void fork_prepare(void) {
  siox__in_lib++;
  pthread_mutex_lock(&init_lock);
  siox__flusher_fork_prepare();
  pthread_mutex_lock(&siox__threads_lock);
  siox__registry_fork_prepare();
  siox__detached_fork_prepare();
}

static void fork_parent(void) {
  siox__detached_fork_parent();
  siox__registry_fork_parent();
  pthread_mutex_unlock(&siox__threads_lock);
  siox__flusher_fork_parent();
  pthread_mutex_unlock(&init_lock);
  siox__in_lib--;
}

static void fork_child(void) {
  pthread_mutex_init(&init_lock, NULL);
  siox__registry_after_fork_child();
  siox__threads_after_fork_child();
  siox__detached_after_fork_child();
  siox__conn_after_fork_child();
  siox__flusher_after_fork_child();
  siox__fd_after_fork_child();
  siox__identity_init(); /* new nonce: the child is a new process */
  exec_handed = 0;
  eager_sends = 0;
  atomic_store(&restart_wanted, 0);
  siox__in_lib--;
}

/* Called with init_lock held. */
static int init_locked(const struct siox_options *o) {
  const char *off = getenv(SIOX_ENV_DISABLE);
  if (off && strcmp(off, "1") == 0) {
    atomic_store(&state, ST_OFF);
    return 0;
  }
  int rc = configure(o);
  if (rc < 0) return rc;
  siox__clock_init();
  siox__identity_init();
  if (!atfork_done) atfork_done = pthread_atfork(fork_prepare, fork_parent, fork_child) == 0;
  /* The flusher starts with the first thread that records (thread.c) or
   * the first siox_flush: a process that only registers (a preloaded
   * /bin/true) costs no thread, no connection and no exit flush. */
  atomic_store(&state, ST_ON);
  return 0;
}

int siox_init(const struct siox_options *opt) {
  siox__in_lib++;
  pthread_mutex_lock(&init_lock);
  int rc = atomic_load(&state) != ST_NONE ? -EALREADY : init_locked(opt);
  pthread_mutex_unlock(&init_lock);
  siox__in_lib--;
  return rc;
}

int siox__ensure(void) {
  int s = atomic_load_explicit(&state, memory_order_acquire);
  if (SIOX_UNLIKELY(s == ST_NONE)) {
    siox__in_lib++;
    pthread_mutex_lock(&init_lock);
    if (atomic_load(&state) == ST_NONE && init_locked(NULL) < 0) atomic_store(&state, ST_OFF);
    pthread_mutex_unlock(&init_lock);
    siox__in_lib--;
    s = atomic_load(&state);
  }
  return s == ST_ON;
}

int siox_flush(unsigned timeout_ms) {
  if (!siox__ensure()) return 0;
  siox__in_lib++;
  int rc = siox__flusher_ensure();
  if (rc == 0) rc = siox__flusher_flush(timeout_ms);
  siox__in_lib--;
  return rc;
}

/* No flusher ever ran, no record was written and nothing was dropped (a
 * process that only registered): nothing to hand over at exit. */
static int nothing_to_hand_over(void) {
  uint64_t activities, records, dropped;
  siox__stats_sum(&activities, &records, &dropped);
  return !siox__flusher_started() && records == 0 && dropped == 0;
}

/* Application threads, from the hot path (client.h, siox__start_check):
 * a record was written while no flusher thread runs. By default its
 * writer sends it at once (siox__flusher_send_here), for the first
 * EAGER_SENDS records of the process; then, or when that cannot send
 * everything (no daemon, a full socket), the flusher thread starts. So a
 * short process (open, write, close, exit) never pays for a thread
 * (README "Fork and threads"), and a process that records and then goes
 * quiet still has its records at the daemon while it runs. With
 * SIOX_LATE_FLUSHER=1 the caller comes here only once the start is due.
 * trylock: the caller may be a signal handler that interrupted a holder
 * of init_lock, or the thread finalizing. It leaves `due` raised, and the
 * holder looks at it again after unlocking: a record another thread wrote
 * during a send is sent too, not left in its ring until that thread's
 * next record (which a quiet process never makes). */
void siox__start_due(void) {
  static _Atomic int due;
  int err = errno, cancel; /* inside a wrapper: the application's errno */
  /* The send is a cancellation point; cancelled there, the thread would
   * leave init_lock and cycle_lock held and siox__in_lib raised. */
  pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel);
  siox__in_lib++;
  atomic_store(&due, 1);
  while (atomic_load(&due) && pthread_mutex_trylock(&init_lock) == 0) {
    atomic_store(&due, 0);
    if (atomic_load(&state) != ST_ON) {
      atomic_store_explicit(&siox__start_by, 0, memory_order_relaxed);
    } else if (atomic_load_explicit(&siox__start_by, memory_order_relaxed) != 0) { /* 0: the flusher runs */
      if (siox__cfg.start_ticks == 0 && eager_sends < EAGER_SENDS && siox__flusher_send_here()) eager_sends++;
      else (void)siox__flusher_ensure();
    }
    pthread_mutex_unlock(&init_lock);
  }
  siox__in_lib--;
  errno = err;
  pthread_setcancelstate(cancel, NULL);
}

/* Stops the flusher, flushes from this thread, then hands over or spills
 * (exit_loss.c) what is left. init_lock held, state ON. */
static int hand_over(unsigned timeout_ms) {
  atomic_store(&restart_wanted, 0); /* stopped here for good, or until the exec fails */
  /* The flusher thread stops first and this thread flushes: one hand-over
   * (the join) instead of a wake-up, a report and a join. */
  siox__flusher_stop();
  int rc = siox__flusher_flush_here(timeout_ms);
  siox__exit_account(rc == 0);
  return rc;
}

int siox_finalize(void) {
  siox__in_lib++;
  pthread_mutex_lock(&init_lock);
  int rc = 0;
  if (atomic_load(&state) == ST_ON && !nothing_to_hand_over()) rc = hand_over(siox__cfg.exit_timeout_ms);
  if (atomic_load(&state) == ST_ON) atomic_store(&state, ST_OFF);
  pthread_mutex_unlock(&init_lock);
  siox__in_lib--;
  return rc;
}

/* Exec attempts. A shell (dash), Python's os.execvp and any program that
 * searches PATH itself call execve once per PATH entry until one succeeds:
 * handing over before each (stop the flusher, flush, maybe a loss file)
 * and restarting the flusher after each failure cost a command found in
 * the 5th entry four needless rounds. So a failed exec leaves the flusher
 * stopped (exec_handed) and asks for its restart through siox__fd_wanted:
 * the next record any application thread writes restarts it
 * (siox__exec_restart), at no cost to the hot path, which reads that flag
 * anyway. The next exec hands over again only if something was recorded
 * or dropped since (exec_mark); otherwise there is nothing new to give. */

static uint64_t record_mark(void) {
  uint64_t activities, records, dropped;
  siox__stats_sum(&activities, &records, &dropped);
  return records + dropped;
}

int siox_internal_before_exec(unsigned timeout_ms) {
  if (atomic_load_explicit(&state, memory_order_acquire) != ST_ON) return 0;
  siox__in_lib++;
  pthread_mutex_lock(&init_lock);
  int rc = 0;
  if (atomic_load(&state) == ST_ON && !nothing_to_hand_over()) {
    if (exec_handed && record_mark() == exec_mark) {
      atomic_store(&restart_wanted, 0);
      siox__flusher_stop(); /* a siox_flush may have started it meanwhile */
    } else {
      rc = hand_over(timeout_ms);
      exec_handed = 1;
      exec_mark = record_mark();
    }
  }
  pthread_mutex_unlock(&init_lock);
  siox__in_lib--;
  return rc;
}

void siox_internal_exec_failed(void) {
  if (atomic_load_explicit(&state, memory_order_acquire) != ST_ON || !siox__flusher_started()) return;
  /* Not now: the caller may try the next PATH entry at once. */
  atomic_store(&restart_wanted, 1);
  atomic_store(&siox__fd_wanted, 1);
}

/* Application threads, from siox__fd_assist (so possibly a signal handler:
 * trylock, and the flag stays up for the next record if the lock is held). */
void siox__exec_restart(void) {
  if (SIOX_LIKELY(!atomic_load(&restart_wanted))) return;
  if (pthread_mutex_trylock(&init_lock) != 0) {
    atomic_store(&siox__fd_wanted, 1);
    return;
  }
  atomic_store(&restart_wanted, 0);
  /* If it cannot start, records wait and the exit flush ships them. */
  if (exec_handed && atomic_load(&state) == ST_ON) (void)siox__flusher_ensure();
  exec_handed = 0;
  pthread_mutex_unlock(&init_lock);
}

/* Exit flushes what the process recorded, bounded by the exit timeout. */
__attribute__((destructor)) static void at_unload(void) {
  siox_finalize();
}

int siox_stats_get(struct siox_stats *out) {
  if (!out) return -EINVAL;
  memset(out, 0, sizeof *out);
  if (atomic_load(&state) == ST_NONE) return 0;
  /* A signal handler recording meanwhile records nothing: it could need
   * the threads lock held here (siox__flusher_send_here). */
  siox__in_lib++;
  siox__stats_sum(&out->activities, &out->records, &out->dropped);
  siox__in_lib--;
  out->bytes_sent = siox__conn_bytes_sent();
  out->connected = siox__conn_connected();
  out->dropped_exit = siox__dropped_exit();
  return 0;
}
