/*
 * libsiox-client API behaviour, checked on the wire: registrations, parent
 * links, attributes, errors, out-of-order stops, stack overflow, timestamps
 * and descriptors, as decoded by a fake daemon on a temporary socket.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include <siox/siox.h>

#include "client_fake_daemon.h"

static struct fake_daemon *fd_;
static siox_unid node;
static char sock_path[108];

static int64_t wall_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static uint64_t nonce(void) {
  pthread_mutex_lock(&fd_->lock);
  uint64_t n = fd_->nconns ? fd_->conns[0].nonce : 0;
  pthread_mutex_unlock(&fd_->lock);
  return n;
}

/* Flushes and waits until the fake daemon holds `total` activities. */
static void ship(size_t total) {
  assert_int_equal(siox_flush(5000), 0);
  assert_true(fake_daemon_wait(fd_, total, 10000) >= total);
  assert_int_equal(fd_->bad_frames, 0);
}

static siox_type_id new_type(const char *name) {
  siox_type_id t = 0;
  assert_int_equal(siox_activity_type_register(node, name, &t), 0);
  assert_int_not_equal(t, 0);
  return t;
}

static int group_setup(void **state) {
  (void)state;
  fake_daemon_tmp_path(sock_path, sizeof sock_path, "api");
  fd_ = fake_daemon_start(sock_path);
  assert_non_null(fd_);
  struct siox_options o = {.socket_path = sock_path};
  assert_int_equal(siox_init(&o), 0);
  assert_int_equal(siox_init(&o), -EALREADY);
  assert_int_equal(siox_node_register("host1", "TEST", NULL, &node), 0);
  return 0;
}

static int group_teardown(void **state) {
  (void)state;
  assert_int_equal(siox_finalize(), 0);
  fake_daemon_stop(fd_);
  return 0;
}

static void test_registration(void **state) {
  (void)state;
  siox_unid a, b, c, d;
  char big[300];
  memset(big, 'x', sizeof big - 1);
  big[sizeof big - 1] = '\0';
  assert_int_equal(siox_node_register("host1", "TEST", NULL, &a), 0);
  assert_int_equal(a, node);
  assert_int_equal(siox_node_register("host1", "TEST", "i1", &b), 0);
  assert_int_not_equal(b, a);
  assert_int_equal(siox_node_register("host1", "TEST", "i1", &c), 0);
  assert_int_equal(c, b);
  assert_int_equal(siox_node_register("", "TEST", NULL, &d), -EINVAL);
  assert_int_equal(siox_node_register(NULL, "TEST", NULL, &d), -EINVAL);
  assert_int_equal(siox_node_register("h", big, NULL, &d), -EINVAL);
  assert_int_equal(siox_node_register("h", "s", "", &d), -EINVAL);
  siox_type_id t1, t2, t3;
  assert_int_equal(siox_activity_type_register(a, "write", &t1), 0);
  assert_int_equal(siox_activity_type_register(a, "write", &t2), 0);
  assert_int_equal(t1, t2);
  assert_int_equal(siox_activity_type_register(b, "write", &t3), 0);
  assert_int_not_equal(t1, t3);
  assert_int_equal(siox_activity_type_register(9999, "write", &t3), -EINVAL);
  assert_int_equal(siox_activity_type_register(a, "", &t3), -EINVAL);
  siox_target_id g1, g2, g3;
  assert_int_equal(siox_target_register("brick1", "*", &g1), 0);
  assert_int_equal(siox_target_register("brick1", NULL, &g2), 0);
  assert_int_equal(g1, g2);
  assert_int_equal(siox_target_register("brick1", "GlusterFS-brick", &g3), 0);
  assert_int_not_equal(g1, g3);
  assert_int_equal(siox_edge_register(a, b), 0);
  assert_int_equal(siox_edge_register(a, 9999), -EINVAL);
  assert_int_equal(siox_node_attr_u64(a, SIOX_ATTR_NODE_CAPACITY, 1000), 0);
  assert_int_equal(siox_node_attr_f64(a, SIOX_ATTR_NODE_CAPACITY, 1.0), -EINVAL);
  assert_int_equal(siox_node_attr_f64(a, SIOX_ATTR_NODE_BANDWIDTH, 2.5), 0);
  assert_int_equal(siox_node_attr_str(a, SIOX_ATTR_NODE_CAPABILITIES, "fast"), 0);
  assert_int_equal(siox_node_attr_u64(a, 0, 1), -EINVAL);
  assert_int_equal(siox_activity_start(0), 0);
  assert_int_equal(siox_activity_start(123456), 0);

  /* Registrations reach the daemon once each, with their strings. */
  siox_type_id t = new_type("reg-probe");
  siox_activity_stop(siox_activity_start(t));
  ship(1);
  int nodes = 0, types = 0, edges = 0, nattrs = 0;
  pthread_mutex_lock(&fd_->lock);
  for (size_t i = 0; i < fd_->nregs; i++) {
    const struct fk_reg *r = &fd_->regs[i];
    if (r->rtype == SIOX_REC_NODE && r->a == b) nodes++, assert_string_equal(r->s[2], "i1");
    if (r->rtype == SIOX_REC_TYPE && r->a == t1) types++, assert_string_equal(r->s[0], "write");
    if (r->rtype == SIOX_REC_EDGE) edges++, assert_int_equal(r->x, b);
    if (r->rtype == SIOX_REC_NODE_ATTR && r->x == SIOX_ATTR_NODE_CAPABILITIES) nattrs++, assert_string_equal(r->s[0], "fast");
  }
  pthread_mutex_unlock(&fd_->lock);
  assert_int_equal(nodes, 1);
  assert_int_equal(types, 1);
  assert_int_equal(edges, 1);
  assert_int_equal(nattrs, 1);
}

static void test_parents(void **state) {
  (void)state;
  siox_type_id t = new_type("parents");
  siox_aid a = siox_activity_start(t);
  siox_aid b = siox_activity_start(t);
  assert_int_equal(siox_activity_current(), b);
  siox_aid c = siox_activity_start_child(t, 777);
  siox_aid e = siox_activity_start(t);
  siox_activity_stop(e);
  siox_activity_stop(c);
  siox_activity_stop(b);
  siox_activity_stop(a);
  assert_int_equal(siox_activity_current(), 0);
  assert_true(a && b && c && e && a != b && b != c);
  ship(fake_daemon_count(fd_, nonce(), 0) + 4);
  pthread_mutex_lock(&fd_->lock);
  assert_int_equal(fake_daemon_find(fd_, 0, a)->parent, 0);
  assert_int_equal(fake_daemon_find(fd_, 0, b)->parent, a);
  assert_int_equal(fake_daemon_find(fd_, 0, c)->parent, 777);
  assert_int_equal(fake_daemon_find(fd_, 0, e)->parent, c);
  assert_int_equal(fake_daemon_find(fd_, 0, e)->type, t);
  pthread_mutex_unlock(&fd_->lock);
}

static void test_attrs_and_error(void **state) {
  (void)state;
  siox_type_id t = new_type("attrs");
  siox_aid a = siox_activity_start(t);
  siox_activity_attr_u64(a, SIOX_ATTR_IO_OFFSET, 4096);
  siox_activity_attr_i64(a, SIOX_ATTR_IO_RESULT, -5);
  siox_activity_attr_f64(a, SIOX_ATTR_NODE_BANDWIDTH, 1.5);
  siox_activity_attr_str(a, SIOX_ATTR_MPI_HINTS, "cb_nodes=1");
  siox_activity_error(a, EIO);
  for (int i = 0; i < 6; i++) siox_activity_attr_u64(a, SIOX_ATTR_IO_COUNT, (uint64_t)i); /* 2 too many */
  struct siox_stats s0, s1;
  siox_stats_get(&s0);
  siox_activity_stop(a);
  siox_stats_get(&s1);
  assert_int_equal(s1.activities, s0.activities + 1);
  ship(fake_daemon_count(fd_, nonce(), 0) + 1);
  pthread_mutex_lock(&fd_->lock);
  const struct fk_activity *x = fake_daemon_find(fd_, 0, a);
  assert_non_null(x);
  assert_int_equal(x->err, EIO);
  assert_int_equal(x->nattr, SIOX_CW_MAX_ATTRS);
  assert_int_equal(x->attrs[0].attr, SIOX_ATTR_IO_OFFSET);
  assert_int_equal(x->attrs[0].vtype, SIOX_VT_U64);
  assert_int_equal(x->attrs[0].v.u64, 4096);
  assert_int_equal(x->attrs[1].vtype, SIOX_VT_I64);
  assert_int_equal(x->attrs[1].v.i64, -5);
  assert_true(x->attrs[2].vtype == SIOX_VT_F64 && x->attrs[2].v.f64 == 1.5);
  assert_int_equal(x->attrs[7].v.u64, 4);
  int found = 0;
  for (size_t i = 0; i < fd_->nregs; i++)
    if (fd_->regs[i].rtype == SIOX_REC_ATTR_STR && fd_->regs[i].aid == a)
      found++, assert_string_equal(fd_->regs[i].s[0], "cb_nodes=1");
  pthread_mutex_unlock(&fd_->lock);
  assert_int_equal(found, 1);
}

/* siox_activity_stop_attrs: the attributes after those already added, the
 * error, the stop; attributes beyond the limit are counted as drops. */
static void test_stop_attrs(void **state) {
  (void)state;
  siox_type_id t = new_type("stop-attrs");
  siox_aid a = siox_activity_start(t);
  for (int i = 0; i < 5; i++) siox_activity_attr_u64(a, SIOX_ATTR_IO_COUNT, (uint64_t)i);
  struct siox_attr at[4] = {{SIOX_ATTR_IO_BYTES, SIOX_VT_U64, {.u64 = 65536}},
                            {SIOX_ATTR_IO_RESULT, SIOX_VT_I64, {.i64 = -1}},
                            {SIOX_ATTR_NODE_BANDWIDTH, SIOX_VT_F64, {.f64 = 2.5}},
                            {SIOX_ATTR_IO_OFFSET, SIOX_VT_U64, {.u64 = 7}}};
  struct siox_stats s0, s1;
  siox_stats_get(&s0);
  siox_activity_stop_attrs(a, at, 4, ENOSPC);
  siox_activity_stop_attrs(a, at, 4, 0); /* no longer open: ignored */
  siox_stats_get(&s1);
  assert_int_equal(s1.activities, s0.activities + 1);
  assert_int_equal(s1.dropped, s0.dropped + 1); /* 5 + 4 attributes, room for 8 */
  assert_int_equal(siox_activity_current(), 0);
  ship(fake_daemon_count(fd_, nonce(), 0) + 1);
  pthread_mutex_lock(&fd_->lock);
  const struct fk_activity *x = fake_daemon_find(fd_, 0, a);
  assert_non_null(x);
  assert_int_equal(x->err, ENOSPC);
  assert_int_equal(x->nattr, SIOX_CW_MAX_ATTRS);
  assert_int_equal(x->attrs[4].v.u64, 4);
  assert_true(x->attrs[5].attr == SIOX_ATTR_IO_BYTES && x->attrs[5].v.u64 == 65536);
  assert_true(x->attrs[6].vtype == SIOX_VT_I64 && x->attrs[6].v.i64 == -1);
  assert_true(x->attrs[7].vtype == SIOX_VT_F64 && x->attrs[7].v.f64 == 2.5);
  pthread_mutex_unlock(&fd_->lock);
}

/* The common case of stop_attrs (top of the stack, the attributes fit)
 * writes the record straight into the ring: the attributes added before
 * come first, then those passed, each with its type and value, and the
 * error; nothing is counted as dropped. */
static void test_stop_attrs_fit(void **state) {
  (void)state;
  siox_type_id t = new_type("stop-attrs-fit");
  siox_aid outer = siox_activity_start(t);
  siox_aid a = siox_activity_start(t);
  siox_activity_attr_u64(a, SIOX_ATTR_IO_COUNT, 11);
  siox_activity_attr_i64(a, SIOX_ATTR_IO_RESULT, -12);
  struct siox_attr at[3] = {{SIOX_ATTR_IO_BYTES, SIOX_VT_U64, {.u64 = 4096}},
                            {SIOX_ATTR_NODE_BANDWIDTH, SIOX_VT_F64, {.f64 = 0.5}},
                            {SIOX_ATTR_IO_OFFSET, SIOX_VT_U64, {.u64 = 1ull << 40}}};
  struct siox_stats s0, s1;
  siox_stats_get(&s0);
  siox_activity_stop_attrs(a, at, 3, EIO);
  assert_int_equal(siox_activity_current(), outer);
  siox_activity_stop_attrs(outer, at, 0, 0);
  siox_stats_get(&s1);
  assert_int_equal(s1.activities, s0.activities + 2);
  assert_int_equal(s1.dropped, s0.dropped);
  ship(fake_daemon_count(fd_, nonce(), 0) + 2);
  pthread_mutex_lock(&fd_->lock);
  const struct fk_activity *x = fake_daemon_find(fd_, 0, a), *o = fake_daemon_find(fd_, 0, outer);
  assert_non_null(x);
  assert_non_null(o);
  assert_int_equal(x->parent, outer);
  assert_int_equal(x->err, EIO);
  assert_int_equal(x->nattr, 5);
  assert_true(x->attrs[0].attr == SIOX_ATTR_IO_COUNT && x->attrs[0].v.u64 == 11);
  assert_true(x->attrs[1].vtype == SIOX_VT_I64 && x->attrs[1].v.i64 == -12);
  assert_true(x->attrs[2].attr == SIOX_ATTR_IO_BYTES && x->attrs[2].v.u64 == 4096);
  assert_true(x->attrs[3].vtype == SIOX_VT_F64 && x->attrs[3].v.f64 == 0.5);
  assert_true(x->attrs[4].attr == SIOX_ATTR_IO_OFFSET && x->attrs[4].v.u64 == 1ull << 40);
  assert_true(x->end_ns >= x->start_ns && o->end_ns >= x->end_ns && x->start_ns >= o->start_ns);
  assert_int_equal(o->nattr, 0);
  assert_int_equal(o->err, 0);
  pthread_mutex_unlock(&fd_->lock);
}

static void test_out_of_order_stop(void **state) {
  (void)state;
  siox_type_id t = new_type("async");
  size_t before = fake_daemon_count(fd_, nonce(), 0);
  siox_aid a = siox_activity_start(t); /* e.g. aio_write issued */
  siox_activity_attr_u64(a, SIOX_ATTR_IO_BYTES, 10);
  siox_aid b = siox_activity_start(t);
  siox_activity_attr_u64(b, SIOX_ATTR_IO_BYTES, 20);
  siox_activity_stop(a); /* completes while b is open */
  siox_activity_stop(a); /* twice: ignored */
  siox_activity_stop(424242); /* unknown: ignored */
  siox_aid c = siox_activity_start(t);
  assert_int_equal(siox_activity_current(), c);
  siox_activity_stop(c);
  siox_activity_stop(b);
  ship(before + 3);
  assert_int_equal(fake_daemon_count(fd_, nonce(), t), 3);
  pthread_mutex_lock(&fd_->lock);
  assert_int_equal(fake_daemon_find(fd_, 0, a)->attrs[0].v.u64, 10);
  assert_int_equal(fake_daemon_find(fd_, 0, b)->attrs[0].v.u64, 20);
  assert_int_equal(fake_daemon_find(fd_, 0, c)->parent, b);
  pthread_mutex_unlock(&fd_->lock);
}

static void test_stack_overflow(void **state) {
  (void)state;
  siox_type_id t = new_type("deep");
  siox_aid aids[64];
  struct siox_stats s0, s1;
  size_t before = fake_daemon_count(fd_, nonce(), 0);
  for (int i = 0; i < 64; i++) assert_int_not_equal(aids[i] = siox_activity_start(t), 0);
  siox_stats_get(&s0);
  assert_int_equal(siox_activity_start(t), 0);
  siox_stats_get(&s1);
  assert_int_equal(s1.dropped, s0.dropped + 1);
  for (int i = 63; i >= 0; i--) siox_activity_stop(aids[i]);
  ship(before + 64);
  pthread_mutex_lock(&fd_->lock);
  assert_int_equal(fake_daemon_find(fd_, 0, aids[63])->parent, aids[62]);
  pthread_mutex_unlock(&fd_->lock);
}

static void test_timestamps(void **state) {
  (void)state;
  siox_type_id t = new_type("timed");
  enum { N = 50 };
  siox_aid aids[N];
  size_t before = fake_daemon_count(fd_, nonce(), 0);
  int64_t t0 = wall_ns();
  for (int i = 0; i < N; i++) {
    aids[i] = siox_activity_start(t);
    nanosleep(&(struct timespec){0, 200000}, NULL);
    siox_activity_stop(aids[i]);
  }
  int64_t t1 = wall_ns();
  ship(before + N);
  /* Conversion with the clock pairs is exact to well under a microsecond;
   * allow 1 ms so the check is about correctness, not clock jitter. */
  const int64_t slack = 1000000;
  pthread_mutex_lock(&fd_->lock);
  int64_t prev_end = t0 - slack;
  for (int i = 0; i < N; i++) {
    const struct fk_activity *x = fake_daemon_find(fd_, 0, aids[i]);
    assert_non_null(x);
    assert_true(x->start_ns >= t0 - slack);
    assert_true(x->end_ns <= t1 + slack);
    assert_true(x->end_ns >= x->start_ns);
    assert_true(x->start_ns >= prev_end - 1000);
    assert_true(x->end_ns - x->start_ns >= 150000); /* nanosleep(200 us) lies inside */
    prev_end = x->end_ns;
  }
  pthread_mutex_unlock(&fd_->lock);
}

static void test_descriptors(void **state) {
  (void)state;
  siox_type_id t = new_type("open");
  siox_target_id tgt;
  assert_int_equal(siox_target_register("brick9", "GlusterFS-brick", &tgt), 0);
  siox_aid a = siox_activity_start(t);
  siox_desc path = siox_desc_str(SIOX_ATTR_POSIX_PATH, "/data/f1");
  siox_desc fd = siox_desc_int(SIOX_ATTR_POSIX_FD, 7);
  uint8_t gfid[16] = {1, 2, 3};
  siox_desc g = siox_desc_bytes(SIOX_ATTR_GLUSTERFS_GFID, gfid, 16);
  siox_desc bad = siox_desc_int(SIOX_ATTR_IO_OFFSET, 1); /* not a descriptor type */
  siox_desc badlen = siox_desc_bytes(SIOX_ATTR_GLUSTERFS_GFID, gfid, 65);
  assert_int_equal(siox_descriptor_create(node, a, &path), 0);
  assert_int_equal(siox_descriptor_map(node, a, &path, &fd), 0);
  assert_int_equal(siox_descriptor_send(a, tgt, &g, 100, 50), 0);
  assert_int_equal(siox_descriptor_receive(a, &fd, 0, 10), 0);
  assert_int_equal(siox_descriptor_release(node, a, &fd), 0);
  assert_int_equal(siox_descriptor_create(node, a, &bad), -EINVAL);
  assert_int_equal(siox_descriptor_create(node, a, &badlen), -EINVAL);
  assert_int_equal(siox_descriptor_create(9999, a, &path), -EINVAL);
  assert_int_equal(siox_descriptor_send(a, 9999, &g, 0, 1), -EINVAL);
  siox_activity_stop(a);
  ship(fake_daemon_count(fd_, nonce(), 0) + 1);
  int seen[6] = {0};
  pthread_mutex_lock(&fd_->lock);
  for (size_t i = 0; i < fd_->nregs; i++) {
    const struct fk_reg *r = &fd_->regs[i];
    if (r->rtype != SIOX_REC_DESC || r->aid != a) continue;
    seen[r->a]++;
    if (r->a == SIOX_DESC_MAP) {
      assert_string_equal(r->s[0], "/data/f1");
      assert_int_equal(r->dtypes[1], SIOX_ATTR_POSIX_FD);
      assert_int_equal(r->values[1], 7);
    }
    if (r->a == SIOX_DESC_SEND) {
      assert_int_equal(r->x, tgt);
      assert_int_equal(r->offset, 100);
      assert_int_equal(r->length, 50);
      assert_memory_equal(r->s[0], gfid, 3);
    }
  }
  pthread_mutex_unlock(&fd_->lock);
  for (int k = SIOX_DESC_CREATE; k <= SIOX_DESC_RECEIVE; k++) assert_int_equal(seen[k], 1);
}

static void test_hello(void **state) {
  (void)state;
  pthread_mutex_lock(&fd_->lock);
  assert_int_equal(fd_->nconns, 1);
  assert_non_null(strstr(fd_->conns[0].exe, "test_client_api"));
  assert_non_null(strstr(fd_->conns[0].args, "test_client_api"));
  assert_int_not_equal(fd_->conns[0].nonce, 0);
  assert_true(fd_->conns[0].stats_seen);
  pthread_mutex_unlock(&fd_->lock);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_registration),      cmocka_unit_test(test_parents),
      cmocka_unit_test(test_attrs_and_error),   cmocka_unit_test(test_stop_attrs),   cmocka_unit_test(test_stop_attrs_fit),
      cmocka_unit_test(test_out_of_order_stop),
      cmocka_unit_test(test_stack_overflow),    cmocka_unit_test(test_timestamps),
      cmocka_unit_test(test_descriptors),       cmocka_unit_test(test_hello),
  };
  return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
