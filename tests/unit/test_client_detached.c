/*
 * Detached activities, checked on the wire: started in one thread and
 * stopped in another, the record arrives in the stopping thread's stream
 * with the aid (from the starting thread's block), parent, type, attributes,
 * error and both timestamps; they never become an automatic parent; a full
 * pool returns NULL and counts a drop; and 4 threads x 10k handing their
 * activities to each other lose none and repeat no aid; a fork child gets
 * the whole pool back and records nothing for the parent's open ones.
 */
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include <siox/siox.h>

#include "client_fake_daemon.h"

enum { SLOTS = 64 }; /* pool size for this process (SIOX_DETACHED_SLOTS) */

static struct fake_daemon *fd_;
static siox_unid node;
static char sock_path[108];
static size_t expected; /* activities the fake daemon must hold so far */

static int64_t wall_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static uint64_t dropped(void) {
  struct siox_stats s;
  assert_int_equal(siox_stats_get(&s), 0);
  return s.dropped;
}

/* Flushes and waits until the fake daemon holds `expected` activities. */
static void ship(void) {
  assert_int_equal(siox_flush(10000), 0);
  assert_int_equal(fake_daemon_wait(fd_, expected, 20000), expected);
  assert_int_equal(fd_->bad_frames, 0);
}

/* A copy of the record of aid (aid 0 when absent): taken under the fake
 * daemon's lock so that a failing assertion never leaves it held. */
static struct fk_activity record_of(siox_aid aid) {
  struct fk_activity x = {0};
  pthread_mutex_lock(&fd_->lock);
  const struct fk_activity *p = fake_daemon_find(fd_, 0, aid);
  if (p) x = *p;
  pthread_mutex_unlock(&fd_->lock);
  return x;
}

static siox_type_id new_type(const char *name) {
  siox_type_id t = 0;
  assert_int_equal(siox_activity_type_register(node, name, &t), 0);
  assert_int_not_equal(t, 0);
  return t;
}

static int group_setup(void **state) {
  (void)state;
  setenv("SIOX_DETACHED_SLOTS", "64", 1);
  fake_daemon_tmp_path(sock_path, sizeof sock_path, "detached");
  fd_ = fake_daemon_start(sock_path);
  assert_non_null(fd_);
  struct siox_options o = {.socket_path = sock_path};
  assert_int_equal(siox_init(&o), 0);
  assert_int_equal(siox_node_register("host1", "TEST", NULL, &node), 0);
  return 0;
}

static int group_teardown(void **state) {
  (void)state;
  assert_int_equal(siox_finalize(), 0);
  fake_daemon_stop(fd_);
  return 0;
}

/* ------------------------------------------------------------------------
 * Start in thread A, stop in thread B
 * ------------------------------------------------------------------------ */
struct cross {
  siox_type_id type;
  siox_detached *h;
  siox_aid aid, marker; /* detached aid; a normal activity of the thread */
  int64_t t0, t1;       /* wall clock around start (A) or stop (B) */
};

static void *cross_start(void *arg) {
  struct cross *c = arg;
  c->marker = siox_activity_start(c->type);
  siox_activity_stop(c->marker);
  c->t0 = wall_ns();
  c->h = siox_activity_start_detached(c->type, 4242);
  c->t1 = wall_ns();
  c->aid = siox_detached_aid(c->h);
  siox_detached_attr_u64(c->h, SIOX_ATTR_IO_OFFSET, 1000);
  return NULL;
}

static void *cross_stop(void *arg) {
  struct cross *c = arg;
  c->marker = siox_activity_start(c->type);
  siox_activity_stop(c->marker);
  siox_detached_attr_i64(c->h, SIOX_ATTR_IO_RESULT, -5);
  siox_detached_error(c->h, 5);
  c->t0 = wall_ns();
  siox_detached_stop(c->h);
  c->t1 = wall_ns();
  return NULL;
}

static void run(void *(*fn)(void *), struct cross *c) {
  pthread_t th;
  assert_int_equal(pthread_create(&th, NULL, fn, c), 0);
  assert_int_equal(pthread_join(th, NULL), 0);
}

static void test_cross_thread(void **state) {
  (void)state;
  struct cross a = {.type = new_type("aio")}, b = {.type = a.type};
  run(cross_start, &a); /* thread A exits before its activity ends */
  assert_non_null(a.h);
  assert_int_not_equal(a.aid, 0);
  nanosleep(&(struct timespec){0, 2000000}, NULL);
  b.h = a.h;
  run(cross_stop, &b);
  expected += 3;
  ship();

  const int64_t slack = 1000000; /* as in test_client_api: correctness, not jitter */
  struct fk_activity x = record_of(a.aid), ma = record_of(a.marker), mb = record_of(b.marker);
  assert_int_equal(x.aid, a.aid);
  assert_int_equal(ma.aid, a.marker);
  assert_int_equal(mb.aid, b.marker);
  assert_int_equal(x.aid, a.marker + 1); /* from A's aid block */
  assert_int_equal(x.parent, 4242);
  assert_int_equal(x.type, a.type);
  assert_int_equal(x.err, 5);
  assert_int_equal(x.nattr, 2);
  assert_int_equal(x.attrs[0].attr, SIOX_ATTR_IO_OFFSET);
  assert_int_equal(x.attrs[0].vtype, SIOX_VT_U64);
  assert_int_equal(x.attrs[0].v.u64, 1000);
  assert_int_equal(x.attrs[1].attr, SIOX_ATTR_IO_RESULT);
  assert_int_equal(x.attrs[1].vtype, SIOX_VT_I64);
  assert_int_equal(x.attrs[1].v.i64, -5);
  assert_true(x.start_ns >= a.t0 - slack);
  assert_true(x.start_ns <= a.t1 + slack);
  assert_true(x.end_ns >= b.t0 - slack);
  assert_true(x.end_ns <= b.t1 + slack);
  assert_true(x.end_ns - x.start_ns >= 1500000); /* the 2 ms sleep lies inside */
  assert_int_equal(x.thread, mb.thread);          /* the stopping thread's ring */
  assert_int_not_equal(x.thread, ma.thread);
}

/* ------------------------------------------------------------------------
 * Parents: explicit children, and never an automatic parent
 * ------------------------------------------------------------------------ */
static uint64_t parent_of(siox_aid aid) {
  struct fk_activity x = record_of(aid);
  return x.aid == aid ? x.parent : UINT64_MAX;
}

static void test_explicit_child(void **state) {
  (void)state;
  siox_type_id t = new_type("fop"), tc = new_type("fop-child");
  siox_detached *h = siox_activity_start_detached(t, 0);
  assert_non_null(h);
  siox_aid ha = siox_detached_aid(h);
  assert_int_not_equal(ha, 0);
  siox_aid c = siox_activity_start_child(tc, ha);
  assert_int_not_equal(c, 0);
  siox_activity_stop(c);
  siox_detached_stop(h);
  expected += 2;
  ship();
  assert_int_equal(parent_of(c), ha);
  assert_int_equal(parent_of(ha), 0);
}

static void test_not_auto_parent(void **state) {
  (void)state;
  siox_type_id t = new_type("nap");
  siox_detached *h0 = siox_activity_start_detached(t, 0);
  siox_aid h0_aid = siox_detached_aid(h0);
  siox_aid a = siox_activity_start(t); /* empty stack: a root */
  assert_int_equal(siox_activity_current(), a);
  siox_aid p = siox_activity_start(t);
  siox_detached *h1 = siox_activity_start_detached(t, p);
  siox_aid h1_aid = siox_detached_aid(h1);
  assert_int_equal(siox_activity_current(), p);
  siox_aid b = siox_activity_start(t); /* parent: p, not h1 */
  siox_activity_stop(b);
  siox_activity_stop(p);
  siox_detached_stop(h1);
  siox_activity_stop(a);
  siox_detached_stop(h0);
  expected += 5;
  ship();
  assert_int_equal(parent_of(a), 0);
  assert_int_equal(parent_of(p), a);
  assert_int_equal(parent_of(h1_aid), p);
  assert_int_equal(parent_of(b), p);
  assert_int_equal(parent_of(h0_aid), 0);
}

/* ------------------------------------------------------------------------
 * Drops: a full pool, too many attributes
 * ------------------------------------------------------------------------ */
static void test_pool_exhausted(void **state) {
  (void)state;
  siox_type_id t = new_type("full");
  siox_detached *h[SLOTS];
  uint64_t d0 = dropped();
  for (int i = 0; i < SLOTS; i++) {
    h[i] = siox_activity_start_detached(t, 0);
    assert_non_null(h[i]);
  }
  assert_null(siox_activity_start_detached(t, 0));
  assert_int_equal(dropped(), d0 + 1);
  siox_detached_attr_u64(NULL, SIOX_ATTR_IO_OFFSET, 1); /* NULL is accepted */
  siox_detached_stop(NULL);
  assert_int_equal(siox_detached_aid(NULL), 0);
  for (int i = 0; i < SLOTS; i++) siox_detached_stop(h[i]);
  siox_detached *again = siox_activity_start_detached(t, 0); /* slots came back */
  assert_non_null(again);
  for (uint32_t i = 0; i < 9; i++) siox_detached_attr_u64(again, SIOX_ATTR_IO_OFFSET, i);
  assert_int_equal(dropped(), d0 + 2); /* the 9th attribute */
  siox_detached_stop(again);
  assert_null(siox_activity_start_detached(0, 0)); /* invalid type */
  assert_int_equal(dropped(), d0 + 3);
  expected += SLOTS + 1;
  ship();
  assert_int_equal(fake_daemon_count(fd_, fd_->conns[0].nonce, t), SLOTS + 1);
}

/* ------------------------------------------------------------------------
 * 4 threads x 10k, each stopping what its neighbour started
 * ------------------------------------------------------------------------ */
enum { THREADS = 4, PER_THREAD = 10000, QCAP = 8 };

struct queue { /* bounded, so that at most THREADS * QCAP slots are in flight */
  pthread_mutex_t lock;
  siox_detached *h[QCAP];
  unsigned head, n;
};
static struct queue queues[THREADS];
static siox_type_id stress_type, mark_type;
static siox_aid marks[THREADS];
static _Atomic unsigned start_failures;

static int q_put(struct queue *q, siox_detached *h) {
  pthread_mutex_lock(&q->lock);
  int ok = q->n < QCAP;
  if (ok) q->h[(q->head + q->n++) % QCAP] = h;
  pthread_mutex_unlock(&q->lock);
  return ok;
}

static siox_detached *q_take(struct queue *q) {
  pthread_mutex_lock(&q->lock);
  siox_detached *h = NULL;
  if (q->n) {
    h = q->h[q->head];
    q->head = (q->head + 1) % QCAP;
    q->n--;
  }
  pthread_mutex_unlock(&q->lock);
  return h;
}

/* Starts PER_THREAD activities for the next thread to stop and stops the
 * previous thread's; never blocks on a full queue, so the ring of threads
 * cannot deadlock. */
static void *stress_worker(void *arg) {
  unsigned id = (unsigned)(uintptr_t)arg, sent = 0, got = 0;
  marks[id] = siox_activity_start(mark_type);
  siox_activity_stop(marks[id]);
  siox_detached *pending = NULL;
  while (sent < PER_THREAD || got < PER_THREAD) {
    int progress = 0;
    if (sent < PER_THREAD && pending == NULL) {
      pending = siox_activity_start_detached(stress_type, 0);
      if (pending == NULL) start_failures++;
      siox_detached_attr_u64(pending, SIOX_ATTR_IO_OFFSET, id);
      siox_detached_attr_u64(pending, SIOX_ATTR_IO_COUNT, sent);
    }
    if (pending && q_put(&queues[(id + 1) % THREADS], pending)) pending = NULL, sent++, progress = 1;
    siox_detached *h = q_take(&queues[id]);
    if (h) siox_detached_stop(h), got++, progress = 1;
    if (!progress) sched_yield();
  }
  return NULL;
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return (x > y) - (x < y);
}

/* Every (producer, sequence) arrived once, in its consumer's stream. */
static void check_stress(uint64_t nonce) {
  uint32_t stream[THREADS];
  for (int i = 0; i < THREADS; i++) stream[i] = record_of(marks[i]).thread;
  struct fk_activity *got = malloc(THREADS * PER_THREAD * sizeof *got);
  size_t n = 0;
  pthread_mutex_lock(&fd_->lock);
  for (size_t i = 0; i < fd_->nacts && n < THREADS * PER_THREAD; i++)
    if (fd_->acts[i].nonce == nonce && fd_->acts[i].type == stress_type) got[n++] = fd_->acts[i];
  pthread_mutex_unlock(&fd_->lock);
  assert_int_equal(n, THREADS * PER_THREAD);
  uint8_t *seen = calloc(THREADS * PER_THREAD, 1);
  uint64_t *aids = malloc(n * sizeof *aids);
  for (size_t i = 0; i < n; i++) {
    const struct fk_activity *x = &got[i];
    assert_int_equal(x->nattr, 2);
    uint64_t id = x->attrs[0].v.u64, seq = x->attrs[1].v.u64;
    assert_true(id < THREADS && seq < PER_THREAD);
    assert_int_equal(seen[id * PER_THREAD + seq]++, 0);
    assert_int_equal(x->thread, stream[(id + 1) % THREADS]);
    assert_true(x->aid != 0 && x->aid < (1ull << 32));
    assert_true(x->end_ns >= x->start_ns);
    aids[i] = x->aid;
  }
  qsort(aids, n, sizeof *aids, cmp_u64);
  for (size_t i = 1; i < n; i++) assert_true(aids[i] != aids[i - 1]);
  free(aids);
  free(seen);
  free(got);
}

static void test_threads_crossing(void **state) {
  (void)state;
  stress_type = new_type("stress");
  mark_type = new_type("mark");
  uint64_t d0 = dropped();
  pthread_t th[THREADS];
  for (int i = 0; i < THREADS; i++) pthread_mutex_init(&queues[i].lock, NULL);
  for (uintptr_t i = 0; i < THREADS; i++) assert_int_equal(pthread_create(&th[i], NULL, stress_worker, (void *)i), 0);
  for (int i = 0; i < THREADS; i++) pthread_join(th[i], NULL);
  assert_int_equal(start_failures, 0);
  assert_int_equal(dropped(), d0);
  expected += THREADS * PER_THREAD + THREADS;
  ship();
  check_stress(fd_->conns[0].nonce);
}

/* ------------------------------------------------------------------------
 * fork(): the child's pool starts over
 * ------------------------------------------------------------------------ */

/* In the child: the parent's open activity is stopped without a record, and
 * then the whole pool is free again. Exit status says what failed. */
static void fork_child(siox_detached *parent_open, siox_type_id t) {
  siox_detached *h[SLOTS];
  siox_detached_stop(parent_open); /* returns its slot, records nothing */
  for (int i = 0; i < SLOTS; i++)
    if ((h[i] = siox_activity_start_detached(t, 0)) == NULL) _exit(10);
  if (siox_activity_start_detached(t, 0) != NULL) _exit(11);
  for (int i = 0; i < SLOTS; i++) siox_detached_stop(h[i]);
  _exit(siox_finalize() == 0 ? 0 : 12);
}

static void test_fork_child_pool(void **state) {
  (void)state;
  siox_type_id t = new_type("forked");
  ship();
  siox_detached *open_at_fork = siox_activity_start_detached(t, 0);
  assert_non_null(open_at_fork);
  fake_daemon_hold(fd_); /* see test_client_fork.c on ASan's allocator and fork */
  pid_t pid = fork();
  if (pid != 0) fake_daemon_release(fd_);
  assert_true(pid >= 0);
  if (pid == 0) fork_child(open_at_fork, t);
  siox_detached_stop(open_at_fork); /* the parent's record */
  int status;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFEXITED(status));
  assert_int_equal(WEXITSTATUS(status), 0);
  expected += 1 + SLOTS;
  ship();
  nanosleep(&(struct timespec){0, 50000000}, NULL); /* let extra records show up, if any */
  pthread_mutex_lock(&fd_->lock);
  uint64_t parent_nonce = fd_->conns[0].nonce;
  assert_int_equal(fd_->nconns, 2);
  uint64_t child_nonce = fd_->conns[1].nonce;
  pthread_mutex_unlock(&fd_->lock);
  assert_int_equal(fake_daemon_count(fd_, parent_nonce, t), 1);
  assert_int_equal(fake_daemon_count(fd_, child_nonce, t), SLOTS);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_cross_thread),   cmocka_unit_test(test_explicit_child),
      cmocka_unit_test(test_not_auto_parent), cmocka_unit_test(test_pool_exhausted),
      cmocka_unit_test(test_threads_crossing), cmocka_unit_test(test_fork_child_pool),
  };
  return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
