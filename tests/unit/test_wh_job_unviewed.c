/*
 * siox_wh_job_unviewed (warehouse/src/wh_job_unviewed.c), what `siox web`'s
 * warm-up thread (web/src/web_warm.c) asks every round: the jobs a listing
 * stored sums for, whose stamp has held for the settle time, and whose page
 * (summary and heatmap of the page's bins) is not stored for that stamp.
 * On a real siox-server's warehouse (every migration), with job_aggregates
 * rows written by SQL: the listing's age is set by updated_at relative to
 * the server's now(), so no test waits for a clock.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <siox/siox_wh.h>

#include "test_kb_baseline_db.h"

#define BINS 80   /* the web's page (WEB_JOB_PAGE_BINS) */
#define SETTLE 10 /* seconds, as web_warm.c */
#define AGO 3600  /* a listing long past the settle time */

static struct kbdb db;
static int argc_;
static char **argv_;
static struct siox_wh *wh;

static int setup(void **state) {
  (void)state;
  if (kbdb_start(&db, argc_, argv_) != 0) return -1;
  char path[400], ci[4096] = "", err[512];
  snprintf(path, sizeof path, "%s/conninfo", db.h.data_dir);
  FILE *f = fopen(path, "r");
  if (!f) return -1;
  int got = fgets(ci, sizeof ci, f) != NULL;
  fclose(f);
  if (!got) return -1;
  ci[strcspn(ci, "\n")] = '\0';
  if (siox_wh_open(ci, &wh, err, sizeof err) != 0) return fprintf(stderr, "%s\n", err), -1;
  return 0;
}

static int teardown(void **state) {
  (void)state;
  siox_wh_close(wh);
  kbdb_stop(&db);
  return 0;
}

static int clean(void **state) {
  (void)state;
  kbdb_exec(&db, "DELETE FROM job_aggregates");
  return 0;
}

/* A listing's sums of job (uid) under stamp (acts, max_aid), stored age_s
 * seconds ago. */
static void listed(int uid, const char *job, long acts, long max_aid, int age_s) {
  kbdb_exec(&db,
            "INSERT INTO job_aggregates (uid, job, kind, bins, acts, max_aid, doc, updated_at)"
            " VALUES (%d, '%s', 'jobs', 0, %ld, %ld, '{}', now() - make_interval(secs => %d))",
            uid, job, acts, max_aid, age_s);
}

/* A stored document of the job's page (kind summary or heatmap) under a stamp. */
static void stored(int uid, const char *job, const char *kind, int bins, long acts, long max_aid) {
  kbdb_exec(&db,
            "INSERT INTO job_aggregates (uid, job, kind, bins, acts, max_aid, doc)"
            " VALUES (%d, '%s', '%s', %d, %ld, %ld, '{}')",
            uid, job, kind, bins, acts, max_aid);
}

/* Both documents of the page, as a view stores them. */
static void page_stored(int uid, const char *job, long acts, long max_aid) {
  stored(uid, job, "summary", 0, acts, max_aid);
  stored(uid, job, "heatmap", BINS, acts, max_aid);
}

struct list {
  struct siox_wh_unviewed *u;
  size_t n;
};

static struct list unviewed_settle(size_t max, int settle_s) {
  struct list l = {0};
  char err[512] = "";
  int rc = siox_wh_job_unviewed(wh, BINS, settle_s, max, &l.u, &l.n, err, sizeof err);
  if (rc != 0) fail_msg("siox_wh_job_unviewed: %d %s", rc, err);
  return l;
}

static struct list unviewed(size_t max) { return unviewed_settle(max, SETTLE); }

/* The entry of (uid, job), NULL when the list does not hold it. */
static const struct siox_wh_unviewed *find(const struct list *l, int uid, const char *job) {
  for (size_t i = 0; i < l->n; i++)
    if (l->u[i].uid == uid && strcmp(l->u[i].job, job) == 0) return &l->u[i];
  return NULL;
}

/* An ended job (sums held past the settle time) with nothing stored is
 * listed with its listing's stamp, the one its page is to be stored under. */
static void test_settled_job_without_page(void **state) {
  (void)state;
  listed(1000, "ended", 1234, (7L << 32) + 99, AGO);
  struct list l = unviewed(10);
  assert_int_equal(l.n, 1);
  assert_string_equal(l.u[0].job, "ended");
  assert_int_equal(l.u[0].uid, 1000);
  assert_int_equal(l.u[0].acts, 1234);
  assert_int_equal(l.u[0].max_aid, (7L << 32) + 99);
  siox_wh_unviewed_free(l.u, l.n);
}

/* A job whose page is stored for the stamp is done; one whose documents
 * are of another stamp, or only half there, or of other bins, is not. */
static void test_stored_page_of_the_stamp(void **state) {
  (void)state;
  listed(1000, "viewed", 50, 500, AGO);
  page_stored(1000, "viewed", 50, 500);
  listed(1000, "old-stamp", 60, 600, AGO);
  page_stored(1000, "old-stamp", 40, 400);
  listed(1000, "summary-only", 70, 700, AGO);
  stored(1000, "summary-only", "summary", 0, 70, 700);
  listed(1000, "heatmap-only", 80, 800, AGO);
  stored(1000, "heatmap-only", "heatmap", BINS, 80, 800);
  listed(1000, "other-bins", 90, 900, AGO);
  stored(1000, "other-bins", "summary", 0, 90, 900);
  stored(1000, "other-bins", "heatmap", 60, 90, 900);
  listed(1000, "same-count", 100, 1000, AGO); /* acts equal, max_aid not: another stamp */
  page_stored(1000, "same-count", 100, 999);
  /* one half of the page of the stamp, the other half's count or highest
   * AID off by one: the late activity a stamp is there to notice */
  const struct {
    const char *job, *stale;
    long dacts, dmax;
  } half[] = {{"summary-fewer", "summary", 1, 0}, {"summary-older", "summary", 0, 1},
              {"heatmap-fewer", "heatmap", 1, 0}, {"heatmap-older", "heatmap", 0, 1}};
  for (size_t i = 0; i < sizeof half / sizeof *half; i++) {
    int stale_summary = strcmp(half[i].stale, "summary") == 0;
    listed(1000, half[i].job, 120, 1200, AGO);
    stored(1000, half[i].job, "summary", 0, 120 - stale_summary * half[i].dacts, 1200 - stale_summary * half[i].dmax);
    stored(1000, half[i].job, "heatmap", BINS, 120 - !stale_summary * half[i].dacts,
           1200 - !stale_summary * half[i].dmax);
  }
  struct list l = unviewed(100);
  assert_null(find(&l, 1000, "viewed"));
  for (size_t i = 0; i < sizeof half / sizeof *half; i++)
    if (!find(&l, 1000, half[i].job)) fail_msg("job %s is not listed", half[i].job);
  const char *want[] = {"old-stamp", "summary-only", "heatmap-only", "other-bins", "same-count"};
  for (size_t i = 0; i < sizeof want / sizeof *want; i++)
    if (!find(&l, 1000, want[i])) fail_msg("job %s is not listed", want[i]);
  assert_int_equal(l.n, 9);
  siox_wh_unviewed_free(l.u, l.n);
}

/* A job still growing: a listing stored its sums less than the settle time
 * ago (its stamp changed since the one before), so a page computed now
 * would not hold. (A settle time of an hour here: the margins stay far from
 * how long the statements take on a loaded machine.) */
static void test_growing_job(void **state) {
  (void)state;
  listed(1000, "growing", 10, 100, 0);
  listed(1000, "almost", 10, 100, 1800);
  listed(1000, "settled", 10, 100, 3 * 3600);
  struct list l = unviewed_settle(10, 3600);
  assert_int_equal(l.n, 1);
  assert_string_equal(l.u[0].job, "settled");
  siox_wh_unviewed_free(l.u, l.n);
}

/* The documents are per user: one user's stored page of job J does not
 * make another user's job J (the same id) done. */
static void test_per_user(void **state) {
  (void)state;
  listed(1000, "J", 10, 100, AGO);
  listed(1001, "J", 10, 100, AGO);
  listed(1001, "K", 10, 100, AGO);
  page_stored(1000, "J", 10, 100);
  page_stored(1000, "K", 10, 100);
  stored(1001, "J", "summary", 0, 10, 100); /* each half of 1001's page: the other half is 1000's */
  stored(1001, "K", "heatmap", BINS, 10, 100);
  struct list l = unviewed(10);
  assert_int_equal(l.n, 2);
  assert_non_null(find(&l, 1001, "J"));
  assert_non_null(find(&l, 1001, "K"));
  siox_wh_unviewed_free(l.u, l.n);
}

/* At most max, the most recently listed first (the job that just ended is
 * the one a user is about to open). */
static void test_limit_newest_first(void **state) {
  (void)state;
  char job[16];
  for (int i = 0; i < 6; i++) {
    snprintf(job, sizeof job, "j%d", i);
    listed(1000, job, 10 + i, 100 + i, AGO + 60 * i); /* j0 listed last */
  }
  struct list l = unviewed(2);
  assert_int_equal(l.n, 2);
  assert_string_equal(l.u[0].job, "j0");
  assert_string_equal(l.u[1].job, "j1");
  siox_wh_unviewed_free(l.u, l.n);
  l = unviewed(100);
  assert_int_equal(l.n, 6);
  siox_wh_unviewed_free(l.u, l.n);
  l = unviewed(0);
  assert_int_equal(l.n, 0);
  assert_null(l.u);
}

/* Only a listing's sums (kind jobs) make a job a candidate: a page
 * stored long ago for a job no listing saw is not one, and nothing listed
 * is an empty list, not an error. */
static void test_nothing_listed(void **state) {
  (void)state;
  stored(1000, "never-listed", "summary", 0, 1, 1);
  stored(1000, "never-listed", "heatmap", 60, 1, 1);
  kbdb_exec(&db, "UPDATE job_aggregates SET updated_at = now() - make_interval(secs => %d)", AGO);
  struct list l = unviewed(10);
  assert_int_equal(l.n, 0);
  assert_null(l.u);
}

int main(int argc, char **argv) {
  argc_ = argc, argv_ = argv;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup(test_settled_job_without_page, clean),
      cmocka_unit_test_setup(test_stored_page_of_the_stamp, clean),
      cmocka_unit_test_setup(test_growing_job, clean),
      cmocka_unit_test_setup(test_per_user, clean),
      cmocka_unit_test_setup(test_limit_newest_first, clean),
      cmocka_unit_test_setup(test_nothing_listed, clean),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
