/*
 * Job pages computed ahead of their first view (README.md, "Ahead of the
 * first view"). Loading a big job for its page takes seconds (14 s for 1M
 * activities on a loaded machine), stored documents a count of its
 * activities. A thread of `siox web` asks the warehouse every few seconds
 * for the jobs a listing has seen end (siox_wh_job_unviewed) and computes
 * their page as a view would (siox_wh_job_page stores it), one job at a
 * time, so the first click on a finished job is a stored view.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "siox/siox_wh.h"
#include "web.h"

#define WARM_PERIOD_S 5  /* how often the warehouse is asked */
#define WARM_SETTLE_S 10 /* a job's listed stamp held this long: it ended */
#define WARM_TRIED 64    /* stamps computed lately (a role that may not store) */

struct web_warm {
  const char *conninfo;
  pthread_t thread;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int stop;
  struct siox_wh_unviewed tried[WARM_TRIED]; /* ring: computed already, never again */
  size_t next;
};

/* Waits s seconds or until stopped; 1 when stopped. */
static int wait_or_stop(struct web_warm *w, int s) {
  struct timespec until;
  clock_gettime(CLOCK_REALTIME, &until);
  until.tv_sec += s;
  pthread_mutex_lock(&w->mu);
  while (!w->stop && pthread_cond_timedwait(&w->cv, &w->mu, &until) == 0) {}
  int stop = w->stop;
  pthread_mutex_unlock(&w->mu);
  return stop;
}

/* Whether this stamp was computed already; remembers it if not. Without
 * this, a role that may read but not store would compute the same job on
 * every round. */
static int tried_before(struct web_warm *w, const struct siox_wh_unviewed *u) {
  for (size_t i = 0; i < WARM_TRIED; i++) {
    const struct siox_wh_unviewed *t = &w->tried[i];
    if (t->job && t->uid == u->uid && t->acts == u->acts && t->max_aid == u->max_aid && !strcmp(t->job, u->job))
      return 1;
  }
  struct siox_wh_unviewed *slot = &w->tried[w->next];
  free(slot->job);
  *slot = *u;
  slot->job = strdup(u->job);
  w->next = (w->next + 1) % WARM_TRIED;
  return 0;
}

static void warm_one(struct web_warm *w, struct siox_wh *wh, const struct siox_wh_unviewed *u) {
  char err[1024];
  json_object *doc = NULL;
  struct timespec t0, t1;
  if (tried_before(w, u)) return;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  int rc = siox_wh_job_page(wh, u->job, WEB_JOB_PAGE_BINS, &doc, err, sizeof(err));
  clock_gettime(CLOCK_MONOTONIC, &t1);
  json_object_put(doc);
  long ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
  if (rc == -ENOENT) return; /* nothing the page summarises (a job of other layers): its views say so */
  if (rc) fprintf(stderr, "siox web: job %s's page could not be computed ahead of its view: %s\n", u->job, err);
  else fprintf(stderr, "siox web: job %s's page computed ahead of its first view (%ld ms)\n", u->job, ms);
}

/* One round: the jobs not viewed yet, each computed; errors are the next
 * round's to retry (the warehouse may be restarting). */
static void warm_round(struct web_warm *w) {
  char err[1024];
  struct siox_wh *wh;
  struct siox_wh_unviewed *u = NULL;
  size_t n = 0;
  if (siox_wh_open(w->conninfo, &wh, err, sizeof(err))) return;
  if (siox_wh_job_unviewed(wh, WEB_JOB_PAGE_BINS, WARM_SETTLE_S, 8, &u, &n, err, sizeof(err)) == 0) {
    for (size_t i = 0; i < n && !wait_or_stop(w, 0); i++) warm_one(w, wh, &u[i]);
    siox_wh_unviewed_free(u, n);
  }
  siox_wh_close(wh);
}

static void *warm_main(void *arg) {
  struct web_warm *w = arg;
  while (!wait_or_stop(w, WARM_PERIOD_S)) warm_round(w);
  return NULL;
}

int web_warm_start(const char *conninfo, struct web_warm **out) {
  struct web_warm *w = calloc(1, sizeof(*w));
  if (!w) return -1;
  w->conninfo = conninfo;
  pthread_mutex_init(&w->mu, NULL);
  pthread_cond_init(&w->cv, NULL);
  if (pthread_create(&w->thread, NULL, warm_main, w)) {
    pthread_cond_destroy(&w->cv);
    pthread_mutex_destroy(&w->mu);
    free(w);
    return -1;
  }
  *out = w;
  return 0;
}

void web_warm_stop(struct web_warm *w) {
  if (!w) return;
  pthread_mutex_lock(&w->mu);
  w->stop = 1;
  pthread_cond_signal(&w->cv);
  pthread_mutex_unlock(&w->mu);
  pthread_join(w->thread, NULL); /* a job being computed finishes first */
  for (size_t i = 0; i < WARM_TRIED; i++) free(w->tried[i].job);
  pthread_cond_destroy(&w->cv);
  pthread_mutex_destroy(&w->mu);
  free(w);
}
