/*
 * Many threads: 4 threads x 10k activities all reach the daemon, every aid
 * is unique, and every thread's records come in its own buffer stream even
 * after the thread has exited (the flusher drains and frees its ring).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include <siox/siox.h>

#include "client_fake_daemon.h"

enum { THREADS = 4, PER_THREAD = 10000 };
static siox_type_id type;

static void *worker(void *arg) {
  uint64_t id = (uint64_t)(uintptr_t)arg;
  for (uint64_t i = 0; i < PER_THREAD; i++) {
    siox_aid a = siox_activity_start(type);
    siox_activity_attr_u64(a, SIOX_ATTR_IO_OFFSET, id);
    siox_activity_attr_u64(a, SIOX_ATTR_IO_COUNT, i);
    siox_activity_stop(a);
  }
  return NULL;
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return (x > y) - (x < y);
}

static void test_threads(void **state) {
  (void)state;
  char path[108];
  fake_daemon_tmp_path(path, sizeof path, "threads");
  struct fake_daemon *d = fake_daemon_start(path);
  struct siox_options o = {.socket_path = path};
  assert_int_equal(siox_init(&o), 0);
  siox_unid node;
  assert_int_equal(siox_node_register("h", "TEST", NULL, &node), 0);
  assert_int_equal(siox_activity_type_register(node, "op", &type), 0);
  pthread_t th[THREADS];
  for (uintptr_t i = 0; i < THREADS; i++) pthread_create(&th[i], NULL, worker, (void *)i);
  for (int i = 0; i < THREADS; i++) pthread_join(th[i], NULL);
  assert_int_equal(siox_flush(10000), 0);
  size_t n = fake_daemon_wait(d, THREADS * PER_THREAD, 20000);
  assert_int_equal(n, THREADS * PER_THREAD);
  struct siox_stats s;
  siox_stats_get(&s);
  assert_int_equal(s.dropped, 0);
  assert_int_equal(s.activities, THREADS * PER_THREAD);

  uint64_t *aids = malloc(n * sizeof *aids);
  uint64_t next[THREADS] = {0};
  uint32_t stream[THREADS] = {0};
  pthread_mutex_lock(&d->lock);
  for (size_t i = 0; i < n; i++) {
    const struct fk_activity *x = &d->acts[i];
    uint64_t id = x->attrs[0].v.u64;
    assert_true(id < THREADS);
    assert_int_equal(x->attrs[1].v.u64, next[id]++); /* per-thread order kept */
    if (!stream[id]) stream[id] = x->thread;
    assert_int_equal(x->thread, stream[id]);
    assert_int_not_equal(x->aid, 0);
    assert_true(x->aid < (1ull << 32));
    aids[i] = x->aid;
  }
  pthread_mutex_unlock(&d->lock);
  qsort(aids, n, sizeof *aids, cmp_u64);
  for (size_t i = 1; i < n; i++) assert_true(aids[i] != aids[i - 1]);
  free(aids);
  assert_int_equal(d->bad_frames, 0);
  assert_int_equal(siox_finalize(), 0);
  fake_daemon_stop(d);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_threads)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
