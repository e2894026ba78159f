/*
 * The library's own file descriptors (the daemon socket and the flusher's
 * eventfd), kept out of the application's way.
 *
 * Applications close descriptors they never opened: a launcher's child
 * closes every fd from 3 up before exec (OpenMPI's orterun), a daemon
 * closes 0..2 and opens /dev/null expecting fd 0. Before this, such a
 * close took the library's socket and eventfd away, the next socket()
 * reused the eventfd's number, and the flusher then read 8 bytes of every
 * ACK as a wake-up (the ACK stream broke: reconnect, resend everything
 * held, again, a few hundred times a second until exec) and wrote its
 * wake-up word into the daemon socket ("bad frame magic"); a number reused
 * by the application would have had SIOX bytes written into its file.
 *
 * So the library (1) moves each of its descriptors to a high number, far
 * from the lowest-free numbers applications expect to get, and (2) records
 * them here, so that the POSIX layer's close/dup2/dup3/close_range wrappers
 * leave them alone (siox_internal_owns_fd).
 *
 * (3) The flusher thread makes no descriptor at all. Every new descriptor
 * takes the lowest free number for a moment, and single-threaded programs
 * leave a number free on purpose: dash redirects `echo x >f` with
 * close(1), then dup2(f, 1). A socket (or the /proc/self/cmdline read)
 * made by the flusher in that gap took number 1, dup2 replaced it, and the
 * flusher's close then closed the program's stdout ("echo: I/O error",
 * 1 run in 1,000 under load). So the flusher asks (siox__fd_wanted) and
 * the application's own next SIOX call makes the descriptor
 * (siox__fd_assist): inside the program's own call, the number is free
 * again before the program goes on.
 *
 * (Rule (3) is about the application's table. A flusher with a table of
 * its own (own_table.c) makes its reconnect sockets there itself; an
 * application thread closes the library's copy of a connection that such
 * a flusher closed, SIOX__FD_STALE.)
 */
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include "client.h"

_Static_assert(SIOX__FD_SLOTS <= SIOX_INTERNAL_OWN_FDS_MAX, "room in siox_internal_own_fds");

/* Highest floor: a process with a huge descriptor limit still gets a small
 * table (the kernel sizes it to the highest number in use). */
#define PARK_TOP 4096
#define PARK_GAP 32 /* numbers left free below the soft limit */

_Static_assert(SIOX__FD_SLOTS == 4, "one initialiser per slot");
static _Atomic int own[SIOX__FD_SLOTS] = {-1, -1, -1, -1};

_Atomic int siox__fd_wanted;
static _Atomic int assisting; /* a thread is in siox__fd_assist */

/* The lowest number a library descriptor is moved to. */
static int park_floor(void) {
  struct rlimit rl;
  rlim_t cur = getrlimit(RLIMIT_NOFILE, &rl) == 0 ? rl.rlim_cur : 1024;
  if (cur > PARK_TOP) cur = PARK_TOP;
  return cur > 2 * PARK_GAP ? (int)(cur - PARK_GAP) : (int)(cur / 2);
}

/* Moves fd (a new library descriptor, close-on-exec) high and records it in
 * slot; returns the descriptor to use. When it cannot be moved (no free
 * number up there) it stays where it is, recorded all the same. */
int siox__own_fd_take(int slot, int fd) {
  if (fd < 0) return fd;
  int floor = park_floor();
  if (fd < floor) {
    int high = fcntl(fd, F_DUPFD_CLOEXEC, floor);
    if (high >= 0) {
      close(fd);
      fd = high;
    }
  }
  atomic_store(&own[slot], fd);
  return fd;
}

void siox__own_fd_set(int slot, int fd) {
  atomic_store(&own[slot], fd);
}

/* The descriptor of slot is about to be closed by the library. */
void siox__own_fd_drop(int slot) {
  atomic_store(&own[slot], -1);
}

int siox_internal_owns_fd(int fd) {
  if (fd < 0) return 0;
  for (int i = 0; i < SIOX__FD_SLOTS; i++)
    if (atomic_load_explicit(&own[i], memory_order_relaxed) == fd) return 1;
  return 0;
}

int siox_internal_own_fds(int *fds) {
  int n = 0;
  for (int i = 0; i < SIOX__FD_SLOTS; i++) {
    int fd = atomic_load_explicit(&own[i], memory_order_relaxed);
    if (fd < 0) continue;
    int j = n++;
    for (; j > 0 && fds[j - 1] > fd; j--) fds[j] = fds[j - 1];
    fds[j] = fd;
  }
  return n;
}

/* The flusher with its own table shut a connection down that the
 * application's table holds too: an application thread closes that copy
 * (siox__own_fd_close_stale), at its next record. Guarded until then. One
 * at a time: only the first socket of a flusher's life is shared. */
void siox__own_fd_stale(int fd) {
  atomic_store(&own[SIOX__FD_STALE], fd);
  atomic_store(&siox__fd_wanted, 1);
}

/* Application threads (and the fork child, and the exiting thread): closed
 * first, unguarded after, so that the number is never the application's
 * to reuse while it is still ours. */
void siox__own_fd_close_stale(void) {
  int fd = atomic_load(&own[SIOX__FD_STALE]);
  if (fd < 0) return;
  close(fd);
  atomic_compare_exchange_strong(&own[SIOX__FD_STALE], &fd, -1);
}

/* own_table.c: keeps application threads out of siox__fd_assist while the
 * flusher copies the table. Returns 1 when held. */
int siox__fd_assist_hold(void) {
  return !atomic_exchange(&assisting, 1);
}

void siox__fd_assist_release(void) {
  atomic_store(&assisting, 0);
}

/* Application threads only (the flusher thread never calls this): makes
 * what the flusher asked for. Lock-free, so that a wrapper called from a
 * signal handler may come here; a thread that finds another (or itself,
 * interrupted) at work leaves it to that one. */
void siox__fd_assist(void) {
  if (atomic_exchange(&assisting, 1)) return;
  atomic_store(&siox__fd_wanted, 0); /* first: a request made meanwhile stays */
  int err = errno, cancel;
  /* connect is a cancellation point: cancelled there, the thread would
   * leave `assisting` set, and no thread could make a socket again. */
  pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel);
  siox__in_lib++; /* the wrappers of close/fcntl must not trace these */
  siox__identity_prepare();
  siox__own_fd_close_stale();
  /* A flusher with its own table makes its sockets itself. */
  int offered = siox__own_table_active() ? 0 : siox__conn_offer();
  siox__exec_restart();
  siox__flusher_assist(offered);
  siox__in_lib--;
  pthread_setcancelstate(cancel, NULL);
  errno = err;
  atomic_store(&assisting, 0);
}

/* The child of fork() has only the forking thread: a flag another thread
 * held at the fork would never be lowered. */
void siox__fd_after_fork_child(void) {
  atomic_store(&assisting, 0);
  atomic_store(&siox__fd_wanted, 0);
  siox__own_fd_close_stale();
  siox__own_table_after_fork_child();
}
