/*
 * The flusher thread's own descriptor table.
 *
 * Why. A process whose threads share one descriptor table pays for the
 * sharing on every system call that names a descriptor: the kernel's
 * fdget() skips the file's reference count (an atomic increment and
 * decrement on a shared line) only while the table has a single user, and
 * read()/write() skip the file position lock only then. In a
 * single-threaded application the flusher is that second user: an idle
 * second thread alone added ~30 ns to every 4 KiB pwrite on the test VM.
 * So the flusher takes a copy of the table for itself (unshare(CLONE_FILES),
 * see "When" below), and the application's table has one user again.
 *
 * The copy holds a reference to every file the application had open at
 * that moment: they are closed in it at once (close_range around the
 * library's own descriptors), or a pipe's write end the application closes
 * would never reach EOF at the reader, a deleted file would keep its
 * blocks, a socket would not close. The copy and the close happen while
 * no application thread can make or drop one of the library's descriptors
 * (the assist flag is held, own_fd.c), so the list of own descriptors read
 * after the copy is exact. The closes are raw system calls: the POSIX
 * layer's close() would record them and forget the application's entries
 * for those numbers.
 *
 * Consequences (conn.c, own_fd.c):
 * - The descriptors made before the copy (the wake-up eventfd, the first
 *   socket, both made by an application thread) are in both tables at the
 *   same numbers: the exit hand-over on the exiting thread, fork() and a
 *   flusher restarted after a failed exec go on using them.
 * - A socket the flusher makes later (a reconnect) is in its own table
 *   only, at any number. No application number is touched, so the flusher
 *   makes it itself (own_fd.c's rule (3) is about the shared table), with
 *   calls the POSIX layer does not wrap or raw system calls. Before the
 *   thread ends it closes that socket: the exiting thread connects again
 *   and re-sends what was not acknowledged, as after any reconnect.
 * - A shared socket the flusher closes is shut down (the daemon sees the
 *   end though the application's table still holds it) and left to an
 *   application thread to close (SIOX__FD_STALE).
 * - Application threads offer no socket while such a flusher runs.
 *
 * Without close_range (Linux < 5.9), or if the copy cannot be made, the
 * flusher shares the table as before.
 *
 * When. The copy is not free: it is as big as the highest open descriptor,
 * i.e. the library's own, parked near the soft fd limit (own_fd.c): ~55-70
 * us of CPU with them at 4064, more than a short process (open, write,
 * close) spends in the library. It saves ~25 ns per system call, so it
 * pays after ~2,000 calls: the flusher takes it once the process has made
 * TABLE_RECORDS records. To not run the first 20 ms of a busy loop (~40k
 * calls) on the shared table, the flusher looks every millisecond during
 * its first TABLE_POLL_FOR_MS (at most 20 extra wake-ups per process), then
 * at each cycle. Nothing else changes by the delay: until the copy the
 * flusher makes no descriptor (own_fd.c's rule (3)), so the library's
 * descriptors at the copy are all in the application's table, as at the
 * start; an offered socket not yet taken is one of them (shared).
 */
#include <sched.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "client.h"

#define HOLD_TRIES 1000 /* 100 us apart: an assist takes microseconds */
#define TABLE_RECORDS 2048     /* records the process made: the copy pays */
#define TABLE_POLL_MS 1        /* the flusher looks this often, */
#define TABLE_POLL_FOR_MS 20   /* for this long after it started */

SIOX_TLS int siox__own_table;
static _Atomic int active; /* a flusher with its own table runs */
static SIOX_TLS int tried;       /* this flusher thread tried the copy */
static SIOX_TLS int64_t born_ms; /* this flusher thread's start */

static int64_t mono_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int close_range_raw(unsigned first, unsigned last) {
  return (int)syscall(SYS_close_range, first, last, 0);
}

/* Closes every descriptor of the calling thread's (private) table but the
 * library's own. */
static void close_all_but_own(void) {
  int own[SIOX_INTERNAL_OWN_FDS_MAX], n = siox_internal_own_fds(own);
  unsigned from = 0;
  for (int i = 0; i < n; i++) {
    unsigned fd = (unsigned)own[i];
    if (fd > from) close_range_raw(from, fd - 1);
    if (fd + 1 > from) from = fd + 1;
  }
  close_range_raw(from, ~0u);
}

/* Waits (bounded) until no application thread is in siox__fd_assist and
 * keeps the others out. Returns 0 when one stayed inside (a signal handler
 * that never returned): then the table stays shared. */
static int hold_assist(void) {
  for (int i = 0; i < HOLD_TRIES; i++) {
    if (siox__fd_assist_hold()) return 1;
    nanosleep(&(struct timespec){0, 100000}, NULL);
  }
  return 0;
}

/* Copies the table (the flusher thread, holding no lock). */
static void own_table_enter(void) {
  /* Probe: a range past any descriptor closes nothing where close_range exists. */
  if (close_range_raw(~0u, ~0u) < 0 || !hold_assist()) return;
  if (unshare(CLONE_FILES) == 0) {
    close_all_but_own();
    siox__own_table = 1;
    atomic_store(&active, 1);
  }
  siox__fd_assist_release();
}

/* The flusher thread, first: the copy is not made yet. */
void siox__own_table_start(void) {
  tried = 0;
  born_ms = mono_ms();
}

/* The flusher thread, before each cycle: makes the copy once the process
 * has made enough records for it to pay. Returns the longest the flusher
 * may wait before it looks again (timeout_ms, or less while it is young). */
int siox__own_table_due(int timeout_ms) {
  if (tried) return timeout_ms;
  uint64_t activities, records, dropped;
  siox__stats_sum(&activities, &records, &dropped);
  if (records + dropped >= TABLE_RECORDS) {
    tried = 1;
    own_table_enter();
    return timeout_ms;
  }
  return mono_ms() - born_ms < TABLE_POLL_FOR_MS && timeout_ms > TABLE_POLL_MS ? TABLE_POLL_MS : timeout_ms;
}

/* The flusher thread, last: its socket has been closed. */
void siox__own_table_leave(void) {
  atomic_store(&active, 0);
}

int siox__own_table_active(void) {
  return atomic_load(&active);
}

/* No thread survives fork() but the caller. */
void siox__own_table_after_fork_child(void) {
  atomic_store(&active, 0);
}
