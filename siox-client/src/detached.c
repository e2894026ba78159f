/*
 * Detached activities (asynchronous completions): started in one thread,
 * stopped in any. An open one lives in a slot of a process-wide pool instead
 * of a thread's stack; stop copies the slot, already an ACTIVITY wire record,
 * into the STOPPING thread's ring, from where the flusher ships it as usual.
 */
#include <stdlib.h>

#include "client.h"

/* One slot: the ACTIVITY record in wire layout plus the free-list link. A
 * cache line multiple, so two threads using neighbouring slots do not
 * share a line. */
struct siox_detached {
  struct siox__open rec;
  _Atomic uint32_t next; /* free list: index + 1 of the next free slot, 0 = end */
  uint32_t in_use;       /* 1 from start to stop; read by the fork child */
  uint32_t stale;        /* opened in the parent before fork(): record nothing */
} __attribute__((aligned(64)));

/* The pool: allocated on the first detached start, kept for the process
 * lifetime. free_head is a tagged index (tag << 32 | slot index + 1): every
 * successful pop or push bumps the tag, so a pop that read a stale `next`
 * (the slot was popped and pushed back meanwhile: ABA) fails its CAS. */
static struct siox_detached *_Atomic slots;
static uint32_t nslots;
static _Atomic uint64_t free_head;
static int pool_failed; /* allocation failed once: do not retry on every call */
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;

/* ---------------------------------------------------------------------------
 * The lock-free free list
 * ------------------------------------------------------------------------- */
static inline uint64_t tagged(uint64_t old, uint32_t index1) {
  return (((old >> 32) + 1) << 32) | index1;
}

/* Acquire pairs with push's release: what the slot's previous user wrote is
 * visible before the new user writes it. */
static inline struct siox_detached *pool_pop(struct siox_detached *p) {
  uint64_t old = atomic_load_explicit(&free_head, memory_order_acquire), new;
  do {
    uint32_t i1 = (uint32_t)old;
    if (SIOX_UNLIKELY(i1 == 0)) return NULL;
    new = tagged(old, atomic_load_explicit(&p[i1 - 1].next, memory_order_relaxed));
  } while (!atomic_compare_exchange_weak_explicit(&free_head, &old, new, memory_order_acquire,
                                                  memory_order_acquire));
  return &p[(uint32_t)old - 1];
}

static inline void pool_push(struct siox_detached *p, struct siox_detached *a) {
  uint32_t i1 = (uint32_t)(a - p) + 1;
  uint64_t old = atomic_load_explicit(&free_head, memory_order_relaxed);
  do {
    atomic_store_explicit(&a->next, (uint32_t)old, memory_order_relaxed);
  } while (!atomic_compare_exchange_weak_explicit(&free_head, &old, tagged(old, i1), memory_order_release,
                                                  memory_order_relaxed));
}

/* Links every slot not in use into a fresh free list (lowest index first);
 * only while no other thread can touch the pool. */
static void pool_relink(struct siox_detached *p, uint32_t n) {
  uint32_t head = 0;
  for (uint32_t i = n; i-- > 0;) {
    if (p[i].in_use) continue;
    atomic_store_explicit(&p[i].next, head, memory_order_relaxed);
    head = i + 1;
  }
  atomic_store_explicit(&free_head, head, memory_order_release);
}

/* Returns the pool, allocating it on first use (once per process: the only
 * allocation detached activities cost; never freed). NULL when out of memory. */
static struct siox_detached *pool_get(void) {
  struct siox_detached *p = atomic_load_explicit(&slots, memory_order_acquire);
  if (SIOX_LIKELY(p != NULL)) return p;
  siox__in_lib++;
  pthread_mutex_lock(&pool_lock);
  p = atomic_load_explicit(&slots, memory_order_relaxed);
  if (p == NULL && !pool_failed) {
    uint32_t n = siox__cfg.detached_slots;
    p = calloc(n, sizeof *p);
    pool_failed = p == NULL;
    if (p) {
      nslots = n;
      pool_relink(p, n);
      atomic_store_explicit(&slots, p, memory_order_release);
    }
  }
  pthread_mutex_unlock(&pool_lock);
  siox__in_lib--;
  return p;
}

/* ---------------------------------------------------------------------------
 * The API
 * ------------------------------------------------------------------------- */

/* A drop seen by a thread that may not own the activity: counted on the
 * calling thread (siox__enter counts it when re-entered), else globally. */
static void count_drop(void) {
  struct siox__thread *t = siox__self;
  if (t == NULL) {
    siox__count_drop_global();
  } else if (siox__enter(t)) {
    siox__bump(&t->n_dropped);
    siox__leave(t);
  }
}

/* The aid comes from the starting thread's block; the slot from the pool. */
siox_detached *siox_activity_start_detached(siox_type_id type, siox_aid parent) {
  if (SIOX_UNLIKELY(siox__in_lib)) return NULL; /* as start() in activity.c */
  struct siox__thread *t = siox__thread_get();
  if (SIOX_UNLIKELY(t == NULL)) return NULL;
  struct siox_detached *p = pool_get(), *a = NULL;
  if (SIOX_UNLIKELY(!siox__enter(t))) return NULL;
  uint32_t ntypes = atomic_load_explicit(&siox__ntypes, memory_order_relaxed);
  siox_aid aid = 0;
  if (SIOX_UNLIKELY(p == NULL || type - 1u >= ntypes || (a = pool_pop(p)) == NULL ||
                    (aid = siox__aid_take(t)) == 0)) {
    if (a) pool_push(p, a);
    a = NULL;
    siox__bump(&t->n_dropped);
    goto out;
  }
  a->rec.hdr.type = SIOX_REC_ACTIVITY;
  a->rec.hdr.a = type;
  a->rec.act.aid = aid;
  a->rec.act.parent = parent;
  a->rec.act.err = 0;
  a->rec.act.nattr = 0;
  a->stale = 0;
  __atomic_store_n(&a->in_use, 1, __ATOMIC_RELAXED);
  a->rec.act.t_start = siox__clock_now(); /* last: bookkeeping stays outside */
out:
  siox__leave(t);
  return a;
}

siox_aid siox_detached_aid(const siox_detached *a) {
  return a ? a->rec.act.aid : 0;
}

/* Appends one numeric attribute; a full attribute list counts a drop. */
static inline void attr_add(siox_detached *a, uint32_t attr, uint32_t vtype, uint64_t bits) {
  if (SIOX_UNLIKELY(a == NULL)) return;
  if (SIOX_UNLIKELY(a->rec.act.nattr == SIOX_CW_MAX_ATTRS)) {
    count_drop();
    return;
  }
  struct siox_cw_attr *x = &a->rec.attrs[a->rec.act.nattr++];
  x->attr = attr;
  x->vtype = vtype;
  x->v.u64 = bits;
}

void siox_detached_attr_u64(siox_detached *a, uint32_t attr, uint64_t v) {
  attr_add(a, attr, SIOX_VT_U64, v);
}

void siox_detached_attr_i64(siox_detached *a, uint32_t attr, int64_t v) {
  attr_add(a, attr, SIOX_VT_I64, (uint64_t)v);
}

void siox_detached_error(siox_detached *a, int32_t err) {
  if (a) a->rec.act.err = err;
}

/* Writes a's record, ended at `now`, into the calling thread's ring. */
static void record(struct siox_detached *a, uint64_t now) {
  struct siox__thread *t = siox__thread_get();
  if (SIOX_UNLIKELY(t == NULL)) {
    siox__count_drop_global(); /* e.g. stopped after this thread's exit hook */
    return;
  }
  if (SIOX_UNLIKELY(!siox__enter(t))) return;
  uint32_t bytes = (uint32_t)(sizeof a->rec.hdr + sizeof a->rec.act + a->rec.act.nattr * sizeof a->rec.attrs[0]);
  /* Start and stop may read the TSC on different CPUs: a few ns of skew
   * between them (and rdtsc not being ordered with the hand-over) can put
   * the end before the start. A duration is never negative. */
  a->rec.act.t_end = now > a->rec.act.t_start ? now : a->rec.act.t_start;
  a->rec.hdr.words = (uint16_t)(bytes / 8);
  if (siox__ring_write(t, &a->rec, bytes) == 0) siox__bump(&t->n_activities);
  siox__start_check(t, a->rec.act.t_end);
  siox__leave(t);
}

void siox_detached_stop(siox_detached *a) {
  uint64_t now = siox__clock_now();
  if (SIOX_UNLIKELY(a == NULL)) return;
  if (SIOX_LIKELY(!a->stale)) record(a, now);
  a->stale = 0;
  __atomic_store_n(&a->in_use, 0, __ATOMIC_RELAXED);
  pool_push(atomic_load_explicit(&slots, memory_order_relaxed), a);
}

/* ---------------------------------------------------------------------------
 * fork()
 * ------------------------------------------------------------------------- */
void siox__detached_fork_prepare(void) {
  pthread_mutex_lock(&pool_lock);
}

void siox__detached_fork_parent(void) {
  pthread_mutex_unlock(&pool_lock);
}

/* The child's pool starts over: every slot is free except those open at
 * fork(). Those belong to the parent, which records them; the child keeps
 * their handles valid, so that stopping one there records nothing and just
 * returns the slot (it is never handed out twice). */
void siox__detached_after_fork_child(void) {
  pthread_mutex_init(&pool_lock, NULL);
  struct siox_detached *p = atomic_load_explicit(&slots, memory_order_relaxed);
  if (p == NULL) return;
  for (uint32_t i = 0; i < nslots; i++) p[i].stale = p[i].in_use;
  pool_relink(p, nslots);
}
