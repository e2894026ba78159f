/*
 * Leaf activities (siox-client/src/leaf.h, the POSIX layer's read/write
 * path): the record written whole at the end carries what stop_attrs would
 * have written (type, parent = top of the stack, times, error, the
 * attributes in order), every declined record is written by the slow path
 * or counted dropped, and a ring wrapping many times loses nothing. Links
 * the client's objects: the leaf path is hidden, for libsiox-posix only.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "client_fake_daemon.h"
#include "leaf.h"

static struct fake_daemon *fd_;
static siox_unid node;
static char sock_path[108];

static void ship(size_t total) {
  assert_int_equal(siox_flush(5000), 0);
  assert_true(fake_daemon_wait(fd_, total, 10000) >= total);
  assert_int_equal(fd_->bad_frames, 0);
}

/* Activities the fake daemon holds so far. */
static size_t total(void) {
  pthread_mutex_lock(&fd_->lock);
  size_t n = fd_->nacts;
  pthread_mutex_unlock(&fd_->lock);
  return n;
}

static siox_type_id new_type(const char *name) {
  siox_type_id t = 0;
  assert_int_equal(siox_activity_type_register(node, name, &t), 0);
  return t;
}

/* The activities of type t the fake daemon holds; *last gets the last. */
static size_t of_type(siox_type_id t, struct fk_activity *last) {
  size_t n = 0;
  pthread_mutex_lock(&fd_->lock);
  for (size_t i = 0; i < fd_->nacts; i++)
    if (fd_->acts[i].type == t) *last = fd_->acts[i], n++;
  pthread_mutex_unlock(&fd_->lock);
  return n;
}

/* One leaf record through the inline path, as sxp__io_done writes it; 0
 * or -1 when the inline path declined (then the slow path wrote it). */
static int leaf(siox_type_id type, uint64_t t0, int32_t err, uint64_t v) {
  struct siox__thread *t = siox__leaf_thread();
  assert_non_null(t);
  uint64_t now = siox__clock_now();
  struct siox__leaf w;
  uint8_t *a = siox__leaf_open(&w, t, type, 0, t0, now, err, 3);
  struct siox_attr at[3] = {{SIOX_ATTR_POSIX_FD, SIOX_VT_I64, {.i64 = 7}},
                            {SIOX_ATTR_IO_BYTES, SIOX_VT_U64, {.u64 = v}},
                            {SIOX_ATTR_IO_RESULT, SIOX_VT_I64, {.i64 = -1}}};
  if (!a) {
    siox__leaf_slow(type, 0, t0, now, err, at, 3);
    return -1;
  }
  for (unsigned i = 0; i < 3; i++) siox__leaf_attr(a, i, at[i].attr, at[i].vtype, at[i].v.u64);
  siox__leaf_close(&w);
  return 0;
}

static int group_setup(void **state) {
  (void)state;
  fake_daemon_tmp_path(sock_path, sizeof sock_path, "leaf");
  fd_ = fake_daemon_start(sock_path);
  assert_non_null(fd_);
  /* The smallest ring: 64 KiB, not a multiple of a 96-byte record. */
  struct siox_options o = {.socket_path = sock_path, .buffer_bytes = 64u << 10};
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

/* Under an open activity: its aid as parent, the leaf's times inside its
 * own, the error and the attributes as given; the stack is untouched. */
static void test_leaf_record(void **state) {
  (void)state;
  siox_type_id outer_t = new_type("outer"), t = new_type("leaf");
  size_t base = total(); /* before any record: the flusher ships on its own too */
  siox_aid outer = siox_activity_start(outer_t);
  struct siox_stats s0, s1;
  siox_stats_get(&s0);
  uint64_t t0 = siox__clock_now();
  assert_int_equal(leaf(t, t0, EIO, 4096), 0);
  assert_int_equal(siox_activity_current(), outer);
  siox_activity_stop(outer);
  siox_stats_get(&s1);
  assert_int_equal(s1.activities, s0.activities + 2);
  assert_int_equal(s1.dropped, s0.dropped);
  ship(base + 2);
  struct fk_activity x, o;
  assert_int_equal(of_type(t, &x), 1);
  assert_int_equal(of_type(outer_t, &o), 1);
  assert_int_equal(x.parent, outer);
  assert_int_not_equal(x.aid, 0);
  assert_int_not_equal(x.aid, outer);
  assert_int_equal(x.err, EIO);
  assert_int_equal(x.nattr, 3);
  assert_true(x.attrs[0].attr == SIOX_ATTR_POSIX_FD && x.attrs[0].vtype == SIOX_VT_I64 && x.attrs[0].v.i64 == 7);
  assert_true(x.attrs[1].attr == SIOX_ATTR_IO_BYTES && x.attrs[1].v.u64 == 4096);
  assert_true(x.attrs[2].attr == SIOX_ATTR_IO_RESULT && x.attrs[2].v.i64 == -1);
  assert_true(x.start_ns <= x.end_ns && o.start_ns <= x.start_ns && x.end_ns <= o.end_ns);
}

/* Without a parent: a root. A type never registered: counted dropped by
 * the slow path, nothing sent. */
static void test_leaf_root_and_bad_type(void **state) {
  (void)state;
  siox_type_id t = new_type("leaf-root");
  size_t base = total();
  struct siox_stats s0, s1;
  siox_stats_get(&s0);
  assert_int_equal(leaf(t, siox__clock_now(), 0, 1), 0);
  assert_int_equal(leaf(t + 1000, siox__clock_now(), 0, 1), -1);
  siox_stats_get(&s1);
  assert_int_equal(s1.activities, s0.activities + 1);
  assert_int_equal(s1.dropped, s0.dropped + 1);
  ship(base + 1);
  struct fk_activity x;
  assert_int_equal(of_type(t, &x), 1);
  assert_int_equal(x.parent, 0);
  assert_int_equal(x.err, 0);
}

/* Many times around the 64 KiB ring: the records that would cross its end
 * take the slow path (the inline one declines them), and every record
 * arrives, in order, none dropped. */
static void test_leaf_wraps(void **state) {
  (void)state;
  siox_type_id t = new_type("leaf-wrap");
  enum { N = 4000, BATCH = 200 }; /* ~6 times around; a flush per 19 KiB */
  size_t base = total();
  struct siox_stats s0, s1;
  siox_stats_get(&s0);
  int declined = 0;
  for (int i = 0; i < N; i++) {
    declined += leaf(t, siox__clock_now(), 0, (uint64_t)i) != 0;
    if (i % BATCH == BATCH - 1) assert_int_equal(siox_flush(5000), 0);
  }
  siox_stats_get(&s1);
  assert_int_equal(s1.dropped, s0.dropped);
  assert_int_equal(s1.activities, s0.activities + N);
  assert_true(declined > 0); /* the ring's end was crossed */
  ship(base + N);
  size_t n = 0;
  uint64_t next = 0;
  pthread_mutex_lock(&fd_->lock);
  for (size_t i = 0; i < fd_->nacts; i++) {
    if (fd_->acts[i].type != t) continue;
    assert_int_equal(fd_->acts[i].attrs[1].v.u64, next);
    next++, n++;
  }
  pthread_mutex_unlock(&fd_->lock);
  assert_int_equal(n, N);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_leaf_record),
      cmocka_unit_test(test_leaf_root_and_bad_type),
      cmocka_unit_test(test_leaf_wraps),
  };
  return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
