/* blame.c: the walk finds the deep component where an HDF5/MPI-IO call's
 * time went, on synthetic trees shaped like the GlusterFS testbed's: (a) a
 * trailing collective that only waits ends last; (b) ranks' writes queue on
 * the kernel's inode lock, so the POSIX write holds the time itself; (c) FUSE
 * splits a write into pieces, none holding half of the time. */
#include <string.h>

#include "test_cli_tree.h"

#define SAMPLE(aid, node, hw, ns, b) {aid, node, hw, "", ns, b}
#define KIB 1024LL

/* The peer samples of one kind, as the warehouse would return them. */
struct kind {
  const char *swid, *name;
  const struct siox_blame_sample *s;
  size_t n;
};
struct kinds {
  const struct kind *k;
  size_t n;
  int fetched;
};

static int fake_fetch(void *ctx, const struct siox_act *x, const struct siox_blame_sample **s, size_t *n) {
  struct kinds *ks = ctx;
  ks->fetched++;
  *s = NULL;
  *n = 0;
  for (size_t i = 0; i < ks->n; i++)
    if (strcmp(ks->k[i].swid, x->swid) == 0 && strcmp(ks->k[i].name, x->name) == 0) {
      *s = ks->k[i].s;
      *n = ks->k[i].n;
    }
  return 0;
}

/* H5Dwrite -> MPI_File_write_at_all -> pwrite -> (implicit) client writev
 * -> (implicit) brick3 WRITE, then a trailing MPI_File_set_view that waits
 * for the other ranks and ends last. Times in ms. */
static struct siox_tree *trailing_collective(void) {
  struct siox_tree *t = siox_tree_create();
  tree_add(t, 1, 0, "host0", "HDF5", "H5Dwrite", 1, 0, 1000 * MS);
  tree_add(t, 2, 1, "host0", "MPI-IO", "MPI_File_write_at_all", 2, 10 * MS, 700 * MS);
  tree_add(t, 3, 1, "host0", "MPI-IO", "MPI_File_set_view", 2, 700 * MS, 1000 * MS);
  tree_add(t, 4, 2, "host0", "POSIX", "pwrite", 3, 20 * MS, 690 * MS);
  tree_add(t, 5, 4, "host0", "GlusterFS-client", "writev", 4, 30 * MS, 680 * MS);
  tree_add(t, 6, 5, "brick3", "GlusterFS-brick", "WRITE", 13, 40 * MS, 670 * MS);
  t->acts[4].link = t->acts[5].link = SIOX_LINK_IMPLICIT;
  assert_int_equal(siox_tree_finish(t, 1), 0);
  return t;
}

static void a_trailing_collective_is_not_followed(void **state) {
  (void)state;
  struct siox_tree *t = trailing_collective();
  struct siox_blame b;
  assert_int_equal(siox_blame_walk(t, &SIOX_BLAME_RULE_DEFAULT, &b), 0);
  assert_true(b.npath >= 2);
  assert_string_equal(b.path[1]->name, "MPI_File_write_at_all"); /* not the set_view that ended last */
  assert_string_equal(b.suspect->swid, "GlusterFS-brick");
  assert_string_equal(b.suspect->hwid, "brick3");
  siox_blame_release(&b);
  siox_tree_destroy(t);
}

/* H5Dwrite -> write_at_all -> pwrite that waits 490 ms for the inode lock,
 * then one 75 ms piece on brick3. */
static struct siox_tree *queued_write(void) {
  struct siox_tree *t = siox_tree_create();
  tree_add(t, 1, 0, "host0", "HDF5", "H5Dwrite", 1, 0, 600 * MS);
  tree_add(t, 2, 1, "host0", "MPI-IO", "MPI_File_write_at_all", 2, 5 * MS, 595 * MS);
  tree_add(t, 3, 2, "host0", "POSIX", "pwrite", 3, 10 * MS, 590 * MS);
  tree_add(t, 4, 3, "host0", "GlusterFS-client", "writev", 4, 500 * MS, 585 * MS);
  tree_add(t, 5, 4, "brick3", "GlusterFS-brick", "WRITE", 13, 505 * MS, 580 * MS);
  t->acts[3].link = t->acts[4].link = SIOX_LINK_IMPLICIT;
  assert_int_equal(siox_tree_finish(t, 1), 0);
  for (int64_t aid = 1; aid <= 5; aid++) tree_bytes(t, aid, 64 * KIB);
  return t;
}

/* Other ranks' pwrites queued too (not 3x slower); the other bricks' WRITEs
 * of 64 KiB took about 1 ms. */
static const struct siox_blame_sample queued_pwrites[] = {
    SAMPLE(200, 30, "host0", 300 * MS, 64 * KIB), SAMPLE(201, 31, "host0", 450 * MS, 64 * KIB),
    SAMPLE(202, 32, "host0", 150 * MS, 64 * KIB),
};
static const struct siox_blame_sample fast_bricks[] = {
    SAMPLE(300, 11, "brick1", 1 * MS, 64 * KIB), SAMPLE(301, 12, "brick2", 1 * MS, 64 * KIB),
    SAMPLE(302, 14, "brick4", 1 * MS + MS / 10, 64 * KIB), SAMPLE(303, 11, "brick1", 1 * MS, 64 * KIB),
};

static void b_queued_write_names_the_brick(void **state) {
  (void)state;
  struct siox_tree *t = queued_write();
  const struct kind k[] = {{"POSIX", "pwrite", queued_pwrites, 3}, {"GlusterFS-brick", "WRITE", fast_bricks, 4}};
  struct kinds ks = {k, 2, 0};
  struct siox_blame b;
  assert_int_equal(siox_blame_walk(t, &SIOX_BLAME_RULE_DEFAULT, &b), 0);
  assert_string_equal(b.suspect->swid, "POSIX"); /* where most of the time went... */
  assert_int_equal(b.ncands, 1);                  /* ...but the brick spent its own */
  assert_int_equal(siox_blame_find(&b, fake_fetch, &ks), 0);
  assert_int_equal(b.verdict, SIOX_VERDICT_CULPRIT);
  assert_string_equal(b.suspect->hwid, "brick3");
  assert_string_equal(b.suspect->swid, "GlusterFS-brick");
  assert_true(b.per_byte);
  assert_int_equal(b.peer_samples, 4);
  assert_int_equal(b.npeers, 3);
  /* 75 ms against a 1 ms median for the same 64 KiB: 74 ms excess */
  assert_true(b.excess_s > 0.0739 && b.excess_s < 0.0741);
  assert_int_equal(b.suspect_idx, 4); /* the end of the walked path */
  siox_blame_release(&b);
  siox_tree_destroy(t);
}

static void b_nothing_stands_out(void **state) {
  (void)state;
  /* The other bricks took as long: blame stays quiet and says where the
   * time went (the queued pwrite). */
  struct siox_tree *t = queued_write();
  const struct siox_blame_sample slow_bricks[] = {
      SAMPLE(300, 11, "brick1", 70 * MS, 64 * KIB), SAMPLE(301, 12, "brick2", 80 * MS, 64 * KIB),
      SAMPLE(302, 14, "brick4", 75 * MS, 64 * KIB),
  };
  const struct kind k[] = {{"POSIX", "pwrite", queued_pwrites, 3}, {"GlusterFS-brick", "WRITE", slow_bricks, 3}};
  struct kinds ks = {k, 2, 0};
  struct siox_blame b;
  assert_int_equal(siox_blame_walk(t, &SIOX_BLAME_RULE_DEFAULT, &b), 0);
  assert_int_equal(siox_blame_find(&b, fake_fetch, &ks), 0);
  assert_int_equal(b.verdict, SIOX_VERDICT_NORMAL);
  assert_string_equal(b.suspect->swid, "POSIX");
  assert_int_equal(b.suspect_idx, 2);
  assert_int_equal(ks.fetched, 2);
  siox_blame_release(&b);
  siox_tree_destroy(t);
}

/* A 192 KiB pwrite FUSE split into three 64 KiB pieces, each ~30% of the
 * time, on brick3 (slow) — none holds half the call alone. */
static struct siox_tree *split_write(void) {
  struct siox_tree *t = siox_tree_create();
  tree_add(t, 1, 0, "host0", "POSIX", "pwrite", 1, 0, 300 * MS);
  for (int64_t i = 0; i < 3; i++) {
    int64_t s = (5 + 97 * i) * MS;
    tree_add(t, 10 + i, 1, "host0", "GlusterFS-client", "writev", 2, s, s + 92 * MS);
    tree_add(t, 20 + i, 10 + i, "brick3", "GlusterFS-brick", "WRITE", 13, s + 2 * MS, s + 90 * MS);
  }
  for (size_t i = 1; i < t->n; i++) t->acts[i].link = SIOX_LINK_IMPLICIT;
  assert_int_equal(siox_tree_finish(t, 1), 0);
  tree_bytes(t, 1, 192 * KIB);
  for (int64_t i = 0; i < 3; i++) {
    tree_bytes(t, 10 + i, 64 * KIB);
    tree_bytes(t, 20 + i, 64 * KIB);
  }
  return t;
}

static void c_split_write_reaches_the_brick(void **state) {
  (void)state;
  struct siox_tree *t = split_write();
  const struct kind k[] = {{"GlusterFS-brick", "WRITE", fast_bricks, 4}};
  struct kinds ks = {k, 1, 0};
  struct siox_blame b;
  assert_int_equal(siox_blame_walk(t, &SIOX_BLAME_RULE_DEFAULT, &b), 0);
  assert_int_equal(b.npath, 3);
  assert_int_equal(b.suspect_idx, 2); /* the pieces together hold ~88% */
  assert_string_equal(b.suspect->swid, "GlusterFS-brick");
  assert_int_equal(b.ncands, 3);
  assert_int_equal(siox_blame_find(&b, fake_fetch, &ks), 0);
  assert_int_equal(b.verdict, SIOX_VERDICT_CULPRIT);
  assert_string_equal(b.suspect->hwid, "brick3");
  assert_true(b.ratio > 80 && b.ratio < 90);
  siox_blame_release(&b);
  siox_tree_destroy(t);
}

/* The picture marks blame's walk, not the child that ended last: the red
 * path of `siox graph --format dot` went through the trailing set_view. */
static void picture_marks_blames_path(void **state) {
  (void)state;
  struct siox_tree *t = trailing_collective();
  assert_true(siox_tree_find(t, 3)->critical); /* the old critical path: ended last */
  struct siox_blame b;
  assert_int_equal(siox_blame_walk(t, &SIOX_BLAME_RULE_DEFAULT, &b), 0);
  siox_tree_mark(t, b.path, b.npath, NULL);
  assert_false(siox_tree_find(t, 3)->critical);
  for (int64_t aid = 1; aid <= 6; aid += aid == 2 ? 2 : 1) assert_true(siox_tree_find(t, aid)->critical);
  /* a culprit off the path is marked with its ancestors */
  siox_tree_mark(t, b.path, 1, siox_tree_find(t, 3));
  assert_true(siox_tree_find(t, 3)->critical && siox_tree_find(t, 1)->critical);
  assert_false(siox_tree_find(t, 2)->critical);
  siox_blame_release(&b);
  siox_tree_destroy(t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(a_trailing_collective_is_not_followed),
      cmocka_unit_test(b_queued_write_names_the_brick),
      cmocka_unit_test(b_nothing_stands_out),
      cmocka_unit_test(c_split_write_reaches_the_brick),
      cmocka_unit_test(picture_marks_blames_path),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
