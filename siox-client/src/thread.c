/*
 * Per-thread state: created on a thread's first SIOX call (the only
 * allocation a thread costs), listed for the flusher, closed by a pthread key
 * destructor at thread exit and freed by the flusher once drained. Also hands
 * out blocks of activity ids so that the hot path needs no atomics.
 */
#include <stdlib.h>
#include <sys/mman.h>

#include "client.h"

SIOX_TLS struct siox__thread *siox__self;
static SIOX_TLS int thread_dead; /* past our key destructor: record nothing */

_Atomic uint64_t siox__start_by; /* client.h: here for its page */
pthread_mutex_t siox__threads_lock = PTHREAD_MUTEX_INITIALIZER;
struct siox__thread *siox__threads;

static pthread_key_t thread_key;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;
static int key_made;
static uint32_t next_index = 1;
static _Atomic uint64_t next_aid = 1;
/* Counters of retired threads and of drops no thread could count. */
static _Atomic uint64_t retired_activities, retired_records, retired_dropped;

static void thread_exit(void *arg) {
  struct siox__thread *t = arg;
  siox__self = NULL;
  thread_dead = 1;
  atomic_store_explicit(&t->closed, 1, memory_order_release);
}

static void key_create(void) {
  key_made = pthread_key_create(&thread_key, thread_exit) == 0;
}

/* Bytes of the state in front of its ring: whole pages, so the ring is
 * page-aligned (the flusher faults it in ahead of its owner, flusher.c). */
static size_t state_bytes(void) {
  return (sizeof(struct siox__thread) + SIOX_THREAD_ALIGN - 1) & ~(size_t)(SIOX_THREAD_ALIGN - 1);
}

/* Allocates the calling thread's state and its ring in one anonymous
 * mapping; the flusher unmaps it (siox__thread_retire) after the thread
 * has exited. Fresh pages are zero and untouched: no memset, and a thread
 * that writes a few records costs the page faults of the state's first
 * page and the ring's first, not the ~14 KiB of state a malloc plus memset
 * touched (4 page faults, ~20 us each on the test VM) and a heap grown for
 * it. */
static struct siox__thread *thread_create(void) {
  size_t head = state_bytes();
  void *p = mmap(NULL, head + siox__cfg.buffer_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return NULL;
  struct siox__thread *t = p;
  t->buf = (uint8_t *)p + head;
  t->mask = siox__cfg.buffer_bytes - 1;
  return t;
}

static void thread_free(struct siox__thread *t) {
  munmap(t, state_bytes() + t->mask + 1);
}

struct siox__thread *siox__thread_attach(void) {
  if (thread_dead || !siox__ensure()) return NULL;
  siox__in_lib++;
  struct siox__thread *t = NULL;
  pthread_once(&key_once, key_create);
  /* The flusher is not started here: the first attach arms its start
   * (client.h, siox__start_by), which the first record (or, with
   * SIOX_LATE_FLUSHER=1, a later one) makes. */
  if ((t = thread_create()) != NULL) {
    if (!siox__flusher_started()) {
      uint64_t none = 0;
      atomic_compare_exchange_strong(&siox__start_by, &none, siox__clock_now() + siox__cfg.start_ticks);
    }
    pthread_setspecific(thread_key, t);
    pthread_mutex_lock(&siox__threads_lock);
    t->index = next_index++;
    t->next = siox__threads;
    siox__threads = t;
    pthread_mutex_unlock(&siox__threads_lock);
    siox__self = t;
  } else {
    siox__count_drop_global();
  }
  siox__in_lib--;
  return t;
}

/* Takes the next block of ids: one atomic per SIOX_AID_BLOCK activities.
 * Ids stay below 2^32 because the server puts the process id above them. */
int siox__aid_refill(struct siox__thread *t) {
  uint64_t first = atomic_fetch_add_explicit(&next_aid, SIOX_AID_BLOCK, memory_order_relaxed);
  if (first + SIOX_AID_BLOCK > UINT32_MAX) return -ERANGE;
  t->aid_next = first;
  t->aid_end = first + SIOX_AID_BLOCK;
  return 0;
}

/* Called by the flusher with siox__threads_lock held, after unlinking t. */
void siox__thread_retire(struct siox__thread *t) {
  atomic_fetch_add(&retired_activities, __atomic_load_n(&t->n_activities, __ATOMIC_RELAXED));
  atomic_fetch_add(&retired_records, __atomic_load_n(&t->n_records, __ATOMIC_RELAXED));
  atomic_fetch_add(&retired_dropped, __atomic_load_n(&t->n_dropped, __ATOMIC_RELAXED));
  thread_free(t);
}

void siox__count_drop_global(void) {
  atomic_fetch_add(&retired_dropped, 1);
}

void siox__stats_sum(uint64_t *activities, uint64_t *records, uint64_t *dropped) {
  pthread_mutex_lock(&siox__threads_lock);
  *activities = atomic_load(&retired_activities);
  *records = atomic_load(&retired_records);
  *dropped = atomic_load(&retired_dropped);
  for (struct siox__thread *t = siox__threads; t; t = t->next) {
    *activities += __atomic_load_n(&t->n_activities, __ATOMIC_RELAXED);
    *records += __atomic_load_n(&t->n_records, __ATOMIC_RELAXED);
    *dropped += __atomic_load_n(&t->n_dropped, __ATOMIC_RELAXED);
  }
  pthread_mutex_unlock(&siox__threads_lock);
}

/* The child of fork() is a new process: every buffered record belongs to the
 * parent (which ships it), the other threads do not exist here, and ids and
 * counters start over. The forking thread re-attaches on its next call. */
void siox__threads_after_fork_child(void) {
  pthread_mutex_init(&siox__threads_lock, NULL);
  struct siox__thread *t = siox__threads;
  while (t) {
    struct siox__thread *next = t->next;
    thread_free(t);
    t = next;
  }
  siox__threads = NULL;
  siox__self = NULL;
  if (key_made) pthread_setspecific(thread_key, NULL);
  next_index = 1;
  atomic_store(&next_aid, 1);
  atomic_store(&retired_activities, 0);
  atomic_store(&retired_records, 0);
  atomic_store(&retired_dropped, 0);
}
